/* SPDX-License-Identifier: MIT */
/* Writing a whole buffer to a descriptor, the one loop for it (the agent uses it too). */
#ifndef PCOLLECT_COMMON_IO_H
#define PCOLLECT_COMMON_IO_H

#include <stddef.h>

/*
 * write(2) all len bytes of data to fd, across EINTR and short writes. Returns 0, or a
 * negative errno (-EIO when write() returns 0): what was written before the error stays
 * written. Async-signal-safe; errno may change.
 */
int io_write_all(int fd, const void *data, size_t len);

#endif
