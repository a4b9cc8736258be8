/* SPDX-License-Identifier: MIT */
/* What the MPI shim's files share: the library found at run time and the call bracket. */
#ifndef PCOLLECT_COLLECTOR_MPI_SHIM_PRIVATE_H
#define PCOLLECT_COLLECTOR_MPI_SHIM_PRIVATE_H

/*
 * The shim is built once per MPI ABI, against that MPI's own mpi.h: SHIM_ABI is SHIM_OPENMPI
 * (handles are pointers to the library's objects, MPI_Status has _ucount) or SHIM_MPICH
 * (handles are ints; MPICH, Intel MPI, MVAPICH, Cray MPICH share it). Both shims sit in
 * LD_PRELOAD after the agent and define the MPI_* functions (and the Fortran mpi_*_ ones);
 * the first in the list receives the program's calls. Each shim looks, at the first call, at
 * the MPI library actually loaded: when it is of its own ABI it traces the call and calls the
 * library's PMPI_* entry; otherwise it forwards the call, untouched, to the next definition
 * of the same name (the other shim). Every MPI C argument is of INTEGER class on x86-64 (ints,
 * pointers; handles of either kind), so a call forwarded through a pointer of this ABI's
 * prototype reaches the next definition with the registers and stack it was made with.
 *
 * The shim links no MPI library and references none of its symbols: it loads into any
 * program, and in one without MPI none of its code ever runs. Everything of the library
 * (functions, OpenMPI's predefined objects such as ompi_mpi_comm_world behind MPI_COMM_WORLD)
 * is found with dlsym() in the library that defines PMPI_Init, wherever it was loaded (a
 * Python extension loads it RTLD_LOCAL, out of RTLD_DEFAULT's reach).
 */

#include <mpi.h>
#include <stdbool.h>
#include <stdint.h>
#include <time.h>

#include "collector/agent/mpi/mpi-hook.h"
#include "common/raw-mpi.h"

#define SHIM_OPENMPI 1
#define SHIM_MPICH   2
#if !defined(SHIM_ABI) || (SHIM_ABI != SHIM_OPENMPI && SHIM_ABI != SHIM_MPICH)
#error "build the shim with -DSHIM_ABI=SHIM_OPENMPI or SHIM_MPICH"
#endif
#if SHIM_ABI == SHIM_OPENMPI && !defined(OPEN_MPI)
#error "SHIM_OPENMPI needs Open MPI's mpi.h"
#endif
#if SHIM_ABI == SHIM_MPICH && !defined(MPICH_VERSION)
#error "SHIM_MPICH needs MPICH's mpi.h"
#endif

#define SHIM_EXPORT __attribute__((visibility("default")))
#define SHIM_TLS    __attribute__((tls_model("initial-exec")))

/* How a call runs. */
enum shim_way {
	SHIM_UNRESOLVED = 0, /* not looked at yet */
	SHIM_TRACE,          /* the library is of this ABI: timed and handed to the agent */
	SHIM_PLAIN,          /* of this ABI, but not traced: straight to its PMPI_ entry */
	SHIM_FORWARD,        /* another ABI: to the next definition of the name */
	SHIM_NONE,           /* no MPI library loaded (yet): the call fails with MPI_ERR_OTHER */
};

/* One wrapped function, resolved at its first call. */
struct shim_fn {
	const char *name;  /* "MPI_Send"; Fortran "mpi_send_" */
	const char *pname; /* "PMPI_Send"; Fortran "pmpi_send_" */
	uint32_t id;       /* enum raw_mpi_function */
	int way;           /* enum shim_way: SHIM_TRACE, SHIM_FORWARD or SHIM_UNRESOLVED */
	void *real;        /* the library's pname */
	void *next;        /* the next definition of name (SHIM_FORWARD) */
};

