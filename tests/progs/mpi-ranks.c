/* SPDX-License-Identifier: MIT */
/* MPI known answer: rank r burns (r + 1) units of CPU, so rank 1 costs twice rank 0. */
#include <mpi.h>
#include <stdio.h>

#include "burn.h"

static __attribute__((noinline)) void rank_work(int units)
{
	for (int u = 0; u < units; u++)
		BURN_CPU_MS(300);
}

int main(int argc, char **argv)
{
	int rank = 0, size = 1;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	MPI_Comm_size(MPI_COMM_WORLD, &size);
	rank_work(rank + 1);
	MPI_Barrier(MPI_COMM_WORLD);
	printf("rank %d of %d done\n", rank, size);
	MPI_Finalize();
	return 0;
}
