/* SPDX-License-Identifier: MIT */
/* -filter key=value / key!=value: which samples a report keeps. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/options.h"
#include "report/bigmem.h"
#include "report/filter.h"

static const char *const filter_keys[] = { "module", "thread", "process", "function", "language" };
enum { KEY_MODULE, KEY_THREAD, KEY_PROCESS, KEY_FUNCTION, KEY_LANGUAGE, NKEYS };
/* The items of KEY_LANGUAGE: index 1 is model_function.python. */
static const char *const languages[] = { "native", "python" };

/* Per key: which items (modules, threads, functions) are wanted and which excluded. */
struct filter_sets {
	bool given[NKEYS];
	bool *in[NKEYS], *out[NKEYS];
	size_t size[NKEYS];
};

static bool is_number(const char *s)
{
	if (!*s)
		return false;
	for (; *s; s++)
		if (*s < '0' || *s > '9')
			return false;
	return true;
}

/* Mark in set every item of key that value names; a usage error when none does. */
static int mark(struct report *r, int key, const char *value, bool *set)
{
	const struct model *m = &r->m;
	const char **names = NULL;
	size_t i, n = 0, hits = 0;
	const char *near;
	int rc;

	switch (key) {
	case KEY_MODULE:
		for (i = 0; i < m->nmodules; i++)
			if (!strcmp(m->modules[i].name, value) ||
			    (m->modules[i].path && !strcmp(m->modules[i].path, value)))
				set[i] = true, hits++;
		n = m->nmodules;
		break;
	case KEY_THREAD:
		for (i = 0; i < m->nthreads; i++)
			if (is_number(value) ? m->threads[i].tid == atoll(value)
					     : !strcmp(m->threads[i].name, value))
				set[i] = true, hits++;
		n = m->nthreads;
		break;
	case KEY_PROCESS:
		for (i = 0; i < m->nthreads; i++) {
			int p = m->threads[i].process;

			if (p < 0)
				continue;
			if (is_number(value)
				    ? m->processes[p].pid == atoll(value)
				    : !strcmp(m->processes[p].exe, value) ||
					      !strcmp(report_basename(m->processes[p].exe), value))
				set[i] = true, hits++;
		}
		n = m->nprocesses;
		break;
	case KEY_FUNCTION: {
		/* Every function the name names, whole or short ("relax", "Simulation.step"). */
		int *funcs;
		size_t nf;

		rc = report_find_functions(r, value, false, "-filter function=", &funcs, &nf);
		if (rc)
			return rc;
		for (i = 0; i < nf; i++)
			set[funcs[i]] = true;
		free(funcs);
		return 0;
	}
	case KEY_LANGUAGE:
		for (i = 0; i < 2; i++)
			if (!strcmp(languages[i], value))
				set[i] = true, hits++;
		n = 2;
		break;
	}
	if (hits)
		return 0;
	names = calloc(n + 1, sizeof(*names));
	for (i = 0; names && i < n; i++) {
		switch (key) {
		case KEY_MODULE:
			names[i] = m->modules[i].name;
			break;
		case KEY_THREAD:
			names[i] = m->threads[i].name;
			break;
		case KEY_PROCESS:
			names[i] = report_basename(m->processes[i].exe);
			break;
		case KEY_FUNCTION:
			names[i] = m->functions[i].name;
			break;
		case KEY_LANGUAGE:
			names[i] = languages[i];
			break;
		}
	}
	near = names ? options_nearest(value, names, n) : NULL;
	if (near)
		rc = report_usage_error("no %s '%s' in result '%s' (did you mean '%s'?)",
					filter_keys[key], value, r->dir, near);
	else
		rc = report_usage_error("no %s '%s' in result '%s'", filter_keys[key], value,
					r->dir);
	free(names);
	return rc;
}

static int sets_parse(struct report *r, struct filter_sets *fs)
{
	const struct report_opts *o = r->o;
	size_t i, k;

	fs->size[KEY_MODULE] = r->m.nmodules;
	fs->size[KEY_THREAD] = r->m.nthreads;
	fs->size[KEY_PROCESS] = r->m.nthreads; /* process filters mark the threads */
	fs->size[KEY_FUNCTION] = r->m.nfunctions;
	fs->size[KEY_LANGUAGE] = 2;
	for (k = 0; k < NKEYS; k++) {
		fs->in[k] = calloc(fs->size[k] + 1, 1);
		fs->out[k] = calloc(fs->size[k] + 1, 1);
		if (!fs->in[k] || !fs->out[k])
			return -ENOMEM;
	}
	for (i = 0; i < o->nfilters; i++) {
		const char *f = o->filters[i], *eq = strchr(f, '=');
		bool negate = eq && eq > f && eq[-1] == '!';
		size_t klen = eq ? (size_t)(eq - f) - negate : strlen(f);
		int key = -1, rc;

		for (k = 0; k < NKEYS; k++)
			if (strlen(filter_keys[k]) == klen && !strncmp(f, filter_keys[k], klen))
				key = (int)k;
		if (key < 0) {
			char word[64];
			const char *near;

			snprintf(word, sizeof(word), "%.*s", (int)klen, f);
			near = options_nearest(word, filter_keys, NKEYS);
			if (near)
				return report_usage_error(
					"unknown filter '%s' (did you mean '%s'?); "
					"use -filter KEY=VALUE or KEY!=VALUE",
					word, near);
			return report_usage_error("unknown filter '%s'; keys are module, thread, "
						  "process, function, language",
						  word);
		}
		if (!eq || !eq[1])
			return report_usage_error("filter '%s' needs a value: -filter %s=VALUE", f,
						  filter_keys[key]);
		rc = mark(r, key, eq + 1, negate ? fs->out[key] : fs->in[key]);
		if (rc)
			return rc;
		if (!negate)
			fs->given[key] = true;
	}
	return 0;
}

