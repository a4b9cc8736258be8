/* SPDX-License-Identifier: MIT */
/* The environment contract between pcollect and the agent it preloads (docs/pcollect.md). */
#ifndef PCOLLECT_COMMON_AGENT_ENV_H
#define PCOLLECT_COMMON_AGENT_ENV_H

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
#define AGENT_ENV_MPI_SHIMS      "PCOLLECT_MPI_SHIMS"      /* -trace-mpi: the shims, ':' */
#define AGENT_ENV_MPI_THRESHOLD                                                                    \
	"PCOLLECT_MPI_THRESHOLD_NS" /* a call this long gets its own                               \
				       stack, ns */
/* Record waits (-collect threading): those at least this long (ns) get their own stack. Not
   set: no waits recorded. */
#define AGENT_ENV_WAIT_THRESHOLD "PCOLLECT_WAIT_THRESHOLD_NS"
/* memory-consumption: "exact", or "bytes:N" (a Poisson sample, one per N bytes on average).
   Not set: no allocation recorded, CPU sampling instead. */
#define AGENT_ENV_MEMORY "PCOLLECT_MEMORY"
/* -ring-buffer: the window the launcher keeps, ns; the agent's chunks then stand alone
   (docs/raw-format.md). Not set or 0: none. */
#define AGENT_ENV_RING_NS "PCOLLECT_RING_BUFFER_NS"

#include <stdint.h>

/*
 * The smallest -data-limit, bytes: one chunk of raw data (AGENT_CHUNK_MAX), what a thread may
 * write before the limit is looked at again. A smaller limit would stop sampling before the
 * first chunk of samples.
 */
#define AGENT_DATA_LIMIT_MIN (32u << 10)

/* struct agent_data_counter.control: what every process of the collection is asked to do. */
enum agent_control_flags {
	AGENT_CONTROL_PAUSED = 1 << 0,  /* no sampling (timers disarmed) until resumed */
	AGENT_CONTROL_STOPPED = 1 << 1, /* sampling ended for good (-command stop, detach) */
	AGENT_CONTROL_DETACH = 1 << 2,  /* agents finish their streams and let the process go */
};

/* A process of the collection, so that pcollect -target-pid knows when all have let go. */
struct agent_member {
	int32_t pid;          /* 0: a free entry */
	uint32_t applied;     /* the control sequence it last obeyed */
	uint64_t start_ticks; /* its start time (/proc/PID/stat field 22): a reused pid differs */
};
#define AGENT_MAX_MEMBERS 256

/*
 * The collection's shared page (RESULT_PATH_DATA_USED), mapped by the launcher, every agent and
 * pcollect -command: the data counter, and the control word every agent obeys.
 */
struct agent_data_counter {
	uint64_t bytes;       /* raw bytes written by all processes (atomic adds) */
	uint32_t hit;         /* 1 once the limit was reached */
	uint32_t disk_full;   /* the errno (ENOSPC, EDQUOT) that first stopped a stream, or 0 */
	uint32_t control_seq; /* futex word: bumped after every change of control */
	uint32_t control;     /* enum agent_control_flags */
	struct agent_member members[AGENT_MAX_MEMBERS];
};

#endif
