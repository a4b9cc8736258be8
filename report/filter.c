/* SPDX-License-Identifier: MIT */
/* -filter key=value / key!=value: which samples a report keeps. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/options.h"
#include "common/sat.h"
#include "report/bigmem.h"
#include "report/filter.h"

static const char *const filter_keys[] = { "module",   "thread",    "process",     "function",
					   "language", "wait-kind", "sync-object", "rank",
					   "node",     "region",    "run" };
enum {
	KEY_MODULE,
	KEY_THREAD,
	KEY_PROCESS,
	KEY_FUNCTION,
	KEY_LANGUAGE,
	KEY_WAIT_KIND,
	KEY_SYNC_OBJECT,
	KEY_RANK,
	KEY_NODE,
	KEY_REGION, /* items: model.regions, then [no region] */
	KEY_RUN,    /* marks the threads, as rank and node do */
	NKEYS
};
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

/* The name of sync object i as -filter matches it: its variable or path, else its label. */
static const char *sync_object_name(const struct model *m, int i)
{
	const struct model_context *c = &m->contexts[m->sync_objects[i].context];
	char buf[512];

	return c->object_name ? c->object_name
			      : model_strdup((struct model *)m,
					     model_sync_object_label(m, i, buf, sizeof(buf)));
}

/* value names sync object i: its name, its label ("fd 5", "[sleep]") or its value. */
static bool sync_object_named(const struct model *m, int i, const char *value)
{
	const struct model_context *c = &m->contexts[m->sync_objects[i].context];
	char buf[512], *end;
	long long v;

	if (c->object_name && !strcmp(c->object_name, value))
		return true;
	if (!strcmp(model_sync_object_label(m, i, buf, sizeof(buf)), value))
		return true;
	if (!c->object_type)
		return false;
	/* Its type and value ("fd 5", "mutex 0x55d0c0a0"), or the value alone. */
	if (!strncmp(value, c->object_type, strlen(c->object_type)) &&
	    value[strlen(c->object_type)] == ' ')
		value += strlen(c->object_type) + 1;
	errno = 0;
	v = strtoll(value, &end, 0);
	return !errno && !*end && end != value && v == c->object;
}

/* -filter rank=N where no process has rank N: the ranks there are, lowest and highest. */
static int no_rank(const struct report *r, const char *value)
{
	int64_t lo = INT64_MAX, hi = -1;
	size_t i;

	for (i = 0; i < r->m.nprocesses; i++) {
		int64_t k = r->m.processes[i].rank;

		if (k >= 0 && k < lo)
			lo = k;
		if (k > hi)
			hi = k;
	}
	if (hi < 0)
		return report_usage_error("no rank '%s' in result '%s': it holds no process of a "
					  "parallel job",
					  value, r->dir);
	return report_usage_error("no rank '%s' in result '%s'; its ranks are %lld to %lld", value,
				  r->dir, (long long)lo, (long long)hi);
}

/*
 * Whether value names wait kind kind: the kind itself, or its family, the part before a '-'
 * ("openmp" for openmp-barrier, openmp-lock and openmp-other).
 */
static bool wait_kind_named(const char *kind, const char *value)
{
	size_t n = strlen(value);

	return !strcmp(kind, value) || (!strncmp(kind, value, n) && kind[n] == '-');
}

/*
 * A region path is named by a name that stands in it as whole components: "solve" names
 * "solve", "solve/small" and "main/solve"; "solve/small" names "solve/small/x".
 */
static bool region_named(const char *path, const char *name)
{
	size_t n = strlen(name);
	const char *p;

	for (p = path; (p = strstr(p, name)); p++)
		if ((p == path || p[-1] == '/') && (p[n] == '\0' || p[n] == '/'))
			return true;
	return false;
}

/* Run i (-1: none) is named by its path as the pattern matched it, or by its last name. */
static bool run_named(const struct model *m, int i, const char *name)
{
	return i >= 0 && (!strcmp(m->runs[i], name) || !strcmp(report_basename(m->runs[i]), name));
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
					     : !strcmp(m->threads[i].name, value) ||
						       (m->threads[i].os_name &&
							!strcmp(m->threads[i].os_name, value)))
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
	case KEY_RANK:
	case KEY_NODE:
	case KEY_RUN:
		/* Rank, node and run filters mark the threads of the processes they name. */
		for (i = 0; i < m->nthreads; i++) {
			int p = m->threads[i].process;

			if (p < 0)
				continue;
			if (key == KEY_RANK
				    ? is_number(value) && m->processes[p].rank == atoll(value)
			    : key == KEY_NODE
				    ? m->processes[p].node >= 0 &&
					      !strcmp(m->nodes[m->processes[p].node], value)
				    : run_named(m, m->processes[p].run, value))
				set[i] = true, hits++;
		}
		n = key == KEY_RANK ? m->nprocesses : key == KEY_NODE ? m->nnodes : m->nruns;
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
	case KEY_WAIT_KIND:
		for (i = 0; i < m->nwait_kinds; i++)
			if (wait_kind_named(m->wait_kinds[i], value))
				set[i] = true, hits++;
		n = m->nwait_kinds;
		break;
	case KEY_SYNC_OBJECT:
		for (i = 0; i < m->nsync_objects; i++)
			if (sync_object_named(m, (int)i, value))
				set[i] = true, hits++;
		n = m->nsync_objects;
		break;
	case KEY_REGION:
		for (i = 0; i < m->nregions; i++)
			if (region_named(m->regions[i], value))
				set[i] = true, hits++;
		if (!strcmp(value, model_region_label(m, -1)))
			set[m->nregions] = true, hits++;
		n = m->nregions + 1;
		break;
	}
	if (hits)
		return 0;
	if (key == KEY_RANK)
		return no_rank(r, value);
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
		case KEY_WAIT_KIND:
			names[i] = m->wait_kinds[i];
			break;
		case KEY_SYNC_OBJECT:
			names[i] = sync_object_name(m, (int)i);
			break;
		case KEY_NODE:
			names[i] = m->nodes[i];
			break;
		case KEY_RUN:
			names[i] = report_basename(m->runs[i]);
			break;
		case KEY_REGION:
			names[i] = model_region_label(m, i < m->nregions ? (int)i : -1);
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
	fs->size[KEY_WAIT_KIND] = r->m.nwait_kinds;
	fs->size[KEY_SYNC_OBJECT] = r->m.nsync_objects;
	fs->size[KEY_RANK] = r->m.nthreads; /* as process filters: they mark the threads */
	fs->size[KEY_NODE] = r->m.nthreads;
	fs->size[KEY_RUN] = r->m.nthreads;
	fs->size[KEY_REGION] = r->m.nregions + 1;
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
						  "process, function, language, wait-kind, "
						  "sync-object, rank, node, region, run",
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

