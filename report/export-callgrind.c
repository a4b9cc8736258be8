/* SPDX-License-Identifier: MIT */
/* -format callgrind: the profile as KCachegrind, QCachegrind and callgrind_annotate read it. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/sat.h"
#include "common/grow.h"
#include "common/sat.h"
#include "report/bigmem.h"
#include "report/escape.h"
#include "report/export-private.h"

/*
 * A function's block holds its self cost per source line, then its calls: "calls=N LINE"
 * (N events through the call, LINE where the callee is defined) and the call's inclusive
 * cost at the line of the call. A function's inclusive cost is what its callers' calls to it
 * hold, so each sample must count once in the calls into a function however often the
 * function recurs on its stack: a call counts the samples of the function's outermost
 * frame on their stacks (a recursive call into itself holds none, and is left out). Then the
 * calls into each function add up to its total as preport counts it.
 */

struct cg_fn {
	int ob, fl, name; /* ids in objs, files, names */
	int line;         /* of its definition, 0 when unknown */
};

struct callgrind {
	struct report *r;
	const int *metrics;
	size_t nmetrics;
	struct export_names objs, files, names;
	struct export_ids fnids; /* (ob, fl, name) -> function */
	struct cg_fn *fns;
	size_t nfns, fncap;
	int *fn;                        /* per node */
	struct export_ids selfs;        /* (function, file, line) -> self cost entry */
	struct export_ids calls;        /* (caller, call loc, callee) -> call entry */
	int64_t *self_cost, *call_cost; /* per entry: nmetrics costs, then the count */
	size_t selfcap, callcap;        /* in costs: (nmetrics + 1) per entry */
	bool *named[3]; /* per id of objs, files, names: named in the file already */
	struct outbuf *b;
};

static const char *node_file(const struct callgrind *c, int file)
{
	return file >= 0 ? c->r->m.files[file] : "???";
}

static int node_fn(struct callgrind *c, int node)
{
	struct report *r = c->r;
	const struct cct_node *n = &r->tree.nodes[node];
	const char *ob = "[group]", *fl = "???", *name;
	struct cg_fn f = { 0 };
	char buf[1024];
	int id;

	if (n->func >= 0) {
		const struct model_function *mf = &r->m.functions[n->func];

		name = report_function_name(r, n->func);
		ob = mf->module >= 0 ? r->m.modules[mf->module].path
		     : mf->python    ? "[python]"
				     : "[unknown]";
		if (!ob)
			ob = r->m.modules[mf->module].name;
		fl = node_file(c, mf->file);
		f.line = mf->file >= 0 && mf->line > 0 ? mf->line : 0;
	} else {
		name = model_strdup(&r->m, export_node_name(r, &r->tree, node, buf, sizeof(buf)));
		if (!name)
			return -ENOMEM;
	}
	if ((f.ob = export_names_get(&c->objs, ob)) < 0 ||
	    (f.fl = export_names_get(&c->files, fl)) < 0 ||
	    (f.name = export_names_get(&c->names, name)) < 0 ||
	    (id = export_ids_get(&c->fnids, f.ob, f.fl, f.name)) < 0)
		return -ENOMEM;
	if ((size_t)id == c->nfns) {
		if (GROW(c->fns, c->nfns + 1, c->fncap))
			return -ENOMEM;
		c->fns[c->nfns++] = f;
	}
	return id;
}

/* The cost array of entry id (grown to hold it, zeroed): nmetrics costs and a count. */
static int64_t *costs(struct callgrind *c, int64_t **arr, size_t *cap, int id)
{
	size_t w = c->nmetrics + 1, old = *cap;

	if (array_reserve(arr, cap, ((size_t)id + 1) * w, sizeof(**arr)))
		return NULL;
	memset(*arr + old, 0, (*cap - old) * sizeof(**arr));
	return *arr + (size_t)id * w;
}

static void add_costs(const struct callgrind *c, int64_t *dst, int node)
{
	const struct cct *t = &c->r->tree;
	size_t k;

	for (k = 0; k < c->nmetrics; k++)
		dst[k] = sat_add_i64(dst[k], t->self[(size_t)node * t->nm + (size_t)c->metrics[k]]);
	dst[c->nmetrics] = sat_add_i64(dst[c->nmetrics],
				       t->count[(size_t)node * t->nm + (size_t)c->metrics[0]]);
}

