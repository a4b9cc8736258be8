/* SPDX-License-Identifier: MIT */
/* Known code in this binary, raw streams that sample it, their result.db (finalize-fixture.h). */
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
#include "tests/unit/finalize-fixture.h"
#include "tests/unit/unit.h"

/* ---- code with known addresses ------------------------------------------------------------- */

int inner_call_line, outer_call_line, test_call_line;

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

uintptr_t ra_inner, ra_outer;

static __attribute__((noinline)) void take_addresses(void)
{
	test_call_line = __LINE__ + 1;
	ra_inner = fin_outer(&ra_outer);
	__asm__ volatile("" ::: "memory");
}

/* ---- this binary as a module record ------------------------------------------------------- */

char self_path[PATH_MAX];
uint64_t self_base;
uint8_t self_build_id[64];
uint32_t self_build_id_len;
struct raw_segment self_segs[16];
uint32_t self_nsegs;

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

char tmp_root[256];
static int result_counter;

void make_result(char *dir, size_t size)
{
	char path[PATH_MAX];

	snprintf(dir, size, "%s/r%d", tmp_root, result_counter++);
	CU_ASSERT_FATAL(mkdir(dir, 0755) == 0);
	result_path(path, sizeof(path), dir, RESULT_PATH_RAW_DIR, 0, 0, NULL, NULL);
	CU_ASSERT_FATAL(mkdir(path, 0755) == 0);
	result_path(path, sizeof(path), dir, RESULT_PATH_META_DIR, 0, 0, NULL, NULL);
	CU_ASSERT_FATAL(mkdir(path, 0755) == 0);
}

void stream_open(struct stream_w *s, const char *dir, int pid, int tid)
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

void stream_module(struct stream_w *s, const char *path, const uint8_t *bid, uint32_t bid_len)
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

void stream_close(struct stream_w *s)
{
	CU_ASSERT(raw_writer_flush(&s->w) == 0);
	close(s->fd);
}

void stream_inline_stack(struct stream_w *s, uint64_t id)
{
	uint64_t ips[2] = { ra_inner, ra_outer };

	CU_ASSERT_FATAL(raw_writer_stack(&s->w, id, 0, ips, 2) == 0);
}

void stream_start(struct stream_w *s, char *dir, size_t size, int pid, const char *module,
		  const uint8_t *bid, uint32_t bid_len)
{
	make_result(dir, size);
	stream_open(s, dir, pid, pid);
	stream_module(s, module ? module : self_path, bid ? bid : self_build_id,
		      bid ? bid_len : self_build_id_len);
	stream_inline_stack(s, 1);
}

void stream_samples(struct stream_w *s, uint64_t stack, int n, int64_t *t)
{
	int i;

	for (i = 0; i < n; i++) {
		*t += 10000000;
		CU_ASSERT_FATAL(raw_writer_sample(&s->w, *t, stack, 1) == 0);
	}
}

int finalize_jobs(const char *dir, const char *const *search, size_t nsearch, int jobs)
{
	struct finalize_opts o = { .result_dir = dir,
				   .search_dirs = search,
				   .nsearch_dirs = nsearch,
				   .jobs = jobs,
				   .quiet = true };

	return finalize_run(&o);
}

int finalize_dir(const char *dir, const char *const *search, size_t nsearch)
{
	return finalize_jobs(dir, search, nsearch, 2);
}

sqlite3 *finalize_open_db(const char *dir, const char *const *search, size_t nsearch)
{
	CU_ASSERT_FATAL(finalize_dir(dir, search, nsearch) == 0);
	return db_open(dir);
}

sqlite3 *db_open(const char *dir)
{
	char path[PATH_MAX];
	sqlite3 *db = NULL;

	result_path(path, sizeof(path), dir, RESULT_PATH_DB, 0, 0, NULL, NULL);
	CU_ASSERT_FATAL(sqlite3_open_v2(path, &db, SQLITE_OPEN_READONLY, NULL) == SQLITE_OK);
	return db;
}

long long q_int(sqlite3 *db, const char *sql)
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

char *q_str(sqlite3 *db, const char *sql)
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

char *leaf_chain(sqlite3 *db, const char *where)
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

/* ---- the suite's init and clean ------------------------------------------------------------ */

int finalize_fixture_init(void)
{
	ssize_t n;

	log_set_tool(program_invocation_short_name);
	setenv("PCOLLECT_NO_CACHE", "1", 1);
	take_addresses();
	dl_iterate_phdr(phdr_cb, NULL);
	n = readlink("/proc/self/exe", self_path, sizeof(self_path) - 1);
	snprintf(tmp_root, sizeof(tmp_root), "/tmp/%s.XXXXXX", program_invocation_short_name);
	if (n <= 0 || !mkdtemp(tmp_root))
		return -1;
	self_path[n] = '\0';
	return 0;
}

int finalize_fixture_clean(void)
{
	char cmd[PATH_MAX + 16];

	if (CU_get_number_of_failures()) {
		fprintf(stderr, "work directory kept: %s\n", tmp_root);
		return 0;
	}
	snprintf(cmd, sizeof(cmd), "rm -rf '%s'", tmp_root);
	return system(cmd) ? -1 : 0;
}
