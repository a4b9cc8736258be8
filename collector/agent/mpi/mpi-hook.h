/* SPDX-License-Identifier: MIT */
/* The hooks the MPI shims call in the agent: one traced call, the rank after MPI_Init. */
#ifndef PCOLLECT_COLLECTOR_MPI_HOOK_H
#define PCOLLECT_COLLECTOR_MPI_HOOK_H

#include <stdint.h>

/*
 * The shims (collector/agent/mpi/, one per MPI ABI, in LD_PRELOAD after the agent) know the
 * MPI library's types; the agent knows the streams. Between them only this: the shim times the
 * call, counts its bytes and hands it over; the agent attributes it to its call site and
 * writes it (collector/agent/agent-mpi.c). The shim finds the hooks with dlsym(RTLD_DEFAULT)
 * the first time it needs them: without the agent it only forwards.
 */

/* One traced MPI call. Times are CLOCK_MONOTONIC ns. */
struct pcollect_mpi_call {
	uint32_t function;  /* enum raw_mpi_function (common/raw-mpi.h) */
	uint32_t comm_size; /* ranks in its communicator, 0 when it has none */
	uint64_t begin_ns;  /* just before the library's function was called */
	uint64_t end_ns;    /* just after it returned */
	uint64_t sent;      /* bytes, as docs/raw-format.md defines them per function */
	uint64_t received;  /* bytes */
	uintptr_t ret;      /* return address into the caller of the MPI function */
	uintptr_t entry;    /* the library's function called (the innermost frame shown) */
};

#define PCOLLECT_MPI_CALL_HOOK "pcollect_mpi_call"
#define PCOLLECT_MPI_RANK_HOOK "pcollect_mpi_rank"

/* Record c. Any thread, never in a signal handler; returns quickly when not recording. */
void pcollect_mpi_call(const struct pcollect_mpi_call *c);
/* The process's rank in MPI_COMM_WORLD and its size, once MPI_Init has returned. */
void pcollect_mpi_rank(int rank, int size);

/* The shims call them through these, found at run time. */
typedef void (*pcollect_mpi_call_fn)(const struct pcollect_mpi_call *c);
typedef void (*pcollect_mpi_rank_fn)(int rank, int size);

#endif
