/* SPDX-License-Identifier: MIT */
/* The MPI shim's collective calls: what each rank's buffers send and receive. */
#include "collector/agent/mpi/shim-private.h"

/*
 * Bytes of a collective are those of the caller's own buffers (what mpiP and IPM count),
 * not the traffic of the algorithm the library runs: a Bcast's root sends count x size once,
 * every other rank receives that much; a Gather's root receives recvcount x size from each of
 * the communicator's ranks, itself included; an Allreduce sends and receives count x size.
 * docs/raw-format.md has the table. MPI_IN_PLACE leaves out the side that does not move.
 * Over an intercommunicator, "each rank" counts the local group.
 */

/* True when this process is the root of a collective rooted at root over comm. */
static bool is_root(int root, MPI_Comm comm)
{
	if (root == MPI_ROOT)
		return true; /* intercommunicator: the root group's root */
	if (root < 0)
		return false; /* MPI_PROC_NULL: the rest of the root group */
	return shim_comm_rank(comm) == root;
}

SHIM_EXPORT int MPI_Barrier(MPI_Comm comm)
{
	SHIM_BEGIN(Barrier, (comm));
	SHIM_CALL((comm));
	shim_end(&c, comm, ret);
	return ret;
}

SHIM_EXPORT int MPI_Ibarrier(MPI_Comm comm, MPI_Request *req)
{
	SHIM_BEGIN(Ibarrier, (comm, req));
	SHIM_CALL((comm, req));
	shim_end(&c, comm, ret);
	return ret;
}

static void bcast_bytes(struct pcollect_mpi_call *c, int count, MPI_Datatype type, int root,
			MPI_Comm comm)
{
	if (is_root(root, comm))
		c->sent = shim_bytes(count, type);
	else if (root != MPI_PROC_NULL)
		c->received = shim_bytes(count, type);
}

SHIM_EXPORT int MPI_Bcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm)
{
	SHIM_BEGIN(Bcast, (buf, count, type, root, comm));
	SHIM_CALL((buf, count, type, root, comm));
	if (ret == MPI_SUCCESS)
		bcast_bytes(&c, count, type, root, comm);
	shim_end(&c, comm, ret);
	return ret;
}

SHIM_EXPORT int MPI_Ibcast(void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm,
			   MPI_Request *req)
{
	SHIM_BEGIN(Ibcast, (buf, count, type, root, comm, req));
	SHIM_CALL((buf, count, type, root, comm, req));
	if (ret == MPI_SUCCESS)
		bcast_bytes(&c, count, type, root, comm);
	shim_end(&c, comm, ret);
	return ret;
}

static void reduce_bytes(struct pcollect_mpi_call *c, int count, MPI_Datatype type, int root,
			 MPI_Comm comm)
{
	c->sent = shim_bytes(count, type);
	if (is_root(root, comm))
		c->received = c->sent;
}

SHIM_EXPORT int MPI_Reduce(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op,
			   int root, MPI_Comm comm)
{
	SHIM_BEGIN(Reduce, (sbuf, rbuf, count, type, op, root, comm));
	SHIM_CALL((sbuf, rbuf, count, type, op, root, comm));
	if (ret == MPI_SUCCESS)
		reduce_bytes(&c, count, type, root, comm);
	shim_end(&c, comm, ret);
	return ret;
}

SHIM_EXPORT int MPI_Ireduce(const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op,
			    int root, MPI_Comm comm, MPI_Request *req)
{
	SHIM_BEGIN(Ireduce, (sbuf, rbuf, count, type, op, root, comm, req));
	SHIM_CALL((sbuf, rbuf, count, type, op, root, comm, req));
	if (ret == MPI_SUCCESS)
		reduce_bytes(&c, count, type, root, comm);
	shim_end(&c, comm, ret);
	return ret;
}

/* Allreduce, Scan, Exscan: count x size out and in. */
#define ALLREDUCE(fname)                                                                           \
	SHIM_EXPORT int MPI_##fname(const void *sbuf, void *rbuf, int count, MPI_Datatype type,    \
				    MPI_Op op, MPI_Comm comm)                                      \
	{                                                                                          \
		SHIM_BEGIN(fname, (sbuf, rbuf, count, type, op, comm));                            \
		SHIM_CALL((sbuf, rbuf, count, type, op, comm));                                    \
		if (ret == MPI_SUCCESS)                                                            \
			c.sent = c.received = shim_bytes(count, type);                             \
		shim_end(&c, comm, ret);                                                           \
		return ret;                                                                        \
	}
ALLREDUCE(Allreduce)
ALLREDUCE(Scan)
ALLREDUCE(Exscan)

