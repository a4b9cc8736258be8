/* SPDX-License-Identifier: MIT */
/* The frame walker in-process against real interpreters: frames, lines, reuse, threads. */
#include "collector/agent/python/python.h"
#include "common/raw-python.h"
#include "finalizer/python/python.h"

#include "collector/agent/python/python-layout.h"

#include <dlfcn.h>
#include <glob.h>
#include <link.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/wait.h>
#include <time.h>
#include <unistd.h>

#include "tests/unit/python-test-lib.h"
#include "tests/unit/unit.h"

/*
 * For each shared build of a CPython the agent has a layout for (tests/pythons.py finds them)
 * a child process dlopen()s its libpython3.N.so, starts the
 * interpreter and runs a script that calls capture(), a C function of ours: from inside it we
 * call pyagent_capture() exactly as the signal handler will. The script writes what Python
 * itself says about the same instant (sys._getframe(), on the same source line) to a file;
 * the child decodes the records pyagent wrote with the finalizer's decoder and compares
 * every frame: qualified name, file, line, entry flag.
 */

typedef void *pyobj;
struct py_method_def {
	const char *name;
	pyobj (*meth)(pyobj, pyobj);
	int flags;
	const char *doc;
};
#define METH_NOARGS 0x0004

static struct {
	void (*initialize)(int);
	int (*run)(const char *);
	pyobj (*cfunction_new)(struct py_method_def *, pyobj, pyobj);
	pyobj (*add_module)(const char *);
	pyobj (*module_dict)(pyobj);
	int (*dict_set)(pyobj, const char *, pyobj);
	pyobj (*long_from)(long);
	void *(*new_interpreter)(void);
	void (*end_interpreter)(void *);
	void *(*swap)(void *);
	void *(*unchecked)(void);
} api;

static uintptr_t unchecked_tstate(void)
{
	return (uintptr_t)api.unchecked();
}

#define MAX_CAPTURES 4096
#define MAX_DEPTH    64

static struct pyagent_thread agent_thread, other_thread;
static struct raw_writer writer;
static uint8_t wbuf[1 << 20];
static struct raw_py_frame captured[MAX_CAPTURES][MAX_DEPTH];
static int captured_n[MAX_CAPTURES];
static bool captured_cut[MAX_CAPTURES];
static int ncaptures;
/* capture cost at two depths: from rec(0) (9 frames) and from deep() (20 frames) */
static double bench_ns[2], bench_own_ns[2];
static int bench_frames[2], bench_calls[2], bench_own_calls[2], nbench;
static int failures;

#define CHECK(cond, ...)                                                                           \
	do {                                                                                       \
		if (!(cond)) {                                                                     \
			failures++;                                                                \
			if (failures < 30) {                                                       \
				fprintf(stderr, "  %s:%d: ", __FILE__, __LINE__);                  \
				fprintf(stderr, __VA_ARGS__);                                      \
				fputc('\n', stderr);                                               \
			}                                                                          \
		}                                                                                  \
	} while (0)

/*
 * The same instant as an allocation of the thread's own captures it (pyagent_capture_pid(),
 * own): frames read in place must give exactly the guarded walk's frames.
 */
static void check_own(int k)
{
	struct raw_py_frame f[MAX_DEPTH];
	bool cut = false;
	int n = pyagent_capture_pid(&agent_thread, &writer, f, MAX_DEPTH, &cut, (int)getpid(),
				    true),
	    j;

	CHECK(n == captured_n[k] && cut == captured_cut[k],
	      "capture %d: in place %d frames (cut %d), guarded %d (cut %d)", k, n, cut,
	      captured_n[k], captured_cut[k]);
	for (j = 0; j < n && j < captured_n[k]; j++)
		CHECK(f[j].code_id == captured[k][j].code_id &&
			      f[j].offset == captured[k][j].offset &&
			      f[j].flags == captured[k][j].flags,
		      "capture %d frame %d: in place code %llu offset %u flags %#x, guarded %llu "
		      "%u %#x",
		      k, j, (unsigned long long)f[j].code_id, f[j].offset, f[j].flags,
		      (unsigned long long)captured[k][j].code_id, captured[k][j].offset,
		      captured[k][j].flags);
}

