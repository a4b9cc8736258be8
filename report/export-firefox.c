/* SPDX-License-Identifier: MIT */
/* -format firefox: the Firefox Profiler's processed profile format, read from the result. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "common/log.h"
#include "common/metric.h"
#include "common/sat.h"
#include "report/export-firefox.h"

static int str_id(struct firefox *f, const char *s)
{
	return export_names_get(&f->strs, s ? s : "");
}

/* A string made here, kept for the ids (the model's arena outlives the export). */
static int str_copy(struct firefox *f, const char *s)
{
	const char *c = model_strdup(&f->r->m, s);

	return c ? str_id(f, c) : -ENOMEM;
}

static struct firefox_track *track_get(struct firefox *f, int thread)
{
	int *t = &f->track_of[thread + 1];

	if (*t < 0) {
		if (GROW(f->tracks, f->ntracks + 1, f->trackcap))
			return NULL;
		f->tracks[f->ntracks] = (struct firefox_track){ .thread = thread, .region = -1 };
		*t = (int)f->ntracks++;
	}
	return &f->tracks[*t];
}

static struct firefox_marker *marker_add(struct firefox_track *tr, enum marker_kind kind,
					 int64_t start, int64_t end, int name, int node,
					 int context)
{
	if (GROW(tr->mk, tr->nm + 1, tr->mcap))
		return NULL;
	tr->mk[tr->nm] = (struct firefox_marker){ start, end, kind, name, node, context, 0, 0 };
	return &tr->mk[tr->nm++];
}

/* The string ids of region i's levels: "solve", then "solve/large". */
static int region_levels(struct firefox *f, int i)
{
	const char *path = f->r->m.regions[i], *p;
	size_t len = strlen(path);
	char *buf;
	int n = 0, id = 0;

	if (f->levels[i])
		return f->nlevels[i];
	for (p = path; p; p = strchr(p + 1, '/'))
		n++;
	if (!(f->levels[i] = malloc((size_t)n * sizeof(int))) || !(buf = malloc(len + 1)))
		return -ENOMEM;
	for (n = 0, p = path; p && id >= 0; p = strchr(p + 1, '/')) {
		const char *next = strchr(p + 1, '/');
		size_t at = next ? (size_t)(next - path) : len;

		memcpy(buf, path, at);
		buf[at] = '\0';
		if ((id = str_copy(f, buf)) >= 0)
			f->levels[i][n++] = id;
	}
	free(buf);
	return id < 0 ? id : (f->nlevels[i] = n);
}

/*
 * An event in region (-1: none) over [start, end): the thread's open region levels that the
 * region does not share end where its last event ended; the region's other levels begin
 * here. A region's marker so spans its thread's events in it: to a sample's interval.
 */
static int region_step(struct firefox *f, struct firefox_track *tr, int region, int64_t start,
		       int64_t end)
{
	size_t keep = 0, k;
	int n = 0;

	if (region != tr->region) {
		if (region >= 0 && (n = region_levels(f, region)) < 0)
			return n;
		while (keep < tr->nopen && keep < (size_t)n &&
		       tr->mk[tr->open[keep]].name == f->levels[region][keep])
			keep++;
		for (k = keep; k < tr->nopen; k++)
			tr->mk[tr->open[k]].end = tr->last_end;
		tr->nopen = keep;
		if (start < tr->last_end && keep < (size_t)n)
			start = tr->last_end; /* the closed levels end before the new ones begin */
		if (array_reserve(&tr->open, &tr->opencap, (size_t)n, sizeof(*tr->open)))
			return -ENOMEM;
		for (k = keep; k < (size_t)n; k++) {
			if (!marker_add(tr, MK_REGION, start, start, f->levels[region][k], -1, -1))
				return -ENOMEM;
			tr->open[tr->nopen++] = (int)tr->nm - 1;
		}
		tr->region = region;
	}
	if (end > tr->last_end)
		tr->last_end = end;
	for (k = 0; k < tr->nopen; k++)
		if (tr->mk[tr->open[k]].end < tr->last_end)
			tr->mk[tr->open[k]].end = tr->last_end;
	return 0;
}

/* An MPI call's bytes (slot 0 sent, 1 received), the call's marker met or not yet. */
static void mpi_bytes(struct firefox_track *tr, int64_t time, int slot, int64_t value)
{
	if (tr->has_mpi && tr->mpi_time == time) {
		int64_t *v = slot ? &tr->mk[tr->mpi].received : &tr->mk[tr->mpi].sent;

		*v = sat_add_i64(*v, value);
		return;
	}
	if (tr->bytes_time != time)
		tr->bytes[0] = tr->bytes[1] = 0;
	tr->bytes_time = time;
	tr->bytes[slot] = sat_add_i64(tr->bytes[slot], value);
}

