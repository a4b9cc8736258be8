/* SPDX-License-Identifier: MIT */
/* Unit tests of preport's table, its renderers and its index of keys. */
#include <inttypes.h>
#include <math.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/cmp.h"
#include "report/bigmem.h"
#include "report/escape.h"
#include "report/key-index.h"
#include "report/outbuf.h"
#include "report/radix.h"
#include "report/table.h"
#include "tests/unit/unit.h"

static char *render(const struct table *t, int format, int width)
{
	char *buf = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&buf, &size);
	int rc;

	CU_ASSERT_PTR_NOT_NULL_FATAL(f);

	if (format == 0)
		rc = table_render_text(t, f, width);
	else if (format == 1)
		rc = table_render_csv(t, f, ',');
	else
		rc = table_render_json(t, f, "hotspots");
	CU_ASSERT_EQUAL(rc, 0);
	fclose(f);
	return buf;
}

static void fill(struct table *t)
{
	int name, self, pct;
	size_t r;

	table_init(t);
	name = table_add_col(t, "Function", TABLE_TEXT, TABLE_SHRINK);
	self = table_add_col(t, "CPU Time:Self", TABLE_TIME, 0);
	pct = table_add_col(t, "CPU Time:Self %", TABLE_PCT, 0);
	r = table_add_row(t, 0);
	table_set_text(t, r, name, "short");
	table_set_time(t, r, self, 1234567890);
	table_set_pct(t, r, pct, 12.345);
	r = table_add_row(t, 0);
	table_set_text(t, r, name,
		       "a_very_long_function_name_with_\"quotes\",commas_and_more_and_more_"
		       "and_more_text_to_exceed_the_width");
	table_set_time(t, r, self, 2000000000);
	table_set_pct(t, r, pct, 50.0);
}

static void test_report_table_time_format(void)
{
	struct table t;
	char buf[64];
	size_t r;
	int c;

	table_init(&t);
	c = table_add_col(&t, "T", TABLE_TIME, 0);
	r = table_add_row(&t, 0);
	table_set_time(&t, r, c, 1234500000); /* 1.2345 s rounds half up */
	table_format_cell(&t, r, c, true, buf, sizeof(buf));
	CU_ASSERT_STRING_EQUAL(buf, "1.235s");
	table_format_cell(&t, r, c, false, buf, sizeof(buf));
	CU_ASSERT_STRING_EQUAL(buf, "1.235");
	table_set_time(&t, r, c, -4000000);
	table_format_cell(&t, r, c, false, buf, sizeof(buf));
	CU_ASSERT_STRING_EQUAL(buf, "-0.004");
	table_release(&t);
}

static void test_report_table_shorten_middle(void)
{
	char buf[64];

	table_shorten_middle("abcdefghijklmnopqrstuvwxyz", 11, buf, sizeof(buf));
	CU_ASSERT_STRING_EQUAL(buf, "abcd...wxyz");
	CU_ASSERT_EQUAL(strlen(buf), 11);
	table_shorten_middle("short", 11, buf, sizeof(buf));
	CU_ASSERT_STRING_EQUAL(buf, "short");
}

static void test_report_table_text_fits_width(void)
{
	struct table t;
	char *out, *line;

	fill(&t);
	out = render(&t, 0, 40);
	for (line = strtok(out, "\n"); line; line = strtok(NULL, "\n")) {
		CU_ASSERT(strlen(line) <= 40);
		CU_ASSERT(line[strlen(line) - 1] != ' ');
	}
	free(out);
	out = render(&t, 0, 200);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "1.235s"));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "12.3%"));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "CPU Time"));
	free(out);
	table_release(&t);
}

static void test_report_table_csv_complete(void)
{
	struct table t;
	char *out;

	fill(&t);
	out = render(&t, 1, 40);
	CU_ASSERT_STRING_EQUAL(
		out, "Function,CPU Time:Self,CPU Time:Self %\n"
		     "short,1.235,12.3\n"
		     "\"a_very_long_function_name_with_\"\"quotes\"\",commas_and_more_and_"
		     "more_and_more_text_to_exceed_the_width\",2.000,50.0\n");
	free(out);
	out = render(&t, 2, 40);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "\"Function\": \"short\", \"CPU Time:Self\": 1.235"));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "with_\\\"quotes\\\""));
	free(out);
	table_release(&t);
}

