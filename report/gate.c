/* SPDX-License-Identifier: MIT */
/* -fail-if-slower: the regression gate over two sets of runs, its notes and JUnit XML. */
#define LOG_DOMAIN "report"
#include <errno.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <strings.h>

#include "common/log.h"
#include "report/rank-test.h"
#include "report/report-private.h"

/*
 * Each side is a set of runs (-r PATTERN; a single result is one run). Per run, the main
 * metric's total and each function's self value over the samples the filters keep; per
 * item (the total, and each function above -threshold percent of either side's total), a
 * one-sided Mann-Whitney U test of "the new runs take more" and the Hodges-Lehmann shift,
 * as a percentage of the base runs' median, with its lower (1 - alpha) bound. An item is
 * slower when p < alpha and that lower bound exceeds PCT: both the test and the size.
 */

/* One side: per run, the total and each function's self value of the metric. */
struct side {
	const struct report *r;
	int metric;
	size_t nruns;
	double *total; /* [run] */
	double *self;  /* [function * nruns + run] */
	double sum;    /* over every run */
	double *fsum;  /* [function]: over every run */
};

static void side_release(struct side *s)
{
	FREE_ALL(s->total, s->self, s->fsum);
}

static int side_load(struct side *s, const struct report *r, const char *metric)
{
	const struct model *m = &r->m;
	size_t i;

	memset(s, 0, sizeof(*s));
	s->r = r;
	s->nruns = m->nruns ? m->nruns : 1;
	for (s->metric = 0;
	     (size_t)s->metric < m->nmetrics && strcasecmp(m->metrics[s->metric].name, metric);
	     s->metric++)
		;
	s->total = calloc(s->nruns, sizeof(double));
	s->self = calloc(m->nfunctions * s->nruns + 1, sizeof(double));
	s->fsum = calloc(m->nfunctions + 1, sizeof(double));
	if (!s->total || !s->self || !s->fsum)
		return -ENOMEM;
	for (i = 0; i < r->nrecs; i++) {
		const struct model_sample *x = report_sample(r, &r->recs[i]);
		int run = report_sample_run(r, x), f = r->tree.nodes[r->recs[i].node].func;
		double v = (double)x->value;

		if (x->metric != s->metric)
			continue;
		run = run < 0 ? 0 : run;
		s->total[run] += v;
		s->sum += v;
		if (f >= 0) {
			s->self[(size_t)f * s->nruns + (size_t)run] += v;
			s->fsum[f] += v;
		}
	}
	return 0;
}

/* The module name of function f ("" for Python or unknown). */
static const char *module_of(const struct model *m, int f)
{
	int mod = m->functions[f].module;

	return mod >= 0 ? m->modules[mod].name : "";
}

/* Function f of side a in side b (same shown name and module), or -1. */
static int match(const struct side *a, int f, const struct side *b)
{
	size_t i;

	for (i = 0; i < b->r->m.nfunctions; i++)
		if (!strcmp(a->r->fnames[f], b->r->fnames[i]) &&
		    !strcmp(module_of(&a->r->m, f), module_of(&b->r->m, (int)i)))
			return (int)i;
	return -1;
}

/* One judged item: the total or a function. */
struct item {
	char name[512];
	struct rank_test t;
	double effect, lower; /* percent of the base median; lower: -HUGE_VAL when unreachable */
	bool slower;
};

struct gate {
	const struct report_opts *o;
	struct item *items;
	size_t n;
	size_t nfailed;
	double floor;  /* the least median a run an item needs to be judged (metric's unit) */
	size_t nsmall; /* items left out under it */
};

static int judge(struct gate *g, const char *name, const double *a, size_t na, const double *b,
		 size_t nb)
{
	struct item *it = &g->items[g->n];
	double base = rank_test_median(a, na), now = rank_test_median(b, nb);
	int rc;

	/* A few samples a run: one more or less is a change of many percent, noise. */
	if (base < g->floor && now < g->floor) {
		g->nsmall++;
		return 0;
	}
	if ((rc = rank_test_run(a, na, b, nb, g->o->fail_alpha, &it->t)))
		return rc;
	snprintf(it->name, sizeof(it->name), "%s", name);
	it->effect = base > 0 ? 100 * it->t.shift / base : it->t.shift > 0 ? HUGE_VAL : 0;
	it->lower = base > 0 && it->t.lower != -HUGE_VAL ? 100 * it->t.lower / base
		    : it->t.lower > 0                    ? HUGE_VAL
							 : -HUGE_VAL;
	it->slower = it->t.p < g->o->fail_alpha && it->lower > g->o->fail_if_slower;
	g->nfailed += it->slower;
	g->n++;
	return 0;
}