static int wait_name(struct firefox *f, int context)
{
	const struct model *m = &f->r->m;
	const char *kind = context >= 0 ? m->contexts[context].wait_kind : NULL;
	char buf[256];

	if (!kind)
		return str_id(f, "Wait");
	snprintf(buf, sizeof(buf), "Wait: %s", kind);
	return str_copy(f, buf);
}

/* One timeline row (the rows come in time order, per thread at least). */
static int on_event(void *ctx, const struct model_sample *s, int64_t time)
{
	struct firefox *f = ctx;
	const struct model *m = &f->r->m;
	struct model_event e = { time, s->value, s->thread, s->stack, s->metric };
	int node = export_kept_node(&f->kept, &e), name;
	int region = s->context >= 0 ? m->contexts[s->context].region_index : -1;
	struct firefox_track *tr;
	struct firefox_marker *mk;
	int64_t start = time, end;

	if (time < f->from || node < 0 || !s->value)
		return 0;
	if (s->metric != f->cpu && s->metric != f->wait && s->metric != f->mpi &&
	    s->metric != f->sent && s->metric != f->received)
		return 0;
	if (!(tr = track_get(f, s->thread)))
		return -ENOMEM;
	if (s->metric == f->sent || s->metric == f->received) {
		mpi_bytes(tr, time, s->metric == f->received, s->value);
		return 0;
	}
	/* Saturated: a forged result's times and values near 2^63 must not overflow. */
	if (s->metric == f->cpu)
		start = sat_sub_i64(time, s->value);
	end = s->metric == f->cpu ? time : sat_add_i64(time, s->value);
	if (region_step(f, tr, region, start, end))
		return -ENOMEM;
	if (s->metric == f->cpu) {
		if (GROW(tr->s, tr->ns + 1, tr->scap))
			return -ENOMEM;
		tr->s[tr->ns++] = (struct firefox_sample){ time, s->value, node };
		return 0;
	}
	if (s->metric == f->wait) {
		name = wait_name(f, s->context);
	} else {
		const char *fn = s->context >= 0 ? m->contexts[s->context].mpi_function : NULL;

		name = str_id(f, fn ? fn : "MPI");
	}
	if (name < 0 || !(mk = marker_add(tr, s->metric == f->wait ? MK_WAIT : MK_MPI, start, end,
					  name, node, s->context)))
		return -ENOMEM;
	if (s->metric == f->mpi) {
		tr->has_mpi = true;
		tr->mpi_time = time;
		tr->mpi = tr->nm - 1;
		if (tr->bytes_time == time) {
			mk->sent = tr->bytes[0];
			mk->received = tr->bytes[1];
			tr->bytes[0] = tr->bytes[1] = 0;
		}
	}
	return 0;
}

/* A thread's markers by start; of those that start together, the outer regions first. */
static int cmp_marker(const void *pa, const void *pb)
{
	const struct firefox_marker *a = pa, *b = pb;

	if (a->start != b->start)
		return a->start < b->start ? -1 : 1;
	if (a->kind != b->kind)
		return a->kind < b->kind ? -1 : 1;
	if (a->end != b->end)
		return a->end > b->end ? -1 : 1;
	return a->name < b->name ? -1 : a->name > b->name;
}

/* Threads by process and tid. */
static int cmp_track(const void *pa, const void *pb, void *arg)
{
	const struct model *m = arg;
	const struct firefox_track *a = pa, *b = pb;
	int pa_ = a->thread >= 0 ? m->threads[a->thread].process : -1;
	int pb_ = b->thread >= 0 ? m->threads[b->thread].process : -1;
	int64_t ta = a->thread >= 0 ? m->threads[a->thread].tid : 0;
	int64_t tb = b->thread >= 0 ? m->threads[b->thread].tid : 0;

	if (pa_ != pb_)
		return pa_ < pb_ ? -1 : 1;
	if (ta != tb)
		return ta < tb ? -1 : 1;
	return a->thread < b->thread ? -1 : a->thread > b->thread;
}

