/* SPDX-License-Identifier: MIT */
/* The HTML report's data: functions, the call tree by function, hotspots, lines, sources. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/sat.h"
#include "common/grow.h"
#include "report/export-html.h"

/*
 * The call tree the page draws has a node per function path: the report's tree (which has
 * a node per function and source line) projected onto functions, and for a difference the
 * two results' trees merged along equal function paths, functions matched by name and module.
 * Each node holds its self value per side and metric; the page sums the totals.
 */

int html_fn_of(struct html *h, int side, int node)
{
	struct report *r = &h->r[side];
	const struct cct_node *n = &r->tree.nodes[node];
	const char *name, *module = "", *file = NULL;
	int kind = 0, nid, mid, fid = -1, id;
	char buf[1024];

	if (n->func >= 0) {
		const struct model_function *f = &r->m.functions[n->func];

		name = report_function_name(r, n->func);
		module = report_module_name(r, n->func);
		kind = f->python ? 1 : 0;
		if (f->file >= 0)
			file = r->m.files[f->file];
	} else {
		name = model_strdup(&r->m, export_node_name(r, &r->tree, node, buf, sizeof(buf)));
		if (!name)
			return -ENOMEM;
		kind = 2;
	}
	/* One result: functions apart by definition file too; two: by name and module. */
	if ((nid = export_names_get(&h->names, name)) < 0 ||
	    (mid = export_names_get(&h->modules, module)) < 0 ||
	    (h->nr == 1 && file && (fid = export_names_get(&h->files, file)) < 0))
		return -ENOMEM;
	if ((id = export_ids_get(&h->fids, nid, mid, fid)) < 0)
		return -ENOMEM;
	if ((size_t)id == h->nfn) {
		if (GROW(h->fn, h->nfn + 1, h->fncap))
			return -ENOMEM;
		h->fn[h->nfn++] = (struct html_fn){
			.name = nid,
			.module = mid,
			.file = file ? export_names_get(&h->files, file) : -1,
			.line = n->func >= 0 ? r->m.functions[n->func].line : 0,
			.kind = kind,
			.side = side,
			.func = n->func,
		};
		if (h->fn[h->nfn - 1].file < -1)
			return -ENOMEM;
	}
	return id;
}

/* The node for function fid under parent, made when missing. */
static int tree_child(struct html *h, int parent, int fid)
{
	uint64_t key = (uint64_t)(uint32_t)parent << 32 | (uint32_t)fid;
	int node = key_index_get(&h->childmap, key);
	size_t w = h->nr * h->nmetrics;

	if (node >= 0)
		return node;
	if (GROW(h->node, h->nnodes + 1, h->nodecap) ||
	    array_reserve(&h->self, &h->selfcap, (h->nnodes + 1) * w, sizeof(*h->self)))
		return -ENOMEM;
	node = (int)h->nnodes++;
	h->node[node] = (struct html_node){ parent, fid, -1, -1 };
	memset(&h->self[(size_t)node * w], 0, w * sizeof(*h->self));
	if (key_index_add(&h->childmap, key, node))
		return -ENOMEM;
	return node;
}

int html_project(struct html *h, int side)
{
	const struct cct *t = &h->r[side].tree;
	int *map = malloc((t->n + 1) * sizeof(int)), *fnode = NULL, rc = 0;
	size_t i, k, w = h->nr * h->nmetrics;

	/* The first side's tree has no more nodes than its call tree: room for them at once. */
	if (!map || key_index_reserve(&h->childmap, t->n)) {
		free(map);
		return -ENOMEM;
	}
	if (!h->nnodes && tree_child(h, -1, -1) < 0) {
		free(map);
		return -ENOMEM;
	}
	fnode = malloc((t->n + 1) * sizeof(int));
	if (!fnode) {
		free(map);
		return -ENOMEM;
	}
	map[0] = 0;
	fnode[0] = -1;
	/* Parents come before their children: one pass maps every node. */
	for (i = 1; i < t->n && !rc; i++) {
		int fid = html_fn_of(h, side, (int)i);

		if (fid < 0 || (map[i] = tree_child(h, map[t->nodes[i].parent], fid)) < 0) {
			rc = -ENOMEM;
			break;
		}
		fnode[i] = fid;
		for (k = 0; k < h->nmetrics; k++)
			if (h->metrics[side][k] >= 0)
				h->self[(size_t)map[i] * w + (size_t)side * h->nmetrics + k] =
					sat_add_i64(
						h->self[(size_t)map[i] * w +
							(size_t)side * h->nmetrics + k],
						t->self[i * t->nm + (size_t)h->metrics[side][k]]);
	}
	if (!rc) {
		free(h->nodefn[side]);
		h->nodefn[side] = fnode;
		fnode = NULL;
	}
	free(fnode);
	free(map);
	return rc;
}