/* The filters of a report, parsed once, asked per sample. */
struct report_filter {
	struct filter_sets fs;
	unsigned char *onstack; /* per stack: 1 a wanted function, 2 an excluded one */
	bool by_module, by_language;
};

int report_filter_open(struct report *r, struct report_filter **out)
{
	const struct model *m = &r->m;
	struct report_filter *f = calloc(1, sizeof(*f));
	size_t i;
	int rc;

	*out = NULL;
	if (!f)
		return -ENOMEM;
	rc = sets_parse(r, &f->fs);
	if (rc)
		goto fail;
	if (f->fs.given[KEY_FUNCTION] || r->o->nfilters) {
		f->onstack = big_calloc(m->nstacks + 1, 1);
		if (!f->onstack) {
			rc = -ENOMEM;
			goto fail;
		}
		for (i = 0; i < m->nstacks; i++) {
			int s = m->stack_order[i], p = m->stacks[s].parent;
			int fn = m->frames[m->stacks[s].frame].function;

			f->onstack[s] = (p >= 0 ? f->onstack[p] : 0) |
					(f->fs.in[KEY_FUNCTION][fn] ? 1 : 0) |
					(f->fs.out[KEY_FUNCTION][fn] ? 2 : 0);
		}
	}
	/* Without a module filter, no sample's frame needs looking at (a cache miss each). */
	for (i = 0; i < m->nmodules && !f->by_module; i++)
		f->by_module = f->fs.out[KEY_MODULE][i];
	f->by_module |= f->fs.given[KEY_MODULE];
	f->by_language = f->fs.given[KEY_LANGUAGE] || f->fs.out[KEY_LANGUAGE][0] ||
			 f->fs.out[KEY_LANGUAGE][1];
	*out = f;
	return 0;
fail:
	report_filter_close(f);
	return rc;
}

bool report_filter_keep(const struct report *r, const struct report_filter *f,
			const struct model_sample *s)
{
	const struct model *m = &r->m;
	const struct filter_sets *fs = &f->fs;
	int region;

	if (!item_kept(fs, KEY_THREAD, s->thread) || !item_kept(fs, KEY_PROCESS, s->thread) ||
	    !item_kept(fs, KEY_RANK, s->thread) || !item_kept(fs, KEY_NODE, s->thread) ||
	    !item_kept(fs, KEY_RUN, s->thread))
		return false;
	if (f->onstack && ((f->onstack[s->stack] & 2) ||
			   (fs->given[KEY_FUNCTION] && !(f->onstack[s->stack] & 1))))
		return false;
	if (f->by_module && !item_kept(fs, KEY_MODULE, m->frames[m->stacks[s->stack].frame].module))
		return false;
	if (!item_kept(fs, KEY_WAIT_KIND, report_sample_wait_kind(r, s)) ||
	    !item_kept(fs, KEY_SYNC_OBJECT, report_sample_sync_object(r, s)))
		return false;
	region = report_sample_region(r, s);
	if (!item_kept(fs, KEY_REGION, region >= 0 ? region : (int)m->nregions))
		return false;
	/* language: of the frame the sample counts in, after -call-stack-mode */
	return !f->by_language ||
	       item_kept(fs, KEY_LANGUAGE, m->functions[leaf_function(r, s->stack)].python);
}

void report_filter_close(struct report_filter *f)
{
	if (!f)
		return;
	free(f->onstack);
	sets_release(&f->fs);
	free(f);
}

int report_filter_samples(struct report *r)
{
	const struct model *m = &r->m;
	struct report_filter *f;
	size_t i;
	int rc = report_filter_open(r, &f);

	if (rc)
		return rc;
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

		if (!report_filter_keep(r, f, s))
			continue;
		node = cct_leaf(&r->tree, s->stack);
		if (node < 0) {
			rc = -ENOMEM;
			goto out;
		}
		rec = &r->recs[r->nrecs++];
		*rec = (struct record){ (int)i, node };
		r->total[s->metric] = sat_add_i64(r->total[s->metric], s->value);
		r->count[s->metric] = sat_add_i64(r->count[s->metric], s->count);
		cct_add(&r->tree, node, s->metric, s->value, s->count);
	}
	rc = cct_sum(&r->tree);
out:
	report_filter_close(f);
	return rc;
}
