/* SPDX-License-Identifier: MIT */
/* The runner every unit test's main() calls: one CUnit suite, exit status 1 on any failure;
   and the removal of a test's temporary directory. */
#ifndef PCOLLECT_TESTS_UNIT_H
#define PCOLLECT_TESTS_UNIT_H

#include <CUnit/Basic.h>
#include <ftw.h>
#include <stdio.h>
#include <sys/stat.h>

struct unit_test {
	const char *name;
	void (*fn)(void);
};

/*
 * Run tests (terminated by an entry with a NULL name) as the suite suite_name, with optional
 * init and clean functions. Returns what main() should return: 0 when every test passed, 1
 * when one failed, the suite's init failed, or CUnit itself failed.
 */
static inline int unit_run(const char *suite_name, const struct unit_test *tests,
			   CU_InitializeFunc init, CU_CleanupFunc clean)
{
	unsigned int failures;
	CU_pSuite suite;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	suite = CU_add_suite(suite_name, init, clean);
	if (!suite)
		goto fail;
	for (; tests->name; tests++)
		if (!CU_add_test(suite, tests->name, tests->fn))
			goto fail;
	CU_basic_set_mode(CU_BRM_VERBOSE);
	if (CU_basic_run_tests() != CUE_SUCCESS || CU_get_error() != CUE_SUCCESS)
		goto fail;
	/* A suite whose init failed runs nothing: that is a failure too. */
	failures = CU_get_number_of_failures() + CU_get_number_of_suites_failed();
	CU_cleanup_registry();
	return failures != 0;
fail:
	fprintf(stderr, "%s: %s\n", suite_name, CU_get_error_msg());
	CU_cleanup_registry();
	return 1;
}

/*
 * The main() of a test file with no set-up of its own: UNIT_MAIN("path",
 * UNIT_TEST("clean_table", test_path_clean_table), ...) runs the tests as suite "path".
 */
#define UNIT_TEST(name, fn)                                                                        \
	{                                                                                          \
		name, fn                                                                           \
	}
#define UNIT_MAIN(suite_name, ...)                                                                 \
	int main(void)                                                                             \
	{                                                                                          \
		static const struct unit_test tests_[] = { __VA_ARGS__, { NULL, NULL } };          \
		return unit_run(suite_name, tests_, NULL, NULL);                                   \
	}

static inline int unit_remove_entry(const char *path, const struct stat *st, int flag,
				    struct FTW *ftw)
{
	return remove(path);
}

/* Remove dir and everything below it (a test's temporary directory): 0, or -1 with errno. */
static inline int unit_remove_tree(const char *dir)
{
	return nftw(dir, unit_remove_entry, 16, FTW_DEPTH | FTW_PHYS);
}

#endif
