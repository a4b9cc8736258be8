/* SPDX-License-Identifier: MIT */
/* One tool running another as a program: pcollect runs pfinalize and preport, preport pfinalize. */
#ifndef PCOLLECT_COMMON_TOOL_RUN_H
#define PCOLLECT_COMMON_TOOL_RUN_H

#include <stddef.h>
#include <sys/types.h>

/*
 * The directory of the running program (/proc/self/exe's) into dir (size bytes). 0 or a
 * negative errno.
 */
int tool_exe_dir(char *dir, size_t size);

/*
 * Find the tool name ("pfinalize", "preport") for the running tool: beside it (an install:
 * bin/pfinalize beside bin/pcollect), or in the build tree, where each tool sits in its
 * component's directory (build/finalizer/pfinalize beside build/collector/pcollect). The
 * absolute path goes to path (size bytes). Returns 0 or -ENOENT.
 */
int tool_find(const char *name, char *path, size_t size);

/*
 * Run the tool name (tool_find()) with argv (NULL-terminated) and wait for it: its standard
 * streams are ours. argv[0] is the name its messages carry: a tool whose argv[0] is another
 * tool's name speaks as that tool ("pcollect: ..." when pcollect finalizes; tool_speaks_as()),
 * so the user sees one program. Returns its exit status (0-255), 128 + N when signal N ended it, or
 * a negative errno when it could not be found (-ENOENT) or started.
 */
int tool_run(const char *name, char *const argv[]);

/*
 * tool_run() without the wait, for several tools at once: start the tool name with argv and
 * return its pid, or a negative errno (-ENOENT: it is nowhere). Its standard error is err_fd
 * when not -1 (a file that keeps its messages together), else ours. tool_wait() reaps it.
 */
pid_t tool_spawn(const char *name, char *const argv[], int err_fd);

/*
 * Wait for the tool pid that tool_spawn() started (-1: whichever of them ends first) and put
 * the one that ended in *ended (may be NULL). Returns its status as tool_run() does, or a
 * negative errno (-ECHILD when none is left).
 */
int tool_wait(pid_t pid, pid_t *ended);

/*
 * The name a tool's messages carry: the tool that ran it when argv0's last component names one
 * of ours (pfinalize run by preport speaks as preport, by pcollect as pcollect: the user sees
 * the one program they ran), else own ("pfinalize", "preport").
 */
const char *tool_speaks_as(const char *argv0, const char *own);

#endif