static void test_report_table_sort_truncate(void)
{
	struct table t;
	char buf[64];

	fill(&t);
	table_sort(&t, 1);
	table_format_cell(&t, 0, 1, false, buf, sizeof(buf));
	CU_ASSERT_STRING_EQUAL(buf, "2.000");
	table_sort(&t, 0); /* text sorts ascending */
	table_format_cell(&t, 0, 0, false, buf, sizeof(buf));
	CU_ASSERT_EQUAL(buf[0], 'a');
	table_truncate(&t, 1);
	CU_ASSERT_EQUAL(t.nrows, 1);
	CU_ASSERT_EQUAL(table_find_col(&t, "CPU Time:Self %"), 2);
	CU_ASSERT_EQUAL(table_find_col(&t, "nope"), -1);
	table_release(&t);
}

/* Keys told apart by their hash alone (report/key-index.h): every one finds its own number. */
static void test_report_table_key_index_round_trip(void)
{
	struct hash_index k;
	int i, bad = 0;

	hash_index_init(&k);
	CU_ASSERT_EQUAL(key_index_get(&k, 1), -1);
	for (i = 1; i <= 100000; i++)
		CU_ASSERT_EQUAL_FATAL(key_index_add(&k, (uint64_t)i * 7919 << 20, i), 0);
	for (i = 1; i <= 100000; i++)
		bad += key_index_get(&k, (uint64_t)i * 7919 << 20) != i;
	CU_ASSERT_EQUAL(bad, 0);
	CU_ASSERT_EQUAL(key_index_get(&k, 3), -1);
	CU_ASSERT_EQUAL(key_index_get(&k, 0), -1);
	CU_ASSERT_EQUAL(k.n, 100000);
	/* Keys apart in their top bit only (group keys of cct.c) are two keys. */
	CU_ASSERT_EQUAL_FATAL(key_index_add(&k, 0, 5), 0);
	CU_ASSERT_EQUAL_FATAL(key_index_add(&k, (uint64_t)1 << 63, 6), 0);
	CU_ASSERT_EQUAL(key_index_get(&k, 0), 5);
	CU_ASSERT_EQUAL(key_index_get(&k, (uint64_t)1 << 63), 6);
	CU_ASSERT_EQUAL(k.n, 100002);
	hash_index_release(&k);
}

/* KEY_INDEX_SLOT(): a new key gets the next element of the array, a known one its own. */
static void test_report_table_key_index_slot(void)
{
	struct hash_index k;
	uint64_t *v = NULL;
	size_t n = 0, cap = 0;
	bool added;
	int i, bad = 0;

	hash_index_init(&k);
	for (i = 0; i < 1000; i++) {
		int s = KEY_INDEX_SLOT(&k, (uint64_t)i % 100 + 7, v, n, cap, &added);

		CU_ASSERT_FATAL(s >= 0);
		CU_ASSERT_EQUAL(added, i < 100);
		if (added)
			v[s] = (uint64_t)i % 100 + 7;
		bad += v[s] != (uint64_t)i % 100 + 7;
	}
	CU_ASSERT_EQUAL(bad, 0);
	CU_ASSERT_EQUAL(n, 100);
	hash_index_release(&k);
	free(v);
}