/* The library found and what the shim uses of it. */
struct shim_lib {
	bool ours;                 /* of this shim's ABI */
	void *handle;              /* the library that defines PMPI_Init */
	pcollect_mpi_call_fn hook; /* the agent's, NULL without it: calls are not traced */
	pcollect_mpi_rank_fn rank_hook;
	int (*comm_size)(MPI_Comm, int *);
	int (*comm_rank)(MPI_Comm, int *);
	int (*type_size)(MPI_Datatype, int *);
	int (*get_elements_x)(const MPI_Status *, MPI_Datatype, MPI_Count *);
	int (*status_f2c)(const MPI_Fint *, MPI_Status *);
	MPI_Fint **f_status_ignore;   /* the library's MPI_F_STATUS_IGNORE variable */
	MPI_Fint **f_statuses_ignore; /* MPI_F_STATUSES_IGNORE */
#if SHIM_ABI == SHIM_OPENMPI
	/* Predefined objects are the library's variables: their addresses, found at run time. */
	MPI_Comm comm_world, comm_null;
	MPI_Datatype byte, datatype_null;
	MPI_Request request_null;
	MPI_Datatype (*type_f2c)(MPI_Fint);
	MPI_Comm (*comm_f2c)(MPI_Fint);
#endif
};
extern struct shim_lib shim;
/* Depth of traced calls in this thread: a call made inside one is not traced again. */
extern __thread int shim_depth SHIM_TLS;

/* The predefined handles this ABI names at run time (OpenMPI) or as constants (MPICH). */
#if SHIM_ABI == SHIM_OPENMPI
#define SHIM_COMM_WORLD    (shim.comm_world)
#define SHIM_COMM_NULL     (shim.comm_null)
#define SHIM_BYTE          (shim.byte)
#define SHIM_DATATYPE_NULL (shim.datatype_null)
#define SHIM_REQUEST_NULL  (shim.request_null)
#define SHIM_TYPE_F2C(f)   (shim.type_f2c(f))
#define SHIM_COMM_F2C(f)   (shim.comm_f2c(f))
#else
#define SHIM_COMM_WORLD    MPI_COMM_WORLD
#define SHIM_COMM_NULL     MPI_COMM_NULL
#define SHIM_BYTE          MPI_BYTE
#define SHIM_DATATYPE_NULL MPI_DATATYPE_NULL
#define SHIM_REQUEST_NULL  MPI_REQUEST_NULL
#define SHIM_TYPE_F2C(f)   MPI_Type_f2c(f)
#define SHIM_COMM_F2C(f)   MPI_Comm_f2c(f)
#endif

/* Resolve fn (and the library, the first time): its way, never SHIM_UNRESOLVED. */
int shim_resolve(struct shim_fn *fn);

/* The way of this call of fn. */
static inline int shim_enter(struct shim_fn *fn)
{
	int way = __atomic_load_n(&fn->way, __ATOMIC_ACQUIRE);

	if (__builtin_expect(way == SHIM_UNRESOLVED, 0))
		way = shim_resolve(fn);
	if (way == SHIM_TRACE && (shim_depth || !shim.hook))
		return SHIM_PLAIN;
	return way;
}

