/* SPDX-License-Identifier: MIT */
/* Error and diagnostic messages of the three tools, each line "<tool>: <message>" on stderr. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/log.h"

static const char *log_tool_name;
static int log_current_level;

void log_set_tool(const char *name)
{
	log_tool_name = name;
}

const char *log_tool(void)
{
	if (log_tool_name && *log_tool_name)
		return log_tool_name;
	return program_invocation_short_name;
}

void log_set_level(int level)
{
	log_current_level = level < -1 ? -1 : level > 1 ? 1 : level;
}

int log_level(void)
{
	return log_current_level;
}

/*
 * Format the whole line first and write it with one call, so that lines of concurrent
 * processes (ranks sharing a terminal) do not interleave mid-line.
 */
__attribute__((format(printf, 2, 0))) static void log_emit(const char *prefix, const char *fmt,
							   va_list ap, int err)
{
	char small[1024];
	char *msg = small;
	char *big = NULL;
	va_list aq;
	int n;
	int errsv = errno;

	va_copy(aq, ap);
	n = vsnprintf(small, sizeof(small), fmt, aq);
	va_end(aq);
	if (n < 0) {
		msg = "(unprintable message)";
	} else if ((size_t)n >= sizeof(small)) {
		big = malloc((size_t)n + 1);
		if (big) {
			vsnprintf(big, (size_t)n + 1, fmt, ap);
			msg = big;
		}
		/* Out of memory: the truncated message is better than none. */
	}

	flockfile(stderr);
	if (err)
		fprintf(stderr, "%s: %s%s: %s\n", log_tool(), prefix, msg, strerror(err));
	else
		fprintf(stderr, "%s: %s%s\n", log_tool(), prefix, msg);
	fflush(stderr);
	funlockfile(stderr);

	free(big);
	errno = errsv;
}

void err_set(char *err, size_t size, const char *fmt, ...)
{
	va_list ap;

	if (!err || !size)
		return;
	va_start(ap, fmt);
	vsnprintf(err, size, fmt, ap);
	va_end(ap);
}

void log_error(const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_emit("", fmt, ap, 0);
	va_end(ap);
}

void log_warn(const char *fmt, ...)
{
	va_list ap;

	if (log_current_level < 0)
		return;
	va_start(ap, fmt);
	log_emit("warning: ", fmt, ap, 0);
	va_end(ap);
}

void log_info(const char *fmt, ...)
{
	va_list ap;

	if (log_current_level < 0)
		return;
	va_start(ap, fmt);
	log_emit("", fmt, ap, 0);
	va_end(ap);
}

bool log_debug_on(void)
{
	return log_current_level >= 1;
}

void log_debug_in(const char *domain, const char *fmt, ...)
{
	char prefix[64];
	va_list ap;

	if (log_current_level < 1)
		return;
	snprintf(prefix, sizeof(prefix), "debug: %s%s", domain ? domain : "", domain ? ": " : "");
	va_start(ap, fmt);
	log_emit(prefix, fmt, ap, 0);
	va_end(ap);
}

_Noreturn void die(int code, const char *fmt, ...)
{
	va_list ap;

	va_start(ap, fmt);
	log_emit("", fmt, ap, 0);
	va_end(ap);
	exit(code);
}

_Noreturn void die_errno(int code, int err, const char *fmt, ...)
{
	va_list ap;

	/* Tolerate a caller passing -errno. */
	va_start(ap, fmt);
	log_emit("", fmt, ap, err < 0 ? -err : err);
	va_end(ap);
	exit(code);
}

int log_exit_code(int ret)
{
	if (!ret)
		return EXIT_OK;
	return ret == -ERR_USAGE ? EXIT_USAGE : EXIT_RUNTIME;
}

_Noreturn void log_bug(const char *file, int line, const char *fmt, ...)
{
	char where[512];
	va_list ap;

	/* Meson compiles from the build directory: "../finalizer/tree.c" names finalizer/tree.c. */
	while (!strncmp(file, "../", 3))
		file += 3;
	snprintf(where, sizeof(where), "BUG: %s:%d: ", file, line);
	va_start(ap, fmt);
	log_emit(where, fmt, ap, 0);
	va_end(ap);
	abort();
}
