/* SPDX-License-Identifier: MIT */
/* Raw stream records of MPI tracing (types 64-79): calls, short calls summed, the rank. */
#ifndef PCOLLECT_COMMON_RAW_MPI_H
#define PCOLLECT_COMMON_RAW_MPI_H

/*
 * docs/raw-format.md ("MPI") describes every field; keep them in step. The agent writes them
 * (collector/agent/agent-mpi.c) for the MPI calls the shims (collector/agent/mpi/) interpose;
 * pfinalize turns them into the metrics MPI Time, MPI Calls, Bytes Sent and Bytes Received
 * (finalizer/mpi.c). The encoders are async-signal-safe; the decoder never reads past the
 * payload.
 */

#include <stdint.h>
#include "common/raw-stream.h"

#define RAW_REC_MPI_FIRST 64 /* 64-79: MPI */

enum raw_mpi_type {
	RAW_REC_MPI_CALL = 64, /* one call at least the threshold long, with its own stack */
	RAW_REC_MPI_SUM = 65,  /* the shorter calls of one call site since the last sum */
	RAW_REC_MPI_RANK = 66, /* the process's rank in MPI_COMM_WORLD, from the library */
};
_Static_assert((int)RAW_REC_MPI_RANK < RAW_REC_MPI_FIRST + 16, "MPI records left 64-79");

/* What a function does, for reports (contexts.mpi_kind). */
enum raw_mpi_kind {
	RAW_MPI_KIND_OTHER = 0,      /* init, finalize */
	RAW_MPI_KIND_SEND = 1,       /* point-to-point sends, blocking or not */
	RAW_MPI_KIND_RECV = 2,       /* point-to-point receives and probes */
	RAW_MPI_KIND_SENDRECV = 3,   /* both at once */
	RAW_MPI_KIND_WAIT = 4,       /* completion of nonblocking requests */
	RAW_MPI_KIND_COLLECTIVE = 5, /* every rank of the communicator takes part */
	RAW_MPI_KIND_COMM = 6,       /* communicator management (collective too) */
};

/*
 * The functions traced, X(id, name, kind): the id is what records carry and never changes
 * meaning (new functions take new ids); the name is the C name, also for calls made through
 * the Fortran bindings.
 */
#define RAW_MPI_FUNCTIONS(X)                                                                       \
	X(1, MPI_Init, RAW_MPI_KIND_OTHER)                                                         \
	X(2, MPI_Init_thread, RAW_MPI_KIND_OTHER)                                                  \
	X(3, MPI_Finalize, RAW_MPI_KIND_OTHER)                                                     \
	X(4, MPI_Send, RAW_MPI_KIND_SEND)                                                          \
	X(5, MPI_Ssend, RAW_MPI_KIND_SEND)                                                         \
	X(6, MPI_Bsend, RAW_MPI_KIND_SEND)                                                         \
	X(7, MPI_Rsend, RAW_MPI_KIND_SEND)                                                         \
	X(8, MPI_Isend, RAW_MPI_KIND_SEND)                                                         \
	X(9, MPI_Issend, RAW_MPI_KIND_SEND)                                                        \
	X(10, MPI_Ibsend, RAW_MPI_KIND_SEND)                                                       \
	X(11, MPI_Irsend, RAW_MPI_KIND_SEND)                                                       \
	X(12, MPI_Recv, RAW_MPI_KIND_RECV)                                                         \
	X(13, MPI_Irecv, RAW_MPI_KIND_RECV)                                                        \
	X(14, MPI_Probe, RAW_MPI_KIND_RECV)                                                        \
	X(15, MPI_Iprobe, RAW_MPI_KIND_RECV)                                                       \
	X(16, MPI_Sendrecv, RAW_MPI_KIND_SENDRECV)                                                 \
	X(17, MPI_Sendrecv_replace, RAW_MPI_KIND_SENDRECV)                                         \
	X(18, MPI_Wait, RAW_MPI_KIND_WAIT)                                                         \
	X(19, MPI_Waitall, RAW_MPI_KIND_WAIT)                                                      \
	X(20, MPI_Waitany, RAW_MPI_KIND_WAIT)                                                      \
	X(21, MPI_Waitsome, RAW_MPI_KIND_WAIT)                                                     \
	X(22, MPI_Test, RAW_MPI_KIND_WAIT)                                                         \
	X(23, MPI_Testall, RAW_MPI_KIND_WAIT)                                                      \
	X(24, MPI_Testany, RAW_MPI_KIND_WAIT)                                                      \
	X(25, MPI_Testsome, RAW_MPI_KIND_WAIT)                                                     \
	X(26, MPI_Barrier, RAW_MPI_KIND_COLLECTIVE)                                                \
	X(27, MPI_Bcast, RAW_MPI_KIND_COLLECTIVE)                                                  \
	X(28, MPI_Reduce, RAW_MPI_KIND_COLLECTIVE)                                                 \
	X(29, MPI_Allreduce, RAW_MPI_KIND_COLLECTIVE)                                              \
	X(30, MPI_Gather, RAW_MPI_KIND_COLLECTIVE)                                                 \
	X(31, MPI_Gatherv, RAW_MPI_KIND_COLLECTIVE)                                                \
	X(32, MPI_Scatter, RAW_MPI_KIND_COLLECTIVE)                                                \
	X(33, MPI_Scatterv, RAW_MPI_KIND_COLLECTIVE)                                               \
	X(34, MPI_Allgather, RAW_MPI_KIND_COLLECTIVE)                                              \
	X(35, MPI_Allgatherv, RAW_MPI_KIND_COLLECTIVE)                                             \
	X(36, MPI_Alltoall, RAW_MPI_KIND_COLLECTIVE)                                               \
	X(37, MPI_Alltoallv, RAW_MPI_KIND_COLLECTIVE)                                              \
	X(38, MPI_Reduce_scatter, RAW_MPI_KIND_COLLECTIVE)                                         \
	X(39, MPI_Reduce_scatter_block, RAW_MPI_KIND_COLLECTIVE)                                   \
	X(40, MPI_Scan, RAW_MPI_KIND_COLLECTIVE)                                                   \
	X(41, MPI_Exscan, RAW_MPI_KIND_COLLECTIVE)                                                 \
	X(42, MPI_Ibarrier, RAW_MPI_KIND_COLLECTIVE)                                               \
	X(43, MPI_Ibcast, RAW_MPI_KIND_COLLECTIVE)                                                 \
	X(44, MPI_Ireduce, RAW_MPI_KIND_COLLECTIVE)                                                \
	X(45, MPI_Iallreduce, RAW_MPI_KIND_COLLECTIVE)                                             \
	X(46, MPI_Comm_split, RAW_MPI_KIND_COMM)                                                   \
	X(47, MPI_Comm_dup, RAW_MPI_KIND_COMM)

