/* SPDX-License-Identifier: MIT */
/* A program rough with descriptors: close loops, close_range, dup2 onto others, closed 0-2. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <linux/close_range.h>
#include <pthread.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <unistd.h>

#include "burn.h"

/*
 * fd-chaos MODE DIR [WORK_MS]: gets rid of descriptors as MODE says, then opens NFILES data
 * files in DIR and writes FILE_SIZE bytes into each, a block at a time with WORK_MS (18) of CPU
 * work between blocks (about 1.3 s of CPU in all, so a sampler's periodic writes fall in the
 * middle; 0 for the same files and output at once). Every file must end up holding exactly
 * its pattern; stdout says what was done.
 *   close-loop   close(3..4095)
 *   close-range  close_range(3, ~0U, 0)
 *   closefrom    closefrom(3)
 *   dup2         the files are dup2()/dup3()'d onto low numbers and onto the numbers just
 *                under the soft RLIMIT_NOFILE, and written through those
 *   stdio        close(0), close(1), close(2) first: the files get 0, 1 and 2
 * fd-chaos nofile: lowers the soft RLIMIT_NOFILE to 16, opens /dev/null until EMFILE and says
 * how many it got, then runs 8 named threads of 100 ms of CPU each while holding them, and
 * says the soft limit it reads at the end.
 * fd-chaos nofile-hard: the same with the hard limit lowered too.
 * fd-chaos nofile-burst: the soft limit as in nofile, then 32 threads of 10 ms of CPU each
 *                started at once: their streams are made and cut together, each at the limit.
 * A second argument sets a nofile thread's CPU milliseconds (0: what it prints, at once).
 * fd-chaos chase [MS]: the main thread burns MS (400) ms of CPU while a thread named "chaser"
 * looks for perf events among the process's descriptors (/proc/self/fd: a task-clock
 * sampler's) and dup2()s /dev/null onto each one it finds, then closes that number, again and
 * again: a sampler's event is moved under the thread it samples many times a second. Prints
 * "chase: done"; stderr says how many descriptors it replaced.
 * fd-chaos crowd [MS]: opens /dev/null until EMFILE, dup2()s it onto every perf event among
 * its descriptors (a sampler's event then has no number left to move to), and burns MS (300)
 * ms of CPU. Prints "crowd: done"; stderr says how many it opened and replaced.
 */

#define NFILES    6
#define FILE_SIZE (48 * 1024)
#define BLOCK     4096

static double work_ms = 18; /* CPU time between two blocks */

static __attribute__((noinline, noclone)) void fill_work(void)
{
	BURN_CPU_MS(work_ms);
}

static void pattern(char *buf, int file, int block)
{
	int i;

	for (i = 0; i < BLOCK; i++)
		buf[i] = (char)('a' + (file * 7 + block + i) % 26);
}

static int write_files(const int *fds, int n)
{
	char buf[BLOCK];
	int b, i;

	for (b = 0; b < FILE_SIZE / BLOCK; b++) {
		for (i = 0; i < n; i++) {
			fill_work();
			pattern(buf, i, b);
			if (write(fds[i], buf, BLOCK) != BLOCK)
				return -1;
		}
	}
	return 0;
}

static int open_data(const char *dir, int i)
{
	char path[4096];

	snprintf(path, sizeof(path), "%s/data.%d", dir, i);
	return open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
}

static int files(const char *mode, const char *dir)
{
	int fds[NFILES], i, fd;

	if (!strcmp(mode, "close-loop")) {
		for (fd = 3; fd < 4096; fd++)
			close(fd);
	} else if (!strcmp(mode, "close-range")) {
		if (close_range(3, ~0u, 0))
			return 2;
	} else if (!strcmp(mode, "closefrom")) {
		closefrom(3);
	} else if (!strcmp(mode, "stdio")) {
		close(0);
		close(1);
		close(2);
	} else if (strcmp(mode, "dup2")) {
		return 2;
	}
	for (i = 0; i < NFILES; i++) {
		fds[i] = open_data(dir, i);
		if (fds[i] < 0)
			return 3;
	}
	if (!strcmp(mode, "dup2")) {
		/* Onto 10.., and onto the top of the descriptor table (where a tool hides its). */
		struct rlimit rl;
		int top = 1024;

		if (!getrlimit(RLIMIT_NOFILE, &rl) && rl.rlim_cur < 65536)
			top = (int)rl.rlim_cur;
		for (i = 0; i < NFILES; i++) {
			int to = i % 2 ? top - 1 - i / 2 : 10 + i;
			int r = i % 3 ? dup2(fds[i], to) : dup3(fds[i], to, O_CLOEXEC);

			if (r != to)
				return 4;
			close(fds[i]);
			fds[i] = to;
		}
	}
	if (write_files(fds, NFILES))
		return 5;
	for (i = 0; i < NFILES; i++)
		if (close(fds[i]))
			return 6;
	if (strcmp(mode, "stdio"))
		printf("%s: files=%d bytes=%d\n", mode, NFILES, NFILES * FILE_SIZE);
	return 0;
}

#define BURST_THREADS 32

static double thread_ms = 100; /* a nofile thread's CPU time (nofile-burst: 10) */

static __attribute__((noinline, noclone)) void thread_work(void)
{
	BURN_CPU_MS(thread_ms);
}