/* Numbers are formatted (and measured) by hand: exactly as printf would print them. */
static void test_report_table_numbers_match_printf(void)
{
	static const double special[] = { 0,      -0.0,       0.05,  0.25, 0.35,
					  0.45,   12.345,     99.95, 100,  -0.04,
					  -12.25, 1e8 + 0.05, 1e300, NAN,  INFINITY };
	struct table t;
	char got[TABLE_NUM_MAX], want[TABLE_NUM_MAX];
	unsigned seed = 12345;
	int pct, ti, in, bad = 0;
	size_t r, k;

	table_init(&t);
	pct = table_add_col(&t, "P", TABLE_PCT, 0);
	ti = table_add_col(&t, "T", TABLE_TIME, 0);
	in = table_add_col(&t, "I", TABLE_INT, 0);
	r = table_add_row(&t, 0);
	for (k = 0; k < 200000 + sizeof(special) / sizeof(*special); k++) {
		double d;
		int64_t v, a;
		bool text = k & 1;

		seed = seed * 1103515245 + 12345;
		if (k >= 200000)
			d = special[k - 200000];
		else if (k % 3 == 0)
			d = (double)(seed >> 8) / (1 << 24) * 100.0; /* any percentage */
		else if (k % 3 == 1)
			d = (double)(seed % 20000) * 0.005; /* on and near halves */
		else
			d = -(double)(seed % 100000) / 1000.0;
		table_set_pct(&t, r, pct, d);
		table_format_cell(&t, r, pct, text, got, sizeof(got));
		snprintf(want, sizeof(want), "%.1f%s", d, text ? "%" : "");
		bad += strcmp(got, want) != 0 || table_cell_len(&t, r, pct, text) != strlen(want);

		v = (int64_t)((uint64_t)seed * 2654435761u) * (k % 2 ? 1 : -1) /
		    (int64_t)(k % 7 + 1);
		table_set_int(&t, r, in, v);
		table_format_cell(&t, r, in, text, got, sizeof(got));
		snprintf(want, sizeof(want), "%" PRId64, v);
		bad += strcmp(got, want) != 0 || table_cell_len(&t, r, in, text) != strlen(want);

		table_set_time(&t, r, ti, v);
		table_format_cell(&t, r, ti, text, got, sizeof(got));
		a = v < 0 ? -v : v;
		snprintf(want, sizeof(want), "%s%" PRId64 ".%03" PRId64 "%s", v < 0 ? "-" : "",
			 (a + 500000) / 1000000000, (a + 500000) / 1000000 % 1000, text ? "s" : "");
		bad += strcmp(got, want) != 0 || table_cell_len(&t, r, ti, text) != strlen(want);
	}
	CU_ASSERT_EQUAL(bad, 0);
	table_release(&t);
}

static int item_cmp(const void *pa, const void *pb)
{
	const struct radix_item *a = pa, *b = pb;

	return CMP_THEN(CMP(a->key, b->key), CMP(a->val, b->val));
}

static void test_report_table_radix_sort_stable(void)
{
	size_t n = 100000, i, bad = 0;
	struct radix_item *a = malloc(n * sizeof(*a)), *b = malloc(n * sizeof(*b));
	uint64_t x = 88172645463325252ULL;

	CU_ASSERT_PTR_NOT_NULL_FATAL(a);
	CU_ASSERT_PTR_NOT_NULL_FATAL(b);
	for (i = 0; i < n; i++) {
		x ^= x << 13;
		x ^= x >> 7;
		x ^= x << 17;
		/* Many equal keys, and keys differing only in high bytes. */
		a[i].key = i % 3 ? x % 1000 : x & 0xff000000000000ffULL;
		a[i].val = i;
	}
	memcpy(b, a, n * sizeof(*a));
	CU_ASSERT_EQUAL(radix_sort(a, n), 0);
	qsort(b, n, sizeof(*b), item_cmp); /* val breaks ties: the stable order */
	for (i = 0; i < n; i++)
		bad += a[i].key != b[i].key || a[i].val != b[i].val;
	CU_ASSERT_EQUAL(bad, 0);
	/* Descending keys: larger values first, negatives last, doubles too. */
	CU_ASSERT(radix_key_desc_int(5) < radix_key_desc_int(-5));
	CU_ASSERT(radix_key_desc_int(INT64_MAX) < radix_key_desc_int(0));
	CU_ASSERT(radix_key_desc_double(12.5) < radix_key_desc_double(1.5));
	CU_ASSERT(radix_key_desc_double(0.5) < radix_key_desc_double(-0.5));
	CU_ASSERT(radix_key_desc_double(-0.5) < radix_key_desc_double(-7.0));
	CU_ASSERT_EQUAL(radix_key_desc_double(0.0), radix_key_desc_double(-0.0));
	free(a);
	free(b);
}

