/* SPDX-License-Identifier: MIT */
/* Open a result for a report: what the directory is, finalizing it first, loading it. */
#define LOG_DOMAIN "report"
#include <errno.h>
#include <glob.h>
#include <limits.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/grow.h"
#include "common/log.h"
#include "common/options.h"
#include "common/result-dir.h"
#include "common/result.h"
#include "common/tool-run.h"
#include "report/filter.h"
#include "report/model-private.h"
#include "report/names.h"
#include "report/report-private.h"

/*
 * Function names as shown: whole, or with -name-style short as people of each language know
 * them: C++ without parameter lists (VTune's habit), Python by the last component of the
 * qualified name, the function's own name as cProfile and py-spy print it ("<listcomp>" for
 * 3.11's "f.<locals>.<listcomp>", "step" for "Simulation.step").
 */
static int name_functions(struct report *r)
{
	size_t i;

	r->fnames = malloc((r->m.nfunctions + 1) * sizeof(*r->fnames));
	if (!r->fnames)
		return -ENOMEM;
	for (i = 0; i < r->m.nfunctions; i++) {
		const char *name = r->m.functions[i].name, *from = name;
		size_t n = strlen(name);
		char *s;

		r->fnames[i] = name;
		if (r->o->short_names && r->m.functions[i].python)
			from = names_last(name, &n);
		else if (r->o->short_names)
			n = names_short_len(name);
		if (from == name && n == strlen(name))
			continue;
		s = strndup(from, n);
		if (!s || !(r->fnames[i] = model_strdup(&r->m, s))) {
			free(s);
			return -ENOMEM;
		}
		free(s);
	}
	return 0;
}

int report_parse_time_filter(const char *s, int64_t *from, int64_t *to)
{
	char a[64], err[256];
	const char *colon = strchr(s, ':');
	double x;

	*from = 0;
	*to = INT64_MAX;
	if (!colon || (size_t)(colon - s) >= sizeof(a))
		return report_usage_error("invalid value '%s' for option '-time-filter': expected "
					  "START:END in seconds, e.g. 0.5:2",
					  s);
	snprintf(a, sizeof(a), "%.*s", (int)(colon - s), s);
	if (*a) {
		if (options_parse_double("option '-time-filter'", a, 0, 1e9, &x, err, sizeof(err)))
			return report_usage_error("%s", err);
		*from = (int64_t)llround(x * 1e9);
	}
	if (colon[1]) {
		if (options_parse_double("option '-time-filter'", colon + 1, 0, 1e9, &x, err,
					 sizeof(err)))
			return report_usage_error("%s", err);
		*to = (int64_t)llround(x * 1e9);
	}
	if (*to <= *from)
		return report_usage_error("invalid value '%s' for option '-time-filter': the end "
					  "must come after the start",
					  s);
	return 0;
}

/* ---- finalizing first: pfinalize runs -------------------------------------------------------- */

/*
 * pfinalize's command line for dir: preport's -source-search-dir, -quiet and -verbose, and
 * -j threads when not NULL. NULL when memory runs out (caller frees).
 */
static char **finalize_argv(const struct report_opts *o, const char *dir, char *threads)
{
	char **argv = calloc(8 + 2 * o->nsource_dirs, sizeof(*argv));
	size_t n = 0, i;

	if (!argv)
		return NULL;
	/* Run for preport (or pcollect -report), it speaks as the tool the user ran. */
	argv[n++] = (char *)log_tool();
	argv[n++] = "-r";
	argv[n++] = (char *)dir;
	for (i = 0; i < o->nsource_dirs; i++) {
		argv[n++] = "-source-search-dir";
		argv[n++] = (char *)o->source_dirs[i];
	}
	if (threads) {
		argv[n++] = "-j";
		argv[n++] = threads;
	}
	if (o->quiet)
		argv[n++] = "-quiet";
	else if (log_level() > 0)
		argv[n++] = "-verbose";
	return argv;
}

/* A failed finalization of what ('result', 'job') dir, status as tool_run() gives it. */
static int finalize_failed(int status, const char *what, const char *dir)
{
	if (status < 0)
		log_error("cannot run pfinalize: %s", strerror(-status));
	log_error("cannot finalize %s '%s'; finalize it with 'pfinalize -r %s', then run preport "
		  "again",
		  what, dir, dir);
	if (status == EXIT_USAGE)
		return -ERR_USAGE;
	return status < 0 ? status : -EIO;
}

