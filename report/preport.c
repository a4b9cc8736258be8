/* SPDX-License-Identifier: MIT */
/* preport: the report's command line (report/main.c) as a program of its own. */
#include "report/report.h"

int main(int argc, char **argv)
{
	return report_main(argc, argv, "preport");
}
