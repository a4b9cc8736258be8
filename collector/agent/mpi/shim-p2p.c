/* SPDX-License-Identifier: MIT */
/* The MPI shim's point-to-point calls: sends, receives, probes, completions, init, finalize. */
#include <stdlib.h>

#include "collector/agent/mpi/shim-private.h"

/*
 * Bytes, from the caller's side: a send counts count x the datatype's size when it is posted
 * (MPI_Isend too); a receive counts what its status says arrived (MPI_Get_elements_x of
 * MPI_BYTE), with a status of our own when the caller passed MPI_STATUS_IGNORE; a
 * nonblocking receive counts when the Wait or Test that completes it returns, on that call.
 */

/* Init and Init_thread: the rank to the agent once it succeeded, traced or not. */
#define INIT(fname, params, args)                                                                  \
	SHIM_EXPORT int MPI_##fname params                                                         \
	{                                                                                          \
		static struct shim_fn fn = SHIM_FN(fname);                                         \
		typedef __typeof__(&PMPI_##fname) fn_t;                                            \
		struct pcollect_mpi_call c;                                                        \
		int ret, way = shim_enter(&fn);                                                    \
                                                                                                   \
		if (way == SHIM_FORWARD)                                                           \
			return ((fn_t)fn.next)args;                                                \
		if (way == SHIM_NONE)                                                              \
			return MPI_ERR_OTHER;                                                      \
		if (way == SHIM_PLAIN) {                                                           \
			ret = SHIM_REAL args;                                                      \
			if (ret == MPI_SUCCESS)                                                    \
				shim_report_rank();                                                \
			return ret;                                                                \
		}                                                                                  \
		shim_begin(&c, &fn, __builtin_return_address(0));                                  \
		SHIM_CALL(args);                                                                   \
		if (ret == MPI_SUCCESS)                                                            \
			shim_report_rank();                                                        \
		shim_end(&c, SHIM_COMM_NULL, ret);                                                 \
		return ret;                                                                        \
	}
INIT(Init, (int *argc, char ***argv), (argc, argv))
INIT(Init_thread, (int *argc, char ***argv, int required, int *provided),
     (argc, argv, required, provided))

/* No communicator may be asked anything once it returned. */
SHIM_WRAP(Finalize, (void), (), SHIM_COMM_NULL, (void)0)

void shim_send_bytes(struct pcollect_mpi_call *c, int count, MPI_Datatype type, int dest)
{
	if (dest != MPI_PROC_NULL)
		c->sent = shim_bytes(count, type);
}

/* The sends: count x size when posted. */
#define SEND(fname)                                                                                \
	SHIM_WRAP(fname,                                                                           \
		  (const void *buf, int count, MPI_Datatype type, int dest, int tag,               \
		   MPI_Comm comm),                                                                 \
		  (buf, count, type, dest, tag, comm), comm,                                       \
		  shim_send_bytes(&c, count, type, dest))
SEND(Send)
SEND(Ssend)
SEND(Bsend)
SEND(Rsend)

#define ISEND(fname)                                                                               \
	SHIM_WRAP(fname,                                                                           \
		  (const void *buf, int count, MPI_Datatype type, int dest, int tag,               \
		   MPI_Comm comm, MPI_Request *req),                                               \
		  (buf, count, type, dest, tag, comm, req), comm,                                  \
		  shim_send_bytes(&c, count, type, dest))
ISEND(Isend)
ISEND(Issend)
ISEND(Ibsend)
ISEND(Irsend)

SHIM_EXPORT int MPI_Recv(void *buf, int count, MPI_Datatype type, int source, int tag,
			 MPI_Comm comm, MPI_Status *status)
{
	MPI_Status own;

	SHIM_BEGIN(Recv, (buf, count, type, source, tag, comm, status));
	if (status == MPI_STATUS_IGNORE)
		status = &own;
	SHIM_CALL((buf, count, type, source, tag, comm, status));
	if (ret == MPI_SUCCESS)
		c.received = shim_status_bytes(status);
	shim_end(&c, comm, ret);
	return ret;
}

SHIM_WRAP(Irecv,
	  (void *buf, int count, MPI_Datatype type, int source, int tag, MPI_Comm comm,
	   MPI_Request *req),
	  (buf, count, type, source, tag, comm, req), comm,
	  if (*req != SHIM_REQUEST_NULL) shim_req_add(shim_req_key((uintptr_t)*req, false)))
SHIM_WRAP(Probe, (int source, int tag, MPI_Comm comm, MPI_Status *status),
	  (source, tag, comm, status), comm, (void)0)
SHIM_WRAP(Iprobe, (int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status),
	  (source, tag, comm, flag, status), comm, (void)0)

SHIM_EXPORT int MPI_Sendrecv(const void *sbuf, int scount, MPI_Datatype stype, int dest, int stag,
			     void *rbuf, int rcount, MPI_Datatype rtype, int source, int rtag,
			     MPI_Comm comm, MPI_Status *status)
{
	MPI_Status own;

	SHIM_BEGIN(Sendrecv, (sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, source, rtag,
			      comm, status));
	if (status == MPI_STATUS_IGNORE)
		status = &own;
	SHIM_CALL(
		(sbuf, scount, stype, dest, stag, rbuf, rcount, rtype, source, rtag, comm, status));
	if (ret == MPI_SUCCESS) {
		shim_send_bytes(&c, scount, stype, dest);
		c.received = shim_status_bytes(status);
	}
	shim_end(&c, comm, ret);
	return ret;
}

SHIM_EXPORT int MPI_Sendrecv_replace(void *buf, int count, MPI_Datatype type, int dest, int stag,
				     int source, int rtag, MPI_Comm comm, MPI_Status *status)
{
	MPI_Status own;

	SHIM_BEGIN(Sendrecv_replace, (buf, count, type, dest, stag, source, rtag, comm, status));
	if (status == MPI_STATUS_IGNORE)
		status = &own;
	SHIM_CALL((buf, count, type, dest, stag, source, rtag, comm, status));
	if (ret == MPI_SUCCESS) {
		shim_send_bytes(&c, count, type, dest);
		c.received = shim_status_bytes(status);
	}
	shim_end(&c, comm, ret);
	return ret;
}

/* ---- completions ------------------------------------------------------------------------ */

/*
 * Wait and Test of one request: before the call, whether it is a receive in flight, *status
 * then pointed to own when the caller ignores it.
 */
static bool one_receive(MPI_Request req, MPI_Status **status, MPI_Status *own)
{
	bool recv = req != SHIM_REQUEST_NULL && shim_req_has(shim_req_key((uintptr_t)req, false));

	if (recv && *status == MPI_STATUS_IGNORE)
		*status = own;
	return recv;
}

/* After it, completed (done): the bytes the receive before brought (recv: one_receive()). */
static uint64_t one_received(MPI_Request before, bool recv, bool done, const MPI_Status *status)
{
	if (recv && done && shim_req_take(shim_req_key((uintptr_t)before, false)))
		return shim_status_bytes(status);
	return 0;
}

SHIM_EXPORT int MPI_Wait(MPI_Request *req, MPI_Status *status)
{
	MPI_Status own;
	MPI_Request before;
	bool recv;

	SHIM_BEGIN(Wait, (req, status));
	before = *req;
	recv = one_receive(before, &status, &own);
	SHIM_CALL((req, status));
	c.received = one_received(before, recv, ret == MPI_SUCCESS, status);
	shim_end(&c, SHIM_COMM_NULL, ret);
	return ret;
}

SHIM_EXPORT int MPI_Test(MPI_Request *req, int *flag, MPI_Status *status)
{
	MPI_Status own;
	MPI_Request before;
	bool recv;

	SHIM_BEGIN(Test, (req, flag, status));
	before = *req;
	recv = one_receive(before, &status, &own);
	SHIM_CALL((req, flag, status));
	c.received = one_received(before, recv, ret == MPI_SUCCESS && *flag, status);
	shim_end(&c, SHIM_COMM_NULL, ret);
	return ret;
}

/*
 * The requests a completion call of several is given, as they were before it (it sets the
 * completed ones to MPI_REQUEST_NULL), and whether each is a receive in flight. Small sets
 * live on the stack; a larger one is allocated (the call costs more than that), and when
 * that fails the call's bytes are not counted (n 0), the call made as asked.
 */
#define REQS_ON_STACK 64

struct reqs {
	int n;
	bool any;            /* some request is a receive */
	MPI_Request *before; /* per request, as given */
	bool *recv;          /* per request */
	MPI_Status *own;     /* statuses of our own when the caller ignores them, or NULL */
	MPI_Request stack_before[REQS_ON_STACK];
	bool stack_recv[REQS_ON_STACK];
	MPI_Status stack_own[REQS_ON_STACK];
	void *heap;
};

static void reqs_init(struct reqs *r, int n, const MPI_Request *reqs, bool ignored)
{
	int i;

	r->n = n > 0 ? n : 0;
	r->any = false;
	r->heap = NULL;
	r->before = r->stack_before;
	r->recv = r->stack_recv;
	r->own = NULL;
	if (r->n > REQS_ON_STACK) {
		r->heap = malloc((size_t)r->n *
				 (sizeof(MPI_Status) + sizeof(MPI_Request) + sizeof(bool)));
		if (!r->heap) {
			r->n = 0;
			return;
		}
		r->own = r->heap;
		r->before = (MPI_Request *)(r->own + r->n);
		r->recv = (bool *)(r->before + r->n);
	}
	for (i = 0; i < r->n; i++) {
		r->before[i] = reqs[i];
		r->recv[i] = reqs[i] != SHIM_REQUEST_NULL &&
			     shim_req_has(shim_req_key((uintptr_t)reqs[i], false));
		r->any |= r->recv[i];
	}
	if (r->any && ignored && !r->own)
		r->own = r->stack_own;
	if (!ignored || !r->any)
		r->own = NULL;
}

/* Request i (given by the caller before the call) completed with status st. */
static uint64_t reqs_done(struct reqs *r, int i, const MPI_Status *st)
{
	if (i < 0 || i >= r->n || !r->recv[i])
		return 0;
	r->recv[i] = false;
	shim_req_take(shim_req_key((uintptr_t)r->before[i], false));
	return shim_status_bytes(st);
}

static void reqs_release(struct reqs *r)
{
	free(r->heap);
}

/* Waitall and Testall (flag: 1 for Waitall). */
#define ALL(fname, params, args, flag)                                                             \
	SHIM_EXPORT int MPI_##fname params                                                         \
	{                                                                                          \
		struct reqs r;                                                                     \
		int i;                                                                             \
                                                                                                   \
		SHIM_BEGIN(fname, args);                                                           \
		reqs_init(&r, n, reqs, statuses == MPI_STATUSES_IGNORE);                           \
		if (r.own)                                                                         \
			statuses = r.own;                                                          \
		SHIM_CALL(args);                                                                   \
		for (i = 0; ret == MPI_SUCCESS && (flag) && r.any && i < r.n; i++)                 \
			c.received += reqs_done(&r, i, &statuses[i]);                              \
		reqs_release(&r);                                                                  \
		shim_end(&c, SHIM_COMM_NULL, ret);                                                 \
		return ret;                                                                        \
	}
ALL(Waitall, (int n, MPI_Request reqs[], MPI_Status statuses[]), (n, reqs, statuses), 1)
ALL(Testall, (int n, MPI_Request reqs[], int *flag, MPI_Status statuses[]),
    (n, reqs, flag, statuses), *flag)

/* Waitany and Testany (flag: 1 for Waitany). */
#define ANY(fname, params, args, flag)                                                             \
	SHIM_EXPORT int MPI_##fname params                                                         \
	{                                                                                          \
		struct reqs r;                                                                     \
		MPI_Status own;                                                                    \
                                                                                                   \
		SHIM_BEGIN(fname, args);                                                           \
		reqs_init(&r, n, reqs, false);                                                     \
		if (r.any && status == MPI_STATUS_IGNORE)                                          \
			status = &own;                                                             \
		SHIM_CALL(args);                                                                   \
		if (ret == MPI_SUCCESS && r.any && (flag) && *index != MPI_UNDEFINED)              \
			c.received = reqs_done(&r, *index, status);                                \
		reqs_release(&r);                                                                  \
		shim_end(&c, SHIM_COMM_NULL, ret);                                                 \
		return ret;                                                                        \
	}
ANY(Waitany, (int n, MPI_Request reqs[], int *index, MPI_Status *status), (n, reqs, index, status),
    1)
ANY(Testany, (int n, MPI_Request reqs[], int *index, int *flag, MPI_Status *status),
    (n, reqs, index, flag, status), *flag)

/* Waitsome and Testsome: statuses[k] belongs to the request at indices[k]. */
#define SOME(fname)                                                                                \
	SHIM_EXPORT int MPI_##fname(int n, MPI_Request reqs[], int *outcount, int indices[],       \
				    MPI_Status statuses[])                                         \
	{                                                                                          \
		struct reqs r;                                                                     \
		int k;                                                                             \
                                                                                                   \
		SHIM_BEGIN(fname, (n, reqs, outcount, indices, statuses));                         \
		reqs_init(&r, n, reqs, statuses == MPI_STATUSES_IGNORE);                           \
		if (r.own)                                                                         \
			statuses = r.own;                                                          \
		SHIM_CALL((n, reqs, outcount, indices, statuses));                                 \
		for (k = 0;                                                                        \
		     ret == MPI_SUCCESS && r.any && *outcount != MPI_UNDEFINED && k < *outcount;   \
		     k++)                                                                          \
			c.received += reqs_done(&r, indices[k], &statuses[k]);                     \
		reqs_release(&r);                                                                  \
		shim_end(&c, SHIM_COMM_NULL, ret);                                                 \
		return ret;                                                                        \
	}
SOME(Waitsome)
SOME(Testsome)
