/* SPDX-License-Identifier: MIT */
/* A parallel job as one model: every node result's database loaded, then merged. */
#include <errno.h>
#include <inttypes.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include <strings.h>

#include "common/grow.h"
#include "common/sat.h"
#include "common/hash-index.h"
#include "common/log.h"
#include "common/parallel.h"
#include "report/bigmem.h"
#include "report/model-private.h"

/*
 * Each node result (DIR.<host>) is a database of its own, with its own ids. The job's model
 * has one table of each: modules, files, functions and frames that are the same in two nodes
 * (same names, module, source position) are one row, and so are the stack paths made of
 * them, so a function's time adds up over the job and the tree has one branch per path.
 * Processes, threads and contexts are each node's own. Every node's model is kept (with its
 * database open) in m->parts with the maps from its rows to the job's: a time filter or the
 * timeline asks each node's database and maps the answer.
 *
 * A node's times count from its own collection start; in the job they count from the
 * earliest start of all (by the wall clock each node recorded: meta start_realtime_ns), so
 * events of all nodes line up as far as the nodes' clocks agree.
 */

struct merge {
	struct model *m;
	struct hash_index modules, files, functions, frames, stacks, metrics;
	size_t modules_cap, files_cap, functions_cap, frames_cap, stacks_cap, metrics_cap;
	size_t processes_cap, threads_cap, contexts_cap;
};

static void merge_release(struct merge *g)
{
	struct hash_index *const all[] = { &g->modules, &g->files,  &g->functions,
					   &g->frames,  &g->stacks, &g->metrics };
	size_t i;

	for (i = 0; i < sizeof(all) / sizeof(all[0]); i++)
		hash_index_release(all[i]);
}

static uint64_t str_hash(const char *s)
{
	return s ? hash_bytes(s, strlen(s)) : 0;
}

static bool str_eq(const char *a, const char *b)
{
	return a == b || (a && b && !strcmp(a, b));
}

/* ---- the keyed tables ---------------------------------------------------------------------- */

struct key {
	struct merge *g;
	const void *row; /* the part's row, already mapped to the job's indexes */
};

static bool modules_eq(const void *ctx, uint32_t i)
{
	const struct key *k = ctx;
	const struct model_module *a = k->row, *b = &k->g->m->modules[i];

	return str_eq(a->name, b->name) && str_eq(a->path, b->path);
}

static bool files_eq(const void *ctx, uint32_t i)
{
	const struct key *k = ctx;

	return str_eq(*(const char *const *)k->row, k->g->m->files[i]);
}

static bool functions_eq(const void *ctx, uint32_t i)
{
	const struct key *k = ctx;
	const struct model_function *a = k->row, *b = &k->g->m->functions[i];

	return a->module == b->module && a->file == b->file && a->line == b->line &&
	       a->python == b->python && str_eq(a->name, b->name);
}

static bool frames_eq(const void *ctx, uint32_t i)
{
	const struct key *k = ctx;
	const struct model_frame *a = k->row, *b = &k->g->m->frames[i];

	return a->function == b->function && a->module == b->module && a->file == b->file &&
	       a->line == b->line && a->inline_depth == b->inline_depth;
}

static bool stacks_eq(const void *ctx, uint32_t i)
{
	const struct key *k = ctx;
	const struct model_stack *a = k->row, *b = &k->g->m->stacks[i];

	return a->parent == b->parent && a->frame == b->frame;
}

static bool metrics_eq(const void *ctx, uint32_t i)
{
	const struct key *k = ctx;

	return !strcasecmp(((const struct model_metric *)k->row)->name, k->g->m->metrics[i].name);
}

