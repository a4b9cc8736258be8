/* SPDX-License-Identifier: MIT */
/* pyagent without an interpreter: guarded reads, discovery, and walks over forged frames. */
#include "collector/agent/python/python-private.h"
#include "collector/agent/python/python.h"
#include "common/hash.h"
#include "common/raw-python.h"

#include <errno.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <time.h>
#include <unistd.h>

#include "tests/unit/python-test-lib.h"
#include "tests/unit/unit.h"

static struct pytest_python pythons[16];
static size_t npythons;

/* The newest interpreter found below 3.below that is linked into its executable (shared
   false) or runs from a libpython, of a version the agent knows (known true) or not. */
static const struct pytest_python *find_python(bool shared, bool known, int below)
{
	const struct pytest_python *best = NULL;
	size_t i;

	for (i = 0; i < npythons; i++) {
		const struct pytest_python *py = &pythons[i];

		if (py->shared == shared && (pylayout_find(py->minor) != NULL) == known &&
		    py->minor < below && (!best || py->minor > best->minor))
			best = py;
	}
	return best;
}

static double now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return ts.tv_sec * 1e9 + ts.tv_nsec;
}

static void test_python_agent_guarded_read(void)
{
	long page = sysconf(_SC_PAGESIZE);
	uint8_t *m = mmap(NULL, (size_t)page * 3, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	uint8_t buf[256];
	const int rounds = 100000;
	double t0, t1;
	int i;

	CU_ASSERT_FATAL(m != MAP_FAILED);
	memset(m, 0x5a, (size_t)page * 3);
	CU_ASSERT(pyagent_read(buf, (uintptr_t)m, 64) == 0 && buf[63] == 0x5a);
	/* a hole in the middle, a protected page, nothing at all, NULL, wrapping around */
	munmap(m + page, (size_t)page);
	errno = 1234;
	CU_ASSERT(pyagent_read(buf, (uintptr_t)(m + page), 8) == -1);
	CU_ASSERT(errno == 1234); /* the handler's errno is the program's */
	CU_ASSERT(pyagent_read(buf, (uintptr_t)(m + page - 8), 16) == -1);
	CU_ASSERT(pyagent_read(buf, (uintptr_t)(m + page - 8), 8) == 0);
	mprotect(m + 2 * page, (size_t)page, PROT_NONE);
	CU_ASSERT(pyagent_read(buf, (uintptr_t)(m + 2 * page), 8) == -1);
	CU_ASSERT(pyagent_read(buf, 0, 8) == -1);
	CU_ASSERT(pyagent_read(buf, 16, 8) == -1);
	CU_ASSERT(pyagent_read(buf, UINTPTR_MAX - 4, 8) == -1);
	CU_ASSERT(pyagent_read(buf, 0xdead00000000ull, 8) == -1);
	munmap(m, (size_t)page);
	munmap(m + 2 * page, (size_t)page);

	t0 = now_ns();
	for (i = 0; i < rounds; i++)
		pyagent_read(buf, (uintptr_t)&rounds, 8);
	t1 = now_ns();
	for (i = 0; i < rounds; i++)
		pyagent_read(buf, (uintptr_t)buf + 128, 128);
	printf("\n    guarded read: %.0f ns for 8 bytes, %.0f ns for 128 bytes", (t1 - t0) / rounds,
	       (now_ns() - t1) / rounds);
}

/*
 * The reads a sample is made of: a batch stops at a bad request and goes on after it, more
 * requests than one call takes are all read, a run copied around an object stops at the
 * first unreadable page and serves what it holds, and nothing outside a run is taken from it.
 */
static void test_python_agent_batched_reads(void)
{
	long page = sysconf(_SC_PAGESIZE);
	uint8_t *m = mmap(NULL, (size_t)page * 4, PROT_READ | PROT_WRITE,
			  MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	struct pymem *mem = calloc(1, sizeof(*mem));
	struct pyread_req req[150];
	uint64_t got[150], v;
	size_t i, ok;

	CU_ASSERT_FATAL(m != MAP_FAILED && mem);
	for (i = 0; i < (size_t)page * 4 / 8; i++)
		((uint64_t *)m)[i] = i;
	munmap(m + page, (size_t)page); /* pages 0, 2, 3 readable */
	pymem_reset(mem, (int)getpid());
	for (i = 0; i < 150; i++) {
		size_t word = i < 75 ? i : (size_t)(2 * page) / 8 + i;

		req[i] = (struct pyread_req){ (uintptr_t)(m + word * 8), 8, &got[i], false };
	}
	req[30].addr = 0;                          /* invalid */
	req[70].addr = (uintptr_t)(m + page + 64); /* in the hole */
	req[140].addr = (uintptr_t)(m + page - 4); /* runs into the hole */
	ok = pymem_batch(mem, req, 150);
	CU_ASSERT(ok == 147);
	for (i = 0; i < 150; i++) {
		bool bad = i == 30 || i == 70 || i == 140;

		CU_ASSERT(req[i].ok == !bad);
		if (req[i].ok)
			CU_ASSERT(got[i] == (uintptr_t)(req[i].addr - (uintptr_t)m) / 8);
	}
	CU_ASSERT(mem->calls <= 5);

	/* a run copied downwards from page 3 stops at the hole, and serves page 2 */
	pymem_reset(mem, (int)getpid());
	CU_ASSERT(pymem_read(mem, &v, (uintptr_t)(m + 3 * page + 8), 8, (size_t)page * 3, -1) == 0);
	CU_ASSERT(v == (uint64_t)(3 * page + 8) / 8 && mem->calls == 1 && mem->nruns == 1);
	CU_ASSERT(mem->run[0].lo == (uintptr_t)(m + 2 * page));
	CU_ASSERT(pymem_read(mem, &v, (uintptr_t)(m + 2 * page + 16), 8, 0, 0) == 0);
	CU_ASSERT(v == (uint64_t)(2 * page + 16) / 8 && mem->calls == 1);
	/* page 0 is not in it: a read of its own */
	CU_ASSERT(pymem_read(mem, &v, (uintptr_t)(m + 8), 8, 0, 0) == 0);
	CU_ASSERT(v == 1 && mem->calls == 2);
	/* upwards from page 0: the run ends at the hole; the hole itself fails */
	CU_ASSERT(pymem_read(mem, &v, (uintptr_t)(m + page - 8), 8, (size_t)page * 2, 1) == 0);
	CU_ASSERT(pymem_read(mem, &v, (uintptr_t)(m + page + 8), 8, 0, 0) == -1);
	CU_ASSERT(pymem_read(mem, &v, (uintptr_t)(m + page - 4), 8, 0, 0) == -1);
	munmap(m, (size_t)page);
	munmap(m + 2 * page, (size_t)page * 2);
	free(mem);
}

static void test_python_agent_discovery(void)
{
	struct pyagent_thread *t = calloc(1, sizeof(*t));
	const struct pytest_python *py;
	struct raw_py_frame f[4];
	int ret;

	pyagent_reset();
	CU_ASSERT(!pyagent_active());
	CU_ASSERT(pyagent_on_module("/nonexistent/libpython3.12.so", 0) == -ENOENT);
	CU_ASSERT(pyagent_on_module("/etc/hostname", 0) == PYAGENT_NOT_PYTHON);
	CU_ASSERT(pyagent_on_module("/proc/self/exe", 0) == PYAGENT_NOT_PYTHON);
	CU_ASSERT(!pyagent_active());
	py = find_python(false, true, 100);
	if (py) {
		/* the interpreter linked into the executable; Py_Version read from the file */
		ret = pyagent_on_module(py->binary, 0x555555554000ull);
		CU_ASSERT(ret == PYAGENT_FOUND);
		CU_ASSERT(pyagent_version() == RAW_PY_VERSION(3, py->minor));
		CU_ASSERT(pyagent_rt.runtime > 0x555555554000ull);
		/* first interpreter wins */
		CU_ASSERT(pyagent_on_module(py->binary, 0) == PYAGENT_NOT_PYTHON);
		pyagent_reset();
	} else {
		printf("\n    no interpreter linked into its executable: executable discovery not "
		       "tested");
	}
	/* 3.10 under a name that does not say so: the PY_VERSION string tells (no Py_Version) */
	py = find_python(true, true, 11);
	if (py && py->minor == 10) {
		char tmp[64];

		snprintf(tmp, sizeof(tmp), "/tmp/pcollect-libapp-%d.so", (int)getpid());
		CU_ASSERT(symlink(py->libpython, tmp) == 0);
		CU_ASSERT(pyagent_on_module(tmp, 0) == PYAGENT_FOUND);
		CU_ASSERT(pyagent_version() == RAW_PY_VERSION(3, 10));
		unlink(tmp);
		pyagent_reset();
	} else {
		printf("\n    no shared 3.10: discovery by the PY_VERSION string not tested");
	}
	py = find_python(true, false, 10);
	if (py && py->minor >= 7) {
		/* an older interpreter (3.7-3.9: _PyRuntime, no layout): found, not walked, every
		   sample gets a note */
		ret = pyagent_on_module(py->libpython, 0);
		CU_ASSERT(ret == PYAGENT_UNSUPPORTED);
		CU_ASSERT(pyagent_active());
		pyagent_thread_init(t);
		CU_ASSERT(pyagent_capture(t, NULL, f, 4, NULL) == -RAW_PY_NOTE_UNKNOWN_VERSION);
		CU_ASSERT(t->notes[RAW_PY_NOTE_UNKNOWN_VERSION] == 1);
		pyagent_reset();
	} else {
		printf("\n    no shared build of 3.7-3.9: unsupported-version discovery not "
		       "tested");
	}
	free(t);
}

/*
 * A free-threaded build (3.13t, 3.14t) says so in _Py_DebugOffsets: a copy of a real 3.13+
 * interpreter whose block has the flag set must be recognised, and its samples get the
 * free-threaded note instead of frames.
 */
static void test_python_agent_free_threaded(void)
{
	struct pyagent_thread *t = calloc(1, sizeof(*t));
	const struct pytest_python *py = NULL;
	char tmp[64], cmd[PATH_MAX + 128];
	struct raw_py_frame f[4];
	uint8_t *base, *p, *end, *hit = NULL;
	size_t i;
	FILE *in;
	long len;

	for (i = 0; i < npythons; i++)
		if (pythons[i].minor >= 13 && pylayout_find(pythons[i].minor) &&
		    (!py || pythons[i].minor > py->minor))
			py = &pythons[i];
	if (!py) {
		printf("\n    no CPython 3.13+: free-threaded recognition not tested");
		free(t);
		return;
	}
	snprintf(tmp, sizeof(tmp), "/tmp/pcollect-ft-%d", (int)getpid());
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", py->shared ? py->libpython : py->binary, tmp);
	CU_ASSERT_FATAL(system(cmd) == 0);
	in = fopen(tmp, "r+b");
	CU_ASSERT_FATAL(in != NULL);
	fseek(in, 0, SEEK_END);
	len = ftell(in);
	base = malloc((size_t)len);
	CU_ASSERT_FATAL(base && fseek(in, 0, SEEK_SET) == 0 &&
			fread(base, 1, (size_t)len, in) == (size_t)len);
	/* the block: the cookie, then PY_VERSION_HEX of this minor, then the flag */
	for (p = base, end = base + len - 24;
	     !hit && (p = memmem(p, (size_t)(end - p), "xdebugpy", 8)); p++) {
		uint64_t v;

		memcpy(&v, p + 8, 8);
		if ((v >> 16) == (uint64_t)(0x0300 | py->minor))
			hit = p;
	}
	CU_ASSERT_FATAL(hit != NULL);
	fseek(in, (long)(hit + 16 - base), SEEK_SET);
	CU_ASSERT(fwrite(&(uint64_t){ 1 }, 8, 1, in) == 1);
	fclose(in);
	free(base);

	pyagent_reset();
	CU_ASSERT(pyagent_on_module(tmp, 0) == PYAGENT_UNSUPPORTED);
	CU_ASSERT(pyagent_active());
	CU_ASSERT(pyagent_unsupported_why() && strstr(pyagent_unsupported_why(), "free-threaded"));
	pyagent_thread_init(t);
	CU_ASSERT(pyagent_capture(t, NULL, f, 4, NULL) == -RAW_PY_NOTE_FREE_THREADED);
	CU_ASSERT(t->notes[RAW_PY_NOTE_FREE_THREADED] == 1);
	pyagent_reset();
	/* the same file unpatched is walked */
	snprintf(cmd, sizeof(cmd), "cp '%s' '%s'", py->shared ? py->libpython : py->binary, tmp);
	CU_ASSERT(system(cmd) == 0);
	CU_ASSERT(pyagent_on_module(tmp, 0) == PYAGENT_FOUND);
	pyagent_reset();
	printf("\n    3.%d (%s) with the free-threaded flag set: recognised", py->minor, tmp);
	unlink(tmp);
	free(t);
}

/* ---- a forged 3.12 interpreter --------------------------------------------------------- */

static const struct pylayout *L;
static uint8_t fake_runtime[4096], fake_tstate[512], fake_cframe[64], fake_code_type[64];
static uint8_t frames[8][128];
static uint8_t codes[4][256];
static uint8_t strs[8][128];
static uint8_t table[64];
static pthread_key_t key;

static void put64(uint8_t *obj, int32_t off, uint64_t v)
{
	memcpy(obj + off, &v, sizeof(v));
}

static void put32(uint8_t *obj, int32_t off, uint32_t v)
{
	memcpy(obj + off, &v, sizeof(v));
}

/* A compact ASCII str object. */
static uintptr_t make_str(int i, const char *s)
{
	uint8_t *o = strs[i];
	uint32_t state = (1u << L->str_kind_shift) | (1u << L->str_compact_shift) |
			 (1u << L->str_ascii_shift);

	memset(o, 0, sizeof(strs[i]));
	put64(o, L->str_length, strlen(s));
	put64(o, L->str_hash, (uint64_t)-1);
	put32(o, L->str_state, state);
	memcpy(o + L->str_ascii_size, s, strlen(s) + 1);
	return (uintptr_t)o;
}

static void make_code(int i, const char *name, int first, uint32_t version)
{
	uint8_t *c = codes[i];

	memset(c, 0, sizeof(codes[i]));
	put64(c, PYLAYOUT_OB_TYPE, (uintptr_t)fake_code_type);
	put64(c, L->var_size, 8); /* 8 code units */
	put32(c, L->co_firstlineno, (uint32_t)first);
	put32(c, L->co_version, version);
	put64(c, L->co_filename, make_str(2 * i, "forged.py"));
	put64(c, L->co_name, make_str(2 * i + 1, name));
	put64(c, L->co_qualname, (uintptr_t)strs[2 * i + 1]);
	put64(c, L->co_linetable, (uintptr_t)table);
}

/* frames[i] runs codes[code] at unit `unit`, called from frames[i + 1] (or from nothing). */
static void make_frame(int i, int code, int unit, uintptr_t previous, int owner)
{
	uint8_t *f = frames[i];

	memset(f, 0, sizeof(frames[i]));
	put64(f, L->fr_code, (uintptr_t)codes[code]);
	put64(f, L->fr_previous, previous);
	put64(f, L->fr_instr, (uintptr_t)codes[code] + (uintptr_t)L->co_code + 2u * (unsigned)unit);
	f[L->fr_owner] = (uint8_t)owner;
}

static void forge_interpreter(void)
{
	uintptr_t interp = (uintptr_t)fake_runtime + 3000; /* any address: only compared */

	L = pylayout_find(12);
	pyagent_reset();
	memset(&pyagent_rt, 0, sizeof(pyagent_rt));
	pyagent_rt.minor = 12;
	pyagent_rt.version = RAW_PY_VERSION(3, 12);
	pyagent_rt.L = *L;
	pyagent_rt.runtime = (uintptr_t)fake_runtime;
	pyagent_rt.code_type = (uintptr_t)fake_code_type;
	pyagent_rt.rt_lo = (size_t)L->rt_interp_head;
	pyagent_rt.rt_len = (size_t)(L->rt_autotss + 8 - L->rt_interp_head);
	pyagent_rt.ts_len = (size_t)L->ts_thread_id + 8;
	CU_ASSERT_FATAL(pyagent_rt.rt_lo + pyagent_rt.rt_len <= sizeof(fake_runtime));

	/* a table of one 3.11+ entry: no columns, line +0 for 8 units */
	table[0] = 0x80 | (13 << 3) | 7;
	table[1] = 0;
	make_code(0, "inner", 10, 100);
	make_code(1, "outer", 20, 101);
	make_code(2, "<interpreter trampoline>", 0, 102); /* what the entry frames run */
	put64(fake_runtime, L->rt_interp_head, interp);
	put64(fake_runtime, L->rt_interp_main, interp);
	pthread_key_create(&key, NULL);
	put32(fake_runtime, L->rt_autotss, 1);
	put32(fake_runtime, L->rt_autotss + L->tss_key, (uint32_t)key);
	pthread_setspecific(key, fake_tstate);
	put64(fake_tstate, L->ts_interp, interp);
	put64(fake_tstate, L->ts_thread_id, (uint64_t)pthread_self());
	put64(fake_tstate, L->ts_cframe, (uintptr_t)fake_cframe);
	put64(fake_cframe, L->cf_current_frame, (uintptr_t)frames[0]);
	/* inner <- shim <- outer <- shim */
	make_frame(3, 2, 0, 0, PYLAYOUT_OWNER_CSTACK);
	make_frame(2, 1, 3, (uintptr_t)frames[3], 0);
	make_frame(1, 2, 0, (uintptr_t)frames[2], PYLAYOUT_OWNER_CSTACK);
	make_frame(0, 0, 5, (uintptr_t)frames[1], 0);
	__atomic_store_n(&pyagent_rt.state, PYAGENT_FOUND, __ATOMIC_RELEASE);
}

static uint8_t wbuf[256 * 1024];

static void test_python_agent_forged_walks(void)
{
	struct pyagent_thread *t = calloc(1, sizeof(*t));
	struct raw_file_header h;
	struct raw_writer w;
	struct raw_py_frame f[PYAGENT_MAX_FRAMES];
	long page = sysconf(_SC_PAGESIZE);
	uint8_t *hole;
	uint64_t id_inner;
	bool cut;
	int fd = memfd_create("pyagent", 0), n;

	CU_ASSERT_FATAL(t && fd >= 0);
	raw_header_init(&h, 1, 1, -1, "t", 1000000, RAW_SAMPLE_THREAD_CPU);
	CU_ASSERT_FATAL(raw_writer_init(&w, fd, wbuf, sizeof(wbuf), &h) == 0);
	forge_interpreter();
	pyagent_thread_init(t);

	n = pyagent_capture(t, &w, f, PYAGENT_MAX_FRAMES, &cut);
	CU_ASSERT_FATAL(n == 2);
	CU_ASSERT(!cut);
	CU_ASSERT(f[0].offset == 10 && f[1].offset == 6);
	CU_ASSERT(f[0].flags == RAW_PY_FRAME_ENTRY && f[1].flags == RAW_PY_FRAME_ENTRY);
	CU_ASSERT(f[0].code_id != f[1].code_id && t->codes_written == 2);
	id_inner = f[0].code_id;

	/* an entry frame read while it is set up, or one a returned call left on the C stack:
	   its owner byte is not 3, its code is the trampoline's (learned from those seen) */
	frames[1][L->fr_owner] = 0;
	n = pyagent_capture(t, &w, f, PYAGENT_MAX_FRAMES, &cut);
	CU_ASSERT(n == 2 && f[0].code_id == id_inner && f[0].flags == RAW_PY_FRAME_ENTRY &&
		  f[1].offset == 6 && t->codes_written == 2);
	frames[1][L->fr_owner] = PYLAYOUT_OWNER_CSTACK;

	/* the same objects again: no new records */
	n = pyagent_capture(t, &w, f, PYAGENT_MAX_FRAMES, &cut);
	CU_ASSERT(n == 2 && f[0].code_id == id_inner && t->codes_written == 2);

	/* the collector runs (the interpreter's gc.collecting) while this thread holds the GIL
	   (3.12: its state is active): the innermost frame is marked, in the same number of
	   calls; not while the thread is detached (waiting for the GIL, or in a C call that
	   released it), nor without a collection */
	{
		uint8_t *interp = fake_runtime + 3000;
		uint32_t active = PYLAYOUT_TS_BOUND | 1u << L->ts_active_shift, calls = t->calls;

		CU_ASSERT_FATAL(L->is_gc_collecting > 0 && L->ts_active_shift >= 0 &&
				3000 + (size_t)L->is_gc_collecting + 4 <= sizeof(fake_runtime));
		put32(interp, L->is_gc_collecting, 1);
		put32(fake_tstate, L->ts_status, active);
		n = pyagent_capture(t, &w, f, PYAGENT_MAX_FRAMES, &cut);
		CU_ASSERT(n == 2 && f[0].flags == (RAW_PY_FRAME_ENTRY | RAW_PY_FRAME_GC) &&
			  f[1].flags == RAW_PY_FRAME_ENTRY && t->calls == calls);
		put32(fake_tstate, L->ts_status, PYLAYOUT_TS_BOUND);
		n = pyagent_capture(t, &w, f, PYAGENT_MAX_FRAMES, &cut);
		CU_ASSERT(n == 2 && f[0].flags == RAW_PY_FRAME_ENTRY);
		put32(fake_tstate, L->ts_status, active);
		put32(interp, L->is_gc_collecting, 0);
		n = pyagent_capture(t, &w, f, PYAGENT_MAX_FRAMES, &cut);
		CU_ASSERT(n == 2 && f[0].flags == RAW_PY_FRAME_ENTRY);
		put32(fake_tstate, L->ts_status, 0);
	}

	/* freed and reused: same address, same string addresses, a new co_version */
	make_code(0, "other", 10, 102);
	n = pyagent_capture(t, &w, f, PYAGENT_MAX_FRAMES, &cut);
	CU_ASSERT(n == 2 && f[0].code_id != id_inner && t->codes_written == 3);

	/* only max frames wanted */
	n = pyagent_capture(t, &w, f, 1, &cut);
	CU_ASSERT(n == 1 && cut);

	/* a torn frame: previous points into a hole */
	hole = mmap(NULL, (size_t)page, PROT_NONE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
	put64(frames[2], L->fr_previous, (uintptr_t)hole + 64);
	n = pyagent_capture(t, &w, f, PYAGENT_MAX_FRAMES, &cut);
	CU_ASSERT(n == 2 && cut);

	/* a code pointer to garbage, then to something that is not a code object */
	put64(frames[0], L->fr_code, (uintptr_t)hole);
	n = pyagent_capture(t, &w, f, PYAGENT_MAX_FRAMES, &cut);
	CU_ASSERT(n == -RAW_PY_NOTE_READ_FAILED && t->notes[RAW_PY_NOTE_READ_FAILED] == 1);
	put64(frames[0], L->fr_code, (uintptr_t)strs[0]);
	n = pyagent_capture(t, &w, f, PYAGENT_MAX_FRAMES, &cut);
	CU_ASSERT(n == -RAW_PY_NOTE_READ_FAILED);

	/* a cycle: the walk stops at its depth limit */
	put64(frames[0], L->fr_code, (uintptr_t)codes[0]);
	put64(frames[0], L->fr_previous, (uintptr_t)frames[0]);
	n = pyagent_capture(t, &w, f, PYAGENT_MAX_FRAMES, &cut);
	CU_ASSERT(n == PYAGENT_MAX_FRAMES && cut);

	/* a sub-interpreter appears */
	put64(fake_runtime, L->rt_interp_head, 12345);
	CU_ASSERT(pyagent_capture(t, &w, f, 8, &cut) == -RAW_PY_NOTE_SUBINTERPRETER);
	put64(fake_runtime, L->rt_interp_head, (uintptr_t)fake_runtime + 3000);

	/* a state of another thread under our key, and no state at all */
	put64(fake_tstate, L->ts_thread_id, 1);
	CU_ASSERT(pyagent_capture(t, &w, f, 8, &cut) == -RAW_PY_NOTE_NO_THREAD_STATE);
	pthread_setspecific(key, NULL);
	CU_ASSERT(pyagent_capture(t, &w, f, 8, &cut) == -RAW_PY_NOTE_NO_THREAD_STATE);
	/* the tstate freed */
	pthread_setspecific(key, hole);
	CU_ASSERT(pyagent_capture(t, &w, f, 8, &cut) == -RAW_PY_NOTE_READ_FAILED);

	CU_ASSERT(pyagent_thread_finish(t, &w, 5) == 0);
	CU_ASSERT(raw_writer_flush(&w) == 0);
	munmap(hole, (size_t)page);
	pthread_setspecific(key, NULL);
	pyagent_reset();
	close(fd);
	free(t);
}

/*
 * Five code addresses that one direct-mapped slot would hold in turn: the first four are kept
 * together (written once each however they alternate), the fifth replaces the least recently
 * used. Addresses are only keys here: the records are written from codes[0]'s copy.
 */
static void test_python_agent_code_sets(void)
{
	struct pyagent_thread *t = calloc(1, sizeof(*t));
	struct raw_file_header h;
	struct raw_writer w;
	uintptr_t a[PYAGENT_CODE_WAYS + 1], cand;
	uint64_t want, id[PYAGENT_CODE_WAYS + 1];
	int fd = memfd_create("pycodes", 0), pid = (int)getpid(), k = 0, i, round;

	CU_ASSERT_FATAL(t && fd >= 0);
	raw_header_init(&h, 1, 1, -1, "t", 1000000, RAW_SAMPLE_THREAD_CPU);
	CU_ASSERT_FATAL(raw_writer_init(&w, fd, wbuf, sizeof(wbuf), &h) == 0);
	forge_interpreter();
	pyagent_thread_init(t);
	want = hash_combine(0, 0x10000) & (PYAGENT_CODE_SLOTS - 1);
	for (cand = 0x10000; k <= PYAGENT_CODE_WAYS && cand < 0x10000000; cand += 16)
		if ((hash_combine(0, cand) & (PYAGENT_CODE_SLOTS - 1)) == want)
			a[k++] = cand;
	CU_ASSERT_FATAL(k == PYAGENT_CODE_WAYS + 1);

	for (round = 0; round < 3; round++)
		for (i = 0; i < PYAGENT_CODE_WAYS; i++) {
			uint64_t got = pycodes_lookup(t, &w, a[i], codes[0], NULL, pid);

			if (round == 0)
				id[i] = got;
			CU_ASSERT(got != 0 && got == id[i]);
		}
	CU_ASSERT(t->codes_written == PYAGENT_CODE_WAYS);
	/* a[0] is the least recently used: the fifth takes its slot, the others stay */
	id[PYAGENT_CODE_WAYS] = pycodes_lookup(t, &w, a[PYAGENT_CODE_WAYS], codes[0], NULL, pid);
	CU_ASSERT(t->codes_written == PYAGENT_CODE_WAYS + 1);
	for (i = 1; i <= PYAGENT_CODE_WAYS; i++)
		CU_ASSERT(pycodes_lookup(t, &w, a[i], codes[0], NULL, pid) == id[i]);
	CU_ASSERT(t->codes_written == PYAGENT_CODE_WAYS + 1);
	CU_ASSERT(pycodes_lookup(t, &w, a[0], codes[0], NULL, pid) != id[0]);
	CU_ASSERT(t->codes_written == PYAGENT_CODE_WAYS + 2);

	CU_ASSERT(raw_writer_flush(&w) == 0);
	pthread_setspecific(key, NULL);
	pyagent_reset();
	close(fd);
	free(t);
}

int main(void)
{
	static const struct unit_test tests[] = {
		{ "guarded reads never fault", test_python_agent_guarded_read },
		{ "batched and run reads", test_python_agent_batched_reads },
		{ "interpreter discovery", test_python_agent_discovery },
		{ "free-threaded builds recognised", test_python_agent_free_threaded },
		{ "walks over forged, torn and reused frames", test_python_agent_forged_walks },
		{ "a set of the code cache keeps its four", test_python_agent_code_sets },
		{ NULL, NULL },
	};
	char root[PATH_MAX];

	/* Without the source tree or interpreters, discovery is tested on what is there. */
	pytest_init(__FILE__, root, pythons, 16, &npythons);
	return unit_run("python-agent", tests, NULL, NULL);
}
