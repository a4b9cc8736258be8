/* SPDX-License-Identifier: MIT */
/* Two ranks: rank 0 computes for a known CPU time while rank 1 waits for it in MPI_Recv. */
#include <mpi.h>
#include <stdio.h>
#include <time.h>

#define WORK_NS 400000000ll /* rank 0's compute, CPU time */

static long long thread_cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return (long long)ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

/* WORK_NS of CPU time (the clock reads included: they are its time). */
static __attribute__((noinline)) double compute(void)
{
	static volatile double sink;
	long long start = thread_cpu_ns();
	int i;

	while (thread_cpu_ns() - start < WORK_NS)
		for (i = 0; i < 1000; i++)
			sink = sink * 0.5 + i;
	return 1.5;
}

/*
 * Rank 0 computes, then sends rank 1 one double; rank 1 waits for it in MPI_Recv, which
 * MPICH and Open MPI wait in by polling: its CPU time in the call is their progress engine's.
 * Each rank writes the CPU time it measured (compute_ns=N, recv_ns=N) to DIR/figures.RANK
 * (argv[1]); its standard output is the same every run.
 */
int main(int argc, char **argv)
{
	double x = 0;
	long long t;
	char path[4096];
	FILE *f;
	int rank = 0;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Barrier(MPI_COMM_WORLD);
	t = thread_cpu_ns();
	if (rank == 0) {
		x = compute();
		t = thread_cpu_ns() - t;
		MPI_Send(&x, 1, MPI_DOUBLE, 1, 0, MPI_COMM_WORLD);
	} else if (rank == 1) {
		MPI_Recv(&x, 1, MPI_DOUBLE, 0, 0, MPI_COMM_WORLD, MPI_STATUS_IGNORE);
		t = thread_cpu_ns() - t;
	}
	snprintf(path, sizeof(path), "%s/figures.%d", argc > 1 ? argv[1] : ".", rank);
	f = fopen(path, "w");
	if (!f || fprintf(f, "%s=%lld\n", rank ? "recv_ns" : "compute_ns", t) < 0 || fclose(f))
		MPI_Abort(MPI_COMM_WORLD, 1);
	printf("rank %d: x=%g\n", rank, x);
	MPI_Finalize();
	return 0;
}
