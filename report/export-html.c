/* SPDX-License-Identifier: MIT */
/* -format html: one self-contained page, the profile's data as JSON and a script to show it. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "common/log.h"
#include "common/sat.h"
#include "report/export-html.h"

/*
 * The page holds aggregates only, never a sample: the call tree by function, each function's
 * self and total, the values per source line, the source of the heaviest functions, the
 * summary, and per thread its values in HTML_TIMELINE_BINS slices of time. Values of a metric
 * are written in units of their greatest common divisor (the sampling interval for CPU
 * Time), "scale" in the metric's unit, which keeps the numbers short.
 */

void html_put_str(struct outbuf *b, const char *s)
{
	outbuf_json(b, s ? s : "", s ? strlen(s) : 0, OUTBUF_JSON_HTML);
}

/* In unsigned magnitudes: -INT64_MIN has no int64_t (a forged result's values). */
static int64_t gcd(int64_t sa, int64_t sb)
{
	uint64_t a = sa < 0 ? -(uint64_t)sa : (uint64_t)sa,
		 b = sb < 0 ? -(uint64_t)sb : (uint64_t)sb;

	while (b) {
		uint64_t t = a % b;

		a = b;
		b = t;
	}
	/* gcd(INT64_MIN, 0) is 2^63: no divisor a value can be written in units of but 1 then. */
	return a > INT64_MAX ? 1 : (int64_t)a;
}

/* Per metric: the divisor of every value the page writes scaled (1 when there is none). */
static void scales(const struct html *h, int64_t *scale)
{
	const struct cct *t = &h->r[0].tree;
	size_t k, s, i, j, w = h->nr * h->nmetrics;

	for (k = 0; k < h->nmetrics; k++) {
		int64_t g = 0;

		for (s = 0; s < h->nr; s++)
			for (i = 0; i < h->nnodes && g != 1; i++)
				g = gcd(g, h->self[i * w + s * h->nmetrics + k]);
		for (i = 0; i < h->nlines && g != 1; i++) {
			size_t at = (size_t)h->lines[i].loc * t->nm + (size_t)h->metrics[0][k];

			g = gcd(gcd(g, h->lw.self[at]), h->lw.total[at]);
		}
		for (i = 0; i < h->nlanes && g != 1; i++)
			for (j = 0; h->lanes[i].bins && j < HTML_TIMELINE_BINS && g != 1; j++)
				g = gcd(g, h->lanes[i].bins[k * HTML_TIMELINE_BINS + j]);
		scale[k] = g ? g : 1;
	}
}

static void put_metrics(struct html *h, const int64_t *scale)
{
	size_t k, s;

	outbuf_puts(h->b, "\"metrics\": [");
	for (k = 0; k < h->nmetrics; k++) {
		const struct model_metric *mt = &h->r[0].m.metrics[h->metrics[0][k]];

		outbuf_puts(h->b, k ? ",\n{\"name\": " : "\n{\"name\": ");
		html_put_str(h->b, mt->name);
		outbuf_printf(h->b,
			      ", \"unit\": \"%s\", \"main\": %s, \"scale\": %lld, \"total\": [",
			      export_unit(mt), mt->main ? "true" : "false", (long long)scale[k]);
		for (s = 0; s < h->nr; s++)
			outbuf_printf(h->b, "%s%lld", s ? ", " : "",
				      (long long)(h->metrics[s][k] >= 0
							  ? h->r[s].total[h->metrics[s][k]]
							  : 0));
		outbuf_puts(h->b, "], \"description\": ");
		html_put_str(h->b, mt->description);
		outbuf_putc(h->b, '}');
	}
	outbuf_puts(h->b, "],\n");
}

/* The summary view's rows (section, metric, value, unit, percent), as its CSV has them. */
static int put_summary(struct html *h)
{
	struct table t;
	size_t row;
	int col, rc;
	char num[TABLE_NUM_MAX];
	const char *s;

	table_init(&t);
	rc = view_summary(&h->r[h->nr - 1], &t);
	if (!rc && t.failed)
		rc = -ENOMEM;
	outbuf_puts(h->b, "\"summary\": [");
	for (row = 0; !rc && row < t.nrows; row++) {
		if (t.rowflags[row] & (TABLE_ROW_SEPARATOR | TABLE_ROW_TEXT_ONLY))
			continue;
		outbuf_puts(h->b, row ? ",\n[" : "\n[");
		for (col = 0; col < (int)t.ncols; col++) {
			size_t len = table_cell_text(&t, row, col, false, num, &s);

			if (col)
				outbuf_putc(h->b, ',');
			outbuf_json(h->b, s, len, OUTBUF_JSON_HTML);
		}
		outbuf_putc(h->b, ']');
	}
	outbuf_puts(h->b, "],\n");
	table_release(&t);
	return rc;
}

