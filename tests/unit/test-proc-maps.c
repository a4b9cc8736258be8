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

static void test_proc_maps_anon_and_special(void)
{
	char anon[] = "7f0000000000-7f0000010000 rwxp 00000000 00:00 0 \n";
	char named[] = "7f0000000000-7f0000010000 r-xp 00000000 00:00 0  [anon:jit]";
	char vdso[] = "7ffd1c5f0000-7ffd1c5f2000 r-xp 00000000 00:00 0      [vdso]";
	char heap[] = "55d0c0000000-55d0c0021000 rw-p 00000000 00:00 0      [heap]";
	char memfd[] = "7f0000000000-7f0000001000 r-xs 00000000 00:05 42  /memfd:jit (deleted)";
	struct proc_map m;

	CU_ASSERT_FATAL(proc_map_parse(anon, &m) == 0);
	CU_ASSERT_STRING_EQUAL(m.path, "");
	CU_ASSERT(m.prot == (PF_R | PF_W | PF_X));
	CU_ASSERT(proc_map_is_anon_exec(&m));
	CU_ASSERT_FATAL(proc_map_parse(named, &m) == 0);
	CU_ASSERT(proc_map_is_anon_exec(&m));
	CU_ASSERT_FATAL(proc_map_parse(vdso, &m) == 0);
	CU_ASSERT(!proc_map_is_anon_exec(&m));
	CU_ASSERT_FATAL(proc_map_parse(heap, &m) == 0);
	CU_ASSERT(!proc_map_is_anon_exec(&m)); /* not executable */
	CU_ASSERT_FATAL(proc_map_parse(memfd, &m) == 0);
	CU_ASSERT(m.shared);
	CU_ASSERT(proc_map_is_anon_exec(&m));
}

static void test_proc_maps_malformed(void)
{
	char a[] = "";
	char b[] = "zzzz-0000 r-xp 0 00:00 0";
	char c[] = "1000-2000 rxp 00000000 00:00 0";
	char d[] = "2000-1000 r-xp 00000000 00:00 0";
	char e[] = "1000-2000 r-xp 00000000 00:00";
	char f[] = "11112222333344445-2000 r-xp 00000000 00:00 0";
	struct proc_map m;

	CU_ASSERT(proc_map_parse(a, &m) < 0);
	CU_ASSERT(proc_map_parse(b, &m) < 0);
	CU_ASSERT(proc_map_parse(c, &m) < 0);
	CU_ASSERT(proc_map_parse(d, &m) < 0);
	CU_ASSERT(proc_map_parse(e, &m) < 0);
	CU_ASSERT(proc_map_parse(f, &m) < 0);
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

UNIT_MAIN("proc-maps", UNIT_TEST("file_line", test_proc_maps_file_line),
	  UNIT_TEST("anon_and_special", test_proc_maps_anon_and_special),
	  UNIT_TEST("malformed", test_proc_maps_malformed), UNIT_TEST("live", test_proc_maps_live))
