/* SPDX-License-Identifier: MIT */
/* -format chrome: the timeline as Chrome trace events, for Perfetto and chrome://tracing. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/sat.h"
#include "common/grow.h"
#include "common/log.h"
#include "common/sat.h"
#include "report/export-private.h"

/*
 * Each thread is a track in its process's group. An event of a time metric (a CPU sample:
 * the interval of CPU time that ended at the sample) is a slice of its duration per frame of
 * its stack, outermost first: consecutive samples that share frames share their slices, so
 * the track reads as a flame chart of the run. A thread's slices never overlap: a sample
 * that would begin before the previous one ended begins at that end, so the slices of the
 * outermost frames add up to the thread's sampled time. Events of other time metrics (Wait
 * Time) get a track of their own beside the thread's; other units are instant events with
 * their value.
 */

/* Synthetic thread ids of a metric's own tracks: above any kernel tid (pid_max <= 2^22). */
#define TRACK_STRIDE 10000000LL

struct open_frame {
	int node;
	int64_t start; /* ns */
};

/* A track: a thread and a metric. */
struct track {
	int thread, slot; /* slot: index into job.metrics */
	int64_t end;      /* where its last slice ended, ns; -1: none yet */
	struct open_frame *open;
	size_t nopen, cap;
};

struct chrome {
	struct export_job *x;
	struct report *r;
	struct outbuf *b;
	struct export_kept kept;     /* (stack, thread, metric) -> node, for the kept samples */
	struct export_ids tracks_id; /* (thread, slot, 0) -> track */
	struct track *tracks;
	size_t ntracks, trackcap;
	int *path;
	bool first;
};

static int64_t pid_of(const struct report *r, int thread)
{
	int p = thread >= 0 ? r->m.threads[thread].process : -1;

	return p >= 0 ? r->m.processes[p].pid : 0;
}

static int64_t tid_of(const struct chrome *c, const struct track *tr)
{
	int64_t tid = tr->thread >= 0 ? c->r->m.threads[tr->thread].tid : 0;

	return tid + (int64_t)tr->slot * TRACK_STRIDE;
}

static void put_event_head(struct chrome *c)
{
	outbuf_puts(c->b, c->first ? "\n{" : ",\n{");
	c->first = false;
}

/* ts and dur are microseconds: ns with three decimals, nothing rounded away. */
static void put_us(struct outbuf *b, int64_t ns)
{
	uint64_t a = ns < 0 ? -(uint64_t)ns : (uint64_t)ns;

	outbuf_printf(b, "%s%llu.%03llu", ns < 0 ? "-" : "", (unsigned long long)(a / 1000),
		      (unsigned long long)(a % 1000));
}

/*
 * An event up to its time: its phase (head: its fields up to the name's value), node's name,
 * the category (the metric of slot), the pid and tid of track tr, ts.
 */
static void put_event_start(struct chrome *c, const char *head, int node, int slot,
			    const struct track *tr, int64_t ts)
{
	char buf[1024];
	const char *name = export_node_name(c->r, &c->r->tree, node, buf, sizeof(buf));
	const char *cat = c->r->m.metrics[c->x->metrics[slot]].name;

	put_event_head(c);
	outbuf_puts(c->b, head);
	outbuf_json(c->b, name, strlen(name), 0);
	outbuf_puts(c->b, ", \"cat\": ");
	outbuf_json(c->b, cat, strlen(cat), 0);
	outbuf_printf(c->b, ", \"pid\": %lld, \"tid\": %lld, \"ts\": ",
		      (long long)pid_of(c->r, tr->thread), (long long)tid_of(c, tr));
	put_us(c->b, ts);
}

static void put_slice(struct chrome *c, const struct track *tr, int node, int64_t start,
		      int64_t end)
{
	put_event_start(c, "\"ph\": \"X\", \"name\": ", node, tr->slot, tr, start);
	outbuf_puts(c->b, ", \"dur\": ");
	put_us(c->b, sat_sub_i64(end, start));
	outbuf_putc(c->b, '}');
	outbuf_spill(c->b);
}

