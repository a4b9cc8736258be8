/* SPDX-License-Identifier: MIT */
/* The source view: a function's or a file's source with self and total values per line. */
#define LOG_DOMAIN "source"
#include <errno.h>
#include <fcntl.h>
#include <sqlite3.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/log.h"
#include "common/options.h"
#include "common/debuginfod.h"
#include "common/result-dir.h"
#include "report/report-private.h"

#define LINE_MAX_BYTES 4096

struct source {
	struct report *r;
	int file;      /* index into model.files */
	bool *want;    /* per function, in function mode; NULL in file mode */
	int first_def; /* the function's first line, 0 in file mode */
	int maxline;
	struct cct_walk w; /* key: the line, for the nodes that count */
};

static int pick_file(struct report *r, const char *path, int *file)
{
	const struct model *m = &r->m;
	const char **names;
	const char *near;
	size_t i, plen = strlen(path);
	int found = -1, rc;

	for (i = 0; i < m->nfiles && found < 0; i++)
		if (!strcmp(m->files[i], path))
			found = (int)i;
	for (i = 0; i < m->nfiles && found < 0; i++) {
		size_t flen = strlen(m->files[i]);

		if (flen > plen && m->files[i][flen - plen - 1] == '/' &&
		    !strcmp(m->files[i] + flen - plen, path))
			found = (int)i;
	}
	if (found >= 0) {
		*file = found;
		return 0;
	}
	names = malloc((m->nfiles + 1) * sizeof(*names));
	for (i = 0; names && i < m->nfiles; i++)
		names[i] = report_basename(m->files[i]);
	near = names ? options_nearest(report_basename(path), names, m->nfiles) : NULL;
	if (near)
		rc = report_usage_error("no source file '%s' in result '%s' (did you mean '%s'?)",
					path, r->dir, near);
	else
		rc = report_usage_error("no source file '%s' in result '%s'", path, r->dir);
	free(names);
	return rc;
}

/* The file of the function: its definition, else where most of its samples fall. */
static int function_file(struct source *s, const int *funcs, size_t n)
{
	const struct report *r = s->r;
	const struct cct *t = &r->tree;
	size_t i;
	int best = -1;
	int64_t best_v = -1;

	for (i = 0; i < n; i++) {
		const struct model_function *f = &r->m.functions[funcs[i]];

		if (f->file >= 0) {
			s->first_def = f->line;
			return f->file;
		}
	}
	for (i = 1; i < t->n; i++) {
		const struct cct_node *nd = &t->nodes[i];
		int64_t v = cct_total(t, (int)i)[r->sort_metric];

		if (s->want[nd->func] && nd->loc >= 0 && t->locs[nd->loc].file >= 0 && v > best_v) {
			best = t->locs[nd->loc].file;
			best_v = v;
		}
	}
	return best;
}

static bool counts(const struct source *s, const struct cct_node *n)
{
	const struct cct *t = &s->r->tree;

	return n->loc >= 0 && t->locs[n->loc].file == s->file && t->locs[n->loc].line > 0 &&
	       (!s->want || s->want[n->func]);
}

static int compute(struct source *s)
{
	const struct cct *t = &s->r->tree;
	int *key = malloc((t->n + 1) * sizeof(int)), *leaves = malloc((t->n + 1) * sizeof(int));
	size_t i, n = 0;
	int rc = -ENOMEM;

	if (!key || !leaves)
		goto out;
	for (i = 0; i < t->nlocs; i++)
		if (t->locs[i].file == s->file && t->locs[i].line > s->maxline)
			s->maxline = t->locs[i].line;
	key[0] = -1;
	for (i = 1; i < t->n; i++) {
		key[i] = counts(s, &t->nodes[i]) ? t->locs[t->nodes[i].loc].line : -1;
		if (cct_has_self(t, (int)i))
			leaves[n++] = (int)i;
	}
	rc = cct_walk_init(&s->w, t, key, (size_t)s->maxline + 1);
	if (!rc)
		rc = cct_walk_add(&s->w, leaves, n, NULL);
out:
	free(key);
	free(leaves);
	return rc;
}

/* path as a stream if it is a regular file: a FIFO is never waited on, a device never read. */
static FILE *open_regular(const char *path)
{
	struct stat st;
	int fd = result_open_file(path, false, 0, &st);
	FILE *f = fd >= 0 ? fdopen(fd, "r") : NULL;

	if (fd >= 0 && !f)
		close(fd);
	errno = fd < 0 ? -fd : errno;
	return f;
}

/* Whether path has a ".." component: joined to a search directory, it would climb out. */
static bool climbs(const char *path)
{
	const char *p = path;

	while ((p = strstr(p, "..")))
		if ((p == path || p[-1] == '/') && (p[2] == '/' || !p[2]))
			return true;
		else
			p += 2;
	return false;
}