static void put_names(struct html *h, const char *key, const struct export_names *ns)
{
	size_t i;

	outbuf_printf(h->b, "\"%s\": [", key);
	for (i = 0; i < ns->n; i++) {
		if (i)
			outbuf_puts(h->b, i % 16 ? "," : ",\n");
		html_put_str(h->b, ns->s[i]);
	}
	outbuf_puts(h->b, "],\n");
	outbuf_spill(h->b);
}

static void put_functions(struct html *h)
{
	size_t i;

	outbuf_puts(h->b, "\"functions\": [");
	for (i = 0; i < h->nfn; i++) {
		const struct html_fn *f = &h->fn[i];

		outbuf_printf(h->b, "%s[%d,%d,%d,%d,%d]", i ? (i % 16 ? "," : ",\n") : "", f->name,
			      f->module, f->file, f->line, f->kind);
	}
	outbuf_puts(h->b, "],\n");
}

/* Totals per node and series (side and metric), summed from the leaves up. */
static int64_t *node_totals(const struct html *h)
{
	size_t w = h->nr * h->nmetrics, i, j;
	int64_t *tot = malloc((h->nnodes + 1) * w * sizeof(int64_t));

	if (!tot)
		return NULL;
	memcpy(tot, h->self, h->nnodes * w * sizeof(int64_t));
	for (i = h->nnodes; i-- > 1;)
		for (j = 0; j < w; j++)
			tot[(size_t)h->node[i].parent * w + j] =
				sat_add_i64(tot[(size_t)h->node[i].parent * w + j], tot[i * w + j]);
	return tot;
}

static int larger_first(const void *pa, const void *pb)
{
	double a = *(const double *)pa, b = *(const double *)pb;

	return a > b ? -1 : a < b;
}

/*
 * Which nodes the page gets: all, or when there are more than HTML_MAX_NODES the heaviest
 * (by their largest share of a total); the rest count as "other" in their parent.
 */
static int pick_nodes(const struct html *h, const int64_t *tot, bool *keep, size_t *dropped)
{
	size_t w = h->nr * h->nmetrics, i, j;
	double *share, cut;

	*dropped = 0;
	for (i = 0; i < h->nnodes; i++)
		keep[i] = true;
	if (h->nnodes <= HTML_MAX_NODES)
		return 0;
	share = malloc(h->nnodes * sizeof(double));
	if (!share)
		return -ENOMEM;
	for (i = 0; i < h->nnodes; i++) {
		share[i] = 0;
		for (j = 0; j < w; j++)
			if (tot[j] > 0 && (double)tot[i * w + j] / (double)tot[j] > share[i])
				share[i] = (double)tot[i * w + j] / (double)tot[j];
	}
	/* A node's share is at most its parent's: the cut keeps whole paths from the root. */
	{
		double *sorted = malloc(h->nnodes * sizeof(double));

		if (!sorted) {
			free(share);
			return -ENOMEM;
		}
		memcpy(sorted, share, h->nnodes * sizeof(double));
		qsort(sorted, h->nnodes, sizeof(double), larger_first);
		cut = sorted[HTML_MAX_NODES - 1];
		free(sorted);
	}
	for (i = 1; i < h->nnodes; i++)
		if (share[i] < cut || !keep[h->node[i].parent]) {
			keep[i] = false;
			(*dropped)++;
		}
	free(share);
	return 0;
}

/*
 * The tree in depth-first order, heaviest child first: per node its depth, function, and per
 * series its self value (scaled); "other" per series, when nodes were left out, holds what
 * they added to their parent's total.
 */