/* Close the open frames of tr from depth keep on, at time at. */
static void close_frames(struct chrome *c, struct track *tr, size_t keep, int64_t at)
{
	while (tr->nopen > keep) {
		struct open_frame *f = &tr->open[--tr->nopen];

		put_slice(c, tr, f->node, f->start, at);
	}
}

static struct track *track_of(struct chrome *c, int thread, int slot)
{
	int id = export_ids_get(&c->tracks_id, thread, slot, 0);

	if (id < 0)
		return NULL;
	if ((size_t)id == c->ntracks) {
		if (GROW(c->tracks, c->ntracks + 1, c->trackcap))
			return NULL;
		c->tracks[c->ntracks++] = (struct track){ thread, slot, -1, NULL, 0, 0 };
	}
	return &c->tracks[id];
}

/*
 * A CPU sample's time ends the CPU time it stands for; a timed event of another metric (a
 * wait, an MPI call) is stamped when it began (docs/schema.md, timeline).
 */
static int put_sample(struct chrome *c, struct track *tr, int node, int64_t time, int64_t value,
		      bool begins)
{
	const struct cct *t = &c->r->tree;
	/* Saturated: a forged result's times and values near 2^63 must not overflow. */
	int64_t start = begins ? time : sat_sub_i64(time, value);
	int depth = export_path(t, node, c->path, (int)t->n);
	size_t keep = 0;
	int d;

	if (tr->end >= 0 && start <= tr->end) {
		start = tr->end; /* no overlap with the previous sample */
		while (keep < tr->nopen && keep < (size_t)depth &&
		       tr->open[keep].node == c->path[keep])
			keep++;
	}
	close_frames(c, tr, keep, tr->end >= 0 ? (start < tr->end ? start : tr->end) : start);
	if (array_reserve(&tr->open, &tr->cap, (size_t)depth + 1, sizeof(*tr->open)))
		return -ENOMEM;
	for (d = (int)keep; d < depth; d++)
		tr->open[tr->nopen++] = (struct open_frame){ c->path[d], start };
	tr->end = sat_add_i64(start, value);
	return 0;
}

static void put_instant(struct chrome *c, const struct model_event *e, int slot, int node)
{
	struct track tr = { .thread = e->thread, .slot = 0 };

	put_event_start(c, "\"ph\": \"i\", \"s\": \"t\", \"name\": ", node, slot, &tr, e->time_ns);
	outbuf_printf(c->b, ", \"args\": {\"value\": %lld}}", (long long)e->value);
	outbuf_spill(c->b);
}

static int put_events(struct chrome *c, const struct model_event *ev, size_t n)
{
	struct report *r = c->r;
	size_t i, k;
	int rc = 0;

	for (i = 0; i < n && !rc; i++) {
		const struct model_event *e = &ev[i];
		int node = export_kept_node(&c->kept, e);
		struct track *tr;

		if (node < 0 || !e->value)
			continue; /* filtered out */
		for (k = 0; k < c->x->nmetrics && c->x->metrics[k] != e->metric; k++)
			;
		if (k == c->x->nmetrics || r->m.metrics[e->metric].aggregation != MODEL_AGG_SUM)
			continue;
		if (r->m.metrics[e->metric].unit != MODEL_UNIT_NS) {
			put_instant(c, e, (int)k, node);
			continue;
		}
		if (!(tr = track_of(c, e->thread, (int)k)))
			return -ENOMEM;
		rc = put_sample(c, tr, node, e->time_ns, e->value,
				strcmp(r->m.metrics[e->metric].kind, "cpu") != 0);
	}
	for (i = 0; i < c->ntracks; i++)
		close_frames(c, &c->tracks[i], 0, c->tracks[i].end);
	return rc;
}

