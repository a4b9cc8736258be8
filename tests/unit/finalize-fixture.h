/* SPDX-License-Identifier: MIT */
/* What the finalizer's unit tests share: known code, raw streams that sample it, their result. */
#ifndef PCOLLECT_TESTS_UNIT_FINALIZE_FIXTURE_H
#define PCOLLECT_TESTS_UNIT_FINALIZE_FIXTURE_H

#include <limits.h>
#include <sqlite3.h>
#include <stddef.h>
#include <stdint.h>

#include "common/raw-stream.h"

/*
 * Known code: take_addresses() calls fin_outer() at test_call_line, which calls the inlined
 * fin_inner() at outer_call_line, which takes a return address at inner_call_line. ra_inner
 * and ra_outer are the return addresses inside fin_inner and fin_outer's own.
 */
extern int inner_call_line, outer_call_line, test_call_line;
extern uintptr_t ra_inner, ra_outer;

/* This binary as a module record: its path, load base, build-id and PT_LOAD segments. */
extern char self_path[PATH_MAX];
extern uint64_t self_base;
extern uint8_t self_build_id[64];
extern uint32_t self_build_id_len;
extern struct raw_segment self_segs[16];
extern uint32_t self_nsegs;

/* The suite's work directory: results, copies of binaries, the symbol cache. */
extern char tmp_root[256];

/*
 * unit_run()'s init: the known code run, this binary found, the work directory made, the
 * symbol cache off. The clean removes the work directory unless a check failed (then it says
 * where it is).
 */
int finalize_fixture_init(void);
int finalize_fixture_clean(void);

/* A raw stream being written, and its meta file. */
struct stream_w {
	int fd;
	struct raw_writer w;
	struct raw_file_header h;
	uint8_t buf[1 << 16];
};

/* Makes a new, empty result directory under tmp_root; its path in dir. */
void make_result(char *dir, size_t size);
/* Starts pid.tid's raw stream in dir (10 ms thread CPU samples) and pid's meta file. */
void stream_open(struct stream_w *s, const char *dir, int pid, int tid);
/*
 * Makes a result (its path in dir) and starts the stream of its thread pid.pid in s: this
 * binary loaded as module (NULL: its own path) with build-id bid (NULL: its own), the inline
 * chain as stack 1. The caller adds samples and closes s.
 */
void stream_start(struct stream_w *s, char *dir, size_t size, int pid, const char *module,
		  const uint8_t *bid, uint32_t bid_len);
/* Records this binary loaded at self_base under path, with build-id bid. */
void stream_module(struct stream_w *s, const char *path, const uint8_t *bid, uint32_t bid_len);
/* Records stack id as the inline chain: ra_inner, then ra_outer. */
void stream_inline_stack(struct stream_w *s, uint64_t id);
/* Records n samples of stack, 10 ms apart after *t, one interval each; *t moves on. */
void stream_samples(struct stream_w *s, uint64_t stack, int n, int64_t *t);
void stream_close(struct stream_w *s);

/* finalize_run() on dir, quietly, with the search directories and -j jobs (finalize_dir: 2). */
int finalize_jobs(const char *dir, const char *const *search, size_t nsearch, int jobs);
int finalize_dir(const char *dir, const char *const *search, size_t nsearch);
/* finalize_dir(), which must succeed, and the database it wrote (db_open()). */
sqlite3 *finalize_open_db(const char *dir, const char *const *search, size_t nsearch);

/* dir's result.db, read-only. */
sqlite3 *db_open(const char *dir);
/* The first column of the first row of sql: an integer (-1 for none or NULL), a new string
   (NULL for none; caller frees). A failed query fails the test. */
long long q_int(sqlite3 *db, const char *sql);
char *q_str(sqlite3 *db, const char *sql);
/* The frames of the most sampled stack matching where (a WHERE clause on samples, or ""), from
   the leaf up: "name@inline_depth:line <- ..."; caller frees. */
char *leaf_chain(sqlite3 *db, const char *where);

#endif
