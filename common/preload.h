/* SPDX-License-Identifier: MIT */
/* The LD_PRELOAD list that loads the agent into a program, kept across exec. */
#ifndef PCOLLECT_COMMON_PRELOAD_H
#define PCOLLECT_COMMON_PRELOAD_H

#include <stdbool.h>
#include <stddef.h>

/*
 * Write into out (size bytes) the LD_PRELOAD value for a program whose own value is old (NULL
 * or "" for none): ours first (the agent, then with -trace-mpi the MPI shims: ':'-separated,
 * in that order), then old's entries in their order, without another copy of any of ours. A
 * sanitizer runtime in old (libasan, libhwasan, libtsan and clang's
 * libclang_rt.* builds of them) stays ahead of the agent, since it must be the first library
 * loaded: that is how a program built with AddressSanitizer, or an agent built with it, is
 * profiled (LD_PRELOAD=libasan.so.N pcollect ...).
 * Entries are separated by ':' or ' ' in old, written with ':'. Async-signal-safe (used in
 * a vfork child): no allocation. Returns the length written (out NUL-terminated), or -1 when
 * it does not fit.
 */
int preload_compose(char *out, size_t size, const char *ours, const char *old);

/* Whether path names one of those sanitizer runtimes (their interceptors wrap the calls the
   agent measures: agent-wait.c leaves their frames out of a wait's stack). */
bool preload_is_sanitizer(const char *path);

#endif
