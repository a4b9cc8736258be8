/* SPDX-License-Identifier: MIT */
/* Unit tests of preport's model: the id maps, and result.db read through the tables' descriptions.
 */
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include <sqlite3.h>

#include "report/idmap.h"
#include "report/model.h"
#include "tests/unit/unit.h"

/* ids[0..n) into a map, then every one found at its row and a few others not at all. */
static void check_map(const int64_t *ids, size_t n, bool direct)
{
	struct idmap map = { 0 };
	size_t i;

	CU_ASSERT_EQUAL_FATAL(idmap_alloc(&map, n), 0);
	for (i = 0; i < n; i++)
		idmap_set(&map, i, ids[i]);
	CU_ASSERT_EQUAL_FATAL(idmap_finish(&map, n), 0);
	CU_ASSERT_EQUAL(map.direct != NULL, direct);
	for (i = 0; i < n; i++)
		CU_ASSERT_EQUAL(idmap_find(&map, ids[i]), (int)i);
	CU_ASSERT_EQUAL(idmap_find(&map, -7), -1);
	CU_ASSERT_EQUAL(idmap_find(&map, 4000000001LL), -1);
	CU_ASSERT_EQUAL(idmap_find(&map, INT64_MIN), -1);
	idmap_release(&map);
}

/* Dense ids store nothing; sparse ones a table, close ones a direct array, any order. */
static void test_report_model_idmap(void)
{
	static const int64_t dense[] = { 5, 6, 7, 8, 9 };
	static const int64_t close[] = { 1, 3, 7, 8, 200 };
	static const int64_t far[] = { 1, 1000000000, 2000000000, 3000000000LL };
	static const int64_t shuffled[] = { 3, 1, 2 };                      /* display order */
	static const int64_t shuffled_far[] = { 3000000000LL, 1, 9000000 }; /* a scan */
	struct idmap map = { 0 };

	check_map(dense, 5, false);
	check_map(close, 5, true);
	check_map(far, 4, false);
	check_map(shuffled, 3, true);
	check_map(shuffled_far, 3, false);
	CU_ASSERT_EQUAL(idmap_find(&map, 0), -1); /* zeroed: no row */
}

static char dir[] = "/tmp/test-report-model.XXXXXX";
static char path[PATH_MAX];

/* A database at path made of sql. */
static void make_db(const char *sql)
{
	sqlite3 *db;
	char *err = NULL;

	unlink(path);
	CU_ASSERT_EQUAL_FATAL(sqlite3_open(path, &db), SQLITE_OK);
	if (sqlite3_exec(db, sql, NULL, NULL, &err) != SQLITE_OK)
		fprintf(stderr, "%s\n", err);
	CU_ASSERT_PTR_NULL(err);
	sqlite3_free(err);
	sqlite3_close(db);
}

/*
 * Schema 2 as an early pfinalize wrote it: no modules.role, functions.kind, or MPI and region
 * columns in contexts (each reads as NULL), metrics shown in an order of their own (their ids
 * out of order).
 */
