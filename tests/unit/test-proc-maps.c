/* SPDX-License-Identifier: MIT */
/* Unit tests of collector/proc-maps.c: maps lines, and which mappings count as JIT code. */
#include <elf.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>

#include "common/proc-maps.h"
#include "tests/unit/unit.h"

static void test_proc_maps_file_line(void)
{
	char line[] = "7f1c2a400000-7f1c2a428000 r-xp 00028000 08:01 1234567"
		      "                    /usr/lib/x86_64-linux-gnu/libc.so.6\n";
	struct proc_map m;

	CU_ASSERT_FATAL(proc_map_parse(line, &m) == 0);
	CU_ASSERT(m.start == 0x7f1c2a400000ull);
	CU_ASSERT(m.end == 0x7f1c2a428000ull);
	CU_ASSERT(m.offset == 0x28000);
	CU_ASSERT(m.inode == 1234567);
	CU_ASSERT(m.prot == (PF_R | PF_X));
	CU_ASSERT(!m.shared);
	CU_ASSERT_STRING_EQUAL(m.path, "/usr/lib/x86_64-linux-gnu/libc.so.6");
	CU_ASSERT(!proc_map_is_anon_exec(&m));
}

/*
 * line parsed into m, which fails the test if refused. The parser cuts a copy of it, which
 * m->path points into until the next call.
 */
static void parse(const char *line, struct proc_map *m)
{
	static char copy[256];

	snprintf(copy, sizeof(copy), "%s", line);
	CU_ASSERT_FATAL(proc_map_parse(copy, m) == 0);
}

static void test_proc_maps_anon_and_special(void)
{
	static const struct {
		const char *line;
		bool jit; /* proc_map_is_anon_exec() */
	} maps[] = {
		{ "7f0000000000-7f0000010000 rwxp 00000000 00:00 0 \n", true },
		{ "7f0000000000-7f0000010000 r-xp 00000000 00:00 0  [anon:jit]", true },
		{ "7ffd1c5f0000-7ffd1c5f2000 r-xp 00000000 00:00 0      [vdso]", false },
		{ "55d0c0000000-55d0c0021000 rw-p 00000000 00:00 0      [heap]", false }, /* no x */
		{ "7f0000000000-7f0000001000 r-xs 00000000 00:05 42  /memfd:jit (deleted)", true },
	};
	struct proc_map m;
	size_t i;

	for (i = 0; i < sizeof(maps) / sizeof(maps[0]); i++) {
		parse(maps[i].line, &m);
		CU_ASSERT_EQUAL(proc_map_is_anon_exec(&m), maps[i].jit);
		if (i == 0) { /* no path at all */
			CU_ASSERT_STRING_EQUAL(m.path, "");
			CU_ASSERT(m.prot == (PF_R | PF_W | PF_X));
		}
	}
	CU_ASSERT(m.shared); /* the memfd */
}

static void test_proc_maps_malformed(void)
{
	static const char *const lines[] = {
		"",
		"zzzz-0000 r-xp 0 00:00 0",
		"1000-2000 rxp 00000000 00:00 0",
		"2000-1000 r-xp 00000000 00:00 0",
		"1000-2000 r-xp 00000000 00:00",
		"11112222333344445-2000 r-xp 00000000 00:00 0",
	};
	struct proc_map m;
	char line[64];
	size_t i;

	for (i = 0; i < sizeof(lines) / sizeof(lines[0]); i++) {
		snprintf(line, sizeof(line), "%s", lines[i]);
		CU_ASSERT(proc_map_parse(line, &m) < 0);
	}
}

/* An executable anonymous mapping made here shows up in our own maps as JIT code. */
static void test_proc_maps_live(void)
{
	void *p = mmap(NULL, 8192, PROT_READ | PROT_EXEC, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	char line[4096];
	bool found = false;
	FILE *f;

	CU_ASSERT_FATAL(p != MAP_FAILED);
	f = fopen("/proc/self/maps", "r");
	CU_ASSERT_FATAL(f != NULL);
	while (fgets(line, sizeof(line), f)) {
		struct proc_map m;

		CU_ASSERT(proc_map_parse(line, &m) == 0);
		if (m.start <= (uint64_t)(uintptr_t)p && (uint64_t)(uintptr_t)p < m.end)
			found = proc_map_is_anon_exec(&m);
	}
	fclose(f);
	munmap(p, 8192);
	CU_ASSERT(found);
}

UNIT_MAIN("proc-maps", NULL, NULL,
	  {
		  { "file_line", test_proc_maps_file_line },
		  { "anon_and_special", test_proc_maps_anon_and_special },
		  { "malformed", test_proc_maps_malformed },
		  { "live", test_proc_maps_live },
	  })
