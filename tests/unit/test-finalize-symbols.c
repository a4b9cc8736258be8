/* SPDX-License-Identifier: MIT */
/* Unit tests of the names finalize_run() gives this binary's code, found, missing or mismatched. */
#include <elf.h>
#include <limits.h>
#include <sqlite3.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "finalizer/module-private.h"
#include "finalizer/sorted.h"
#include "tests/unit/finalize-fixture.h"
#include "tests/unit/unit.h"

/*
 * The binary is built -O2 -g with an inlined call (finalize-fixture.c), so the answers are
 * known: names, inline chains and lines; missing and mismatched modules; -search-dir; the
 * symbol cache; compilation units read on several threads.
 */

static void test_finalize_symbols_inline_chain(void)
{
	char dir[PATH_MAX], want[512], *chain;
	struct stream_w s;
	int64_t t = 0;
	sqlite3 *db;

	stream_start(&s, dir, sizeof(dir), 100, NULL, NULL, 0);
	stream_samples(&s, 1, 30, &t);
	stream_close(&s);
	db = finalize_open_db(dir, NULL, 0);
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
	CU_ASSERT(chain && strstr(chain, "finalize-fixture.c"));
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

static void test_finalize_symbols_missing_and_unknown(void)
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
	stream_samples(&w, 1, 5, &t);
	stream_close(&w);
	db = finalize_open_db(dir, NULL, 0);
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

static void test_finalize_symbols_build_id_mismatch(void)
{
	char dir[PATH_MAX], *s;
	struct stream_w w;
	uint8_t other[20];
	int64_t t = 0;
	sqlite3 *db;

	memset(other, 0xab, sizeof(other));
	stream_start(&w, dir, sizeof(dir), 400, NULL, other, sizeof(other));
	stream_samples(&w, 1, 5, &t);
	stream_close(&w);
	db = finalize_open_db(dir, NULL, 0);
	s = q_str(db, "SELECT status FROM modules");
	CU_ASSERT(s && !strcmp(s, "build-id-mismatch"));
	free(s);
	/* Never a wrong name: nothing resolved. */
	CU_ASSERT(q_int(db, "SELECT COUNT(*) FROM functions WHERE resolved = 1") == 0);
	CU_ASSERT(q_int(db, "SELECT COUNT(*) FROM functions WHERE name LIKE 'fin_%'") == 0);
	sqlite3_close(db);
}

static void test_finalize_symbols_search_dir(void)
{
	char dir[PATH_MAX], sdir[PATH_MAX], copy[PATH_MAX + 32], cmd[3 * PATH_MAX], *s;
	struct stream_w w;
	int64_t t = 0;
	sqlite3 *db;
	const char *dirs[1];

	snprintf(sdir, sizeof(sdir), "%s/bins", tmp_root);
	mkdir(sdir, 0755);
	snprintf(copy, sizeof(copy), "%s/sub", sdir);
	mkdir(copy, 0755);
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s/sub/moved-binary'", self_path, sdir);
	CU_ASSERT_FATAL(system(cmd) == 0);
	stream_start(&w, dir, sizeof(dir), 500, "/gone/elsewhere/moved-binary", NULL, 0);
	stream_samples(&w, 1, 5, &t);
	stream_close(&w);
	/* Without -search-dir: unresolved. */
	db = finalize_open_db(dir, NULL, 0);
	CU_ASSERT(q_int(db, "SELECT COUNT(*) FROM functions WHERE resolved = 1") == 0);
	sqlite3_close(db);
	/* With it: found recursively, resolved, and the database says where from. */
	dirs[0] = sdir;
	db = finalize_open_db(dir, dirs, 1);
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

static void test_finalize_symbols_cache(void)
{
	char dir[PATH_MAX], cache[PATH_MAX], file[PATH_MAX + 200], hex[129], *a, *b;
	struct stream_w w;
	int64_t t = 0;
	sqlite3 *db;
	uint32_t i;

	stream_start(&w, dir, sizeof(dir), 800, NULL, NULL, 0);
	stream_samples(&w, 1, 5, &t);
	stream_close(&w);
	snprintf(cache, sizeof(cache), "%s/cache", tmp_root);
	setenv("PCOLLECT_CACHE_DIR", cache, 1);
	unsetenv("PCOLLECT_NO_CACHE");
	mkdir(cache, 0700);
	db = finalize_open_db(dir, NULL, 0);
	a = leaf_chain(db, "");
	sqlite3_close(db);
	for (i = 0; i < self_build_id_len; i++)
		snprintf(hex + 2 * i, 3, "%02x", self_build_id[i]);
	snprintf(file, sizeof(file), "%s/%s.sym", cache, hex);
	CU_ASSERT(access(file, R_OK) == 0);
	/* The second run reads the cache: same answer. */
	db = finalize_open_db(dir, NULL, 0);
	b = leaf_chain(db, "");
	sqlite3_close(db);
	CU_ASSERT(a && b && !strcmp(a, b));
	free(a);
	free(b);
	setenv("PCOLLECT_NO_CACHE", "1", 1);
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

static void test_finalize_symbols_parallel_dwarf(void)
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

/*
 * module_sort_unique() sorts the ips of a module's stacks one way below its radix cut (a
 * small result's few hundred) and another above it: both give what qsort and a pass over
 * repeats give, on addresses with repeats, far apart (digits above 32 bits) and close.
 */
static void test_finalize_symbols_sort_unique(void)
{
	static const size_t sizes[] = { 0, 1, 2, 3, 100, 16383, 16384, 100000 };
	uint64_t seed = 0x9e3779b97f4a7c15ull;
	size_t i, k;

	for (k = 0; k < sizeof(sizes) / sizeof(sizes[0]); k++) {
		size_t n = sizes[k], want_n = 0, got_n = n;
		uint64_t *got = malloc((n ? n : 1) * sizeof(*got));
		uint64_t *want = malloc((n ? n : 1) * sizeof(*want));

		CU_ASSERT_FATAL(got && want);
		for (i = 0; i < n; i++) {
			seed = seed * 6364136223846793005ull + 1442695040888963407ull;
			/* a third repeat an earlier value; some differ only above bit 32 */
			if (i && seed % 3 == 0)
				got[i] = got[(seed >> 20) % i];
			else
				got[i] = (seed >> 16) % 4096 +
					 (i % 5 == 0 ? (seed >> 40) << 32 : 0x401000);
			want[i] = got[i];
		}
		qsort(want, n, sizeof(*want), sorted_u64_cmp);
		for (i = 0; i < n; i++)
			if (!want_n || want[want_n - 1] != want[i])
				want[want_n++] = want[i];
		CU_ASSERT_FATAL(module_sort_unique(got, &got_n) == 0);
		CU_ASSERT_EQUAL(got_n, want_n);
		CU_ASSERT(got_n == want_n && (!n || !memcmp(got, want, want_n * sizeof(*got))));
		free(got);
		free(want);
	}
}

UNIT_MAIN("finalize-symbols", finalize_fixture_init, finalize_fixture_clean,
	  {
		  { "inline chain", test_finalize_symbols_inline_chain },
		  { "missing and unknown", test_finalize_symbols_missing_and_unknown },
		  { "build-id mismatch", test_finalize_symbols_build_id_mismatch },
		  { "search dir", test_finalize_symbols_search_dir },
		  { "cache", test_finalize_symbols_cache },
		  { "parallel dwarf", test_finalize_symbols_parallel_dwarf },
		  { "sort unique", test_finalize_symbols_sort_unique },
	  })
