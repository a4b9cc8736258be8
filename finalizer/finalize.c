/* SPDX-License-Identifier: MIT */
/* finalize_run(): raw streams -> events -> located stacks -> symbols (in parallel) -> tree ->
   result.db. */
#define LOG_DOMAIN "finalize"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/log.h"
#include "common/parallel.h"
#include "common/result-dir.h"
#include "common/result.h"
#include "common/debuginfod.h"
#include "finalizer/db-write.h"
#include "finalizer/finalize-private.h"
#include "finalizer/metrics.h"
#include "finalizer/sym-cache.h"

static double now_s(void)
{
	struct timespec t;

	clock_gettime(CLOCK_MONOTONIC, &t);
	return (double)t.tv_sec + (double)t.tv_nsec / 1e9;
}

static int str_cmp(const void *a, const void *b)
{
	return strcmp(*(char *const *)a, *(char *const *)b);
}

long fin_list_dir(const char *dir, const char *suffix, char ***out)
{
	DIR *d = opendir(dir);
	struct dirent *de;
	char **v = NULL;
	size_t n = 0, cap = 0, sl = strlen(suffix);

	*out = NULL;
	if (!d)
		return -errno;
	while ((de = readdir(d))) {
		size_t len = strlen(de->d_name);

		if (len <= sl || strcmp(de->d_name + len - sl, suffix) || de->d_name[0] == '.')
			continue;
		if (array_reserve(&v, &cap, n + 1, sizeof(*v)) || !(v[n] = strdup(de->d_name))) {
			closedir(d);
			while (n)
				free(v[--n]);
			free(v);
			return -ENOMEM;
		}
		n++;
	}
	closedir(d);
	if (n)
		qsort(v, n, sizeof(*v), str_cmp);
	*out = v;
	return (long)n;
}

void fin_free_list(char **v, long n)
{
	while (n > 0)
		free(v[--n]);
	free(v);
}

/* Collection metadata: every meta/<pid>.meta; the earliest start is time 0. */
static int read_meta(struct fin *f)
{
	char dir[4200], path[4400];
	char **names;
	long n, i;

	f->start_mono_ns = -1;
	f->end_mono_ns = -1;
	result_path(dir, sizeof(dir), f->dir, RESULT_PATH_META_DIR, 0, 0, NULL, NULL);
	n = fin_list_dir(dir, ".meta", &names);
	if (n < 0)
		return n == -ENOMEM ? -ENOMEM : 0;
	for (i = 0; i < n; i++) {
		struct meta one;
		const char *v;
		int ret;

		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		meta_init(&one);
		ret = meta_read_file(&one, path);
		if (ret == -ENOMEM) {
			fin_free_list(names, n);
			return ret;
		}
		if (ret) {
			log_warn("cannot read collection metadata '%s': %s", path,
				 ret == -EINVAL  ? "malformed"
				 : ret == -E2BIG ? "a line too long"
						 : result_strerror(-ret));
		} else {
			size_t k;

			log_debug("collection metadata '%s' read", path);
			v = meta_get(&one, "start_monotonic_ns");
			if (v && (f->start_mono_ns < 0 || strtoll(v, NULL, 10) < f->start_mono_ns))
				f->start_mono_ns = strtoll(v, NULL, 10);
			v = meta_get(&one, "end_monotonic_ns");
			if (v && strtoll(v, NULL, 10) > f->end_mono_ns)
				f->end_mono_ns = strtoll(v, NULL, 10);
			v = meta_get(&one, "interval_ns");
			if (v && !f->interval_ns && strtoull(v, NULL, 10) >= RAW_MIN_INTERVAL_NS &&
			    strtoull(v, NULL, 10) <= RAW_MAX_INTERVAL_NS) {
				f->interval_ns = strtoull(v, NULL, 10);
				f->interval_from_meta = true;
			}
			/* The first launcher's values win for the shared keys. */
			for (k = 0; k < one.n; k++)
				if (!meta_get(&f->meta, one.entries[k].key) &&
				    meta_set(&f->meta, one.entries[k].key, one.entries[k].value)) {
					meta_release(&one);
					fin_free_list(names, n);
					return -ENOMEM;
				}
		}
		meta_release(&one);
	}
	fin_free_list(names, n);
	return 0;
}

