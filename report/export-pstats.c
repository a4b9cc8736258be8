/* SPDX-License-Identifier: MIT */
/* -format pstats: the marshal file of Python's cProfile, read by pstats, SnakeViz, gprof2dot. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "common/sat.h"
#include "report/export-private.h"

/*
 * The file is marshal.dump() of a dict {(file, line, name): (cc, nc, tt, ct, callers)} with
 * callers {(file, line, name): (nc, cc, tt, ct)}: tt the function's own time, ct its
 * cumulative time, in seconds, and nc and cc its calls. A sample profile knows no calls: its
 * samples stand in (docs/preport.md).
 */

/* marshal's type codes (Python/marshal.c). */
#define M_NULL    '0'
#define M_INT     'i'
#define M_LONG    'l'
#define M_FLOAT   'g'
#define M_UNICODE 'u'
#define M_TUPLE   '('
#define M_DICT    '{'

static void m_u32(struct outbuf *b, uint32_t v)
{
	char le[4] = { (char)(v & 0xff), (char)(v >> 8 & 0xff), (char)(v >> 16 & 0xff),
		       (char)(v >> 24) };

	outbuf_put(b, le, 4);
}

static void m_int(struct outbuf *b, int64_t v)
{
	uint64_t u = v < 0 ? -(uint64_t)v : (uint64_t)v;
	uint16_t digits[5];
	int n = 0, i;

	if (v >= INT32_MIN && v <= INT32_MAX) {
		outbuf_putc(b, M_INT);
		m_u32(b, (uint32_t)(int32_t)v);
		return;
	}
	/* A long: 15-bit digits, least significant first; the count carries the sign. */
	for (; u; u >>= 15)
		digits[n++] = (uint16_t)(u & 0x7fff);
	outbuf_putc(b, M_LONG);
	m_u32(b, (uint32_t)(v < 0 ? -n : n));
	for (i = 0; i < n; i++) {
		char le[2] = { (char)(digits[i] & 0xff), (char)(digits[i] >> 8) };

		outbuf_put(b, le, 2);
	}
}

static void m_float(struct outbuf *b, double d)
{
	uint64_t bits;
	char le[8];
	int i;

	memcpy(&bits, &d, sizeof(bits));
	for (i = 0; i < 8; i++)
		le[i] = (char)(bits >> (8 * i) & 0xff);
	outbuf_putc(b, M_FLOAT);
	outbuf_put(b, le, 8);
}

/* A str: marshal reads UTF-8 (surrogates refused), so other bytes become '?'. */
static void m_str(struct outbuf *b, const char *s)
{
	const unsigned char *p = (const unsigned char *)s, *end = p + strlen(s);
	size_t n;

	outbuf_putc(b, M_UNICODE);
	m_u32(b, (uint32_t)(end - p));
	while (p < end) {
		if ((n = outbuf_utf8_len(p, end))) {
			outbuf_put(b, (const char *)p, n);
			p += n;
		} else {
			outbuf_putc(b, '?');
			p++;
		}
	}
}

static void m_tuple(struct outbuf *b, uint32_t n)
{
	outbuf_putc(b, M_TUPLE);
	m_u32(b, n);
}

/* A pstats function: its key's strings and line. */
struct pkey {
	const char *file, *name;
	int line;
};

struct pstats {
	struct report *r;
	int metric;
	double scale; /* to seconds for times; 1 for other units */
	struct export_names files, names;
	struct export_ids ids;   /* (file, line, name) -> pstats function */
	struct export_ids edges; /* (caller, callee, 0) -> edge */
	int *fkey, *ekey;        /* per node */
	struct cct_walk wf, we;
	int64_t *f_val, *f_cnt, *e_val, *e_cnt; /* per function / edge: self, total */
};

/* The key of node: a function's (definition file, or module, line, name), or a group's. */
static int node_key(struct pstats *p, int node)
{
	struct report *r = p->r;
	const struct cct_node *n = &r->tree.nodes[node];
	const char *file = "~", *name;
	int line = 0, fid, nid;
	char buf[1024];

	if (n->func >= 0) {
		const struct model_function *f = &r->m.functions[n->func];

		name = report_function_name(r, n->func);
		if (f->file >= 0) {
			file = r->m.files[f->file];
			line = f->line;
		} else if (f->module >= 0) {
			file = r->m.modules[f->module].name;
		}
	} else {
		/* pstats shows ('~', 0, name) as the name alone, as it does built-ins. */
		name = model_strdup(&r->m, export_node_name(r, &r->tree, node, buf, sizeof(buf)));
		if (!name)
			return -ENOMEM;
	}
	if ((fid = export_names_get(&p->files, file)) < 0 ||
	    (nid = export_names_get(&p->names, name)) < 0)
		return -ENOMEM;
	return export_ids_get(&p->ids, fid, line, nid);
}

static int keys(struct pstats *p)
{
	const struct cct *t = &p->r->tree;
	size_t i;
	int k;

	p->fkey = malloc((t->n + 1) * sizeof(int));
	p->ekey = malloc((t->n + 1) * sizeof(int));
	if (!p->fkey || !p->ekey)
		return -ENOMEM;
	p->fkey[0] = p->ekey[0] = -1;
	for (i = 1; i < t->n; i++) {
		int parent = t->nodes[i].parent;

		if ((k = node_key(p, (int)i)) < 0)
			return k;
		p->fkey[i] = k;
		p->ekey[i] = -1;
		/* Children come after their parents: the parent's key is known. */
		if (parent > 0 &&
		    (p->ekey[i] = export_ids_get(&p->edges, p->fkey[parent], k, 0)) < 0)
			return -ENOMEM;
	}
	return 0;
}

