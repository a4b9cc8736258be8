/* SPDX-License-Identifier: MIT */
/* The Mann-Whitney U test and the Hodges-Lehmann shift with its confidence bound (the gate). */
#include <errno.h>
#include <math.h>
#include <stdlib.h>
#include <string.h>

#include "common/cmp.h"
#include "report/rank-test.h"

/*
 * P(U <= k) for k = 0..mn, into a new array (NULL: no memory). The orderings with U = k are
 * the coefficients of q^k in [m+n choose m]_q, the product over i = 1..m of
 * (1 - q^(n+i)) / (1 - q^i): a multiplication, then a division (a running sum), per factor,
 * degrees above mn dropped (they are 0 in the end).
 */
static double *exact_cdf(int m, int n)
{
	size_t mn = (size_t)m * (size_t)n, k, i;
	double *c = calloc(mn + 1, sizeof(*c)), all = 0;

	if (!c)
		return NULL;
	c[0] = 1;
	for (i = 1; i <= (size_t)m; i++) {
		size_t up = (size_t)n + i;

		for (k = mn; up <= mn && k >= up; k--)
			c[k] -= c[k - up];
		for (k = i; k <= mn; k++)
			c[k] += c[k - i];
	}
	for (k = 0; k <= mn; k++)
		all += c[k];
	for (k = 0; k <= mn; k++)
		c[k] = (k ? c[k - 1] : 0) + c[k] / all;
	return c;
}

/* P(U <= u) read from the array of exact_cdf(). */
static double cdf_at(const double *c, size_t mn, double u)
{
	if (u < 0)
		return 0;
	return u >= (double)mn ? 1 : c[(size_t)floor(u + 1e-9)];
}

double rank_test_cdf_exact(int m, int n, double u)
{
	double *c, p;

	if (m < 1 || n < 1 || m > RANK_TEST_EXACT_MAX || n > RANK_TEST_EXACT_MAX)
		return -1;
	if (!(c = exact_cdf(m, n)))
		return -1;
	p = cdf_at(c, (size_t)m * (size_t)n, u);
	free(c);
	return p;
}

double rank_test_cdf_normal(int m, int n, double u, double ties)
{
	double N = (double)m + n, mean = (double)m * n / 2;
	double var = (double)m * n / 12 * ((N + 1) - (N > 1 ? ties / (N * (N - 1)) : 0));

	if (var <= 0)
		return u >= mean ? 1 : 0;
	return 0.5 * erfc(-(u + 0.5 - mean) / sqrt(var) / M_SQRT2);
}

static int dcmp(const void *pa, const void *pb)
{
	return CMP(*(const double *)pa, *(const double *)pb);
}

double rank_test_median(const double *v, size_t n)
{
	double *c = malloc((n + 1) * sizeof(*c)), x;

	if (!c || !n) {
		free(c);
		return NAN;
	}
	memcpy(c, v, n * sizeof(*c));
	qsort(c, n, sizeof(*c), dcmp);
	x = n % 2 ? c[n / 2] : (c[n / 2 - 1] + c[n / 2]) / 2;
	free(c);
	return x;
}

/* The sum of t^3 - t over the groups of t equal values of a and b together. */
static double tie_sum(const double *a, size_t m, const double *b, size_t n)
{
	double *all = malloc((m + n) * sizeof(*all)), sum = 0;
	size_t i, j;

	if (!all)
		return -1;
	memcpy(all, a, m * sizeof(*a));
	memcpy(all + m, b, n * sizeof(*b));
	qsort(all, m + n, sizeof(*all), dcmp);
	for (i = 0; i < m + n; i = j) {
		for (j = i + 1; j < m + n && all[j] == all[i]; j++)
			;
		sum += (double)(j - i) * (double)(j - i) * (double)(j - i) - (double)(j - i);
	}
	free(all);
	return sum;
}

int rank_test_run(const double *a, size_t m, const double *b, size_t n, double alpha,
		  struct rank_test *out)
{
	double *d, *c = NULL, ties, u = 0;
	size_t i, j, k, mn = m * n;
	bool small = m <= RANK_TEST_EXACT_MAX && n <= RANK_TEST_EXACT_MAX;

	memset(out, 0, sizeof(*out));
	if (!m || !n)
		return -EINVAL;
	if ((ties = tie_sum(a, m, b, n)) < 0)
		return -ENOMEM;
	if (!(d = malloc(mn * sizeof(*d))) || (small && !(c = exact_cdf((int)m, (int)n)))) {
		free(d);
		return -ENOMEM;
	}
	for (i = 0; i < m; i++)
		for (j = 0; j < n; j++) {
			u += b[j] > a[i] ? 1 : b[j] == a[i] ? 0.5 : 0;
			d[i * n + j] = b[j] - a[i];
		}
	out->u = u;
	/*
	 * U and mn - U have one distribution: P(U >= u) = P(U <= mn - u). Small samples take
	 * the exact distribution even with ties (a tie's half rounds mn - u down): the normal
	 * approximation would promise p = 0.040 to 3 runs a side, whose best is 0.05.
	 */
	out->exact = small;
	out->p = small ? cdf_at(c, mn, (double)mn - u)
		       : rank_test_cdf_normal((int)m, (int)n, (double)mn - u, ties);
	qsort(d, mn, sizeof(*d), dcmp);
	out->shift = mn % 2 ? d[mn / 2] : (d[mn / 2 - 1] + d[mn / 2]) / 2; /* d is sorted */
	/*
	 * The lower bound: the k-th smallest difference, k the largest with P(U <= k - 1) <
	 * alpha (the shifts below it are those the test rejects at alpha, p < alpha as the
	 * gate asks).
	 */
	out->lower = -HUGE_VAL;
	for (k = 1; k <= mn; k++) {
		if ((c ? cdf_at(c, mn, (double)k - 1)
		       : rank_test_cdf_normal((int)m, (int)n, (double)k - 1, 0)) >= alpha)
			break;
		out->lower = d[k - 1];
	}
	free(d);
	free(c);
	return 0;
}
