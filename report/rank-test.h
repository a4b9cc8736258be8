/* SPDX-License-Identifier: MIT */
/* The Mann-Whitney U test and the Hodges-Lehmann shift with its confidence bound (the gate). */
#ifndef PCOLLECT_REPORT_RANK_TEST_H
#define PCOLLECT_REPORT_RANK_TEST_H

#include <stdbool.h>
#include <stddef.h>

/* Up to this many values a side, and without ties, U's distribution is counted exactly. */
#define RANK_TEST_EXACT_MAX 50

/*
 * P(U <= u) for samples of m and n values from one distribution (the null hypothesis):
 * exact, from the counts of the orderings with each U (the coefficients of the Gaussian
 * binomial [m+n choose m]). m, n in 1..RANK_TEST_EXACT_MAX; -1 outside.
 */
double rank_test_cdf_exact(int m, int n, double u);

/*
 * The same by the normal approximation with continuity correction; ties is the sum of
 * t^3 - t over the groups of t equal values (0: none), which narrows U's variance.
 */
double rank_test_cdf_normal(int m, int n, double u, double ties);

struct rank_test {
	double u;     /* pairs (a, b) with b > a, ties counting one half */
	double p;     /* one-sided: P(U >= u) when b is no larger than a */
	bool exact;   /* p from U's exact distribution (as without ties): both sides up to
			 RANK_TEST_EXACT_MAX; else the normal approximation, ties corrected */
	double shift; /* Hodges-Lehmann: the median of the differences b - a */
	double lower; /* the lower (1 - alpha) confidence bound of that shift; -HUGE_VAL when
			 too few values leave every bound out of alpha's reach (P(U <= 0) >=
			 alpha: 3 a side at 0.05) */
};

/* The median of v[0..n) (NAN when n is 0 or memory runs out). */
double rank_test_median(const double *v, size_t n);

/*
 * Test whether b[0..n) tends to be larger than a[0..m) (one-sided Mann-Whitney U) and
 * estimate by how much (Hodges-Lehmann shift, its lower bound at confidence 1 - alpha).
 * Returns 0, -EINVAL for an empty side, -ENOMEM.
 */
int rank_test_run(const double *a, size_t m, const double *b, size_t n, double alpha,
		  struct rank_test *out);

#endif