/* Self and total (value, then count) per key of w, for the metric: into val and cnt. */
static int sums(struct pstats *p, struct cct_walk *w, const int *key, size_t nkeys, int64_t **val,
		int64_t **cnt)
{
	const struct cct *t = &p->r->tree;
	size_t nm = t->nm, i, nleaves;
	int *leaves, rc, pass;

	*val = calloc(2 * nkeys + 1, sizeof(int64_t));
	*cnt = calloc(2 * nkeys + 1, sizeof(int64_t));
	if (!*val || !*cnt || (rc = export_leaves(t, &leaves, &nleaves)))
		return -ENOMEM;
	rc = cct_walk_init(w, t, key, nkeys);
	for (pass = 0; !rc && pass < 2; pass++) {
		int64_t *out = pass ? *cnt : *val;

		if ((rc = cct_walk_add(w, leaves, nleaves, pass ? t->count : NULL)))
			break;
		for (i = 0; i < nkeys; i++) {
			out[2 * i] = w->self[i * nm + (size_t)p->metric];
			out[2 * i + 1] = w->total[i * nm + (size_t)p->metric];
		}
		cct_walk_reset(w);
	}
	free(leaves);
	return rc;
}

static int cmp_callee(const void *a, const void *b, void *arg)
{
	const struct export_ids *edges = arg;
	int x = *(const int *)a, y = *(const int *)b;
	int cx = edges->tuple[x][1], cy = edges->tuple[y][1];

	if (cx != cy)
		return cx < cy ? -1 : 1;
	return x < y ? -1 : x > y;
}

static void put_key(struct pstats *p, struct outbuf *b, int id)
{
	const int *k = p->ids.tuple[id];

	m_tuple(b, 3);
	m_str(b, p->files.s[k[0]]);
	m_int(b, k[1]);
	m_str(b, p->names.s[k[2]]);
}

static int write_stats(struct pstats *p, struct outbuf *b)
{
	size_t n = p->ids.n, ne = p->edges.n, i, e = 0;
	int *order = malloc((ne + 1) * sizeof(int));

	if (!order)
		return -ENOMEM;
	for (i = 0; i < ne; i++)
		order[i] = (int)i;
	qsort_r(order, ne, sizeof(int), cmp_callee, &p->edges);
	outbuf_putc(b, M_DICT);
	for (i = 0; i < n; i++) {
		/* cc: the samples with the function on the stack, each once however deep it recurs
		 * (cProfile's primitive calls); nc: the samples through each of its callers, so
		 * that the callers' counts add up to it (gprof2dot divides them by it), and never
		 * fewer than cc (a root has no caller). */
		int64_t cc = p->f_cnt[2 * i + 1], nc = 0;
		size_t first = e;

		for (; e < ne && p->edges.tuple[order[e]][1] == (int)i; e++)
			nc = sat_add_i64(nc, p->e_cnt[2 * order[e] + 1]);
		put_key(p, b, (int)i);
		m_tuple(b, 5);
		m_int(b, cc);
		m_int(b, nc > cc ? nc : cc);
		m_float(b, (double)p->f_val[2 * i] * p->scale);
		m_float(b, (double)p->f_val[2 * i + 1] * p->scale);
		outbuf_putc(b, M_DICT);
		for (e = first; e < ne && p->edges.tuple[order[e]][1] == (int)i; e++) {
			int id = order[e];

			put_key(p, b, p->edges.tuple[id][0]);
			m_tuple(b, 4);
			m_int(b, p->e_cnt[2 * id + 1]);
			m_int(b, p->e_cnt[2 * id + 1]);
			m_float(b, (double)p->e_val[2 * id] * p->scale);
			m_float(b, (double)p->e_val[2 * id + 1] * p->scale);
		}
		outbuf_putc(b, M_NULL);
		outbuf_spill(b);
	}
	outbuf_putc(b, M_NULL);
	free(order);
	return 0;
}

int export_pstats(struct export_job *x)
{
	struct pstats p = { .r = &x->r[0], .metric = x->metrics[0] };
	int rc;

	p.scale = p.r->m.metrics[p.metric].unit == MODEL_UNIT_NS ? 1e-9 : 1.0;
	rc = keys(&p);
	if (!rc)
		rc = sums(&p, &p.wf, p.fkey, p.ids.n, &p.f_val, &p.f_cnt);
	if (!rc)
		rc = sums(&p, &p.we, p.ekey, p.edges.n, &p.e_val, &p.e_cnt);
	if (!rc)
		rc = write_stats(&p, x->b);
	cct_walk_release(&p.wf);
	cct_walk_release(&p.we);
	FREE_ALL(p.fkey, p.ekey, p.f_val, p.f_cnt, p.e_val, p.e_cnt);
	EXPORT_IDS_RELEASE(&p.ids, &p.edges);
	EXPORT_NAMES_RELEASE(&p.files, &p.names);
	return rc;
}