/* Every node a sample or a marker points at, and its callers, gets a stack, callers first. */
static int number_stacks(struct firefox *f)
{
	const struct cct *t = &f->r->tree;
	size_t i, k;
	int u;

	if (!(f->stack_of = malloc((t->n + 1) * sizeof(int))) ||
	    !(f->frame_of = malloc((t->n + 1) * sizeof(int))) ||
	    !(f->stack_node = malloc((t->n + 1) * sizeof(int))))
		return -ENOMEM;
	for (i = 0; i < t->n; i++)
		f->stack_of[i] = -1;
	for (i = 0; i < f->ntracks; i++) {
		const struct firefox_track *tr = &f->tracks[i];

		for (k = 0; k < tr->ns + tr->nm; k++)
			for (u = k < tr->ns ? tr->s[k].node : tr->mk[k - tr->ns].node;
			     u > 0 && f->stack_of[u] < 0; u = t->nodes[u].parent)
				f->stack_of[u] = 0;
	}
	for (i = 1; i < t->n; i++) {
		const struct cct_node *n = &t->nodes[i];
		int line = n->loc >= 0 ? t->locs[n->loc].line : f->r->m.functions[n->func].line;

		if (f->stack_of[i] < 0)
			continue;
		/* A group node has no function: the export takes no -group-by. */
		if (n->func < 0)
			return -EINVAL;
		f->stack_node[f->nstacks] = (int)i;
		f->stack_of[i] = (int)f->nstacks++;
		if ((f->frame_of[i] = export_ids_get(&f->frames, n->func, line > 0 ? line : 0, 0)) <
		    0)
			return -ENOMEM;
	}
	return 0;
}

/* The resource of function fn: its module (a library) or, for Python, its file. */
static int resource_of(struct firefox *f, const struct model_function *fn)
{
	if (fn->python)
		return fn->file >= 0 ? export_ids_get(&f->resources, 1, fn->file, 0) : -1;
	return fn->module >= 0 ? export_ids_get(&f->resources, 0, fn->module, 0) : -1;
}

/* Functions, resources, libraries and sources, in the order the frames first use them. */
static int number_tables(struct firefox *f)
{
	const struct model *m = &f->r->m;
	size_t i, n = f->frames.n + 1;

	if (!(f->func_name = malloc(n * sizeof(int))) || !(f->func_res = malloc(n * sizeof(int))) ||
	    !(f->func_src = malloc(n * sizeof(int))) || !(f->res_name = malloc(n * sizeof(int))) ||
	    !(f->src_name = malloc(n * sizeof(int))))
		return -ENOMEM;
	for (i = 0; i < f->frames.n; i++) {
		int func = f->frames.tuple[i][0], id, res, src = -1;
		const struct model_function *fn = &m->functions[func];
		size_t nres = f->resources.n, nsrc = f->sources.n;

		if ((id = export_ids_get(&f->funcs, func, 0, 0)) < 0 ||
		    (res = resource_of(f, fn)) < -1 ||
		    (!fn->python && fn->module >= 0 &&
		     export_ids_get(&f->libs, fn->module, 0, 0) < 0) ||
		    (fn->file >= 0 && (src = export_ids_get(&f->sources, fn->file, 0, 0)) < 0))
			return -ENOMEM;
		f->func_res[id] = res;
		f->func_src[id] = src;
		if ((f->func_name[id] = str_id(f, report_function_name(f->r, func))) < 0)
			return -ENOMEM;
		if (f->resources.n > nres &&
		    (f->res_name[res] = str_id(f, fn->python ? m->files[fn->file]
							     : m->modules[fn->module].name)) < 0)
			return -ENOMEM;
		if (f->sources.n > nsrc && (f->src_name[src] = str_id(f, m->files[fn->file])) < 0)
			return -ENOMEM;
	}
	return 0;
}

static int metric_kept(const struct export_job *x, int metric)
{
	size_t k;

	for (k = 0; metric >= 0 && k < x->nmetrics; k++)
		if (x->metrics[k] == metric)
			return metric;
	return -1;
}

static int cmp_pid(const void *pa, const void *pb, void *arg)
{
	const struct model *m = arg;
	int64_t a = m->processes[*(const int *)pa].pid, b = m->processes[*(const int *)pb].pid;

	return a < b ? -1 : a > b;
}

/*
 * Per process: whether another process written shares its pid (the profiler groups threads
 * by pid), and its first start and last end over its threads.
 */
static int process_info(struct firefox *f)
{
	const struct model *m = &f->r->m;
	int *by = malloc((f->ntracks + 1) * sizeof(int));
	size_t i, n = 0;

	f->pid_shared = calloc(m->nprocesses + 1, sizeof(bool));
	f->proc_start = malloc((m->nprocesses + 1) * sizeof(int64_t));
	f->proc_end = malloc((m->nprocesses + 1) * sizeof(int64_t));
	if (!by || !f->pid_shared || !f->proc_start || !f->proc_end) {
		free(by);
		return -ENOMEM;
	}
	for (i = 0; i < m->nprocesses; i++)
		f->proc_start[i] = f->proc_end[i] = -1;
	for (i = 0; i < m->nthreads; i++) {
		const struct model_thread *th = &m->threads[i];
		int64_t *start, *end;

		if (th->process < 0)
			continue;
		start = &f->proc_start[th->process];
		end = &f->proc_end[th->process];
		if (th->start_ns >= 0 && (*start < 0 || th->start_ns < *start))
			*start = th->start_ns;
		if (th->end_ns < 0)
			*end = INT64_MAX; /* one still running: no end */
		else if (*end != INT64_MAX && th->end_ns > *end)
			*end = th->end_ns;
	}
	/* The tracks are in process order: each process once. */
	for (i = 0; i < f->ntracks; i++) {
		int p = f->tracks[i].thread >= 0 ? m->threads[f->tracks[i].thread].process : -1;

		if (p >= 0 && (!n || by[n - 1] != p))
			by[n++] = p;
	}
	if (n)
		qsort_r(by, n, sizeof(int), cmp_pid, (void *)m);
	for (i = 1; i < n; i++)
		if (m->processes[by[i]].pid == m->processes[by[i - 1]].pid)
			f->pid_shared[by[i]] = f->pid_shared[by[i - 1]] = true;
	free(by);
	return 0;
}

