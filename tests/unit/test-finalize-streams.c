/* SPDX-License-Identifier: MIT */
/* Unit tests of what finalize_run() makes of raw streams: counts, tree, coverage, damage, time. */
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/log.h"
#include "common/result-dir.h"
#include "finalizer/finalize.h"
#include "tests/unit/finalize-fixture.h"
#include "tests/unit/unit.h"

/*
 * Streams of known samples: counts, threads and the tree they share, CPU time coverage,
 * damaged and empty streams, the database replaced whole, the timeline.
 */

static void test_finalize_streams_counts_and_tree(void)
{
	char dir[PATH_MAX];
	struct stream_w a, b;
	uint64_t ips_b[1];
	int64_t ta = 0, tb = 0;
	sqlite3 *db;

	stream_start(&a, dir, sizeof(dir), 200, NULL, NULL, 0);
	stream_samples(&a, 1, 300, &ta);
	stream_close(&a);
	/* A second thread of the same process: its own stack ids, the module from thread 1. */
	stream_open(&b, dir, 200, 201);
	ips_b[0] = ra_outer;
	CU_ASSERT_FATAL(raw_writer_stack(&b.w, 1, 0, ips_b, 1) == 0);
	stream_inline_stack(&b, 2);
	stream_samples(&b, 1, 100, &tb);
	stream_samples(&b, 2, 50, &tb);
	CU_ASSERT_FATAL(raw_writer_thread_name(&b.w, 201, tb, "worker") == 0);
	stream_close(&b);
	db = finalize_open_db(dir, NULL, 0);
	CU_ASSERT(q_int(db, "SELECT COUNT(*) FROM processes") == 1);
	CU_ASSERT(q_int(db, "SELECT COUNT(*) FROM threads") == 2);
	CU_ASSERT(q_int(db, "SELECT samples FROM threads WHERE tid = 201") == 150);
	CU_ASSERT(q_int(db, "SELECT COUNT(*) FROM threads WHERE name = 'worker'") == 1);
	CU_ASSERT(q_int(db, "SELECT SUM(count) FROM samples") == 450);
	/* Both threads share the tree: the inline stack is one node path. */
	CU_ASSERT(q_int(db, "SELECT COUNT(DISTINCT stack_id) FROM samples") == 2);
	CU_ASSERT(q_int(db, "SELECT SUM(count) FROM samples s JOIN stacks st ON st.id ="
			    " s.stack_id JOIN frames fr ON fr.id = st.frame_id JOIN functions f"
			    " ON f.id = fr.function_id WHERE f.name = 'fin_inner'") == 350);
	/* Roots are depth 0 with no parent, and depth grows by one. */
	CU_ASSERT(q_int(db, "SELECT COUNT(*) FROM stacks c JOIN stacks p ON p.id = c.parent_id"
			    " WHERE c.depth != p.depth + 1") == 0);
	CU_ASSERT(q_int(db, "SELECT COUNT(*) FROM stacks WHERE parent_id IS NULL AND depth != 0") ==
		  0);
	CU_ASSERT(q_int(db, "SELECT MAX(time_ns) FROM timeline") > 0);
	sqlite3_close(db);
}

/* Runs a non-quiet finalize and returns what it printed on stderr (caller frees). */
static char *finalize_summary(const char *dir)
{
	const struct finalize_opts o = { .result_dir = dir, .jobs = 1 };
	char path[PATH_MAX + 16];
	char *text = NULL;
	int fd, saved;
	FILE *f;
	long n;

	snprintf(path, sizeof(path), "%s/summary.txt", dir);
	fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CU_ASSERT_FATAL(fd >= 0);
	fflush(stderr);
	saved = dup(STDERR_FILENO);
	dup2(fd, STDERR_FILENO);
	close(fd);
	CU_ASSERT(finalize_run(&o) == 0);
	fflush(stderr);
	dup2(saved, STDERR_FILENO);
	close(saved);
	f = fopen(path, "r");
	CU_ASSERT_FATAL(f != NULL);
	fseek(f, 0, SEEK_END);
	n = ftell(f);
	rewind(f);
	text = calloc(1, (size_t)n + 1);
	CU_ASSERT_FATAL(text != NULL);
	CU_ASSERT(fread(text, 1, (size_t)n, f) == (size_t)n);
	fclose(f);
	return text;
}

