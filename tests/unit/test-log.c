/* SPDX-License-Identifier: MIT */
/* Unit tests of common/log.c: the message format on stderr, levels, and die()'s exit code. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/resource.h>
#include <sys/wait.h>
#include <unistd.h>

#include "common/log.h"
#include "tests/unit/unit.h"

static char tmpdir[] = "/tmp/test-log.XXXXXX";
static char capture_path[64];
static int saved_stderr = -1;

/* Send stderr to a file until capture_end() returns what was written. */
static void capture_begin(void)
{
	int fd;

	fflush(stderr);
	snprintf(capture_path, sizeof(capture_path), "%s/stderr", tmpdir);
	fd = open(capture_path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0600);
	CU_ASSERT_FATAL(fd >= 0);
	saved_stderr = dup(2);
	CU_ASSERT_FATAL(saved_stderr >= 0);
	CU_ASSERT_FATAL(dup2(fd, 2) == 2);
	close(fd);
}

static void read_file(const char *path, char *buf, size_t size)
{
	FILE *f = fopen(path, "r");
	size_t n = 0;

	if (f) {
		n = fread(buf, 1, size - 1, f);
		fclose(f);
	}
	buf[n] = '\0';
}

static void capture_end(char *buf, size_t size)
{
	fflush(stderr);
	dup2(saved_stderr, 2);
	close(saved_stderr);
	saved_stderr = -1;
	read_file(capture_path, buf, size);
}

static int suite_init(void)
{
	return mkdtemp(tmpdir) ? 0 : -1;
}

static int suite_clean(void)
{
	return unit_remove_tree(tmpdir);
}

static void test_log_error_format(void)
{
	char out[512];

	log_set_tool("pcollect");
	log_set_level(0);
	capture_begin();
	log_error("cannot create result directory '%s': %s", "res", strerror(EACCES));
	capture_end(out, sizeof(out));
	CU_ASSERT_STRING_EQUAL(
		out, "pcollect: cannot create result directory 'res': Permission denied\n");
}

static void test_log_warn_info_debug_format(void)
{
	char out[512];

	log_set_tool("pfinalize");
	log_set_level(1);
	capture_begin();
	log_warn("no samples in '%s'", "res/raw/1.1.praw");
	log_info("finalizing '%s'", "res");
	log_debug("%d streams", 3);
	capture_end(out, sizeof(out));
	CU_ASSERT_STRING_EQUAL(out, "pfinalize: warning: no samples in 'res/raw/1.1.praw'\n"
				    "pfinalize: finalizing 'res'\n"
				    "pfinalize: debug: 3 streams\n");
	log_set_level(0);
}

/* A file's LOG_DOMAIN names the subject of its debug lines. */
static void test_log_debug_domain(void)
{
	char out[512];

	log_set_tool("pfinalize");
	log_set_level(1);
	CU_ASSERT(log_debug_on());
	capture_begin();
	log_debug_in("module", "'%s': tried '%s'", "libm.so.6", "/lib/libm.so.6");
	log_debug_in(NULL, "no domain");
	capture_end(out, sizeof(out));
	CU_ASSERT_STRING_EQUAL(out,
			       "pfinalize: debug: module: 'libm.so.6': tried '/lib/libm.so.6'\n"
			       "pfinalize: debug: no domain\n");
	log_set_level(0);
	CU_ASSERT(!log_debug_on());
}

static void test_log_quiet_shows_errors_only(void)
{
	char out[512];

	log_set_tool("preport");
	log_set_level(-1);
	CU_ASSERT_EQUAL(log_level(), -1);
	capture_begin();
	log_warn("hidden");
	log_info("hidden");
	log_debug("hidden");
	log_error("shown");
	capture_end(out, sizeof(out));
	CU_ASSERT_STRING_EQUAL(out, "preport: shown\n");
	log_set_level(0);
}

static void test_log_normal_hides_debug(void)
{
	char out[512];

	log_set_tool("preport");
	log_set_level(0);
	capture_begin();
	log_debug("hidden");
	log_info("shown");
	capture_end(out, sizeof(out));
	CU_ASSERT_STRING_EQUAL(out, "preport: shown\n");
}

static void test_log_level_clamped(void)
{
	log_set_level(5);
	CU_ASSERT_EQUAL(log_level(), 1);
	log_set_level(-7);
	CU_ASSERT_EQUAL(log_level(), -1);
	log_set_level(0);
	CU_ASSERT_EQUAL(log_level(), 0);
}

static void test_log_tool_default(void)
{
	log_set_tool(NULL);
	CU_ASSERT_STRING_EQUAL(log_tool(), program_invocation_short_name);
	log_set_tool("pcollect");
	CU_ASSERT_STRING_EQUAL(log_tool(), "pcollect");
}

static void test_log_long_message_whole(void)
{
	static char msg[5000], out[6000], want[6000];

	memset(msg, 'x', sizeof(msg) - 1);
	msg[sizeof(msg) - 1] = '\0';
	log_set_tool("pcollect");
	capture_begin();
	log_error("%s", msg);
	capture_end(out, sizeof(out));
	snprintf(want, sizeof(want), "pcollect: %s\n", msg);
	CU_ASSERT_STRING_EQUAL(out, want);
}

static void test_log_keeps_errno(void)
{
	char out[512];

	log_set_tool("pcollect");
	capture_begin();
	errno = ENOENT;
	log_error("x");
	CU_ASSERT_EQUAL(errno, ENOENT);
	capture_end(out, sizeof(out));
}

