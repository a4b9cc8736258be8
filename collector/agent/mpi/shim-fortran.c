/* SPDX-License-Identifier: MIT */
/* The MPI shim's Fortran bindings (mpi_send_ ...): the calls of programs using mpif.h or mpi. */
#include <stdlib.h>

#include "collector/agent/mpi/shim-private.h"

/*
 * gfortran's names (lower case, one trailing underscore) of the calls Fortran codes make most,
 * for mpif.h and the mpi module (mpi_f08 binds other names and is not traced). Each records
 * the call at the Fortran caller's return address and calls the library's own Fortran entry
 * (pmpi_send_); Open MPI's then calls PMPI_Send, MPICH's MPI_Send, whose wrapper sees it runs
 * inside a traced call and lets it through untraced: one call, counted once. Handles are
 * converted with the library's f2c functions for the byte counts; a status ignored
 * (MPI_F_STATUS_IGNORE) is replaced by one of ours when the bytes received are in it.
 */

/*
 * A Fortran status is MPI_STATUS_SIZE integers: the C status's size in integers in both ABIs
 * (6 in Open MPI, 5 in MPICH). Ours have room for either.
 */
#define FSTATUS_SIZE ((size_t)(sizeof(MPI_Status) / sizeof(MPI_Fint)))
#define FSTATUS_INTS 16
_Static_assert(sizeof(MPI_Status) / sizeof(MPI_Fint) <= FSTATUS_INTS, "a status of our own is "
								      "too small");

