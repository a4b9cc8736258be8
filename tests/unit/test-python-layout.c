/* SPDX-License-Identifier: MIT */
/* The built-in CPython layouts against offsetof() probes compiled with each version's headers. */
#include "collector/python/python-layout.h"

#include <CUnit/Basic.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "python-test-lib.h"

static char root[PATH_MAX];

static int32_t table_value(const struct pylayout *L, const char *name, int *found)
{
	const struct pylayout_field *f;
	int32_t v;

	for (f = pylayout_fields; f->name; f++)
		if (strcmp(f->name, name) == 0) {
			memcpy(&v, (const char *)L + f->offset, sizeof(v));
			*found = 1;
			return v;
		}
	*found = 0;
	return 0;
}

static void check_prefix(const char *prefix, int minor)
{
	const struct pylayout *L = pylayout_find(minor);
	char cmd[PATH_MAX * 4], exe[64], name[64], inc[PATH_MAX + 32], line[256];
	long value;
	int fields = 0, wrong = 0, found;
	FILE *p;

	CU_ASSERT_FATAL(L != NULL);
	snprintf(inc, sizeof(inc), "%.4000s/include/python3.%d", prefix, minor);
	if (access(inc, R_OK) != 0) {
		printf("\n    3.%d: no headers at %s: not compared", minor, inc);
		return;
	}
	snprintf(exe, sizeof(exe), "/tmp/pcollect-probe-%d-%d", (int)getpid(), minor);
	snprintf(cmd, sizeof(cmd),
		 "${CC:-cc} -DPy_BUILD_CORE -I'%s' -I'%s/internal' '%s/collector/python/python-probe.c'"
		 " -o '%s' && '%s'", inc, inc, root, exe, exe);
	p = popen(cmd, "r");
	CU_ASSERT_FATAL(p != NULL);
	while (fgets(line, sizeof(line), p)) {
		int32_t want;

		if (sscanf(line, "%63s %ld", name, &value) != 2)
			continue;
		want = table_value(L, name, &found);
		CU_ASSERT(found);
		fields++;
		if (want != value) {
			printf("\n    3.%d %s: table %d, headers %ld", minor, name, want, value);
			wrong++;
		}
	}
	CU_ASSERT(pclose(p) == 0);
	unlink(exe);
	printf("\n    3.%d: %d fields compared, %d differ", minor, fields, wrong);
	CU_ASSERT(fields > 30);
	CU_ASSERT(wrong == 0);
}

static void test_python_layout_matches_headers(void)
{
	static char prefixes[16][PATH_MAX];
	size_t n = pytest_find_prefixes(prefixes, 16), i;

	for (i = 0; i < n; i++)
		check_prefix(prefixes[i], pytest_prefix_minor(prefixes[i]));
}

static void test_python_layout_table_complete(void)
{
	int minor;

	for (minor = 10; minor <= 13; minor++) {
		const struct pylayout *L = pylayout_find(minor);

		CU_ASSERT_FATAL(L != NULL);
		CU_ASSERT(L->minor == minor);
		CU_ASSERT(L->fr_code >= 0 && L->fr_previous >= 0 && L->fr_instr >= 0);
		CU_ASSERT(L->co_filename > 0 && L->co_linetable > 0 && L->co_firstlineno > 0);
		CU_ASSERT((L->ts_frame >= 0) != (L->ts_cframe >= 0));
		CU_ASSERT(L->fr_size > L->fr_instr);
	}
	CU_ASSERT(pylayout_find(9) == NULL);
	CU_ASSERT(pylayout_find(14) == NULL);
}

int main(void)
{
	static char prefixes[16][PATH_MAX];
	unsigned bad;
	CU_pSuite s;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	s = CU_add_suite("python-layout", NULL, NULL);
	CU_add_test(s, "every supported version has a layout", test_python_layout_table_complete);
	if (pytest_find_prefixes(prefixes, 16) == 0)
		printf("note: no CPython 3.10-3.13 headers installed: layouts not re-probed\n");
	else if (pytest_source_root(__FILE__, root, sizeof(root)) < 0)
		printf("note: source tree not found from '%s': layouts not re-probed\n", __FILE__);
	else
		CU_add_test(s, "layouts match offsetof() with the installed headers",
			    test_python_layout_matches_headers);
	CU_basic_set_mode(CU_BRM_VERBOSE);
	CU_basic_run_tests();
	bad = CU_get_number_of_failures();
	CU_cleanup_registry();
	return bad ? 1 : 0;
}
