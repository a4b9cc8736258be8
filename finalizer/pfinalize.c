/* SPDX-License-Identifier: MIT */
/* pfinalize: the finalizer's command line (finalizer/main.c) as a program of its own. */
#include "common/tool-run.h"
#include "finalizer/finalize.h"

int main(int argc, char **argv)
{
	/* Run by pcollect (argv[0] "pcollect"), it speaks as pcollect: one program to the user. */
	return finalize_main(argc, argv, tool_speaks_as(argv[0], "pfinalize"));
}
