/* SPDX-License-Identifier: MIT */
/* The bundled demo: a small numerical program with a stencil, a matrix product and a sort. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define N 160
#define GRID 256

static double a[N][N], b[N][N], c[N][N];
static double grid[2][GRID][GRID];

/* Dense matrix product, the naive triple loop. */
static __attribute__((noinline)) void matmul(void)
{
	for (int i = 0; i < N; i++)
		for (int j = 0; j < N; j++) {
			double s = 0;
			for (int k = 0; k < N; k++)
				s += a[i][k] * b[k][j];
			c[i][j] = s;
		}
}

/* Jacobi relaxation of a 2-D grid. */
static __attribute__((noinline)) double stencil(int sweeps)
{
	int cur = 0;

	for (int s = 0; s < sweeps; s++) {
		for (int i = 1; i < GRID - 1; i++)
			for (int j = 1; j < GRID - 1; j++)
				grid[!cur][i][j] = 0.25 * (grid[cur][i - 1][j] + grid[cur][i + 1][j] +
							   grid[cur][i][j - 1] + grid[cur][i][j + 1]);
		cur = !cur;
	}
	return grid[cur][GRID / 2][GRID / 2];
}

static int cmp_double(const void *x, const void *y)
{
	double p = *(const double *)x, q = *(const double *)y;
	return (p > q) - (p < q);
}

/* Sorting work in a second thread. */
static void *sorter(void *arg)
{
	size_t n = 400000;
	double *v = malloc(n * sizeof(*v));
	unsigned seed = 1;

	for (int round = 0; round < 20; round++) {
		for (size_t i = 0; i < n; i++) {
			seed = seed * 1103515245u + 12345u;
			v[i] = seed / 4294967296.0;
		}
		qsort(v, n, sizeof(*v), cmp_double);
	}
	*(double *)arg = v[n / 2];
	free(v);
	return NULL;
}

int main(void)
{
	pthread_t t;
	double median = 0, centre;

	for (int i = 0; i < N; i++)
		for (int j = 0; j < N; j++) {
			a[i][j] = (i + j) % 7;
			b[i][j] = (i * j) % 5;
		}
	grid[0][0][GRID / 2] = grid[1][0][GRID / 2] = 100.0;
	pthread_create(&t, NULL, sorter, &median);
	for (int r = 0; r < 120; r++)
		matmul();
	centre = stencil(1500);
	pthread_join(t, NULL);
	printf("demo: c[1][2] = %.0f, centre = %.6f, median = %.3f\n", c[1][2], centre, median);
	return 0;
}
