/* SPDX-License-Identifier: MIT */
/* The table of exports (-format pstats, callgrind, ..., html): options, metrics, output. */
#define LOG_DOMAIN "export"
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/grow.h"
#include "common/log.h"
#include "common/options.h"
#include "report/export-private.h"

/*
 * X(name, run, flags): adding an export is one line here (and its docs). Each reads the
 * calling-context tree of the samples the filters keep, with -group-by's levels as its
 * outermost frames.
 */
#define EXPORTS(X)                                                                                 \
	X("pstats", export_pstats, EXPORT_ONE_METRIC | EXPORT_BINARY)                              \
	X("callgrind", export_callgrind, EXPORT_LINES)                                             \
	X("folded", export_folded, EXPORT_ONE_METRIC)                                              \
	X("speedscope", export_speedscope, 0)                                                      \
	X("chrome", export_chrome, EXPORT_ALL_METRICS | EXPORT_NO_GROUPS)                          \
	X("pprof", export_pprof, EXPORT_LINES | EXPORT_ALL_METRICS | EXPORT_BINARY)                \
	X("firefox", export_firefox, EXPORT_LINES | EXPORT_ALL_METRICS | EXPORT_NO_GROUPS)         \
	X("html", export_html, EXPORT_LINES | EXPORT_ALL_METRICS | EXPORT_DIFF)

struct export_format {
	const char *name;
	int (*run)(struct export_job *x);
	unsigned flags;
	struct report_view view; /* how report_open() reads the result for it */
};

#define EXPORT_ENTRY(name, run, flags)                                                             \
	{ name,                                                                                    \
	  run,                                                                                     \
	  flags,                                                                                   \
	  { name " export", NULL, NULL, NULL,                                                      \
	    VIEW_TREE | VIEW_NO_SORT | ((flags)&EXPORT_LINES ? VIEW_LINES : 0) } },
#define EXPORT_NAME(name, run, flags) name,

static const struct export_format formats[] = { EXPORTS(EXPORT_ENTRY) };

const char *const report_formats[] = { "text", "csv", "json", EXPORTS(EXPORT_NAME) NULL };

const char *export_node_name(const struct report *r, const struct cct *t, int node, char *buf,
			     size_t size)
{
	char label[512];
	const char *kind, *name;
	int func = t->nodes[node].func;

	if (func >= 0)
		return report_function_name(r, func);
	if (!node)
		return "[total]";
	kind = report_group_kind(t, node);
	name = report_group_label(r, t, node, label, sizeof(label));
	/* "[thread worker-1 (TID 1234)]"; a label that names its kind already, "[rank 3]". */
	if (!strncmp(name, kind, strlen(kind)) && name[strlen(kind)] == ' ')
		snprintf(buf, size, "[%s]", name);
	else
		snprintf(buf, size, "[%s %s]", kind, name);
	return buf;
}

const char *export_process_label(const struct model_process *p, char *buf, size_t size)
{
	int len = snprintf(buf, size, "%s (PID %lld)", report_basename(p->exe), (long long)p->pid);

	if (p->rank >= 0 && len > 0 && (size_t)len < size)
		len += snprintf(buf + len, size - (size_t)len, ", rank %lld", (long long)p->rank);
	if (p->host && *p->host && len > 0 && (size_t)len < size)
		snprintf(buf + len, size - (size_t)len, ", on %s", p->host);
	return buf;
}

const char *export_unit(const struct model_metric *mt)
{
	switch (mt->unit) {
	case MODEL_UNIT_NS:
		return "ns";
	case MODEL_UNIT_BYTES:
		return "bytes";
	case MODEL_UNIT_COUNT:
		break;
	}
	return "";
}

int export_leaves(const struct cct *t, int **out, size_t *n)
{
	size_t i;

	*n = 0;
	*out = malloc((t->n + 1) * sizeof(**out));
	if (!*out)
		return -ENOMEM;
	for (i = 1; i < t->n; i++)
		if (cct_has_self(t, (int)i))
			(*out)[(*n)++] = (int)i;
	return 0;
}

void export_ids_init(struct export_ids *ids)
{
	memset(ids, 0, sizeof(*ids));
}

void export_ids_release(struct export_ids *ids)
{
	hash_index_release(&ids->index);
	free(ids->tuple);
	memset(ids, 0, sizeof(*ids));
}

void export_ids_release_all(struct export_ids *const *ids, size_t n)
{
	while (n--)
		export_ids_release(ids[n]);
}

/* A tuple looked up: the ids it is compared with, and the tuple. */
struct tuple_key {
	const struct export_ids *ids;
	int t[3];
};

