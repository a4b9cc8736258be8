/* SPDX-License-Identifier: MIT */
/* MPI known answers: compute 1:2:3:4 by rank, a barrier that waits, rings of exact bytes. */
#include <mpi.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "api/pcollect.h"
#include "burn.h"

/*
 * mpi-job UNIT_MS RING [IDLE]
 *   Rank r burns (r + 1) x UNIT_MS of CPU time in compute() (rank IDLE none: a rank that did
 *   no work, for the HTML report's ranks), then meets the others in
 *   MPI_Barrier: rank 0 arrives first and waits longest. Then RING rounds of MPI_Sendrecv
 *   around the ring in sendrecv_ring(): rank r sends (r + 1) x 256 ints to r + 1 and receives
 *   from r - 1 what that one sends, into a buffer large enough for any (the bytes received
 *   are what arrived, not what the buffer could take); half the rounds ignore the status.
 *   Then RING rounds of MPI_Irecv + MPI_Isend + MPI_Waitall the same way in
 *   nonblocking_ring(), statuses ignored, then one MPI_Allreduce of a double. Both rings
 *   run in the region "rings" (libpcollect): their calls, and theirs alone, count in it.
 * So, per rank r of p: MPI_Sendrecv and MPI_Waitall are called RING times each, MPI_Isend
 * and MPI_Irecv RING times, MPI_Barrier and MPI_Allreduce once; bytes sent by each ring are
 * RING x (r + 1) x 1024 and received RING x (((r - 1 + p) mod p) + 1) x 1024.
 */

#define INTS_PER_STEP 256

static __attribute__((noinline)) void compute(double ms)
{
	BURN_CPU_MS(ms);
}

static __attribute__((noinline)) void sendrecv_ring(int rank, int size, int rounds, int *sbuf,
						    int *rbuf, int cap)
{
	int right = (rank + 1) % size, left = (rank + size - 1) % size, i;
	int n = (rank + 1) * INTS_PER_STEP;
	MPI_Status st;

	for (i = 0; i < rounds; i++) {
		MPI_Sendrecv(sbuf, n, MPI_INT, right, 7, rbuf, cap, MPI_INT, left, 7,
			     MPI_COMM_WORLD, i % 2 ? MPI_STATUS_IGNORE : &st);
		__asm__ volatile("" ::: "memory");
	}
}

static __attribute__((noinline)) void nonblocking_ring(int rank, int size, int rounds, int *sbuf,
						       int *rbuf, int cap)
{
	int right = (rank + 1) % size, left = (rank + size - 1) % size, i;
	int n = (rank + 1) * INTS_PER_STEP;
	MPI_Request req[2];

	for (i = 0; i < rounds; i++) {
		MPI_Irecv(rbuf, cap, MPI_INT, left, 9, MPI_COMM_WORLD, &req[0]);
		MPI_Isend(sbuf, n, MPI_INT, right, 9, MPI_COMM_WORLD, &req[1]);
		MPI_Waitall(2, req, MPI_STATUSES_IGNORE);
		__asm__ volatile("" ::: "memory");
	}
}

int main(int argc, char **argv)
{
	double unit_ms = argc > 1 ? atof(argv[1]) : 200, x, sum = 0;
	int rounds = argc > 2 ? atoi(argv[2]) : 100, idle = argc > 3 ? atoi(argv[3]) : -1;
	int rank = 0, size = 1, cap, *sbuf, *rbuf;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	cap = size * INTS_PER_STEP;
	sbuf = calloc((size_t)cap, sizeof(int));
	rbuf = calloc((size_t)cap, sizeof(int));
	if (!sbuf || !rbuf)
		MPI_Abort(MPI_COMM_WORLD, 1);
	if (rank != idle)
		compute((rank + 1) * unit_ms);
	MPI_Barrier(MPI_COMM_WORLD);
	pcollect_region_begin("rings");
	sendrecv_ring(rank, size, rounds, sbuf, rbuf, cap);
	nonblocking_ring(rank, size, rounds, sbuf, rbuf, cap);
	pcollect_region_end();
	x = rank;
	MPI_Allreduce(&x, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
	printf("rank %d of %d done, sum %g\n", rank, size, sum);
	free(sbuf);
	free(rbuf);
	MPI_Finalize();
	return 0;
}
