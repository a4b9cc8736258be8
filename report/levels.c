/* SPDX-License-Identifier: MIT */
/* The tree views' -group-by levels (thread, process, module, ...) above the call tree. */
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/options.h"
#include "report/report-private.h"

/* The tree views' -group-by keys: each a level of the tree (function ends the list). */
static const struct {
	const char *name;
	enum cct_group_kind kind;
} tree_keys[] = {
	{ "process", CCT_GROUP_PROCESS },
	{ "thread", CCT_GROUP_THREAD },
	{ "module", CCT_GROUP_MODULE },
	{ "rank", CCT_GROUP_RANK },
	{ "node", CCT_GROUP_NODE },
	{ "wait-kind", CCT_GROUP_WAIT_KIND },
	{ "sync-object", CCT_GROUP_SYNC_OBJECT },
	{ "region", CCT_GROUP_REGION },
	{ "task", CCT_GROUP_TASK },
	{ "run", CCT_GROUP_RUN },
	{ "function", CCT_GROUP_PROCESS }, /* not a level: the call tree itself */
};
#define NTREE_KEYS        (sizeof(tree_keys) / sizeof(tree_keys[0]))
#define TREE_KEY_FUNCTION (NTREE_KEYS - 1)

int report_tree_levels(struct report *r)
{
	const char *p = r->o->group_by;
	const char *names[NTREE_KEYS];
	size_t k, l;

	for (k = 0; k < NTREE_KEYS; k++)
		names[k] = tree_keys[k].name;
	r->nlevels = 0;
	while (p && *p) {
		size_t len = strcspn(p, ",");
		char word[64];

		snprintf(word, sizeof(word), "%.*s", (int)len, p);
		for (k = 0; k < NTREE_KEYS && strcmp(word, names[k]); k++)
			;
		if (k == NTREE_KEYS) {
			const char *near = options_nearest(word, names, NTREE_KEYS);

			if (!strcmp(word, "source-line"))
				return report_usage_error(
					"the %s view does not group by source-line "
					"(the hotspots view does); use thread, "
					"process, module, rank, node, wait-kind, "
					"sync-object, region, task or run",
					r->view->name);
			return report_usage_error(
				"unknown grouping '%s' for -group-by in the %s "
				"view%s%s%s; use thread, process, module, "
				"rank, node, wait-kind, sync-object, region, task or run",
				word, r->view->name, near ? " (did you mean '" : "",
				near ? near : "", near ? "'?)" : "");
		}
		p += len + (p[len] == ',');
		if (k == TREE_KEY_FUNCTION) {
			if (*p)
				return report_usage_error("in the %s view, function comes last in "
							  "-group-by (the call tree itself): e.g. "
							  "-group-by thread,function",
							  r->view->name);
			break;
		}
		for (l = 0; l < r->nlevels; l++)
			if (r->levels[l] == tree_keys[k].kind)
				return report_usage_error(
					"option '-group-by' takes each of thread, "
					"process, module, rank, node, "
					"wait-kind, sync-object, region, task and run once");
		r->levels[r->nlevels++] = tree_keys[k].kind;
	}
	return 0;
}

/* The rank and the node of a sample's process: -1 when unknown. */
int report_sample_rank(const struct report *r, const struct model_sample *s)
{
	int p = s->thread >= 0 ? r->m.threads[s->thread].process : -1;

	return p >= 0 ? (int)r->m.processes[p].rank : -1;
}

int report_sample_node(const struct report *r, const struct model_sample *s)
{
	int p = s->thread >= 0 ? r->m.threads[s->thread].process : -1;

	return p >= 0 ? r->m.processes[p].node : -1;
}

int report_sample_run(const struct report *r, const struct model_sample *s)
{
	int p = s->thread >= 0 ? r->m.threads[s->thread].process : -1;

	return p >= 0 ? r->m.processes[p].run : -1;
}

/* The wait kind and the sync object of a sample: -1 (no wait) without a context. */
int report_sample_wait_kind(const struct report *r, const struct model_sample *s)
{
	return s->context >= 0 ? r->m.contexts[s->context].kind : -1;
}

