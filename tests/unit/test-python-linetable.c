/* SPDX-License-Identifier: MIT */
/* Line-table decoding against what each installed interpreter itself decodes (co_lines()). */
#include "finalizer/python/python.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "tests/unit/python-test-lib.h"
#include "tests/unit/unit.h"

/*
 * Each interpreter runs tests/unit/python-linetable-dump.py, which prints the raw co_linetable
 * of every code object of several stdlib modules and of synthetic sources (line jumps past
 * 127 and 70,000 lines, long columns, lines going backwards, exception handlers), then the
 * ranges co_lines() gives. pyline_find() must give the same line for every instruction offset,
 * and pyline_ranges() the same list of ranges.
 */

static char root[PATH_MAX];
static struct pytest_python pythons[16];
static size_t npythons, nknown;

static int hexval(int c)
{
	return c <= '9' ? c - '0' : (c | 0x20) - 'a' + 10;
}

struct expect {
	struct pyline_range *r;
	size_t n, cap;
};

struct totals {
	long codes, offsets, wrong, range_lists_differ;
};

/* Join neighbouring ranges of the same line in place; returns the new count. */
static size_t join(struct pyline_range *r, size_t n)
{
	size_t i, k = 0;

	for (i = 0; i < n; i++) {
		if (k && r[k - 1].end == r[i].start && r[k - 1].line == r[i].line)
			r[k - 1].end = r[i].end;
		else
			r[k++] = r[i];
	}
	return k;
}

/* 0 when both lists cover the same ranges with the same lines once joined. */
static int joined(struct pyline_range *a, size_t na, const struct pyline_range *b0, size_t nb)
{
	struct pyline_range *b = malloc((nb ? nb : 1) * sizeof(*b));
	size_t i;
	int diff = 0;

	memcpy(b, b0, nb * sizeof(*b));
	na = join(a, na);
	nb = join(b, nb);
	if (na != nb)
		diff = 1;
	for (i = 0; !diff && i < na; i++)
		diff = a[i].start != b[i].start || a[i].end != b[i].end || a[i].line != b[i].line;
	free(b);
	return diff;
}

static void check_code(uint32_t version, int first, uint32_t size, const uint8_t *table, size_t len,
		       const struct expect *e, struct totals *t)
{
	static struct pyline_range got[1 << 16];
	uint32_t off;
	size_t i;
	int n;

	t->codes++;
	for (off = 0; off < size; off += 2) {
		int want = -1, line;

		for (i = 0; i < e->n; i++)
			if (off >= e->r[i].start && off < e->r[i].end) {
				want = e->r[i].line;
				break;
			}
		line = pyline_find(version, table, len, first, off);
		t->offsets++;
		if (line != want) {
			if (t->wrong < 10)
				printf("\n    3.%u code at line %d: offset %u: line %d, want %d",
				       (version >> 16) & 0xff, first, off, line, want);
			t->wrong++;
		}
	}
	n = pyline_ranges(version, table, len, first, got, sizeof(got) / sizeof(got[0]));
	if (n < 0 || n > (int)(sizeof(got) / sizeof(got[0]))) {
		t->range_lists_differ++;
		return;
	}
	/* 3.12+ co_lines() joins neighbours of the same line: compare joined lists */
	if (joined(got, (size_t)n, e->r, e->n))
		t->range_lists_differ++;
}

/* Run one interpreter on the dump script and check everything it printed. Returns whether it
   printed code objects to check. */
static bool check_interpreter(const struct pytest_python *py)
{
	const char *python = py->exe;
	char cmd[PATH_MAX * 3], *line = NULL;
	size_t linecap = 0, tlen = 0;
	uint8_t *table = NULL;
	uint32_t version = 0, size = 0;
	struct expect e = { 0 };
	struct totals t = { 0 };
	int first = 0, have = 0, minor, status;
	FILE *p;

	snprintf(cmd, sizeof(cmd), "'%s' '%s/tests/unit/python-linetable-dump.py'", python, root);
	p = popen(cmd, "r");
	CU_ASSERT_FATAL(p != NULL);
	while (getline(&line, &linecap, p) > 0) {
		if (sscanf(line, "V %d", &minor) == 1) {
			version = RAW_PY_VERSION(3, minor);
		} else if (line[0] == 'C') {
			char *hex = NULL;
			size_t i, hl;

			if (have)
				check_code(version, first, size, table, tlen, &e, &t);
			hex = malloc(strlen(line));
			CU_ASSERT_FATAL(sscanf(line, "C %d %u %s", &first, &size, hex) == 3);
			hl = strcmp(hex, "-") == 0 ? 0 : strlen(hex);
			free(table);
			table = malloc(hl / 2 + 1);
			for (i = 0; i + 1 < hl; i += 2)
				table[i / 2] = (uint8_t)(hexval(hex[i]) << 4 | hexval(hex[i + 1]));
			tlen = hl / 2;
			free(hex);
			e.n = 0;
			have = 1;
		} else if (line[0] == 'L') {
			struct pyline_range r;

			CU_ASSERT_FATAL(sscanf(line, "L %u %u %d", &r.start, &r.end, &r.line) == 3);
			if (GROW(e.r, e.n + 1, e.cap))
				CU_FAIL_FATAL("out of memory");
			e.r[e.n++] = r;
		}
	}
	if (have)
		check_code(version, first, size, table, tlen, &e, &t);
	status = pclose(p);
	printf("\n    %s: 3.%u, %ld code objects, %ld offsets, %ld wrong, %ld range lists differ",
	       python, (version >> 16) & 0xff, t.codes, t.offsets, t.wrong, t.range_lists_differ);
	CU_ASSERT(status == 0);
	CU_ASSERT(t.codes > 500);
	CU_ASSERT(t.wrong == 0);
	CU_ASSERT(t.range_lists_differ == 0);
	free(line);
	free(table);
	free(e.r);
	return t.codes > 0;
}

