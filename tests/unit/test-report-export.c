/* SPDX-License-Identifier: MIT */
/* Unit tests of what the exports share: JSON strings, numbers, ids of tuples and names. */
#include <stdlib.h>
#include <string.h>

#include "report/export-private.h"
#include "tests/unit/unit.h"

/* What f's buffer holds after fn wrote into an outbuf on it. */
static char *written(void (*fn)(struct outbuf *, const void *), const void *arg)
{
	char *data = NULL;
	size_t size = 0;
	FILE *f = open_memstream(&data, &size);
	struct outbuf b;

	outbuf_init(&b, f);
	fn(&b, arg);
	CU_ASSERT_EQUAL(outbuf_finish(&b), 0);
	outbuf_release(&b);
	fclose(f);
	return data;
}

struct json_case {
	const char *in;
	size_t len; /* 0: strlen(in) */
	unsigned flags;
	const char *out;
};

static const struct json_case json_cases[] = {
	{ "main", 0, 0, "\"main\"" },
	{ "a\"b\\c", 0, 0, "\"a\\\"b\\\\c\"" },
	{ "tab\there\nline", 0, 0, "\"tab\\there\\nline\"" },
	{ "\x01", 0, 0, "\"\\u0001\"" },
	{ "Grid<double>::relax", 0, 0, "\"Grid<double>::relax\"" },
	/* Inside a <script>: no '<', '>' or '&' that could end it. */
	{ "</script>&", 0, OUTBUF_JSON_HTML, "\"\\u003c/script\\u003e\\u0026\"" },
	{ "caf\xc3\xa9", 0, 0, "\"caf\xc3\xa9\"" },
	{ "\xe2\x82\xac \xf0\x9f\x94\xa5", 0, 0, "\"\xe2\x82\xac \xf0\x9f\x94\xa5\"" },
	/* Not UTF-8: a lone continuation byte, a cut sequence, an overlong form, a surrogate. */
	{ "a\x80z", 0, 0, "\"a\\ufffdz\"" },
	{ "a\xc3", 0, 0, "\"a\\ufffd\"" },
	{ "\xc0\xaf", 0, 0, "\"\\ufffd\\ufffd\"" },
	{ "\xed\xa0\x80", 0, 0, "\"\\ufffd\\ufffd\\ufffd\"" },
	{ "nul\0inside", 10, 0, "\"nul\\u0000inside\"" },
};

static void put_json(struct outbuf *b, const void *arg)
{
	const struct json_case *c = arg;

	outbuf_json(b, c->in, c->len ? c->len : strlen(c->in), c->flags);
}

static void test_report_export_json_strings(void)
{
	size_t i;

	for (i = 0; i < sizeof(json_cases) / sizeof(json_cases[0]); i++) {
		char *got = written(put_json, &json_cases[i]);

		if (strcmp(got, json_cases[i].out))
			fprintf(stderr, "case %zu: got %s, want %s\n", i, got, json_cases[i].out);
		CU_ASSERT_STRING_EQUAL(got, json_cases[i].out);
		free(got);
	}
}

static void put_ints(struct outbuf *b, const void *arg)
{
	(void)arg;
	outbuf_int(b, 0);
	outbuf_putc(b, ' ');
	outbuf_int(b, -7);
	outbuf_putc(b, ' ');
	outbuf_int(b, INT64_MAX);
	outbuf_putc(b, ' ');
	outbuf_int(b, INT64_MIN);
	outbuf_printf(b, " %s=%d", "x", 42);
}

static void test_report_export_numbers(void)
{
	char *got = written(put_ints, NULL);

	CU_ASSERT_STRING_EQUAL(got, "0 -7 9223372036854775807 -9223372036854775808 x=42");
	free(got);
}

/* Ids come in the order first seen, the same tuple always the same id. */
static void test_report_export_ids(void)
{
	struct export_ids ids;
	int a, b, c, i;

	export_ids_init(&ids);
	for (a = 0; a < 40; a++)
		for (b = -1; b < 40; b++)
			for (c = 0; c < 3; c++)
				CU_ASSERT_EQUAL(export_ids_get(&ids, a, b, c),
						(a * 41 + b + 1) * 3 + c);
	CU_ASSERT_EQUAL(ids.n, 40 * 41 * 3);
	for (i = 0; i < (int)ids.n; i += 97)
		CU_ASSERT_EQUAL(export_ids_get(&ids, ids.tuple[i][0], ids.tuple[i][1],
					       ids.tuple[i][2]),
				i);
	export_ids_release(&ids);
}

static void test_report_export_names(void)
{
	static const char *const words[] = { "main", "solve", "", "main ", "Main", "solve" };
	static const int want[] = { 0, 1, 2, 3, 4, 1 };
	struct export_names ns;
	size_t i;

	export_names_init(&ns);
	for (i = 0; i < sizeof(words) / sizeof(words[0]); i++)
		CU_ASSERT_EQUAL(export_names_get(&ns, words[i]), want[i]);
	CU_ASSERT_EQUAL(ns.n, 5);
	CU_ASSERT_STRING_EQUAL(ns.s[3], "main ");
	export_names_release(&ns);
}

UNIT_MAIN("report-export", NULL, NULL,
	  {
		  { "json strings", test_report_export_json_strings },
		  { "numbers", test_report_export_numbers },
		  { "ids", test_report_export_ids },
		  { "names", test_report_export_names },
	  })
