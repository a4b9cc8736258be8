/* SPDX-License-Identifier: MIT */
/* Error and diagnostic messages of the three tools, in git's style. */
#ifndef PCOLLECT_COMMON_LOG_H
#define PCOLLECT_COMMON_LOG_H

#include <stdarg.h>
#include <stdbool.h>
#include <stddef.h>

/*
 * Messages read "<tool>: <failure> '<subject>': <cause>", lower case, no full stop:
 *   pcollect: cannot create result directory 'res': Permission denied
 * log_set_tool() names the tool once, at the top of main().
 */
void log_set_tool(const char *name);
const char *log_tool(void);

/* 0 normal, -1 quiet (errors only), 1 verbose (debug messages shown). */
void log_set_level(int level);
int log_level(void);

/* "<tool>: <message>" on stderr. */
void log_error(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "<tool>: warning: <message>" on stderr, unless quiet. */
void log_warn(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/* "<tool>: <message>" on stderr, unless quiet. */
void log_info(const char *fmt, ...) __attribute__((format(printf, 1, 2)));
/*
 * "<tool>: debug: <domain>: <message>" on stderr, only when verbose (-verbose, -v): the
 * decisions behind a result, which file was tried and why it was taken or refused. Like
 * uftrace's PR_DOMAIN, a file names its domain by defining LOG_DOMAIN before its first
 * #include (#define LOG_DOMAIN "module"); without one the message has no domain.
 */
#ifdef LOG_DOMAIN
#define log_debug(...) log_debug_in(LOG_DOMAIN, __VA_ARGS__)
#else
#define log_debug(...) log_debug_in(NULL, __VA_ARGS__)
#endif
void log_debug_in(const char *domain, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* True when debug messages are shown: for work done only to feed them. */
bool log_debug_on(void);

/*
 * The one way library code hands a message to its caller instead of telling the user itself:
 * the message, in the style above but without the tool's name, into err (size bytes; nothing
 * when err is NULL or size is 0). The caller prints it, or words a larger one around it.
 */
void err_set(char *err, size_t size, const char *fmt, ...) __attribute__((format(printf, 3, 4)));

/* log_error() then exit(code). Only a tool's top level calls these. */
_Noreturn void die(int code, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/* Like die(..) with ": <strerror(err)>" appended; err is a positive errno value. */
_Noreturn void die_errno(int code, int err, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/*
 * A broken invariant of our own code, not a problem of the input: "<tool>: BUG: <file>:<line>:
 * <message>", then abort(). The message names the invariant; unlike assert() it is never
 * compiled out, so a "cannot happen" branch never goes on silently or returns a bare error.
 * Not for the agent, which never stops the profiled program.
 */
#define BUG(...) log_bug(__FILE__, __LINE__, __VA_ARGS__)
_Noreturn void log_bug(const char *file, int line, const char *fmt, ...)
	__attribute__((format(printf, 3, 4)));

/* Exit codes of every tool. */
enum log_exit {
	EXIT_OK = 0,
	EXIT_RUNTIME = 1, /* the work failed */
	EXIT_USAGE = 2,   /* bad options or input named by the user */
};

/*
 * The one failure that is no errno: the user's input cannot be used (an option value, a
 * directory that is not a result, a function the result does not have). A function returns
 * -ERR_USAGE after telling the user why with log_error(); every other failure is a negative
 * errno. Linux errno values stay below 4096, so no failed call reads as a usage error.
 * docs/errors.md has the whole convention.
 */
enum { ERR_USAGE = 4096 };

/* A tool's exit code for its entry point's result: 0, -ERR_USAGE or a negative errno. */
int log_exit_code(int ret);

#endif