static int put_tree(struct html *h, const int64_t *scale, size_t *dropped)
{
	size_t w = h->nr * h->nmetrics, i, j, n = 0, sp = 0, nk;
	int64_t *tot = node_totals(h);
	bool *keep = malloc((h->nnodes + 1) * sizeof(bool));
	int *order = malloc((h->nnodes + 1) * sizeof(int));
	int *stack = malloc((h->nnodes + 1) * sizeof(int));
	int *kids = malloc((h->nnodes + 1) * sizeof(int));
	int64_t *other = calloc((h->nnodes + 1) * w, sizeof(int64_t));
	int *depth = malloc((h->nnodes + 1) * sizeof(int));
	struct report_heavier o = { .v = tot, .stride = w, .col = (h->nr - 1) * h->nmetrics };
	int rc = -ENOMEM;

	if (!tot || !keep || !order || !stack || !kids || !other || !depth)
		goto out;
	if ((rc = pick_nodes(h, tot, keep, dropped)))
		goto out;
	for (i = h->nnodes; i-- > 1;)
		if (!keep[i] && keep[h->node[i].parent])
			for (j = 0; j < w; j++)
				other[(size_t)h->node[i].parent * w + j] =
					sat_add_i64(other[(size_t)h->node[i].parent * w + j],
						    tot[i * w + j]);
	for (i = 1; i < h->nnodes; i++) {
		struct html_node *p = &h->node[h->node[i].parent];

		h->node[i].next_sibling = p->first_child;
		p->first_child = (int)i;
	}
	depth[0] = 0;
	stack[sp++] = 0;
	while (sp) {
		int u = stack[--sp], c;

		order[n++] = u;
		for (nk = 0, c = h->node[u].first_child; c >= 0; c = h->node[c].next_sibling)
			if (keep[c])
				kids[nk++] = c;
		qsort_r(kids, nk, sizeof(int), report_heavier_cmp, &o);
		while (nk--) {
			depth[kids[nk]] = depth[u] + 1;
			stack[sp++] = kids[nk];
		}
	}
	outbuf_puts(h->b, "\"tree\": {\"depth\": [");
	for (i = 0; i < n; i++) {
		outbuf_puts(h->b, i ? (i % 64 ? "," : ",\n") : "");
		outbuf_int(h->b, depth[order[i]]);
		outbuf_spill(h->b);
	}
	outbuf_puts(h->b, "],\n\"fn\": [");
	for (i = 0; i < n; i++) {
		outbuf_puts(h->b, i ? (i % 64 ? "," : ",\n") : "");
		outbuf_int(h->b, h->node[order[i]].fn);
		outbuf_spill(h->b);
	}
	for (int pass = 0; pass < (*dropped ? 2 : 1); pass++) {
		const int64_t *v = pass ? other : h->self;

		outbuf_puts(h->b, pass ? "],\n\"other\": [" : "],\n\"self\": [");
		for (j = 0; j < w; j++) {
			outbuf_puts(h->b, j ? "],\n[" : "\n[");
			for (i = 0; i < n; i++) {
				int64_t x = v[(size_t)order[i] * w + j] / scale[j % h->nmetrics];

				outbuf_puts(h->b, i ? (i % 64 ? "," : ",\n") : "");
				outbuf_int(h->b, x);
				outbuf_spill(h->b);
			}
		}
		outbuf_putc(h->b, ']');
	}
	outbuf_puts(h->b, "]},\n");
	rc = 0;
out:
	free(tot);
	free(keep);
	free(order);
	free(stack);
	free(kids);
	free(other);
	free(depth);
	return rc;
}

/* Each function's self and total per series, exact (in the metric's unit). */
static void put_hot(struct html *h)
{
	size_t w = h->nr * h->nmetrics, i, j, side;

	outbuf_puts(h->b, "\"hot\": {");
	for (side = 0; side < 2; side++) {
		outbuf_puts(h->b, side ? "],\n\"total\": [" : "\"self\": [");
		for (j = 0; j < w; j++) {
			outbuf_puts(h->b, j ? "],\n[" : "\n[");
			for (i = 0; i < h->nfn; i++) {
				int64_t x = h->hot[i * 2 * w + side * w + j];

				outbuf_puts(h->b, i ? (i % 64 ? "," : ",\n") : "");
				outbuf_int(h->b, x);
			}
			outbuf_spill(h->b);
		}
		outbuf_putc(h->b, ']');
	}
	outbuf_puts(h->b, "]},\n");
}

