/* SPDX-License-Identifier: MIT */
/* Ends as told: "exit-code N" returns N, "exit-code signal N" dies of signal N, after 100 ms
   of CPU time; "exit-code burn SEC" burns SEC seconds of CPU time and returns 0. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "burn.h"

int main(int argc, char **argv)
{
	if (argc > 2 && !strcmp(argv[1], "burn")) {
		/* for -duration, -data-limit and kill tests */
		BURN_CPU_MS(atof(argv[2]) * 1000);
		return 0;
	}
	BURN_CPU_MS(100);
	if (argc > 2 && !strcmp(argv[1], "signal")) {
		int sig = atoi(argv[2]);

		signal(sig, SIG_DFL);
		raise(sig);
		return 100;
	}
	return argc > 1 ? atoi(argv[1]) : 0;
}