/*
 * Thread 200 used 1 s of CPU and its samples account for 0.3 s (30 of 10 ms); thread 201
 * used 0.5 s, 0.2 s sampled and 0.3 s in samples the agent counted as lost. The summary
 * gives 0.5 of 1.5 s sampled and names thread 200 only: lost samples have their own line.
 */
static void test_finalize_streams_cpu_coverage(void)
{
	char dir[PATH_MAX];
	struct stream_w a, b;
	int64_t ta = 0, tb = 0;
	char *text;

	stream_start(&a, dir, sizeof(dir), 200, NULL, NULL, 0);
	stream_samples(&a, 1, 30, &ta);
	CU_ASSERT_FATAL(raw_writer_thread_name(&a.w, 200, ta, "late") == 0);
	CU_ASSERT_FATAL(raw_writer_thread_end(&a.w, 200, ta + 1000, 1000000000) == 0);
	stream_close(&a);
	stream_open(&b, dir, 200, 201);
	stream_inline_stack(&b, 1);
	stream_samples(&b, 1, 20, &tb);
	CU_ASSERT_FATAL(raw_writer_lost(&b.w, tb, RAW_LOST_BUSY, 30, 30) == 0);
	CU_ASSERT_FATAL(raw_writer_thread_end(&b.w, 201, tb + 1000, 500000000) == 0);
	stream_close(&b);
	text = finalize_summary(dir);
	CU_ASSERT(strstr(text, "cpu time:  0.500 s sampled of 1.500 s the threads used (33.3%)") !=
		  NULL);
	CU_ASSERT(strstr(text, "undersampled: thread 200 'late': 0.300 s sampled of 1.000 s used; "
			       "timer signals came late") != NULL);
	CU_ASSERT(strstr(text, "thread 201") == NULL);
	if (!strstr(text, "undersampled: thread 200"))
		fprintf(stderr, "summary was:\n%s", text);
	free(text);
}

/*
 * Thread 300's process died of a signal: no THREAD_END, two looks of the control thread
 * (THREAD_CPU: 0.12 s after 10 samples, 0.25 s after 20), then 10 samples of 10 ms. Its CPU
 * time is the last look and the samples after it, 0.35 s, exact; thread 301 ended and keeps
 * its own figure; the summary says one thread's figure comes from a look.
 */
static void test_finalize_streams_cpu_looked(void)
{
	char dir[PATH_MAX];
	struct stream_w a, b;
	int64_t ta = 0, tb = 0;
	sqlite3 *db;
	char *text;

	stream_start(&a, dir, sizeof(dir), 300, NULL, NULL, 0);
	stream_samples(&a, 1, 10, &ta);
	CU_ASSERT_FATAL(raw_writer_thread_cpu(&a.w, 300, ta + 1000, 120000000) == 0);
	stream_samples(&a, 1, 10, &ta);
	CU_ASSERT_FATAL(raw_writer_thread_cpu(&a.w, 300, ta + 1000, 250000000) == 0);
	stream_samples(&a, 1, 10, &ta);
	stream_close(&a);
	stream_open(&b, dir, 300, 301);
	stream_inline_stack(&b, 1);
	stream_samples(&b, 1, 20, &tb);
	CU_ASSERT_FATAL(raw_writer_thread_cpu(&b.w, 301, tb, 150000000) == 0);
	CU_ASSERT_FATAL(raw_writer_thread_end(&b.w, 301, tb + 1000, 200000000) == 0);
	stream_close(&b);
	text = finalize_summary(dir);
	CU_ASSERT(strstr(text, "cpu time:  0.500 s sampled of 0.550 s the threads used") != NULL);
	CU_ASSERT(strstr(text, "cpu time:  1 threads whose process a signal ended") != NULL);
	if (!strstr(text, "1 threads whose process"))
		fprintf(stderr, "summary was:\n%s", text);
	free(text);
	db = db_open(dir);
	CU_ASSERT_FATAL(db != NULL);
	CU_ASSERT(q_int(db, "SELECT cpu_ns FROM threads WHERE tid = 300 AND end_ns IS NULL") ==
		  350000000);
	CU_ASSERT(q_int(db, "SELECT cpu_ns FROM threads WHERE tid = 301 AND end_ns IS NOT NULL") ==
		  200000000);
	sqlite3_close(db);
}