static void sets_release(struct filter_sets *fs)
{
	size_t k;

	for (k = 0; k < NKEYS; k++) {
		free(fs->in[k]);
		free(fs->out[k]);
	}
}

/* The function a sample at stack counts in, as the tree shows it (no node is made). */
static int leaf_function(const struct report *r, int stack)
{
	const struct cct *t = &r->tree;
	int s = stack;

	while (t->leaf[s] <= -2)
		s = -2 - t->leaf[s];
	if (t->leaf[s] >= 0)
		return t->nodes[t->leaf[s]].func;
	return r->m.frames[r->m.stacks[s].frame].function;
}

static bool item_kept(const struct filter_sets *fs, int key, int item)
{
	if (item < 0)
		return !fs->given[key];
	if (fs->out[key][item])
		return false;
	return !fs->given[key] || fs->in[key][item];
}

int report_filter_samples(struct report *r)
{
	const struct model *m = &r->m;
	struct filter_sets fs;
	unsigned char *onstack = NULL; /* per stack: 1 a wanted function, 2 an excluded one */
	bool by_module = false, by_language;
	size_t i;
	int rc;

	memset(&fs, 0, sizeof(fs));
	rc = sets_parse(r, &fs);
	if (rc)
		goto out;
	if (fs.given[KEY_FUNCTION] || r->o->nfilters) {
		onstack = big_calloc(m->nstacks + 1, 1);
		if (!onstack) {
			rc = -ENOMEM;
			goto out;
		}
		for (i = 0; i < m->nstacks; i++) {
			int s = m->stack_order[i], p = m->stacks[s].parent;
			int f = m->frames[m->stacks[s].frame].function;

			onstack[s] = (p >= 0 ? onstack[p] : 0) | (fs.in[KEY_FUNCTION][f] ? 1 : 0) |
				     (fs.out[KEY_FUNCTION][f] ? 2 : 0);
		}
	}
	/* Without a module filter, no sample's frame needs looking at (a cache miss each). */
	for (i = 0; i < m->nmodules && !by_module; i++)
		by_module = fs.out[KEY_MODULE][i];
	by_module |= fs.given[KEY_MODULE];
	by_language = fs.given[KEY_LANGUAGE] || fs.out[KEY_LANGUAGE][0] || fs.out[KEY_LANGUAGE][1];
	r->recs = big_malloc((m->nsamples + 1) * sizeof(*r->recs));
	if (!r->recs) {
		rc = -ENOMEM;
		goto out;
	}
	r->nrecs = 0;
	for (i = 0; i < m->nsamples; i++) {
		const struct model_sample *s = &m->samples[i];
		struct record *rec;
		int node;

		if (!item_kept(&fs, KEY_THREAD, s->thread) ||
		    !item_kept(&fs, KEY_PROCESS, s->thread))
			continue;
		if (onstack && ((onstack[s->stack] & 2) ||
				(fs.given[KEY_FUNCTION] && !(onstack[s->stack] & 1))))
			continue;
		if (by_module &&
		    !item_kept(&fs, KEY_MODULE, m->frames[m->stacks[s->stack].frame].module))
			continue;
		/* language: of the frame the sample counts in, after -call-stack-mode */
		if (by_language &&
		    !item_kept(&fs, KEY_LANGUAGE, m->functions[leaf_function(r, s->stack)].python))
			continue;
		node = cct_leaf(&r->tree, s->stack);
		if (node < 0) {
			rc = -ENOMEM;
			goto out;
		}
		rec = &r->recs[r->nrecs++];
		*rec = (struct record){ (int)i, node };
		r->total[s->metric] += s->value;
		r->count[s->metric] += s->count;
		cct_add(&r->tree, node, s->metric, s->value, s->count);
	}
	rc = cct_sum(&r->tree);
out:
	free(onstack);
	sets_release(&fs);
	return rc;
}