static pyobj capture_cb(pyobj self, pyobj unused)
{
	int k = ncaptures < MAX_CAPTURES ? ncaptures++ : MAX_CAPTURES - 1;

	captured_n[k] =
		pyagent_capture(&agent_thread, &writer, captured[k], MAX_DEPTH, &captured_cut[k]);
	check_own(k);
	return api.long_from(k);
}

static double cpu_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

/*
 * Cost of one capture at the caller's depth, every code object already known: CPU time of
 * this thread over many rounds, which other jobs on the machine do not inflate.
 */
static pyobj bench_cb(pyobj self, pyobj unused)
{
	struct raw_py_frame f[MAX_DEPTH];
	const int rounds = 1000;
	int i, k = nbench < 2 ? nbench++ : 1;
	double t0;

	bench_frames[k] = pyagent_capture(&agent_thread, &writer, f, MAX_DEPTH, NULL);
	t0 = cpu_ns();
	for (i = 0; i < rounds; i++)
		pyagent_capture(&agent_thread, &writer, f, MAX_DEPTH, NULL);
	bench_ns[k] = (cpu_ns() - t0) / rounds;
	bench_calls[k] = (int)agent_thread.calls; /* those of the last one: all described */
	t0 = cpu_ns();
	for (i = 0; i < rounds; i++)
		pyagent_capture_pid(&agent_thread, &writer, f, MAX_DEPTH, NULL, (int)getpid(),
				    true);
	bench_own_ns[k] = (cpu_ns() - t0) / rounds;
	bench_own_calls[k] = (int)agent_thread.calls;
	return api.long_from(0);
}

static void *no_state_thread(void *arg)
{
	struct raw_py_frame f[4];

	*(int *)arg = pyagent_capture(&other_thread, &writer, f, 4, NULL);
	return NULL;
}

static const char script_fmt[] =
	"import sys, threading\n"
	"out = open(%s, 'w')\n"
	"V = sys.version_info[1]\n"
	"ENTRY = {'<module>', 'level2', 'genfunc'}\n"
	"def expect(k, f, full=True, entries=True, j=0):\n"
	"    while f is not None:\n"
	"        c = f.f_code\n"
	"        name = getattr(c, 'co_qualname', c.co_name)\n"
	"        e = '?' if not entries else ('E' if V == 10 or c.co_name in ENTRY else '-')\n"
	"        out.write(f'F\\t{k}\\t{j}\\t{name}\\t{c.co_filename}\\t{f.f_lineno}\\t{e}\\n')\n"
	"        j += 1\n"
	"        f = f.f_back\n"
	"        if not full:\n"
	"            break\n"
	"    if full:\n"
	"        out.write(f'N\\t{k}\\t{j}\\n')\n"
	"def rec(n):\n"
	"    if n == 0:\n"
	"        k = capture(); expect(k, sys._getframe())\n"
	"        bench()\n"
	"        return\n"
	"    rec(n - 1)\n"
	"def genfunc():\n"
	"    rec(3)\n"
	"    yield 1\n"
	"class C:\n"
	"    def meth(self):\n"
	"        g = genfunc()\n"
	"        next(g)\n"
	"        f = lambda: capture()\n"
	"        k = f(); expect(k, sys._getframe(), entries=False, j=1)\n"
	"        me = sys._getframe()\n"
	"        lam = 'C.meth.<locals>.<lambda>' if V > 10 else '<lambda>'\n"
	"        out.write(f'F\\t{k}\\t0\\t{lam}\\t<string>\\t{me.f_lineno - 4}\\t?\\n')\n"
	"def level2(x):\n"
	"    def inner():\n"
	"        k = capture(); expect(k, sys._getframe())\n"
	"    inner()\n"
	"    C().meth()\n"
	"    return x\n"
	"def level1():\n"
	"    return list(map(level2, [1]))\n"
	"level1()\n"
	"def deep(n):\n"
	"    return bench() if n == 0 else deep(n - 1)\n"
	"deep(18)\n"
	"def tworker():\n"
	"    k = capture(); expect(k, sys._getframe(), entries=False)\n"
	"t = threading.Thread(target=tworker)\n"
	"t.start(); t.join()\n"
	"for i in range(%d):\n"
	"    ns = {'capture': capture}\n"
	"    exec(f'def f{i}():\\n    return capture()\\n', ns)\n"
	"    k = ns[f'f{i}']()\n"
	"    out.write(f'F\\t{k}\\t0\\tf{i}\\t<string>\\t2\\t?\\n')\n"
	"    del ns\n"
	"out.close()\n";

