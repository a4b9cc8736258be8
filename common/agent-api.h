/* SPDX-License-Identifier: MIT */
/* The call between libpcollect (the control API programs link) and the agent (docs/api.md). */
#ifndef PCOLLECT_COMMON_AGENT_API_H
#define PCOLLECT_COMMON_AGENT_API_H

/*
 * A program built with libpcollect runs anywhere: the library looks the agent's one entry
 * point up by name at call time (dlsym(RTLD_DEFAULT, PCOLLECT_AGENT_CALL)), so it finds an
 * agent preloaded by pcollect, one loaded later by pcollect -target-pid (which loads it
 * RTLD_GLOBAL for this), or none. The Python module (api/python/pcollect) makes the same call
 * through ctypes with the same numbers.
 *
 *   int pcollect_agent_call(int op, const char *arg);
 *
 * returns 0 when done, or -1 when this process is not being profiled (the call did nothing).
 */
#define PCOLLECT_AGENT_CALL "pcollect_agent_call"

enum pcollect_agent_op {
	PCOLLECT_OP_PROBE = 0,        /* 0 when this process is profiled */
	PCOLLECT_OP_PAUSE = 1,        /* pause the whole collection (every process) */
	PCOLLECT_OP_RESUME = 2,       /* resume it */
	PCOLLECT_OP_REGION_BEGIN = 3, /* arg: the region's name; the calling thread enters it */
	PCOLLECT_OP_REGION_END = 4,   /* the calling thread leaves its innermost region */
	/* arg: "w START DURATION CODE:OFFSET...": an asyncio task of the calling thread was
	   suspended from START for DURATION (CLOCK_MONOTONIC, decimal ns) at the await of the
	   frames given, innermost first (hex code object address: hex byte offset); "s TIME
	   COUNT TOTAL CODE:OFFSET...": COUNT shorter suspensions there, TOTAL ns in all; the
	   Python module's task driver sends it (api/python/pcollect/_tasks.py) */
	PCOLLECT_OP_TASK_WAIT = 5,
	/* returns the id of the calling thread's stack here (native and Python frames), in its
	   own stream, for a thread pool task it submits; 0 when none (not sampled) */
	PCOLLECT_OP_ORIGIN_TAKE = 6,
	/* arg: "TID STACK": a pool task that thread TID submitted at stack STACK (an id
	   PCOLLECT_OP_ORIGIN_TAKE returned there) begins in the calling thread; NULL: it ended
	   (RAW_REC_ORIGIN of kind RAW_ORIGIN_TASK; api/python/pcollect/_pools.py sends both) */
	PCOLLECT_OP_ORIGIN_TASK = 7,
};

#endif
