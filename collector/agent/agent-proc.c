/* SPDX-License-Identifier: MIT */
/* The process stream of an image: process, metric, module, thread-name and note records. */
#include <errno.h>
#include <fcntl.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "collector/agent/agent-private.h"
#include "common/grow.h"
#include "common/metric.h"
#include "common/raw-memory.h"
#include "common/result-dir.h"

/*
 * Module records describe every thread's samples: they must reach the file on their own, not
 * sit behind one thread's samples (a job killed while its main thread waits in pthread_join()
 * must resolve like a finished one). They go here, written from thread context only, under
 * agent.lock with our signal blocked; each record is in the file as soon as written, and the
 * chunk is closed (checksummed) at the end of each batch.
 */

/* argv of this process from /proc/self/cmdline: a NUL-separated buffer, caller frees both. */
static char **read_cmdline(char **bufp, size_t *argcp)
{
	char *buf = NULL, **argv;
	size_t len = 0, cap = 0, argc = 0, i, k = 0, start = 0;
	int fd = open("/proc/self/cmdline", O_RDONLY | O_CLOEXEC);

	if (fd >= 0) {
		for (;;) {
			ssize_t n;

			if (len == cap && GROW(buf, len + 4096, cap))
				break;
			n = read(fd, buf + len, cap - len);
			if (n <= 0)
				break;
			len += (size_t)n;
		}
		close(fd);
	}
	for (i = 0; i < len; i++)
		if (buf[i] == '\0')
			argc++;
	argv = calloc(argc + 1, sizeof(*argv));
	for (i = 0; argv && i < len && k < argc; i++) {
		if (buf[i] == '\0') {
			argv[k++] = buf + start;
			start = i + 1;
		}
	}
	*bufp = buf;
	*argcp = argv ? k : 0;
	return argv;
}

static void write_process(struct agent_proc *p)
{
	struct raw_process rec;
	size_t argc;
	char *buf = NULL, **argv = read_cmdline(&buf, &argc);

	memset(&rec, 0, sizeof(rec));
	rec.pid = agent.pid;
	rec.ppid = getppid();
	rec.time_ns = raw_header_now(&p->hdr);
	rec.origin = agent.origin;
	rec.parent_pid = agent.parent_pid;
	rec.generation = agent.generation;
	rec.exe = agent.exe;
	rec.argc = (uint32_t)argc;
	rec.argv = (const char *const *)argv;
	if (raw_writer_process(&p->w, &rec))
		agent_log("cannot record the process");
	free(argv);
	free(buf);
}

/* Declare the registry's metric id under its raw number (common/metric.h). */
static void declare_metric(struct raw_writer *w, enum metric_id id, uint32_t kind)
{
	const struct metric_def *d = metric_def(id);

	raw_writer_metric(w, (uint64_t)d->raw_id, d->name, d->unit, d->aggregation, kind);
}

int agent_proc_open(void)
{
	AGENT_BUSY;
	struct agent_proc *p = &agent.proc;
	char path[PATH_MAX], gen[16];
	enum metric_id id;
	sigset_t old;
	int ret;

	memset(p, 0, sizeof(*p));
	p->cpu_start_ns = agent_proc_cpu_ns();
	snprintf(gen, sizeof(gen), "x%u", agent.generation);
	if (result_path(path, sizeof(path), agent.cfg.result_dir, RESULT_PATH_RAW_PROC, agent.pid,
			0, NULL, agent.generation ? gen : NULL) < 0)
		return -ENAMETOOLONG;
	ret = raw_window_create(&p->win, path, agent.cfg.file_mode, AGENT_PROC_WINDOW);
	if (ret) {
		agent_log("cannot create stream '%s': %s: sampling disabled", path, strerror(-ret));
		return ret;
	}
	raw_header_init(&p->hdr, agent.pid, agent_gettid(), agent.cfg.rank, agent.cfg.host, 0,
			RAW_SAMPLE_NONE);
	p->hdr.kind = RAW_STREAM_PROCESS;
	p->hdr.generation = agent.generation;
	ret = raw_writer_init_mapped(&p->w, raw_window_next, &p->win, AGENT_CHUNK_MAX,
				     AGENT_RESERVE, &p->hdr);
	if (ret) {
		agent_log("cannot write stream '%s': %s (%s): sampling disabled", path,
			  strerror(-ret), p->win.error_op ? p->win.error_op : "map");
		raw_window_close(&p->win, 0);
		return ret;
	}
	p->open = true;
	agent_block_sampling(&old);
	write_process(p);
	/* Samples carry CPU time implicitly (weight x interval_ns); later metrics add values. */
	declare_metric(&p->w, METRIC_CPU_TIME, RAW_METRIC_KIND_CPU_SAMPLE);
	/* The threads' WAIT and WAIT_SUM records carry these (agent-wait.c). */
	if (agent.cfg.waits) {
		declare_metric(&p->w, METRIC_WAIT_TIME, RAW_METRIC_KIND_WAIT);
		declare_metric(&p->w, METRIC_WAIT_COUNT, RAW_METRIC_KIND_WAIT);
	}
	/* memory-consumption's: their values come from the aggregate file (raw-memory.h). */
	if (agent.cfg.memory)
		for (id = METRIC_MEM_ALLOCATED; id <= METRIC_MEM_TEMPORARY; id++)
			declare_metric(&p->w, id, RAW_METRIC_KIND_ALLOC);
	raw_writer_flush(&p->w);
	agent_account_bytes(&p->accounted, p->w.bytes_written);
	agent_restore_mask(&old);
	return 0;
}

