/* SPDX-License-Identifier: MIT */
/* -format speedscope: speedscope's file format, a sampled profile per thread (or group). */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "common/sat.h"
#include "report/export-private.h"

/*
 * A profile per metric and thread, or per group of -group-by's first level ("rank 3"): its
 * samples are the distinct stacks, outermost frame first, weighted by their value. Frames
 * are shared: a function, or a group of a deeper level.
 */
struct entry {
	int prof; /* profile id */
	int node;
	int64_t value;
};

struct speedscope {
	struct export_job *x;
	struct report *r;
	struct export_ids profs;  /* (metric slot, thread or group node, 0) */
	struct export_ids frames; /* (0, function, 0) or (1, group, 0) */
	int *frame;               /* per node: its frame id */
	struct entry *e;
	size_t n, cap;
	int64_t *prof_total; /* per profile */
	int *prof_rank;      /* per profile: its place in the file */
};

/* The outermost group node above node (the first -group-by level), or 0. */
static int first_group(const struct cct *t, int node)
{
	while (node > 0 && t->nodes[node].depth > 1)
		node = t->nodes[node].parent;
	return node > 0 && cct_group_of(&t->nodes[node]) >= 0 ? node : 0;
}

static int collect(struct speedscope *s)
{
	struct report *r = s->r;
	const struct cct *t = &r->tree;
	size_t i, k;

	for (i = 0; i < r->nrecs; i++) {
		const struct record *rec = &r->recs[i];
		const struct model_sample *smp = report_sample(r, rec);
		int item = r->nlevels ? first_group(t, rec->node) : smp->thread, prof;

		for (k = 0; k < s->x->nmetrics && s->x->metrics[k] != smp->metric; k++)
			;
		if (k == s->x->nmetrics || !smp->value)
			continue;
		if ((prof = export_ids_get(&s->profs, (int)k, item, 0)) < 0 ||
		    GROW(s->e, s->n + 1, s->cap))
			return -ENOMEM;
		s->e[s->n++] = (struct entry){ prof, rec->node, smp->value };
	}
	return 0;
}

static int cmp_entry(const void *pa, const void *pb, void *arg)
{
	const struct speedscope *s = arg;
	const struct entry *a = pa, *b = pb;

	if (a->prof != b->prof)
		return s->prof_rank[a->prof] < s->prof_rank[b->prof] ? -1 : 1;
	return a->node < b->node ? -1 : a->node > b->node;
}

static int cmp_prof(const void *pa, const void *pb, void *arg)
{
	const struct speedscope *s = arg;
	int a = *(const int *)pa, b = *(const int *)pb;
	int ma = s->profs.tuple[a][0], mb = s->profs.tuple[b][0];

	if (ma != mb)
		return ma < mb ? -1 : 1;
	if (s->prof_total[a] != s->prof_total[b])
		return s->prof_total[a] > s->prof_total[b] ? -1 : 1;
	return a < b ? -1 : a > b;
}

/* Profiles by metric, heaviest first; their entries by node, one per node. */
static int order(struct speedscope *s)
{
	size_t np = s->profs.n, i, j;
	int *by = malloc((np + 1) * sizeof(int));

	s->prof_total = calloc(np + 1, sizeof(int64_t));
	s->prof_rank = malloc((np + 1) * sizeof(int));
	if (!by || !s->prof_total || !s->prof_rank) {
		free(by);
		return -ENOMEM;
	}
	for (i = 0; i < s->n; i++)
		/* Saturated: a forged result's values near 2^63 must not overflow. */
		s->prof_total[s->e[i].prof] =
			sat_add_i64(s->prof_total[s->e[i].prof], s->e[i].value);
	for (i = 0; i < np; i++)
		by[i] = (int)i;
	/* qsort_r() takes no NULL array, even empty: a result without samples has none. */
	if (np)
		qsort_r(by, np, sizeof(int), cmp_prof, s);
	for (i = 0; i < np; i++)
		s->prof_rank[by[i]] = (int)i;
	free(by);
	if (s->n)
		qsort_r(s->e, s->n, sizeof(*s->e), cmp_entry, s);
	for (i = j = 0; i < s->n; i++) {
		if (j && s->e[j - 1].prof == s->e[i].prof && s->e[j - 1].node == s->e[i].node)
			s->e[j - 1].value = sat_add_i64(s->e[j - 1].value, s->e[i].value);
		else
			s->e[j++] = s->e[i];
	}
	s->n = j;
	return 0;
}

static int frame_ids(struct speedscope *s)
{
	const struct cct *t = &s->r->tree;
	size_t i;

	s->frame = malloc((t->n + 1) * sizeof(int));
	if (!s->frame)
		return -ENOMEM;
	s->frame[0] = -1;
	for (i = 1; i < t->n; i++) {
		int g = cct_group_of(&t->nodes[i]);

		s->frame[i] = g >= 0 ? export_ids_get(&s->frames, 1, g, 0)
				     : export_ids_get(&s->frames, 0, t->nodes[i].func, 0);
		if (s->frame[i] < 0)
			return -ENOMEM;
	}
	return 0;
}