/* Finalize a result that has raw streams but no database yet. */
static int finalize_node(const struct report_opts *o, const struct result_part *part)
{
	char **argv = finalize_argv(o, part->dir, NULL);
	int status;

	if (!argv)
		return -ENOMEM;
	log_debug("'%s': no database yet: finalizing first", part->db);
	if (!o->quiet)
		log_info("result '%s' is not finalized yet: finalizing it now", part->dir);
	status = tool_run("pfinalize", argv);
	free(argv);
	return status ? finalize_failed(status, "result", part->dir) : 0;
}

/* A pfinalize run of a job's node result: its stderr kept apart, told whole at its end. */
struct finalizer {
	pid_t pid;
	const char *dir;
	FILE *err;
};

/* Wait for one of the runs; its status folded into *worst (EXIT_*, the highest kept). */
static void finalize_reap(struct finalizer *runs, size_t n, int *worst)
{
	pid_t ended;
	char buf[4096];
	size_t i, k;
	int status = tool_wait(-1, &ended);

	for (i = 0; i < n && runs[i].pid != ended; i++)
		;
	if (status < 0 || i == n) {
		*worst = EXIT_RUNTIME;
		return;
	}
	rewind(runs[i].err);
	while ((k = fread(buf, 1, sizeof(buf), runs[i].err)) > 0)
		fwrite(buf, 1, k, stderr);
	fclose(runs[i].err);
	runs[i].pid = 0;
	if (status > 128)
		log_error("finalization of '%s' died of signal %d", runs[i].dir, status - 128);
	if (status > EXIT_USAGE)
		status = EXIT_RUNTIME;
	if (status > *worst)
		*worst = status;
}

/*
 * Finalize the node results dirs[0..n), each by a pfinalize of its own, up to one per CPU at
 * once, the CPUs shared out as -j; under mpirun or srun (result_job_rank_size()), rank r of
 * s only the results r, r + s, ... (as pfinalize -r DIR of a job does). Returns the worst
 * exit status.
 */
static int finalize_parts(const struct report_opts *o, char **dirs, size_t n)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	int rank = 0, size = 1, jobs = cpus > 0 ? (int)cpus : 1, worst = EXIT_OK, at_once;
	struct finalizer *runs = calloc(n + 1, sizeof(*runs));
	size_t i, mine = 0, running = 0;
	char threads[16];

	if (!runs) {
		log_error("cannot finalize the job's results: %s", strerror(ENOMEM));
		return EXIT_RUNTIME;
	}
	if (result_job_rank_size(&rank, &size) && size > 1)
		log_debug_in("job", "rank %d of %d: the node results %d, %d + %d, ...", rank, size,
			     rank, rank, size);
	else
		rank = 0, size = 1;
	for (i = (size_t)rank; i < n; i += (size_t)size)
		mine++;
	at_once = mine < (size_t)jobs ? (int)mine : jobs;
	snprintf(threads, sizeof(threads), "%d",
		 at_once > 0 && jobs / at_once > 0 ? jobs / at_once : 1);
	if (!o->quiet)
		log_info("finalizing %zu node result%s of a parallel job%s, %d at once", mine,
			 mine == 1 ? "" : "s", size > 1 ? " (this rank's share)" : "", at_once);
	fflush(NULL);
	for (i = (size_t)rank; i < n; i += (size_t)size) {
		char **argv = finalize_argv(o, dirs[i], threads);
		struct finalizer *f = &runs[i];

		if (running == (size_t)at_once) {
			finalize_reap(runs, n, &worst);
			running--;
		}
		log_debug_in("job", "'%s' with %s threads", dirs[i], threads);
		f->dir = dirs[i];
		f->err = tmpfile();
		f->pid = argv && f->err ? tool_spawn("pfinalize", argv, fileno(f->err)) : -ENOMEM;
		free(argv);
		if (f->pid < 0) {
			log_error("cannot finalize '%s': %s", dirs[i], strerror((int)-f->pid));
			if (f->err)
				fclose(f->err);
			f->pid = 0;
			worst = EXIT_RUNTIME;
			continue;
		}
		running++;
	}
	while (running--)
		finalize_reap(runs, n, &worst);
	free(runs);
	return worst;
}

