/* SPDX-License-Identifier: MIT */
/* job-synth: write a simulated parallel job (DIR.<node> results of many ranks) as raw streams. */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <link.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/elf-note.h"
#include "common/raw-mpi.h"
#include "common/raw-stream.h"
#include "common/result-dir.h"
#include "tests/progs/synth-modules.h"

/*
 * Usage: job-synth DIR RANKS NODES SAMPLES STACKS SITES
 *
 * Writes what `mpirun -np RANKS pcollect -trace-mpi -r DIR` would leave over NODES nodes
 * (DIR.node00, DIR.node01, ..., ranks spread in blocks): each rank a process of one thread
 * with SAMPLES + rank % 7 CPU samples of 1 ms over STACKS distinct stacks (the same stacks
 * in every rank, as in an SPMD program) and SITES MPI call sites, each with a sum of short
 * calls and, for every tenth, one call over the threshold. The stacks are real return
 * addresses of this program's 64 functions, so pfinalize names them. No MPI is linked: the
 * ranks are simulated (a 1,024-rank job does not run on a small machine), the streams are
 * those of real ones. Prints the known answers as JSON on stdout: per rank its host, CPU
 * Time, MPI Time and MPI Calls.
 */

#define INTERVAL_NS 1000000ll /* 1 ms */

static __attribute__((noinline)) uint64_t here(void)
{
	return (uint64_t)(uintptr_t)__builtin_return_address(0);
}

static volatile int sink;

/* 64 functions, each a frame of its own: its return address from here(). */
#define FN(n)                                                                                      \
	static __attribute__((noinline, noipa)) uint64_t synth_fn##n(void)                         \
	{                                                                                          \
		uint64_t ra = here();                                                              \
		sink = n;                                                                          \
		return ra;                                                                         \
	}
#define FN8(n) FN(n##0) FN(n##1) FN(n##2) FN(n##3) FN(n##4) FN(n##5) FN(n##6) FN(n##7)
FN8(1)
FN8(2)
FN8(3)
FN8(4)
FN8(5)
FN8(6)
FN8(7)
FN8(8)
#define REF8(n)                                                                                    \
	synth_fn##n##0, synth_fn##n##1, synth_fn##n##2, synth_fn##n##3, synth_fn##n##4,            \
		synth_fn##n##5, synth_fn##n##6, synth_fn##n##7
static uint64_t (*const fns[64])(void) = { REF8(1), REF8(2), REF8(3), REF8(4),
					   REF8(5), REF8(6), REF8(7), REF8(8) };

/* The MPI library's entry point of every call site (the innermost frame, a pc). */
static __attribute__((noinline, noipa)) uint64_t synth_pmpi_entry(void)
{
	uint64_t ra = here(); /* not a tail call: the address is this function's */

	sink = -1;
	return ra;
}

static uint64_t ras[64];

/* ---- streams ------------------------------------------------------------------------------ */

static void make_dir(const char *dir, enum result_path_kind kind)
{
	char path[PATH_MAX];

	result_path(path, sizeof(path), dir, kind, 0, 0, NULL, NULL);
	if (mkdir(path, 0755) && errno != EEXIST)
		die(path);
}

/*
 * Stack k: a pc in a leaf function, then return addresses, main's last. Its first two
 * callers are k's digits in base 64, so the stacks differ; the rest are drawn from k, the
 * same in every rank.
 */
static uint32_t stack_ips(uint64_t *ips, uint32_t k, uint64_t pc, uint64_t ra_main)
{
	uint32_t x = k * 2654435761u + 1, depth = 4 + k % 9, n = 0, i;

	ips[n++] = pc;
	ips[n++] = ras[k % 64];
	ips[n++] = ras[(k / 64) % 64];
	for (i = 0; i < depth; i++) {
		x ^= x << 13, x ^= x >> 17, x ^= x << 5;
		ips[n++] = ras[x % 64];
	}
	ips[n++] = ra_main;
	return n;
}

static const char *const mpi_names[] = { "MPI_Allreduce", "MPI_Send",  "MPI_Recv",
					 "MPI_Wait",      "MPI_Bcast", "MPI_Barrier" };