/* table_sort() against a plain stable sort: set cells first, largest first, ties in order. */
static void test_report_table_sort_matches_reference(void)
{
	enum table_type types[] = { TABLE_TIME, TABLE_PCT, TABLE_INT, TABLE_TEXT };
	static const char *const words[] = { "b", "a", "c", "aa" };
	size_t n = 5000, i, j;
	unsigned seed = 7;

	for (j = 0; j < sizeof(types) / sizeof(*types); j++) {
		struct table t;
		size_t *order = malloc(n * sizeof(*order)), k, bad = 0;
		int key, id;

		CU_ASSERT_PTR_NOT_NULL_FATAL(order);
		table_init(&t);
		key = table_add_col(&t, "K", types[j], 0);
		id = table_add_col(&t, "Id", TABLE_INT, 0);
		for (i = 0; i < n; i++) {
			size_t r = table_add_row(&t, 0);

			seed = seed * 1103515245 + 12345;
			table_set_int(&t, r, id, (int64_t)i);
			if (seed % 10 == 0)
				continue; /* unset: sorts last */
			if (types[j] == TABLE_PCT)
				table_set_pct(&t, r, key, (double)(seed >> 16 & 63) / 4 - 4);
			else if (types[j] == TABLE_TEXT)
				table_set_text(&t, r, key, words[seed >> 16 & 3]);
			else
				table_set_int(&t, r, key, (int64_t)(seed >> 16 & 63) - 20);
		}
		/* The reference: insertion by the same rule, stable. */
		for (i = 0; i < n; i++) {
			const struct table_cell *c = &t.cells[i * t.ncols + (size_t)key];

			for (k = i; k > 0; k--) {
				const struct table_cell *p =
					&t.cells[order[k - 1] * t.ncols + (size_t)key];
				bool before;

				if (!c->set)
					before = false;
				else if (!p->set)
					before = true;
				else if (types[j] == TABLE_TEXT)
					before = strcmp(c->v.s, p->v.s) < 0;
				else if (types[j] == TABLE_PCT)
					before = c->v.d > p->v.d;
				else
					before = c->v.i > p->v.i;
				if (!before)
					break;
				order[k] = order[k - 1];
			}
			order[k] = i;
		}
		table_sort(&t, key);
		for (i = 0; i < n; i++)
			bad += t.cells[i * t.ncols + (size_t)id].v.i != (int64_t)order[i];
		CU_ASSERT_EQUAL(bad, 0);
		table_release(&t);
		free(order);
	}
}

static void test_report_table_outbuf_lines(void)
{
	struct outbuf b;
	char *out = NULL;
	size_t size = 0, i, bad = 0;
	FILE *f = open_memstream(&out, &size);

	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	outbuf_init(&b, f);
	outbuf_puts(&b, "abc");
	outbuf_pad(&b, 5);
	outbuf_newline(&b); /* trailing blanks go */
	outbuf_pad(&b, 3);
	outbuf_newline(&b); /* a blank line stays, empty */
	outbuf_puts(&b, " x ");
	outbuf_putc(&b, 'y');
	outbuf_newline(&b);
	/* Lines past several chunks: written on the way, trimmed across the writes. */
	for (i = 0; i < 300000; i++) {
		outbuf_put(&b, "0123456789", 10);
		outbuf_pad(&b, 2);
		outbuf_newline(&b);
		outbuf_spill(&b);
	}
	CU_ASSERT_EQUAL(outbuf_finish(&b), 0);
	fclose(f);
	CU_ASSERT_EQUAL(size, 4 + 1 + 5 + 300000 * 11);
	CU_ASSERT_EQUAL(memcmp(out, "abc\n\n x y\n0123456789\n0123", 24), 0);
	for (i = 0; i < 300000; i++)
		bad += memcmp(out + 10 + 11 * i, "0123456789\n", 11) != 0;
	CU_ASSERT_EQUAL(bad, 0);
	outbuf_release(&b);
	free(out);
}