#define REUSE_ROUNDS 600

struct expected {
	int k, j, line;
	char name[256], file[512], entry;
};

static void check_captures(const char *expect_path, struct pycode_table *codes)
{
	FILE *f = fopen(expect_path, "r");
	char line[1024];
	int checked = 0;

	CHECK(f != NULL, "no expectations written");
	if (!f)
		return;
	while (fgets(line, sizeof(line), f)) {
		struct expected e;
		const struct pycode *c;
		const struct raw_py_frame *fr;
		int count, k;

		if (sscanf(line, "N\t%d\t%d", &k, &count) == 2) {
			CHECK(captured_n[k] == count, "capture %d: %d frames, python says %d", k,
			      captured_n[k], count);
			continue;
		}
		memset(&e, 0, sizeof(e));
		if (sscanf(line, "F\t%d\t%d\t%255[^\t]\t%511[^\t]\t%d\t%c", &e.k, &e.j, e.name,
			   e.file, &e.line, &e.entry) != 6) {
			CHECK(0, "bad expectation line '%s'", line);
			continue;
		}
		if (e.k >= ncaptures || captured_n[e.k] <= e.j) {
			CHECK(0, "capture %d: frame %d (%s) missing: n=%d", e.k, e.j, e.name,
			      e.k < ncaptures ? captured_n[e.k] : -99);
			continue;
		}
		fr = &captured[e.k][e.j];
		c = pycode_table_get(codes, fr->code_id);
		if (!c) {
			CHECK(0, "capture %d frame %d: code id %llu never described", e.k, e.j,
			      (unsigned long long)fr->code_id);
			continue;
		}
		CHECK(strcmp(c->name, e.name) == 0, "capture %d frame %d: name '%s', want '%s'",
		      e.k, e.j, c->name, e.name);
		CHECK(strcmp(c->filename, e.file) == 0, "capture %d frame %d: file '%s', want '%s'",
		      e.k, e.j, c->filename, e.file);
		CHECK(pycode_line(c, fr->offset) == e.line,
		      "capture %d frame %d (%s): line %d, want %d", e.k, e.j, e.name,
		      pycode_line(c, fr->offset), e.line);
		if (e.entry != '?')
			CHECK(!!(fr->flags & RAW_PY_FRAME_ENTRY) == (e.entry == 'E'),
			      "capture %d frame %d (%s): entry flag %d, want %c", e.k, e.j, e.name,
			      !!(fr->flags & RAW_PY_FRAME_ENTRY), e.entry);
		checked++;
	}
	fclose(f);
	CHECK(checked > REUSE_ROUNDS, "only %d frames checked", checked);
	printf("    %d frames checked against python's own view\n", checked);
}

/* Read the stream back: code records into the table; count addresses described twice. */
static void load_codes(int fd, struct pycode_table *codes, int *reused)
{
	off_t end = lseek(fd, 0, SEEK_END);
	uint8_t *data = malloc((size_t)end);
	struct raw_reader *r;
	struct raw_record rec;
	uint64_t *addrs = calloc(1 << 16, sizeof(uint64_t));
	size_t naddr = 0, i;
	int err;

	*reused = 0;
	CHECK(data && pread(fd, data, (size_t)end, 0) == end, "cannot read the stream back");
	r = raw_reader_open_mem(data, (size_t)end, &err);
	CHECK(r != NULL, "stream does not open: %d", err);
	while (r && raw_reader_next(r, &rec) == 1) {
		struct raw_py_code c;

		if (rec.type != RAW_REC_PY_CODE)
			continue;
		CHECK(raw_py_read_code(rec.payload, rec.payload_len, &c) == 0, "bad code record");
		CHECK(pycode_table_add_record(codes, rec.payload, rec.payload_len) == 0,
		      "code record refused");
		for (i = 0; i < naddr; i++)
			if (addrs[i] == c.addr) {
				(*reused)++;
				break;
			}
		if (i == naddr && naddr < (1 << 16))
			addrs[naddr++] = c.addr;
	}
	if (r)
		CHECK(raw_reader_stats(r)->records_malformed == 0, "malformed records");
	raw_reader_free(r);
	free(addrs);
	free(data);
}