/* Finalize the node results of job res that have no database yet. */
static int finalize_job(const struct report_opts *o, const struct result *res)
{
	char **todo = calloc(res->nparts + 1, sizeof(*todo));
	size_t i, k = 0;
	int worst = EXIT_OK;

	if (!todo)
		return -ENOMEM;
	for (i = 0; i < res->nparts; i++)
		if (!res->parts[i].finalized)
			todo[k++] = res->parts[i].dir;
	if (k) {
		if (!o->quiet)
			log_info("%zu of the %zu node results of job '%s' are not finalized yet: "
				 "finalizing them now",
				 k, res->nparts, res->dir);
		worst = finalize_parts(o, todo, k);
	}
	free(todo);
	return worst ? finalize_failed(worst, "job", res->dir) : 0;
}

/* ---- loading ------------------------------------------------------------------------------- */

/* A directory that is no result: it does not exist (and is no job), or holds none. */
static int not_a_result(const struct result *res)
{
	/* A name that leads nowhere is the user's to fix; a refusal of the system is not. */
	if (res->kind == RESULT_NOT_RESULT)
		return report_usage_error(
			"'%s' is not a result directory (it has neither result.db "
			"nor raw/); give the directory pcollect -r wrote",
			res->dir);
	if (res->error == ENOENT || res->error == ENOTDIR)
		return report_usage_error("cannot open result '%s': %s (and no '%s.<host>' "
					  "results of a parallel job are beside it)",
					  res->dir, strerror(res->error),
					  report_basename(res->dir));
	log_error("cannot open result '%s': %s", res->dir, strerror(res->error));
	return -res->error;
}

/*
 * Whether the result at dir, loaded into m, was made here by this user: the directory is the
 * caller's and is the very one pcollect recorded (result_dir_identity()). A copy, another
 * user's result or a forged database is not, and the paths it names are not read.
 */
static bool own_result(const char *dir, const struct model *m)
{
	const char *rec = model_meta_get(m, "collect.result_dir_id");
	char id[128];
	struct stat st;

	return rec && !result_dir_identity(dir, id, sizeof(id)) && !strcmp(rec, id) &&
	       !stat(dir, &st) && st.st_uid == geteuid();
}

/* A node result, finalized first when it has no database yet. */
static int load_node(struct report *r, const struct result_part *part, unsigned mflags)
{
	char err[1024];
	int rc;

	/* Finalized now, the result would stay a partial one without a word. */
	if (!part->finalized && part->collecting) {
		log_error("result '%s' is still being collected (pcollect, pid %ld, is running): "
			  "run preport when it ends, or finalize what was written so far with "
			  "'pfinalize -r %s'",
			  part->dir, part->collecting, part->dir);
		return -EBUSY;
	}
	if (!part->finalized && (rc = finalize_node(r->o, part)))
		return rc;
	log_debug("reading '%s'%s", part->db,
		  r->o->time_filter ? " (the timeline, for -time-filter)" : "");
	/* With a time filter the samples come from the timeline: the samples table is not read. */
	rc = model_load(&r->m, part->db, mflags, err, sizeof(err));
	r->own_paths = !rc && own_result(part->dir, &r->m);
	if (rc) {
		log_error("%s", err);
		if (rc == -EPROTO)
			log_error("or finalize it again with this version: 'pfinalize -r %s'",
				  part->dir);
	}
	return rc;
}

/*
 * Whether the view reads of each sample no more than its job database's short stacks keep
 * (finalizer/job-agg.c): the summary, -view mpi, -view hotspots -group-by rank, each of one
 * result, without an option that reads frames further up the stacks or the timeline.
 */
static bool short_stacks_enough(const struct report *r)
{
	const struct report_opts *o = r->o;
	const char *v = r->view ? r->view->name : NULL;

	if (o->nresults != 1 || o->format == REPORT_EXPORT || o->nfilters || o->time_filter ||
	    o->show_from || o->function || o->stitch || o->all_frames || o->python_only ||
	    o->collapse_recursion || !v)
		return false;
	return (!strcmp(v, "summary") && !o->group_by) || !strcmp(v, "mpi") ||
	       (!strcmp(v, "hotspots") && o->group_by && !strcmp(o->group_by, "rank"));
}

