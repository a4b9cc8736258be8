/* SPDX-License-Identifier: MIT */
/* The built-in CPython layouts against offsetof() probes compiled with each version's headers. */
#include "collector/agent/python/python-layout.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "tests/unit/python-test-lib.h"
#include "tests/unit/unit.h"

static char root[PATH_MAX];
static struct pytest_python pythons[16];
static size_t npythons, ncompared;

/* The table's value of a field the probe printed: struct pylayout's, or for "dbg_" names
   where the field sits in _Py_DebugOffsets (struct pydebug_map, 3.13+). */
static int32_t table_value(const struct pylayout *L, const char *name, int *found)
{
	const struct pydebug_map *m = pydebug_map_find(L->minor);
	const struct pylayout_field *f = pylayout_fields;
	const void *base = L;
	int32_t v;

	if (strncmp(name, "dbg_", 4) == 0) {
		f = pydebug_map_fields;
		base = m && m->minor == L->minor ? (const void *)m : NULL;
	} else if (strncmp(name, "obj_", 4) == 0) {
		f = pyobj_layout_fields;
		base = pyobj_layout_find(L->minor);
	}
	for (; base && f->name; f++)
		if (strcmp(f->name, name) == 0) {
			memcpy(&v, (const char *)base + f->offset, sizeof(v));
			*found = 1;
			return v;
		}
	*found = 0;
	return 0;
}

/* Compare the table of py's version with offsetof() compiled against py's headers (their
   parent too: Debian's pyconfig.h includes <x86_64-linux-gnu/python3.N/pyconfig.h> from
   there), as scripts/python-layouts does. Returns 1 when compared, 0 when py has no headers
   with the internal ones. */
static bool check_headers(const struct pytest_python *py)
{
	const struct pylayout *L = pylayout_find(py->minor);
	const char *inc = py->include;
	char cmd[PATH_MAX * 5], exe[64], name[64], internal[PATH_MAX + 16], line[256];
	long value;
	int fields = 0, wrong = 0, found;
	FILE *p;

	CU_ASSERT_FATAL(L != NULL);
	snprintf(internal, sizeof(internal), "%s/internal", inc);
	if (!inc[0] || access(internal, R_OK) != 0) {
		printf("\n    3.%d (%s): no internal headers at '%s': not compared", py->minor,
		       py->exe, internal);
		return 0;
	}
	snprintf(exe, sizeof(exe), "/tmp/pcollect-probe-%d-%d", (int)getpid(), py->minor);
	snprintf(cmd, sizeof(cmd),
		 "${CC:-cc} -DPy_BUILD_CORE -I'%s' -I'%s/internal' -I'%s/..'"
		 " '%s/collector/agent/python/python-probe.c' -o '%s' && '%s'",
		 inc, inc, inc, root, exe, exe);
	p = popen(cmd, "r");
	CU_ASSERT_FATAL(p != NULL);
	while (fgets(line, sizeof(line), p)) {
		int32_t want;

		if (sscanf(line, "%63s %ld", name, &value) != 2)
			continue;
		want = table_value(L, name, &found);
		CU_ASSERT(found);
		if (!found)
			printf("\n    3.%d: the probe prints %s, which the table lacks (a field of "
			       "python-layout.h's structs, then scripts/python-layouts)",
			       py->minor, name);
		fields++;
		if (found && want != value) {
			printf("\n    3.%d %s: table %d, headers of 3.%d.%d %ld", py->minor, name,
			       want, py->minor, py->micro, value);
			wrong++;
		}
	}
	CU_ASSERT(pclose(p) == 0);
	unlink(exe);
	printf("\n    3.%d.%d (%s): %d fields compared, %d differ", py->minor, py->micro, inc,
	       fields, wrong);
	if (wrong)
		printf("\n    FAIL: the row of 3.%d is not what its headers say: if 3.%d.%d is "
		       "right, regenerate it with scripts/python-layouts '%s' (docs/python.md)",
		       py->minor, py->minor, py->micro, py->exe);
	CU_ASSERT(fields > 30);
	CU_ASSERT(wrong == 0);
	return 1;
}

