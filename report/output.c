/* SPDX-License-Identifier: MIT */
/* Where a report goes (stdout, -report-output) and how wide it is (-width, the terminal). */
#include <errno.h>
#include <fcntl.h>
#include <glob.h>
#include <stdio.h>
#include <stdlib.h>
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

/*
 * FILE may be new or a regular file: a symbolic link (another user's, where links are not
 * protected) is not written through, a FIFO is not waited on, a device is not written to.
 */
static int check_kind(const char *path)
{
	struct stat st;
	const char *what;

	if (lstat(path, &st))
		return 0;
	if (S_ISREG(st.st_mode))
		return 0;
	what = S_ISLNK(st.st_mode)    ? "a symbolic link (not followed)"
	       : S_ISFIFO(st.st_mode) ? "a FIFO"
	       : S_ISDIR(st.st_mode)  ? "a directory"
				      : "not a regular file";
	return report_usage_error("will not write the report to '%s': it is %s; give "
				  "-report-output a regular file or a new name",
				  path, what);
}

/* Whether out (a report or -junit's file) would overwrite a file of result dir. */
static int check_owns(const char *dir, const char *out)
{
	char why[128];
	int ret = result_dir_owns(dir, out, why, sizeof(why));

	if (ret == 1)
		return report_usage_error("will not write the report to '%s': it would "
					  "overwrite %s of result '%s'; give "
					  "-report-output a new file (one beside them in "
					  "the result directory will do)",
					  out, why, dir);
	if (ret < 0)
		return report_usage_error("cannot write report '%s': %s", out, strerror(-ret));
	return 0;
}

/* check_owns() of out against every result of -r (each run of a pattern), and its kind. */
static int check_file(const struct report_opts *o, const char *out)
{
	size_t i, k;
	int ret = 0;

	for (i = 0; !ret && i < o->nresults; i++) {
		glob_t g;

		if (!report_is_pattern(o->results[i])) {
			ret = check_owns(o->results[i], out);
			continue;
		}
		if (glob(o->results[i], 0, NULL, &g))
			continue; /* no match: told when the runs are read */
		for (k = 0; !ret && k < g.gl_pathc; k++)
			ret = check_owns(g.gl_pathv[k], out);
		globfree(&g);
	}
	return ret ? ret : check_kind(out);
}

int report_check_output(const struct report_opts *o)
{
	int ret = o->output ? check_file(o, o->output) : 0;

	return !ret && o->junit ? check_file(o, o->junit) : ret;
}

int report_write(const struct report_opts *o, struct report *r, const struct table *t)
{
	struct report_out out;
	int rc = report_output_open(o, &out);

	if (rc)
		return rc;
	rc = render(o, r, t, out.f);
	rc = report_output_close(&out, rc);
	if (rc)
		log_error("cannot write report '%s': %s", o->output ? o->output : "stdout",
			  strerror(-rc));
	return rc;
}

int report_output_open(const struct report_opts *o, struct report_out *out)
{
	const char *slash = o->output ? strrchr(o->output, '/') : NULL;
	mode_t mask, mode;
	size_t i;
	int fd;

	out->f = stdout;
	out->path = o->output;
	if (!o->output)
		return 0;
	/*
	 * A new file beside FILE, renamed over it when whole: a link or a FIFO put at FILE is
	 * replaced, never followed or waited on, and a failed report leaves the old one.
	 */
	if (snprintf(out->tmp, sizeof(out->tmp), "%.*s.%s.tmp.XXXXXX",
		     slash ? (int)(slash - o->output + 1) : 0, o->output,
		     slash ? slash + 1 : o->output) >= (int)sizeof(out->tmp)) {
		log_error("cannot write report '%s': %s", o->output, strerror(ENAMETOOLONG));
		return -ENAMETOOLONG;
	}
	fd = mkostemp(out->tmp, O_CLOEXEC);
	if (fd < 0) {
		fd = -errno;
		log_error("cannot write report '%s': %s", o->output, strerror(-fd));
		return fd;
	}
	/* A report carries what its results hold (names, the command line): it is private when
	   one of them is, group-readable when all are (result_file_mode(), -result-mode); with
	   no result, the mode fopen() would give: 0666 less the umask. */
	mask = umask(0);
	umask(mask);
	mode = 0666 & ~mask;
	for (i = 0; i < o->nresults; i++)
		mode = (i ? mode : 0666) & result_file_mode(o->results[i]);
	if (fchmod(fd, mode) || !(out->f = fdopen(fd, "w"))) {
		int errsv = errno;

		close(fd);
		unlink(out->tmp);
		log_error("cannot write report '%s': %s", o->output, strerror(errsv));
		return -errsv;
	}
	return 0;
}

int report_output_close(struct report_out *out, int rc)
{
	if (out->f == stdout)
		return fflush(stdout) && !rc ? -errno : rc;
	if (fclose(out->f) && !rc)
		rc = -errno;
	if (!rc && rename(out->tmp, out->path))
		rc = -errno;
	if (rc)
		unlink(out->tmp);
	return rc;
}
