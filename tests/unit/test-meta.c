/* SPDX-License-Identifier: MIT */
/* Unit tests of common/meta.c: round trips, the escaped file format, strict reading. */
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/meta.h"
#include "common/result-dir.h"
#include "tests/unit/unit.h"

static char tmpdir[] = "/tmp/test-meta.XXXXXX";
static char path[128];

static int suite_init(void)
{
	if (!mkdtemp(tmpdir))
		return -1;
	snprintf(path, sizeof(path), "%s/1234.meta", tmpdir);
	return 0;
}

static int suite_clean(void)
{
	return unit_remove_tree(tmpdir);
}

static void write_raw(const char *text, size_t len)
{
	FILE *f = fopen(path, "w");

	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	CU_ASSERT_EQUAL(fwrite(text, 1, len, f), len);
	fclose(f);
}

static size_t read_raw(char *buf, size_t size)
{
	FILE *f = fopen(path, "r");
	size_t n;

	CU_ASSERT_PTR_NOT_NULL_FATAL(f);
	n = fread(buf, 1, size - 1, f);
	buf[n] = '\0';
	fclose(f);
	return n;
}

static void test_meta_set_get(void)
{
	struct meta m;

	meta_init(&m);
	CU_ASSERT_PTR_NULL(meta_get(&m, "analysis"));
	CU_ASSERT_EQUAL(meta_set(&m, "analysis", "hotspots"), 0);
	CU_ASSERT_EQUAL(meta_set(&m, "argv.0", "./app"), 0);
	CU_ASSERT_STRING_EQUAL(meta_get(&m, "analysis"), "hotspots");
	CU_ASSERT_EQUAL(meta_set(&m, "analysis", "threading"), 0);
	CU_ASSERT_STRING_EQUAL(meta_get(&m, "analysis"), "threading");
	CU_ASSERT_EQUAL(m.n, 2);
	CU_ASSERT_PTR_NULL(meta_get(&m, "argv.1"));
	CU_ASSERT_PTR_NULL(meta_get(&m, NULL));
	meta_release(&m);
	CU_ASSERT_EQUAL(m.n, 0);
	CU_ASSERT_PTR_NULL(m.entries);
	/* Released is as good as initialized. */
	CU_ASSERT_EQUAL(meta_set(&m, "a", "b"), 0);
	meta_release(&m);
}

static void test_meta_set_copies(void)
{
	char key[] = "host", value[] = "node1";
	struct meta m;

	meta_init(&m);
	CU_ASSERT_EQUAL(meta_set(&m, key, value), 0);
	key[0] = 'x';
	value[0] = 'x';
	CU_ASSERT_STRING_EQUAL(meta_get(&m, "host"), "node1");
	meta_release(&m);
}

static void test_meta_setf(void)
{
	struct meta m;

	meta_init(&m);
	CU_ASSERT_EQUAL(meta_setf(&m, "pid", "%d", 4321), 0);
	CU_ASSERT_EQUAL(meta_setf(&m, "interval", "%.3f", 0.5), 0);
	CU_ASSERT_STRING_EQUAL(meta_get(&m, "pid"), "4321");
	CU_ASSERT_STRING_EQUAL(meta_get(&m, "interval"), "0.500");
	CU_ASSERT_EQUAL(meta_setf(&m, "Bad", "%d", 1), -EINVAL);
	meta_release(&m);
}

static void test_meta_bad_key(void)
{
	static const char *const bad[] = { "", "Analysis", "a b", "a=b", "a\nb", "é", "a/b" };
	struct meta m;
	size_t i;

	meta_init(&m);
	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++)
		CU_ASSERT_EQUAL(meta_set(&m, bad[i], "x"), -EINVAL);
	CU_ASSERT_EQUAL(meta_set(&m, NULL, "x"), -EINVAL);
	CU_ASSERT_EQUAL(meta_set(&m, "a", NULL), -EINVAL);
	CU_ASSERT_EQUAL(m.n, 0);
	CU_ASSERT_EQUAL(meta_set(&m, "a-b_c.9", "x"), 0);
	meta_release(&m);
}

static void test_meta_round_trip(void)
{
	static const char *const kv[][2] = {
		{ "analysis", "hotspots" },
		{ "argv.0", "./app" },
		{ "argv.1", "line one\nline two\n" },
		{ "backslash", "C:\\dir\\file\\" },
		{ "equals", "a=b=c" },
		{ "empty", "" },
		{ "tab", "\tx\ty\t" },
		{ "cr", "dos\r\n" },
		{ "escapes", "\\n is not a newline, \\\\ is two" },
		{ "hash", "#not a comment" },
		{ "spaces", "  padded  " },
		{ "utf8", "\xc2\xb5s \xe2\x86\x92 ok" },
		{ "ctrl", "\x01\x1b[0m" },
	};
	size_t n = sizeof(kv) / sizeof(kv[0]), i;
	struct meta out, in;

	meta_init(&out);
	meta_init(&in);
	for (i = 0; i < n; i++)
		CU_ASSERT_EQUAL_FATAL(meta_set(&out, kv[i][0], kv[i][1]), 0);
	CU_ASSERT_EQUAL_FATAL(meta_write_file(&out, path, 0600), 0);
	CU_ASSERT_EQUAL_FATAL(meta_read_file(&in, path), 0);
	CU_ASSERT_EQUAL_FATAL(in.n, n);
	for (i = 0; i < n; i++) {
		CU_ASSERT_STRING_EQUAL(in.entries[i].key, kv[i][0]);
		CU_ASSERT_STRING_EQUAL(in.entries[i].value, kv[i][1]);
		CU_ASSERT_PTR_NOT_NULL(meta_get(&in, kv[i][0]));
		if (meta_get(&in, kv[i][0]))
			CU_ASSERT_STRING_EQUAL(meta_get(&in, kv[i][0]), kv[i][1]);
	}
	meta_release(&out);
	meta_release(&in);
}

