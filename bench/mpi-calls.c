/* SPDX-License-Identifier: MIT */
/* bench/mpi-overhead.py's program: N small MPI calls in a loop, the loop's CPU time printed. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <time.h>

/*
 * mpi-calls N: N calls, in turn MPI_Iprobe (nothing pending), MPI_Allreduce of one int and
 * MPI_Sendrecv of 8 bytes to itself, each cheap in the library, so what a tracer adds to a
 * call shows. Prints "calls N cpu_ns T": the calling thread's CPU time across the loop
 * (MPI_Init and MPI_Finalize, whose cost dwarfs the loop's, are outside it).
 */
static long long cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1000000000ll + ts.tv_nsec;
}

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 100000, i;
	int rank, flag, x = 1, y, s = 0;
	long long t0, t1;
	char out[8] = { 0 }, in[8];
	MPI_Status st;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	t0 = cpu_ns();
	for (i = 0; i < n; i++) {
		switch (i % 3) {
		case 0:
			MPI_Iprobe(MPI_ANY_SOURCE, 99, MPI_COMM_WORLD, &flag, &st);
			break;
		case 1:
			MPI_Allreduce(&x, &y, 1, MPI_INT, MPI_SUM, MPI_COMM_WORLD);
			s += y;
			break;
		default:
			MPI_Sendrecv(out, 8, MPI_BYTE, rank, 7, in, 8, MPI_BYTE, rank, 7,
				     MPI_COMM_WORLD, MPI_STATUS_IGNORE);
			break;
		}
	}
	t1 = cpu_ns();
	printf("calls %ld cpu_ns %lld sum %d\n", n, t1 - t0, s);
	MPI_Finalize();
	return 0;
}