static void write_rank(const char *dir, int rank, int size, const char *host, long samples,
		       uint32_t nstacks, uint32_t sites, uint64_t origin, uint64_t ra_main)
{
	static struct out proc, th;
	int pid = 100000 + rank;
	const char *argv[] = { "job-synth", NULL };
	struct raw_process p = { .pid = pid,
				 .ppid = 1,
				 .origin = RAW_PROCESS_START,
				 .parent_pid = 1,
				 .exe = mods[0].path,
				 .exe_len = (uint32_t)strlen(mods[0].path),
				 .argc = 1,
				 .argv = argv };
	uint64_t ips[32], cpu, mpi_ns = 0, mpi_calls = 0, pc = fns[0]() - 1;
	long n = samples + rank % 7, i;
	uint32_t k;

	out_open_stream(&proc, dir, pid, pid, rank, host, origin, INTERVAL_NS, true);
	check(raw_writer_process(&proc.w, &p), "process");
	check(put_module_records(&proc.w), "module");
	check(raw_writer_metric(&proc.w, RAW_METRIC_CPU_TIME, "CPU Time", RAW_UNIT_NS, RAW_AGG_SUM,
				RAW_METRIC_KIND_CPU_SAMPLE),
	      "metric");
	check(raw_mpi_write_rank(&proc.w,
				 &(struct raw_mpi_rank){ 0, (uint32_t)rank, (uint32_t)size }),
	      "rank");
	out_close(&proc);

	out_open_stream(&th, dir, pid, pid, rank, host, origin, INTERVAL_NS, false);
	for (k = 0; k < nstacks; k++)
		check(raw_writer_stack(&th.w, k + 1, RAW_STACK_FIRST_IS_PC, ips,
				       stack_ips(ips, k, pc, ra_main)),
		      "stack");
	for (k = 0; k < sites; k++)
		check(raw_writer_stack(&th.w, nstacks + k + 1, RAW_STACK_FIRST_IS_PC, ips,
				       stack_ips(ips, k * 7 + 3, synth_pmpi_entry() - 1, ra_main)),
		      "stack");
	/* Every stack sampled, a few more often than others; rank's share differs a little. */
	for (i = 0; i < n; i++) {
		uint32_t s = (uint32_t)((i * 7 + (i % 5) * (i % 11) + rank) % nstacks);

		check(raw_writer_sample(&th.w, (i + 1) * INTERVAL_NS, s + 1, 1), "sample");
	}
	cpu = (uint64_t)n * INTERVAL_NS;
	for (k = 0; k < sites; k++) {
		struct raw_mpi_call c = {
			.time_ns = (int64_t)(k + 1) * INTERVAL_NS,
			.stack = nstacks + k + 1,
			.function = raw_mpi_function_id(mpi_names[k % 6]),
			.comm_size = (uint32_t)size,
			.count = 10 + k % 5,
			.total_ns = (k + 1) * 1000ull * (1 + (uint64_t)rank % 3),
			.sent = k % 6 == 1 ? 4096 : 0,
			.summed = true,
		};

		check(raw_mpi_write_call(&th.w, &c), "mpi sum");
		mpi_ns += c.total_ns;
		mpi_calls += c.count;
		if (k % 10 == 0) {
			c.summed = false;
			c.count = 1;
			c.total_ns = 200000 + (uint64_t)rank;
			check(raw_mpi_write_call(&th.w, &c), "mpi call");
			mpi_ns += c.total_ns;
			mpi_calls++;
		}
	}
	out_close(&th);
	printf("%s\n  {\"rank\": %d, \"host\": \"%s\", \"cpu_ns\": %" PRIu64
	       ", \"mpi_ns\": %" PRIu64 ", \"mpi_calls\": %" PRIu64 "}",
	       rank ? "," : "", rank, host, cpu, mpi_ns, mpi_calls);
}

static long arg(const char *s, long min)
{
	char *end;
	long v = strtol(s, &end, 10);

	if (*end || v < min) {
		fprintf(stderr, "job-synth: bad number '%s'\n", s);
		exit(2);
	}
	return v;
}

int main(int argc, char **argv)
{
	char dir[PATH_MAX], host[32], path[PATH_MAX];
	struct timespec now;
	long ranks, nodes, samples, stacks, sites, per;
	uint64_t origin, ra_main = here();
	int r;

	if (argc != 7) {
		fprintf(stderr, "usage: job-synth DIR RANKS NODES SAMPLES STACKS SITES\n");
		return 2;
	}
	ranks = arg(argv[2], 1);
	nodes = arg(argv[3], 1);
	samples = arg(argv[4], 0);
	stacks = arg(argv[5], 1);
	sites = arg(argv[6], 0);
	if (nodes > ranks || stacks > 4096 || sites > 580)
		return fprintf(stderr, "job-synth: at most RANKS nodes, 4096 stacks, 580 sites\n"),
		       2;
	for (r = 0; r < 64; r++)
		ras[r] = fns[r]();
	dl_iterate_phdr(phdr_cb, NULL);
	clock_gettime(CLOCK_MONOTONIC, &now);
	origin = (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec;
	per = (ranks + nodes - 1) / nodes;
	printf("[");
	for (r = 0; r < ranks; r++) {
		FILE *m;

		snprintf(host, sizeof(host), "node%02ld", r / per);
		snprintf(dir, sizeof(dir), "%s.%s", argv[1], host);
		if (r % per == 0) {
			if (mkdir(dir, 0755) && errno != EEXIST)
				die(dir);
			make_dir(dir, RESULT_PATH_RAW_DIR);
			make_dir(dir, RESULT_PATH_META_DIR);
		}
		result_path(path, sizeof(path), dir, RESULT_PATH_META, 100000 + r, 0, NULL, NULL);
		if (!(m = fopen(path, "w")))
			die(path);
		fprintf(m,
			"analysis=hotspots\nstart_monotonic_ns=%" PRIu64 "\ninterval_ns=%lld\n"
			"elapsed_ns=%lld\ncommand_line=job-synth\ncpu_count=2\ntrace_mpi=1\n",
			origin, INTERVAL_NS, (samples + 7) * INTERVAL_NS);
		fclose(m);
		write_rank(dir, r, (int)ranks, host, samples, (uint32_t)stacks, (uint32_t)sites,
			   origin, ra_main);
	}
	printf("\n]\n");
	return 0;
}