static bool layout_known(int minor)
{
	return pylayout_find(minor) != NULL;
}

/* Every interpreter of a version the table has, where its headers are installed. */
static void test_python_layout_matches_headers(void)
{
	size_t known;

	ncompared = pytest_check_known(pythons, npythons, layout_known, check_headers, "compared",
				       &known);
}

/* The generated rows are positional: python-layout-rows.def's columns must be the structs'
   fields in their order (minor first), each an int32_t. */
static void check_columns(const struct pylayout_field *f, size_t first, size_t size)
{
	size_t i;

	for (i = 0; f[i].name; i++)
		if (f[i].offset != (first + i) * sizeof(int32_t)) {
			printf("\n    column %s at offset %zu of its struct, not %zu: run "
			       "scripts/python-layouts",
			       f[i].name, f[i].offset, (first + i) * sizeof(int32_t));
			CU_FAIL("a column out of its struct's order");
		}
	CU_ASSERT((first + i) * sizeof(int32_t) == size);
}

static void test_python_layout_columns_in_order(void)
{
	CU_ASSERT_STRING_EQUAL(pylayout_fields[0].name, "minor");
	check_columns(pylayout_fields, 0, sizeof(struct pylayout));
	/* pydebug_map's minor is no field of _Py_DebugOffsets: not a named column */
	check_columns(pydebug_map_fields, 1, sizeof(struct pydebug_map));
	check_columns(pyobj_layout_fields, 1, sizeof(struct pyobj_layout));
}

static void test_python_layout_table_complete(void)
{
	int minor;

	const struct pylayout_field *f;

	for (minor = 10; minor <= 15; minor++) {
		const struct pylayout *L = pylayout_find(minor);
		const struct pydebug_map *m = pydebug_map_find(minor);

		CU_ASSERT_FATAL(L != NULL);
		CU_ASSERT(L->minor == minor);
		CU_ASSERT(L->fr_code >= 0 && L->fr_previous >= 0 && L->fr_instr >= 0);
		CU_ASSERT(L->co_filename > 0 && L->co_linetable > 0 && L->co_firstlineno > 0);
		CU_ASSERT((L->ts_frame >= 0) != (L->ts_cframe >= 0));
		CU_ASSERT(L->fr_size > L->fr_instr);
		/* PyGILState's key, or the thread list (3.15+) */
		CU_ASSERT(L->rt_autotss >= 0 ||
			  (minor >= 15 && L->is_threads_head > 0 && L->ts_status >= 0));
		CU_ASSERT(pyobj_layout_find(minor) != NULL);
		CU_ASSERT((m != NULL) == (minor >= 13));
		if (!m)
			continue;
		CU_ASSERT(m->minor == minor);
		/* every field lies inside the block read */
		for (f = pydebug_map_fields; f->name; f++) {
			int32_t v;

			memcpy(&v, (const char *)m + f->offset, sizeof(v));
			/* the frame's stackpointer is published from 3.14 on */
			if (v == -1 && minor < 14 && !strcmp(f->name, "dbg_fr_stackpointer"))
				continue;
			CU_ASSERT(v > 0 && (v < m->words || strcmp(f->name, "dbg_words") == 0));
		}
	}
	CU_ASSERT(pylayout_find(9) == NULL);
	CU_ASSERT(pylayout_find(16) == NULL);
	CU_ASSERT(pylayout_newest()->minor == 15);
	/* a later release is read with the newest map */
	CU_ASSERT(pydebug_map_find(16) == pydebug_map_find(15));
}

int main(void)
{
	static const struct unit_test tests[] = {
		{ "every supported version has a layout", test_python_layout_table_complete },
		{ "the rows' columns are the structs' fields in order",
		  test_python_layout_columns_in_order },
		{ "layouts match offsetof() with the installed headers",
		  test_python_layout_matches_headers },
		{ NULL, NULL },
	};

	if (pytest_init(__FILE__, root, pythons, 16, &npythons))
		return 77;
	return pytest_run("python-layout", tests, &ncompared,
			  "CPython 3.10+ with its internal headers", npythons,
			  "layouts not compared with headers");
}
