/* SPDX-License-Identifier: MIT */
/* A process family: fork, system(), a shell pipeline, then exec; every member burns 200 ms of
   CPU time in family_work. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "burn.h"

static __attribute__((noinline, noclone)) void family_work(void)
{
	BURN_CPU_MS(200);
}

int main(int argc, char **argv)
{
	char cmd[8192];
	pid_t pid;
	int status;

	if (argc > 2 && !strcmp(argv[1], "leaf")) {
		/* "leaf TAG": burn, then print the tag (and count stdin lines for "sink"). */
		int lines = 0, c;

		family_work();
		if (!strcmp(argv[2], "sink")) {
			while ((c = getchar()) != EOF)
				lines += c == '\n';
			printf("sink got %d lines\n", lines);
		} else {
			printf("leaf %s\n", argv[2]);
		}
		return 0;
	}
	family_work();
	fflush(stdout);
	pid = fork();
	if (pid == 0) {
		family_work();
		printf("forked child\n");
		fflush(stdout);
		_exit(0);
	}
	waitpid(pid, &status, 0);
	snprintf(cmd, sizeof(cmd), "%s leaf system", argv[0]);
	if (system(cmd) != 0)
		return 1;
	snprintf(cmd, sizeof(cmd), "%s leaf pipe | %s leaf sink", argv[0], argv[0]);
	fflush(stdout);
	if (system(cmd) != 0)
		return 1;
	fflush(stdout);
	execl(argv[0], argv[0], "leaf", "exec", (char *)NULL);
	perror("exec");
	return 1;
}
