/* SPDX-License-Identifier: MIT */
/* Blocking calls (pipe read, poll, nanosleep, accept) with work between: output must not change. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <poll.h>
#include <pthread.h>
#include <stdio.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include "burn.h"

static int pipefd[2];
static int eintr;
static unsigned short port;

static void *writer(void *arg)
{
	int i;

	(void)arg;
	for (i = 0; i < 20; i++) {
		struct timespec ts = { 0, 5000000 };

		BURN_CPU_MS(10); /* so this thread is sampled too */
		nanosleep(&ts, NULL);
		if (write(pipefd[1], "0123456789", 10) != 10)
			break;
	}
	close(pipefd[1]);
	return NULL;
}

static void *connecter(void *arg)
{
	struct sockaddr_in a;
	int i;

	(void)arg;
	for (i = 0; i < 5; i++) {
		int s = socket(AF_INET, SOCK_STREAM, 0);
		struct timespec ts = { 0, 20000000 };

		nanosleep(&ts, NULL);
		memset(&a, 0, sizeof(a));
		a.sin_family = AF_INET;
		a.sin_port = htons(port);
		a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
		if (connect(s, (struct sockaddr *)&a, sizeof(a)) == 0 && write(s, "x", 1) != 1)
			eintr += 1000;
		close(s);
	}
	return NULL;
}

int main(void)
{
	struct sockaddr_in a;
	socklen_t len = sizeof(a);
	pthread_t t;
	char buf[64];
	long total = 0;
	int i, ls, accepted = 0, polls = 0, sleeps = 0;

	/* 1. pipe read, blocking until the writer thread sends. */
	if (pipe(pipefd))
		return 1;
	pthread_create(&t, NULL, writer, NULL);
	for (;;) {
		ssize_t n = read(pipefd[0], buf, sizeof(buf));

		if (n < 0 && errno == EINTR) {
			eintr++;
			continue;
		}
		if (n <= 0)
			break;
		total += n;
		BURN_CPU_MS(5);
	}
	pthread_join(t, NULL);
	/* 2. poll with a timeout on a pipe that stays silent. */
	for (i = 0; i < 10; i++) {
		struct pollfd p = { pipefd[0], POLLIN, 0 };
		int r = poll(&p, 1, 10);

		if (r < 0 && errno == EINTR)
			eintr++;
		else
			polls += r == 0 || (p.revents & POLLHUP);
		BURN_CPU_MS(5);
	}
	/* 3. nanosleep between bursts of work. */
	for (i = 0; i < 10; i++) {
		struct timespec ts = { 0, 10000000 };

		BURN_CPU_MS(10);
		if (nanosleep(&ts, NULL) && errno == EINTR)
			eintr++;
		else
			sleeps++;
	}
	/* 4. accept on loopback. */
	ls = socket(AF_INET, SOCK_STREAM, 0);
	memset(&a, 0, sizeof(a));
	a.sin_family = AF_INET;
	a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
	if (bind(ls, (struct sockaddr *)&a, sizeof(a)) || listen(ls, 8) ||
	    getsockname(ls, (struct sockaddr *)&a, &len))
		return 1;
	port = ntohs(a.sin_port);
	pthread_create(&t, NULL, connecter, NULL);
	while (accepted < 5) {
		int c = accept(ls, NULL, NULL);

		if (c < 0) {
			if (errno == EINTR)
				eintr++;
			continue;
		}
		if (read(c, buf, 1) == 1)
			accepted++;
		close(c);
		BURN_CPU_MS(10);
	}
	pthread_join(t, NULL);
	printf("pipe_bytes=%ld polls=%d sleeps=%d accepted=%d eintr=%d\n", total, polls, sleeps,
	       accepted, eintr);
	return 0;
}
