/* SPDX-License-Identifier: MIT */
/* preport: the report's command line (report/main.c) as a program of its own. */
#include "common/tool-run.h"
#include "report/report.h"

int main(int argc, char **argv)
{
	/* Run by pcollect (argv[0] "pcollect"), it speaks as pcollect: one program to the user. */
	return report_main(argc, argv, tool_speaks_as(argv[0], "preport"));
}