static inline uint64_t shim_now(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/* Start a traced call of fn made from ret: c filled, the clock read last. */
static inline void shim_begin(struct pcollect_mpi_call *c, const struct shim_fn *fn, void *ret)
{
	shim_depth++;
	c->function = fn->id;
	c->comm_size = 0;
	c->sent = c->received = 0;
	c->ret = (uintptr_t)ret;
	c->entry = (uintptr_t)__atomic_load_n(&fn->real, __ATOMIC_RELAXED);
	c->begin_ns = shim_now();
}

/* End it (c->end_ns set by the caller right after the library returned): hand it over. */
void shim_end(struct pcollect_mpi_call *c, MPI_Comm comm, int ret);

/* Bytes of count elements of type (0 for a negative count or a type without a size). */
uint64_t shim_bytes(int count, MPI_Datatype type);
/* The sum of counts[0..n) elements of type. */
uint64_t shim_bytes_v(const int *counts, int n, MPI_Datatype type);
/* Bytes a receive's status says arrived. */
uint64_t shim_status_bytes(const MPI_Status *st);
/* Size and rank of comm in this process (0 and -1 when it has none). */
int shim_comm_size(MPI_Comm comm);
int shim_comm_rank(MPI_Comm comm);
/* After MPI_Init or MPI_Init_thread returned MPI_SUCCESS: the rank to the agent. */
void shim_report_rank(void);

/*
 * Receive requests in flight (MPI_Irecv until a Wait or Test completes them), so that a
 * completion counts the bytes received of receives only. Keyed by the handle's value; Fortran
 * handles (integers) in a namespace of their own. Any thread.
 */
uint64_t shim_req_key(uintptr_t handle, bool fortran);
void shim_req_add(uint64_t key);
bool shim_req_has(uint64_t key);
/* True when key was in flight (and is no longer). */
bool shim_req_take(uint64_t key);

/* The shim_fn of MPI_<fname>, unresolved. */
#define SHIM_FN(fname)                                                                             \
	{                                                                                          \
		"MPI_" #fname, "PMPI_" #fname, RAW_MPI_##fname, SHIM_UNRESOLVED, 0, 0              \
	}

/* The C prologue of a wrapper of MPI_<fname>: handles every way but tracing. */
#define SHIM_BEGIN(fname, args)                                                                    \
	static struct shim_fn fn = SHIM_FN(fname);                                                 \
	typedef __typeof__(&PMPI_##fname) fn_t;                                                    \
	struct pcollect_mpi_call c;                                                                \
	int ret;                                                                                   \
	switch (shim_enter(&fn)) {                                                                 \
	case SHIM_FORWARD:                                                                         \
		return ((fn_t)fn.next)args;                                                        \
	case SHIM_PLAIN:                                                                           \
		return ((fn_t)fn.real)args;                                                        \
	case SHIM_TRACE:                                                                           \
		break;                                                                             \
	default:                                                                                   \
		return MPI_ERR_OTHER;                                                              \
	}                                                                                          \
	shim_begin(&c, &fn, __builtin_return_address(0))

/* The library's function, for the traced call. */
#define SHIM_REAL ((fn_t)fn.real)

/* Call it and read the clock: ret and c.end_ns set. */
#define SHIM_CALL(args)                                                                            \
	do {                                                                                       \
		ret = SHIM_REAL args;                                                              \
		c.end_ns = shim_now();                                                             \
	} while (0)

/*
 * The whole traced wrapper of MPI_<fname> params (args: the parameters passed on) for a call
 * with nothing to do before it: bytes, a statement over c and the parameters run when the call
 * succeeded, counts what it moved; comm is the communicator it ran on.
 */
#define SHIM_WRAP(fname, params, args, comm, bytes)                                                \
	SHIM_EXPORT int MPI_##fname params                                                         \
	{                                                                                          \
		SHIM_BEGIN(fname, args);                                                           \
		SHIM_CALL(args);                                                                   \
		if (ret == MPI_SUCCESS) {                                                          \
			bytes;                                                                     \
		}                                                                                  \
		shim_end(&c, comm, ret);                                                           \
		return ret;                                                                        \
	}

/* What a send of count elements of type to dest moved (nothing to MPI_PROC_NULL). */
void shim_send_bytes(struct pcollect_mpi_call *c, int count, MPI_Datatype type, int dest);
/* True when this process is the root of a collective rooted at root over comm. */
bool shim_is_root(int root, MPI_Comm comm);
/* What a Bcast (Ibcast, Fortran's too) of count elements of type moved in this process. */
void shim_bcast_bytes(struct pcollect_mpi_call *c, int count, MPI_Datatype type, int root,
		      MPI_Comm comm);
/* ... and a Reduce. */
void shim_reduce_bytes(struct pcollect_mpi_call *c, int count, MPI_Datatype type, int root,
		       MPI_Comm comm);

#endif
