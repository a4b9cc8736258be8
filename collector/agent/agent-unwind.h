/* SPDX-License-Identifier: MIT */
/* The agent's one libunwind loop: a native stack from a signal's context or from here. */
#ifndef PCOLLECT_COLLECTOR_AGENT_UNWIND_H
#define PCOLLECT_COLLECTOR_AGENT_UNWIND_H

#include <stdbool.h>
#include <stdint.h>

/* Which frames on top of the stack are left out. */
enum agent_unwind_skip {
	AGENT_UNWIND_KEEP_ALL,       /* none: the sampling handler's interrupted context */
	AGENT_UNWIND_SKIP_OURS,      /* the agent's (and a sanitizer's) frames: a wait */
	AGENT_UNWIND_SKIP_OURS_LAST, /* the same but the last of them, a frame of ours the
					program's code runs under (OpenMP's outlined functions,
					called by our trampoline) */
	AGENT_UNWIND_SKIP_TO_RET,    /* every frame above the one whose ip is until: an MPI
					call, from the shim's return into its caller */
};

/* One unwind: where its frames go and what it found. */
struct agent_unwind {
	uint64_t *ips;  /* innermost first */
	uint32_t n;     /* frames in ips: the caller may put an exact pc first */
	uint32_t max;   /* room in ips */
	uint32_t flags; /* RAW_STACK_*: the unwind adds TRUNCATED and UNWIND_ERROR */
	enum agent_unwind_skip skip;
	uintptr_t until; /* AGENT_UNWIND_SKIP_TO_RET: the first ip kept */
	bool skipped;    /* out: the unwind got past the frames it leaves out */
};

/*
 * Unwind from the interrupted context uc (the sampling handler's ucontext_t), its pc first
 * (RAW_STACK_FIRST_IS_PC set). Async-signal-safe: libunwind's local unwinder, no allocation,
 * no lock. Returns u->n; 0 when the context could not be read.
 */
uint32_t agent_unwind_signal(struct agent_unwind *u, void *uc);

/*
 * Unwind the calling thread from the caller's frame outwards, leaving out the frames u->skip
 * names (this function's own among them). Outside the signal handler. Returns u->n.
 */
uint32_t agent_unwind_here(struct agent_unwind *u);

#endif
