/* SPDX-License-Identifier: MIT */
/* What pcollect checks about a target before it creates anything: found, runnable, preloadable. */
#ifndef PCOLLECT_COLLECTOR_TARGET_CHECK_H
#define PCOLLECT_COLLECTOR_TARGET_CHECK_H

#include <stddef.h>

/*
 * Find cmd as execvp() would (a name without '/' is searched in PATH) and check that it can
 * be run and that the agent can be preloaded into it: a dynamically linked ELF program of
 * this machine's class, not setuid or setgid, or a script whose interpreter is one. Writes
 * the path to run into path. Returns 0, or -errno with err set to the one-line reason
 * (without the tool's name), e.g. "cannot profile './a.out': statically linked programs
 * cannot load the agent (link it dynamically)".
 */
int target_check(const char *cmd, char *path, size_t size, char *err, size_t err_size);

#endif
