/* SPDX-License-Identifier: MIT */
/* Burns 20 ms of CPU, then enters seccomp's strict mode (read, write, _exit and sigreturn
   only, for this thread), burns about 20 ms more, writes a line and ends with the raw exit system
   call: the process ends with status 0 and the line printed before strict mode is lost when
   stdout is a pipe (stdio's buffer is never flushed), as without the collector. */
#include <linux/seccomp.h>
#include <stdio.h>
#include <string.h>
#include <sys/prctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include "burn.h"

int main(void)
{
	static const char line[] = "strict mode: done\n";

	printf("buffered before strict mode\n");
	BURN_CPU_MS(20);
	if (prctl(PR_SET_SECCOMP, SECCOMP_MODE_STRICT)) {
		perror("prctl");
		return 1;
	}
	BURN(BURN_100MS / 5); /* no clock to read in strict mode: getrusage is refused */
	if (write(1, line, strlen(line)) < 0)
		syscall(SYS_exit, 3);
	syscall(SYS_exit, 0);
	return 2;
}