static int find_bias(struct dl_phdr_info *info, size_t size, void *arg)
{
	uintptr_t *want = arg;

	if (info->dlpi_name && strstr(info->dlpi_name, "libpython3.")) {
		*want = info->dlpi_addr;
		return 1;
	}
	return 0;
}

#define SYM(field, name)                                                                           \
	do {                                                                                       \
		*(void **)&api.field = dlsym(h, name);                                             \
		if (!api.field) {                                                                  \
			fprintf(stderr, "  no %s\n", name);                                        \
			return 1;                                                                  \
		}                                                                                  \
	} while (0)

/* The child: one interpreter. Returns the number of failed checks (1 for setup errors). */
static int run_version(const struct pytest_python *py)
{
	const char *prefix = py->prefix;
	int minor = py->minor;
	static struct py_method_def cap_def = { "capture", capture_cb, METH_NOARGS, NULL };
	static struct py_method_def bench_def = { "bench", bench_cb, METH_NOARGS, NULL };
	const char *lib = py->libpython;
	char expect_path[64], script[8192], quoted[80];
	struct raw_file_header hdr;
	struct pycode_table codes;
	struct raw_py_frame f[4];
	uintptr_t bias = 0;
	pthread_t th;
	pyobj main_dict;
	void *h, *mainstate, *sub;
	int fd, ret, no_state = 0, reused = 0, i;

	setenv("PYTHONHOME", prefix, 1);
	setenv("PYTHONDONTWRITEBYTECODE", "1", 1);
	h = dlopen(lib, RTLD_NOW | RTLD_GLOBAL);
	if (!h) {
		fprintf(stderr, "  dlopen: %s\n", dlerror());
		return 1;
	}
	SYM(initialize, "Py_InitializeEx");
	SYM(run, "PyRun_SimpleString");
	SYM(cfunction_new, "PyCFunction_NewEx");
	SYM(add_module, "PyImport_AddModule");
	SYM(module_dict, "PyModule_GetDict");
	SYM(dict_set, "PyDict_SetItemString");
	SYM(long_from, "PyLong_FromLong");
	SYM(new_interpreter, "Py_NewInterpreter");
	SYM(end_interpreter, "Py_EndInterpreter");
	SYM(swap, "PyThreadState_Swap");
	/* as the agent gives it for an allocation's own walk (agent-memory-python.c) */
	*(void **)&api.unchecked = dlsym(h, "PyThreadState_GetUnchecked");
	if (!api.unchecked)
		*(void **)&api.unchecked = dlsym(h, "_PyThreadState_UncheckedGet");
	if (api.unchecked)
		pyagent_key_tstate_fn(unchecked_tstate);
	dl_iterate_phdr(find_bias, &bias);

	/* before the interpreter starts, as the agent does at dlopen time */
	ret = pyagent_on_module(lib, bias);
	CHECK(ret == PYAGENT_FOUND, "pyagent_on_module: %d", ret);
	CHECK(pyagent_version() == RAW_PY_VERSION(3, minor), "version %x",
	      (unsigned)pyagent_version());
	if (ret != PYAGENT_FOUND)
		return failures;

	fd = memfd_create("pywalk", 0);
	raw_header_init(&hdr, getpid(), getpid(), -1, "test", 1000000, RAW_SAMPLE_THREAD_CPU);
	CHECK(raw_writer_init(&writer, fd, wbuf, sizeof(wbuf), &hdr) == 0, "writer");
	pyagent_thread_init(&agent_thread);
	pyagent_thread_init(&other_thread);

	/* no interpreter running yet: no Python frame, no crash, and no note, as there is no
	   Python frame to miss (a native program linking libpython: python-embedded) */
	ret = pyagent_capture(&agent_thread, &writer, f, 4, NULL);
	CHECK(ret == 0, "capture before start: %d", ret);

	api.initialize(0);
	main_dict = api.module_dict(api.add_module("__main__"));
	api.dict_set(main_dict, "capture", api.cfunction_new(&cap_def, NULL, NULL));
	api.dict_set(main_dict, "bench", api.cfunction_new(&bench_def, NULL, NULL));

	snprintf(expect_path, sizeof(expect_path), "/tmp/pywalk-%d.txt", (int)getpid());
	snprintf(quoted, sizeof(quoted), "'%s'", expect_path);
	snprintf(script, sizeof(script), script_fmt, quoted, REUSE_ROUNDS);
	CHECK(api.run(script) == 0, "the script failed");

	/* a thread Python never saw */
	pthread_create(&th, NULL, no_state_thread, &no_state);
	pthread_join(th, NULL);
	CHECK(no_state == -RAW_PY_NOTE_NO_THREAD_STATE, "thread without state: %d", no_state);

	/* sub-interpreters: a note, then back to normal once it is gone */
	mainstate = api.swap(NULL);
	api.swap(mainstate);
	sub = api.new_interpreter();
	CHECK(sub != NULL, "Py_NewInterpreter failed");
	ret = pyagent_capture(&other_thread, &writer, f, 4, NULL);
	CHECK(ret == -RAW_PY_NOTE_SUBINTERPRETER, "capture in a sub-interpreter: %d", ret);
	api.end_interpreter(sub);
	api.swap(mainstate);
	/* 3.10 and 3.13 leave the main thread's PyGILState key cleared after
	   Py_EndInterpreter(): no state, as PyGILState_GetThisThreadState() itself answers */
	ret = pyagent_capture(&other_thread, &writer, f, 4, NULL);
	CHECK(ret == 0 || ret == -RAW_PY_NOTE_NO_THREAD_STATE,
	      "capture with no python frames running: %d", ret);

	CHECK(raw_writer_flush(&writer) == 0, "flush");
	pycode_table_init(&codes);
	load_codes(fd, &codes, &reused);
	check_captures(expect_path, &codes);
	printf("    %d captures, %llu code records, %d addresses described again (reuse), "
	       "%d failed code reads\n",
	       ncaptures, (unsigned long long)agent_thread.codes_written, reused,
	       (int)agent_thread.codes_failed);
	for (i = 0; i < 2; i++) {
		printf("    capture cost: %.0f ns CPU for %d frames, %d system calls; %.0f ns, "
		       "%d calls in place (an allocation's)\n",
		       bench_ns[i], bench_frames[i], bench_calls[i], bench_own_ns[i],
		       bench_own_calls[i]);
		/* in place, only the code objects are copied: one call when all are known */
		CHECK(bench_own_calls[i] < bench_calls[i] && bench_own_calls[i] <= 1,
		      "in place: %d system calls, guarded %d", bench_own_calls[i], bench_calls[i]);
	}
	CHECK(bench_frames[0] >= 8, "bench saw %d frames", bench_frames[0]);
	CHECK(bench_frames[1] == 20, "deep bench saw %d frames", bench_frames[1]);
	/* 600 functions made and dropped: their memory is reused, and must not confuse us */
	CHECK(reused > 0, "no code object address was reused: the test proves nothing");
	pycode_table_release(&codes);
	unlink(expect_path);
	return failures;
}