/* Per source line with a value: [file, line, self per metric..., total per metric...]. */
static void put_lines(struct html *h, const int64_t *scale)
{
	const struct cct *t = &h->r[0].tree;
	size_t i, k;

	outbuf_puts(h->b, "\"lines\": [");
	for (i = 0; h->nr == 1 && i < h->nlines; i++) {
		const struct html_line *l = &h->lines[i];

		outbuf_printf(h->b, "%s[%d,%d", i ? ",\n" : "", l->file, l->line);
		for (k = 0; k < 2 * h->nmetrics; k++) {
			const int64_t *v = k < h->nmetrics ? h->lw.self : h->lw.total;
			size_t m = k % h->nmetrics;

			outbuf_putc(h->b, ',');
			outbuf_int(h->b,
				   v[(size_t)l->loc * t->nm + (size_t)h->metrics[0][m]] / scale[m]);
		}
		outbuf_putc(h->b, ']');
		outbuf_spill(h->b);
	}
	outbuf_puts(h->b, "],\n");
}

/* A file's lines, read once (lines point into text). */
struct src_file {
	char *text;
	char **line; /* line[i]: line i + 1 */
	size_t nlines;
};

static int read_lines(const struct report *r, const char *path, struct src_file *sf)
{
	FILE *f = report_open_source(r, path);
	size_t len = 0, cap = 0, lcap = 0;
	char buf[65536], *p;
	size_t n;

	memset(sf, 0, sizeof(*sf));
	if (!f)
		return 0;
	/* Files larger than 8 MB are not a function's source worth a page. */
	while ((n = fread(buf, 1, sizeof(buf), f)) > 0 && len < (8 << 20)) {
		if (array_reserve(&sf->text, &cap, len + n + 1, 1)) {
			fclose(f);
			return -ENOMEM;
		}
		memcpy(sf->text + len, buf, n);
		len += n;
	}
	fclose(f);
	if (!sf->text)
		return 0;
	sf->text[len] = '\0';
	for (p = sf->text; p && *p;) {
		char *nl = strchr(p, '\n');

		if (GROW(sf->line, sf->nlines + 1, lcap))
			return -ENOMEM;
		sf->line[sf->nlines++] = p;
		if (nl)
			*nl = '\0';
		if (nl && nl > p && nl[-1] == '\r')
			nl[-1] = '\0';
		p = nl ? nl + 1 : NULL;
	}
	return 0;
}

static int cmp_fn_total(const void *pa, const void *pb, void *arg)
{
	const struct html *h = arg;
	int a = *(const int *)pa, b = *(const int *)pb;
	size_t w = h->nr * h->nmetrics, col = w + (h->nr - 1) * h->nmetrics;
	int64_t va = h->hot[(size_t)a * 2 * w + col], vb = h->hot[(size_t)b * 2 * w + col];

	if (va != vb)
		return va > vb ? -1 : 1;
	return a < b ? -1 : a > b;
}

/*
 * The last line of the function defined at line in model file: before the next definition
 * after its last line with samples (last_data), as the source view does. A comprehension, a
 * generator expression or a lambda is a function of its own defined inside it (Python), and
 * must not end it: its lines are the enclosing function's lines with samples.
 */
static int function_end(const struct model *m, int file, int line, int last_data)
{
	int after = last_data > line ? last_data : line;
	int end = after + HTML_SOURCE_LINES - 1;
	size_t i;

	if (end > line + HTML_SOURCE_LINES - 1)
		end = line + HTML_SOURCE_LINES - 1;
	for (i = 0; i < m->nfunctions; i++)
		if (m->functions[i].file == file && m->functions[i].line > after &&
		    m->functions[i].line - 1 < end)
			end = m->functions[i].line - 1;
	return end;
}

/* Per function of r's model: the last line of its file with samples in it (0: none). */
static int *last_lines(const struct report *r)
{
	const struct cct *t = &r->tree;
	int *last = calloc(r->m.nfunctions + 1, sizeof(int));
	size_t i;

	for (i = 1; last && i < t->n; i++) {
		const struct cct_node *nd = &t->nodes[i];

		if (nd->func >= 0 && nd->loc >= 0 && t->locs[nd->loc].file >= 0 &&
		    t->locs[nd->loc].file == r->m.functions[nd->func].file &&
		    t->locs[nd->loc].line > last[nd->func])
			last[nd->func] = t->locs[nd->loc].line;
	}
	return last;
}

/*
 * The source of the heaviest functions (HTML_SOURCE_FUNCTIONS at most, HTML_SOURCE_BYTES of
 * text): [file, first line, [lines]] per function, each from its definition to the line
 * before the next function defined in its file.
 */
