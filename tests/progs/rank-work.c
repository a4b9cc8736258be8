/* SPDX-License-Identifier: MIT */
/* Without MPI: burns (rank + 1) units, the rank taken from the launcher's environment. */
#include <stdio.h>
#include <stdlib.h>

#include "burn.h"

static __attribute__((noinline)) void rank_work(int units)
{
	for (int u = 0; u < units; u++)
		BURN_CPU_MS(200);
}

int main(void)
{
	static const char *vars[] = { "PMI_RANK", "PMIX_RANK", "OMPI_COMM_WORLD_RANK",
				      "SLURM_PROCID" };
	int rank = 0;

	for (size_t i = 0; i < sizeof(vars) / sizeof(vars[0]); i++)
		if (getenv(vars[i])) {
			rank = atoi(getenv(vars[i]));
			break;
		}
	rank_work(rank + 1);
	printf("rank %d done\n", rank);
	return 0;
}