/* Cells longer than any buffer come out whole in CSV and JSON; referenced text is not copied. */
static void test_report_table_long_cells_whole(void)
{
	static const char name[] = "static";
	size_t len = 20000, r;
	char *longs = malloc(len + 1), *out;
	struct table t;
	int c, ref;

	CU_ASSERT_PTR_NOT_NULL_FATAL(longs);
	memset(longs, 'x', len);
	longs[len] = '\0';
	table_init(&t);
	c = table_add_col(&t, "Call Stack", TABLE_TEXT, TABLE_MACHINE);
	ref = table_add_col(&t, "Name", TABLE_TEXT, 0);
	r = table_add_row(&t, 0);
	table_set_text(&t, r, c, longs);
	table_set_text_ref(&t, r, ref, name);
	CU_ASSERT(t.cells[r * t.ncols + (size_t)ref].v.s == name);
	out = render(&t, 1, 100);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, longs));
	free(out);
	out = render(&t, 2, 100);
	CU_ASSERT_PTR_NOT_NULL(strstr(out, longs));
	free(out);
	out = render(&t, 0, 100); /* text: the machine column is not shown */
	CU_ASSERT_PTR_NULL(strstr(out, "xxxx"));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "static"));
	free(out);
	table_release(&t);
	free(longs);
}

static void test_report_table_big_arrays(void)
{
	size_t n = (size_t)3 << 20, i, bad = 0;
	unsigned char *p = big_calloc(n, 1), *q;

	CU_ASSERT_PTR_NOT_NULL_FATAL(p);
	for (i = 0; i < n; i++)
		bad += p[i] != 0;
	CU_ASSERT_EQUAL(bad, 0);
	for (i = 0; i < n; i++)
		p[i] = (unsigned char)i;
	q = big_realloc(p, 2 * n); /* grows and keeps the contents */
	CU_ASSERT_PTR_NOT_NULL_FATAL(q);
	for (i = 0; i < n; i++)
		bad += q[i] != (unsigned char)i;
	CU_ASSERT_EQUAL(bad, 0);
	free(q);
	q = big_malloc(10); /* small ones are plain malloc */
	CU_ASSERT_PTR_NOT_NULL(q);
	free(q);
}

/* Bytes read in units in text, exactly in CSV and JSON. */
static void test_report_table_bytes_format(void)
{
	static const struct {
		int64_t v;
		const char *text;
	} cases[] = {
		{ 0, "0 B" },           { 512, "512 B" },         { 1023, "1023 B" },
		{ 1024, "1.0 KiB" },    { 1536, "1.5 KiB" },      { 3145728, "3.0 MiB" },
		{ 1048575, "1.0 MiB" }, { 5LL << 30, "5.0 GiB" }, { -1536, "-1.5 KiB" },
		{ -5, "-5 B" },
	};
	struct table t;
	char buf[64];
	size_t i, r;
	int c;

	table_init(&t);
	c = table_add_col(&t, "Allocated Bytes:Self", TABLE_BYTES, 0);
	r = table_add_row(&t, 0);
	for (i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		table_set_int(&t, r, c, cases[i].v);
		table_format_cell(&t, r, c, true, buf, sizeof(buf));
		CU_ASSERT_STRING_EQUAL(buf, cases[i].text);
		CU_ASSERT_EQUAL(table_cell_len(&t, r, c, true), strlen(cases[i].text));
		table_format_cell(&t, r, c, false, buf, sizeof(buf));
		CU_ASSERT_EQUAL(strtoll(buf, NULL, 10), cases[i].v);
	}
	table_release(&t);
}