static void put_frames(struct speedscope *s, struct outbuf *b)
{
	struct report *r = s->r;
	const struct cct *t = &r->tree;
	size_t i, n;
	char buf[1024];
	int *node_of = malloc((s->frames.n + 1) * sizeof(int));

	if (!node_of) {
		b->failed = true;
		return;
	}
	for (i = t->n; i-- > 1;)
		node_of[s->frame[i]] = (int)i;
	outbuf_puts(b, "\"shared\": {\"frames\": [");
	for (i = 0; i < s->frames.n; i++) {
		int node = node_of[i], func = t->nodes[node].func;
		const char *name = export_node_name(r, t, node, buf, sizeof(buf));

		outbuf_puts(b, i ? ",\n{\"name\": " : "\n{\"name\": ");
		outbuf_json(b, name, strlen(name), 0);
		if (func >= 0 && r->m.functions[func].file >= 0) {
			const char *file = r->m.files[r->m.functions[func].file];

			outbuf_puts(b, ", \"file\": ");
			outbuf_json(b, file, strlen(file), 0);
			if ((n = (size_t)r->m.functions[func].line) > 0)
				outbuf_printf(b, ", \"line\": %zu", n);
		} else if (func >= 0) {
			const char *mod = report_module_name(r, func);

			outbuf_puts(b, ", \"file\": ");
			outbuf_json(b, mod, strlen(mod), 0);
		}
		outbuf_putc(b, '}');
		outbuf_spill(b);
	}
	outbuf_puts(b, "]},\n");
	free(node_of);
}

static const char *unit_name(const struct model_metric *mt)
{
	return mt->unit == MODEL_UNIT_NS      ? "nanoseconds"
	       : mt->unit == MODEL_UNIT_BYTES ? "bytes"
					      : "none";
}

/* "worker-1 (TID 1234)", "rank 3", with the metric's name when the file holds several. */
static void put_profile_name(struct speedscope *s, struct outbuf *b, int prof)
{
	struct report *r = s->r;
	int k = s->profs.tuple[prof][0], item = s->profs.tuple[prof][1];
	char buf[1024], label[512], both[1600];
	const char *name = buf;

	if (r->nlevels)
		name = item > 0 ? report_group_label(r, &r->tree, item, label, sizeof(label))
				: "[other]";
	else if (item >= 0)
		report_thread_label(&r->m.threads[item], buf, sizeof(buf));
	else
		name = "[unknown thread]";
	if (s->x->nmetrics > 1) {
		snprintf(both, sizeof(both), "%s: %s", name, r->m.metrics[s->x->metrics[k]].name);
		name = both;
	}
	outbuf_json(b, name, strlen(name), 0);
}

static int put_profiles(struct speedscope *s, struct outbuf *b)
{
	const struct cct *t = &s->r->tree;
	int *path = malloc((t->n + 1) * sizeof(int));
	size_t i, j, start;
	int d, depth, skip = s->r->nlevels ? 1 : 0;

	if (!path)
		return -ENOMEM;
	outbuf_puts(b, "\"profiles\": [");
	for (start = 0; start < s->n; start = i) {
		int prof = s->e[start].prof;
		const struct model_metric *mt =
			&s->r->m.metrics[s->x->metrics[s->profs.tuple[prof][0]]];

		for (i = start; i < s->n && s->e[i].prof == prof; i++)
			;
		outbuf_puts(b, start ? ",\n{\"type\": \"sampled\", \"name\": "
				     : "\n{\"type\": \"sampled\", \"name\": ");
		put_profile_name(s, b, prof);
		outbuf_printf(b,
			      ", \"unit\": \"%s\", \"startValue\": 0, \"endValue\": %lld,\n"
			      "\"samples\": [",
			      unit_name(mt), (long long)s->prof_total[prof]);
		for (j = start; j < i; j++) {
			depth = export_path(t, s->e[j].node, path, (int)t->n);
			outbuf_puts(b, j > start ? ",\n[" : "\n[");
			for (d = skip; d < depth; d++) {
				if (d > skip)
					outbuf_putc(b, ',');
				outbuf_int(b, s->frame[path[d]]);
			}
			outbuf_putc(b, ']');
			outbuf_spill(b);
		}
		outbuf_puts(b, "],\n\"weights\": [");
		for (j = start; j < i; j++) {
			if (j > start)
				outbuf_putc(b, ',');
			outbuf_int(b, s->e[j].value);
			outbuf_spill(b);
		}
		outbuf_puts(b, "]}");
	}
	outbuf_puts(b, "]");
	free(path);
	return 0;
}

int export_speedscope(struct export_job *x)
{
	struct speedscope s = { .x = x, .r = &x->r[0] };
	const char *cmd = model_meta_get(&s.r->m, "command_line");
	int rc;

	rc = collect(&s);
	if (!rc)
		rc = order(&s);
	if (!rc)
		rc = frame_ids(&s);
	if (!rc) {
		outbuf_puts(x->b,
			    "{\"$schema\": \"https://www.speedscope.app/file-format-schema.json\","
			    "\n\"exporter\": \"preport (pcollect " PCOLLECT_VERSION ")\",\n"
			    "\"name\": ");
		cmd = cmd ? cmd : s.r->dir;
		outbuf_json(x->b, cmd, strlen(cmd), 0);
		outbuf_puts(x->b, ",\n\"activeProfileIndex\": 0,\n");
		put_frames(&s, x->b);
		rc = put_profiles(&s, x->b);
		outbuf_puts(x->b, "}\n");
	}
	EXPORT_IDS_RELEASE(&s.profs, &s.frames);
	FREE_ALL(s.frame, s.e, s.prof_total, s.prof_rank);
	return rc;
}