static void test_finalize_streams_damaged_stream(void)
{
	char dir[PATH_MAX], path[PATH_MAX];
	struct stream_w w;
	int64_t t = 0;
	sqlite3 *db;
	int fd;
	off_t size;

	stream_start(&w, dir, sizeof(dir), 600, NULL, NULL, 0);
	stream_samples(&w, 1, 40, &t);
	CU_ASSERT(raw_writer_flush(&w.w) == 0);
	stream_samples(&w, 1, 60, &t);
	stream_close(&w);
	/* Cut the second chunk in its middle, as a SIGKILL during write(2) would. */
	result_path(path, sizeof(path), dir, RESULT_PATH_RAW, 600, 600, NULL, NULL);
	fd = open(path, O_RDWR);
	size = lseek(fd, 0, SEEK_END);
	CU_ASSERT(ftruncate(fd, size - 30) == 0);
	close(fd);
	/* And a file that is not a stream at all. */
	result_path(path, sizeof(path), dir, RESULT_PATH_RAW, 600, 601, NULL, NULL);
	fd = open(path, O_WRONLY | O_CREAT, 0644);
	CU_ASSERT(write(fd, "garbage", 7) == 7);
	close(fd);
	db = finalize_open_db(dir, NULL, 0);
	CU_ASSERT(q_int(db, "SELECT SUM(count) FROM samples") == 40);
	CU_ASSERT(q_int(db, "SELECT COUNT(*) FROM streams") == 2);
	CU_ASSERT(q_int(db, "SELECT chunks_damaged FROM streams WHERE process_id IS NOT NULL") ==
		  1);
	CU_ASSERT(q_int(db, "SELECT bytes_skipped FROM streams WHERE process_id IS NOT NULL") > 0);
	CU_ASSERT(q_int(db, "SELECT COUNT(*) FROM streams WHERE problem IS NOT NULL") == 2);
	sqlite3_close(db);
}

static void test_finalize_streams_empty_and_errors(void)
{
	char dir[PATH_MAX], path[PATH_MAX];
	struct stream_w w;
	struct stat st1, st2;
	sqlite3 *db;

	/* A stream with a header only: a valid database with zero samples. */
	make_result(dir, sizeof(dir));
	stream_open(&w, dir, 700, 700);
	stream_close(&w);
	db = finalize_open_db(dir, NULL, 0);
	CU_ASSERT(q_int(db, "SELECT COUNT(*) FROM samples") == 0);
	CU_ASSERT(q_int(db, "SELECT value FROM meta WHERE key = 'samples_total'") == 0);
	CU_ASSERT(q_int(db, "SELECT COUNT(*) FROM threads") == 1);
	sqlite3_close(db);
	/* Finalizing again replaces the database by a new file (rename), leaving no temporary. */
	result_path(path, sizeof(path), dir, RESULT_PATH_DB, 0, 0, NULL, NULL);
	CU_ASSERT(stat(path, &st1) == 0);
	CU_ASSERT_FATAL(finalize_dir(dir, NULL, 0) == 0);
	CU_ASSERT(stat(path, &st2) == 0);
	CU_ASSERT(st1.st_ino != st2.st_ino);
	result_path(path, sizeof(path), dir, RESULT_PATH_DB_TMP, getpid(), 0, NULL, NULL);
	CU_ASSERT(access(path, F_OK) != 0);
	/* No streams at all: an error, and the good database stays. */
	result_path(path, sizeof(path), dir, RESULT_PATH_RAW, 700, 700, NULL, NULL);
	CU_ASSERT(unlink(path) == 0);
	CU_ASSERT(finalize_dir(dir, NULL, 0) == -ENODATA);
	result_path(path, sizeof(path), dir, RESULT_PATH_DB, 0, 0, NULL, NULL);
	CU_ASSERT(stat(path, &st1) == 0 && st1.st_ino == st2.st_ino);
	/* Not a result directory at all. */
	snprintf(path, sizeof(path), "%s/not-a-result", tmp_root);
	mkdir(path, 0755);
	CU_ASSERT(finalize_dir(path, NULL, 0) == -ERR_USAGE);
	CU_ASSERT(finalize_dir("/nonexistent/result", NULL, 0) == -ERR_USAGE);
}