/* A result finalized while a launcher still collects it is partial: say so, and record it. */
static void check_running(struct fin *f)
{
	f->collecting_pid = result_dir_collecting(f->dir);
	if (f->collecting_pid)
		log_warn("result '%s' is still being collected (pcollect, pid %ld, is running): "
			 "finalizing what was written so far; finalize it again when the "
			 "collection ends",
			 f->dir, f->collecting_pid);
}

/*
 * Streams of a newer format than this pfinalize reads are named one by one in the summary;
 * when no stream could be read at all, an empty result would hide why: refused.
 */
static int check_versions(const struct fin *f)
{
	const struct stream *newer = NULL;
	char why[200];
	size_t i;

	for (i = 0; i < f->nstreams; i++) {
		if (f->streams[i].has_header)
			return 0;
		if (f->streams[i].open_err == -EPROTONOSUPPORT)
			newer = &f->streams[i];
	}
	if (!newer)
		return 0;
	log_error("cannot finalize '%s': its stream '%s' has %s", f->dir, newer->path,
		  stream_open_strerror(newer, why, sizeof(why)));
	return -EPROTONOSUPPORT;
}

static int load_one(void *ctx, size_t i)
{
	struct fin *f = ctx;

	return stream_load(&f->streams[i]);
}

static int load_streams(struct fin *f, int jobs)
{
	char dir[4200];
	char **names;
	long n, i;

	result_path(dir, sizeof(dir), f->dir, RESULT_PATH_RAW_DIR, 0, 0, NULL, NULL);
	n = fin_list_dir(dir, ".praw", &names);
	if (n == -ENOENT || n == 0) {
		log_error("no raw data in '%s': nothing to finalize (the collection recorded no "
			  "stream; see the agent logs in '%s/log')",
			  dir, f->dir);
		fin_free_list(names, n > 0 ? n : 0);
		return -ENODATA;
	}
	if (n < 0) {
		log_error("cannot read directory '%s': %s", dir, strerror((int)-n));
		return (int)n;
	}
	f->streams = calloc((size_t)n, sizeof(*f->streams));
	if (!f->streams) {
		fin_free_list(names, n);
		return -ENOMEM;
	}
	f->nstreams = (size_t)n;
	log_debug("%ld raw streams in '%s', read on up to %d threads", n, dir, jobs);
	for (i = 0; i < n; i++) {
		size_t len = strlen(dir) + strlen(names[i]) + 2;

		f->streams[i].path = malloc(len);
		if (!f->streams[i].path) {
			fin_free_list(names, n);
			return -ENOMEM;
		}
		snprintf(f->streams[i].path, len, "%s/%s", dir, names[i]);
	}
	fin_free_list(names, n);
	return parallel_for(f->nstreams, jobs, load_one, f);
}

struct resolve_ctx {
	struct fin *f;
	const struct resolve_opts *ro;
	size_t *order;
};

/* Task 0 orders the timeline, which needs no symbol, beside the modules' symbols. */
static int resolve_one(void *ctx, size_t i)
{
	struct resolve_ctx *c = ctx;

	if (i == 0)
		return fin_build_timeline(c->f);
	return module_resolve(&c->f->modules[c->order[i - 1]], c->ro);
}

/* Modules by decreasing address count (qsort_r: the modules come with the call). */
static int order_cmp(const void *a, const void *b, void *arg)
{
	const struct fin *f = arg;
	size_t x = *(const size_t *)a, y = *(const size_t *)b;
	size_t nx = f->modules[x].naddrs, ny = f->modules[y].naddrs;

	return nx > ny ? -1 : nx < ny;
}

