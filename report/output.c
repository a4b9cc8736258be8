/* SPDX-License-Identifier: MIT */
/* Where a report goes (stdout, -report-output) and how wide it is (-width, the terminal). */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/ioctl.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/log.h"
#include "common/result-dir.h"
#include "report/escape.h"
#include "report/report-private.h"

/* The terminal's width, 100 when it does not say. */
static int terminal_width(FILE *f)
{
	struct winsize ws;

	if (!ioctl(fileno(f), TIOCGWINSZ, &ws) && ws.ws_col >= 20)
		return ws.ws_col;
	return 100;
}

static int render_shown(const struct report_opts *o, struct report *r, const struct table *t,
			FILE *f)
{
	/* Nothing is cut on the way to a file or a pipe; a terminal gets its width. */
	int width = o->width ? o->width : isatty(fileno(f)) ? terminal_width(f) : 0;

	if (o->format == REPORT_CSV)
		return table_render_csv(t, f, o->csv_delimiter);
	if (r->view->text)
		return r->view->text(r, t, f, width);
	return table_render_text(t, f, width);
}

/*
 * Names are the program's or a result's author's: text shows their control characters
 * escaped, CSV too and its cells a spreadsheet would run as formulas quoted (but -csv-raw).
 * JSON escapes by its own rules.
 */
static int render(const struct report_opts *o, struct report *r, const struct table *t, FILE *f)
{
	unsigned how = o->format != REPORT_CSV ? ESCAPE_CONTROLS
		       : o->csv_raw            ? 0
					       : ESCAPE_CONTROLS | ESCAPE_FORMULAS;
	const struct table *shown;
	struct table copy;
	int rc;

	if (o->format == REPORT_JSON)
		return table_render_json(t, f, r->view->name);
	if (how && (rc = escape_table(t, how, &copy, &shown)))
		return rc;
	rc = render_shown(o, r, how ? shown : t, f);
	if (how)
		escape_table_release(&copy);
	return rc;
}

int report_check_output(const struct report_opts *o)
{
	char why[128];
	size_t i;
	int ret;

	for (i = 0; o->output && i < o->nresults; i++) {
		ret = result_dir_owns(o->results[i], o->output, why, sizeof(why));
		if (ret == 1)
			return report_usage_error("will not write the report to '%s': it would "
						  "overwrite %s of result '%s'; give "
						  "-report-output a new file (one beside them in "
						  "the result directory will do)",
						  o->output, why, o->results[i]);
		if (ret < 0)
			return report_usage_error("cannot write report '%s': %s", o->output,
						  strerror(-ret));
	}
	return 0;
}

FILE *report_output_open(const struct report_opts *o)
{
	mode_t mode = 0666;
	struct stat st;
	bool created = true;
	size_t i;
	FILE *f;
	int fd, errsv;

	/* A report carries what its results hold (names, the command line): it is private when
	   one of them is, group-readable when all are (result_file_mode(), -result-mode). */
	for (i = 0; i < o->nresults; i++)
		mode &= result_file_mode(o->results[i]);
	fd = open(o->output, O_WRONLY | O_CREAT | O_EXCL | O_CLOEXEC, mode);
	if (fd < 0 && errno == EEXIST) {
		created = false;
		fd = open(o->output, O_WRONLY | O_TRUNC | O_CLOEXEC);
	}
	if (fd < 0)
		return NULL;
	/* A new file gets exactly the mode, whatever the umask; one that was there loses what the
	   results would not give (a regular file's bits only: not /dev/null's). */
	if (!fstat(fd, &st) && S_ISREG(st.st_mode) &&
	    ((created && (st.st_mode & 07777) != mode) || (st.st_mode & 07777 & ~mode)) &&
	    fchmod(fd, created ? mode : st.st_mode & 0777 & mode)) {
		errsv = errno;
		close(fd);
		errno = errsv;
		return NULL;
	}
	if (!(f = fdopen(fd, "w"))) {
		errsv = errno;
		close(fd);
		errno = errsv;
	}
	return f;
}

int report_write(const struct report_opts *o, struct report *r, const struct table *t)
{
	FILE *f = stdout;
	int rc;

	if (o->output && !(f = report_output_open(o))) {
		rc = -errno;
		log_error("cannot write report '%s': %s", o->output, strerror(errno));
		return rc;
	}
	rc = render(o, r, t, f);
	if ((f != stdout ? fclose(f) : fflush(f)) && !rc)
		rc = -errno;
	if (rc)
		log_error("cannot write report '%s': %s", o->output ? o->output : "stdout",
			  strerror(-rc));
	return rc;
}
