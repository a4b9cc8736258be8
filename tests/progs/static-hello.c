/* SPDX-License-Identifier: MIT */
/* A program built -static: pcollect must refuse it (the agent cannot be preloaded). */
#include <stdio.h>

int main(void)
{
	printf("hello\n");
	return 0;
}