static int resolve_modules(struct fin *f, int jobs)
{
	struct search_index search;
	struct resolve_opts ro = { 0 };
	struct resolve_ctx c = { f, &ro, NULL };
	char cache[4096];
	const char *root = getenv("PCOLLECT_DEBUG_ROOT");
	size_t i;
	int ret;

	ret = search_index_build(&search, f->o->search_dirs, f->o->nsearch_dirs);
	if (ret)
		return ret;
	ro.result_dir = f->dir;
	ro.search = f->o->nsearch_dirs ? &search : NULL;
	ro.debug_root = root && *root ? root : "/usr/lib/debug";
	ro.inline_chains = !f->o->fast;
	ro.jobs = jobs;
	ro.cache_dir = sym_cache_dir(cache, sizeof(cache));
	ro.debuginfod = !f->o->no_debuginfod && debug_server_configured();
	log_debug("%zu modules to resolve on up to %d threads; separate debug files under '%s'; "
		  "symbol cache '%s'; debuginfod %s",
		  f->nmodules, jobs, ro.debug_root, ro.cache_dir ? ro.cache_dir : "(off)",
		  ro.debuginfod         ? getenv("DEBUGINFOD_URLS")
		  : f->o->no_debuginfod ? "off (-no-debuginfod)"
					: "off (DEBUGINFOD_URLS is not set)");
	c.order = malloc((f->nmodules ? f->nmodules : 1) * sizeof(*c.order));
	if (!c.order) {
		search_index_release(&search);
		return -ENOMEM;
	}
	/* Biggest first, so one large library does not start last. */
	for (i = 0; i < f->nmodules; i++)
		c.order[i] = i;
	qsort_r(c.order, f->nmodules, sizeof(*c.order), order_cmp, f);
	ret = parallel_for(f->nmodules + 1, jobs, resolve_one, &c);
	free(c.order);
	search_index_release(&search);
	return ret;
}

/* Remove databases left by finalizers that died (their pid is gone). */
static void remove_stale_tmp(const char *dir)
{
	DIR *d = opendir(dir);
	struct dirent *de;

	if (!d)
		return;
	while ((de = readdir(d))) {
		static const char prefix[] = ".result.db.tmp.";
		char path[4400], *end;
		long pid;

		if (strncmp(de->d_name, prefix, sizeof(prefix) - 1))
			continue;
		struct stat st;

		pid = strtol(de->d_name + sizeof(prefix) - 1, &end, 10);
		if (*end || pid <= 0 || pid == getpid() || !(kill((pid_t)pid, 0) && errno == ESRCH))
			continue;
		/* The directory may be shared by hosts: also wait until the file is old. */
		snprintf(path, sizeof(path), "%s/%s", dir, de->d_name);
		if (!stat(path, &st) && time(NULL) - st.st_mtime > 600)
			unlink(path);
	}
	closedir(d);
}

static int fsync_path(const char *path, int flags)
{
	int fd = open(path, flags | O_CLOEXEC), ret = 0;

	if (fd < 0)
		return -errno;
	if (fsync(fd) && errno != EINVAL)
		ret = -errno;
	close(fd);
	return ret;
}

struct db_job {
	struct fin_db *db;
	struct fin *f;
	int ret; /* of the symbols part */
};

/* Task 0 writes the symbols part of the database, task 1 builds the tree: side by side. */
static int tree_or_symbols(void *ctx, size_t i)
{
	struct db_job *j = ctx;

	if (i == 1)
		return fin_build_tree(j->f);
	j->ret = fin_db_write_symbols(j->db, j->f);
	return 0;
}

/*
 * Build the tree while another thread writes the tables that do not depend on it (modules,
 * functions, frames), then write the rest: DIR/.result.db.tmp.<pid>, fsync'ed, renamed over
 * DIR/result.db. Sets the tree and database times.
 */
static int tree_and_db(struct fin *f)
{
	char tmp[4200], db[4200];
	struct db_job job = { NULL, f, 0 };
	double t = now_s();
	int ret;

	result_path(tmp, sizeof(tmp), f->dir, RESULT_PATH_DB_TMP, getpid(), 0, NULL, NULL);
	result_path(db, sizeof(db), f->dir, RESULT_PATH_DB, 0, 0, NULL, NULL);
	ret = fin_build_frames(f);
	if (ret)
		return ret;
	unlink(tmp);
	/* SQLite creates with 0644 minus the umask: the result's own mode instead (0600 or 0640).
	 */
	ret = result_create_file(tmp, result_file_mode(f->dir));
	if (ret < 0) {
		log_error("cannot create '%s': %s", tmp, strerror(-ret));
		return ret;
	}
	close(ret);
	ret = fin_db_open(&job.db, tmp);
	if (ret)
		return ret;
	ret = parallel_for(2, 2, tree_or_symbols, &job);
	f->t_tree = now_s() - t;
	t = now_s();
	ret = ret ? ret : job.ret;
	ret = ret ? ret : fin_db_write_samples(job.db, f);
	ret = fin_db_close(job.db, ret);
	if (!ret && (ret = fsync_path(tmp, O_RDONLY)))
		log_error("cannot sync '%s': %s", tmp, strerror(-ret));
	if (!ret && rename(tmp, db)) {
		ret = -errno;
		log_error("cannot rename '%s' to '%s': %s", tmp, db, strerror(errno));
	}
	if (ret) {
		unlink(tmp);
		return ret;
	}
	fsync_path(f->dir, O_RDONLY | O_DIRECTORY);
	f->t_write = now_s() - t;
	return 0;
}

