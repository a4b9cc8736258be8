/* SPDX-License-Identifier: MIT */
/* The runner every unit test's main() calls: one CUnit suite, exit status 1 on any failure;
   and the removal of a test's temporary directory. */
#ifndef PCOLLECT_TESTS_UNIT_H
#define PCOLLECT_TESTS_UNIT_H

#include <CUnit/Basic.h>
#include <ftw.h>
#include <sys/stat.h>
#include <stdio.h>

struct unit_test {
	const char *name;
	void (*fn)(void);
};

/*
 * Run the n tests as the suite suite_name, with optional init and clean functions. Returns
 * what main() should return: 0 when every test passed, 1 when one failed, the suite's init
 * failed, or CUnit itself failed.
 */
static inline int unit_run_tests(const char *suite_name, const struct unit_test *tests, size_t n,
				 CU_InitializeFunc init, CU_CleanupFunc clean)
{
	unsigned int failures;
	CU_pSuite suite;
	size_t i;

	if (CU_initialize_registry() != CUE_SUCCESS)
		return 1;
	suite = CU_add_suite(suite_name, init, clean);
	if (!suite)
		goto fail;
	for (i = 0; i < n; i++)
		if (!CU_add_test(suite, tests[i].name, tests[i].fn))
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

/* unit_run_tests() of the tests up to an entry with a NULL name. */
static inline int unit_run(const char *suite_name, const struct unit_test *tests,
			   CU_InitializeFunc init, CU_CleanupFunc clean)
{
	size_t n = 0;

	while (tests[n].name)
		n++;
	return unit_run_tests(suite_name, tests, n, init, clean);
}

/*
 * The main() of a test program that needs nothing else: the tests, a braced list of
 * { "name", function } in the order they run, as the suite suite_name with init and clean
 * (NULL: none).
 */
#define UNIT_MAIN(suite_name, init, clean, ...)                                                    \
	int main(void)                                                                             \
	{                                                                                          \
		static const struct unit_test tests_[] = __VA_ARGS__;                              \
		return unit_run_tests(suite_name, tests_, sizeof(tests_) / sizeof(tests_[0]),      \
				      init, clean);                                                \
	}

/* The n files a test program is given: argv[1..n] into *dest[0..n-1]. 0, or 2 (a usage error). */
static inline int unit_files(int argc, char **argv, const char **const *dest, size_t n,
			     const char *usage)
{
	size_t i;

	if (argc != (int)n + 1) {
		fprintf(stderr, "usage: %s %s\n", argv[0], usage);
		return 2;
	}
	for (i = 0; i < n; i++)
		*dest[i] = argv[i + 1];
	return 0;
}

/*
 * UNIT_MAIN for a program that is given files (libraries built for it): dest, an array of
 * the addresses of the variables that get them, in order, usage how to name them.
 */
#define UNIT_MAIN_FILES(suite_name, dest, usage, init, clean, ...)                                 \
	int main(int argc, char **argv)                                                            \
	{                                                                                          \
		static const struct unit_test tests_[] = __VA_ARGS__;                              \
                                                                                                   \
		if (unit_files(argc, argv, dest, sizeof(dest) / sizeof(dest[0]), usage))           \
			return 2;                                                                  \
		return unit_run_tests(suite_name, tests_, sizeof(tests_) / sizeof(tests_[0]),      \
				      init, clean);                                                \
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