static int put_sources(struct html *h)
{
	int *by = malloc((h->nfn + 1) * sizeof(int));
	size_t i, n = 0, bytes = 0, shown = 0;
	struct src_file *files = calloc(h->files.n + 1, sizeof(*files));
	bool *tried = calloc(h->files.n + 1, sizeof(bool));
	int *last_data[2] = { NULL, NULL };
	int rc = 0;

	for (i = 0; i < h->nr && i < 2; i++)
		if (!(last_data[i] = last_lines(&h->r[i])))
			rc = -ENOMEM;
	if (rc || !by || !files || !tried) {
		rc = -ENOMEM;
		goto out;
	}
	for (i = 0; i < h->nfn; i++)
		if (h->fn[i].kind != 2 && h->fn[i].file >= 0 && h->fn[i].line > 0)
			by[n++] = (int)i;
	qsort_r(by, n, sizeof(int), cmp_fn_total, h);
	outbuf_puts(h->b, "\"sources\": [");
	for (i = 0; i < n && shown < HTML_SOURCE_FUNCTIONS && bytes < HTML_SOURCE_BYTES; i++) {
		const struct html_fn *f = &h->fn[by[i]];
		const struct report *r = &h->r[f->side];
		const struct model_function *mf = &r->m.functions[f->func];
		struct src_file *sf = &files[f->file];
		int first = f->line, last, ln;

		if (!tried[f->file]) {
			tried[f->file] = true;
			if ((rc = read_lines(r, h->files.s[f->file], sf)))
				break;
		}
		if (!sf->nlines || (size_t)first > sf->nlines)
			continue;
		last = function_end(&r->m, mf->file, first, last_data[f->side][f->func]);
		if ((size_t)last > sf->nlines)
			last = (int)sf->nlines;
		outbuf_printf(h->b, "%s[%d,%d,%d,[", shown ? ",\n" : "\n", by[i], f->file, first);
		for (ln = first; ln <= last; ln++) {
			const char *text = sf->line[ln - 1];

			if (ln > first)
				outbuf_putc(h->b, ',');
			html_put_str(h->b, text);
			bytes += strlen(text) + 3;
		}
		outbuf_puts(h->b, "]]");
		outbuf_spill(h->b);
		shown++;
	}
	outbuf_puts(h->b, "],\n");
out:
	for (i = 0; files && i < h->files.n; i++) {
		free(files[i].text);
		free(files[i].line);
	}
	free(files);
	free(tried);
	free(by);
	free(last_data[0]);
	free(last_data[1]);
	return rc;
}

static int cmp_lane(const void *pa, const void *pb)
{
	const struct html_lane *a = pa, *b = pb;

	if (a->total != b->total)
		return a->total > b->total ? -1 : 1;
	return a->thread < b->thread ? -1 : a->thread > b->thread;
}

