/* SPDX-License-Identifier: MIT */
/* OpenMP waits: GCC's libgomp through its entry points, LLVM's libomp through OMPT. */
#include "collector/agent-private.h"

void agent_omp_thread_finish(struct agent_thread *t)
{
	(void)t;
}
