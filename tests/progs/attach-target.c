/* SPDX-License-Identifier: MIT */
/* A program pcollect -target-pid attaches to: known phases, then a look at its own signals. */
#include <pthread.h>
#include <signal.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <dirent.h>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include "burn.h"

/*
 * attach-target phases MS1 MS2: burns MS1 ms of CPU time in phase_one, then MS2 in phase_two.
 * attach-target until FILE MS2: burns CPU time in phase_one until FILE exists, then MS2 ms in
 * phase_two.
 * attach-target thread FILE MS: waits (sleeping) until FILE exists, then burns MS ms in a
 * thread it creates then (after the attach: a thread the agent learns of through
 * pthread_create), and MS in main meanwhile.
 * attach-target fork FILE MS: waits (sleeping) until FILE exists, then forks (after the
 * attach: a child the agent follows through pthread_atfork) and both burn MS ms in phase_one.
 * attach-target steps DIR MS: forks, and both processes burn in phase_one until DIR/paused
 * exists, then MS ms in phase_two; the parent then writes DIR/b-done and both wait until
 * DIR/resumed exists, then burn MS ms in phase_three (pcollect -command pause and resume
 * from another shell, between the steps).
 * attach-target worker FILE: a thread burns CPU time in phase_one until FILE exists, while
 * main waits for it in pthread_join (the busy thread is not the one pcollect stops).
 * attach-target nodump FILE: makes itself not dumpable (PR_SET_DUMPABLE 0), then waits until
 * FILE exists (attaching is refused).
 * Each prints its pid first, and at the end what it finds of a profiler: signals whose
 * disposition is not the default, signals pending, its thread count (the agent's control
 * thread must be gone after a detach). Exit code 3.
 */

/* ms of CPU time, or (until not NULL) as long as it takes the file until to appear. */
static __attribute__((noipa)) void phase_one(double ms, const char *until)
{
	if (!until)
		BURN_CPU_MS(ms);
	while (until && access(until, F_OK))
		BURN_CPU_MS(5);
}

static __attribute__((noipa)) void phase_two(double ms)
{
	BURN_CPU_MS(ms);
}

static __attribute__((noipa)) void phase_three(double ms)
{
	BURN_CPU_MS(ms);
}

static void wait_for(const char *dir, const char *name)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	while (access(path, F_OK))
		usleep(2000);
}

static __attribute__((noipa)) void phase_one_until(const char *dir, const char *name)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/%s", dir, name);
	while (access(path, F_OK))
		BURN_CPU_MS(5);
}

/* The child ends here (0); the parent reaps it: 0 when it exited with 0. */
static int child_done(pid_t child)
{
	int status;

	if (!child)
		_exit(0);
	return waitpid(child, &status, 0) != child || !WIFEXITED(status) || WEXITSTATUS(status);
}

static __attribute__((noipa)) void *worker(void *arg)
{
	BURN_CPU_MS(*(double *)arg);
	return NULL;
}

static __attribute__((noipa)) void *until_worker(void *arg)
{
	phase_one(0, arg);
	return NULL;
}

static int count_threads(void)
{
	DIR *d = opendir("/proc/self/task");
	struct dirent *e;
	int n = 0;

	while (d && (e = readdir(d)))
		if (e->d_name[0] != '.')
			n++;
	if (d)
		closedir(d);
	return n;
}

static void report(void)
{
	sigset_t pending;
	int sig, handlers = 0, npending = 0;

	sigpending(&pending);
	for (sig = 1; sig <= SIGRTMAX; sig++) {
		struct sigaction sa;

		if (sig == SIGKILL || sig == SIGSTOP || (sig > SIGSYS && sig < SIGRTMIN))
			continue;
		if (!sigaction(sig, NULL, &sa) && !(sa.sa_flags & SA_SIGINFO) &&
		    sa.sa_handler == SIG_DFL)
			continue;
		printf("handler for signal %d\n", sig);
		handlers++;
	}
	for (sig = 1; sig <= SIGRTMAX; sig++)
		if (sigismember(&pending, sig) == 1) {
			printf("pending signal %d\n", sig);
			npending++;
		}
	printf("handlers=%d pending=%d threads=%d\n", handlers, npending, count_threads());
}

int main(int argc, char **argv)
{
	if (argc == 4 && !strcmp(argv[1], "phases")) {
		printf("pid=%d\n", (int)getpid());
		fflush(stdout);
		phase_one(atof(argv[2]), NULL);
		phase_two(atof(argv[3]));
	} else if (argc == 4 && !strcmp(argv[1], "until")) {
		printf("pid=%d\n", (int)getpid());
		fflush(stdout);
		phase_one(0, argv[2]);
		phase_two(atof(argv[3]));
	} else if (argc == 4 && !strcmp(argv[1], "thread")) {
		double ms = atof(argv[3]);
		pthread_t t;

		printf("pid=%d\n", (int)getpid());
		fflush(stdout);
		while (access(argv[2], F_OK))
			usleep(2000);
		if (pthread_create(&t, NULL, worker, &ms))
			return 1;
		phase_one(ms, NULL);
		pthread_join(t, NULL);
	} else if (argc == 4 && !strcmp(argv[1], "fork")) {
		double ms = atof(argv[3]);
		pid_t child;

		printf("pid=%d\n", (int)getpid());
		fflush(stdout);
		wait_for(".", argv[2]);
		child = fork();
		if (child < 0)
			return 1;
		phase_one(ms, NULL);
		if (child_done(child))
			return 1;
	} else if (argc == 4 && !strcmp(argv[1], "steps")) {
		double ms = atof(argv[3]);
		int done[2];
		char c = 0, path[4096];
		pid_t child;
		FILE *f;

		printf("pid=%d\n", (int)getpid());
		fflush(stdout);
		if (pipe(done) || (child = fork()) < 0)
			return 1;
		phase_one_until(argv[2], "paused");
		phase_two(ms);
		/* b-done once both processes are through phase_two. */
		if (!child) {
			if (write(done[1], &c, 1) != 1)
				_exit(1);
		} else {
			if (read(done[0], &c, 1) != 1)
				return 1;
			snprintf(path, sizeof(path), "%s/b-done", argv[2]);
			f = fopen(path, "w");
			if (f)
				fclose(f);
		}
		wait_for(argv[2], "resumed");
		phase_three(ms);
		if (child_done(child))
			return 1;
	} else if (argc == 3 && !strcmp(argv[1], "worker")) {
		pthread_t t;

		printf("pid=%d\n", (int)getpid());
		fflush(stdout);
		if (pthread_create(&t, NULL, until_worker, argv[2]))
			return 1;
		pthread_join(t, NULL);
	} else if (argc == 3 && !strcmp(argv[1], "nodump")) {
		prctl(PR_SET_DUMPABLE, 0, 0, 0, 0);
		printf("pid=%d\n", (int)getpid());
		fflush(stdout);
		wait_for(".", argv[2]);
	} else {
		fprintf(stderr,
			"usage: attach-target phases MS1 MS2 | until FILE MS2 | thread FILE "
			"MS | fork FILE MS | steps DIR MS | worker FILE | nodump FILE\n");
		return 2;
	}
	report();
	return 3;
}