static void test_meta_file_format(void)
{
	struct meta m;
	char buf[256];

	meta_init(&m);
	meta_set(&m, "a", "1");
	meta_set(&m, "b", "x\ny");
	meta_set(&m, "c", "back\\slash\ttab\rcr");
	meta_set(&m, "d", "");
	meta_set(&m, "e", "k=v");
	CU_ASSERT_EQUAL_FATAL(meta_write_file(&m, path, 0600), 0);
	read_raw(buf, sizeof(buf));
	CU_ASSERT_STRING_EQUAL(buf, "a=1\nb=x\\ny\nc=back\\\\slash\\ttab\\rcr\nd=\ne=k=v\n");
	meta_release(&m);

	/* No entries, an empty file. */
	meta_init(&m);
	CU_ASSERT_EQUAL(meta_write_file(&m, path, 0600), 0);
	CU_ASSERT_EQUAL(read_raw(buf, sizeof(buf)), 0);
	CU_ASSERT_EQUAL(meta_read_file(&m, path), 0);
	CU_ASSERT_EQUAL(m.n, 0);
	meta_release(&m);
}

static void test_meta_read_comments_and_blank_lines(void)
{
	static const char text[] = "# written by hand\n\na=1\r\n  \n#b=2\nc=3";
	struct meta m;

	meta_init(&m);
	write_raw(text, sizeof(text) - 1);
	/* "  " is no entry: a line must be empty, a comment or key=value. */
	CU_ASSERT_EQUAL(meta_read_file(&m, path), -EINVAL);
	meta_release(&m);

	write_raw("# written by hand\n\na=1\r\n#b=2\nc=3", 32);
	meta_init(&m);
	CU_ASSERT_EQUAL(meta_read_file(&m, path), 0);
	CU_ASSERT_EQUAL(m.n, 2);
	CU_ASSERT_STRING_EQUAL(meta_get(&m, "a"), "1");
	CU_ASSERT_PTR_NULL(meta_get(&m, "b"));
	CU_ASSERT_STRING_EQUAL(meta_get(&m, "c"), "3");
	meta_release(&m);
}

static void test_meta_read_malformed(void)
{
	static const struct {
		const char *text;
		size_t len;
	} bad[] = {
		{ "a=1\nnovalue\n", 12 }, { "=x\n", 3 },           { "Bad=1\n", 6 },
		{ "a b=1\n", 6 },         { "a=\\x\n", 5 },        { "a=end\\\n", 7 },
		{ "a=end\\", 6 },         { "a=nul\0byte\n", 11 }, { "a=1\n\\n=2\n", 9 },
	};
	struct meta m;
	size_t i;

	for (i = 0; i < sizeof(bad) / sizeof(bad[0]); i++) {
		meta_init(&m);
		meta_set(&m, "kept", "yes");
		write_raw(bad[i].text, bad[i].len);
		CU_ASSERT_EQUAL(meta_read_file(&m, path), -EINVAL);
		/* Nothing of a malformed file is taken. */
		CU_ASSERT_EQUAL(m.n, 1);
		CU_ASSERT_STRING_EQUAL(meta_get(&m, "kept"), "yes");
		CU_ASSERT_PTR_NULL(meta_get(&m, "a"));
		meta_release(&m);
	}
}

static void test_meta_read_missing(void)
{
	char missing[192];
	struct meta m;

	meta_init(&m);
	snprintf(missing, sizeof(missing), "%s/none.meta", tmpdir);
	CU_ASSERT_EQUAL(meta_read_file(&m, missing), -ENOENT);
	CU_ASSERT_EQUAL(meta_read_file(&m, tmpdir), -EISDIR);
	meta_release(&m);
}