static void put_meta(struct chrome *c, const char *what, int64_t pid, int64_t tid, const char *name,
		     int64_t sort)
{
	put_event_head(c);
	outbuf_printf(c->b,
		      "\"ph\": \"M\", \"name\": \"%s_name\", \"pid\": %lld, \"tid\": %lld, "
		      "\"args\": {\"name\": ",
		      what, (long long)pid, (long long)tid);
	outbuf_json(c->b, name, strlen(name), 0);
	outbuf_puts(c->b, "}}");
	put_event_head(c);
	outbuf_printf(c->b,
		      "\"ph\": \"M\", \"name\": \"%s_sort_index\", \"pid\": %lld, "
		      "\"tid\": %lld, \"args\": {\"sort_index\": %lld}}",
		      what, (long long)pid, (long long)tid, (long long)sort);
}

/* Process and thread names: "app (PID 1230), rank 3, on nid00058", "worker-1 (TID 1234)". */
static void put_names(struct chrome *c)
{
	const struct model *m = &c->r->m;
	size_t i;
	char buf[1024];

	for (i = 0; i < m->nprocesses; i++) {
		const struct model_process *p = &m->processes[i];

		put_meta(c, "process", p->pid, 0, export_process_label(p, buf, sizeof(buf)),
			 p->rank >= 0 ? p->rank : (int64_t)i);
	}
	for (i = 0; i < c->ntracks; i++) {
		const struct track *tr = &c->tracks[i];
		const struct model_thread *th = tr->thread >= 0 ? &m->threads[tr->thread] : NULL;
		int len = (int)strlen(report_thread_label(th, buf, sizeof(buf)));

		if (tr->slot && len > 0 && (size_t)len < sizeof(buf))
			snprintf(buf + len, sizeof(buf) - (size_t)len, ": %s",
				 m->metrics[c->x->metrics[tr->slot]].name);
		put_meta(c, "thread", pid_of(c->r, tr->thread), tid_of(c, tr), buf,
			 (th ? th->tid : 0) * (int64_t)c->x->nmetrics + tr->slot);
	}
}

int export_chrome(struct export_job *x)
{
	struct chrome c = { .x = x, .r = &x->r[0], .b = x->b, .first = true };
	const char *cmd = model_meta_get(&c.r->m, "command_line");
	struct model_event *ev = NULL;
	size_t nev = 0;
	int64_t from, to;
	char err[1024];
	int rc;

	export_window(c.r, &from, &to);
	c.path = malloc((c.r->tree.n + 1) * sizeof(int));
	rc = c.path ? export_kept_init(&c.kept, c.r) : -ENOMEM;
	if (rc == -EOVERFLOW)
		log_error(
			"cannot export result '%s' as a Chrome trace: more than %d threads or 255 "
			"metrics",
			c.r->dir, (1 << 24) - 2);
	/* A failed read is told here; running out of memory, by report_export(). */
	if (!rc && (rc = model_load_events(&c.r->m, from, to, &ev, &nev, err, sizeof(err))) &&
	    rc != -ENOMEM)
		log_error("%s", err);
	if (!rc) {
		outbuf_puts(x->b, "{\"displayTimeUnit\": \"ms\", \"otherData\": {\"command\": ");
		cmd = cmd ? cmd : "";
		outbuf_json(x->b, cmd, strlen(cmd), 0);
		outbuf_puts(x->b, ", \"exporter\": \"preport (pcollect " PCOLLECT_VERSION ")\"},\n"
				  "\"traceEvents\": [");
		rc = put_events(&c, ev, nev);
		put_names(&c);
		outbuf_puts(x->b, "]}\n");
	}
	for (nev = 0; nev < c.ntracks; nev++)
		free(c.tracks[nev].open);
	free(c.tracks);
	free(c.path);
	free(ev);
	export_kept_release(&c.kept);
	export_ids_release(&c.tracks_id);
	return rc;
}