/* A parallel job's results DIR.<host> as one model, those not finalized yet finalized first. */
static int load_job(struct report *r, const struct result *res, unsigned mflags)
{
	char **dbs, **dirs, **views = NULL, err[1024], job_db[PATH_MAX];
	bool short_stacks = false;
	size_t i;
	int rc;

	if ((rc = finalize_job(r->o, res)))
		return rc;
	dbs = calloc(res->nparts + 1, sizeof(*dbs));
	dirs = calloc(res->nparts + 1, sizeof(*dirs));
	if (!dbs || !dirs) {
		free(dbs);
		free(dirs);
		log_error("cannot load job '%s': %s", res->dir, strerror(ENOMEM));
		return -ENOMEM;
	}
	for (i = 0; i < res->nparts; i++) {
		dbs[i] = res->parts[i].db;
		dirs[i] = res->parts[i].dir;
	}
	/* One file, DIR.job.db, while it holds the node results as they are. */
	if (!result_job_db_path(res->dir, "", job_db, sizeof(job_db)) &&
	    model_job_db_views(job_db, dirs, dbs, res->nparts, short_stacks_enough(r),
			       &short_stacks, &views) < 0) {
		rc = -ENOMEM;
		log_error("cannot load job '%s': %s", res->dir, strerror(ENOMEM));
	}
	for (i = 0; views && i < res->nparts; i++)
		dbs[i] = job_db;
	if (views)
		log_debug("reading job database '%s' (%zu node results)", job_db, res->nparts);
	if (short_stacks)
		log_debug("reading the short stacks of job database '%s' (agg_stacks, agg_samples)",
			  job_db);
	else
		log_debug("reading the %zu node results of job '%s'", res->nparts, res->dir);
	if (!rc)
		rc = model_load_job(&r->m, res->dir, dbs, views, res->nparts,
				    mflags | (short_stacks ? MODEL_ONE_CONNECTION : 0), err,
				    sizeof(err));
	if (rc)
		log_error("%s", err);
	r->own_paths = !rc && r->m.nparts == res->nparts;
	for (i = 0; r->own_paths && i < res->nparts; i++)
		r->own_paths = own_result(res->parts[i].dir, &r->m.parts[i].m);
	model_job_db_views_free(views, res->nparts);
	free(dbs);
	free(dirs);
	return rc;
}

/* The runs a pattern names: every database, its part's directory, its run. */
struct runs {
	char **dbs, **dirs;
	int *run_of;
	size_t n, dbs_cap, dirs_cap, run_cap;
	char **names; /* the runs' names: as the pattern matched them, without a trailing / */
	size_t nruns;
};

static void runs_release(struct runs *rs)
{
	size_t i;

	for (i = 0; i < rs->n; i++)
		FREE_ALL(rs->dbs[i], rs->dirs[i]);
	for (i = 0; i < rs->nruns; i++)
		free(rs->names[i]);
	FREE_ALL(rs->dbs, rs->dirs, rs->run_of, rs->names);
}

/* Run res (a node result or a job, finalized first when it must be) added to rs. */
static int runs_add(const struct report_opts *o, struct runs *rs, const struct result *res)
{
	size_t i, len = strlen(res->dir);
	char *name;
	int rc, run;

	if (res->kind == RESULT_NODE && !res->parts[0].finalized && res->parts[0].collecting) {
		log_error("result '%s' is still being collected (pcollect, pid %ld, is running): "
			  "run preport when it ends",
			  res->dir, res->parts[0].collecting);
		return -EBUSY;
	}
	rc = res->kind == RESULT_JOB    ? finalize_job(o, res)
	     : !res->parts[0].finalized ? finalize_node(o, &res->parts[0])
					: 0;
	if (rc)
		return rc;
	while (len > 1 && res->dir[len - 1] == '/')
		len--;
	if (!(name = strndup(res->dir, len)))
		return -ENOMEM;
	run = (int)rs->nruns;
	rs->names[rs->nruns++] = name;
	for (i = 0; i < res->nparts; i++) {
		if (GROW(rs->dbs, rs->n + 1, rs->dbs_cap) ||
		    GROW(rs->dirs, rs->n + 1, rs->dirs_cap) ||
		    GROW(rs->run_of, rs->n + 1, rs->run_cap))
			return -ENOMEM;
		rs->dbs[rs->n] = strdup(res->parts[i].db);
		rs->dirs[rs->n] = strdup(res->parts[i].dir);
		rs->run_of[rs->n++] = run;
		if (!rs->dbs[rs->n - 1] || !rs->dirs[rs->n - 1])
			return -ENOMEM;
	}
	return 0;
}

/*
 * -r PATTERN: the results it matches (glob(3), in its order: sorted) as one, each a run
 * (model_load_runs()). Matches that are no result (a log file) are left out with a word;
 * a pattern that matches no result is a usage error.
 */