/* The self costs per line, and the calls of the outermost frame of each function. */
static int compute(struct callgrind *c)
{
	const struct cct *t = &c->r->tree;
	int *leaves = NULL, *path = NULL, *call_id = NULL, rc = -ENOMEM;
	uint32_t *stamp = NULL, round = 0;
	size_t nleaves, i;

	c->fn = malloc((t->n + 1) * sizeof(int));
	if (!c->fn)
		return -ENOMEM;
	c->fn[0] = -1;
	for (i = 1; i < t->n; i++)
		if ((c->fn[i] = node_fn(c, (int)i)) < 0)
			return c->fn[i];
	stamp = calloc(c->nfns + 1, sizeof(*stamp));
	path = malloc((t->n + 1) * sizeof(int));
	/* Per node: the id of the call into it, looked up once (paths share their outer part). */
	call_id = big_malloc((t->n + 1) * sizeof(int));
	if (!stamp || !path || !call_id || export_leaves(t, &leaves, &nleaves))
		goto out;
	memset(call_id, 0xff, (t->n + 1) * sizeof(int));
	for (i = 0; i < nleaves; i++) {
		int u = leaves[i], d, depth = export_path(t, u, path, (int)t->n);
		const struct cct_node *n = &t->nodes[u];
		const struct cct_loc *l = n->loc >= 0 ? &t->locs[n->loc] : NULL;
		int id = export_ids_get(&c->selfs, c->fn[u], l ? l->file : -1, l ? l->line : 0);
		int64_t *v;

		if (id < 0 || !(v = costs(c, &c->self_cost, &c->selfcap, id)))
			goto out;
		add_costs(c, v, u);
		round++;
		for (d = 0; d < depth; d++) {
			int x = path[d], f = c->fn[x];

			if (stamp[f] == round)
				continue; /* not the outermost frame of its function */
			stamp[f] = round;
			if (!d)
				continue; /* an outermost frame: called by nobody */
			if ((id = call_id[x]) < 0)
				id = call_id[x] = export_ids_get(&c->calls, c->fn[path[d - 1]],
								 t->nodes[path[d - 1]].loc, f);
			if (id < 0 || !(v = costs(c, &c->call_cost, &c->callcap, id)))
				goto out;
			add_costs(c, v, u);
		}
	}
	rc = 0;
out:
	free(leaves);
	free(path);
	free(stamp);
	free(call_id);
	return rc;
}

enum { NAMED_OB, NAMED_FL, NAMED_FN };

/* An event's name is a word of printable ASCII: "CPU_Time", its long name the metric's. */
static const char *event_word(const char *name, char *ev, size_t size)
{
	unsigned char *p;

	snprintf(ev, size, "%s", name);
	for (p = (unsigned char *)ev; *p; p++)
		if (*p <= ' ' || *p >= 0x7f || *p == ',' || *p == ':')
			*p = '_';
	return ev;
}

/* "fn=(3) name" the first time, "fn=(3)" after: callgrind's name compression. */
static void put_name(struct callgrind *c, const char *key, int space, int id, const char *s)
{
	outbuf_printf(c->b, "%s=(%d)", key, id + 1);
	if (!c->named[space][id]) {
		outbuf_putc(c->b, ' ');
		/* A name is the rest of its line: a newline in it would start a record. */
		escape_put(c->b, s, strlen(s));
		c->named[space][id] = true;
	}
	outbuf_putc(c->b, '\n');
}

static void put_file(struct callgrind *c, const char *key, int fl)
{
	put_name(c, key, NAMED_FL, fl, c->files.s[fl]);
}

static void put_costs(struct callgrind *c, int line, const int64_t *v)
{
	size_t k;

	outbuf_int(c->b, line);
	for (k = 0; k < c->nmetrics; k++) {
		outbuf_putc(c->b, ' ');
		outbuf_int(c->b, v[k]);
	}
	outbuf_putc(c->b, '\n');
}

/* A position in a file other than the function's: "fi=" before, "fe=" back after. */
static bool switch_file(struct callgrind *c, int fn, int file, int *fl)
{
	const char *path = node_file(c, file);

	if (file < 0 || !strcmp(path, c->files.s[c->fns[fn].fl]))
		return false;
	if ((*fl = export_names_get(&c->files, path)) < 0)
		return false;
	put_file(c, "fi", *fl);
	return true;
}

/* Entries of ids (tuple[0] is the function) ordered by function, then tuple order. */
static int cmp_entry(const void *a, const void *b, void *arg)
{
	const struct export_ids *ids = arg;
	const int *x = ids->tuple[*(const int *)a], *y = ids->tuple[*(const int *)b];
	int i;

	for (i = 0; i < 3; i++)
		if (x[i] != y[i])
			return x[i] < y[i] ? -1 : 1;
	return 0;
}

static int *sorted(struct export_ids *ids)
{
	int *order = malloc((ids->n + 1) * sizeof(int));
	size_t i;

	if (!order)
		return NULL;
	for (i = 0; i < ids->n; i++)
		order[i] = (int)i;
	qsort_r(order, ids->n, sizeof(int), cmp_entry, ids);
	return order;
}

