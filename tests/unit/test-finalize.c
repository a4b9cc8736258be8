/* SPDX-License-Identifier: MIT */
/* Unit tests of finalize_run() on synthetic raw streams: addresses of this very binary (built
   -O2 -g), with an inlined call, so the answers are known: names, inline chains, lines, counts,
   missing and mismatched modules, damaged and empty streams, atomic replacement, the cache. */
#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/log.h"
#include "common/raw-stream.h"
#include "common/result-dir.h"
#include "finalizer/finalize.h"
#include "finalizer/line-table.h"
#include "tests/unit/unit.h"

/* ---- code with known addresses ------------------------------------------------------------- */

static int inner_call_line, outer_call_line, test_call_line;

static __attribute__((noinline)) uintptr_t take_return_address(void)
{
	uintptr_t ra = (uintptr_t)__builtin_return_address(0);

	__asm__ volatile("" : "+r"(ra) : : "memory");
	return ra;
}

static inline __attribute__((always_inline)) uintptr_t fin_inner(void)
{
	uintptr_t ra;

	inner_call_line = __LINE__ + 1;
	ra = take_return_address();
	__asm__ volatile("" : "+r"(ra) : : "memory");
	return ra;
}

/* Returns the return address taken inside the inlined fin_inner and its own. */
static __attribute__((noinline)) uintptr_t fin_outer(uintptr_t *own)
{
	uintptr_t ra;

	outer_call_line = __LINE__ + 1;
	ra = fin_inner();
	*own = (uintptr_t)__builtin_return_address(0);
	__asm__ volatile("" : "+r"(ra) : : "memory");
	return ra;
}

static uintptr_t ra_inner, ra_outer;

static __attribute__((noinline)) void take_addresses(void)
{
	test_call_line = __LINE__ + 1;
	ra_inner = fin_outer(&ra_outer);
	__asm__ volatile("" ::: "memory");
}

/* ---- this binary as a module record ------------------------------------------------------- */

static char self_path[PATH_MAX];
static uint64_t self_base;
static uint8_t self_build_id[64];
static uint32_t self_build_id_len;
static struct raw_segment self_segs[16];
static uint32_t self_nsegs;

static int phdr_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	int i;

	(void)size;
	(void)data;
	self_base = info->dlpi_addr;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_LOAD && self_nsegs < 16) {
			struct raw_segment *s = &self_segs[self_nsegs++];

			s->start = info->dlpi_addr + ph->p_vaddr;
			s->size = ph->p_memsz;
			s->file_offset = ph->p_offset;
			s->prot = ph->p_flags;
		}
		if (ph->p_type == PT_NOTE) {
			const char *p = (const char *)(info->dlpi_addr + ph->p_vaddr);
			const char *end = p + ph->p_memsz;

			while (p + sizeof(ElfW(Nhdr)) <= end) {
				const ElfW(Nhdr) *n = (const ElfW(Nhdr) *)p;
				const char *name = p + sizeof(*n);
				const char *desc = name + ((n->n_namesz + 3) & ~3u);

				if (n->n_type == NT_GNU_BUILD_ID && n->n_namesz == 4 &&
				    !memcmp(name, "GNU", 4) && n->n_descsz <= 64) {
					memcpy(self_build_id, desc, n->n_descsz);
					self_build_id_len = n->n_descsz;
				}
				p = desc + ((n->n_descsz + 3) & ~3u);
			}
		}
	}
	return 1; /* the first object is the program */
}

/* ---- writing results ----------------------------------------------------------------------- */

static char tmp_root[] = "/tmp/pfinalize-unit.XXXXXX";
static int result_counter;

struct stream_w {
	int fd;
	struct raw_writer w;
	struct raw_file_header h;
	uint8_t buf[1 << 16];
};

static void make_result(char *dir, size_t size)
{
	char path[PATH_MAX];

	snprintf(dir, size, "%s/r%d", tmp_root, result_counter++);
	CU_ASSERT_FATAL(mkdir(dir, 0755) == 0);
	result_path(path, sizeof(path), dir, RESULT_PATH_RAW_DIR, 0, 0, NULL, NULL);
	CU_ASSERT_FATAL(mkdir(path, 0755) == 0);
	result_path(path, sizeof(path), dir, RESULT_PATH_META_DIR, 0, 0, NULL, NULL);
	CU_ASSERT_FATAL(mkdir(path, 0755) == 0);
}

