/* SPDX-License-Identifier: MIT */
/* A live heap of known shape over time, for memory-consumption's timeline (report-html.py):
 * four blocks of 8 MiB allocated one by one, then freed one by one, each step followed by
 * 60 ms of CPU time, so that every step is a point of its own in the counters table (one
 * point per sampling interval at most). The live heap climbs 8, 16, 24, 32 MiB and comes
 * down 24, 16, 8, 0: its peak is 32 MiB exactly. Each block is written, so RSS follows. */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "burn.h"

#define BLOCK (8u << 20)
#define STEPS 4

int main(void)
{
	void *held[STEPS];
	int i;

	for (i = 0; i < STEPS; i++) {
		held[i] = malloc(BLOCK);
		if (!held[i])
			return 2;
		memset(held[i], i + 1, BLOCK);
		BURN_CPU_MS(60);
	}
	for (i = STEPS - 1; i >= 0; i--) {
		free(held[i]);
		BURN_CPU_MS(60);
	}
	return write(1, "done\n", 5) == 5 ? 0 : 1;
}