static struct pytest_python pythons[16];
static size_t npythons, nwalked;

/*
 * An interpreter linked into its executable may still ship its shared library beside it
 * (Debian's libpython3.N package): prefix/lib/libpython3.N.so.1.0 or prefix/lib/<triplet>/.
 * Fills py->libpython; false when there is none.
 */
static bool find_shared_library(struct pytest_python *py)
{
	char pat[PATH_MAX + 64];
	glob_t g;
	bool found = false;

	snprintf(pat, sizeof(pat), "%.4000s/lib{,/*}/libpython3.%d.so.1.0", py->prefix, py->minor);
	if (glob(pat, GLOB_BRACE, NULL, &g) == 0) {
		snprintf(py->libpython, sizeof(py->libpython), "%s", g.gl_pathv[0]);
		found = true;
		globfree(&g);
	}
	return found;
}

/*
 * The loader an interpreter runs under when its wrapper starts it through an explicit one
 * (ROOT/lib/ld-linux-x86-64.so.2 --library-path ...: a C library newer than this system's,
 * which the library needs too), into loader; "" when it runs under the system's own.
 */
static void interpreter_loader(const struct pytest_python *py, char *loader, size_t cap)
{
	char cmd[PATH_MAX + 128];
	FILE *p;

	loader[0] = 0;
	snprintf(cmd, sizeof(cmd),
		 "'%s' -c \"import os; print(os.readlink('/proc/self/exe'))\" 2>/dev/null",
		 py->exe);
	p = popen(cmd, "r");
	if (!p)
		return;
	if (fgets(loader, (int)cap, p))
		loader[strcspn(loader, "\n")] = 0;
	pclose(p);
	if (!strstr(loader, "/ld-linux") || strcmp(loader, py->binary) == 0)
		loader[0] = 0;
}