/* Per thread, its values in slices of the run's time (or of -time-filter's window). */
static int timeline(struct html *h)
{
	struct report *r = &h->r[0];
	struct model_event *ev = NULL;
	struct export_kept kept;
	int *node = NULL;
	size_t nev = 0, i, k;
	int64_t from, to, lo = INT64_MAX, hi = 0;
	char err[1024] = "too many threads or metrics for the timeline";
	int rc;

	export_window(r, &from, &to);
	if ((rc = export_kept_init(&kept, r)) ||
	    (rc = model_load_events(&r->m, from, to, &ev, &nev, err, sizeof(err)))) {
		/* Without a timeline the page still shows the rest. */
		if (rc != -ENOMEM)
			log_warn("%s: the HTML report has no timeline", err);
		rc = rc == -ENOMEM ? rc : 0;
		goto out;
	}
	/* Each event's node, looked up once for both passes. */
	if (!(node = malloc((nev + 1) * sizeof(*node)))) {
		rc = -ENOMEM;
		goto out;
	}
	for (i = 0; i < nev; i++)
		if ((node[i] = export_kept_node(&kept, &ev[i])) >= 0) {
			lo = ev[i].time_ns < lo ? ev[i].time_ns : lo;
			hi = ev[i].time_ns > hi ? ev[i].time_ns : hi;
		}
	if (lo > hi)
		goto out;
	h->lanes = calloc(r->m.nthreads + 1, sizeof(*h->lanes));
	if (!h->lanes) {
		rc = -ENOMEM;
		goto out;
	}
	h->nlanes = r->m.nthreads + 1;
	/* From the window's start (the run's without -time-filter) to the last event. */
	h->tl_start = from < lo ? from : lo;
	h->tl_span = sat_add_i64(sat_sub_i64(hi, h->tl_start), 1);
	/* Slices of two sampling intervals at least, so that a busy thread reads as one band. */
	h->tl_bins = HTML_TIMELINE_BINS;
	if (r->m.interval_ns > 0 &&
	    h->tl_span / sat_mul_i64(2, r->m.interval_ns) < HTML_TIMELINE_BINS)
		h->tl_bins = (size_t)(h->tl_span / sat_mul_i64(2, r->m.interval_ns));
	if (h->tl_bins < 20)
		h->tl_bins = 20;
	for (i = 0; i < h->nlanes; i++)
		h->lanes[i].thread = (int)i - 1;
	for (i = 0; i < nev; i++) {
		const struct model_event *e = &ev[i];
		struct html_lane *l = &h->lanes[e->thread + 1];
		size_t bin = (size_t)((double)(e->time_ns - h->tl_start) / (double)h->tl_span *
				      (double)h->tl_bins);

		if (node[i] < 0)
			continue;
		for (k = 0; k < h->nmetrics && h->metrics[0][k] != e->metric; k++)
			;
		if (k == h->nmetrics)
			continue;
		if (!l->bins &&
		    !(l->bins = calloc(h->nmetrics * HTML_TIMELINE_BINS, sizeof(int64_t)))) {
			rc = -ENOMEM;
			goto out;
		}
		bin = k * HTML_TIMELINE_BINS + (bin < h->tl_bins ? bin : h->tl_bins - 1);
		/* Saturated, as every sum of a forged result's values near 2^63. */
		l->bins[bin] = sat_add_i64(l->bins[bin], e->value);
		if (!k)
			l->total = sat_add_i64(l->total, e->value);
	}
	qsort(h->lanes, h->nlanes, sizeof(*h->lanes), cmp_lane);
out:
	free(node);
	free(ev);
	export_kept_release(&kept);
	return rc;
}

/* The heaviest HTML_TIMELINE_THREADS threads' lanes; "more" counts the others. */
static void put_timeline(struct html *h, const int64_t *scale)
{
	size_t i, k, nl, more = 0;
	char name[512];

	if (!h->lanes) {
		outbuf_puts(h->b, "\"timeline\": null,\n");
		return;
	}
	outbuf_printf(h->b,
		      "\"timeline\": {\"start\": %lld, \"end\": %lld, \"bins\": %zu, "
		      "\"threads\": [",
		      (long long)h->tl_start, (long long)(h->tl_start + h->tl_span), h->tl_bins);
	for (i = 0; i < h->nlanes; i++)
		more += h->lanes[i].bins != NULL;
	for (nl = 0; nl < HTML_TIMELINE_THREADS && nl < h->nlanes && h->lanes[nl].bins; nl++) {
		int t = h->lanes[nl].thread;
		const struct model_thread *th = t >= 0 ? &h->r[0].m.threads[t] : NULL;

		report_thread_label(th, name, sizeof(name));
		outbuf_puts(h->b, nl ? ",\n{\"name\": " : "\n{\"name\": ");
		html_put_str(h->b, name);
		outbuf_puts(h->b, ", \"values\": [");
		for (k = 0; k < h->nmetrics; k++) {
			outbuf_puts(h->b, k ? "],[" : "[");
			for (i = 0; i < h->tl_bins; i++) {
				if (i)
					outbuf_putc(h->b, ',');
				outbuf_int(h->b, h->lanes[nl].bins[k * HTML_TIMELINE_BINS + i] /
							 scale[k]);
			}
		}
		outbuf_puts(h->b, "]]}");
		outbuf_spill(h->b);
	}
	outbuf_printf(h->b, "], \"more\": %zu},\n", more - nl);
}