SHIM_EXPORT int MPI_Iallreduce(const void *sbuf, void *rbuf, int count, MPI_Datatype type,
			       MPI_Op op, MPI_Comm comm, MPI_Request *req)
{
	SHIM_BEGIN(Iallreduce, (sbuf, rbuf, count, type, op, comm, req));
	SHIM_CALL((sbuf, rbuf, count, type, op, comm, req));
	if (ret == MPI_SUCCESS)
		c.sent = c.received = shim_bytes(count, type);
	shim_end(&c, comm, ret);
	return ret;
}

SHIM_EXPORT int MPI_Gather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
			   MPI_Datatype rtype, int root, MPI_Comm comm)
{
	SHIM_BEGIN(Gather, (sbuf, scount, stype, rbuf, rcount, rtype, root, comm));
	SHIM_CALL((sbuf, scount, stype, rbuf, rcount, rtype, root, comm));
	if (ret == MPI_SUCCESS) {
		bool at_root = is_root(root, comm);

		c.comm_size = (uint32_t)shim_comm_size(comm);
		if (sbuf != MPI_IN_PLACE && root != MPI_ROOT && root != MPI_PROC_NULL)
			c.sent = shim_bytes(scount, stype);
		if (at_root)
			c.received = shim_bytes(rcount, rtype) * c.comm_size;
	}
	shim_end(&c, comm, ret);
	return ret;
}

SHIM_EXPORT int MPI_Gatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
			    const int rcounts[], const int displs[], MPI_Datatype rtype, int root,
			    MPI_Comm comm)
{
	SHIM_BEGIN(Gatherv, (sbuf, scount, stype, rbuf, rcounts, displs, rtype, root, comm));
	SHIM_CALL((sbuf, scount, stype, rbuf, rcounts, displs, rtype, root, comm));
	if (ret == MPI_SUCCESS) {
		bool at_root = is_root(root, comm);

		c.comm_size = (uint32_t)shim_comm_size(comm);
		if (sbuf != MPI_IN_PLACE && root != MPI_ROOT && root != MPI_PROC_NULL)
			c.sent = shim_bytes(scount, stype);
		if (at_root)
			c.received = shim_bytes_v(rcounts, (int)c.comm_size, rtype);
	}
	shim_end(&c, comm, ret);
	return ret;
}

SHIM_EXPORT int MPI_Scatter(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
			    int rcount, MPI_Datatype rtype, int root, MPI_Comm comm)
{
	SHIM_BEGIN(Scatter, (sbuf, scount, stype, rbuf, rcount, rtype, root, comm));
	SHIM_CALL((sbuf, scount, stype, rbuf, rcount, rtype, root, comm));
	if (ret == MPI_SUCCESS) {
		bool at_root = is_root(root, comm);

		c.comm_size = (uint32_t)shim_comm_size(comm);
		if (at_root)
			c.sent = shim_bytes(scount, stype) * c.comm_size;
		if (rbuf != MPI_IN_PLACE && root != MPI_ROOT && root != MPI_PROC_NULL)
			c.received = shim_bytes(rcount, rtype);
	}
	shim_end(&c, comm, ret);
	return ret;
}

SHIM_EXPORT int MPI_Scatterv(const void *sbuf, const int scounts[], const int displs[],
			     MPI_Datatype stype, void *rbuf, int rcount, MPI_Datatype rtype,
			     int root, MPI_Comm comm)
{
	SHIM_BEGIN(Scatterv, (sbuf, scounts, displs, stype, rbuf, rcount, rtype, root, comm));
	SHIM_CALL((sbuf, scounts, displs, stype, rbuf, rcount, rtype, root, comm));
	if (ret == MPI_SUCCESS) {
		bool at_root = is_root(root, comm);

		c.comm_size = (uint32_t)shim_comm_size(comm);
		if (at_root)
			c.sent = shim_bytes_v(scounts, (int)c.comm_size, stype);
		if (rbuf != MPI_IN_PLACE && root != MPI_ROOT && root != MPI_PROC_NULL)
			c.received = shim_bytes(rcount, rtype);
	}
	shim_end(&c, comm, ret);
	return ret;
}

SHIM_EXPORT int MPI_Allgather(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
			      int rcount, MPI_Datatype rtype, MPI_Comm comm)
{
	SHIM_BEGIN(Allgather, (sbuf, scount, stype, rbuf, rcount, rtype, comm));
	SHIM_CALL((sbuf, scount, stype, rbuf, rcount, rtype, comm));
	if (ret == MPI_SUCCESS) {
		c.comm_size = (uint32_t)shim_comm_size(comm);
		c.sent = sbuf == MPI_IN_PLACE ? shim_bytes(rcount, rtype)
					      : shim_bytes(scount, stype);
		c.received = shim_bytes(rcount, rtype) * c.comm_size;
	}
	shim_end(&c, comm, ret);
	return ret;
}