static void stream_open(struct stream_w *s, const char *dir, int pid, int tid)
{
	char path[PATH_MAX];
	FILE *m;

	result_path(path, sizeof(path), dir, RESULT_PATH_RAW, pid, tid, NULL, NULL);
	s->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0644);
	CU_ASSERT_FATAL(s->fd >= 0);
	raw_header_init(&s->h, pid, tid, -1, "unit", 10000000, RAW_SAMPLE_THREAD_CPU);
	CU_ASSERT_FATAL(raw_writer_init(&s->w, s->fd, s->buf, sizeof(s->buf), &s->h) == 0);
	result_path(path, sizeof(path), dir, RESULT_PATH_META, pid, 0, NULL, NULL);
	m = fopen(path, "w");
	CU_ASSERT_FATAL(m != NULL);
	fprintf(m,
		"analysis=hotspots\nstart_monotonic_ns=%llu\ninterval_ns=10000000\n"
		"command_line=unit test\n",
		(unsigned long long)s->h.origin_ns);
	fclose(m);
}

static void stream_module(struct stream_w *s, const char *path, const uint8_t *bid,
			  uint32_t bid_len)
{
	struct raw_module m = {
		.time_ns = 0,
		.kind = RAW_MODULE_FILE,
		.base = self_base,
		.path = path,
		.path_len = (uint32_t)strlen(path),
		.build_id = bid,
		.build_id_len = bid_len,
		.nsegs = self_nsegs,
		.segs = self_segs,
	};

	CU_ASSERT_FATAL(raw_writer_module_load(&s->w, &m) == 0);
}

static void stream_close(struct stream_w *s)
{
	CU_ASSERT(raw_writer_flush(&s->w) == 0);
	close(s->fd);
}

/* The standard stack: pc-less return addresses, innermost first. */
static void stream_inline_stack(struct stream_w *s, uint64_t id)
{
	uint64_t ips[2] = { ra_inner, ra_outer };

	CU_ASSERT_FATAL(raw_writer_stack(&s->w, id, 0, ips, 2) == 0);
}

static void samples(struct stream_w *s, uint64_t stack, int n, int64_t *t)
{
	int i;

	for (i = 0; i < n; i++) {
		*t += 10000000;
		CU_ASSERT_FATAL(raw_writer_sample(&s->w, *t, stack, 1) == 0);
	}
}

static int finalize_jobs(const char *dir, const char *const *search, size_t nsearch, int jobs)
{
	struct finalize_opts o = { .result_dir = dir,
				   .search_dirs = search,
				   .nsearch_dirs = nsearch,
				   .jobs = jobs,
				   .quiet = true };

	return finalize_run(&o);
}

static int finalize(const char *dir, const char *const *search, size_t nsearch)
{
	return finalize_jobs(dir, search, nsearch, 2);
}

static sqlite3 *db_open(const char *dir)
{
	char path[PATH_MAX];
	sqlite3 *db = NULL;

	result_path(path, sizeof(path), dir, RESULT_PATH_DB, 0, 0, NULL, NULL);
	CU_ASSERT_FATAL(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK);
	return db;
}

static long long q_int(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st;
	long long v = -1;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
		fprintf(stderr, "sql error: %s: %s\n", sql, sqlite3_errmsg(db));
		CU_FAIL("query");
		return -1;
	}
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_type(st, 0) != SQLITE_NULL)
		v = sqlite3_column_int64(st, 0);
	sqlite3_finalize(st);
	return v;
}

static char *q_str(sqlite3 *db, const char *sql)
{
	sqlite3_stmt *st;
	char *v = NULL;

	if (sqlite3_prepare_v2(db, sql, -1, &st, NULL) != SQLITE_OK) {
		fprintf(stderr, "sql error: %s: %s\n", sql, sqlite3_errmsg(db));
		CU_FAIL("query");
		return NULL;
	}
	if (sqlite3_step(st) == SQLITE_ROW && sqlite3_column_text(st, 0))
		v = strdup((const char *)sqlite3_column_text(st, 0));
	sqlite3_finalize(st);
	return v;
}

/* The leaf stack's frames from the leaf up: "name@depth:line <- ..." */
static char *leaf_chain(sqlite3 *db, const char *where)
{
	char sql[2048];

	snprintf(sql, sizeof(sql),
		 "WITH RECURSIVE w(id, parent_id, frame_id, lvl) AS ("
		 " SELECT st.id, st.parent_id, st.frame_id, 0 FROM stacks st WHERE st.id = "
		 " (SELECT stack_id FROM samples %s ORDER BY count DESC LIMIT 1)"
		 " UNION ALL SELECT p.id, p.parent_id, p.frame_id, w.lvl + 1 FROM w"
		 " JOIN stacks p ON p.id = w.parent_id)"
		 " SELECT group_concat(x, ' <- ') FROM (SELECT f.name || '@' || fr.inline_depth ||"
		 " ':' || ifnull(fr.line, '?') AS x FROM w JOIN frames fr ON fr.id = w.frame_id"
		 " JOIN functions f ON f.id = fr.function_id ORDER BY w.lvl)",
		 where);
	return q_str(db, sql);
}