static void put_header(struct callgrind *c)
{
	const char *cmd = model_meta_get(&c->r->m, "command_line");
	size_t k;
	char ev[256];

	outbuf_puts(c->b,
		    "# callgrind format\nversion: 1\ncreator: preport (pcollect " PCOLLECT_VERSION
		    ")\n");
	if (cmd) {
		outbuf_puts(c->b, "cmd: ");
		escape_put(c->b, cmd, strlen(cmd));
		outbuf_putc(c->b, '\n');
	}
	outbuf_puts(c->b, "positions: line\n");
	for (k = 0; k < c->nmetrics; k++) {
		const struct model_metric *mt = &c->r->m.metrics[c->metrics[k]];
		const char *unit = export_unit(mt);

		outbuf_printf(c->b, "event: %s : ", event_word(mt->name, ev, sizeof(ev)));
		escape_put(c->b, mt->name, strlen(mt->name));
		outbuf_printf(c->b, "%s%s%s\n", *unit ? " (" : "", unit, *unit ? ")" : "");
	}
	outbuf_puts(c->b, "events:");
	for (k = 0; k < c->nmetrics; k++) {
		outbuf_printf(c->b, " %s",
			      event_word(c->r->m.metrics[c->metrics[k]].name, ev, sizeof(ev)));
	}
	outbuf_puts(c->b, "\nsummary:");
	for (k = 0; k < c->nmetrics; k++) {
		outbuf_putc(c->b, ' ');
		outbuf_int(c->b, c->r->total[c->metrics[k]]);
	}
	outbuf_puts(c->b, "\n\n");
}

static int write_file(struct callgrind *c)
{
	const struct cct *t = &c->r->tree;
	int *so = sorted(&c->selfs), *co = sorted(&c->calls), fl;
	size_t si = 0, ci = 0, f;

	/* fi= may name files not seen yet: room for every path of the model too. */
	c->named[NAMED_OB] = calloc(c->objs.n + 1, sizeof(bool));
	c->named[NAMED_FL] = calloc(c->files.n + c->r->m.nfiles + 1, sizeof(bool));
	c->named[NAMED_FN] = calloc(c->nfns + 1, sizeof(bool));
	if (!so || !co || !c->named[NAMED_OB] || !c->named[NAMED_FL] || !c->named[NAMED_FN]) {
		free(so);
		free(co);
		return -ENOMEM;
	}
	put_header(c);
	for (f = 0; f < c->nfns; f++) {
		const struct cg_fn *fn = &c->fns[f];

		put_name(c, "ob", NAMED_OB, fn->ob, c->objs.s[fn->ob]);
		put_file(c, "fl", fn->fl);
		put_name(c, "fn", NAMED_FN, (int)f, c->names.s[fn->name]);
		for (; si < c->selfs.n && c->selfs.tuple[so[si]][0] == (int)f; si++) {
			const int *k = c->selfs.tuple[so[si]];
			bool other = switch_file(c, (int)f, k[1], &fl);

			put_costs(c, k[2], c->self_cost + (size_t)so[si] * (c->nmetrics + 1));
			if (other)
				put_file(c, "fe", fn->fl);
		}
		for (; ci < c->calls.n && c->calls.tuple[co[ci]][0] == (int)f; ci++) {
			const int *k = c->calls.tuple[co[ci]];
			const struct cg_fn *callee = &c->fns[k[2]];
			const int64_t *v = c->call_cost + (size_t)co[ci] * (c->nmetrics + 1);
			const struct cct_loc *l = k[1] >= 0 ? &t->locs[k[1]] : NULL;
			bool other = l && switch_file(c, (int)f, l->file, &fl);

			/* The caller's object and file are the callee's unless said. */
			if (callee->ob != fn->ob)
				put_name(c, "cob", NAMED_OB, callee->ob, c->objs.s[callee->ob]);
			if (callee->fl != (other ? fl : fn->fl))
				put_file(c, "cfi", callee->fl);
			put_name(c, "cfn", NAMED_FN, k[2], c->names.s[callee->name]);
			outbuf_printf(c->b, "calls=%lld %d\n", (long long)v[c->nmetrics],
				      callee->line);
			put_costs(c, l ? l->line : 0, v);
			if (other)
				put_file(c, "fe", fn->fl);
		}
		outbuf_putc(c->b, '\n');
		outbuf_spill(c->b);
	}
	free(so);
	free(co);
	return 0;
}

int export_callgrind(struct export_job *x)
{
	struct callgrind c = {
		.r = &x->r[0],
		.metrics = x->metrics,
		.nmetrics = x->nmetrics,
		.b = x->b,
	};
	int rc;

	rc = compute(&c);
	if (!rc)
		rc = write_file(&c);
	EXPORT_NAMES_RELEASE(&c.objs, &c.files, &c.names);
	EXPORT_IDS_RELEASE(&c.fnids, &c.selfs, &c.calls);
	FREE_ALL(c.fns, c.fn, c.self_cost, c.call_cost, c.named[NAMED_OB], c.named[NAMED_FL],
		 c.named[NAMED_FN]);
	return rc;
}