static FILE *open_in(const char *dir, const char *path)
{
	const char *p = path;
	char buf[4096];
	FILE *f;

	if (climbs(path)) {
		log_debug("'%s': not looked for in '%s': it climbs out with '..'", path, dir);
		return NULL;
	}
	/* Try dir/<path without its first components>, longest first: a moved tree. */
	while (p && *p) {
		while (*p == '/')
			p++;
		snprintf(buf, sizeof(buf), "%s/%s", dir, p);
		f = open_regular(buf);
		log_debug("'%s': tried '%s': %s", path, buf, f ? "found" : strerror(errno));
		if (f)
			return f;
		p = strchr(p, '/');
	}
	return NULL;
}

/*
 * The source copied into the result: DIR/archive/src/<path>, read beneath DIR without
 * following a link or "..", so that a result's own files cannot lead elsewhere.
 */
static FILE *open_archived(const struct report *r, const char *path)
{
	char rel[4096];
	struct stat st;
	int dfd = open(r->dir, O_PATH | O_DIRECTORY | O_CLOEXEC), fd = -ENOENT;
	FILE *f = NULL;

	if (dfd >= 0 && snprintf(rel, sizeof(rel), "archive/src/%s", path) < (int)sizeof(rel))
		fd = result_open_beneath(dfd, rel, 0, &st);
	if (dfd >= 0)
		close(dfd);
	if (fd >= 0 && !(f = fdopen(fd, "r")))
		close(fd);
	log_debug("'%s': in the result's archive: %s", path,
		  f ? "found" : result_strerror(fd < 0 ? -fd : errno));
	return f;
}

/*
 * The source from the debuginfod servers of DEBUGINFOD_URLS, asked by the build-id of each
 * module whose code it describes (a server names sources by build-id and the path the DWARF
 * gives). NULL when none has it or none is configured.
 */
static FILE *fetch_source(const struct report *r, const char *path)
{
	static const char sql[] =
		"SELECT DISTINCT m.build_id FROM modules m WHERE m.build_id IS NOT NULL AND m.id IN "
		"(SELECT fr.module_id FROM frames fr WHERE fr.source_file_id = "
		"(SELECT id FROM source_files WHERE path = ?1))";
	sqlite3_stmt *st;
	FILE *f = NULL;

	if (!debug_server_configured() ||
	    sqlite3_prepare_v2(r->m.db, sql, -1, &st, NULL) != SQLITE_OK)
		return NULL;
	sqlite3_bind_text(st, 1, path, -1, SQLITE_STATIC);
	while (!f && sqlite3_step(st) == SQLITE_ROW) {
		const char *hex = (const char *)sqlite3_column_text(st, 0);
		char *got;
		bool downloaded;

		if (!hex ||
		    debug_server_fetch_hex(DEBUG_SERVER_SOURCE, hex, path, &got, &downloaded))
			continue;
		f = open_regular(got);
		log_debug("'%s': from debuginfod by build-id %s: '%s'%s", path, hex, got,
			  f ? "" : " cannot be read");
		free(got);
	}
	sqlite3_finalize(st);
	return f;
}

/*
 * The source file at path: where the build left it and in the search directories pfinalize
 * was given (only for a result this user made on this machine: r->own_paths), in a
 * -source-search-dir, in the result's archive, or from a debuginfod server (then *fetched,
 * when fetched is not NULL). NULL when none has it. A path a result names is never read by
 * itself otherwise (docs/security.md).
 */
static FILE *open_source(const struct report *r, const char *path, bool *fetched)
{
	const struct report_opts *o = r->o;
	const char *dirs = r->own_paths ? model_meta_get(&r->m, "source_search_dirs") : NULL;
	FILE *f = NULL;
	size_t i;

	if (r->own_paths) {
		f = open_regular(path);
		log_debug("'%s': %s", path, f ? "read where the build left it" : strerror(errno));
	} else {
		log_debug("'%s': not read where the build left it: the result was not made here by "
			  "this user",
			  path);
	}
	for (i = 0; !f && i < o->nsource_dirs; i++)
		f = open_in(o->source_dirs[i], path);
	while (!f && dirs && *dirs) {
		size_t len = strcspn(dirs, ":");
		char dir[4096];

		snprintf(dir, sizeof(dir), "%.*s", (int)len, dirs);
		if (*dir)
			f = open_in(dir, path);
		dirs += len + (dirs[len] == ':');
	}
	if (!f)
		f = open_archived(r, path);
	if (!f && path[0] == '/' && (f = fetch_source(r, path)) && fetched)
		*fetched = true;
	return f;
}

FILE *report_open_source(const struct report *r, const char *path)
{
	return open_source(r, path, NULL);
}

/* The last line to show for a function: before the next function defined in its file. */
static int function_end(const struct source *s, int start, int last_data)
{
	const struct model *m = &s->r->m;
	int end = 0;
	size_t i;

	for (i = 0; i < m->nfunctions; i++) {
		const struct model_function *f = &m->functions[i];

		if (f->file == s->file && f->line > start && f->line > last_data &&
		    (!end || f->line - 1 < end))
			end = f->line - 1;
	}
	return end ? end : last_data + 2;
}

