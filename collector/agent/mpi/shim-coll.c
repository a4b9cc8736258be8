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

bool shim_is_root(int root, MPI_Comm comm)
{
	if (root == MPI_ROOT)
		return true; /* intercommunicator: the root group's root */
	if (root < 0)
		return false; /* MPI_PROC_NULL: the rest of the root group */
	return shim_comm_rank(comm) == root;
}

/* A rank of the group that sends to a rooted collective's root (not the root's group). */
static bool sends_to_root(const void *sbuf, int root)
{
	return sbuf != MPI_IN_PLACE && root != MPI_ROOT && root != MPI_PROC_NULL;
}

void shim_bcast_bytes(struct pcollect_mpi_call *c, int count, MPI_Datatype type, int root,
		      MPI_Comm comm)
{
	if (shim_is_root(root, comm))
		c->sent = shim_bytes(count, type);
	else if (root != MPI_PROC_NULL)
		c->received = shim_bytes(count, type);
}

void shim_reduce_bytes(struct pcollect_mpi_call *c, int count, MPI_Datatype type, int root,
		       MPI_Comm comm)
{
	c->sent = shim_bytes(count, type);
	if (shim_is_root(root, comm))
		c->received = c->sent;
}

/* Gather, Gatherv (rcounts: per rank, else rcount from each). */
static void gather_bytes(struct pcollect_mpi_call *c, const void *sbuf, int scount,
			 MPI_Datatype stype, int rcount, const int *rcounts, MPI_Datatype rtype,
			 int root, MPI_Comm comm)
{
	bool at_root = shim_is_root(root, comm);

	c->comm_size = (uint32_t)shim_comm_size(comm);
	if (sends_to_root(sbuf, root))
		c->sent = shim_bytes(scount, stype);
	if (at_root)
		c->received = rcounts ? shim_bytes_v(rcounts, (int)c->comm_size, rtype)
				      : shim_bytes(rcount, rtype) * c->comm_size;
}

/* Scatter, Scatterv (scounts: per rank, else scount to each). */
static void scatter_bytes(struct pcollect_mpi_call *c, int scount, const int *scounts,
			  MPI_Datatype stype, const void *rbuf, int rcount, MPI_Datatype rtype,
			  int root, MPI_Comm comm)
{
	bool at_root = shim_is_root(root, comm);

	c->comm_size = (uint32_t)shim_comm_size(comm);
	if (at_root)
		c->sent = scounts ? shim_bytes_v(scounts, (int)c->comm_size, stype)
				  : shim_bytes(scount, stype) * c->comm_size;
	if (sends_to_root(rbuf, root))
		c->received = shim_bytes(rcount, rtype);
}

static void allgather_bytes(struct pcollect_mpi_call *c, const void *sbuf, int scount,
			    MPI_Datatype stype, int rcount, MPI_Datatype rtype, MPI_Comm comm)
{
	c->comm_size = (uint32_t)shim_comm_size(comm);
	c->sent = sbuf == MPI_IN_PLACE ? shim_bytes(rcount, rtype) : shim_bytes(scount, stype);
	c->received = shim_bytes(rcount, rtype) * c->comm_size;
}

static void allgatherv_bytes(struct pcollect_mpi_call *c, const void *sbuf, int scount,
			     MPI_Datatype stype, const int *rcounts, MPI_Datatype rtype,
			     MPI_Comm comm)
{
	int me = shim_comm_rank(comm);

	c->comm_size = (uint32_t)shim_comm_size(comm);
	if (sbuf != MPI_IN_PLACE)
		c->sent = shim_bytes(scount, stype);
	else if (me >= 0 && (uint32_t)me < c->comm_size)
		c->sent = shim_bytes(rcounts[me], rtype);
	c->received = shim_bytes_v(rcounts, (int)c->comm_size, rtype);
}

/* Alltoall, Alltoallv (counts per rank, else count to and from each). */
static void alltoall_bytes(struct pcollect_mpi_call *c, const void *sbuf, int scount,
			   const int *scounts, MPI_Datatype stype, int rcount, const int *rcounts,
			   MPI_Datatype rtype, MPI_Comm comm)
{
	c->comm_size = (uint32_t)shim_comm_size(comm);
	c->received = rcounts ? shim_bytes_v(rcounts, (int)c->comm_size, rtype)
			      : shim_bytes(rcount, rtype) * c->comm_size;
	if (sbuf == MPI_IN_PLACE)
		c->sent = c->received;
	else
		c->sent = scounts ? shim_bytes_v(scounts, (int)c->comm_size, stype)
				  : shim_bytes(scount, stype) * c->comm_size;
}

static void reduce_scatter_bytes(struct pcollect_mpi_call *c, const int *rcounts, MPI_Datatype type,
				 MPI_Comm comm)
{
	int me = shim_comm_rank(comm);

	c->comm_size = (uint32_t)shim_comm_size(comm);
	c->sent = shim_bytes_v(rcounts, (int)c->comm_size, type);
	if (me >= 0 && (uint32_t)me < c->comm_size)
		c->received = shim_bytes(rcounts[me], type);
}

static void reduce_scatter_block_bytes(struct pcollect_mpi_call *c, int rcount, MPI_Datatype type,
				       MPI_Comm comm)
{
	c->comm_size = (uint32_t)shim_comm_size(comm);
	c->received = shim_bytes(rcount, type);
	c->sent = c->received * c->comm_size;
}

SHIM_WRAP(Barrier, (MPI_Comm comm), (comm), comm, (void)0)
SHIM_WRAP(Ibarrier, (MPI_Comm comm, MPI_Request *req), (comm, req), comm, (void)0)

