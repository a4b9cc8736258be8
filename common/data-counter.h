/* SPDX-License-Identifier: MIT */
/* The page all processes of a collection share: the raw-data counter and the control word. */
#ifndef PCOLLECT_COMMON_DATA_COUNTER_H
#define PCOLLECT_COMMON_DATA_COUNTER_H

#include <stddef.h>
#include <stdbool.h>
#include <stdint.h>
#include <sys/types.h>

#include "common/agent-env.h"

/*
 * The page is a small file, DIR/log/.data-used, that the launcher creates and every agent
 * maps shared: processes add the bytes they write with atomic adds, so -data-limit holds for
 * the whole process tree without any message passing; and the control word (pause, resume,
 * stop, detach) is changed by whoever controls the collection (the launcher, pcollect
 * -command from another shell, the program through the API) and obeyed by every agent, whose
 * control thread waits on it as a futex: nothing is sent to the program, no signal, no
 * descriptor.
 */

/* The counter file's path in result directory dir. Returns 0 or -ENAMETOOLONG. */
int data_counter_path(char *buf, size_t size, const char *dir);

/*
 * Create (launcher, create = 1: made whole, its blocks reserved, under another name and
 * linked into place; when another launcher of the same result made it first, as the ranks of
 * an MPI job on one node do, that one is opened and shared) or open it, and map it. Returns
 * the mapping, or NULL with errno set (a file shorter than the page, of an older collector
 * or cut short: ENOSPC).
 */
struct agent_data_counter *data_counter_map(const char *dir, int create);

/*
 * Set the flags set and clear the flags clear of the control word, then wake every agent
 * waiting on it. Returns the control sequence of the change (data_counter_wait_applied()).
 */
uint32_t data_counter_command(struct agent_data_counter *c, uint32_t set, uint32_t clear);

/*
 * Wait until the control word's sequence is no longer seq, at most timeout_ns (negative:
 * no limit). Returns at once when it already moved; may return early (a signal).
 */
void data_counter_wait(struct agent_data_counter *c, uint32_t seq, int64_t timeout_ns);

/* The start time of pid in clock ticks since boot (/proc/PID/stat field 22), or 0. */
uint64_t data_counter_start_ticks(pid_t pid);

/* Enter pid in the member table (once per pid): its index, or -ENOSPC when it is full. */
int data_counter_join(struct agent_data_counter *c, pid_t pid);
/* Member index (of pid) obeyed the control word as of sequence seq. */
void data_counter_applied(struct agent_data_counter *c, int index, pid_t pid, uint32_t seq);
/*
 * Wait until every live member obeyed sequence seq, at most timeout_ns. Returns the number
 * of members that had not.
 */
int data_counter_wait_applied(struct agent_data_counter *c, uint32_t seq, int64_t timeout_ns);
/* Take pid out of the member table. */
void data_counter_leave(struct agent_data_counter *c, pid_t pid);
/*
 * The members still alive (pid running with the start time it entered with, here or, for a
 * process of a pid namespace below ours, as the pid it is there: NStgid); the entries of
 * processes gone (killed before they could leave) are cleared.
 */
int data_counter_members_alive(struct agent_data_counter *c);

/*
 * The collectors' hold on result directory dir's counter: every pcollect of a collection
 * holds it (a shared lock on the counter file) from the counter's making to its own end, so
 * that the kernel lets go of it when pcollect dies, even of SIGKILL. Returns the descriptor
 * that holds it (never to be closed but by the end of pcollect), or a negative errno.
 */
int data_counter_hold(const char *dir);
/*
 * True when no collector holds dir's counter any longer (data_counter_hold()): every pcollect
 * of the collection is gone. For an attached agent, whose collector must let the process go
 * and can no longer. False when one holds it, or when that cannot be known.
 */
bool data_counter_collectors_gone(const char *dir);

#endif
