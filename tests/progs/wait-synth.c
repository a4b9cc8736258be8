/* SPDX-License-Identifier: MIT */
/* wait-synth: write a result directory of known waits on known stacks (synthetic raw streams). */
#include <dlfcn.h>
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <inttypes.h>
#include <limits.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "common/elf-note.h"
#include "common/raw-stream.h"
#include "common/result-dir.h"
#include "tests/progs/synth-modules.h"

/*
 * Usage: wait-synth DIR [--omp-records]
 *
 * Writes DIR/raw and DIR/meta as the agent of a threading collection would: a process of two
 * threads whose waits (sleep, mutex, short mutex waits, condition, pipe read, join, child,
 * a wait whose stack was lost) have known lengths on known stacks, CPU samples, values of
 * a metric of its own, and, when built with OpenMP, CPU samples in libgomp's GOMP_barrier
 * (Spin Time); and a child process. The stacks are made of real addresses of this program
 * and of the libraries it runs with, so pfinalize names them. Prints the plan as JSON (one
 * object) on stdout: the known answers the test checks against.
 *
 * With --omp-records, the OpenMP region is also recorded as the agent records it with
 * OMPT: an OMP_REGION record and each thread's wait in its implicit barrier.
 */

#define INTERVAL_NS 1000000ll /* 1 ms */
#define MS          1000000ll

pthread_mutex_t synth_lock = PTHREAD_MUTEX_INITIALIZER;
pthread_cond_t synth_conds[2] = { PTHREAD_COND_INITIALIZER, PTHREAD_COND_INITIALIZER };

/* Return addresses inside each function: a caller frame of the stacks written. */
static __attribute__((noinline)) uint64_t here(void)
{
	return (uint64_t)(uintptr_t)__builtin_return_address(0);
}

static volatile int call_site_line;

/* Each a function of its own: a line number of its own keeps gcc from folding them. */
#define CALL_SITE(fn)                                                                              \
	static __attribute__((noinline, noipa)) uint64_t fn(void)                                  \
	{                                                                                          \
		uint64_t ra = here();                                                              \
		call_site_line = __LINE__;                                                         \
		return ra;                                                                         \
	}
CALL_SITE(synth_sleeper)
CALL_SITE(synth_locker)
CALL_SITE(synth_cond_waiter)
CALL_SITE(synth_reader)
CALL_SITE(synth_joiner)
CALL_SITE(synth_child_waiter)
CALL_SITE(synth_burn)

#ifdef _OPENMP
/* A return address inside the function gcc outlines the region into: synth_region._omp_fn.0. */
static uint64_t region_ra;

static uint64_t construct_ra; /* the construct: a return address in synth_region */
static int construct_line;

static __attribute__((noinline)) void synth_region(void)
{
	construct_line = __LINE__ + 1;
	construct_ra = here();
#pragma omp parallel num_threads(1)
	region_ra = here();
}
#endif

/* ---- streams ------------------------------------------------------------------------------ */

static uint64_t origin_ns;

static void out_open(struct out *o, const char *dir, int pid, int tid, bool process)
{
	out_open_stream(o, dir, pid, tid, -1, "synth", origin_ns, INTERVAL_NS, process);
}

static void put_modules(struct out *o)
{
	check(put_module_records(&o->w), "module");
}

static void put_process(struct out *o, int pid, int ppid, uint32_t origin, const char *exe)
{
	const char *argv[] = { exe, NULL };
	struct raw_process p = {
		.pid = pid,
		.ppid = ppid,
		.origin = origin,
		.parent_pid = ppid,
		.exe = exe,
		.exe_len = (uint32_t)strlen(exe),
		.argc = 1,
		.argv = argv,
	};

	check(raw_writer_process(&o->w, &p), "process");
}