SHIM_WRAP(Bcast, (void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm),
	  (buf, count, type, root, comm), comm, shim_bcast_bytes(&c, count, type, root, comm))
SHIM_WRAP(Ibcast,
	  (void *buf, int count, MPI_Datatype type, int root, MPI_Comm comm, MPI_Request *req),
	  (buf, count, type, root, comm, req), comm, shim_bcast_bytes(&c, count, type, root, comm))

SHIM_WRAP(Reduce,
	  (const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op, int root,
	   MPI_Comm comm),
	  (sbuf, rbuf, count, type, op, root, comm), comm,
	  shim_reduce_bytes(&c, count, type, root, comm))
SHIM_WRAP(Ireduce,
	  (const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op, int root,
	   MPI_Comm comm, MPI_Request *req),
	  (sbuf, rbuf, count, type, op, root, comm, req), comm,
	  shim_reduce_bytes(&c, count, type, root, comm))

/* Allreduce, Scan, Exscan: count x size out and in. */
#define ALLREDUCE(fname)                                                                           \
	SHIM_WRAP(fname,                                                                           \
		  (const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op,          \
		   MPI_Comm comm),                                                                 \
		  (sbuf, rbuf, count, type, op, comm), comm,                                       \
		  c.sent = c.received = shim_bytes(count, type))
ALLREDUCE(Allreduce)
ALLREDUCE(Scan)
ALLREDUCE(Exscan)
SHIM_WRAP(Iallreduce,
	  (const void *sbuf, void *rbuf, int count, MPI_Datatype type, MPI_Op op, MPI_Comm comm,
	   MPI_Request *req),
	  (sbuf, rbuf, count, type, op, comm, req), comm,
	  c.sent = c.received = shim_bytes(count, type))

SHIM_WRAP(Gather,
	  (const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
	   MPI_Datatype rtype, int root, MPI_Comm comm),
	  (sbuf, scount, stype, rbuf, rcount, rtype, root, comm), comm,
	  gather_bytes(&c, sbuf, scount, stype, rcount, NULL, rtype, root, comm))
SHIM_WRAP(Gatherv,
	  (const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, const int rcounts[],
	   const int displs[], MPI_Datatype rtype, int root, MPI_Comm comm),
	  (sbuf, scount, stype, rbuf, rcounts, displs, rtype, root, comm), comm,
	  gather_bytes(&c, sbuf, scount, stype, 0, rcounts, rtype, root, comm))
SHIM_WRAP(Scatter,
	  (const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
	   MPI_Datatype rtype, int root, MPI_Comm comm),
	  (sbuf, scount, stype, rbuf, rcount, rtype, root, comm), comm,
	  scatter_bytes(&c, scount, NULL, stype, rbuf, rcount, rtype, root, comm))
SHIM_WRAP(Scatterv,
	  (const void *sbuf, const int scounts[], const int displs[], MPI_Datatype stype,
	   void *rbuf, int rcount, MPI_Datatype rtype, int root, MPI_Comm comm),
	  (sbuf, scounts, displs, stype, rbuf, rcount, rtype, root, comm), comm,
	  scatter_bytes(&c, 0, scounts, stype, rbuf, rcount, rtype, root, comm))

SHIM_WRAP(Allgather,
	  (const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
	   MPI_Datatype rtype, MPI_Comm comm),
	  (sbuf, scount, stype, rbuf, rcount, rtype, comm), comm,
	  allgather_bytes(&c, sbuf, scount, stype, rcount, rtype, comm))
SHIM_WRAP(Allgatherv,
	  (const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, const int rcounts[],
	   const int displs[], MPI_Datatype rtype, MPI_Comm comm),
	  (sbuf, scount, stype, rbuf, rcounts, displs, rtype, comm), comm,
	  allgatherv_bytes(&c, sbuf, scount, stype, rcounts, rtype, comm))
SHIM_WRAP(Alltoall,
	  (const void *sbuf, int scount, MPI_Datatype stype, void *rbuf, int rcount,
	   MPI_Datatype rtype, MPI_Comm comm),
	  (sbuf, scount, stype, rbuf, rcount, rtype, comm), comm,
	  alltoall_bytes(&c, sbuf, scount, NULL, stype, rcount, NULL, rtype, comm))
SHIM_WRAP(Alltoallv,
	  (const void *sbuf, const int scounts[], const int sdispls[], MPI_Datatype stype,
	   void *rbuf, const int rcounts[], const int rdispls[], MPI_Datatype rtype, MPI_Comm comm),
	  (sbuf, scounts, sdispls, stype, rbuf, rcounts, rdispls, rtype, comm), comm,
	  alltoall_bytes(&c, sbuf, 0, scounts, stype, 0, rcounts, rtype, comm))

SHIM_WRAP(Reduce_scatter,
	  (const void *sbuf, void *rbuf, const int rcounts[], MPI_Datatype type, MPI_Op op,
	   MPI_Comm comm),
	  (sbuf, rbuf, rcounts, type, op, comm), comm,
	  reduce_scatter_bytes(&c, rcounts, type, comm))
SHIM_WRAP(Reduce_scatter_block,
	  (const void *sbuf, void *rbuf, int rcount, MPI_Datatype type, MPI_Op op, MPI_Comm comm),
	  (sbuf, rbuf, rcount, type, op, comm), comm,
	  reduce_scatter_block_bytes(&c, rcount, type, comm))

SHIM_WRAP(Comm_split, (MPI_Comm comm, int color, int key, MPI_Comm *newcomm),
	  (comm, color, key, newcomm), comm, (void)0)
SHIM_WRAP(Comm_dup, (MPI_Comm comm, MPI_Comm *newcomm), (comm, newcomm), comm, (void)0)