/* The items of both sides: the total, then each function above the threshold on a side. */
static int gate_judge(struct gate *g, struct side *a, struct side *b, const char *metric)
{
	const struct model *ma = &a->r->m, *mb = &b->r->m;
	double *va = malloc((a->nruns + 1) * sizeof(double));
	double *vb = malloc((b->nruns + 1) * sizeof(double));
	bool *done = calloc(mb->nfunctions + 1, sizeof(bool));
	char name[512];
	size_t i, k;
	int rc = -ENOMEM;

	g->items = calloc(ma->nfunctions + mb->nfunctions + 1, sizeof(*g->items));
	if (!va || !vb || !done || !g->items)
		goto out;
	snprintf(name, sizeof(name), "Total %s", metric);
	if ((rc = judge(g, name, a->total, a->nruns, b->total, b->nruns)))
		goto out;
	for (i = 0; i < ma->nfunctions + mb->nfunctions && !rc; i++) {
		bool in_a = i < ma->nfunctions;
		struct side *s = in_a ? a : b, *o = in_a ? b : a;
		int f = (int)(in_a ? i : i - ma->nfunctions), h;

		if (s->fsum[f] <= 0 || s->fsum[f] * 100 < g->o->threshold * s->sum ||
		    (!in_a && done[f]))
			continue;
		h = match(s, f, o);
		if (in_a && h >= 0)
			done[h] = true;
		for (k = 0; k < s->nruns; k++)
			(in_a ? va : vb)[k] = s->self[(size_t)f * s->nruns + k];
		for (k = 0; k < o->nruns; k++)
			(in_a ? vb : va)[k] = h >= 0 ? o->self[(size_t)h * o->nruns + k] : 0;
		snprintf(name, sizeof(name), "%s%s%s%s", s->r->fnames[f],
			 *module_of(&s->r->m, f) ? " (" : "", module_of(&s->r->m, f),
			 *module_of(&s->r->m, f) ? ")" : "");
		rc = judge(g, name, va, a->nruns, vb, b->nruns);
	}
out:
	FREE_ALL(va, vb, done);
	return rc;
}

static void pct(char *buf, size_t size, double v)
{
	if (v == HUGE_VAL)
		snprintf(buf, size, "new");
	else if (v == -HUGE_VAL)
		snprintf(buf, size, "none (too few runs)");
	else
		snprintf(buf, size, "%+.1f%%", v);
}

static void gate_notes(const struct gate *g, const struct side *a, const struct side *b,
		       struct table *t)
{
	size_t i;

	table_add_note(t,
		       "gate: -fail-if-slower %g: one-sided Mann-Whitney U over %zu base and %zu "
		       "new runs, alpha %g; effect: Hodges-Lehmann shift / base median, with its "
		       "lower %g%% bound; slower when p < alpha and the bound exceeds %g%%",
		       g->o->fail_if_slower, a->nruns, b->nruns, g->o->fail_alpha,
		       100 * (1 - g->o->fail_alpha), g->o->fail_if_slower);
	for (i = 0; i < g->n; i++) {
		const struct item *it = &g->items[i];
		char e[32], l[32];

		pct(e, sizeof(e), it->effect);
		pct(l, sizeof(l), it->lower);
		table_add_note(t, "gate: %s: %s: effect %s, lower bound %s, p %.4g (%s, U %g)",
			       it->slower ? "SLOWER" : "ok", it->name, e, l, it->t.p,
			       it->t.exact ? "exact" : "normal", it->t.u);
	}
	if (g->nsmall)
		table_add_note(t,
			       "gate: %zu functions left out: under %.0f sampling intervals a run "
			       "on both sides (100 / PCT: one sample would be more than PCT)",
			       g->nsmall, g->floor / (double)a->r->m.interval_ns);
	table_add_note(t, "gate: %s: %zu of %zu items slower by more than %g%%",
		       g->nfailed ? "FAILED" : "passed", g->nfailed, g->n, g->o->fail_if_slower);
}