/* A FIFO, /dev/zero behind a link, a line or a file too long: refused, never waited on. */
static void test_meta_read_bounded(void)
{
	char fifo[192], link[192], big[192];
	struct meta m;
	FILE *f;
	size_t i;

	meta_init(&m);
	snprintf(fifo, sizeof(fifo), "%s/fifo.meta", tmpdir);
	snprintf(link, sizeof(link), "%s/zero.meta", tmpdir);
	snprintf(big, sizeof(big), "%s/big.meta", tmpdir);
	CU_ASSERT_FATAL(mkfifo(fifo, 0600) == 0);
	CU_ASSERT_EQUAL(meta_read_file(&m, fifo), -RESULT_ENOTREG);
	CU_ASSERT_FATAL(symlink("/dev/zero", link) == 0);
	CU_ASSERT_EQUAL(meta_read_file(&m, link), -ELOOP);
	f = fopen(big, "w");
	CU_ASSERT_FATAL(f != NULL);
	fputs("key=", f);
	for (i = 0; i < META_MAX_LINE; i++)
		putc('x', f);
	fputs("\n", f);
	fclose(f);
	CU_ASSERT_EQUAL(meta_read_file(&m, big), -E2BIG);
	CU_ASSERT_EQUAL(m.n, 0);
	unlink(fifo);
	unlink(link);
	unlink(big);
	meta_release(&m);
}

/* Written with exactly the mode asked for, whatever the umask. */
static void test_meta_write_mode(void)
{
	char file[192];
	struct meta m;
	struct stat st;
	mode_t old = umask(0);

	meta_init(&m);
	snprintf(file, sizeof(file), "%s/mode.meta", tmpdir);
	CU_ASSERT_EQUAL(meta_set(&m, "a", "b"), 0);
	CU_ASSERT_EQUAL(meta_write_file(&m, file, 0600), 0);
	umask(old);
	CU_ASSERT(stat(file, &st) == 0 && (st.st_mode & 0777) == 0600);
	unlink(file);
	meta_release(&m);
}

static void test_meta_read_adds_and_replaces(void)
{
	struct meta m;

	meta_init(&m);
	write_raw("a=1\nb=2\nb=3\n", 12);
	meta_set(&m, "a", "0");
	meta_set(&m, "z", "26");
	CU_ASSERT_EQUAL(meta_read_file(&m, path), 0);
	CU_ASSERT_EQUAL(m.n, 3);
	CU_ASSERT_STRING_EQUAL(meta_get(&m, "a"), "1");
	/* A repeated key: the last one wins. */
	CU_ASSERT_STRING_EQUAL(meta_get(&m, "b"), "3");
	CU_ASSERT_STRING_EQUAL(meta_get(&m, "z"), "26");
	meta_release(&m);
}

/* Temporary files of 1234.meta left in the directory. */
static size_t count_temporaries(void)
{
	DIR *d = opendir(tmpdir);
	struct dirent *e;
	size_t n = 0;

	if (!d)
		return 0;
	while ((e = readdir(d)))
		if (!strncmp(e->d_name, "1234.meta.", 10))
			n++;
	closedir(d);
	return n;
}

static void test_meta_write_replaces_atomically(void)
{
	char stale[192], missing[192];
	struct stat before, after;
	struct meta m;

	meta_init(&m);
	meta_set(&m, "v", "1");
	/* A temporary file that a crashed writer with our pid left behind is no obstacle. */
	snprintf(stale, sizeof(stale), "%s.tmp.%ld", path, (long)getpid());
	write_raw("junk", 4);
	CU_ASSERT_EQUAL_FATAL(rename(path, stale), 0);
	CU_ASSERT_EQUAL(meta_write_file(&m, path, 0600), 0);
	CU_ASSERT_EQUAL(count_temporaries(), 0);
	CU_ASSERT_EQUAL_FATAL(stat(path, &before), 0);

	meta_set(&m, "v", "2");
	CU_ASSERT_EQUAL(meta_write_file(&m, path, 0600), 0);
	CU_ASSERT_EQUAL_FATAL(stat(path, &after), 0);
	/* Replaced by rename(), not rewritten in place: a reader sees old or new, never half. */
	CU_ASSERT_NOT_EQUAL(before.st_ino, after.st_ino);
	CU_ASSERT_EQUAL(count_temporaries(), 0);
	meta_release(&m);

	meta_init(&m);
	CU_ASSERT_EQUAL(meta_read_file(&m, path), 0);
	CU_ASSERT_EQUAL(m.n, 1);
	CU_ASSERT_STRING_EQUAL(meta_get(&m, "v"), "2");

	snprintf(missing, sizeof(missing), "%s/no-such-dir/1.meta", tmpdir);
	CU_ASSERT_EQUAL(meta_write_file(&m, missing, 0600), -ENOENT);
	meta_release(&m);
}

UNIT_MAIN("meta", suite_init, suite_clean,
	  {
		  { "set_get", test_meta_set_get },
		  { "set_copies", test_meta_set_copies },
		  { "setf", test_meta_setf },
		  { "bad_key", test_meta_bad_key },
		  { "round_trip", test_meta_round_trip },
		  { "file_format", test_meta_file_format },
		  { "read_comments_and_blank_lines", test_meta_read_comments_and_blank_lines },
		  { "read_malformed", test_meta_read_malformed },
		  { "read_missing", test_meta_read_missing },
		  { "read_adds_and_replaces", test_meta_read_adds_and_replaces },
		  { "read_bounded", test_meta_read_bounded },
		  { "write_mode", test_meta_write_mode },
		  { "write_replaces_atomically", test_meta_write_replaces_atomically },
	  })