/* ---- tests --------------------------------------------------------------------------------- */

static void test_finalize_inline_chain(void)
{
	char dir[PATH_MAX], want[512], *chain;
	struct stream_w s;
	int64_t t = 0;
	sqlite3 *db;

	make_result(dir, sizeof(dir));
	stream_open(&s, dir, 100, 100);
	stream_module(&s, self_path, self_build_id, self_build_id_len);
	stream_inline_stack(&s, 1);
	samples(&s, 1, 30, &t);
	stream_close(&s);
	CU_ASSERT_FATAL(finalize(dir, NULL, 0) == 0);
	db = db_open(dir);
	chain = leaf_chain(db, "");
	snprintf(want, sizeof(want), "fin_inner@1:%d <- fin_outer@0:%d <- take_addresses@0:%d",
		 inner_call_line, outer_call_line, test_call_line);
	CU_ASSERT_PTR_NOT_NULL_FATAL(chain);
	if (chain && strcmp(chain, want))
		fprintf(stderr, "\n  got  %s\n  want %s\n", chain, want);
	CU_ASSERT_STRING_EQUAL(chain, want);
	free(chain);
	/* The frame's file is this source file; the module resolved from its original path. */
	chain = q_str(db, "SELECT sf.path FROM frames fr JOIN functions f ON f.id = fr.function_id"
			  " JOIN source_files sf ON sf.id = fr.source_file_id"
			  " WHERE f.name = 'fin_inner'");
	CU_ASSERT(chain && strstr(chain, "test-finalize.c"));
	free(chain);
	chain = q_str(db, "SELECT status || ',' || symbols FROM modules WHERE kind = 'file'");
	CU_ASSERT(chain && !strcmp(chain, "ok,dwarf"));
	free(chain);
	CU_ASSERT(q_int(db, "SELECT value FROM meta WHERE key = 'samples_total'") == 30);
	CU_ASSERT(q_int(db, "SELECT SUM(count) FROM samples") == 30);
	CU_ASSERT(q_int(db, "SELECT COUNT(*) FROM timeline") == 30);
	CU_ASSERT(q_int(db, "SELECT time_ns FROM threads") == 300000000);
	/* Frames hold module-relative addresses: ra_inner - 1 - base. */
	CU_ASSERT(q_int(db, "SELECT fr.address FROM frames fr JOIN functions f ON"
			    " f.id = fr.function_id WHERE f.name = 'fin_inner'") ==
		  (long long)(ra_inner - 1 - self_base));
	/* functions.kind: every function named from DWARF is a 'symbol' one */
	CU_ASSERT(q_int(db, "SELECT COUNT(*) FROM functions WHERE resolved = 1 AND"
			    " kind = 'symbol'") >= 2);
	CU_ASSERT(q_int(db, "SELECT COUNT(*) FROM functions WHERE (resolved = 1) !="
			    " (kind = 'symbol')") == 0);
	sqlite3_close(db);
}