static int load_runs(struct report *r, const char *pattern, unsigned mflags)
{
	struct runs rs = { 0 };
	glob_t g;
	char err[1024];
	size_t i;
	int rc = glob(pattern, 0, NULL, &g);

	if (rc == GLOB_NOMATCH)
		return report_usage_error("no result matches '%s'", pattern);
	if (rc) {
		log_error("cannot expand '%s': %s", pattern,
			  strerror(rc == GLOB_NOSPACE ? ENOMEM : EIO));
		return rc == GLOB_NOSPACE ? -ENOMEM : -EIO;
	}
	rs.names = calloc(g.gl_pathc + 1, sizeof(*rs.names));
	rc = rs.names ? 0 : -ENOMEM;
	for (i = 0; i < g.gl_pathc && !rc; i++) {
		struct result res;

		if ((rc = result_open(&res, g.gl_pathv[i])))
			break;
		if (res.kind != RESULT_NODE && res.kind != RESULT_JOB)
			log_warn("'%s' matches '%s' but is not a result: left out", res.dir,
				 pattern);
		else if (res.parts[0].db)
			rc = runs_add(r->o, &rs, &res);
		else
			rc = report_usage_error("cannot open result '%s': %s", res.dir,
						strerror(ENAMETOOLONG));
		result_close(&res);
	}
	globfree(&g);
	if (!rc && !rs.nruns)
		rc = report_usage_error("no result matches '%s' (only files or directories "
					"that are no results)",
					pattern);
	if (rc == -ENOMEM)
		log_error("cannot load the results of '%s': %s", pattern, strerror(ENOMEM));
	if (!rc) {
		log_debug("reading the %zu runs of '%s' (%zu databases)", rs.nruns, pattern, rs.n);
		rc = model_load_runs(&r->m, pattern, rs.dbs, rs.run_of, rs.n,
				     (const char *const *)rs.names, rs.nruns, mflags, err,
				     sizeof(err));
		if (rc)
			log_error("%s", err);
		r->own_paths = !rc;
		for (i = 0; r->own_paths && i < rs.n; i++)
			r->own_paths = own_result(rs.dirs[i], &r->m.parts[i].m);
	}
	runs_release(&rs);
	return rc;
}

bool report_is_pattern(const char *dir)
{
	struct stat st;

	return strpbrk(dir, "*?[") && lstat(dir, &st);
}

/* Load dir, whatever it is (result_open(), asked once): its model into r->m. */
static int load_result(struct report *r, const char *dir, unsigned mflags)
{
	struct result res;
	size_t i;
	int rc;

	if (report_is_pattern(dir))
		return load_runs(r, dir, mflags);
	rc = result_open(&res, dir);

	if (rc) {
		log_error("cannot open result '%s': %s", dir, strerror(-rc));
		return rc;
	}
	for (i = 0; i < res.nparts && !rc; i++)
		if (!res.parts[i].db)
			rc = report_usage_error("cannot open result '%s': %s", res.parts[i].dir,
						strerror(ENAMETOOLONG));
	if (!rc)
		rc = res.kind == RESULT_NODE  ? load_node(r, &res.parts[0], mflags)
		     : res.kind == RESULT_JOB ? load_job(r, &res, mflags)
					      : not_a_result(&res);
	result_close(&res);
	return rc;
}

/*
 * -show-from NAME[@FILE]: per function, whether a stack through it starts there. NAME@FILE is
 * a function so called whose source file's path ends with FILE (a Python '<module>' is known
 * by its file); a name with an '@' of its own (func@0x..., sqrt@plt) is also taken whole.
 */
static int show_from_functions(const struct report *r, const char *spec, bool **from)
{
	const struct model *m = &r->m;
	const char *at = strrchr(spec, '@');
	int *funcs = NULL, rc;
	size_t n = 0, i;

	if (!(*from = calloc(m->nfunctions + 1, sizeof(bool))))
		return -ENOMEM;
	for (i = 0; at && at[1] && i < m->nfunctions; i++) {
		const struct model_function *f = &m->functions[i];
		const char *file = f->file >= 0 ? m->files[f->file] : "";
		size_t len = (size_t)(at - spec), flen = strlen(at + 1), l = strlen(file);

		if (!strncmp(f->name, spec, len) && !f->name[len] && l >= flen &&
		    !strcmp(file + l - flen, at + 1))
			n += (*from)[i] = true;
	}
	if (n)
		return 0;
	rc = report_find_functions(r, spec, false, "-show-from", &funcs, &n);
	for (i = 0; !rc && i < n; i++)
		(*from)[funcs[i]] = true;
	free(funcs);
	if (rc) {
		free(*from);
		*from = NULL;
	}
	return rc;
}