static const char schema2[] =
	"CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT);"
	"INSERT INTO meta VALUES ('schema_version', '2'), ('interval_ns', '1000000'),"
	" ('broken', NULL);"
	"CREATE TABLE metrics (id INTEGER PRIMARY KEY, name TEXT, unit TEXT, aggregation TEXT,"
	" kind TEXT, description TEXT, main INTEGER, display_order INTEGER);"
	"INSERT INTO metrics VALUES (7, 'Wait Time', 'ns', 'sum', 'wait', NULL, 0, 2),"
	" (8, 'CPU Time', 'ns', 'sum', 'cpu', 'cpu', 1, 1), (9, 'Peak Bytes', 'bytes', 'peak',"
	" 'alloc', NULL, 0, 3), (11, NULL, 'ns', 'sum', 'cpu', NULL, 0, 4);"
	"CREATE TABLE modules (id INTEGER PRIMARY KEY, name TEXT, path TEXT, status TEXT,"
	" symbols TEXT);"
	"INSERT INTO modules VALUES (1, 'app', '/bin/app', 'ok', 'symtab'),"
	" (2, NULL, '/lib/libm.so.6', 'ok', NULL), (5, NULL, NULL, 'missing', NULL);"
	"CREATE TABLE source_files (id INTEGER PRIMARY KEY, path TEXT);"
	"INSERT INTO source_files VALUES (4, 'app.c');"
	"CREATE TABLE functions (id INTEGER PRIMARY KEY, name TEXT, module_id INTEGER,"
	" source_file_id INTEGER, line INTEGER, resolved INTEGER, language TEXT);"
	"INSERT INTO functions VALUES (1, 'main', 1, 4, 10, 1, 'c'), (2, NULL, 2, NULL, NULL,"
	" NULL, 'c'), (3, 'step', NULL, NULL, 3, 0, 'python');"
	"CREATE TABLE processes (id INTEGER PRIMARY KEY, pid INTEGER, exe TEXT, command_line TEXT,"
	" host TEXT, rank INTEGER);"
	"INSERT INTO processes VALUES (1, 100, NULL, 'app 1', 'nodeA', NULL),"
	" (2, 101, '/bin/app', 'app 2', 'nodeB', 3);"
	"CREATE TABLE threads (id INTEGER PRIMARY KEY, process_id INTEGER, tid INTEGER,"
	" name TEXT, cpu_ns INTEGER, start_ns INTEGER, end_ns INTEGER);"
	"INSERT INTO threads VALUES (1, 2, 101, NULL, 5, NULL, 9), (2, 9, 102, 'w', 0, 1, NULL);"
	"CREATE TABLE contexts (id INTEGER PRIMARY KEY, wait_kind TEXT, object INTEGER,"
	" object_type TEXT, object_name TEXT);"
	"INSERT INTO contexts VALUES (1, 'mutex', 4096, 'mutex', 'lock_a'),"
	" (2, 'sleep', 0, NULL, NULL);"
	"CREATE TABLE frames (id INTEGER PRIMARY KEY, function_id INTEGER, module_id INTEGER,"
	" inline_depth INTEGER, source_file_id INTEGER, line INTEGER);"
	"INSERT INTO frames VALUES (10, 1, NULL, NULL, 4, 12), (11, 2, 2, 1, NULL, NULL),"
	" (12, 99, 1, 0, NULL, NULL), (13, 3, NULL, 0, 4, 3);"
	"CREATE TABLE stacks (id INTEGER PRIMARY KEY, parent_id INTEGER, frame_id INTEGER);"
	"INSERT INTO stacks VALUES (20, 22, 11), (21, NULL, 12), (22, NULL, 10), (23, 20, 13);"
	"CREATE TABLE samples (thread_id INTEGER, stack_id INTEGER, metric_id INTEGER,"
	" context_id INTEGER, count INTEGER, value INTEGER);"
	"INSERT INTO samples VALUES (1, 20, 8, 0, 2, 2000), (2, 23, 7, 1, 1, 500),"
	" (1, NULL, 8, 0, 1, 1), (1, 21, 8, 0, 1, 1), (1, 22, 42, 0, 1, 1), (NULL, 22, 7, 2, 1, 7);";