static void put_page_head(struct html *h)
{
	const char *cmd = model_meta_get(&h->r[0].m, "command_line"), *p;

	outbuf_puts(h->b,
		    "<!DOCTYPE html>\n<html lang=\"en\">\n<head>\n<meta charset=\"utf-8\">\n"
		    "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">\n"
		    "<title>");
	outbuf_puts(h->b, h->nr == 2 ? "pcollect difference: " : "pcollect: ");
	for (p = cmd ? cmd : h->r[0].dir; *p; p++)
		if (*p == '<')
			outbuf_puts(h->b, "&lt;");
		else if (*p == '&')
			outbuf_puts(h->b, "&amp;");
		else if ((unsigned char)*p >= 0x20 && *p != 0x7f) /* no control character */
			outbuf_putc(h->b, *p);
	outbuf_puts(h->b, "</title>\n<style>\n");
	outbuf_puts(h->b, report_html_css);
	outbuf_puts(h->b, "</style>\n</head>\n<body>\n<div id=\"app\"><p>Loading the report...</p>"
			  "</div>\n<script type=\"application/json\" id=\"pcollect-data\">\n{");
}

static int put_data(struct html *h)
{
	const char *cmd = model_meta_get(&h->r[0].m, "command_line");
	int64_t scale[REPORT_MAX_METRICS];
	size_t s, dropped = 0;
	int rc;

	scales(h, scale);
	outbuf_puts(h->b, "\"format\": 1, \"generator\": \"preport (pcollect " PCOLLECT_VERSION
			  ")\",\n\"title\": ");
	html_put_str(h->b, cmd ? cmd : h->r[0].dir);
	outbuf_puts(h->b, ",\n\"results\": [");
	for (s = 0; s < h->nr; s++) {
		if (s)
			outbuf_putc(h->b, ',');
		html_put_str(h->b, h->r[s].dir);
	}
	outbuf_puts(h->b, "],\n");
	put_metrics(h, scale);
	if ((rc = put_summary(h)))
		return rc;
	put_names(h, "names", &h->names);
	put_names(h, "modules", &h->modules);
	put_names(h, "files", &h->files);
	put_functions(h);
	if ((rc = put_tree(h, scale, &dropped)))
		return rc;
	put_hot(h);
	put_lines(h, scale);
	if ((rc = put_sources(h)))
		return rc;
	put_timeline(h, scale);
	html_put_memory(h);
	if ((rc = html_put_mpi(h, scale)))
		return rc;
	outbuf_printf(h->b, "\"dropped\": %zu\n}\n</script>\n<script>\n", dropped);
	return 0;
}

int export_html(struct export_job *x)
{
	struct html h = { .r = x->r, .nr = x->nr, .nmetrics = x->nmetrics, .b = x->b };
	size_t k, s;
	int rc = 0;

	for (k = 0; k < x->nmetrics; k++) {
		h.metrics[0][k] = x->metrics[k];
		h.metrics[1][k] = -1;
		if (x->nr == 2) {
			int m = model_find_metric(&x->r[1].m,
						  x->r[0].m.metrics[x->metrics[k]].name);

			h.metrics[1][k] = m >= 0 && !x->r[1].skipped[m] ? m : -1;
		}
	}
	hash_index_init(&h.childmap);
	for (s = 0; s < h.nr && !rc; s++)
		rc = html_project(&h, (int)s);
	for (s = 0; s < h.nr && !rc; s++)
		rc = html_hotspots(&h, (int)s);
	if (!rc && h.nr == 1)
		rc = html_lines(&h);
	if (!rc && h.nr == 1)
		rc = timeline(&h);
	if (!rc && h.nr == 1)
		rc = html_memory(&h);
	if (!rc) {
		put_page_head(&h);
		rc = put_data(&h);
	}
	if (!rc) {
		outbuf_puts(h.b, report_html_js);
		outbuf_puts(h.b, "</script>\n<script>\n");
		outbuf_puts(h.b, report_html_views_js);
		outbuf_puts(h.b, "</script>\n<script>\n");
		outbuf_puts(h.b, report_html_mpi_js);
		outbuf_puts(h.b, "</script>\n</body>\n</html>\n");
	}
	EXPORT_NAMES_RELEASE(&h.names, &h.modules, &h.files);
	export_ids_release(&h.fids);
	hash_index_release(&h.childmap);
	cct_walk_release(&h.lw);
	FREE_ALL(h.fn, h.nodefn[0], h.nodefn[1], h.node, h.self, h.hot, h.lines);
	for (s = 0; s < h.nlanes; s++)
		free(h.lanes[s].bins);
	free(h.lanes);
	html_memory_release(&h);
	return rc;
}