/* A narrow width drops percentages, then details, before names go below 30 columns. */
static void test_report_table_narrow_drops_columns(void)
{
	static const char name[] = "physics::Grid<double>::relax_the_grid_until_it_converges(int)";
	struct table t;
	char *out, *line;
	size_t r;
	int n, v, p, mod;

	table_init(&t);
	n = table_add_col(&t, "Function", TABLE_TEXT, TABLE_NAME);
	v = table_add_col(&t, "CPU Time:Self", TABLE_TIME, 0);
	p = table_add_col(&t, "CPU Time:Self %", TABLE_PCT, TABLE_OPTIONAL);
	mod = table_add_col(&t, "Module", TABLE_TEXT, TABLE_SHRINK | TABLE_DETAIL);
	r = table_add_row(&t, 0);
	table_set_text(&t, r, n, name);
	table_set_time(&t, r, v, 1500000000);
	table_set_pct(&t, r, p, 42.0);
	table_set_text(&t, r, mod, "libphysics.so.1");
	out = render(&t, 0, 0); /* no limit: everything whole */
	CU_ASSERT_PTR_NOT_NULL(strstr(out, name));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "42.0%"));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "libphysics.so.1"));
	free(out);
	out = render(&t, 0, 45);
	CU_ASSERT_PTR_NULL(strstr(out, "42.0%"));
	CU_ASSERT_PTR_NULL(strstr(out, "libphysics"));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "1.500s"));
	CU_ASSERT_PTR_NOT_NULL(strstr(out, "converges(int)"));
	for (line = strtok(out, "\n"); line; line = strtok(NULL, "\n"))
		CU_ASSERT(strlen(line) <= 45);
	free(out);
	table_release(&t);
}

/* A table of no rows whose header needs escaping: its copy escapes the header and has no
   cells to copy (a fuzz case: a hostile name with every row filtered away). */
static void test_report_table_escape_no_rows(void)
{
	struct table t, copy;
	const struct table *shown;

	table_init(&t);
	table_add_col(&t, "Func\x1btion", TABLE_TEXT, TABLE_NAME);
	table_add_note(&t, "a note with a \x07"
			   "bell");
	CU_ASSERT_EQUAL(t.nrows, 0);
	CU_ASSERT_EQUAL_FATAL(escape_table(&t, ESCAPE_CONTROLS, &copy, &shown), 0);
	CU_ASSERT_PTR_EQUAL_FATAL(shown, &copy);
	CU_ASSERT_EQUAL(shown->nrows, 0);
	CU_ASSERT_PTR_NULL(strchr(shown->cols[0].name, '\x1b'));
	CU_ASSERT_PTR_NOT_NULL(strstr(shown->cols[0].name, "Func"));
	CU_ASSERT_PTR_NULL(strchr(shown->notes[0], '\x07'));
	escape_table_release(&copy);
	table_release(&t);
}

int main(void)
{
	static const struct unit_test tests[] = {
		{ "time_format", test_report_table_time_format },
		{ "shorten_middle", test_report_table_shorten_middle },
		{ "text_fits_width", test_report_table_text_fits_width },
		{ "csv_complete", test_report_table_csv_complete },
		{ "sort_truncate", test_report_table_sort_truncate },
		{ "key_index_round_trip", test_report_table_key_index_round_trip },
		{ "key_index_slot", test_report_table_key_index_slot },
		{ "numbers_match_printf", test_report_table_numbers_match_printf },
		{ "radix_sort_stable", test_report_table_radix_sort_stable },
		{ "sort_matches_reference", test_report_table_sort_matches_reference },
		{ "outbuf_lines", test_report_table_outbuf_lines },
		{ "long_cells_whole", test_report_table_long_cells_whole },
		{ "big_arrays", test_report_table_big_arrays },
		{ "bytes_format", test_report_table_bytes_format },
		{ "narrow_drops_columns", test_report_table_narrow_drops_columns },
		{ "escape_no_rows", test_report_table_escape_no_rows },
		{ NULL, NULL },
	};

	return unit_run("report-table", tests, NULL, NULL);
}