static void test_finalize_counts_and_tree(void)
{
	char dir[PATH_MAX];
	struct stream_w a, b;
	uint64_t ips_b[1];
	int64_t ta = 0, tb = 0;
	sqlite3 *db;

	make_result(dir, sizeof(dir));
	stream_open(&a, dir, 200, 200);
	stream_module(&a, self_path, self_build_id, self_build_id_len);
	stream_inline_stack(&a, 7);
	samples(&a, 7, 300, &ta);
	stream_close(&a);
	/* A second thread of the same process: its own stack ids, the module from thread 1. */
	stream_open(&b, dir, 200, 201);
	ips_b[0] = ra_outer;
	CU_ASSERT_FATAL(raw_writer_stack(&b.w, 1, 0, ips_b, 1) == 0);
	stream_inline_stack(&b, 2);
	samples(&b, 1, 100, &tb);
	samples(&b, 2, 50, &tb);
	CU_ASSERT_FATAL(raw_writer_thread_name(&b.w, 201, tb, "worker") == 0);
	stream_close(&b);
	CU_ASSERT_FATAL(finalize(dir, NULL, 0) == 0);
	db = db_open(dir);
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
static void test_finalize_cpu_coverage(void)
{
	char dir[PATH_MAX];
	struct stream_w a, b;
	int64_t ta = 0, tb = 0;
	char *text;

	make_result(dir, sizeof(dir));
	stream_open(&a, dir, 200, 200);
	stream_module(&a, self_path, self_build_id, self_build_id_len);
	stream_inline_stack(&a, 7);
	samples(&a, 7, 30, &ta);
	CU_ASSERT_FATAL(raw_writer_thread_name(&a.w, 200, ta, "late") == 0);
	CU_ASSERT_FATAL(raw_writer_thread_end(&a.w, 200, ta + 1000, 1000000000) == 0);
	stream_close(&a);
	stream_open(&b, dir, 200, 201);
	stream_inline_stack(&b, 1);
	samples(&b, 1, 20, &tb);
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

static void test_finalize_missing_and_unknown(void)
{
	char dir[PATH_MAX], *s;
	struct stream_w w;
	uint64_t ips[2] = { ra_inner, 0x10 }; /* 0x10: no module there */
	int64_t t = 0;
	sqlite3 *db;

	make_result(dir, sizeof(dir));
	stream_open(&w, dir, 300, 300);
	stream_module(&w, "/nonexistent/dir/libmissing.so", self_build_id, self_build_id_len);
	CU_ASSERT_FATAL(raw_writer_stack(&w.w, 1, 0, ips, 2) == 0);
	samples(&w, 1, 5, &t);
	stream_close(&w);
	CU_ASSERT_FATAL(finalize(dir, NULL, 0) == 0);
	db = db_open(dir);
	CU_ASSERT(q_int(db, "SELECT COUNT(*) FROM modules WHERE status = 'missing'") == 1);
	s = q_str(db, "SELECT f.name FROM functions f JOIN modules m ON m.id = f.module_id");
	CU_ASSERT(s && !strncmp(s, "func@0x", 7));
	free(s);
	CU_ASSERT(q_int(db, "SELECT COUNT(*) FROM functions WHERE name = '[unknown]' AND"
			    " module_id IS NULL") == 1);
	CU_ASSERT(q_int(db, "SELECT COUNT(*) FROM functions WHERE resolved = 1") == 0);
	/* Without the file no extent is known: every placeholder stands for its address alone. */
	CU_ASSERT(q_int(db, "SELECT COUNT(*) FROM functions WHERE kind = 'address'") ==
		  q_int(db, "SELECT COUNT(*) FROM functions"));
	sqlite3_close(db);
}

static void test_finalize_build_id_mismatch(void)
{
	char dir[PATH_MAX], *s;
	struct stream_w w;
	uint8_t other[20];
	int64_t t = 0;
	sqlite3 *db;

	memset(other, 0xab, sizeof(other));
	make_result(dir, sizeof(dir));
	stream_open(&w, dir, 400, 400);
	stream_module(&w, self_path, other, sizeof(other));
	stream_inline_stack(&w, 1);
	samples(&w, 1, 5, &t);
	stream_close(&w);
	CU_ASSERT_FATAL(finalize(dir, NULL, 0) == 0);
	db = db_open(dir);
	s = q_str(db, "SELECT status FROM modules");
	CU_ASSERT(s && !strcmp(s, "build-id-mismatch"));
	free(s);
	/* Never a wrong name: nothing resolved. */
	CU_ASSERT(q_int(db, "SELECT COUNT(*) FROM functions WHERE resolved = 1") == 0);
	CU_ASSERT(q_int(db, "SELECT COUNT(*) FROM functions WHERE name LIKE 'fin_%'") == 0);
	sqlite3_close(db);
}

static void test_finalize_search_dir(void)
{
	char dir[PATH_MAX], sdir[PATH_MAX], copy[PATH_MAX + 32], cmd[3 * PATH_MAX], *s;
	struct stream_w w;
	int64_t t = 0;
	sqlite3 *db;
	const char *dirs[1];

	make_result(dir, sizeof(dir));
	snprintf(sdir, sizeof(sdir), "%s/bins", tmp_root);
	mkdir(sdir, 0755);
	snprintf(copy, sizeof(copy), "%s/sub", sdir);
	mkdir(copy, 0755);
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s/sub/moved-binary'", self_path, sdir);
	CU_ASSERT_FATAL(system(cmd) == 0);
	stream_open(&w, dir, 500, 500);
	stream_module(&w, "/gone/elsewhere/moved-binary", self_build_id, self_build_id_len);
	stream_inline_stack(&w, 1);
	samples(&w, 1, 5, &t);
	stream_close(&w);
	/* Without -search-dir: unresolved. */
	CU_ASSERT_FATAL(finalize(dir, NULL, 0) == 0);
	db = db_open(dir);
	CU_ASSERT(q_int(db, "SELECT COUNT(*) FROM functions WHERE resolved = 1") == 0);
	sqlite3_close(db);
	/* With it: found recursively, resolved, and the database says where from. */
	dirs[0] = sdir;
	CU_ASSERT_FATAL(finalize(dir, dirs, 1) == 0);
	db = db_open(dir);
	s = leaf_chain(db, "");
	CU_ASSERT(s && !strncmp(s, "fin_inner@1:", 12));
	free(s);
	s = q_str(db, "SELECT resolved_path FROM modules");
	CU_ASSERT(s && strstr(s, "/bins/sub/moved-binary"));
	free(s);
	s = q_str(db, "SELECT value FROM meta WHERE key = 'search_dirs'");
	CU_ASSERT(s && !strcmp(s, sdir));
	free(s);
	sqlite3_close(db);
}

static void test_finalize_damaged_stream(void)
{
	char dir[PATH_MAX], path[PATH_MAX];
	struct stream_w w;
	int64_t t = 0;
	sqlite3 *db;
	int fd;
	off_t size;

	make_result(dir, sizeof(dir));
	stream_open(&w, dir, 600, 600);
	stream_module(&w, self_path, self_build_id, self_build_id_len);
	stream_inline_stack(&w, 1);
	samples(&w, 1, 40, &t);
	CU_ASSERT(raw_writer_flush(&w.w) == 0);
	samples(&w, 1, 60, &t);
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
	CU_ASSERT_FATAL(finalize(dir, NULL, 0) == 0);
	db = db_open(dir);
	CU_ASSERT(q_int(db, "SELECT SUM(count) FROM samples") == 40);
	CU_ASSERT(q_int(db, "SELECT COUNT(*) FROM streams") == 2);
	CU_ASSERT(q_int(db, "SELECT chunks_damaged FROM streams WHERE process_id IS NOT NULL") ==
		  1);
	CU_ASSERT(q_int(db, "SELECT bytes_skipped FROM streams WHERE process_id IS NOT NULL") > 0);
	CU_ASSERT(q_int(db, "SELECT COUNT(*) FROM streams WHERE problem IS NOT NULL") == 2);
	sqlite3_close(db);
}

static void test_finalize_empty_and_errors(void)
{
	char dir[PATH_MAX], path[PATH_MAX];
	struct stream_w w;
	struct stat st1, st2;
	sqlite3 *db;

	/* A stream with a header only: a valid database with zero samples. */
	make_result(dir, sizeof(dir));
	stream_open(&w, dir, 700, 700);
	stream_close(&w);
	CU_ASSERT_FATAL(finalize(dir, NULL, 0) == 0);
	db = db_open(dir);
	CU_ASSERT(q_int(db, "SELECT COUNT(*) FROM samples") == 0);
	CU_ASSERT(q_int(db, "SELECT value FROM meta WHERE key = 'samples_total'") == 0);
	CU_ASSERT(q_int(db, "SELECT COUNT(*) FROM threads") == 1);
	sqlite3_close(db);
	/* Finalizing again replaces the database by a new file (rename), leaving no temporary. */
	result_path(path, sizeof(path), dir, RESULT_PATH_DB, 0, 0, NULL, NULL);
	CU_ASSERT(stat(path, &st1) == 0);
	CU_ASSERT_FATAL(finalize(dir, NULL, 0) == 0);
	CU_ASSERT(stat(path, &st2) == 0);
	CU_ASSERT(st1.st_ino != st2.st_ino);
	result_path(path, sizeof(path), dir, RESULT_PATH_DB_TMP, getpid(), 0, NULL, NULL);
	CU_ASSERT(access(path, F_OK) != 0);
	/* No streams at all: an error, and the good database stays. */
	result_path(path, sizeof(path), dir, RESULT_PATH_RAW, 700, 700, NULL, NULL);
	CU_ASSERT(unlink(path) == 0);
	CU_ASSERT(finalize(dir, NULL, 0) == -ENODATA);
	result_path(path, sizeof(path), dir, RESULT_PATH_DB, 0, 0, NULL, NULL);
	CU_ASSERT(stat(path, &st1) == 0 && st1.st_ino == st2.st_ino);
	/* Not a result directory at all. */
	snprintf(path, sizeof(path), "%s/not-a-result", tmp_root);
	mkdir(path, 0755);
	CU_ASSERT(finalize(path, NULL, 0) == -ERR_USAGE);
	CU_ASSERT(finalize("/nonexistent/result", NULL, 0) == -ERR_USAGE);
}

static void test_finalize_cache(void)
{
	char dir[PATH_MAX], cache[PATH_MAX], file[PATH_MAX + 200], hex[129], *a, *b;
	struct stream_w w;
	int64_t t = 0;
	sqlite3 *db;
	uint32_t i;

	make_result(dir, sizeof(dir));
	stream_open(&w, dir, 800, 800);
	stream_module(&w, self_path, self_build_id, self_build_id_len);
	stream_inline_stack(&w, 1);
	samples(&w, 1, 5, &t);
	stream_close(&w);
	snprintf(cache, sizeof(cache), "%s/cache", tmp_root);
	setenv("PCOLLECT_CACHE_DIR", cache, 1);
	unsetenv("PCOLLECT_NO_CACHE");
	mkdir(cache, 0700);
	CU_ASSERT_FATAL(finalize(dir, NULL, 0) == 0);
	db = db_open(dir);
	a = leaf_chain(db, "");
	sqlite3_close(db);
	for (i = 0; i < self_build_id_len; i++)
		snprintf(hex + 2 * i, 3, "%02x", self_build_id[i]);
	snprintf(file, sizeof(file), "%s/%s.sym", cache, hex);
	CU_ASSERT(access(file, R_OK) == 0);
	/* The second run reads the cache: same answer. */
	CU_ASSERT_FATAL(finalize(dir, NULL, 0) == 0);
	db = db_open(dir);
	b = leaf_chain(db, "");
	sqlite3_close(db);
	CU_ASSERT(a && b && !strcmp(a, b));
	free(a);
	free(b);
	setenv("PCOLLECT_NO_CACHE", "1", 1);
}

static void test_finalize_timeline(void)
{
	char dir[PATH_MAX], *s;
	struct stream_w a, b;
	sqlite3 *db;
	sqlite3_stmt *st;
	int scans = 0;

	make_result(dir, sizeof(dir));
	stream_open(&a, dir, 900, 900);
	stream_module(&a, self_path, self_build_id, self_build_id_len);
	stream_inline_stack(&a, 1);
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
	CU_ASSERT_FATAL(finalize(dir, NULL, 0) == 0);
	db = db_open(dir);
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

/* Every frame of the database, one line each, in address order. */
static char *frames_dump(const char *dir)
{
	sqlite3 *db = db_open(dir);
	char *s = q_str(db, "SELECT group_concat(x, char(10)) FROM (SELECT fr.address || ' ' ||"
			    " fr.inline_depth || ' ' || f.name || ' ' || ifnull(f.mangled, '') ||"
			    " ' ' || ifnull(df.path, '') || ':' || ifnull(f.line, '') || ' ' ||"
			    " ifnull(sf.path, '') || ':' || ifnull(fr.line, '') AS x FROM frames fr"
			    " JOIN functions f ON f.id = fr.function_id"
			    " LEFT JOIN source_files sf ON sf.id = fr.source_file_id"
			    " LEFT JOIN source_files df ON df.id = f.source_file_id"
			    " ORDER BY fr.address, fr.inline_depth)");

	sqlite3_close(db);
	return s;
}

static void test_finalize_parallel_dwarf(void)
{
	char dir[PATH_MAX], *one, *four;
	struct stream_w w;
	uint64_t lo = 0, hi = 0, a, ips[64];
	uint32_t i, n = 0, stacks = 0;
	int64_t t = 0;
	sqlite3 *db;

	/* Thousands of addresses of this binary's code: enough for several threads. */
	for (i = 0; i < self_nsegs; i++)
		if ((self_segs[i].prot & PF_X) && self_segs[i].size > hi - lo) {
			lo = self_segs[i].start;
			hi = lo + self_segs[i].size;
		}
	CU_ASSERT_FATAL(hi > lo);
	make_result(dir, sizeof(dir));
	stream_open(&w, dir, 1000, 1000);
	stream_module(&w, self_path, self_build_id, self_build_id_len);
	for (a = lo + 16; a < hi && stacks < 160; a += 7) {
		ips[n++] = a;
		if (n == 64) {
			CU_ASSERT_FATAL(raw_writer_stack(&w.w, ++stacks, RAW_STACK_FIRST_IS_PC, ips,
							 n) == 0);
			CU_ASSERT_FATAL(raw_writer_sample(&w.w, t += 1000000, stacks, 1) == 0);
			n = 0;
		}
	}
	stream_close(&w);
	CU_ASSERT_FATAL(finalize_jobs(dir, NULL, 0, 1) == 0);
	one = frames_dump(dir);
	db = db_open(dir);
	/* Real answers, not placeholders everywhere. */
	CU_ASSERT(q_int(db, "SELECT COUNT(DISTINCT address) FROM frames") >= 4096);
	CU_ASSERT(q_int(db, "SELECT COUNT(*) FROM frames fr JOIN functions f ON"
			    " f.id = fr.function_id WHERE fr.inline_depth = 0 AND f.resolved = 1") *
			  10 >=
		  q_int(db, "SELECT COUNT(DISTINCT address) FROM frames") * 9);
	CU_ASSERT(q_int(db, "SELECT COUNT(*) FROM frames WHERE inline_depth > 0") > 0);
	sqlite3_close(db);
	CU_ASSERT_FATAL(finalize_jobs(dir, NULL, 0, 4) == 0);
	four = frames_dump(dir);
	/* Reading the compilation units on several threads changes nothing. */
	CU_ASSERT_PTR_NOT_NULL(one);
	CU_ASSERT(one && four && !strcmp(one, four));
	free(one);
	free(four);
}

/* ---- line tables read from .debug_line --------------------------------------------------- */

struct lt_row {
	uint64_t addr, file, line;
	bool end;
};

struct lt_rows {
	struct lt_row v[8];
	int n;
};

static void lt_take(void *ctx, uint64_t addr, uint64_t file, uint64_t line, bool end)
{
	struct lt_rows *r = ctx;

	if (r->n < 8)
		r->v[r->n++] = (struct lt_row){ addr, file, line, end };
}

/* The program shared by both versions: two rows and the end. The first row takes the file
   register's initial value, 1 (DWARF 5 6.2.2), not the primary source file. */
static const uint8_t lt_program[] = {
	0x00, 0x09, 0x02, 0x00, 0x10, 0, 0, 0, 0, 0, 0, /* DW_LNE_set_address 0x1000 */
	26,                                             /* special: line += 8, a row */
	0x02, 0x04,                                     /* DW_LNS_advance_pc 4 */
	0x04, 0x02,                                     /* DW_LNS_set_file 2 */
	0x03, 0x05,                                     /* DW_LNS_advance_line 5 */
	0x01,                                           /* DW_LNS_copy */
	0x02, 0x08,                                     /* DW_LNS_advance_pc 8 */
	0x00, 0x01, 0x01,                               /* DW_LNE_end_sequence */
};

/* Assemble a line table: unit length, version, header (after its length field), program. */
static size_t lt_build(uint8_t *out, unsigned version, const uint8_t *hdr, size_t hlen)
{
	size_t n = 0, len = 2 + (version >= 5 ? 2 : 0) + 4 + hlen + sizeof(lt_program);

	out[n++] = (uint8_t)len;
	out[n++] = (uint8_t)(len >> 8);
	out[n++] = 0;
	out[n++] = 0;
	out[n++] = (uint8_t)version;
	out[n++] = 0;
	if (version >= 5) {
		out[n++] = 8; /* address size */
		out[n++] = 0; /* segment selector size */
	}
	out[n++] = (uint8_t)hlen;
	out[n++] = 0;
	out[n++] = 0;
	out[n++] = 0;
	memcpy(out + n, hdr, hlen);
	n += hlen;
	memcpy(out + n, lt_program, sizeof(lt_program));
	return n + sizeof(lt_program);
}

static void test_finalize_line_table(void)
{
	/* min_inst 1, max_ops 1, is_stmt 1, line_base -5, line_range 14, opcode_base 13. */
	static const uint8_t common[] = {
		1, 1, 1, 0xfb, 14, 13, 0, 1, 1, 1, 1, 0, 0, 0, 1, 0, 0, 1
	};
	static const uint8_t
		v5_tables[] = {
			1,    0x01, 0x08, /* directories: path as a string */
			2,    '/',  's',  'r', 'c', 0,   'i', 'n', 'c', 0,   2,   0x01, 0x08,
			0x02, 0x0f, /* files: path, directory number */
			3,    'm',  'a',  'i', 'n', '.', 'c', 0,   0,   'u', 't', 'i',  'l',
			'.',  'h',  0,    1,   'm', 'a', 'i', 'n', '.', 'c', 0,   0,
		};
	static const uint8_t v4_tables[] = {
		'i', 'n', 'c', 0,   0,                    /* include directories */
		'm', 'a', 'i', 'n', '.', 'c', 0, 0, 0, 0, /* files: name, dir, time, size */
		'u', 't', 'i', 'l', '.', 'h', 0, 1, 0, 0, 0,
	};
	uint8_t hdr[128], sec[256];
	struct line_sections ls = { .line = sec };
	struct line_table t;
	struct lt_rows rows;
	const struct line_file *f;
	unsigned v;

	for (v = 4; v <= 5; v++) {
		const uint8_t *tables = v == 5 ? v5_tables : v4_tables;
		size_t tlen = v == 5 ? sizeof(v5_tables) : sizeof(v4_tables);
		/* DWARF 4 has max_ops; the tables follow the standard opcode lengths. */
		memcpy(hdr, common, sizeof(common));
		memcpy(hdr + sizeof(common), tables, tlen);
		ls.line_size = lt_build(sec, v, hdr, sizeof(common) + tlen);
		CU_ASSERT_FATAL(line_table_parse(&t, &ls, 0, 8) == 0);
		CU_ASSERT(t.version == v);
		CU_ASSERT(t.file_base == (v == 5 ? 0u : 1u));
		f = line_table_file(&t, 1);
		CU_ASSERT_FATAL(f != NULL);
		CU_ASSERT_STRING_EQUAL(f->name, v == 5 ? "util.h" : "main.c");
		f = line_table_file(&t, 2);
		CU_ASSERT_FATAL(f != NULL);
		CU_ASSERT_STRING_EQUAL(f->name, v == 5 ? "main.c" : "util.h");
		CU_ASSERT_STRING_EQUAL(t.dirs[1], "inc");
		CU_ASSERT(line_table_file(&t, 3) == NULL);
		memset(&rows, 0, sizeof(rows));
		CU_ASSERT(line_table_run(&t, lt_take, &rows) == 0);
		CU_ASSERT_FATAL(rows.n == 3);
		CU_ASSERT(rows.v[0].addr == 0x1000 && rows.v[0].file == 1 && rows.v[0].line == 9 &&
			  !rows.v[0].end);
		CU_ASSERT(rows.v[1].addr == 0x1004 && rows.v[1].file == 2 && rows.v[1].line == 14 &&
			  !rows.v[1].end);
		CU_ASSERT(rows.v[2].addr == 0x100c && rows.v[2].end);
		line_table_release(&t);
		/* Cut short: refused, not guessed. */
		ls.line_size = 20;
		CU_ASSERT(line_table_parse(&t, &ls, 0, 8) != 0);
	}
	/* An unknown version is refused too. */
	ls.line_size = lt_build(sec, 6, hdr, sizeof(common));
	CU_ASSERT(line_table_parse(&t, &ls, 0, 8) != 0);
}

int main(void)
{
	static const struct unit_test tests[] = {
		{ "inline chain", test_finalize_inline_chain },
		{ "counts and tree", test_finalize_counts_and_tree },
		{ "cpu coverage", test_finalize_cpu_coverage },
		{ "missing and unknown", test_finalize_missing_and_unknown },
		{ "build-id mismatch", test_finalize_build_id_mismatch },
		{ "search dir", test_finalize_search_dir },
		{ "damaged stream", test_finalize_damaged_stream },
		{ "empty and errors", test_finalize_empty_and_errors },
		{ "cache", test_finalize_cache },
		{ "timeline", test_finalize_timeline },
		{ "parallel dwarf", test_finalize_parallel_dwarf },
		{ "line table", test_finalize_line_table },
		{ NULL, NULL },
	};
	int failed;
	ssize_t n;

	log_set_tool("test-finalize");
	setenv("PCOLLECT_NO_CACHE", "1", 1);
	take_addresses();
	dl_iterate_phdr(phdr_cb, NULL);
	n = readlink("/proc/self/exe", self_path, sizeof(self_path) - 1);
	if (n <= 0 || !mkdtemp(tmp_root))
		return 1;
	self_path[n] = '\0';
	failed = unit_run("finalize", tests, NULL, NULL);
	if (!failed) {
		if (unit_remove_tree(tmp_root))
			return 1;
	} else {
		fprintf(stderr, "work directory kept: %s\n", tmp_root);
	}
	return failed ? 1 : 0;
}