/* Every column lands in its field; NULLs read as their defaults; rows that cannot be shown go. */
static void test_report_model_round_trip(void)
{
	struct model m;
	char err[1024] = "";
	int rc;

	make_db(schema2);
	rc = model_load(&m, path, MODEL_FRAME_LINES, err, sizeof(err));
	CU_ASSERT_EQUAL_FATAL(rc, 0);
	CU_ASSERT_EQUAL(m.schema_version, 2);
	CU_ASSERT_EQUAL(m.interval_ns, 1000000);
	CU_ASSERT_EQUAL(m.nmeta, 2); /* a NULL value cannot be read */
	/* In display order, the metric without a name left out. */
	CU_ASSERT_EQUAL_FATAL(m.nmetrics, 3);
	CU_ASSERT_STRING_EQUAL(m.metrics[0].name, "CPU Time");
	CU_ASSERT(m.metrics[0].main && m.metrics[0].unit == MODEL_UNIT_NS);
	CU_ASSERT_STRING_EQUAL(m.metrics[2].name, "Peak Bytes");
	CU_ASSERT(m.metrics[2].unit == MODEL_UNIT_BYTES &&
		  m.metrics[2].aggregation == MODEL_AGG_PEAK);
	CU_ASSERT_EQUAL(model_metric(&m, METRIC_WAIT_TIME), 1);
	/* A module without a name is its path, without either [unknown]; no role: no interpreter.
	 */
	CU_ASSERT_EQUAL_FATAL(m.nmodules, 3);
	CU_ASSERT_STRING_EQUAL(m.modules[1].name, "/lib/libm.so.6");
	CU_ASSERT_STRING_EQUAL(m.modules[2].name, "[unknown]");
	CU_ASSERT(!m.modules[0].interpreter);
	CU_ASSERT_EQUAL_FATAL(m.nfunctions, 3);
	CU_ASSERT(m.functions[0].module == 0 && m.functions[0].file == 0 &&
		  m.functions[0].line == 10 && m.functions[0].resolved);
	CU_ASSERT_STRING_EQUAL(m.functions[1].name, "[unknown]");
	CU_ASSERT(m.functions[1].resolved); /* NULL: resolved */
	CU_ASSERT(m.functions[1].file == -1 && !m.functions[1].range);
	CU_ASSERT(m.functions[2].python && !m.functions[2].resolved && m.functions[2].module == -1);
	/* Processes, threads: NULL rank -1, no exe [unknown], unknown process -1, times -1. */
	CU_ASSERT_EQUAL_FATAL(m.nprocesses, 2);
	CU_ASSERT(m.processes[0].rank == -1 && m.processes[1].rank == 3);
	CU_ASSERT_STRING_EQUAL(m.processes[0].exe, "[unknown]");
	CU_ASSERT(m.nnodes == 2 && m.processes[1].node == 1);
	CU_ASSERT_EQUAL_FATAL(m.nthreads, 2);
	CU_ASSERT(m.threads[0].process == 1 && m.threads[0].start_ns == -1 &&
		  m.threads[0].end_ns == 9);
	CU_ASSERT_STRING_EQUAL(m.threads[0].name, "");
	CU_ASSERT(m.threads[1].process == -1 && m.threads[1].end_ns == -1);
	/* Contexts without MPI or region columns read as none. */
	CU_ASSERT_EQUAL_FATAL(m.ncontexts, 2);
	CU_ASSERT(!m.contexts[0].mpi_function && !m.contexts[0].region &&
		  m.contexts[0].region_index == -1 && m.contexts[0].comm_size == 0);
	CU_ASSERT(m.nwait_kinds == 2 && m.nsync_objects == 2);
	/* The frame of an unknown function goes; a frame without a module has its function's. */
	CU_ASSERT_EQUAL_FATAL(m.nframes, 3);
	CU_ASSERT(m.frames[0].function == 0 && m.frames[0].module == 0 && m.frames[0].file == 0 &&
		  m.frames[0].line == 12 && m.frames[0].inline_depth == 0);
	CU_ASSERT(m.frames[1].inline_depth == 1 && m.frames[1].file == -1);
	CU_ASSERT(m.frames[2].function == 2 && m.frames[2].module == -1);
	/* The stack of the frame that went goes too; parents found after their children. */
	CU_ASSERT_EQUAL_FATAL(m.nstacks, 3);
	CU_ASSERT(m.stacks[0].parent == 1 && m.stacks[1].parent == -1 && m.stacks[2].parent == 0);
	CU_ASSERT(m.stack_order[0] == 1);
	/* Samples without a stack, of a stack that went, of no declared metric: gone. */
	CU_ASSERT_EQUAL_FATAL(m.nsamples, 3);
	CU_ASSERT(m.samples[0].thread == 0 && m.samples[0].stack == 0 && m.samples[0].metric == 0 &&
		  m.samples[0].context == -1 && m.samples[0].count == 2 &&
		  m.samples[0].value == 2000);
	CU_ASSERT(m.samples[1].stack == 2 && m.samples[1].metric == 1 && m.samples[1].context == 0);
	CU_ASSERT(m.samples[2].thread == -1 && m.samples[2].context == 1);
	model_free(&m);

	/* Without MODEL_FRAME_LINES the positions are not read. */
	CU_ASSERT_EQUAL_FATAL(model_load(&m, path, 0, err, sizeof(err)), 0);
	CU_ASSERT(m.frames[0].file == -1 && m.frames[0].line == 0);
	model_free(&m);
}

