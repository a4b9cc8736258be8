! SPDX-License-Identifier: MIT
! MPI known answers through the Fortran bindings: a ring of exact bytes, a barrier, a reduce.
!
! mpi-fort: rank r of p calls MPI_Sendrecv 50 times in fort_ring, sending (r + 1) x 256
! integers to r + 1 and receiving what r - 1 sends into a buffer large enough for any, every
! other call with MPI_STATUS_IGNORE; then one MPI_Barrier and one MPI_Allreduce of a double.
! Bytes per rank: sent 50 x (r + 1) x 1024, received 50 x (((r - 1 + p) mod p) + 1) x 1024.
program mpi_fort
  implicit none
  include 'mpif.h'
  integer :: ierr, rank, nprocs
  integer, allocatable :: sbuf(:), rbuf(:)
  double precision :: x, total

  call MPI_Init(ierr)
  call MPI_Comm_rank(MPI_COMM_WORLD, rank, ierr)
  call MPI_Comm_size(MPI_COMM_WORLD, nprocs, ierr)
  allocate(sbuf(nprocs * 256), rbuf(nprocs * 256))
  sbuf = rank
  call fort_ring(rank, nprocs, sbuf, rbuf)
  call MPI_Barrier(MPI_COMM_WORLD, ierr)
  x = rank
  call MPI_Allreduce(x, total, 1, MPI_DOUBLE_PRECISION, MPI_SUM, MPI_COMM_WORLD, ierr)
  print '(A,I0,A,I0,A)', 'rank ', rank, ' of ', nprocs, ' done'
  call MPI_Finalize(ierr)
end program mpi_fort

subroutine fort_ring(rank, nprocs, sbuf, rbuf)
  implicit none
  include 'mpif.h'
  integer, intent(in) :: rank, nprocs
  integer :: sbuf(*), rbuf(*)
  integer :: i, ierr, right, left, n
  integer :: st(MPI_STATUS_SIZE)

  right = mod(rank + 1, nprocs)
  left = mod(rank + nprocs - 1, nprocs)
  n = (rank + 1) * 256
  do i = 1, 50
    if (mod(i, 2) == 0) then
      call MPI_Sendrecv(sbuf, n, MPI_INTEGER, right, 7, rbuf, nprocs * 256, MPI_INTEGER, &
                        left, 7, MPI_COMM_WORLD, MPI_STATUS_IGNORE, ierr)
    else
      call MPI_Sendrecv(sbuf, n, MPI_INTEGER, right, 7, rbuf, nprocs * 256, MPI_INTEGER, &
                        left, 7, MPI_COMM_WORLD, st, ierr)
    end if
  end do
end subroutine fort_ring