int report_sample_sync_object(const struct report *r, const struct model_sample *s)
{
	return s->context >= 0 ? r->m.contexts[s->context].sync_object : -1;
}

int report_sample_region(const struct report *r, const struct model_sample *s)
{
	return s->context >= 0 ? r->m.contexts[s->context].region_index : -1;
}

/* Whether function f is an asyncio task's frame: "[task NAME]" (api/python/pcollect/_tasks.py). */
static bool task_function(const struct model_function *f)
{
	size_t len = strlen(f->name);

	return f->python && len > 7 && !strncmp(f->name, "[task ", 6) && f->name[len - 1] == ']';
}

int report_sample_task(const struct report *r, const struct model_sample *s)
{
	const struct model *m = &r->m;
	int *of = r->stack_task;
	size_t i;

	if (s->stack < 0 || (size_t)s->stack >= m->nstacks)
		return -1;
	if (!of) {
		/* Once per report: each stack's innermost task frame, parents first. */
		of = malloc((m->nstacks ? m->nstacks : 1) * sizeof(*of));
		if (!of)
			return -1;
		for (i = 0; i < m->nstacks; i++) {
			int st = m->stack_order[i];
			int fn = m->frames[m->stacks[st].frame].function;
			int up = m->stacks[st].parent;

			if (fn >= 0 && task_function(&m->functions[fn]))
				of[st] = fn;
			else
				of[st] = up >= 0 ? of[up] : -1;
		}
		((struct report *)r)->stack_task = of;
	}
	return of[s->stack];
}

/* The subject of group level kind for a record. */
static int level_item(const struct report *r, enum cct_group_kind kind, const struct record *rec)
{
	const struct model_sample *s = report_sample(r, rec);
	const struct model_function *f;
	int func;

	switch (kind) {
	case CCT_GROUP_THREAD:
		return s->thread;
	case CCT_GROUP_PROCESS:
		return s->thread >= 0 ? r->m.threads[s->thread].process : -1;
	case CCT_GROUP_RANK:
		return report_sample_rank(r, s);
	case CCT_GROUP_NODE:
		return report_sample_node(r, s);
	case CCT_GROUP_MODULE:
		func = r->tree.nodes[rec->node].func;
		if (func < 0)
			return -1;
		f = &r->m.functions[func];
		return f->module >= 0 ? f->module : f->python ? -2 : -1;
	case CCT_GROUP_WAIT_KIND:
		return report_sample_wait_kind(r, s);
	case CCT_GROUP_SYNC_OBJECT:
		return report_sample_sync_object(r, s);
	case CCT_GROUP_REGION:
		return report_sample_region(r, s);
	case CCT_GROUP_TASK:
		return report_sample_task(r, s);
	case CCT_GROUP_RUN:
		return report_sample_run(r, s);
	}
	return -1;
}

int report_derive_tree(struct report *r)
{
	struct cct dst;
	size_t i, l;
	int rc;

	if (!r->nlevels && !r->o->collapse_recursion)
		return 0;
	if ((rc = cct_derive_init(&dst, &r->tree)))
		return rc;
	for (i = 0; i < r->nrecs && !rc; i++) {
		struct record *rec = &r->recs[i];
		int top = 0, node;

		for (l = 0; l < r->nlevels && top >= 0; l++)
			top = cct_derive_group(&dst, top, r->levels[l],
					       level_item(r, r->levels[l], rec));
		node = top < 0 ? top
			       : cct_derive_node(&dst, &r->tree, top, rec->node,
						 r->o->collapse_recursion);
		if (node < 0) {
			rc = node;
			break;
		}
		rec->node = node;
		cct_add(&dst, node, report_sample(r, rec)->metric, report_sample(r, rec)->value,
			report_sample(r, rec)->count);
	}
	if (!rc)
		rc = cct_sum(&dst);
	if (rc) {
		cct_release(&dst);
		return rc;
	}
	cct_release(&r->tree);
	r->tree = dst;
	return 0;
}
