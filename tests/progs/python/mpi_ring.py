# SPDX-License-Identifier: MIT
"""MPI from Python (mpi4py): calls of one mpi4py method made from two Python functions, in
known numbers, and a barrier made from a third.

Rank r of p: py_compute() burns (r + 1) x UNIT loop rounds; py_meet() calls comm.Barrier()
once; ring_a() calls comm.Sendrecv() A times and ring_b() B times, each sending (r + 1) x 1024
bytes to r + 1 and receiving what r - 1 sends (the same mpi4py method, so the same return
address into the extension: only the Python frames tell the two apart); then one
comm.allreduce(). Prints "rank R of P done".

usage: mpi_ring.py [UNIT [A [B]]]
"""
import sys

from mpi4py import MPI


def py_compute(rounds):
    x = 0
    for i in range(rounds):
        x = (x * 31 + i) & 0xFFFFFFFF
    return x


def py_meet(comm):
    comm.Barrier()


def exchange(comm, sbuf, rbuf):
    rank, size = comm.Get_rank(), comm.Get_size()
    comm.Sendrecv(sbuf, dest=(rank + 1) % size, sendtag=5, recvbuf=rbuf,
                  source=(rank - 1) % size, recvtag=5)


def ring_a(comm, n, sbuf, rbuf):
    for _ in range(n):
        exchange(comm, sbuf, rbuf)


def ring_b(comm, n, sbuf, rbuf):
    for _ in range(n):
        exchange(comm, sbuf, rbuf)


def main():
    unit = int(sys.argv[1]) if len(sys.argv) > 1 else 200000
    a = int(sys.argv[2]) if len(sys.argv) > 2 else 30
    b = int(sys.argv[3]) if len(sys.argv) > 3 else 20
    comm = MPI.COMM_WORLD
    rank, size = comm.Get_rank(), comm.Get_size()
    py_compute((rank + 1) * unit)
    py_meet(comm)
    sbuf = bytearray((rank + 1) * 1024)
    rbuf = bytearray(size * 1024)
    ring_a(comm, a, sbuf, rbuf)
    ring_b(comm, b, sbuf, rbuf)
    total = comm.allreduce(rank)
    # One write: the launcher forwards the ranks' output as it comes.
    sys.stdout.write("rank %d of %d done, sum %d\n" % (rank, size, total))
    sys.stdout.flush()


if __name__ == "__main__":
    main()