static void release(struct firefox *f)
{
	size_t i;

	for (i = 0; i < f->ntracks; i++) {
		free(f->tracks[i].s);
		free(f->tracks[i].mk);
		free(f->tracks[i].open);
	}
	for (i = 0; f->levels && i < f->r->m.nregions; i++)
		free(f->levels[i]);
	FREE_ALL(f->tracks, f->track_of, f->levels, f->nlevels, f->stack_of, f->frame_of,
		 f->stack_node, f->func_name, f->func_res, f->func_src, f->res_name, f->src_name,
		 f->pid_shared, f->proc_start, f->proc_end);
	export_kept_release(&f->kept);
	export_names_release(&f->strs);
	EXPORT_IDS_RELEASE(&f->frames, &f->funcs, &f->resources, &f->sources, &f->libs);
}

static int collect(struct firefox *f)
{
	struct model *m = &f->r->m;
	int64_t to;
	char err[1024];
	size_t i;
	int rc;

	export_window(f->r, &f->from, &to);
	f->track_of = malloc((m->nthreads + 1) * sizeof(int));
	f->levels = calloc(m->nregions + 1, sizeof(int *));
	f->nlevels = calloc(m->nregions + 1, sizeof(int));
	if (!f->track_of || !f->levels || !f->nlevels)
		return -ENOMEM;
	for (i = 0; i <= m->nthreads; i++)
		f->track_of[i] = -1;
	if ((rc = export_kept_init(&f->kept, f->r)) == -EOVERFLOW)
		log_error(
			"cannot export result '%s' for the Firefox Profiler: more than %d threads "
			"or 255 metrics",
			f->r->dir, (1 << 24) - 2);
	if (rc)
		return rc;
	/* A failed read is told here; running out of memory, by report_export(). */
	if ((rc = model_scan_timeline(m, to, on_event, f, err, sizeof(err)))) {
		if (rc != -ENOMEM)
			log_error("%s", err);
		return rc;
	}
	for (i = 0; i < f->ntracks; i++) {
		struct firefox_track *tr = &f->tracks[i];

		if (tr->nm)
			qsort(tr->mk, tr->nm, sizeof(*tr->mk), cmp_marker);
	}
	if (f->ntracks)
		qsort_r(f->tracks, f->ntracks, sizeof(*f->tracks), cmp_track, m);
	if ((rc = number_stacks(f)) || (rc = number_tables(f)))
		return rc;
	return process_info(f);
}

int export_firefox(struct export_job *x)
{
	struct firefox f = { .x = x, .r = &x->r[0], .b = x->b };
	const struct model *m = &f.r->m;
	int rc;

	f.cpu = metric_kept(x, model_metric(m, METRIC_CPU_TIME));
	f.wait = metric_kept(x, model_metric(m, METRIC_WAIT_TIME));
	f.mpi = metric_kept(x, model_metric(m, METRIC_MPI_TIME));
	f.sent = f.mpi >= 0 ? metric_kept(x, model_metric(m, METRIC_MPI_SENT)) : -1;
	f.received = f.mpi >= 0 ? metric_kept(x, model_metric(m, METRIC_MPI_RECV)) : -1;
	/* Nothing to write: a usage error when -metric chose so, else the result has none. */
	if (f.cpu < 0 && f.wait < 0 && f.mpi < 0) {
		if (f.r->o->nmetrics)
			return report_usage_error(
				"-format firefox writes CPU Time as samples and Wait "
				"Time and MPI Time as markers: -metric named none "
				"of them");
		log_error("cannot export result '%s' for the Firefox Profiler: it holds no CPU "
			  "Time, Wait Time or MPI Time (-format speedscope or pprof export any "
			  "metric)",
			  f.r->dir);
		return -EINVAL;
	}
	rc = collect(&f);
	if (!rc)
		firefox_write_profile(&f);
	release(&f);
	return rc;
}
