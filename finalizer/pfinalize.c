/* SPDX-License-Identifier: MIT */
/* pfinalize: the finalizer's command line (finalizer/main.c) as a program of its own. */
#include "finalizer/finalize.h"

int main(int argc, char **argv)
{
	return finalize_main(argc, argv, "pfinalize");
}