static void test_finalize_streams_timeline(void)
{
	char dir[PATH_MAX], *s;
	struct stream_w a, b;
	sqlite3 *db;
	sqlite3_stmt *st;
	int scans = 0;

	stream_start(&a, dir, sizeof(dir), 900, NULL, NULL, 0);
	/* Out of order, and twice the same nanosecond: only a damaged stream does that. */
	CU_ASSERT_FATAL(raw_writer_sample(&a.w, 10000000, 1, 1) == 0);
	CU_ASSERT_FATAL(raw_writer_sample(&a.w, 20000000, 1, 1) == 0);
	CU_ASSERT_FATAL(raw_writer_sample(&a.w, 20000000, 1, 3) == 0);
	CU_ASSERT_FATAL(raw_writer_sample(&a.w, 15000000, 1, 1) == 0);
	CU_ASSERT_FATAL(raw_writer_sample(&a.w, 30000000, 1, 1) == 0);
	stream_close(&a);
	/* Another thread sampled at the very same times. */
	stream_open(&b, dir, 900, 901);
	stream_inline_stack(&b, 5);
	CU_ASSERT_FATAL(raw_writer_sample(&b.w, 10000000, 5, 1) == 0);
	CU_ASSERT_FATAL(raw_writer_sample(&b.w, 20000000, 5, 2) == 0);
	stream_close(&b);
	db = finalize_open_db(dir, NULL, 0);
	CU_ASSERT(q_int(db, "SELECT COUNT(*) FROM timeline") == 7);
	/* A CPU sample's value is its weight in sampling intervals, in ns. */
	CU_ASSERT(q_int(db, "SELECT SUM(value) / (SELECT value FROM meta WHERE key ="
			    " 'interval_ns') FROM timeline") == 10);
	/* Every sample kept, in time order, the repeated one a nanosecond later (times from
	   the thread's first sample: each stream has its own origin). */
	s = q_str(db, "WITH t AS (SELECT time_ns, value / (SELECT value FROM meta WHERE key ="
		      " 'interval_ns') AS weight FROM timeline WHERE thread_id ="
		      " (SELECT id FROM threads WHERE tid = 900)) SELECT group_concat(x) FROM"
		      " (SELECT (time_ns - (SELECT MIN(time_ns) FROM t)) || '/' || weight AS x"
		      " FROM t ORDER BY time_ns)");
	CU_ASSERT(s && !strcmp(s, "0/1,5000000/1,10000000/1,10000001/3,20000000/1"));
	free(s);
	CU_ASSERT(q_int(db, "SELECT MAX(time_ns) - MIN(time_ns) FROM timeline WHERE thread_id ="
			    " (SELECT id FROM threads WHERE tid = 901)") == 10000000);
	/* The timeline aggregates to the samples table exactly, metric by metric. */
	CU_ASSERT(q_int(db, "SELECT COUNT(*) FROM (SELECT metric_id, thread_id, stack_id,"
			    " COUNT(*), SUM(value) FROM timeline GROUP BY 1, 2, 3 EXCEPT SELECT"
			    " metric_id, thread_id, stack_id, count, value FROM samples)") == 0);
	CU_ASSERT(q_int(db, "SELECT COUNT(*) FROM (SELECT metric_id, thread_id, stack_id, count,"
			    " value FROM samples EXCEPT SELECT metric_id, thread_id, stack_id,"
			    " COUNT(*), SUM(value) FROM timeline GROUP BY 1, 2, 3)") == 0);
	/* One metric, CPU Time, the main one, and every sample row is of it. */
	CU_ASSERT(q_int(db, "SELECT COUNT(*) FROM metrics WHERE name = 'CPU Time' AND unit = 'ns'"
			    " AND aggregation = 'sum' AND kind = 'cpu' AND main = 1") == 1);
	CU_ASSERT(q_int(db, "SELECT COUNT(*) FROM samples WHERE metric_id NOT IN (SELECT id FROM"
			    " metrics WHERE name = 'CPU Time')") == 0);
	CU_ASSERT(q_int(db, "SELECT value FROM meta WHERE key = 'schema_version'") == 2);
	/* A time range is a range of the table's key, not a scan of every sample. */
	CU_ASSERT_FATAL(sqlite3_prepare_v2(db,
					   "EXPLAIN QUERY PLAN SELECT thread_id, stack_id,"
					   " COUNT(*) FROM timeline WHERE time_ns >= 1 AND"
					   " time_ns < 2 GROUP BY 1, 2",
					   -1, &st, NULL) == SQLITE_OK);
	while (sqlite3_step(st) == SQLITE_ROW)
		if (!strncmp((const char *)sqlite3_column_text(st, 3), "SCAN timeline", 13))
			scans++;
	sqlite3_finalize(st);
	CU_ASSERT(scans == 0);
	sqlite3_close(db);
}

