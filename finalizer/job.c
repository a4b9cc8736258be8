/* SPDX-License-Identifier: MIT */
/* pfinalize -r DIR of a parallel job: every DIR.<host> finalized, several at once. */
#define LOG_DOMAIN "job"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/log.h"
#include "common/result-dir.h"
#include "finalizer/finalize.h"

/*
 * Each node result is finalized by a child process of its own, so that one that fails (or
 * crashes on damaged data) costs only itself, and each child's summary reaches stderr in one
 * piece (its stderr is fully buffered and flushed at its end). -j N is the threads in all:
 * up to N node results at once, each with N / (that many) threads.
 */

/* Finalize one node result in a child; its exit status (EXIT_*). */
static _Noreturn void child_run(const struct finalize_opts *o, const char *part, int threads)
{
	static char buf[1 << 16];
	struct finalize_opts c = *o;
	int rc;

	setvbuf(stderr, buf, _IOFBF, sizeof(buf));
	c.result_dir = part;
	c.jobs = threads;
	rc = finalize_run(&c);
	fflush(stderr);
	_exit(log_exit_code(rc));
}

/* Wait for one child; its status folded into *worst (EXIT_* values, the highest kept). */
static pid_t reap(int *worst, char **parts, const pid_t *pids, size_t n)
{
	int status, code;
	size_t i;
	pid_t p;

	do
		p = waitpid(-1, &status, 0);
	while (p < 0 && errno == EINTR);
	if (p < 0)
		return p;
	code = WIFEXITED(status) ? WEXITSTATUS(status) : EXIT_RUNTIME;
	for (i = 0; i < n; i++)
		if (pids[i] == p && WIFSIGNALED(status))
			log_error("finalization of '%s' died of signal %d", parts[i],
				  WTERMSIG(status));
	if (code > *worst)
		*worst = code;
	return p;
}

int finalize_job(const struct finalize_opts *o, char **parts, size_t n)
{
	long cpus = sysconf(_SC_NPROCESSORS_ONLN);
	int rank = 0, size = 1, jobs = o->jobs > 0 ? o->jobs : cpus > 0 ? (int)cpus : 1;
	int worst = EXIT_OK, running = 0, at_once, threads;
	size_t i, mine = 0;
	pid_t *pids = calloc(n + 1, sizeof(*pids));

	if (!pids) {
		log_error("cannot finalize the job's results: %s", strerror(ENOMEM));
		return -ENOMEM;
	}
	/* Under mpirun or srun, rank r of s takes the node results r, r + s, r + 2s, ... */
	if (result_job_rank_size(&rank, &size) && size > 1)
		log_debug("rank %d of %d: the node results %d, %d + %d, ...", rank, size, rank,
			  rank, size);
	else
		rank = 0, size = 1;
	for (i = (size_t)rank; i < n; i += (size_t)size)
		mine++;
	at_once = mine < (size_t)jobs ? (int)mine : jobs;
	threads = at_once > 0 && jobs / at_once > 0 ? jobs / at_once : 1;
	if (!o->quiet)
		log_info("finalizing %zu node result%s of a parallel job%s, %d at once", mine,
			 mine == 1 ? "" : "s", size > 1 ? " (this rank's share)" : "", at_once);
	fflush(NULL);
	for (i = (size_t)rank; i < n; i += (size_t)size) {
		if (running == at_once && reap(&worst, parts, pids, n) > 0)
			running--;
		log_debug("'%s' with %d threads", parts[i], threads);
		pids[i] = fork();
		if (pids[i] < 0) {
			log_error("cannot finalize '%s': %s", parts[i], strerror(errno));
			worst = EXIT_RUNTIME;
			continue;
		}
		if (pids[i] == 0)
			child_run(o, parts[i], threads);
		running++;
	}
	while (running > 0 && reap(&worst, parts, pids, n) > 0)
		running--;
	free(pids);
	if (worst == EXIT_OK)
		return finalize_job_db(o->result_dir, parts, n, size, o->quiet) ? -EIO : 0;
	return worst == EXIT_USAGE ? -ERR_USAGE : -EIO;
}