enum raw_mpi_function {
#define RAW_MPI_ENUM(id, name, kind) RAW_##name = id,
	RAW_MPI_FUNCTIONS(RAW_MPI_ENUM)
#undef RAW_MPI_ENUM
		RAW_MPI_FUNCTION_MAX = 47,
};

/* The name of function id ("MPI_Send"), NULL for an id this version does not know. */
const char *raw_mpi_function_name(uint32_t id);
/* The id of the function called name ("MPI_Send"), 0 when unknown. */
uint32_t raw_mpi_function_id(const char *name);
/* Its enum raw_mpi_kind (RAW_MPI_KIND_OTHER for an unknown id), and the kind's name. */
uint32_t raw_mpi_function_kind(uint32_t id);
const char *raw_mpi_kind_name(uint32_t kind);

/*
 * RAW_REC_MPI_CALL (thread streams): one call that lasted at least the threshold.
 *   time:svarint stack:varint function:varint duration:varint comm_size:varint
 *   sent:varint received:varint
 * RAW_REC_MPI_SUM (thread streams): count calls of one call site, function and communicator
 * size since the previous sum of the same (stack, function, comm_size), each shorter than the
 * threshold, together total ns.
 *   time:svarint stack:varint function:varint comm_size:varint count:varint total:varint
 *   sent:varint received:varint
 * time is when the call began (MPI_CALL) or when the sum was written (MPI_SUM), ns since the
 * stream's origin; stack a STACK id of the stream: the caller's stack with the MPI library's
 * entry point as its innermost frame; comm_size 0 when the call has no communicator;
 * sent/received bytes as docs/raw-format.md defines them per function.
 */
struct raw_mpi_call {
	int64_t time_ns;
	uint64_t stack;
	uint32_t function;  /* enum raw_mpi_function */
	uint32_t comm_size; /* ranks in the call's communicator, 0: none */
	uint64_t count;     /* calls (1 for RAW_REC_MPI_CALL) */
	uint64_t total_ns;  /* their duration */
	uint64_t sent;      /* bytes */
	uint64_t received;  /* bytes */
	bool summed;        /* a RAW_REC_MPI_SUM */
};

/*
 * RAW_REC_MPI_RANK (process streams): time:svarint rank:varint size:varint — the rank of
 * this process in MPI_COMM_WORLD and its size, as MPI_Comm_rank and MPI_Comm_size said after
 * MPI_Init; it replaces the rank the stream headers took from the launcher's variables.
 */
struct raw_mpi_rank {
	int64_t time_ns;
	uint32_t rank, size;
};

/* Encoders: the record written with raw_writer_record(); 0 or the writer's error. */
int raw_mpi_write_call(struct raw_writer *w, const struct raw_mpi_call *c);
int raw_mpi_write_rank(struct raw_writer *w, const struct raw_mpi_rank *r);

/*
 * Decoders of a record's payload (rec->type RAW_REC_MPI_CALL or _SUM, RAW_REC_MPI_RANK):
 * 0, or -EINVAL when it is malformed (fields missing, a count of 0 in a sum, a duration or
 * byte count past what one stream can hold).
 */
int raw_mpi_read_call(const struct raw_record *rec, struct raw_mpi_call *out);
int raw_mpi_read_rank(const struct raw_record *rec, struct raw_mpi_rank *out);

#endif