SHIM_EXPORT int MPI_Allgatherv(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
			       const int rcounts[], const int displs[], MPI_Datatype rtype,
			       MPI_Comm comm)
{
	SHIM_BEGIN(Allgatherv, (sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm));
	SHIM_CALL((sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm));
	if (ret == MPI_SUCCESS) {
		int me = shim_comm_rank(comm);

		c.comm_size = (uint32_t)shim_comm_size(comm);
		if (sbuf != MPI_IN_PLACE)
			c.sent = shim_bytes(scount, stype);
		else if (me >= 0 && (uint32_t)me < c.comm_size)
			c.sent = shim_bytes(rcounts[me], rtype);
		c.received = shim_bytes_v(rcounts, (int)c.comm_size, rtype);
	}
	shim_end(&c, comm, ret);
	return ret;
}

SHIM_EXPORT int MPI_Alltoall(const void *sbuf, int scount, MPI_Datatype stype, void *rbuf,
			     int rcount, MPI_Datatype rtype, MPI_Comm comm)
{
	SHIM_BEGIN(Alltoall, (sbuf, scount, stype, rbuf, rcount, rtype, comm));
	SHIM_CALL((sbuf, scount, stype, rbuf, rcount, rtype, comm));
	if (ret == MPI_SUCCESS) {
		c.comm_size = (uint32_t)shim_comm_size(comm);
		c.received = shim_bytes(rcount, rtype) * c.comm_size;
		c.sent =
			sbuf == MPI_IN_PLACE ? c.received : shim_bytes(scount, stype) * c.comm_size;
	}
	shim_end(&c, comm, ret);
	return ret;
}

SHIM_EXPORT int MPI_Alltoallv(const void *sbuf, const int scounts[], const int sdispls[],
			      MPI_Datatype stype, void *rbuf, const int rcounts[],
			      const int rdispls[], MPI_Datatype rtype, MPI_Comm comm)
{
	SHIM_BEGIN(Alltoallv, (sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm));
	SHIM_CALL((sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm));
	if (ret == MPI_SUCCESS) {
		c.comm_size = (uint32_t)shim_comm_size(comm);
		c.received = shim_bytes_v(rcounts, (int)c.comm_size, rtype);
		c.sent = sbuf == MPI_IN_PLACE ? c.received
					      : shim_bytes_v(scounts, (int)c.comm_size, stype);
	}
	shim_end(&c, comm, ret);
	return ret;
}

SHIM_EXPORT int MPI_Reduce_scatter(const void *sbuf, void *rbuf, const int rcounts[],
				   MPI_Datatype type, MPI_Op op, MPI_Comm comm)
{
	SHIM_BEGIN(Reduce_scatter, (sbuf, rbuf, rcounts, type, op, comm));
	SHIM_CALL((sbuf, rbuf, rcounts, type, op, comm));
	if (ret == MPI_SUCCESS) {
		int me = shim_comm_rank(comm);

		c.comm_size = (uint32_t)shim_comm_size(comm);
		c.sent = shim_bytes_v(rcounts, (int)c.comm_size, type);
		if (me >= 0 && (uint32_t)me < c.comm_size)
			c.received = shim_bytes(rcounts[me], type);
	}
	shim_end(&c, comm, ret);
	return ret;
}

SHIM_EXPORT int MPI_Reduce_scatter_block(const void *sbuf, void *rbuf, int rcount,
					 MPI_Datatype type, MPI_Op op, MPI_Comm comm)
{
	SHIM_BEGIN(Reduce_scatter_block, (sbuf, rbuf, rcount, type, op, comm));
	SHIM_CALL((sbuf, rbuf, rcount, type, op, comm));
	if (ret == MPI_SUCCESS) {
		c.comm_size = (uint32_t)shim_comm_size(comm);
		c.received = shim_bytes(rcount, type);
		c.sent = c.received * c.comm_size;
	}
	shim_end(&c, comm, ret);
	return ret;
}

SHIM_EXPORT int MPI_Comm_split(MPI_Comm comm, int color, int key, MPI_Comm *newcomm)
{
	SHIM_BEGIN(Comm_split, (comm, color, key, newcomm));
	SHIM_CALL((comm, color, key, newcomm));
	shim_end(&c, comm, ret);
	return ret;
}

SHIM_EXPORT int MPI_Comm_dup(MPI_Comm comm, MPI_Comm *newcomm)
{
	SHIM_BEGIN(Comm_dup, (comm, newcomm));
	SHIM_CALL((comm, newcomm));
	shim_end(&c, comm, ret);
	return ret;
}
