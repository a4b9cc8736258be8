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

SHIM_EXPORT int MPI_Init(int *argc, char ***argv)
{
	static struct shim_fn fn = SHIM_FN(Init);
	typedef __typeof__(&PMPI_Init) fn_t;
	struct pcollect_mpi_call c;
	int ret, way = shim_enter(&fn);

	if (way == SHIM_FORWARD)
		return ((fn_t)fn.next)(argc, argv);
	if (way == SHIM_NONE)
		return MPI_ERR_OTHER;
	if (way == SHIM_PLAIN) {
		ret = SHIM_REAL(argc, argv);
		if (ret == MPI_SUCCESS)
			shim_report_rank();
		return ret;
	}
	shim_begin(&c, &fn, __builtin_return_address(0));
	SHIM_CALL((argc, argv));
	if (ret == MPI_SUCCESS)
		shim_report_rank();
	shim_end(&c, SHIM_COMM_NULL, ret);
	return ret;
}

SHIM_EXPORT int MPI_Init_thread(int *argc, char ***argv, int required, int *provided)
{
	static struct shim_fn fn = SHIM_FN(Init_thread);
	typedef __typeof__(&PMPI_Init_thread) fn_t;
	struct pcollect_mpi_call c;
	int ret, way = shim_enter(&fn);

	if (way == SHIM_FORWARD)
		return ((fn_t)fn.next)(argc, argv, required, provided);
	if (way == SHIM_NONE)
		return MPI_ERR_OTHER;
	if (way == SHIM_PLAIN) {
		ret = SHIM_REAL(argc, argv, required, provided);
		if (ret == MPI_SUCCESS)
			shim_report_rank();
		return ret;
	}
	shim_begin(&c, &fn, __builtin_return_address(0));
	SHIM_CALL((argc, argv, required, provided));
	if (ret == MPI_SUCCESS)
		shim_report_rank();
	shim_end(&c, SHIM_COMM_NULL, ret);
	return ret;
}

SHIM_EXPORT int MPI_Finalize(void)
{
	SHIM_BEGIN(Finalize, ());
	SHIM_CALL(());
	/* No communicator may be asked anything now. */
	shim_end(&c, SHIM_COMM_NULL, ret);
	return ret;
}

/* The sends: count x size when posted. */
#define SEND(fname)                                                                                \
	SHIM_EXPORT int MPI_##fname(const void *buf, int count, MPI_Datatype type, int dest,       \
				    int tag, MPI_Comm comm)                                        \
	{                                                                                          \
		SHIM_BEGIN(fname, (buf, count, type, dest, tag, comm));                            \
		SHIM_CALL((buf, count, type, dest, tag, comm));                                    \
		if (ret == MPI_SUCCESS && dest != MPI_PROC_NULL)                                   \
			c.sent = shim_bytes(count, type);                                          \
		shim_end(&c, comm, ret);                                                           \
		return ret;                                                                        \
	}
SEND(Send)
SEND(Ssend)
SEND(Bsend)
SEND(Rsend)

#define ISEND(fname)                                                                               \
	SHIM_EXPORT int MPI_##fname(const void *buf, int count, MPI_Datatype type, int dest,       \
				    int tag, MPI_Comm comm, MPI_Request *req)                      \
	{                                                                                          \
		SHIM_BEGIN(fname, (buf, count, type, dest, tag, comm, req));                       \
		SHIM_CALL((buf, count, type, dest, tag, comm, req));                               \
		if (ret == MPI_SUCCESS && dest != MPI_PROC_NULL)                                   \
			c.sent = shim_bytes(count, type);                                          \
		shim_end(&c, comm, ret);                                                           \
		return ret;                                                                        \
	}
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

SHIM_EXPORT int MPI_Irecv(void *buf, int count, MPI_Datatype type, int source, int tag,
			  MPI_Comm comm, MPI_Request *req)
{
	SHIM_BEGIN(Irecv, (buf, count, type, source, tag, comm, req));
	SHIM_CALL((buf, count, type, source, tag, comm, req));
	if (ret == MPI_SUCCESS && *req != SHIM_REQUEST_NULL)
		shim_req_add(shim_req_key((uintptr_t)*req, false));
	shim_end(&c, comm, ret);
	return ret;
}

SHIM_EXPORT int MPI_Probe(int source, int tag, MPI_Comm comm, MPI_Status *status)
{
	SHIM_BEGIN(Probe, (source, tag, comm, status));
	SHIM_CALL((source, tag, comm, status));
	shim_end(&c, comm, ret);
	return ret;
}

