/* SPDX-License-Identifier: MIT */
/* MPI_Allreduce in a loop until killed: a job ended by its scheduler in the middle of its calls. */
#include <fcntl.h>
#include <mpi.h>
#include <stdint.h>
#include <stdio.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

/*
 * Each rank counts its calls in the file DIR/calls.RANK (argv[1]; a u64 in native order,
 * mapped shared: it stays right when the rank is killed), prints "looping rank=R pid=P
 * start_ns=T" (T: CLOCK_MONOTONIC when its loop began) once every rank is there, then calls
 * MPI_Allreduce on one double and nothing else for at most 60 s: a test that kills it with -9
 * knows how many calls it had made at any moment before.
 */
int main(int argc, char **argv)
{
	struct timespec ts;
	double x = 1, sum = 0;
	long long start, now;
	uint64_t *calls;
	char path[4096];
	int rank = 0, fd;

	MPI_Init(&argc, &argv);
	MPI_Comm_rank(MPI_COMM_WORLD, &rank);
	snprintf(path, sizeof(path), "%s/calls.%d", argc > 1 ? argv[1] : ".", rank);
	fd = open(path, O_RDWR | O_CREAT | O_TRUNC, 0644);
	if (fd < 0 || ftruncate(fd, sizeof(*calls)))
		MPI_Abort(MPI_COMM_WORLD, 1);
	calls = mmap(NULL, sizeof(*calls), PROT_READ | PROT_WRITE, MAP_SHARED, fd, 0);
	if (calls == MAP_FAILED)
		MPI_Abort(MPI_COMM_WORLD, 1);
	close(fd);
	MPI_Barrier(MPI_COMM_WORLD);
	clock_gettime(CLOCK_MONOTONIC, &ts);
	start = now = (long long)ts.tv_sec * 1000000000ll + ts.tv_nsec;
	printf("looping rank=%d pid=%d start_ns=%lld\n", rank, (int)getpid(), start);
	fflush(stdout);
	while (now - start < 60000000000ll) {
		MPI_Allreduce(&x, &sum, 1, MPI_DOUBLE, MPI_SUM, MPI_COMM_WORLD);
		__atomic_store_n(calls, *calls + 1, __ATOMIC_RELEASE);
		clock_gettime(CLOCK_MONOTONIC, &ts);
		now = (long long)ts.tv_sec * 1000000000ll + ts.tv_nsec;
	}
	MPI_Finalize();
	return 0;
}
