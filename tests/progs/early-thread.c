/* SPDX-License-Identifier: MIT */
/* Known answer: a thread started before the agent (tests/progs/early-thread-lib.c) burns
   300 ms of CPU in early_burn while main burns 200 ms in main_burn. */
#include <stdio.h>

#include "burn.h"

void early_thread_go(void);
void early_thread_join(void);

static __attribute__((noinline, noclone)) void main_burn(void)
{
	BURN_CPU_MS(200);
}

int main(void)
{
	early_thread_go();
	main_burn();
	early_thread_join();
	printf("done\n");
	return 0;
}
