/* SPDX-License-Identifier: MIT */
/* The gate's statistics against published tables: Mann-Whitney U, exact and normal. */
#include <errno.h>
#include <math.h>

#include "report/rank-test.h"
#include "tests/unit/unit.h"

#define NEAR(a, b, tol) CU_ASSERT(fabs((a) - (b)) <= (tol))

/* Mann and Whitney (1947), table I: P(U <= u) for small samples. */
static void test_exact_small(void)
{
	static const double five[] = {
		1 / 252., 2 / 252., 4 / 252., 7 / 252., 12 / 252., 19 / 252.
	};
	static const double three_four[] = { 0.029, 0.057, 0.114, 0.200 };
	int u;

	for (u = 0; u < 6; u++)
		NEAR(rank_test_cdf_exact(5, 5, u), five[u], 1e-12);
	for (u = 0; u < 4; u++)
		NEAR(rank_test_cdf_exact(3, 4, u), three_four[u], 0.0005);
	NEAR(rank_test_cdf_exact(3, 4, 12), 1, 1e-12);
	NEAR(rank_test_cdf_exact(4, 3, 1), rank_test_cdf_exact(3, 4, 1), 1e-12);
	CU_ASSERT(rank_test_cdf_exact(0, 4, 1) < 0);
	CU_ASSERT(rank_test_cdf_exact(51, 4, 1) < 0);
}

/* The critical values of the usual tables: the largest U with P(U <= U) <= alpha. */
static void test_exact_critical(void)
{
	static const struct {
		int m, n;
		double alpha; /* one-sided */
		int crit;
	} rows[] = {
		{ 5, 5, 0.05, 4 },     { 10, 10, 0.05, 27 },  { 20, 20, 0.05, 138 },
		{ 8, 8, 0.025, 13 },   { 10, 10, 0.025, 23 }, { 20, 20, 0.025, 127 },
		{ 10, 10, 0.005, 16 }, { 3, 5, 0.05, 1 },
	};
	size_t i;

	for (i = 0; i < sizeof(rows) / sizeof(rows[0]); i++) {
		double at = rank_test_cdf_exact(rows[i].m, rows[i].n, rows[i].crit);
		double above = rank_test_cdf_exact(rows[i].m, rows[i].n, rows[i].crit + 1);

		if (!(at <= rows[i].alpha && above > rows[i].alpha))
			fprintf(stderr, "m=%d n=%d alpha=%g: P(U<=%d)=%g P(U<=%d)=%g\n", rows[i].m,
				rows[i].n, rows[i].alpha, rows[i].crit, at, rows[i].crit + 1,
				above);
		CU_ASSERT(at <= rows[i].alpha && above > rows[i].alpha);
	}
}

/* The normal approximation: by hand, and near the exact values where samples are large. */
static void test_normal(void)
{
	/* m = n = 20 at U = 138: z = (138.5 - 200) / sqrt(400 * 41 / 12), Phi(z) = 0.04810. */
	NEAR(rank_test_cdf_normal(20, 20, 138, 0), 0.04810, 0.00005);
	NEAR(rank_test_cdf_normal(20, 20, 138, 0), rank_test_cdf_exact(20, 20, 138), 0.002);
	NEAR(rank_test_cdf_normal(40, 30, 500, 0), rank_test_cdf_exact(40, 30, 500), 0.002);
	NEAR(rank_test_cdf_normal(20, 20, 200, 0), 0.5 + 0.5 * erf(0.5 / sqrt(2 * 1366.667)), 1e-6);
}

/* Ties: the variance narrowed (normal), or U's half rounded down (exact, small samples). */
static void test_ties(void)
{
	/* U = 3.5; t^3 - t = 6 for the two 2s; var = 4 / 12 * (5 - 6 / 12) = 1.5;
	   p = Phi((0.5 + 0.5 - 2) / sqrt(1.5)) = 0.20711. */
	const double a[] = { 1, 2 }, b[] = { 2, 3 };
	double big_a[60], big_b[60];
	struct rank_test t;
	int i;

	NEAR(rank_test_cdf_normal(2, 2, 4 - 3.5, 6), 0.20711, 0.00005);
	CU_ASSERT_EQUAL(rank_test_run(a, 2, b, 2, 0.05, &t), 0);
	NEAR(t.u, 3.5, 1e-12);
	CU_ASSERT(t.exact);
	NEAR(t.p, 1 / 6., 1e-12); /* P(U <= 0) of 2 and 2: 1 / C(4, 2) */
	NEAR(t.shift, 1, 1e-12);
	/* 60 a side, 0..59 against 0..59 shifted by 30: the normal approximation with ties. */
	for (i = 0; i < 60; i++)
		big_a[i] = i, big_b[i] = i + 30;
	CU_ASSERT_EQUAL(rank_test_run(big_a, 60, big_b, 60, 0.05, &t), 0);
	CU_ASSERT(!t.exact);
	NEAR(t.shift, 30, 1e-12);
	CU_ASSERT(t.p < 1e-6 && t.lower > 20 && t.lower < 30);
}

/* The Hodges-Lehmann shift and its lower bound: the k-th smallest difference. */
static void test_shift(void)
{
	const double a[] = { 1, 2, 3 }, b[] = { 11, 12, 13 };
	const double a5[] = { 100, 101, 99, 102, 98 }, b5[] = { 115, 114, 116, 113, 117 };
	struct rank_test t;

	CU_ASSERT_EQUAL(rank_test_run(a, 3, b, 3, 0.05, &t), 0);
	CU_ASSERT(t.exact);
	NEAR(t.u, 9, 1e-12);
	NEAR(t.p, 0.05, 1e-12); /* 1 / C(6, 3) */
	NEAR(t.shift, 10, 1e-12);
	CU_ASSERT(t.lower == -HUGE_VAL); /* P(U <= 0) = 0.05: 3 a side cannot reach p < 0.05 */
	CU_ASSERT_EQUAL(rank_test_run(a, 3, b, 3, 0.06, &t), 0);
	NEAR(t.lower, 8, 1e-12); /* at 0.06: the smallest difference */
	/* 5 a side: P(U <= 4) = 0.048, so the 5th smallest of the 25 differences. */
	CU_ASSERT_EQUAL(rank_test_run(a5, 5, b5, 5, 0.05, &t), 0);
	NEAR(t.p, 1 / 252., 1e-12);
	NEAR(t.shift, 15, 1e-12);
	NEAR(t.lower, 13, 1e-12); /* differences 11, 12, 12, 13, 13, ... */
	CU_ASSERT_EQUAL(rank_test_run(b5, 5, a5, 5, 0.05, &t), 0);
	NEAR(t.p, 1, 1e-12);
	CU_ASSERT_EQUAL(rank_test_run(a, 0, b, 3, 0.05, &t), -EINVAL);
	NEAR(rank_test_median(a5, 5), 100, 1e-12);
	NEAR(rank_test_median(b5, 4), 114.5, 1e-12);
	CU_ASSERT(isnan(rank_test_median(a5, 0)));
}

UNIT_MAIN("rank-test", NULL, NULL,
	  {
		  { "exact_small", test_exact_small },
		  { "exact_critical", test_exact_critical },
		  { "normal", test_normal },
		  { "ties", test_ties },
		  { "shift", test_shift },
	  })