/* True when the decoder knows 3.minor's line tables. */
static bool decoder_knows(int minor)
{
	static const uint8_t empty[1];

	return pyline_find(RAW_PY_VERSION(3, (unsigned)minor), empty, 0, 1, 0) != -2;
}

/*
 * Every interpreter found (shared builds, the distribution's linked into its executable,
 * wrappers) of a version the decoder knows: each must be checked, none skipped quietly.
 */
static void test_python_linetable_every_interpreter(void)
{
	size_t checked = pytest_check_known(pythons, npythons, decoder_knows, check_interpreter,
					    "checked", &nknown);

	CU_ASSERT(checked == nknown);
}

/* Hand-made tables: the rules that the interpreters' output may not exercise. */
static void test_python_linetable_known_rules(void)
{
	/* 3.10: (6 bytes, +1), (0 bytes, +2: no range), (4 bytes, no line), (2 bytes, -1) */
	static const uint8_t t310[] = { 6, 1, 0, 2, 4, 0x80, 2, 0xff };
	/* 3.11: short form 2 units (line +0), one-line +2 1 unit, no location 1 unit,
	   no-columns 1 unit with svarint -3 (uval 7), long form 1 unit line +1 */
	static const uint8_t t311[] = { 0x80 | (0 << 3) | 1,
					0x05,
					0x80 | (12 << 3) | 0,
					0x03,
					0x07,
					0x80 | (15 << 3) | 0,
					0x80 | (13 << 3) | 0,
					0x07,
					0x80 | (14 << 3) | 0,
					0x02,
					0x00,
					0x01,
					0x02 };
	uint32_t v10 = RAW_PY_VERSION(3, 10), v11 = RAW_PY_VERSION(3, 11);
	struct pyline_range r[8];

	CU_ASSERT(pyline_find(v10, t310, sizeof(t310), 10, 0) == 11);
	CU_ASSERT(pyline_find(v10, t310, sizeof(t310), 10, 4) == 11);
	CU_ASSERT(pyline_find(v10, t310, sizeof(t310), 10, 6) == -1);
	CU_ASSERT(pyline_find(v10, t310, sizeof(t310), 10, 10) == 12);
	CU_ASSERT(pyline_find(v10, t310, sizeof(t310), 10, 12) == -1);
	CU_ASSERT(pyline_ranges(v10, t310, sizeof(t310), 10, r, 8) == 3);
	CU_ASSERT(pyline_find(v11, t311, sizeof(t311), 20, 0) == 20);
	CU_ASSERT(pyline_find(v11, t311, sizeof(t311), 20, 2) == 20);
	CU_ASSERT(pyline_find(v11, t311, sizeof(t311), 20, 4) == 22);
	CU_ASSERT(pyline_find(v11, t311, sizeof(t311), 20, 6) == -1);
	CU_ASSERT(pyline_find(v11, t311, sizeof(t311), 20, 8) == 19);
	CU_ASSERT(pyline_find(v11, t311, sizeof(t311), 20, 10) == 20);
	CU_ASSERT(pyline_find(v11, t311, sizeof(t311), 20, 12) == -1);
	CU_ASSERT(pyline_find(RAW_PY_VERSION(3, 9), t311, sizeof(t311), 20, 0) == -2);
	/* cut tables: no crash, no line past the cut */
	CU_ASSERT(pyline_ranges(v10, t310, 3, 10, r, 8) == -1);
	CU_ASSERT(pyline_ranges(v11, t311, 3, 20, r, 8) >= 1);
	CU_ASSERT(pyline_find(v11, t311, 9, 20, 8) == -1 || pyline_find(v11, t311, 9, 20, 8) == 19);
}

int main(void)
{
	static const struct unit_test tests[] = {
		{ "hand-made tables", test_python_linetable_known_rules },
		{ "every installed interpreter", test_python_linetable_every_interpreter },
		{ NULL, NULL },
	};

	if (pytest_init(__FILE__, root, pythons, 16, &npythons))
		return 77;
	return pytest_run("python-linetable", tests, &nknown, "CPython 3.10+", npythons,
			  "only hand-made tables checked");
}