static __attribute__((noinline, noclone)) void burst_work(void)
{
	BURN_CPU_MS(thread_ms);
}

static bool burst;

static void *worker(void *arg)
{
	char name[16];

	snprintf(name, sizeof(name), "%s-%ld", burst ? "burst" : "nofile", (long)arg);
	pthread_setname_np(pthread_self(), name);
	if (burst)
		burst_work();
	else
		thread_work();
	return NULL;
}

static int nofile(bool hard)
{
	int nthreads = burst ? BURST_THREADS : 8;
	pthread_t t[BURST_THREADS];
	struct rlimit rl;
	int n = 0;
	long i;

	/* The soft limit only, as a program limits itself; the hard one stays. */
	if (getrlimit(RLIMIT_NOFILE, &rl))
		return 2;
	rl.rlim_cur = 16;
	if (hard)
		rl.rlim_max = 16;
	if (setrlimit(RLIMIT_NOFILE, &rl))
		return 2;
	while (open("/dev/null", O_RDONLY) >= 0)
		n++;
	printf("opened %d more (%s)\n", n, strerror(errno));
	fflush(stdout);
	for (i = 0; i < nthreads; i++)
		if (pthread_create(&t[i], NULL, worker, (void *)i))
			return 3;
	for (i = 0; i < nthreads; i++)
		pthread_join(t[i], NULL);
	/* The limit it set, whatever was borrowed above it meanwhile. */
	if (getrlimit(RLIMIT_NOFILE, &rl))
		return 2;
	printf("threads=%d limit=%ld\n", nthreads, (long)rl.rlim_cur);
	return 0;
}

/* The numbers of the perf events among the process's descriptors (d: /proc/self/fd, just
   opened), at most max. */
static int perf_events(DIR *d, int *found, int max)
{
	struct dirent *e;
	int n = 0;

	while (d && (e = readdir(d)) && n < max) {
		char path[300], link[64];
		ssize_t len;

		snprintf(path, sizeof(path), "/proc/self/fd/%s", e->d_name);
		len = readlink(path, link, sizeof(link) - 1);
		if (len <= 0)
			continue;
		link[len] = 0;
		if (strstr(link, "perf_event"))
			found[n++] = atoi(e->d_name);
	}
	return n;
}

static atomic_bool chase_done;

static void *chaser(void *arg)
{
	int null = open("/dev/null", O_RDONLY | O_CLOEXEC);
	long *moved = arg;

	pthread_setname_np(pthread_self(), "chaser");
	while (null >= 0 && !atomic_load(&chase_done)) {
		DIR *d = opendir("/proc/self/fd");
		int found[64], n = perf_events(d, found, 64), i;

		if (d)
			closedir(d);
		for (i = 0; i < n; i++)
			if (dup2(null, found[i]) == found[i] && !close(found[i]))
				(*moved)++;
	}
	return NULL;
}

static __attribute__((noinline, noclone)) void chased_work(double ms)
{
	BURN_CPU_MS(ms);
}

static int chase(double ms)
{
	long moved = 0;
	pthread_t t;

	if (pthread_create(&t, NULL, chaser, &moved))
		return 3;
	chased_work(ms);
	atomic_store(&chase_done, true);
	pthread_join(t, NULL);
	fprintf(stderr, "fd-chaos: %ld perf event descriptors replaced\n", moved);
	printf("chase: done\n");
	return 0;
}

static int crowd(double ms)
{
	int null = open("/dev/null", O_RDONLY), found[64], n, i, opened = 0, replaced = 0;
	DIR *d = opendir("/proc/self/fd"); /* opened first: no number is left after */

	if (null < 0 || !d)
		return 2;
	while (open("/dev/null", O_RDONLY) >= 0)
		opened++;
	n = perf_events(d, found, 64);
	for (i = 0; i < n; i++)
		replaced += dup2(null, found[i]) == found[i];
	chased_work(ms); /* d still open: not a number is free */
	closedir(d);
	fprintf(stderr, "fd-chaos: %d descriptors opened, %d perf events replaced\n", opened,
		replaced);
	printf("crowd: done\n");
	return 0;
}

int main(int argc, char **argv)
{
	if ((argc == 2 || argc == 3) && !strcmp(argv[1], "chase"))
		return chase(argc == 3 ? atof(argv[2]) : 400);
	if ((argc == 2 || argc == 3) && !strcmp(argv[1], "crowd"))
		return crowd(argc == 3 ? atof(argv[2]) : 300);
	if ((argc == 2 || argc == 3) && !strncmp(argv[1], "nofile", 6)) {
		burst = !strcmp(argv[1], "nofile-burst");
		thread_ms = argc == 3 ? atof(argv[2]) : burst ? 10 : 100;
		return nofile(!strcmp(argv[1], "nofile-hard"));
	}
	if (argc != 3 && argc != 4) {
		fprintf(stderr,
			"usage: fd-chaos MODE DIR [WORK_MS] | fd-chaos nofile[-hard|-burst] "
			"[THREAD_MS] | fd-chaos chase|crowd [MS]\n");
		return 2;
	}
	if (argc == 4)
		work_ms = atof(argv[3]);
	return files(argv[1], argv[2]);
}