struct raw_writer *agent_proc_begin(sigset_t *old)
{
	agent_block_sampling(old);
	return agent.proc.open ? &agent.proc.w : NULL;
}

/* After records: the chunk closed when flush, the bytes counted, a full stream logged once. */
static void proc_written(bool flush)
{
	struct agent_proc *p = &agent.proc;

	if (!p->open)
		return;
	if (flush)
		raw_writer_flush(&p->w);
	agent_account_bytes(&p->accounted, p->w.bytes_written);
	if (p->w.full && !p->failed_logged) {
		p->failed_logged = true;
		agent_log("the process stream stopped: %s (%s); later module records are lost",
			  strerror(-p->w.error), p->win.error_op ? p->win.error_op : "map");
	}
}

void agent_proc_end(const sigset_t *old)
{
	proc_written(true);
	agent_restore_mask(old);
}

struct raw_writer *agent_proc_writer(void)
{
	return agent.proc.open ? &agent.proc.w : NULL;
}

void agent_proc_written(void)
{
	struct agent_proc *p = &agent.proc;
	int64_t now = p->open ? raw_header_now(&p->hdr) : 0;
	bool flush = now - p->last_flush_ns >= AGENT_FLUSH_NS;

	if (flush)
		p->last_flush_ns = now;
	proc_written(flush);
}

void agent_proc_note(pid_t tid, uint32_t kind, const char *detail)
{
	AGENT_BUSY;
	struct raw_writer *w;
	sigset_t old;

	pthread_mutex_lock(&agent.lock);
	w = agent_proc_begin(&old);
	if (w)
		raw_writer_note(w, raw_header_now(&agent.proc.hdr), (uint32_t)tid, kind, detail);
	agent_proc_end(&old);
	pthread_mutex_unlock(&agent.lock);
}

/*
 * At exit or exec another thread may be in a module scan: wait for it a little, but never
 * hang the program's exit (everything written is in the file already; only the last chunk's
 * checksum and the cut of the zero tail would be missing).
 */
static bool lock_briefly(void)
{
	int i;

	for (i = 0; i < 1000; i++) {
		if (!pthread_mutex_trylock(&agent.lock))
			return true;
		sched_yield();
	}
	return false;
}

/* The last chunk closed, the file cut to its length; the window let go of when unmap. */
static void proc_finish(bool unmap)
{
	AGENT_BUSY;
	struct agent_proc *p = &agent.proc;
	sigset_t old;

	if (!p->open || !lock_briefly())
		return;
	agent_block_sampling(&old);
	raw_writer_flush(&p->w);
	agent_account_bytes(&p->accounted, p->w.bytes_written);
	if (unmap) {
		raw_window_close(&p->win, raw_writer_file_size(&p->w));
		p->open = false;
	} else {
		raw_window_cut(&p->win, raw_writer_file_size(&p->w));
	}
	agent_restore_mask(&old);
	pthread_mutex_unlock(&agent.lock);
}

void agent_proc_suspend(void)
{
	proc_finish(false);
}

void agent_proc_resume(void)
{
	struct agent_proc *p = &agent.proc;

	/* The exec failed: this image goes on writing into the same file. */
	if (p->open && raw_window_regrow(&p->win)) {
		agent_log("cannot reopen the process stream after a failed exec: %s",
			  strerror(p->win.error));
		p->open = false;
	}
}

uint64_t agent_proc_cpu_ns(void)
{
	struct timespec ts;

	if (clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &ts))
		return 0;
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

void agent_proc_note_cpu(void)
{
	uint64_t now = agent_proc_cpu_ns();
	char detail[32];

	if (!agent.proc.open || now < agent.proc.cpu_start_ns)
		return;
	snprintf(detail, sizeof(detail), "%llu",
		 (unsigned long long)(now - agent.proc.cpu_start_ns));
	agent_proc_note(agent.pid, RAW_NOTE_PROCESS_CPU, detail);
}

void agent_proc_close(void)
{
	proc_finish(true);
}

void agent_proc_drop(void)
{
	raw_window_drop(&agent.proc.win);
	agent.proc.open = false;
}