/* Schema 1: CPU Time alone, from samples.time_ns and the timeline's weights. */
static const char schema1[] =
	"CREATE TABLE meta (key TEXT PRIMARY KEY, value TEXT);"
	"INSERT INTO meta VALUES ('interval_ns', '10');"
	"CREATE TABLE modules (id INTEGER PRIMARY KEY, name TEXT, path TEXT, status TEXT,"
	" symbols TEXT);"
	"CREATE TABLE source_files (id INTEGER PRIMARY KEY, path TEXT);"
	"CREATE TABLE functions (id INTEGER PRIMARY KEY, name TEXT, module_id INTEGER,"
	" source_file_id INTEGER, line INTEGER, resolved INTEGER, language TEXT);"
	"INSERT INTO functions VALUES (1, 'main', NULL, NULL, 0, 1, 'c');"
	"CREATE TABLE processes (id INTEGER PRIMARY KEY, pid INTEGER, exe TEXT, command_line TEXT,"
	" host TEXT, rank INTEGER);"
	"CREATE TABLE threads (id INTEGER PRIMARY KEY, process_id INTEGER, tid INTEGER,"
	" name TEXT, cpu_ns INTEGER, start_ns INTEGER, end_ns INTEGER);"
	"INSERT INTO threads VALUES (1, NULL, 7, 't', 0, 0, 0);"
	"CREATE TABLE frames (id INTEGER PRIMARY KEY, function_id INTEGER, module_id INTEGER,"
	" inline_depth INTEGER, source_file_id INTEGER, line INTEGER);"
	"INSERT INTO frames VALUES (1, 1, NULL, 0, NULL, 0);"
	"CREATE TABLE stacks (id INTEGER PRIMARY KEY, parent_id INTEGER, frame_id INTEGER);"
	"INSERT INTO stacks VALUES (1, NULL, 1);"
	"CREATE TABLE samples (thread_id INTEGER, stack_id INTEGER, count INTEGER,"
	" weight INTEGER, time_ns INTEGER);"
	"INSERT INTO samples VALUES (1, 1, 3, 3, 30);"
	"CREATE TABLE timeline (time_ns INTEGER, thread_id INTEGER, stack_id INTEGER,"
	" weight INTEGER);"
	"INSERT INTO timeline VALUES (5, 1, 1, 1), (15, 1, 1, 2), (25, 1, 1, 1);";

static void test_report_model_schema1(void)
{
	struct model m;
	struct model_event *ev;
	char err[1024] = "";
	size_t n;

	make_db(schema1);
	CU_ASSERT_EQUAL_FATAL(model_load(&m, path, 0, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL(m.schema_version, 1);
	CU_ASSERT_EQUAL_FATAL(m.nmetrics, 1);
	CU_ASSERT_STRING_EQUAL(m.metrics[0].name, metric_name(METRIC_CPU_TIME));
	CU_ASSERT_EQUAL_FATAL(m.nsamples, 1);
	CU_ASSERT(m.samples[0].metric == 0 && m.samples[0].value == 30 && m.samples[0].count == 3 &&
		  m.samples[0].context == -1);
	/* The timeline's weights are sampling intervals. */
	CU_ASSERT_EQUAL_FATAL(model_load_events(&m, 10, 30, &ev, &n, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL_FATAL(n, 2);
	CU_ASSERT(ev[0].time_ns == 15 && ev[0].value == 20 && ev[1].value == 10 &&
		  ev[0].metric == 0);
	free(ev);
	CU_ASSERT_EQUAL_FATAL(model_load_time_range(&m, 0, 20, NULL, err, sizeof(err)), 0);
	CU_ASSERT_EQUAL_FATAL(m.nsamples, 1);
	CU_ASSERT(m.samples[0].count == 2 && m.samples[0].value == 30);
	model_free(&m);
}

/* A database whose metrics table is empty, or too new, is refused with its reason. */
static void test_report_model_refused(void)
{
	struct model m;
	char err[1024] = "";

	make_db("CREATE TABLE meta (key TEXT, value TEXT);"
		"INSERT INTO meta VALUES ('schema_version', '2');"
		"CREATE TABLE metrics (id INTEGER PRIMARY KEY, name TEXT, unit TEXT,"
		" aggregation TEXT, kind TEXT, description TEXT, main INTEGER,"
		" display_order INTEGER);");
	CU_ASSERT_EQUAL(model_load(&m, path, 0, err, sizeof(err)), -EIO);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "declares no metric"));
	make_db("CREATE TABLE meta (key TEXT, value TEXT);"
		"INSERT INTO meta VALUES ('schema_version', '3');");
	CU_ASSERT_EQUAL(model_load(&m, path, 0, err, sizeof(err)), -EPROTO);
	CU_ASSERT_PTR_NOT_NULL(strstr(err, "schema version 3, newer than this preport reads"));
}

static int suite_init(void)
{
	if (!mkdtemp(dir))
		return 1;
	snprintf(path, sizeof(path), "%s/result.db", dir);
	return 0;
}

static int suite_clean(void)
{
	unlink(path);
	return rmdir(dir) ? 1 : 0;
}

int main(void)
{
	static const struct unit_test tests[] = {
		{ "idmap", test_report_model_idmap },
		{ "round_trip", test_report_model_round_trip },
		{ "schema1", test_report_model_schema1 },
		{ "refused", test_report_model_refused },
		{ NULL, NULL },
	};

	return unit_run("report-model", tests, suite_init, suite_clean);
}
