/* SPDX-License-Identifier: MIT */
/* Unit tests of finalizer/pymethod-table.c: the method tables of Debian's stripped python3.11
   named as cProfile names them, nothing from a file without Python, no crash on damaged files. */
#include <fcntl.h>
#include <gelf.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "finalizer/pymethod-table.h"
#include "tests/unit/unit.h"

#define PYTHON "/usr/bin/python3.11" /* Debian 12's: stripped, not PIE */

/* The whole file at path (caller frees), NULL when it cannot be read. */
static uint8_t *slurp(const char *path, size_t *size)
{
	struct stat st;
	uint8_t *buf = NULL;
	int fd = open(path, O_RDONLY);

	if (fd >= 0 && !fstat(fd, &st) && (buf = malloc((size_t)st.st_size + 1)) &&
	    read(fd, buf, (size_t)st.st_size) == st.st_size) {
		*size = (size_t)st.st_size;
	} else {
		free(buf);
		buf = NULL;
	}
	if (fd >= 0)
		close(fd);
	return buf;
}

static bool has_name(const struct pymethod_table *t, const char *name)
{
	for (size_t i = 0; i < t->n; i++)
		if (!strcmp(t->v[i].name, name))
			return true;
	return false;
}

static int load_bytes(struct pymethod_table *t, uint8_t *buf, size_t size)
{
	Elf *elf = elf_memory((char *)buf, size);
	int ret = pymethod_table_load(t, elf, PYTHON);

	if (elf)
		elf_end(elf);
	return ret;
}

static void test_pymethod_table_interpreter(void)
{
	static const char *const want[] = {
		"{built-in method builtins.sorted}", "{method 'get' of 'dict' objects}",
		"{method 'sort' of 'list' objects}", "{built-in method time.sleep}",
		"{built-in method sys.getsizeof}",   "{built-in method fromkeys}",
		"{method 'join' of 'str' objects}",
	};
	struct pymethod_table t;
	size_t size, i;
	uint8_t *buf = slurp(PYTHON, &size);

	if (!buf) {
		fprintf(stderr, "%s not installed: not tested\n", PYTHON);
		return;
	}
	CU_ASSERT_EQUAL(load_bytes(&t, buf, size), 0);
	CU_ASSERT(t.n > 1000);
	for (i = 0; i < sizeof(want) / sizeof(want[0]); i++) {
		CU_ASSERT(has_name(&t, want[i]));
		if (!has_name(&t, want[i]))
			fprintf(stderr, "no '%s' among %zu names\n", want[i], t.n);
	}
	for (i = 1; i < t.n; i++)
		CU_ASSERT(t.v[i - 1].addr < t.v[i].addr);
	CU_ASSERT_PTR_NOT_NULL(pymethod_table_find(&t, t.v[0].addr));
	CU_ASSERT_PTR_NULL(pymethod_table_find(&t, t.v[0].addr + 1));
	pymethod_table_release(&t);
	free(buf);
}

/* A program that does not use the Python C API (this test) gives no names. */
static void test_pymethod_table_no_python(void)
{
	struct pymethod_table t;
	size_t size;
	uint8_t *buf = slurp("/proc/self/exe", &size);

	CU_ASSERT_PTR_NOT_NULL_FATAL(buf);
	CU_ASSERT_EQUAL(load_bytes(&t, buf, size), 0);
	CU_ASSERT_EQUAL(t.n, 0);
	pymethod_table_release(&t);
	free(buf);
}

/* Damaged copies (bytes changed at random, files cut short) are read without a crash, and
   whatever they name is still a name. */
static void test_pymethod_table_damaged(void)
{
	struct pymethod_table t;
	size_t size, i, k;
	uint8_t *orig = slurp(PYTHON, &size), *buf;
	unsigned long long seed = 12345;

	if (!orig)
		return;
	buf = malloc(size);
	CU_ASSERT_PTR_NOT_NULL_FATAL(buf);
	for (i = 0; i < 24; i++) {
		size_t n = i % 3 == 2 ? size / (2 + i) : size, changes = 10 << (i % 4 * 3);

		memcpy(buf, orig, size);
		for (k = 0; k < changes; k++) {
			seed = seed * 6364136223846793005ULL + 1442695040888963407ULL;
			buf[(seed >> 17) % size] = (uint8_t)(seed >> 56);
		}
		CU_ASSERT_EQUAL(load_bytes(&t, buf, n), 0);
		for (k = 0; k < t.n; k++)
			CU_ASSERT(t.v[k].name[0] == '{' &&
				  t.v[k].name[strlen(t.v[k].name) - 1] == '}');
		pymethod_table_release(&t);
	}
	free(buf);
	free(orig);
}

static int suite_init(void)
{
	return elf_version(EV_CURRENT) == EV_NONE;
}

UNIT_MAIN("pymethod-table", suite_init, NULL,
	  {
		  { "interpreter", test_pymethod_table_interpreter },
		  { "no python", test_pymethod_table_no_python },
		  { "damaged", test_pymethod_table_damaged },
	  })
