/* SPDX-License-Identifier: MIT */
/* The raw-data counter all processes of a collection share, for -data-limit. */
#ifndef PCOLLECT_COLLECTOR_DATA_COUNTER_H
#define PCOLLECT_COLLECTOR_DATA_COUNTER_H

#include <stddef.h>

#include "collector/agent-env.h"

/*
 * The counter is a small file, DIR/log/.data-used, that the launcher creates and every agent
 * maps shared; processes add the bytes they write with atomic adds, so the limit holds for
 * the whole process tree without any message passing.
 */

/* The counter file's path in result directory dir. Returns 0 or -ENAMETOOLONG. */
int data_counter_path(char *buf, size_t size, const char *dir);

/*
 * Create (launcher, create = 1: its blocks reserved) or open it, and map it. Returns the
 * mapping, or NULL with errno set (a file shorter than the counter: ENOSPC).
 */
struct agent_data_counter *data_counter_map(const char *dir, int create);

#endif