static void warn_modules(const struct fin *f)
{
	size_t i;

	for (i = 0; i < f->nmodules; i++) {
		const struct module *m = &f->modules[i];

		if (!m->naddrs)
			continue;
		if (!strcmp(m->status, "build-id-mismatch"))
			log_warn("'%s' is not the binary that was profiled (its build-id differs "
				 "from %s): its frames are reported unknown; pass -search-dir with "
				 "the original",
				 m->mismatch_path, m->build_id_hex);
		else if (!strcmp(m->status, "missing") && m->kind == RAW_MODULE_FILE &&
			 m->path[0] == '/')
			log_warn("cannot find module '%s': its frames are unresolved; pass "
				 "-search-dir with a copy",
				 m->path);
		if (m->dwarf_error)
			log_warn("cannot read all debug information of '%s': %s",
				 m->debug_path ? m->debug_path : m->resolved_path, m->dwarf_error);
	}
}

static void fin_release(struct fin *f)
{
	size_t i;

	for (i = 0; i < f->nstreams; i++)
		stream_release(&f->streams[i]);
	free(f->streams);
	for (i = 0; i < f->nimages; i++) {
		free(f->images[i].maps);
		free(f->images[i].data);
		free(f->images[i].metric_ids);
		free(f->images[i].process.exe);
		free(f->images[i].process.command_line);
	}
	free(f->images);
	for (i = 0; i < f->nthreads; i++) {
		free(f->threads[i].name);
		free(f->threads[i].os_name);
		free(f->threads[i].py_name);
	}
	free(f->threads);
	for (i = 0; i < f->nmodules; i++) {
		module_release(&f->modules[i]);
		if (f->module_frames)
			free(f->module_frames[i]);
	}
	free(f->module_frames);
	free(f->modules);
	hash_index_release(&f->module_index);
	str_pool_release(&f->strings);
	str_pool_release(&f->files);
	free(f->functions);
	hash_index_release(&f->function_index);
	free(f->frames);
	hash_index_release(&f->unknown_index);
	free(f->callee_names);
	hash_index_release(&f->python_frame_index);
	free(f->nodes);
	hash_index_release(&f->node_index);
	free(f->aggs);
	hash_index_release(&f->agg_index);
	free(f->timeline);
	fin_metrics_release(f);
	free(f->node_spin);
	free(f->contexts);
	hash_index_release(&f->context_index);
	fin_memory_release(f);
	meta_release(&f->meta);
}

/* Whether dir is a node result to finalize: 0, or an error told to the user. */
static int check_result(const char *dir)
{
	struct result res;
	struct stat st;
	char err[512];
	int ret = result_open(&res, dir);

	if (ret) {
		log_error("cannot finalize '%s': %s", dir, strerror(-ret));
		return ret;
	}
	switch (res.kind) {
	case RESULT_MISSING:
	case RESULT_JOB: /* its DIR.<host> are finalize_job()'s, not ours */
		ret = res.error;
		log_error("cannot open result directory '%s': %s", dir, strerror(ret));
		/* A name that leads nowhere is the user's to fix; a refusal of the system is not.
		 */
		ret = ret == ENOENT || ret == ENOTDIR ? -ERR_USAGE : -ret;
		break;
	case RESULT_NOT_RESULT:
		log_error("'%s' is not a result directory (it has no raw/ or result.db)", dir);
		ret = -ERR_USAGE;
		break;
	case RESULT_NODE:
		/* result.db is written into it: not into a directory another user may change. */
		if (stat(dir, &st)) {
			ret = -errno;
			log_error("cannot finalize '%s': %s", dir, strerror(-ret));
		} else if ((ret = result_dir_check_owner(dir, &st, err, sizeof(err)))) {
			log_error("cannot finalize '%s': %s", dir, err);
		}
		break;
	}
	result_close(&res);
	return ret;
}