SHIM_EXPORT int MPI_Iprobe(int source, int tag, MPI_Comm comm, int *flag, MPI_Status *status)
{
	SHIM_BEGIN(Iprobe, (source, tag, comm, flag, status));
	SHIM_CALL((source, tag, comm, flag, status));
	shim_end(&c, comm, ret);
	return ret;
}

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
		if (dest != MPI_PROC_NULL)
			c.sent = shim_bytes(scount, stype);
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
		if (dest != MPI_PROC_NULL)
			c.sent = shim_bytes(count, type);
		c.received = shim_status_bytes(status);
	}
	shim_end(&c, comm, ret);
	return ret;
}

/* ---- completions ------------------------------------------------------------------------ */

/*
 * The requests a completion call is given, as they were before it (it sets the completed
 * ones to MPI_REQUEST_NULL), and whether each is a receive in flight. Small sets live on the
 * stack; a larger one is allocated (the call costs more than that).
 */
#define REQS_ON_STACK 64

struct reqs {
	int n;
	bool any;        /* some request is a receive */
	bool *recv;      /* per request */
	MPI_Status *own; /* statuses of our own when the caller ignores them, or NULL */
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
	r->recv = r->stack_recv;
	r->own = NULL;
	if (r->n > REQS_ON_STACK) {
		r->heap = malloc((size_t)r->n * (sizeof(bool) + sizeof(MPI_Status)));
		if (!r->heap) {
			r->n = 0; /* bytes of this call not counted, the call made as asked */
			return;
		}
		r->own = r->heap;
		r->recv = (bool *)(r->own + r->n);
	}
	for (i = 0; i < r->n; i++) {
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
static uint64_t reqs_done(struct reqs *r, const MPI_Request *before, int i, const MPI_Status *st)
{
	if (i < 0 || i >= r->n || !r->recv[i])
		return 0;
	r->recv[i] = false;
	shim_req_take(shim_req_key((uintptr_t)before[i], false));
	return shim_status_bytes(st);
}

/* A copy of the caller's requests before the call (after it they read MPI_REQUEST_NULL). */
struct reqs_copy {
	MPI_Request stack[REQS_ON_STACK];
	MPI_Request *v;
};

static bool reqs_copy(struct reqs_copy *c, int n, const MPI_Request *reqs)
{
	int i;

	c->v = n > REQS_ON_STACK ? malloc((size_t)n * sizeof(*c->v)) : c->stack;
	if (!c->v)
		return false;
	for (i = 0; i < n; i++)
		c->v[i] = reqs[i];
	return true;
}

static void reqs_release(struct reqs *r, struct reqs_copy *c)
{
	free(r->heap);
	if (c->v != c->stack)
		free(c->v);
}

SHIM_EXPORT int MPI_Wait(MPI_Request *req, MPI_Status *status)
{
	MPI_Status own;
	MPI_Request before;
	bool recv;

	SHIM_BEGIN(Wait, (req, status));
	before = *req;
	recv = before != SHIM_REQUEST_NULL && shim_req_has(shim_req_key((uintptr_t)before, false));
	if (recv && status == MPI_STATUS_IGNORE)
		status = &own;
	SHIM_CALL((req, status));
	if (ret == MPI_SUCCESS && recv && shim_req_take(shim_req_key((uintptr_t)before, false)))
		c.received = shim_status_bytes(status);
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
	recv = before != SHIM_REQUEST_NULL && shim_req_has(shim_req_key((uintptr_t)before, false));
	if (recv && status == MPI_STATUS_IGNORE)
		status = &own;
	SHIM_CALL((req, flag, status));
	if (ret == MPI_SUCCESS && *flag && recv &&
	    shim_req_take(shim_req_key((uintptr_t)before, false)))
		c.received = shim_status_bytes(status);
	shim_end(&c, SHIM_COMM_NULL, ret);
	return ret;
}

SHIM_EXPORT int MPI_Waitall(int n, MPI_Request reqs[], MPI_Status statuses[])
{
	struct reqs r;
	struct reqs_copy before;
	int i;

	SHIM_BEGIN(Waitall, (n, reqs, statuses));
	if (!reqs_copy(&before, n, reqs)) {
		SHIM_CALL((n, reqs, statuses));
		shim_end(&c, SHIM_COMM_NULL, ret);
		return ret;
	}
	reqs_init(&r, n, reqs, statuses == MPI_STATUSES_IGNORE);
	SHIM_CALL((n, reqs, r.own ? r.own : statuses));
	for (i = 0; ret == MPI_SUCCESS && r.any && i < r.n; i++)
		c.received += reqs_done(&r, before.v, i, &(r.own ? r.own : statuses)[i]);
	reqs_release(&r, &before);
	shim_end(&c, SHIM_COMM_NULL, ret);
	return ret;
}

SHIM_EXPORT int MPI_Testall(int n, MPI_Request reqs[], int *flag, MPI_Status statuses[])
{
	struct reqs r;
	struct reqs_copy before;
	int i;

	SHIM_BEGIN(Testall, (n, reqs, flag, statuses));
	if (!reqs_copy(&before, n, reqs)) {
		SHIM_CALL((n, reqs, flag, statuses));
		shim_end(&c, SHIM_COMM_NULL, ret);
		return ret;
	}
	reqs_init(&r, n, reqs, statuses == MPI_STATUSES_IGNORE);
	SHIM_CALL((n, reqs, flag, r.own ? r.own : statuses));
	for (i = 0; ret == MPI_SUCCESS && *flag && r.any && i < r.n; i++)
		c.received += reqs_done(&r, before.v, i, &(r.own ? r.own : statuses)[i]);
	reqs_release(&r, &before);
	shim_end(&c, SHIM_COMM_NULL, ret);
	return ret;
}

SHIM_EXPORT int MPI_Waitany(int n, MPI_Request reqs[], int *index, MPI_Status *status)
{
	struct reqs r;
	struct reqs_copy before;
	MPI_Status own;

	SHIM_BEGIN(Waitany, (n, reqs, index, status));
	if (!reqs_copy(&before, n, reqs)) {
		SHIM_CALL((n, reqs, index, status));
		shim_end(&c, SHIM_COMM_NULL, ret);
		return ret;
	}
	reqs_init(&r, n, reqs, false);
	if (r.any && status == MPI_STATUS_IGNORE)
		status = &own;
	SHIM_CALL((n, reqs, index, status));
	if (ret == MPI_SUCCESS && r.any && *index != MPI_UNDEFINED)
		c.received = reqs_done(&r, before.v, *index, status);
	reqs_release(&r, &before);
	shim_end(&c, SHIM_COMM_NULL, ret);
	return ret;
}

SHIM_EXPORT int MPI_Testany(int n, MPI_Request reqs[], int *index, int *flag, MPI_Status *status)
{
	struct reqs r;
	struct reqs_copy before;
	MPI_Status own;

	SHIM_BEGIN(Testany, (n, reqs, index, flag, status));
	if (!reqs_copy(&before, n, reqs)) {
		SHIM_CALL((n, reqs, index, flag, status));
		shim_end(&c, SHIM_COMM_NULL, ret);
		return ret;
	}
	reqs_init(&r, n, reqs, false);
	if (r.any && status == MPI_STATUS_IGNORE)
		status = &own;
	SHIM_CALL((n, reqs, index, flag, status));
	if (ret == MPI_SUCCESS && r.any && *flag && *index != MPI_UNDEFINED)
		c.received = reqs_done(&r, before.v, *index, status);
	reqs_release(&r, &before);
	shim_end(&c, SHIM_COMM_NULL, ret);
	return ret;
}

/* Waitsome and Testsome: statuses[k] belongs to the request at indices[k]. */
#define SOME(fname)                                                                                \
	SHIM_EXPORT int MPI_##fname(int n, MPI_Request reqs[], int *outcount, int indices[],       \
				    MPI_Status statuses[])                                         \
	{                                                                                          \
		struct reqs r;                                                                     \
		struct reqs_copy before;                                                           \
		int k;                                                                             \
                                                                                                   \
		SHIM_BEGIN(fname, (n, reqs, outcount, indices, statuses));                         \
		if (!reqs_copy(&before, n, reqs)) {                                                \
			SHIM_CALL((n, reqs, outcount, indices, statuses));                         \
			shim_end(&c, SHIM_COMM_NULL, ret);                                         \
			return ret;                                                                \
		}                                                                                  \
		reqs_init(&r, n, reqs, statuses == MPI_STATUSES_IGNORE);                           \
		SHIM_CALL((n, reqs, outcount, indices, r.own ? r.own : statuses));                 \
		for (k = 0;                                                                        \
		     ret == MPI_SUCCESS && r.any && *outcount != MPI_UNDEFINED && k < *outcount;   \
		     k++)                                                                          \
			c.received += reqs_done(&r, before.v, indices[k],                          \
						&(r.own ? r.own : statuses)[k]);                   \
		reqs_release(&r, &before);                                                         \
		shim_end(&c, SHIM_COMM_NULL, ret);                                                 \
		return ret;                                                                        \
	}
SOME(Waitsome)
SOME(Testsome)
