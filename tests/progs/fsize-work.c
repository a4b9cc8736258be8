/* SPDX-License-Identifier: MIT */
/* CPU work in many distinct deep stacks (much raw data), and an output file of known size. */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "burn.h"

/*
 * fsize-work FILE MS: writes 64 KiB into FILE (under a 100-block RLIMIT_FSIZE, as the test
 * sets it), then burns MS milliseconds of CPU at the bottom of call chains whose depth and
 * path change all the time (150 to 600 frames), so every sample has a new stack: a
 * sampler's stream grows fast.
 * Prints the file size and "done"; exits 0.
 */

static volatile int sink;

static __attribute__((noinline, noclone)) void leaf(void)
{
	BURN(BURN_100MS / 200);
}

/*
 * The two halves of a walk down to leaf(): bit (depth % 29) of path says whether the next
 * frame is the other half or this one again.
 */
#define DOWN(self, other)                                                                          \
	static __attribute__((noinline, noclone)) void self(unsigned path, int depth)              \
	{                                                                                          \
		if (!depth)                                                                        \
			leaf();                                                                    \
		else if ((path >> (depth % 29)) & 1)                                               \
			other(path, depth - 1);                                                    \
		else                                                                               \
			self(path, depth - 1);                                                     \
		sink++;                                                                            \
	}

static void down_b(unsigned path, int depth);
DOWN(down_a, down_b)
DOWN(down_b, down_a)

int main(int argc, char **argv)
{
	static char block[4096];
	long long end;
	unsigned n = 0;
	int fd, i;

	if (argc != 3)
		return 2;
	fd = open(argv[1], O_WRONLY | O_CREAT | O_TRUNC, 0644);
	if (fd < 0)
		return 3;
	memset(block, 'z', sizeof(block));
	for (i = 0; i < 16; i++)
		if (write(fd, block, sizeof(block)) != (ssize_t)sizeof(block))
			return 4;
	close(fd);
	end = burn_cpu_ns() + (long long)(atof(argv[2]) * 1e6);
	while (burn_cpu_ns() < end) {
		n = n * 1103515245u + 12345u;
		down_a(n >> 3, 150 + (int)(n % 450));
	}
	printf("file=%d\ndone\n", 16 * 4096);
	return 0;
}