/* XML text: the five characters escaped, control characters left out. */
static void xml_put(FILE *f, const char *s)
{
	for (; *s; s++)
		if (*s == '<')
			fputs("&lt;", f);
		else if (*s == '>')
			fputs("&gt;", f);
		else if (*s == '&')
			fputs("&amp;", f);
		else if (*s == '"')
			fputs("&quot;", f);
		else if (*s == '\'')
			fputs("&apos;", f);
		else if ((unsigned char)*s >= 0x20 && *s != 0x7f)
			fputc(*s, f);
}

/* -junit FILE: a test suite, a test case per item, a failure per slower one. */
static int gate_junit(const struct gate *g)
{
	struct report_opts o = *g->o;
	struct report_out out;
	size_t i;
	int rc;

	o.output = g->o->junit;
	if ((rc = report_output_open(&o, &out)))
		return rc;
	fprintf(out.f,
		"<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n"
		"<testsuites>\n<testsuite name=\"preport.fail-if-slower\" tests=\"%zu\" "
		"failures=\"%zu\" errors=\"0\">\n",
		g->n, g->nfailed);
	for (i = 0; i < g->n; i++) {
		const struct item *it = &g->items[i];
		char e[32], l[32], msg[256];

		pct(e, sizeof(e), it->effect);
		pct(l, sizeof(l), it->lower);
		snprintf(msg, sizeof(msg), "effect %s, lower bound %s, p %.4g: %s %g%%", e, l,
			 it->t.p, it->slower ? "slower by more than" : "not shown slower by",
			 g->o->fail_if_slower);
		fputs("<testcase classname=\"preport.gate\" name=\"", out.f);
		xml_put(out.f, it->name);
		fputs("\">", out.f);
		if (it->slower) {
			fputs("<failure message=\"", out.f);
			xml_put(out.f, msg);
			fputs("\" type=\"slower\"/>", out.f);
		}
		fputs("<system-out>", out.f);
		xml_put(out.f, msg);
		fputs("</system-out></testcase>\n", out.f);
	}
	fputs("</testsuite>\n</testsuites>\n", out.f);
	rc = report_output_close(&out, ferror(out.f) ? -EIO : 0);
	if (rc)
		log_error("cannot write '%s': %s", g->o->junit, strerror(-rc));
	return rc;
}

int report_gate(const struct report *a, const struct report *b, struct table *t, bool *slower)
{
	const char *metric = a->m.metrics[a->shown[0]].name;
	struct side sa = { 0 }, sb = { 0 };
	struct gate g = { .o = a->o };
	size_t i;
	int rc;

	*slower = false;
	rc = side_load(&sa, a, metric);
	if (!rc)
		rc = side_load(&sb, b, metric);
	/* A time metric counts sampling intervals: an item needs 100 / PCT of them a run. */
	if (!rc && a->m.metrics[a->shown[0]].unit == MODEL_UNIT_NS && a->m.interval_ns > 0)
		g.floor = (double)a->m.interval_ns * 100 /
			  (a->o->fail_if_slower > 1 ? a->o->fail_if_slower : 1);
	if (!rc)
		rc = gate_judge(&g, &sa, &sb, metric);
	if (!rc) {
		gate_notes(&g, &sa, &sb, t);
		for (i = 0; i < g.n; i++)
			if (g.items[i].slower)
				log_error(
					"slower: %s by %+.1f%% (lower bound %+.1f%%, p %.4g), more "
					"than -fail-if-slower %g%%",
					g.items[i].name, g.items[i].effect, g.items[i].lower,
					g.items[i].t.p, a->o->fail_if_slower);
		*slower = g.nfailed > 0;
		if (a->o->junit)
			rc = gate_junit(&g);
	} else if (rc == -ENOMEM) {
		log_error("cannot judge the runs: %s", strerror(ENOMEM));
	}
	side_release(&sa);
	side_release(&sb);
	free(g.items);
	return rc;
}
