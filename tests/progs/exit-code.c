/* SPDX-License-Identifier: MIT */
/* Ends as told: "exit-code N" returns N, "exit-code signal N" dies of signal N. */
#include <signal.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "burn.h"

int main(int argc, char **argv)
{
	BURN(BURN_100MS);
	if (argc > 2 && !strcmp(argv[1], "signal")) {
		int sig = atoi(argv[2]);

		signal(sig, SIG_DFL);
		raise(sig);
		return 100;
	}
	if (argc > 2 && !strcmp(argv[1], "burn")) {
		/* "burn SEC": CPU work for about SEC seconds, for -duration and kill tests. */
		long i, n = (long)(atof(argv[2]) * 10);

		for (i = 0; i < n; i++)
			BURN(BURN_100MS);
		return 0;
	}
	return argc > 1 ? atoi(argv[1]) : 0;
}