/* Run fn in a child with stderr in a file; return its exit status and what it wrote. */
static int run_child(void (*fn)(void), char *out, size_t size)
{
	int status = -1;
	pid_t pid;

	fflush(NULL);
	snprintf(capture_path, sizeof(capture_path), "%s/stderr", tmpdir);
	pid = fork();
	if (pid == 0) {
		int fd = open(capture_path, O_WRONLY | O_CREAT | O_TRUNC, 0600);

		if (fd < 0 || dup2(fd, 2) != 2)
			_exit(99);
		fn();
		_exit(98); /* not reached: fn dies */
	}
	if (pid < 0 || waitpid(pid, &status, 0) != pid)
		return -1;
	read_file(capture_path, out, size);
	return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

static void child_die_usage(void)
{
	log_set_tool("pcollect");
	die(EXIT_USAGE, "unknown option '%s'", "-colect");
}

static void child_die_errno(void)
{
	log_set_tool("pfinalize");
	die_errno(EXIT_RUNTIME, ENOENT, "cannot open sample stream '%s'", "res/raw/1.2.praw");
}

static void child_die_errno_negative(void)
{
	log_set_tool("pfinalize");
	die_errno(3, -EACCES, "cannot open '%s'", "x");
}

static void child_bug(void)
{
	struct rlimit none = { 0, 0 };

	setrlimit(RLIMIT_CORE, &none); /* the abort is expected: no core file */
	log_set_tool("pfinalize");
	BUG("every address was resolved (%d left)", 3);
}

static void test_log_bug_names_invariant_and_aborts(void)
{
	static const char self[] = "tests/unit/test-log.c";
	char out[512], file[256] = "", rest[256] = "";
	size_t n;
	int line = 0;

	/* Killed by SIGABRT: run_child() sees no exit code. */
	CU_ASSERT_EQUAL(run_child(child_bug, out, sizeof(out)), -1);
	CU_ASSERT_EQUAL(sscanf(out, "pfinalize: BUG: %255[^:]:%d: %255[^\n]", file, &line, rest),
			3);
	/*
	 * The file as the compiler named it, less the build directory's "../": the path in the
	 * source tree when the build directory is inside it, the absolute path when it is not.
	 */
	n = strlen(file);
	CU_ASSERT(strncmp(file, "../", 3) != 0);
	CU_ASSERT(n >= sizeof(self) - 1 && !strcmp(file + n - (sizeof(self) - 1), self) &&
		  (n == sizeof(self) - 1 || file[n - sizeof(self)] == '/'));
	CU_ASSERT(line > 0);
	CU_ASSERT_STRING_EQUAL(rest, "every address was resolved (3 left)");
}

/* The entry points' results map to exit codes: usage is its own value, never an errno. */
static void test_log_exit_code(void)
{
	CU_ASSERT_EQUAL(log_exit_code(0), EXIT_OK);
	CU_ASSERT_EQUAL(log_exit_code(-ERR_USAGE), EXIT_USAGE);
	CU_ASSERT_EQUAL(log_exit_code(-ENOMEM), EXIT_RUNTIME);
	CU_ASSERT_EQUAL(log_exit_code(-ENOTDIR), EXIT_RUNTIME);
	CU_ASSERT_EQUAL(log_exit_code(-EINVAL), EXIT_RUNTIME);
	CU_ASSERT(ERR_USAGE > 4095); /* above every Linux errno (MAX_ERRNO) */
}

static void test_log_die_exit_code(void)
{
	char out[512];

	CU_ASSERT_EQUAL(run_child(child_die_usage, out, sizeof(out)), 2);
	CU_ASSERT_STRING_EQUAL(out, "pcollect: unknown option '-colect'\n");
}

static void test_log_die_errno_appends_cause(void)
{
	char out[512];

	CU_ASSERT_EQUAL(run_child(child_die_errno, out, sizeof(out)), 1);
	CU_ASSERT_STRING_EQUAL(
		out, "pfinalize: cannot open sample stream 'res/raw/1.2.praw': No such file or "
		     "directory\n");
	CU_ASSERT_EQUAL(run_child(child_die_errno_negative, out, sizeof(out)), 3);
	CU_ASSERT_STRING_EQUAL(out, "pfinalize: cannot open 'x': Permission denied\n");
}

int main(void)
{
	static const struct unit_test tests[] = {
		{ "error_format", test_log_error_format },
		{ "warn_info_debug_format", test_log_warn_info_debug_format },
		{ "quiet_shows_errors_only", test_log_quiet_shows_errors_only },
		{ "normal_hides_debug", test_log_normal_hides_debug },
		{ "level_clamped", test_log_level_clamped },
		{ "tool_default", test_log_tool_default },
		{ "long_message_whole", test_log_long_message_whole },
		{ "keeps_errno", test_log_keeps_errno },
		{ "die_exit_code", test_log_die_exit_code },
		{ "die_errno_appends_cause", test_log_die_errno_appends_cause },
		{ "bug_names_invariant_and_aborts", test_log_bug_names_invariant_and_aborts },
		{ "exit_code", test_log_exit_code },
		{ "debug_domain", test_log_debug_domain },
		{ NULL, NULL },
	};

	return unit_run("log", tests, suite_init, suite_clean);
}