/* A stack: the blocking function's pc (exact), then return addresses, innermost first. */
static void put_stack(struct out *o, uint64_t id, uint64_t pc, uint64_t ra1, uint64_t ra2)
{
	uint64_t ips[3] = { pc, ra1, ra2 };

	check(raw_writer_stack(&o->w, id, RAW_STACK_FIRST_IS_PC, ips, 3), "stack");
}

/* A CPU stack: an exact pc in synth_burn, called by main. */
static void put_burn_stack(struct out *o, uint64_t id, uint64_t ra_main)
{
	uint64_t ips[2] = { synth_burn(), ra_main };

	check(raw_writer_stack(&o->w, id, RAW_STACK_FIRST_IS_PC, ips, 2), "stack");
}

/* A stack in the parallel region: its own code, or (pc) a runtime function it called. */
static void put_region_stack(struct out *o, uint64_t id, uint64_t pc, uint64_t ra_main)
{
#ifdef _OPENMP
	uint64_t ips[3] = { pc, region_ra, ra_main };

	check(raw_writer_stack(&o->w, id, RAW_STACK_FIRST_IS_PC, pc ? ips : ips + 1, pc ? 3 : 2),
	      "stack");
#else
	(void)o, (void)id, (void)pc, (void)ra_main;
#endif
}

static uint64_t sym(const char *name)
{
	void *p = dlsym(RTLD_DEFAULT, name);

	if (!p) {
		fprintf(stderr, "wait-synth: no symbol %s\n", name);
		exit(1);
	}
	return (uint64_t)(uintptr_t)p + 4; /* inside the function, past its first bytes */
}

/* ---- the plan ------------------------------------------------------------------------------ */

/* One wait record written, and what the finalizer must make of it. */
struct planned {
	const char *thread;   /* "A" or "B" */
	int64_t start;        /* ns since the stream's origin */
	uint64_t stack;       /* the stack id; one never written stands for a lost one */
	const char *function; /* the call site: the function that called the blocking one */
	uint32_t kind;        /* docs/raw-format.md's wait kind */
	const char *kind_name;
	uint64_t object;
	const char *name; /* the object's name, NULL for none */
	uint64_t count, ns;
	bool summed; /* a WAIT_SUM of short waits */
};

static int nplan;

/* Write the wait and print it, as JSON, into the plan's list. */
static void put_planned(struct out *o, const struct planned *p)
{
	if (p->summed)
		check(raw_writer_wait_sum(&o->w, p->start, p->stack, p->kind, p->object, p->count,
					  p->ns),
		      "wait sum");
	else
		check(raw_writer_wait(&o->w, p->start, p->stack, p->ns, p->kind, p->object),
		      "wait");
	printf("%s\n    {\"thread\": \"%s\", \"start_ns\": %" PRId64 ", \"function\": \"%s\", "
	       "\"kind\": \"%s\", \"object\": %" PRIu64 ", \"name\": %s%s%s, \"count\": %" PRIu64
	       ", \"ns\": %" PRIu64 ", \"summed\": %s}",
	       nplan++ ? "," : "", p->thread, p->start, p->function, p->kind_name, p->object,
	       p->name ? "\"" : "", p->name ? p->name : "null", p->name ? "\"" : "", p->count,
	       p->ns, p->summed ? "true" : "false");
}