#define FSHIM_BEGIN(lname, fid, args)                                                              \
	static struct shim_fn fn = {                                                               \
		#lname "_", "p" #lname "_", fid, SHIM_UNRESOLVED, NULL, NULL                       \
	};                                                                                         \
	typedef __typeof__(&lname##_) fn_t;                                                        \
	struct pcollect_mpi_call c;                                                                \
	switch (shim_enter(&fn)) {                                                                 \
	case SHIM_FORWARD:                                                                         \
		((fn_t)fn.next) args;                                                              \
		return;                                                                            \
	case SHIM_PLAIN:                                                                           \
		((fn_t)fn.real) args;                                                              \
		return;                                                                            \
	case SHIM_TRACE:                                                                           \
		break;                                                                             \
	default:                                                                                   \
		*ierr = MPI_ERR_OTHER;                                                             \
		return;                                                                            \
	}                                                                                          \
	shim_begin(&c, &fn, __builtin_return_address(0))

#define FSHIM_CALL(args)                                                                           \
	do {                                                                                       \
		SHIM_REAL args;                                                                    \
		c.end_ns = shim_now();                                                             \
	} while (0)

/* The whole traced wrapper of lname_ params, declared and defined, as SHIM_WRAP's. */
#define FSHIM_WRAP(lname, fid, params, args, comm, bytes)                                          \
	SHIM_EXPORT void lname##_ params;                                                          \
	void lname##_ params                                                                       \
	{                                                                                          \
		FSHIM_BEGIN(lname, fid, args);                                                     \
		FSHIM_CALL(args);                                                                  \
		if (*ierr == MPI_SUCCESS) {                                                        \
			bytes;                                                                     \
		}                                                                                  \
		shim_end(&c, comm, *ierr);                                                         \
	}

static uint64_t fbytes(const MPI_Fint *count, const MPI_Fint *type)
{
	return shim_bytes(*count, SHIM_TYPE_F2C(*type));
}

static bool f_status_ignored(const MPI_Fint *status)
{
	return shim.f_status_ignore && status == *shim.f_status_ignore;
}

static bool f_statuses_ignored(const MPI_Fint *status)
{
	return shim.f_statuses_ignore && status == *shim.f_statuses_ignore;
}

static uint64_t fstatus_bytes(const MPI_Fint *fst)
{
	MPI_Status st;

	if (!shim.status_f2c || shim.status_f2c(fst, &st) != MPI_SUCCESS)
		return 0;
	return shim_status_bytes(&st);
}

/* Gather (root: received from each) and Scatter (root: sent to each), Fortran's way. */
static void fgather_bytes(struct pcollect_mpi_call *c, const MPI_Fint *scount,
			  const MPI_Fint *stype, const MPI_Fint *rcount, const MPI_Fint *rtype,
			  const MPI_Fint *root, MPI_Comm comm)
{
	c->comm_size = (uint32_t)shim_comm_size(comm);
	c->sent = fbytes(scount, stype);
	if (shim_is_root(*root, comm))
		c->received = fbytes(rcount, rtype) * c->comm_size;
}

static void fscatter_bytes(struct pcollect_mpi_call *c, const MPI_Fint *scount,
			   const MPI_Fint *stype, const MPI_Fint *rcount, const MPI_Fint *rtype,
			   const MPI_Fint *root, MPI_Comm comm)
{
	c->comm_size = (uint32_t)shim_comm_size(comm);
	if (shim_is_root(*root, comm))
		c->sent = fbytes(scount, stype) * c->comm_size;
	c->received = fbytes(rcount, rtype);
}

/* Allgather (sent once) and Alltoall (sent to each): received from each. */
static void fall_bytes(struct pcollect_mpi_call *c, const MPI_Fint *scount, const MPI_Fint *stype,
		       const MPI_Fint *rcount, const MPI_Fint *rtype, bool to_each, MPI_Comm comm)
{
	c->comm_size = (uint32_t)shim_comm_size(comm);
	c->sent = fbytes(scount, stype) * (to_each ? c->comm_size : 1);
	c->received = fbytes(rcount, rtype) * c->comm_size;
}

/* Every function defined here is declared first (nothing else declares them). */
#define FDECL(lname, ...) SHIM_EXPORT void lname##_(__VA_ARGS__);

FDECL(mpi_recv, void *buf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *source, MPI_Fint *tag,
      MPI_Fint *comm, MPI_Fint *status, MPI_Fint *ierr)
FDECL(mpi_sendrecv, void *sbuf, MPI_Fint *scount, MPI_Fint *stype, MPI_Fint *dest, MPI_Fint *stag,
      void *rbuf, MPI_Fint *rcount, MPI_Fint *rtype, MPI_Fint *source, MPI_Fint *rtag,
      MPI_Fint *comm, MPI_Fint *status, MPI_Fint *ierr)
FDECL(mpi_wait, MPI_Fint *req, MPI_Fint *status, MPI_Fint *ierr)
FDECL(mpi_waitall, MPI_Fint *n, MPI_Fint *reqs, MPI_Fint *statuses, MPI_Fint *ierr)

FSHIM_WRAP(mpi_init, RAW_MPI_Init, (MPI_Fint * ierr), (ierr), SHIM_COMM_NULL, shim_report_rank())
FSHIM_WRAP(mpi_init_thread, RAW_MPI_Init_thread,
	   (MPI_Fint * required, MPI_Fint *provided, MPI_Fint *ierr), (required, provided, ierr),
	   SHIM_COMM_NULL, shim_report_rank())
FSHIM_WRAP(mpi_finalize, RAW_MPI_Finalize, (MPI_Fint * ierr), (ierr), SHIM_COMM_NULL, (void)0)

FSHIM_WRAP(mpi_send, RAW_MPI_Send,
	   (void *buf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *dest, MPI_Fint *tag,
	    MPI_Fint *comm, MPI_Fint *ierr),
	   (buf, count, type, dest, tag, comm, ierr), SHIM_COMM_F2C(*comm),
	   shim_send_bytes(&c, *count, SHIM_TYPE_F2C(*type), *dest))
FSHIM_WRAP(mpi_isend, RAW_MPI_Isend,
	   (void *buf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *dest, MPI_Fint *tag,
	    MPI_Fint *comm, MPI_Fint *req, MPI_Fint *ierr),
	   (buf, count, type, dest, tag, comm, req, ierr), SHIM_COMM_F2C(*comm),
	   shim_send_bytes(&c, *count, SHIM_TYPE_F2C(*type), *dest))

void mpi_recv_(void *buf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *source, MPI_Fint *tag,
	       MPI_Fint *comm, MPI_Fint *status, MPI_Fint *ierr)
{
	MPI_Fint own[FSTATUS_INTS];

	FSHIM_BEGIN(mpi_recv, RAW_MPI_Recv, (buf, count, type, source, tag, comm, status, ierr));
	if (f_status_ignored(status))
		status = own;
	FSHIM_CALL((buf, count, type, source, tag, comm, status, ierr));
	if (*ierr == MPI_SUCCESS)
		c.received = fstatus_bytes(status);
	shim_end(&c, SHIM_COMM_F2C(*comm), *ierr);
}

FSHIM_WRAP(mpi_irecv, RAW_MPI_Irecv,
	   (void *buf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *source, MPI_Fint *tag,
	    MPI_Fint *comm, MPI_Fint *req, MPI_Fint *ierr),
	   (buf, count, type, source, tag, comm, req, ierr), SHIM_COMM_F2C(*comm),
	   shim_req_add(shim_req_key((uintptr_t)(uint32_t)*req, true)))

void mpi_sendrecv_(void *sbuf, MPI_Fint *scount, MPI_Fint *stype, MPI_Fint *dest, MPI_Fint *stag,
		   void *rbuf, MPI_Fint *rcount, MPI_Fint *rtype, MPI_Fint *source, MPI_Fint *rtag,
		   MPI_Fint *comm, MPI_Fint *status, MPI_Fint *ierr)
{
	MPI_Fint own[FSTATUS_INTS];

	FSHIM_BEGIN(mpi_sendrecv, RAW_MPI_Sendrecv,
		    (sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, source, rtag, comm,
		     status, ierr));
	if (f_status_ignored(status))
		status = own;
	FSHIM_CALL((sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, source, rtag, comm,
		    status, ierr));
	if (*ierr == MPI_SUCCESS) {
		shim_send_bytes(&c, *scount, SHIM_TYPE_F2C(*stype), *dest);
		c.received = fstatus_bytes(status);
	}
	shim_end(&c, SHIM_COMM_F2C(*comm), *ierr);
}

void mpi_wait_(MPI_Fint *req, MPI_Fint *status, MPI_Fint *ierr)
{
	MPI_Fint own[FSTATUS_INTS];
	uint64_t key;
	bool recv;

	FSHIM_BEGIN(mpi_wait, RAW_MPI_Wait, (req, status, ierr));
	key = shim_req_key((uintptr_t)(uint32_t)*req, true);
	recv = shim_req_has(key);
	if (recv && f_status_ignored(status))
		status = own;
	FSHIM_CALL((req, status, ierr));
	if (*ierr == MPI_SUCCESS && recv && shim_req_take(key))
		c.received = fstatus_bytes(status);
	shim_end(&c, SHIM_COMM_NULL, *ierr);
}

void mpi_waitall_(MPI_Fint *n, MPI_Fint *reqs, MPI_Fint *statuses, MPI_Fint *ierr)
{
	MPI_Fint *before = NULL, *own = NULL;
	bool any = false;
	int i;

	FSHIM_BEGIN(mpi_waitall, RAW_MPI_Waitall, (n, reqs, statuses, ierr));
	if (*n > 0 && (before = malloc((size_t)*n * sizeof(*before)))) {
		for (i = 0; i < *n; i++) {
			before[i] = reqs[i];
			any |= shim_req_has(shim_req_key((uintptr_t)(uint32_t)reqs[i], true));
		}
		if (any && f_statuses_ignored(statuses) &&
		    (own = malloc((size_t)*n * FSTATUS_INTS * sizeof(*own))))
			statuses = own;
		else if (any && f_statuses_ignored(statuses))
			any = false;
	}
	FSHIM_CALL((n, reqs, statuses, ierr));
	for (i = 0; any && *ierr == MPI_SUCCESS && i < *n; i++)
		if (shim_req_take(shim_req_key((uintptr_t)(uint32_t)before[i], true)))
			/* the i-th status of the library's Fortran layout */
			c.received += fstatus_bytes(
				statuses + (size_t)i * (own ? FSTATUS_INTS : FSTATUS_SIZE));
	free(before);
	free(own);
	shim_end(&c, SHIM_COMM_NULL, *ierr);
}

FSHIM_WRAP(mpi_barrier, RAW_MPI_Barrier, (MPI_Fint * comm, MPI_Fint *ierr), (comm, ierr),
	   SHIM_COMM_F2C(*comm), (void)0)
FSHIM_WRAP(mpi_bcast, RAW_MPI_Bcast,
	   (void *buf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *root, MPI_Fint *comm,
	    MPI_Fint *ierr),
	   (buf, count, type, root, comm, ierr), SHIM_COMM_F2C(*comm),
	   shim_bcast_bytes(&c, *count, SHIM_TYPE_F2C(*type), *root, SHIM_COMM_F2C(*comm)))
FSHIM_WRAP(mpi_reduce, RAW_MPI_Reduce,
	   (void *sbuf, void *rbuf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *op, MPI_Fint *root,
	    MPI_Fint *comm, MPI_Fint *ierr),
	   (sbuf, rbuf, count, type, op, root, comm, ierr), SHIM_COMM_F2C(*comm),
	   shim_reduce_bytes(&c, *count, SHIM_TYPE_F2C(*type), *root, SHIM_COMM_F2C(*comm)))
FSHIM_WRAP(mpi_allreduce, RAW_MPI_Allreduce,
	   (void *sbuf, void *rbuf, MPI_Fint *count, MPI_Fint *type, MPI_Fint *op, MPI_Fint *comm,
	    MPI_Fint *ierr),
	   (sbuf, rbuf, count, type, op, comm, ierr), SHIM_COMM_F2C(*comm),
	   c.sent = c.received = fbytes(count, type))
FSHIM_WRAP(mpi_gather, RAW_MPI_Gather,
	   (void *sbuf, MPI_Fint *scount, MPI_Fint *stype, void *rbuf, MPI_Fint *rcount,
	    MPI_Fint *rtype, MPI_Fint *root, MPI_Fint *comm, MPI_Fint *ierr),
	   (sbuf, scount, stype, rbuf, rcount, rtype, root, comm, ierr), SHIM_COMM_F2C(*comm),
	   fgather_bytes(&c, scount, stype, rcount, rtype, root, SHIM_COMM_F2C(*comm)))
FSHIM_WRAP(mpi_scatter, RAW_MPI_Scatter,
	   (void *sbuf, MPI_Fint *scount, MPI_Fint *stype, void *rbuf, MPI_Fint *rcount,
	    MPI_Fint *rtype, MPI_Fint *root, MPI_Fint *comm, MPI_Fint *ierr),
	   (sbuf, scount, stype, rbuf, rcount, rtype, root, comm, ierr), SHIM_COMM_F2C(*comm),
	   fscatter_bytes(&c, scount, stype, rcount, rtype, root, SHIM_COMM_F2C(*comm)))
FSHIM_WRAP(mpi_allgather, RAW_MPI_Allgather,
	   (void *sbuf, MPI_Fint *scount, MPI_Fint *stype, void *rbuf, MPI_Fint *rcount,
	    MPI_Fint *rtype, MPI_Fint *comm, MPI_Fint *ierr),
	   (sbuf, scount, stype, rbuf, rcount, rtype, comm, ierr), SHIM_COMM_F2C(*comm),
	   fall_bytes(&c, scount, stype, rcount, rtype, false, SHIM_COMM_F2C(*comm)))
FSHIM_WRAP(mpi_alltoall, RAW_MPI_Alltoall,
	   (void *sbuf, MPI_Fint *scount, MPI_Fint *stype, void *rbuf, MPI_Fint *rcount,
	    MPI_Fint *rtype, MPI_Fint *comm, MPI_Fint *ierr),
	   (sbuf, scount, stype, rbuf, rcount, rtype, comm, ierr), SHIM_COMM_F2C(*comm),
	   fall_bytes(&c, scount, stype, rcount, rtype, true, SHIM_COMM_F2C(*comm)))
