/* SPDX-License-Identifier: MIT */
/* The bundled demo: a small numerical program: matrix product, stencil, N-body forces. */
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <math.h>
#include <string.h>

#define N    160
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
				grid[!cur][i][j] =
					0.25 * (grid[cur][i - 1][j] + grid[cur][i + 1][j] +
						grid[cur][i][j - 1] + grid[cur][i][j + 1]);
		cur = !cur;
	}
	return grid[cur][GRID / 2][GRID / 2];
}

#define BODIES 1200

static double pos[BODIES][3], acc[BODIES][3];

/* All-pairs gravitational accelerations: the O(n^2) kernel of an N-body step. */
static __attribute__((noinline)) void nbody_forces(void)
{
	for (int i = 0; i < BODIES; i++) {
		double ax = 0, ay = 0, az = 0;
		for (int j = 0; j < BODIES; j++) {
			double dx = pos[j][0] - pos[i][0], dy = pos[j][1] - pos[i][1];
			double dz = pos[j][2] - pos[i][2];
			double r2 = dx * dx + dy * dy + dz * dz + 1e-3;
			double inv = 1.0 / (r2 * sqrt(r2));
			ax += dx * inv;
			ay += dy * inv;
			az += dz * inv;
		}
		acc[i][0] = ax, acc[i][1] = ay, acc[i][2] = az;
	}
}

/* The N-body simulation runs in a second thread. */
static void *simulate(void *arg)
{
	unsigned seed = 1;

	for (int i = 0; i < BODIES; i++)
		for (int k = 0; k < 3; k++) {
			seed = seed * 1103515245u + 12345u;
			pos[i][k] = seed / 4294967296.0;
		}
	for (int step = 0; step < 150; step++) {
		nbody_forces();
		for (int i = 0; i < BODIES; i++)
			for (int k = 0; k < 3; k++)
				pos[i][k] += 1e-9 * acc[i][k];
	}
	*(double *)arg = acc[0][0];
	return NULL;
}

int main(void)
{
	pthread_t t;
	double force = 0, centre;

	for (int i = 0; i < N; i++)
		for (int j = 0; j < N; j++) {
			a[i][j] = (i + j) % 7;
			b[i][j] = (i * j) % 5;
		}
	grid[0][0][GRID / 2] = grid[1][0][GRID / 2] = 100.0;
	pthread_create(&t, NULL, simulate, &force);
	for (int r = 0; r < 300; r++)
		matmul();
	centre = stencil(3000);
	pthread_join(t, NULL);
	printf("demo: c[1][2] = %.0f, centre = %.6f, force = %.3f\n", c[1][2], centre, force);
	return 0;
}
