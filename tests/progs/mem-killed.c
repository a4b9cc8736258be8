/* SPDX-License-Identifier: MIT */
/* Holds known allocations until killed with SIGKILL (tests/e2e/mem-known.py). */
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "mem-sites.h"

/*
 *   hold_site   5 blocks of 1000000 bytes, held until the kill: 5000000 allocated and leaked
 *   churn_site  1000 malloc(64)/free pairs: 64000 bytes, all freed
 * Then the program writes its pid to the file argv[1] (renamed into place whole) and waits
 * for its end.
 */

static void *held[5];

SITE hold_site(void)
{
	int i;

	MALLOC_EACH(i, held, 5, 1000000);
	for (i = 0; i < 5; i++)
		memset(held[i], 1, 1000000);
}

SITE churn_site(void)
{
	CHURN(1000, 64);
}

int main(int argc, char **argv)
{
	char tmp[4096], pid[32];
	int fd, n;

	if (argc != 2)
		return 2;
	hold_site();
	churn_site();
	snprintf(tmp, sizeof(tmp), "%s.tmp", argv[1]);
	n = snprintf(pid, sizeof(pid), "%d\n", (int)getpid());
	fd = open(tmp, O_WRONLY | O_CREAT | O_TRUNC, 0600);
	if (fd < 0 || write(fd, pid, (size_t)n) != n || close(fd) || rename(tmp, argv[1]))
		return 3;
	for (;;)
		pause();
}