int report_open(struct report *r, const struct report_opts *o, const char *dir,
		const struct report_view *view)
{
	bool *show = NULL; /* -show-from, per function */
	unsigned flags = 0, mflags;
	char err[1024];
	int rc;

	memset(r, 0, sizeof(*r));
	r->o = o;
	r->dir = dir;
	r->view = view;
	if (o->inline_on)
		flags |= CCT_INLINE;
	if (o->all_frames)
		flags |= CCT_ALL_FRAMES;
	if (o->python_only)
		flags |= CCT_PYTHON_ONLY;
	/* Source positions only where the view shows them. */
	if ((view->flags & VIEW_LINES) ||
	    ((view->flags & VIEW_FLAT_GROUPS) && o->group_by && strstr(o->group_by, "source-line")))
		flags |= CCT_LINES;
	if ((view->flags & VIEW_TREE) && (rc = report_tree_levels(r)))
		return rc;
	mflags = (o->time_filter ? MODEL_NO_SAMPLES : 0) |
		 (flags & CCT_LINES || view->flags & VIEW_FRAME_LINES ? MODEL_FRAME_LINES : 0);
	if ((rc = load_result(r, dir, mflags)))
		return rc;
	if (model_meta_int(&r->m, "collection_running", 0) > 0)
		log_warn("result '%s' was finalized while it was still being collected (pcollect, "
			 "pid %lld): it holds only what was written by then; once the collection "
			 "has ended, finalize it again with 'pfinalize -r %s'",
			 dir, (long long)model_meta_int(&r->m, "collection_running", 0), dir);
	r->total = calloc(r->m.nmetrics, sizeof(*r->total));
	r->count = calloc(r->m.nmetrics, sizeof(*r->count));
	r->skipped = calloc(r->m.nmetrics, sizeof(*r->skipped));
	if (!r->total || !r->count || !r->skipped || name_functions(r)) {
		rc = -ENOMEM;
		log_error("cannot load result '%s': %s", dir, strerror(ENOMEM));
		goto fail;
	}
	if (o->time_filter ? !model_has_samples(&r->m) : !r->m.nsamples) {
		report_explain_empty(r);
		rc = -ENODATA;
		goto fail;
	}
	if (o->time_filter) {
		int64_t from, to;

		rc = report_parse_time_filter(o->time_filter, &from, &to);
		if (!rc &&
		    (rc = model_load_time_range(&r->m, from, to, r->skipped, err, sizeof(err))))
			log_error("%s", err);
		if (rc)
			goto fail;
	}
	if (o->stitch && r->m.nparts)
		log_warn("option '-stitch' does not apply to a parallel job's result '%s': its "
			 "threads are shown apart",
			 dir);
	else if (o->stitch && (rc = model_stitch(&r->m))) {
		log_error("cannot stitch the threads of '%s': %s", dir, strerror(-rc));
		goto fail;
	}
	if (o->show_from && (rc = show_from_functions(r, o->show_from, &show)))
		goto fail;
	rc = cct_build(&r->tree, &r->m, flags, show);
	free(show);
	if (rc) {
		log_error("cannot build the call tree of '%s': %s", dir, strerror(-rc));
		goto fail;
	}
	rc = report_filter_samples(r);
	if (!rc)
		rc = report_pick_metrics(r);
	if (!rc && (view->flags & (VIEW_TREE | VIEW_RECURSION)) &&
	    (rc = report_derive_tree(r)) == -ENOMEM)
		log_error("cannot group the call tree of '%s': %s", dir, strerror(ENOMEM));
	else if (rc == -ENOMEM)
		log_error("cannot filter the samples of '%s': %s", dir, strerror(ENOMEM));
	if (rc)
		goto fail;
	return 0;
fail:
	report_close(r);
	return rc;
}

void report_close(struct report *r)
{
	cct_release(&r->tree);
	model_free(&r->m);
	free(r->recs);
	free(r->total);
	free(r->count);
	free(r->min);
	free(r->skipped);
	free(r->fnames);
	free(r->stack_task);
	r->stack_task = NULL;
	r->recs = NULL;
	r->total = r->count = r->min = NULL;
	r->skipped = NULL;
	r->fnames = NULL;
}