/* True for an interpreter this test can load and the agent can walk. */
static bool walkable(struct pytest_python *py)
{
	return pylayout_find(py->minor) && (py->shared || find_shared_library(py));
}

/*
 * Run the child in a new image under the interpreter's loader: this test program, linked
 * against this system's libraries, runs with the interpreter's newer C library.
 */
static int run_under_loader(const struct pytest_python *py, const char *loader)
{
	char libdir[PATH_MAX], self[PATH_MAX], minor[16], *slash;
	ssize_t n = readlink("/proc/self/exe", self, sizeof(self) - 1);

	if (n < 0)
		return 1;
	self[n] = 0;
	snprintf(libdir, sizeof(libdir), "%s", loader);
	slash = strrchr(libdir, '/');
	*slash = 0;
	snprintf(minor, sizeof(minor), "%d", py->minor);
	execl(loader, loader, "--library-path", libdir, self, "--child", minor, py->prefix,
	      py->libpython, (char *)NULL);
	perror("execl");
	return 1;
}

static void test_python_walk_each_version(void)
{
	size_t i;

	for (i = 0; i < npythons; i++) {
		struct pytest_python *py = &pythons[i];
		char loader[PATH_MAX];
		int status = 0;
		pid_t pid;

		if (!walkable(py))
			continue;
		interpreter_loader(py, loader, sizeof(loader));
		printf("\n  python 3.%d.%d (%s%s%s)\n", py->minor, py->micro, py->libpython,
		       loader[0] ? " under " : "", loader);
		fflush(stdout);
		pid = fork();
		CU_ASSERT_FATAL(pid >= 0);
		if (pid == 0) {
			int bad = loader[0] ? run_under_loader(py, loader) : run_version(py);

			fflush(stdout);
			_exit(bad ? 1 : 0);
		}
		waitpid(pid, &status, 0);
		CU_ASSERT(WIFEXITED(status) && WEXITSTATUS(status) == 0);
		if (!WIFEXITED(status))
			printf("    child died with signal %d\n", WTERMSIG(status));
		nwalked++;
	}
}

int main(int argc, char **argv)
{
	static const struct unit_test tests[] = {
		{ "walk in-process, every installed version", test_python_walk_each_version },
		{ NULL, NULL },
	};
	char root[PATH_MAX];
	size_t i, n = 0;
	int rc;

	/* the child of run_under_loader(): one interpreter, in this image */
	if (argc == 5 && strcmp(argv[1], "--child") == 0) {
		struct pytest_python py = { .minor = atoi(argv[2]), .shared = true };

		snprintf(py.prefix, sizeof(py.prefix), "%s", argv[3]);
		snprintf(py.libpython, sizeof(py.libpython), "%s", argv[4]);
		rc = run_version(&py);
		fflush(stdout);
		/* as the forked children: the interpreter is left running, not finalized */
		_exit(rc ? 1 : 0);
	}
	if (pytest_init(__FILE__, root, pythons, 16, &npythons))
		return 77;
	for (i = 0; i < npythons; i++)
		n += walkable(&pythons[i]);
	if (n == 0) {
		printf("skipped: no shared build (libpython3.N.so) of a CPython the agent knows "
		       "among the %zu interpreters tests/pythons.py found (add one with "
		       "PCOLLECT_TEST_PYTHONS)\n",
		       npythons);
		return 77;
	}
	rc = unit_run("python-walk", tests, NULL, NULL);
	if (rc == 0 && nwalked != n) {
		printf("python-walk: %zu of %zu interpreters walked\n", nwalked, n);
		return 1;
	}
	return rc;
}