static bool tuple_eq(const void *ctx, uint32_t i)
{
	const struct tuple_key *k = ctx;

	return !memcmp(k->ids->tuple[i], k->t, sizeof(k->t));
}

static int tuple_make(const void *ctx, void *elem)
{
	memcpy(elem, ((const struct tuple_key *)ctx)->t, sizeof(int[3]));
	return 0;
}

int export_ids_get(struct export_ids *ids, int a, int b, int c)
{
	struct tuple_key k = { ids, { a, b, c } };
	uint64_t h = hash_combine(hash_mix((uint64_t)(uint32_t)a << 32 | (uint32_t)b),
				  (uint64_t)(uint32_t)c);
	int64_t id = HASH_INDEX_GET(&ids->index, h, tuple_eq, tuple_make, &k, ids->tuple, ids->n,
				    ids->cap);

	return id < 0 ? -ENOMEM : (int)id;
}

void export_names_init(struct export_names *ns)
{
	memset(ns, 0, sizeof(*ns));
}

void export_names_release(struct export_names *ns)
{
	hash_index_release(&ns->index);
	free(ns->s);
	memset(ns, 0, sizeof(*ns));
}

void export_names_release_all(struct export_names *const *ns, size_t n)
{
	while (n--)
		export_names_release(ns[n]);
}

struct name_key {
	const struct export_names *ns;
	const char *s;
};

static bool name_eq(const void *ctx, uint32_t i)
{
	const struct name_key *k = ctx;

	return !strcmp(k->ns->s[i], k->s);
}

static int name_make(const void *ctx, void *elem)
{
	*(const char **)elem = ((const struct name_key *)ctx)->s;
	return 0;
}

int export_names_get(struct export_names *ns, const char *s)
{
	struct name_key k = { ns, s };
	int64_t id = HASH_INDEX_GET(&ns->index, hash_bytes(s, strlen(s)), name_eq, name_make, &k,
				    ns->s, ns->n, ns->cap);

	return id < 0 ? -ENOMEM : (int)id;
}

static uint64_t kept_key(int stack, int thread, int metric)
{
	return (uint64_t)(uint32_t)stack << 32 | (uint64_t)(uint32_t)(thread + 1) << 8 |
	       (uint32_t)metric;
}

int export_kept_init(struct export_kept *kept, const struct report *r)
{
	size_t i, more;
	int pass;

	memset(kept, 0, sizeof(*kept));
	/* The key holds a thread in 24 bits and a metric in 8. */
	if (r->m.nthreads >= (1u << 24) - 1 || r->m.nmetrics > 255)
		return -EOVERFLOW;
	if (!(kept->first = big_malloc((r->m.nstacks + 1) * sizeof(*kept->first))))
		return -ENOMEM;
	for (i = 0; i < r->m.nstacks; i++)
		kept->first[i].node = -1;
	/*
	 * Samples of one key (contexts apart) can be at two nodes: the last one counts. The
	 * first pass fills each stack's first key and counts the others, the second indexes them
	 * in an index made big enough at once.
	 */
	for (pass = 0; pass < 2; pass++) {
		for (i = r->nrecs, more = 0; i-- > 0;) {
			const struct model_sample *s = report_sample(r, &r->recs[i]);
			struct export_kept_first *f = &kept->first[s->stack];
			uint64_t key = kept_key(s->stack, s->thread, s->metric);

			if (f->node < 0)
				*f = (struct export_kept_first){ s->thread, s->metric,
								 r->recs[i].node };
			else if (f->thread == s->thread && f->metric == s->metric)
				continue;
			else if (!pass)
				more++;
			else if (key_index_get(&kept->more, key) < 0 &&
				 key_index_add(&kept->more, key, r->recs[i].node))
				return -ENOMEM;
		}
		if (!pass && more && key_index_reserve(&kept->more, more))
			return -ENOMEM;
		if (!more)
			break;
	}
	return 0;
}

int export_kept_node(const struct export_kept *kept, const struct model_event *e)
{
	const struct export_kept_first *f = &kept->first[e->stack];

	if (f->thread == e->thread && f->metric == e->metric)
		return f->node;
	return kept->more.n ? key_index_get(&kept->more, kept_key(e->stack, e->thread, e->metric))
			    : -1;
}

void export_kept_release(struct export_kept *kept)
{
	free(kept->first);
	hash_index_release(&kept->more);
	memset(kept, 0, sizeof(*kept));
}

void export_window(const struct report *r, int64_t *from, int64_t *to)
{
	const char *s = r->o->time_filter, *colon = s ? strchr(s, ':') : NULL;

	/* report_open() checked the value. */
	*from = 0;
	*to = INT64_MAX;
	if (!colon)
		return;
	if (colon > s)
		*from = llround(strtod(s, NULL) * 1e9);
	if (colon[1])
		*to = llround(strtod(colon + 1, NULL) * 1e9);
}