/* Hotspots: each function's self and total (once per sample) per side and metric. */
int html_hotspots(struct html *h, int side)
{
	const struct cct *t = &h->r[side].tree;
	struct cct_walk w;
	int *leaves, rc;
	size_t nleaves, i, k, wd = h->nr * h->nmetrics;

	if (array_reserve(&h->hot, &h->hotcap, h->nfn * 2 * wd + 1, sizeof(*h->hot)))
		return -ENOMEM;
	if (side == 0)
		memset(h->hot, 0, h->nfn * 2 * wd * sizeof(*h->hot));
	if ((rc = export_leaves(t, &leaves, &nleaves)))
		return rc;
	h->nodefn[side][0] = -1;
	rc = cct_walk_init(&w, t, h->nodefn[side], h->nfn);
	if (!rc)
		rc = cct_walk_add(&w, leaves, nleaves, NULL);
	for (i = 0; !rc && i < w.ntouched; i++) {
		int f = w.touched[i];

		for (k = 0; k < h->nmetrics; k++) {
			size_t m = (size_t)h->metrics[side][k], at = (size_t)f * 2 * wd;

			if (h->metrics[side][k] < 0)
				continue;
			h->hot[at + (size_t)side * h->nmetrics + k] = w.self[(size_t)f * t->nm + m];
			h->hot[at + wd + (size_t)side * h->nmetrics + k] =
				w.total[(size_t)f * t->nm + m];
		}
	}
	cct_walk_release(&w);
	free(leaves);
	return rc;
}

/* Per source line (of the first result): self and total, once per sample, per metric. */
int html_lines(struct html *h)
{
	const struct cct *t = &h->r[0].tree;
	int *key = malloc((t->n + 1) * sizeof(int)), *leaves = NULL, rc = -ENOMEM;
	size_t nleaves, i, k;

	if (!key || export_leaves(t, &leaves, &nleaves))
		goto out;
	key[0] = -1;
	for (i = 1; i < t->n; i++) {
		int loc = t->nodes[i].loc;

		key[i] = loc >= 0 && t->locs[loc].file >= 0 && t->locs[loc].line > 0 ? loc : -1;
	}
	rc = cct_walk_init(&h->lw, t, key, t->nlocs);
	if (!rc)
		rc = cct_walk_add(&h->lw, leaves, nleaves, NULL);
	for (i = 0; !rc && i < h->lw.ntouched; i++) {
		int loc = h->lw.touched[i], file;

		for (k = 0; k < h->nmetrics; k++)
			if (h->lw.total[(size_t)loc * t->nm + (size_t)h->metrics[0][k]] ||
			    h->lw.self[(size_t)loc * t->nm + (size_t)h->metrics[0][k]])
				break;
		if (k == h->nmetrics)
			continue;
		file = export_names_get(&h->files, h->r[0].m.files[t->locs[loc].file]);
		if (file < 0 || GROW(h->lines, h->nlines + 1, h->linecap)) {
			rc = -ENOMEM;
			break;
		}
		h->lines[h->nlines++] = (struct html_line){ file, t->locs[loc].line, loc };
	}
out:
	free(key);
	free(leaves);
	return rc;
}
