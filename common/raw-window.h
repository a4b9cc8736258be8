/* SPDX-License-Identifier: MIT */
/* A stream file written through MAP_SHARED windows (the agent's sink): no descriptor kept. */
#ifndef PCOLLECT_COMMON_RAW_WINDOW_H
#define PCOLLECT_COMMON_RAW_WINDOW_H

#include <limits.h>
#include <signal.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/types.h>

/*
 * The mapped writer (raw_writer_init_mapped) gets its windows from raw_window_next(). Each
 * window is reserved on disk before it is mapped (fallocate, or zeros written where the file
 * system has no fallocate), so a store into it never meets a full disk (no SIGBUS); no window
 * reaches past RLIMIT_FSIZE (the kernel would send SIGXFSZ): there raw_window_next() fails
 * with -EFBIG. A descriptor is open only inside each call; when the program has used all of
 * RLIMIT_NOFILE the soft limit is raised for that moment if the hard limit allows.
 * Everything here is async-signal-safe. A file is created, mapped window by window, then cut
 * to the length the writer used: the tail of the last window is zeros until then (a reader
 * skips them as padding).
 */
struct raw_window_file {
	char path[PATH_MAX];
	size_t window; /* bytes of a window, page aligned */
	uint8_t *map;  /* the current window, or NULL */
	size_t map_size;
	uint64_t map_off;     /* file offset of map */
	int error;            /* errno of the last failure */
	const char *error_op; /* what failed: "create", "open", "reserve", "map", "truncate" */
};

/*
 * open() for a moment's use that works even when the program has used all of RLIMIT_NOFILE:
 * the soft limit is raised for the open when the hard limit allows (by one, or more while
 * other borrowers hold the numbers above it; at most RAW_WINDOW_BORROW_MAX), so the number is
 * one the program cannot have, then put back. Borrowers take turns (raw_window_limit_lock).
 * Returns the descriptor, or -1 with errno set. The limit is process-wide: another thread
 * that opens a file in that moment may get a number above the limit too (a program at its
 * limit would see one open succeed that would have failed).
 */
#define RAW_WINDOW_BORROW_MAX 64
int raw_window_open(const char *path, int flags, mode_t mode);

/*
 * Whoever raises the soft RLIMIT_NOFILE for a moment holds this lock meanwhile (with every
 * signal blocked: old receives the mask to give back to the unlock). Async-signal-safe.
 */
void raw_window_limit_lock(sigset_t *old);
void raw_window_limit_unlock(const sigset_t *old);

/*
 * Reserve the disk blocks of [off, off + len) of fd (fallocate, or zeros written where the
 * file system has none): a store into a MAP_SHARED mapping of them then cannot fail. Without
 * it, the first store into a page of a full file system is a SIGBUS. 0 or -errno.
 */
int raw_window_reserve(int fd, uint64_t off, uint64_t len);

/* Create the file (O_EXCL, mode exactly, whatever the umask); no window yet. 0 or -errno. */
int raw_window_create(struct raw_window_file *f, const char *path, mode_t mode, size_t window);

/* The raw_window_fn of a mapped writer; ctx is the struct raw_window_file. */
int raw_window_next(void *ctx, uint64_t off, size_t min, uint8_t **base, size_t *size);

/*
 * Cut the file to size bytes, keeping the window mapped (an exec that may fail: the pages past
 * size must not be touched until raw_window_regrow() reserves them again). 0 or -errno.
 */
int raw_window_cut(struct raw_window_file *f, uint64_t size);
int raw_window_regrow(struct raw_window_file *f);

/* Unmap the window and cut the file to size bytes: the stream is finished. 0 or -errno. */
int raw_window_close(struct raw_window_file *f, uint64_t size);

/* Unmap without touching the file: a fork child lets go of its parent's windows. */
void raw_window_drop(struct raw_window_file *f);

#endif