int export_path(const struct cct *t, int node, int *path, int max)
{
	int d = t->nodes[node].depth, u;

	if (d > max)
		return -1;
	for (u = node; u > 0; u = t->nodes[u].parent)
		path[t->nodes[u].depth - 1] = u;
	return d;
}

static const struct export_format *format_find(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(formats) / sizeof(formats[0]); i++)
		if (!strcmp(formats[i].name, name))
			return &formats[i];
	return NULL;
}

/* An export writes the whole profile: the options that pick rows or a view are refused. */
static int check_options(const struct report_opts *o, const struct export_format *e)
{
	const char *what = o->view            ? "-view"
			   : o->function      ? "-function"
			   : o->source_object ? "-source-object"
			   : o->sort_desc     ? "-sort-desc"
			   : o->limit         ? "-limit"
					      : NULL;

	if (what)
		return report_usage_error("-format %s exports the whole profile: it takes no %s "
					  "(-filter, -time-filter, -group-by and -metric choose "
					  "what it holds)",
					  e->name, what);
	if (o->nresults == 2 && !(e->flags & EXPORT_DIFF))
		return report_usage_error("-format %s reads one result; the difference of two "
					  "(-r A -r B) is shown by -format html and the views",
					  e->name);
	if (o->nresults == 2 && o->group_by)
		return report_usage_error("a difference (-r A -r B) takes no -group-by");
	if (o->group_by && (e->flags & EXPORT_NO_GROUPS))
		return report_usage_error("-format %s has a track per thread, in a group per "
					  "process: it takes no -group-by",
					  e->name);
	if (o->nmetrics > 1 && (e->flags & EXPORT_ONE_METRIC))
		return report_usage_error("-format %s holds one metric: give one -metric", e->name);
	return 0;
}

/* The metrics written: -metric's, else the main one (or every one the result holds). */
static void pick_metrics(const struct report *r, unsigned flags, struct export_job *x)
{
	size_t i;

	x->nmetrics = 0;
	if (r->o->nmetrics || (flags & EXPORT_ALL_METRICS)) {
		for (i = 0; i < r->nshown; i++)
			x->metrics[x->nmetrics++] = r->shown[i];
		return;
	}
	x->metrics[x->nmetrics++] = r->sort_metric;
}

int report_export(const struct report_opts *o)
{
	const struct export_format *e = format_find(o->export_format);
	struct report r[2];
	struct export_job x = { .r = r, .nr = o->nresults };
	struct outbuf b;
	struct report_out out;
	size_t i;
	int rc;

	if (!e) {
		const char *near =
			options_nearest(o->export_format, report_formats,
					sizeof(report_formats) / sizeof(report_formats[0]) - 1);

		return report_usage_error("unknown format '%s'%s%s%s", o->export_format,
					  near ? " (did you mean '" : "", near ? near : "",
					  near ? "'?)" : "");
	}
	if (o->nresults < 1 || o->nresults > 2)
		return report_usage_error(o->nresults ? "give at most two results (-r A -r B)"
						      : "no result given: use -r DIR");
	if ((rc = check_options(o, e)) || (rc = report_check_output(o)))
		return rc;
	if ((e->flags & EXPORT_BINARY) && !o->output && isatty(STDOUT_FILENO))
		return report_usage_error("-format %s writes a binary file: give it with "
					  "-report-output FILE",
					  e->name);
	for (i = 0; i < o->nresults; i++) {
		if ((rc = report_open(&r[i], o, o->results[i], &e->view))) {
			while (i--)
				report_close(&r[i]);
			return rc;
		}
	}
	pick_metrics(&r[0], e->flags, &x);
	log_debug("-format %s: %zu samples kept, %zu tree nodes, %zu metrics", e->name, r[0].nrecs,
		  r[0].tree.n, x.nmetrics);
	if ((rc = report_output_open(o, &out)))
		goto out;
	outbuf_init(&b, out.f);
	x.b = &b;
	/* A failure the export met is told by it; memory and the output's are told here. */
	rc = e->run(&x);
	if (!rc) {
		rc = report_output_close(&out, outbuf_finish(&b));
		if (rc)
			log_error("cannot write the %s export '%s': %s", e->name,
				  o->output ? o->output : "stdout", strerror(-rc));
	} else {
		if (rc == -ENOMEM)
			log_error("cannot export result '%s' as %s: %s", o->results[0], e->name,
				  strerror(ENOMEM));
		report_output_close(&out, rc);
	}
	outbuf_release(&b);
out:
	for (i = 0; i < o->nresults; i++)
		report_close(&r[i]);
	return rc;
}