int finalize_run(const struct finalize_opts *o)
{
	struct fin *f;
	double t0, t;
	int jobs, ret;
	size_t i;

	if (!o || !o->result_dir)
		BUG("finalize_run() needs a result directory");
	if ((ret = check_result(o->result_dir)))
		return ret;
	f = calloc(1, sizeof(*f));
	if (!f) {
		log_error("cannot finalize '%s': %s", o->result_dir, strerror(ENOMEM));
		return -ENOMEM;
	}
	f->o = o;
	snprintf(f->dir, sizeof(f->dir), "%s", o->result_dir);
	meta_init(&f->meta);
	str_pool_init(&f->strings);
	str_pool_init(&f->files);
	jobs = o->jobs > 0 ? o->jobs : (int)sysconf(_SC_NPROCESSORS_ONLN);
	if (jobs < 1)
		jobs = 1;
	t0 = now_s();
	remove_stale_tmp(f->dir);
	check_running(f);
	ret = read_meta(f);
	ret = ret ? ret : load_streams(f, jobs);
	ret = ret ? ret : check_versions(f);
	if (ret)
		goto out;
	if (f->start_mono_ns < 0) {
		/* No metadata: the first stream's start is time 0. */
		log_debug("no collection metadata: time 0 is the earliest stream's start");
		for (i = 0; i < f->nstreams; i++)
			if (f->streams[i].has_header &&
			    (f->start_mono_ns < 0 ||
			     (int64_t)f->streams[i].hdr.origin_ns < f->start_mono_ns))
				f->start_mono_ns = (int64_t)f->streams[i].hdr.origin_ns;
		if (f->start_mono_ns < 0)
			f->start_mono_ns = 0;
	}
	fin_check_streams(f);
	ret = fin_load_memory(f);
	if (ret)
		goto out;
	for (i = 0; i < f->nstreams; i++) {
		const struct stream *s = &f->streams[i];

		if (!f->interval_ns && s->has_header && s->hdr.kind != RAW_STREAM_PROCESS &&
		    s->hdr.interval_ns >= RAW_MIN_INTERVAL_NS &&
		    s->hdr.interval_ns <= RAW_MAX_INTERVAL_NS)
			f->interval_ns = s->hdr.interval_ns;
		f->bytes_total += s->stats.bytes_total;
		f->bytes_skipped += s->stats.bytes_skipped;
		if ((s->open_err && s->open_err != -ENODATA) || s->stats.bytes_skipped ||
		    s->samples_bad_stack || s->duplicate_of >= 0 || s->header_distrusted ||
		    (!s->has_header && !s->open_err))
			f->streams_bad++;
	}
	t = now_s();
	f->t_load = t - t0;
	ret = fin_build_images(f);
	if (!ret)
		fin_check_thread_times(f);
	ret = ret ? ret : fin_build_events(f);
	ret = ret ? ret : fin_memory_done(f);
	ret = ret ? ret : fin_locate_stacks(f);
	if (ret)
		goto out;
	f->t_load += now_s() - t;
	t = now_s();
	fin_mark_openmp_runtimes(f);
	ret = resolve_modules(f, jobs);
	ret = ret ? ret : fin_name_contexts(f);
	if (ret)
		goto out;
	f->t_resolve = now_s() - t;
	ret = tree_and_db(f);
	if (ret)
		goto out;
	warn_modules(f);
	if (!o->quiet)
		fin_print_summary(f);
out:
	/* Every other failure was told where it was found (docs/errors.md). */
	if (ret == -ENOMEM || ret == -EOVERFLOW)
		log_error("cannot finalize '%s': %s", o->result_dir, strerror(-ret));
	fin_release(f);
	free(f);
	return ret;
}