static void expand_tabs(const char *in, char *out, size_t size)
{
	size_t col = 0;

	for (; *in && *in != '\n' && col + 9 < size; in++) {
		if (*in == '\t') {
			do
				out[col++] = ' ';
			while (col % 8);
		} else if (*in != '\r') {
			out[col++] = *in;
		}
	}
	out[col] = '\0';
}

static int fill(struct source *s, struct table *t)
{
	struct report *r = s->r;
	const char *path = r->m.files[s->file];
	int cline, csrc, cfile;
	int first = 0, last = 0, start, end, line;
	char buf[LINE_MAX_BYTES], text[LINE_MAX_BYTES];
	struct metric_cols mc;
	size_t nm = s->w.nm;
	bool fetched = false;
	FILE *f;

	cline = table_add_col(t, "Line", TABLE_INT, 0);
	report_add_metric_cols(r, t, &mc, MC_SELF | MC_TOTAL);
	csrc = table_add_col(t, "Source", TABLE_TEXT, TABLE_CUT_END);
	cfile = table_add_col(t, "Source File", TABLE_TEXT, TABLE_MACHINE);
	for (line = 1; line <= s->maxline; line++)
		if (s->w.is_touched[line]) {
			if (!first)
				first = line;
			last = line;
		}
	if (s->want) {
		start = s->first_def > 0 && (!first || s->first_def < first) ? s->first_def : first;
		end = function_end(s, start, last);
	} else {
		start = 1;
		end = INT32_MAX;
	}
	if (start < 1)
		start = 1;
	f = open_source(r, path, &fetched);
	if (!f) {
		end = last;
		table_add_note(t,
			       "source file '%s' not found: lines without text; give its "
			       "directory with -source-search-dir DIR",
			       path);
	} else if (fetched) {
		table_add_note(t, "source file '%s' from a debuginfod server", path);
	}
	for (line = 1; line <= end; line++) {
		bool have = f && fgets(buf, sizeof(buf), f);
		size_t row;

		if (!have && f && line > s->maxline)
			break;
		if (line < start)
			continue;
		if (!have && !(line <= s->maxline && s->w.is_touched[line]))
			continue;
		row = table_add_row(t, 0);
		table_set_int(t, row, cline, line);
		if (line <= s->maxline && s->w.is_touched[line])
			report_set_metric_cols(r, t, row, &mc, &s->w.self[(size_t)line * nm],
					       &s->w.total[(size_t)line * nm]);
		if (have) {
			expand_tabs(buf, text, sizeof(text));
			table_set_text(t, row, csrc, text);
			/* Skip the rest of a line longer than the buffer. */
			while (!strchr(buf, '\n') && fgets(buf, sizeof(buf), f))
				;
		}
		table_set_text(t, row, cfile, path);
	}
	if (f)
		fclose(f);
	if (!first)
		table_add_note(t, "no samples fall on lines of '%s' in this report", path);
	return 0;
}

int view_source(struct report *r, struct table *t)
{
	static const char *const keys[] = { "function", "file" };
	struct source s = { .r = r, .file = -1 };
	const char *obj = r->o->source_object, *eq;
	int *funcs = NULL, rc;
	size_t n = 0, i;

	if (!obj)
		return report_usage_error("the source view needs -source-object function=NAME or "
					  "-source-object file=PATH");
	eq = strchr(obj, '=');
	if (!eq || !eq[1]) {
		return report_usage_error(
			"invalid value '%s' for option '-source-object': expected "
			"function=NAME or file=PATH",
			obj);
	}
	if (!strncmp(obj, "function=", 9)) {
		rc = report_find_functions(r, eq + 1, true, "-source-object function=", &funcs, &n);
		if (rc)
			return rc;
		s.want = calloc(r->m.nfunctions + 1, sizeof(bool));
		if (!s.want) {
			free(funcs);
			return -ENOMEM;
		}
		for (i = 0; i < n; i++)
			s.want[funcs[i]] = true;
		s.file = function_file(&s, funcs, n);
		free(funcs);
		if (s.file < 0) {
			free(s.want);
			return report_usage_error(
				"function '%s' has no source position in result '%s' "
				"(built without -g?)",
				eq + 1, r->dir);
		}
	} else if (!strncmp(obj, "file=", 5)) {
		rc = pick_file(r, eq + 1, &s.file);
		if (rc)
			return rc;
	} else {
		char word[64];
		const char *near;

		snprintf(word, sizeof(word), "%.*s", (int)(eq - obj), obj);
		near = options_nearest(word, keys, 2);
		return report_usage_error("unknown source object '%s'%s%s%s; use function=NAME or "
					  "file=PATH",
					  word, near ? " (did you mean '" : "", near ? near : "",
					  near ? "'?)" : "");
	}
	rc = compute(&s);
	if (!rc)
		rc = fill(&s, t);
	free(s.want);
	cct_walk_release(&s.w);
	return rc;
}