/*
 * Waits in progress (WAIT_OPEN): one its WAIT ends is counted once, by the WAIT; one left open
 * lasted until the program's end as pcollect saw it (meta end_monotonic_ns, 2 s here), told
 * twice it is counted once; one whose last WAIT_OPEN is older than its period (a second) and
 * the control thread's poll (0.1 s) ends there (its process was killed earlier).
 */
static void test_finalize_streams_open_waits(void)
{
	char dir[PATH_MAX], path[PATH_MAX];
	struct stream_w a;
	sqlite3 *db;
	FILE *m;

	stream_start(&a, dir, sizeof(dir), 910, NULL, NULL, 0);
	stream_samples(&a, 1, 2, &(int64_t){ 0 });
	CU_ASSERT_FATAL(raw_writer_wait_open(&a.w, 100000000, 1, RAW_WAIT_SLEEP, 0, 300000000) ==
			0);
	CU_ASSERT_FATAL(raw_writer_wait(&a.w, 100000000, 1, 500000000, RAW_WAIT_SLEEP, 0) == 0);
	CU_ASSERT_FATAL(raw_writer_wait_open(&a.w, 1000000000, 1, RAW_WAIT_READ, 3, 1200000000) ==
			0);
	CU_ASSERT_FATAL(raw_writer_wait_open(&a.w, 1000000000, 1, RAW_WAIT_READ, 3, 1500000000) ==
			0);
	CU_ASSERT_FATAL(raw_writer_wait_open(&a.w, 200000000, 1, RAW_WAIT_POLL, 4, 400000000) == 0);
	stream_close(&a);
	result_path(path, sizeof(path), dir, RESULT_PATH_META, 910, 0, NULL, NULL);
	m = fopen(path, "a");
	CU_ASSERT_FATAL(m != NULL);
	fprintf(m, "end_monotonic_ns=%llu\n", (unsigned long long)a.h.origin_ns + 2000000000ull);
	fclose(m);
	db = finalize_open_db(dir, NULL, 0);
	CU_ASSERT(q_int(db, "SELECT SUM(value) FROM samples WHERE metric_id = (SELECT id FROM"
			    " metrics WHERE name = 'Wait Time')") == 2800000000ll);
	CU_ASSERT(q_int(db, "SELECT SUM(value) FROM samples WHERE metric_id = (SELECT id FROM"
			    " metrics WHERE name = 'Wait Count')") == 3);
	sqlite3_close(db);
}

UNIT_MAIN("finalize-streams", finalize_fixture_init, finalize_fixture_clean,
	  {
		  { "counts and tree", test_finalize_streams_counts_and_tree },
		  { "cpu coverage", test_finalize_streams_cpu_coverage },
		  { "cpu looked", test_finalize_streams_cpu_looked },
		  { "damaged stream", test_finalize_streams_damaged_stream },
		  { "empty and errors", test_finalize_streams_empty_and_errors },
		  { "timeline", test_finalize_streams_timeline },
		  { "open waits", test_finalize_streams_open_waits },
	  })