/* A new row: a copy of the part's (mapped) row. */
#define MAKE(table, type)                                                                          \
	static int table##_make(const void *ctx, void *elem)                                       \
	{                                                                                          \
		const struct key *k = ctx;                                                         \
                                                                                                   \
		memcpy(elem, k->row, sizeof(struct model_##type));                                 \
		return 0;                                                                          \
	}
MAKE(modules, module)
MAKE(functions, function)
MAKE(frames, frame)
MAKE(stacks, stack)
MAKE(metrics, metric)

static int files_make(const void *ctx, void *elem)
{
	const struct key *k = ctx;

	*(const char **)elem = *(const char *const *)k->row;
	return 0;
}

/* The job's index of a part's row (its references mapped to the job's), added when new; a
   negative errno. */
#define GET(g, table, hash, row)                                                                   \
	hash_index_get(&(g)->table, (hash), table##_eq, table##_make, &(struct key){ (g), (row) }, \
		       &(g)->m->table, &(g)->m->n##table, &(g)->table##_cap,                       \
		       sizeof(*(g)->m->table))

static int map_of(const int *map, int i)
{
	return i >= 0 ? map[i] : -1;
}

/* The part's symbols and stacks into the job's tables; the part's maps filled. */
static int merge_tree(struct merge *g, struct model_part *p)
{
	const struct model *pm = &p->m;
	int *modules = malloc((pm->nmodules + 1) * sizeof(int));
	int *files = malloc((pm->nfiles + 1) * sizeof(int));
	int *functions = malloc((pm->nfunctions + 1) * sizeof(int));
	int *frames = malloc((pm->nframes + 1) * sizeof(int));
	int64_t r = -ENOMEM;
	size_t i;

	p->stack_map = malloc((pm->nstacks + 1) * sizeof(int));
	if (!modules || !files || !functions || !frames || !p->stack_map)
		goto out;
	for (i = 0; i < pm->nmodules; i++) {
		const struct model_module *mod = &pm->modules[i];

		if ((r = GET(g, modules, hash_combine(str_hash(mod->name), str_hash(mod->path)),
			     mod)) < 0)
			goto out;
		modules[i] = (int)r;
	}
	for (i = 0; i < pm->nfiles; i++) {
		if ((r = GET(g, files, str_hash(pm->files[i]), &pm->files[i])) < 0)
			goto out;
		files[i] = (int)r;
	}
	for (i = 0; i < pm->nfunctions; i++) {
		struct model_function f = pm->functions[i];

		f.module = map_of(modules, f.module);
		f.file = map_of(files, f.file);
		r = GET(g, functions,
			hash_combine(hash_combine(hash_combine(str_hash(f.name),
							       (uint64_t)f.module),
						  (uint64_t)f.file),
				     (uint64_t)f.line << 1 | f.python),
			&f);
		if (r < 0)
			goto out;
		functions[i] = (int)r;
	}
	for (i = 0; i < pm->nframes; i++) {
		struct model_frame fr = pm->frames[i];

		fr.function = functions[fr.function];
		fr.module = map_of(modules, fr.module);
		fr.file = map_of(files, fr.file);
		r = GET(g, frames,
			hash_combine(hash_combine(hash_combine((uint64_t)fr.function,
							       (uint64_t)fr.module),
						  (uint64_t)fr.file),
				     (uint64_t)fr.line << 8 | (uint64_t)fr.inline_depth),
			&fr);
		if (r < 0)
			goto out;
		frames[i] = (int)r;
	}
	/* Parents first: a new stack's parent is already in the job's table, before it. */
	for (i = 0; i < pm->nstacks; i++) {
		int s = pm->stack_order[i];
		struct model_stack st = { map_of(p->stack_map, pm->stacks[s].parent),
					  frames[pm->stacks[s].frame] };

		r = GET(g, stacks, hash_combine((uint64_t)st.parent, (uint64_t)st.frame), &st);
		if (r < 0)
			goto out;
		p->stack_map[s] = (int)r;
	}
	r = 0;
out:
	free(modules);
	free(files);
	free(functions);
	free(frames);
	return (int)r;
}

static int merge_metrics(struct merge *g, struct model_part *p)
{
	size_t i;
	int64_t r;

	p->metric_map = malloc((p->m.nmetrics + 1) * sizeof(int));
	if (!p->metric_map)
		return -ENOMEM;
	for (i = 0; i < p->m.nmetrics; i++) {
		const struct model_metric *mt = &p->m.metrics[i];
		char lower[256];
		size_t k;

		for (k = 0; mt->name[k] && k + 1 < sizeof(lower); k++)
			lower[k] = (char)(mt->name[k] |
					  (mt->name[k] >= 'A' && mt->name[k] <= 'Z' ? 0x20 : 0));
		lower[k] = '\0';
		if ((r = GET(g, metrics, str_hash(lower), mt)) < 0)
			return (int)r;
		p->metric_map[i] = (int)r;
	}
	return 0;
}

/* The part's processes, threads and contexts, appended. */
static int merge_own(struct merge *g, struct model_part *p)
{
	struct model *m = g->m;
	const struct model *pm = &p->m;
	size_t np = m->nprocesses, nt = m->nthreads, nc = m->ncontexts, i;

	if (GROW(m->processes, np + pm->nprocesses + 1, g->processes_cap) ||
	    GROW(m->threads, nt + pm->nthreads + 1, g->threads_cap) ||
	    GROW(m->contexts, nc + pm->ncontexts + 1, g->contexts_cap))
		return -ENOMEM;
	p->thread_map = malloc((pm->nthreads + 1) * sizeof(int));
	p->context_map = malloc((pm->ncontexts + 1) * sizeof(int));
	if (!p->thread_map || !p->context_map)
		return -ENOMEM;
	memcpy(m->processes + np, pm->processes, pm->nprocesses * sizeof(*m->processes));
	for (i = 0; i < pm->nprocesses; i++)
		m->processes[np + i].run = p->run;
	m->nprocesses += pm->nprocesses;
	for (i = 0; i < pm->nthreads; i++) {
		struct model_thread t = pm->threads[i];

		if (t.process >= 0)
			t.process += (int)np;
		if (t.start_ns >= 0)
			t.start_ns += p->offset_ns;
		if (t.end_ns >= 0)
			t.end_ns += p->offset_ns;
		m->threads[nt + i] = t;
		p->thread_map[i] = (int)(nt + i);
	}
	m->nthreads += pm->nthreads;
	for (i = 0; i < pm->ncontexts; i++) {
		m->contexts[nc + i] = pm->contexts[i];
		p->context_map[i] = (int)(nc + i);
	}
	m->ncontexts += pm->ncontexts;
	return 0;
}

/* Every part's samples, mapped, as the job's (replacing them). */
static int merge_samples(struct model *m)
{
	size_t n = 0, i, k = 0;
	struct model_sample *s;

	for (i = 0; i < m->nparts; i++)
		n += m->parts[i].m.nsamples;
	s = big_malloc((n + 1) * sizeof(*s));
	if (!s)
		return -ENOMEM;
	for (i = 0; i < m->nparts; i++) {
		const struct model_part *p = &m->parts[i];
		size_t j;

		for (j = 0; j < p->m.nsamples; j++) {
			struct model_sample x = p->m.samples[j];

			x.thread = map_of(p->thread_map, x.thread);
			x.stack = p->stack_map[x.stack];
			x.metric = p->metric_map[x.metric];
			x.context = map_of(p->context_map, x.context);
			s[k++] = x;
		}
	}
	free(m->samples);
	m->samples = s;
	m->nsamples = k;
	return 0;
}

/* Python notes: one per kind, their counts added. */
static int merge_pynotes(struct model *m)
{
	size_t i, j, k, cap = 0;

	for (i = 0; i < m->nparts; i++) {
		const struct model *pm = &m->parts[i].m;

		for (j = 0; j < pm->npynotes; j++) {
			for (k = 0;
			     k < m->npynotes && strcmp(m->pynotes[k].kind, pm->pynotes[j].kind);
			     k++)
				;
			if (k == m->npynotes) {
				if (GROW(m->pynotes, k + 1, cap))
					return -ENOMEM;
				m->pynotes[m->npynotes++] = pm->pynotes[j];
			} else {
				m->pynotes[k].count += pm->pynotes[j].count;
			}
		}
	}
	return 0;
}

/* ---- meta ---------------------------------------------------------------------------------- */

/* How a meta key of the nodes reads for the job: added up, the largest, the smallest. */
static const struct {
	const char *key;
	char how; /* '+', '>', '<' */
} meta_rules[] = {
	{ "samples_total", '+' },         { "weight_total", '+' },   { "raw_bytes_total", '+' },
	{ "raw_bytes_skipped", '+' },     { "samples_python", '+' }, { "waits_total", '+' },
	{ "waits_short", '+' },           { "cpu_count", '+' },      { "elapsed_ns", '>' },
	{ "end_realtime_ns", '>' },       { "data_limit_hit", '>' }, { "start_realtime_ns", '<' },
	{ "finalized_realtime_ns", '>' },
};

/* Whether host h (of part j) is named by an earlier part: runs on one machine name it once. */
static bool host_seen(const struct model *m, size_t j, const char *h)
{
	size_t i;

	for (i = 0; i < j; i++)
		if (str_eq(model_meta_get(&m->parts[i].m, "host"), h))
			return true;
	return false;
}

static int merge_meta(struct model *m, const char *dir)
{
	const struct model *first = &m->parts[0].m;
	size_t i, j, k, hosts_len = 0;
	char buf[64], *hosts;

	m->meta = calloc(first->nmeta + 4, sizeof(*m->meta));
	hosts = calloc(m->nparts, 66);
	if (!m->meta || !hosts) {
		free(hosts);
		return -ENOMEM;
	}
	for (i = 0; i < first->nmeta; i++) {
		struct model_meta e = first->meta[i];

		for (k = 0; k < sizeof(meta_rules) / sizeof(meta_rules[0]); k++) {
			int64_t v = model_meta_int(first, e.key, 0);

			if (strcmp(meta_rules[k].key, e.key))
				continue;
			/* Runs, one after the other, had the one machine's CPUs each. */
			char how =
				m->nruns && !strcmp(e.key, "cpu_count") ? '>' : meta_rules[k].how;

			for (j = 1; j < m->nparts; j++) {
				int64_t x = model_meta_int(&m->parts[j].m, e.key, v);

				v = how == '+'   ? v + x
				    : how == '>' ? (x > v ? x : v)
						 : (x < v ? x : v);
			}
			snprintf(buf, sizeof(buf), "%" PRId64, v);
			if (!(e.value = model_strdup(m, buf)))
				goto nomem;
		}
		if (!strcmp(e.key, "elapsed_ns") || !strcmp(e.key, "host"))
			continue; /* below: over the nodes' starts, and every node's name */
		m->meta[m->nmeta++] = e;
	}
	/* The job lasts from its first node's start to its last node's end; runs, one after
	   the other, as long as all of them. */
	{
		int64_t end = 0;

		for (j = 0; j < m->nparts; j++) {
			const struct model *pm = &m->parts[j].m;
			int64_t e = m->parts[j].offset_ns + model_meta_int(pm, "elapsed_ns", 0);

			if (m->nruns)
				end += e;
			else if (e > end)
				end = e;
			if (host_seen(m, j, model_meta_get(pm, "host")))
				continue;
			hosts_len += (size_t)snprintf(hosts + hosts_len, 66, "%s%.63s",
						      hosts_len ? ", " : "",
						      model_meta_get(pm, "host")
							      ? model_meta_get(pm, "host")
							      : "?");
		}
		snprintf(buf, sizeof(buf), "%" PRId64, end);
		m->meta[m->nmeta++] = (struct model_meta){ "elapsed_ns", model_strdup(m, buf) };
		m->meta[m->nmeta++] = (struct model_meta){ "host", model_strdup(m, hosts) };
		snprintf(buf, sizeof(buf), "%zu", m->nruns ? m->nruns : m->nparts);
		m->meta[m->nmeta++] = (struct model_meta){ m->nruns ? "runs" : "job_nodes",
							   model_strdup(m, buf) };
		m->meta[m->nmeta++] = (struct model_meta){ m->nruns ? "runs_pattern" : "job_result",
							   model_strdup(m, dir) };
	}
	free(hosts);
	for (i = 0; i < m->nmeta; i++)
		if (!m->meta[i].value)
			return -ENOMEM;
	return 0;
nomem:
	free(hosts);
	return -ENOMEM;
}

/* ---- loading ------------------------------------------------------------------------------- */

/* Every part loaded; the error of the first that failed. */
struct loads {
	struct model_part *parts;
	char *const *dbs;
	char *const *views;
	unsigned flags;
	pthread_mutex_t lock;
	int rc;
	size_t failed; /* the part whose error err holds */
	char err[1024];
};

/* Load part i. A failure is kept, not returned: the other parts still load, so the message
   is always the first failed part's. */
static int load_part(void *ctx, size_t i)
{
	struct loads *ls = ctx;
	char err[1024];
	int rc = model_load_views(&ls->parts[i].m, ls->dbs[i], ls->views ? ls->views[i] : NULL,
				  ls->flags, err, sizeof(err));

	if (rc) {
		pthread_mutex_lock(&ls->lock);
		if (!ls->rc || i < ls->failed) {
			ls->rc = rc;
			ls->failed = i;
			err_set(ls->err, sizeof(ls->err), "%s", err);
		}
		pthread_mutex_unlock(&ls->lock);
	}
	return 0;
}

/* Load every part, a few at once (each load uses a second thread for its samples). */
#define LOAD_THREADS 4

static int load_parts(struct model *m, char *const *dbs, char *const *views, unsigned flags,
		      char *err, size_t err_size)
{
	struct loads ls = { .parts = m->parts,
			    .dbs = dbs,
			    .views = views,
			    .flags = flags,
			    .lock = PTHREAD_MUTEX_INITIALIZER };
	int rc = parallel_for(m->nparts, LOAD_THREADS, load_part, &ls);

	if (rc)
		return rc;
	if (ls.rc)
		err_set(err, err_size, "%s", ls.err);
	return ls.rc;
}

/*
 * The databases dbs[0..n) (views: each one's views in a job database, or NULL) as one model: a
 * job's nodes (run_of NULL) or runs (database i of run run_of[i], named names[run_of[i]], each
 * counting from its own start).
 */
static int load_merged(struct model *m, const char *dir, char *const *dbs, char *const *views,
		       const int *run_of, size_t n, const char *const *names, size_t nruns,
		       unsigned flags, char *err, size_t err_size)
{
	struct merge g = { .m = m };
	int64_t first = INT64_MAX;
	size_t i;
	int rc;

	memset(m, 0, sizeof(*m));
	m->arena.chunk_size = MODEL_ARENA_CHUNK;
	m->db_path = strdup(dir);
	m->parts = calloc(n + 1, sizeof(*m->parts));
	m->nparts = n;
	m->runs = calloc(nruns + 1, sizeof(*m->runs));
	if (!m->db_path || !m->parts || !m->runs) {
		rc = -ENOMEM;
		goto out;
	}
	for (i = 0; i < nruns; i++)
		if (!(m->runs[m->nruns++] = model_strdup(m, names[i]))) {
			rc = -ENOMEM;
			goto out;
		}
	for (i = 0; i < n; i++)
		m->parts[i].run = run_of ? run_of[i] : -1;
	if ((rc = load_parts(m, dbs, views, flags, err, err_size)))
		goto out;
	for (i = 0; i < n && !run_of; i++) {
		int64_t start = model_meta_int(&m->parts[i].m, "start_realtime_ns", 0);

		if (start > 0 && start < first)
			first = start;
	}
	for (i = 0; i < n; i++) {
		int64_t start = model_meta_int(&m->parts[i].m, "start_realtime_ns", 0);

		m->parts[i].offset_ns = start > 0 && first != INT64_MAX ? start - first : 0;
	}
	/* g's indexes are zeroed: empty. */
	for (i = 0; i < n && !rc; i++) {
		struct model_part *p = &m->parts[i];

		rc = merge_metrics(&g, p);
		if (!rc)
			rc = merge_tree(&g, p);
		if (!rc)
			rc = merge_own(&g, p);
	}
	merge_release(&g);
	if (!rc && (m->stack_order = malloc((m->nstacks + 1) * sizeof(int))))
		for (i = 0; i < m->nstacks; i++)
			m->stack_order[i] = (int)i; /* every parent was added before its children */
	else if (!rc)
		rc = -ENOMEM;
	if (!rc)
		rc = merge_samples(m);
	if (!rc)
		rc = merge_pynotes(m);
	if (!rc)
		rc = merge_meta(m, dir);
	if (!rc)
		rc = model_index_contexts(m);
	if (!rc)
		rc = model_index_nodes(m);
	if (!rc) {
		m->schema_version = m->parts[0].m.schema_version;
		m->interval_ns = m->parts[0].m.interval_ns;
	}
	if (rc == -ENOMEM)
		err_set(err, err_size, "cannot load the results of %s '%s': %s",
			run_of ? "runs" : "job", dir, strerror(ENOMEM));
out:
	if (rc)
		model_free(m);
	return rc;
}

int model_load_job(struct model *m, const char *dir, char *const *dbs, char *const *views, size_t n,
		   unsigned flags, char *err, size_t err_size)
{
	return load_merged(m, dir, dbs, views, NULL, n, NULL, 0, flags, err, err_size);
}

int model_load_runs(struct model *m, const char *label, char *const *dbs, const int *run_of,
		    size_t n, const char *const *names, size_t nruns, unsigned flags, char *err,
		    size_t err_size)
{
	return load_merged(m, label, dbs, NULL, run_of, n, names, nruns, flags, err, err_size);
}

/* ---- a job's time range and timeline ----------------------------------------------------- */

int model_job_time_range(struct model *m, int64_t from_ns, int64_t to_ns, bool *skipped, char *err,
			 size_t err_size)
{
	size_t i;
	int rc;

	for (i = 0; skipped && i < m->nmetrics; i++)
		if (m->metrics[i].aggregation == MODEL_AGG_PEAK)
			skipped[i] = true;
	for (i = 0; i < m->nparts; i++) {
		struct model_part *p = &m->parts[i];

		rc = model_load_time_range(&p->m, from_ns - p->offset_ns,
					   to_ns == INT64_MAX ? to_ns : to_ns - p->offset_ns, NULL,
					   err, err_size);
		if (rc)
			return rc;
	}
	if ((rc = merge_samples(m)))
		err_set(err, err_size, "cannot load the timeline of job '%s': %s", m->db_path,
			strerror(-rc));
	return rc;
}

static int event_cmp(const void *pa, const void *pb)
{
	const struct model_event *a = pa, *b = pb;

	return a->time_ns < b->time_ns ? -1 : a->time_ns > b->time_ns;
}

int model_job_events(struct model *m, int64_t from_ns, int64_t to_ns, struct model_event **out,
		     size_t *n, char *err, size_t err_size)
{
	struct model_event *all = NULL;
	size_t nall = 0, cap = 0, i, j;
	int rc = 0;

	*out = NULL;
	*n = 0;
	for (i = 0; i < m->nparts && !rc; i++) {
		struct model_part *p = &m->parts[i];
		struct model_event *ev;
		size_t nev;

		rc = model_load_events(&p->m, from_ns - p->offset_ns,
				       to_ns == INT64_MAX ? to_ns : to_ns - p->offset_ns, &ev, &nev,
				       err, err_size);
		if (rc)
			break;
		if (GROW(all, nall + nev + 1, cap)) {
			free(ev);
			rc = -ENOMEM;
			err_set(err, err_size, "cannot load the timeline of job '%s': %s",
				m->db_path, strerror(ENOMEM));
			break;
		}
		for (j = 0; j < nev; j++) {
			struct model_event e = ev[j];

			e.time_ns += p->offset_ns;
			e.thread = map_of(p->thread_map, e.thread);
			e.stack = p->stack_map[e.stack];
			e.metric = p->metric_map[e.metric];
			all[nall++] = e;
		}
		free(ev);
	}
	if (rc) {
		free(all);
		return rc;
	}
	qsort(all, nall, sizeof(*all), event_cmp);
	*out = all;
	*n = nall;
	return 0;
}

/* A part's timeline row as the job's: its indexes mapped, its time from the job's start. */
struct job_scan {
	const struct model_part *p;
	model_timeline_fn fn;
	void *ctx;
};

static int job_scan_row(void *ctx, const struct model_sample *s, int64_t time_ns)
{
	const struct job_scan *js = ctx;
	struct model_sample x = *s;

	x.thread = map_of(js->p->thread_map, x.thread);
	x.stack = js->p->stack_map[x.stack];
	x.metric = js->p->metric_map[x.metric];
	x.context = map_of(js->p->context_map, x.context);
	return js->fn(js->ctx, &x, sat_add_i64(time_ns, js->p->offset_ns));
}

int model_job_scan_timeline(struct model *m, int64_t to_ns, model_timeline_fn fn, void *ctx,
			    char *err, size_t err_size)
{
	size_t i;
	int rc = 0;

	for (i = 0; i < m->nparts && !rc; i++) {
		struct job_scan js = { &m->parts[i], fn, ctx };

		rc = model_scan_timeline(&m->parts[i].m,
					 to_ns == INT64_MAX
						 ? to_ns
						 : sat_sub_i64(to_ns, m->parts[i].offset_ns),
					 job_scan_row, &js, err, err_size);
	}
	return rc;
}

void model_job_free(struct model *m)
{
	size_t i;

	for (i = 0; i < m->nparts; i++) {
		struct model_part *p = &m->parts[i];

		model_free(&p->m);
		FREE_ALL(p->stack_map, p->thread_map, p->metric_map, p->context_map);
	}
	free(m->parts);
	m->parts = NULL;
	m->nparts = 0;
}