int main(int argc, char **argv)
{
	static struct out proc, ta, tb, cproc, cth;
	const char *dir;
	char path[PATH_MAX];
	struct timespec now;
	int pid = getpid(), tid = pid, child = pid + 100000, i;
	uint64_t ra_main = here();
	uint64_t lock = (uint64_t)(uintptr_t)&synth_lock;
	uint64_t cond = (uint64_t)(uintptr_t)&synth_conds[1];
	uint64_t cond_off = (uint64_t)((char *)&synth_conds[1] - (char *)&synth_conds[0]);
	char cond_name[64];
	uint64_t omp_pc = 0;
	int a_region, b_region, b_spin;
	bool omp_records;
	char construct[128], region[128];
	FILE *m;

	if (argc < 2 || argc > 3 || (argc == 3 && strcmp(argv[2], "--omp-records"))) {
		fprintf(stderr, "usage: wait-synth DIR [--omp-records]\n");
		return 2;
	}
	omp_records = argc == 3;
	dir = argv[1];
	snprintf(cond_name, sizeof(cond_name), "synth_conds+0x%" PRIx64, cond_off);
	dl_iterate_phdr(phdr_cb, NULL);
	clock_gettime(CLOCK_MONOTONIC, &now);
	origin_ns = (uint64_t)now.tv_sec * 1000000000ull + (uint64_t)now.tv_nsec;
	if (mkdir(dir, 0755) && errno != EEXIST)
		die(dir);
	result_path(path, sizeof(path), dir, RESULT_PATH_RAW_DIR, 0, 0, NULL, NULL);
	if (mkdir(path, 0755) && errno != EEXIST)
		die(path);
	result_path(path, sizeof(path), dir, RESULT_PATH_META_DIR, 0, 0, NULL, NULL);
	if (mkdir(path, 0755) && errno != EEXIST)
		die(path);
	result_path(path, sizeof(path), dir, RESULT_PATH_META, pid, 0, NULL, NULL);
	if (!(m = fopen(path, "w")))
		die(path);
	fprintf(m,
		"analysis=threading\nstart_monotonic_ns=%" PRIu64 "\ninterval_ns=%lld\n"
		"elapsed_ns=%lld\nwait_time=1\nwait_threshold_ns=100000\ncommand_line="
		"wait-synth\ncpu_count=2\n",
		origin_ns, INTERVAL_NS, 1200 * MS);
	fclose(m);

	/* The process: modules, metrics (CPU Time, the waits', one of its own), an fd's name. */
	out_open(&proc, dir, pid, tid, true);
	put_process(&proc, pid, getppid(), RAW_PROCESS_START, mods[0].path);
	put_modules(&proc);
	check(raw_writer_metric(&proc.w, RAW_METRIC_CPU_TIME, "CPU Time", RAW_UNIT_NS, RAW_AGG_SUM,
				RAW_METRIC_KIND_CPU_SAMPLE),
	      "metric");
	check(raw_writer_metric(&proc.w, 1, "Wait Time", RAW_UNIT_NS, RAW_AGG_SUM, 2), "metric");
	check(raw_writer_metric(&proc.w, 2, "Wait Count", RAW_UNIT_COUNT, RAW_AGG_SUM, 2),
	      "metric");
	check(raw_writer_metric(&proc.w, 7, "Widgets", RAW_UNIT_COUNT, RAW_AGG_SUM, 3), "metric");
	check(raw_writer_object(&proc.w, RAW_WAIT_READ, 5, "pipe:[4242]"), "object");
	out_close(&proc);

	/*
	 * CPU samples: in synth_burn, and (with OpenMP) in a parallel region, where thread A
	 * works twice as long as B, which then spins in GOMP_barrier under the region.
	 */
#ifdef _OPENMP
	synth_region();
	omp_pc = sym("GOMP_barrier");
#endif
	construct[0] = '\0';
	/* pfinalize names the outlined function by its directive, the line after the
	   construct's return address (no runtime calls it in these stacks: "omp region") */
	snprintf(region, sizeof(region), "synth_region [omp region at wait-synth.c:%d]",
		 construct_line + 1);
	if (omp_pc && omp_records)
		snprintf(construct, sizeof(construct), "synth_region at wait-synth.c:%d",
			 construct_line);
	a_region = omp_pc ? 40 : 0;
	b_region = omp_pc ? 20 : 0;
	b_spin = omp_pc ? 30 : 0;
	printf("{\"pid\": %d, \"tids\": [%d, %d], \"child\": %d, \"exe\": \"%s\", "
	       "\"interval_ns\": %lld, \"cond_offset\": %" PRIu64 ",\n"
	       " \"threads\": {\"A\": {\"tid\": %d, \"start_ns\": 0, \"end_ns\": %lld, "
	       "\"cpu_ns\": %lld, \"samples\": %d}, \"B\": {\"tid\": %d, \"start_ns\": %lld, "
	       "\"end_ns\": %lld, \"cpu_ns\": %lld, \"samples\": %d}},\n"
	       " \"values\": {\"metric\": \"Widgets\", \"function\": \"synth_burn\", \"total\": 7, "
	       "\"count\": 2},\n \"spin_ns\": %lld,\n \"region\": %s%s%s, \"busy_ns\": {\"A\": %lld, "
	       "\"B\": %lld},\n \"construct\": %s%s%s,\n \"waits\": [",
	       pid, tid, tid + 1, child, mods[0].path, INTERVAL_NS, cond_off, tid, 1200 * MS,
	       (400 + a_region) * MS, 400 + a_region, tid + 1, 100 * MS, 900 * MS,
	       (100 + b_region + b_spin) * MS, 100 + b_region + b_spin, b_spin * MS,
	       omp_pc ? "\"" : "", omp_pc ? region : "null", omp_pc ? "\"" : "", a_region * MS,
	       b_region * MS, construct[0] ? "\"" : "", construct[0] ? construct : "null",
	       construct[0] ? "\"" : "");

	/* The waits: thread A's one after the other, B's beside them. */
	const struct planned waits_a[] = {
		{ "A", 410 * MS, 2, "synth_sleeper", 7, "sleep", 0, NULL, 1, 300 * MS, false },
		{ "A", 720 * MS, 3, "synth_locker", 1, "mutex", lock, "synth_lock", 1, 120 * MS,
		  false },
		{ "A", 845 * MS, 3, "synth_locker", 1, "mutex", lock, "synth_lock", 1000, 5 * MS,
		  true },
		{ "A", 850 * MS, 4, "synth_cond_waiter", 3, "cond", cond, cond_name, 1, 200 * MS,
		  false },
		{ "A", 1060 * MS, 5, "synth_reader", 9, "read", 5, "pipe:[4242]", 1, 50 * MS,
		  false },
	};
	/*
	 * With --omp-records, the region as OMPT tells it: one instance of 40 ms begun by A,
	 * which arrives last at its implicit barrier (a wait under the threshold), while B,
	 * done after 20 ms of work, waits there 20 ms.
	 */
	const struct planned waits_omp[] = {
		{ "A", 440 * MS, 7, region, RAW_WAIT_OMP_BARRIER, "openmp-barrier", construct_ra,
		  construct, 1, 0, true },
		{ "B", 220 * MS, 6, region, RAW_WAIT_OMP_BARRIER, "openmp-barrier", construct_ra,
		  construct, 1, 20 * MS, false },
	};
	const struct planned waits_b[] = {
		{ "B", 240 * MS, 2, "synth_joiner", 4, "join", 0x1234, NULL, 1, 250 * MS, false },
		{ "B", 500 * MS, 3, "synth_child_waiter", 13, "child", (uint64_t)child,
		  "wait-synth-child", 1, 80 * MS, false },
		/* stack 999 was never written: its stack is lost */
		{ "B", 600 * MS, 999, "[damaged stack]", 7, "sleep", 0, NULL, 1, 10 * MS, false },
	};

	/* Thread A: CPU in synth_burn and the region, then its waits. */
	out_open(&ta, dir, pid, tid, false);
	check(raw_writer_thread_start(&ta.w, (uint32_t)tid, 0, "synth-main"), "start");
	put_burn_stack(&ta, 1, ra_main);
	put_stack(&ta, 2, sym("nanosleep"), synth_sleeper(), ra_main);
	put_stack(&ta, 3, sym("pthread_mutex_lock"), synth_locker(), ra_main);
	put_stack(&ta, 4, sym("pthread_cond_wait"), synth_cond_waiter(), ra_main);
	put_stack(&ta, 5, sym("read"), synth_reader(), ra_main);
	for (i = 0; i < 400; i++)
		check(raw_writer_sample(&ta.w, (int64_t)(i + 1) * INTERVAL_NS, 1, 1), "sample");
	if (a_region) {
		put_region_stack(&ta, 6, 0, ra_main);
		for (i = 0; i < a_region; i++)
			check(raw_writer_sample(&ta.w, 400 * MS + (int64_t)i * 100000 + 1, 6, 1),
			      "sample");
	}
	check(raw_writer_value(&ta.w, 405 * MS, 1, 7, 3), "value");
	check(raw_writer_value(&ta.w, 406 * MS, 1, 7, 4), "value");
	for (i = 0; i < (int)(sizeof(waits_a) / sizeof(waits_a[0])); i++)
		put_planned(&ta, &waits_a[i]);
	if (construct[0]) {
		put_region_stack(&ta, 7, omp_pc, ra_main);
		check(raw_writer_omp_region(&ta.w, 400 * MS, 40 * MS, construct_ra, 2), "region");
		put_planned(&ta, &waits_omp[0]);
	}
	check(raw_writer_thread_end(&ta.w, (uint32_t)tid, 1200 * MS, (400 + a_region) * MS), "end");
	out_close(&ta);

	/* Thread B: CPU, a join, a child, a wait whose stack was lost, spinning in libgomp. */
	out_open(&tb, dir, pid, tid + 1, false);
	check(raw_writer_thread_start(&tb.w, (uint32_t)tid + 1, 100 * MS, "synth-worker"), "start");
	put_burn_stack(&tb, 1, ra_main);
	put_stack(&tb, 2, sym("pthread_join"), synth_joiner(), ra_main);
	put_stack(&tb, 3, sym("waitpid"), synth_child_waiter(), ra_main);
	for (i = 0; i < 100; i++)
		check(raw_writer_sample(&tb.w, 100 * MS + (int64_t)(i + 1) * INTERVAL_NS, 1, 1),
		      "sample");
	if (b_region) {
		put_region_stack(&tb, 6, 0, ra_main);
		put_region_stack(&tb, 7, omp_pc, ra_main);
		for (i = 0; i < b_region + b_spin; i++)
			check(raw_writer_sample(&tb.w, 200 * MS + (int64_t)(i + 1) * INTERVAL_NS,
						i < b_region ? 6 : 7, 1),
			      "sample");
	}
	if (construct[0])
		put_planned(&tb, &waits_omp[1]);
	for (i = 0; i < (int)(sizeof(waits_b) / sizeof(waits_b[0])); i++)
		put_planned(&tb, &waits_b[i]);
	check(raw_writer_thread_end(&tb.w, (uint32_t)tid + 1, 900 * MS,
				    (100 + b_region + b_spin) * MS),
	      "end");
	out_close(&tb);
	printf("]}\n");

	/* The child waited for: profiled too, so its name is known. */
	out_open(&cproc, dir, child, child, true);
	put_process(&cproc, child, pid, RAW_PROCESS_FORK, "/usr/bin/wait-synth-child");
	out_close(&cproc);
	out_open(&cth, dir, child, child, false);
	check(raw_writer_thread_start(&cth.w, (uint32_t)child, 500 * MS, "child"), "start");
	put_burn_stack(&cth, 1, ra_main);
	for (i = 0; i < 10; i++)
		check(raw_writer_sample(&cth.w, 500 * MS + (int64_t)(i + 1) * INTERVAL_NS, 1, 1),
		      "sample");
	check(raw_writer_thread_end(&cth.w, (uint32_t)child, 580 * MS, 10 * MS), "end");
	out_close(&cth);
	return 0;
}
