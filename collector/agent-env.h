/* SPDX-License-Identifier: MIT */
/* Environment variables through which pcollect configures the agent (docs/pcollect.md). */
#ifndef PCOLLECT_COLLECTOR_AGENT_ENV_H
#define PCOLLECT_COLLECTOR_AGENT_ENV_H

#define AGENT_ENV_PREFIX         "PCOLLECT_"
#define AGENT_ENV_RESULT_DIR     "PCOLLECT_RESULT_DIR"         /* absolute path of the result */
#define AGENT_ENV_INTERVAL_NS    "PCOLLECT_INTERVAL_NS"        /* sampling interval, ns */
#define AGENT_ENV_STACK_DEPTH    "PCOLLECT_STACK_DEPTH"        /* frames kept per stack */
#define AGENT_ENV_DURATION_NS    "PCOLLECT_DURATION_NS"        /* stop sampling after, ns; 0 none */
#define AGENT_ENV_START_NS       "PCOLLECT_START_MONOTONIC_NS" /* CLOCK_MONOTONIC at launch */
#define AGENT_ENV_DATA_LIMIT     "PCOLLECT_DATA_LIMIT_BYTES"   /* raw bytes for the run; 0 none */
#define AGENT_ENV_FOLLOW_CHILD   "PCOLLECT_FOLLOW_CHILD"       /* 1 or 0 */
#define AGENT_ENV_RANK           "PCOLLECT_RANK"               /* MPI rank, -1 outside a job */
#define AGENT_ENV_AGENT          "PCOLLECT_AGENT"              /* absolute path of the agent */
#define AGENT_ENV_LAUNCHER_PID   "PCOLLECT_LAUNCHER_PID"       /* pid of pcollect */
#define AGENT_ENV_EXEC           "PCOLLECT_EXEC"               /* "pid:generation", set at exec */
#define AGENT_ENV_SIGNAL         "PCOLLECT_SIGNAL"         /* sampling signal number (optional) */
#define AGENT_ENV_SAMPLING_CLOCK "PCOLLECT_SAMPLING_CLOCK" /* "timer" or "task-clock" */
/* memory-consumption: "exact", or "bytes:N" (a Poisson sample, one per N bytes on average).
   Not set: no allocation recorded, CPU sampling instead. */
#define AGENT_ENV_MEMORY "PCOLLECT_MEMORY"

#include <stdint.h>

/* The data counter (RESULT_PATH_DATA_USED), mapped by the launcher and every agent. */
struct agent_data_counter {
	uint64_t bytes; /* raw bytes written by all processes (atomic adds) */
	uint32_t hit;   /* 1 once the limit was reached */
	uint32_t pad;
};

#endif
