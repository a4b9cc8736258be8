/* SPDX-License-Identifier: MIT */
/* Python records round trip, code tables, and merging native with Python frames. */
#include "common/raw-python.h"
#include "finalizer/python/python.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "tests/unit/unit.h"

static uint8_t wbuf[1 << 18], scratch[RAW_PY_CODE_SCRATCH];

static struct raw_string rs(const char *s)
{
	struct raw_string r = { s, (uint32_t)strlen(s) };
	return r;
}

/* c's file (/src/app.py), its name, and its line table lt (len bytes). */
static void code_strings(struct raw_py_code *c, const char *name, const uint8_t *lt, size_t len)
{
	c->filename = rs("/src/app.py");
	c->name = rs(name);
	c->linetable.s = (const char *)lt;
	c->linetable.len = (uint32_t)len;
}

/* A stream of one thread written into memory (a memfd called name) through w. Returns the fd. */
static int stream_begin(struct raw_writer *w, struct raw_file_header *h, const char *name)
{
	int fd = memfd_create(name, 0);

	raw_header_init(h, 1, 1, -1, "h", 1000, RAW_SAMPLE_THREAD_CPU);
	CU_ASSERT_FATAL(raw_writer_init(w, fd, wbuf, sizeof(wbuf), h) == 0);
	return fd;
}

/* The stream w wrote to fd, flushed and read back from a copy, *data; caller frees both. */
static struct raw_reader *stream_read_back(struct raw_writer *w, int fd, uint8_t **data)
{
	struct raw_reader *r;
	off_t len;
	int err;

	CU_ASSERT(raw_writer_flush(w) == 0);
	len = lseek(fd, 0, SEEK_END);
	*data = malloc((size_t)len);
	CU_ASSERT_FATAL(pread(fd, *data, (size_t)len, 0) == len);
	r = raw_reader_open_mem(*data, (size_t)len, &err);
	CU_ASSERT_FATAL(r != NULL);
	return r;
}

static void test_python_merge_records_round_trip(void)
{
	static const uint8_t lt[] = { 0x80 | (13 << 3) | 3, 0x02 };
	uint64_t ips[3] = { 0x7f0000001000ull, 0x7f0000000800ull, 0x401000 }, gips[RAW_MAX_DEPTH];
	struct raw_py_frame py[2] = { { 1, 6, 0 },
				      { 2, 0, RAW_PY_FRAME_ENTRY | RAW_PY_FRAME_CALLEE, 3 } };
	struct raw_py_frame gpy[RAW_PY_MAX_FRAMES];
	struct raw_py_callee callee = { 3, RAW_PY_CALLEE_METHOD, { "get", 3 }, { "dict", 4 } },
			     gcal;
	struct pystream ps;
	struct raw_py_code c = { .id = 1,
				 .addr = 0x7f00deadbeef,
				 .version = RAW_PY_VERSION(3, 12),
				 .flags = RAW_PY_CODE_NAME_IS_QUALNAME,
				 .firstlineno = 7,
				 .code_size = 16 };
	struct raw_py_note note = { .time_ns = -5, .kind = RAW_PY_NOTE_SUBINTERPRETER, .count = 9 };
	struct raw_file_header h;
	struct raw_writer w;
	struct raw_reader *r;
	struct raw_record rec;
	struct raw_py_stack st;
	struct raw_py_code gc;
	struct raw_py_note gn;
	struct raw_py_thread_name tn = { 4321, 17, { "CustomThreadName-3", 18 } }, gt;
	struct pycode_table tab;
	const struct pycode *pc;
	int fd = stream_begin(&w, &h, "pyrec"), seen = 0;
	uint8_t *data;

	code_strings(&c, "Klass.m\xc3\xa9thode", lt, sizeof(lt));
	note.detail = rs("sub-interpreters are not walked");
	CU_ASSERT(raw_py_write_code(&w, &c, scratch, sizeof(scratch)) == 0);
	c.id = 2;
	c.firstlineno = 30;
	CU_ASSERT(raw_py_write_code(&w, &c, scratch, sizeof(scratch)) == 0);
	CU_ASSERT(raw_py_write_stack(&w, 77, RAW_STACK_FIRST_IS_PC, ips, 3, py, 2, scratch,
				     sizeof(scratch)) == 0);
	CU_ASSERT(raw_py_write_stack_callees(&w, 77, py, 2, scratch, sizeof(scratch)) == 0);
	CU_ASSERT(raw_py_write_note(&w, &note, scratch, sizeof(scratch)) == 0);
	CU_ASSERT(raw_py_write_thread_name(&w, &tn, scratch, sizeof(scratch)) == 0);
	CU_ASSERT(raw_py_write_callee(&w, &callee, scratch, sizeof(scratch)) == 0);
	/* too small a scratch, too long a string: nothing written */
	CU_ASSERT(raw_py_write_stack(&w, 78, 0, ips, 3, py, 2, scratch, 8) == -E2BIG);
	c.linetable.len = RAW_PY_MAX_LINETABLE + 1;
	CU_ASSERT(raw_py_write_code(&w, &c, scratch, sizeof(scratch)) == -E2BIG);

	r = stream_read_back(&w, fd, &data);
	pycode_table_init(&tab);
	pystream_init(&ps);
	while (raw_reader_next(r, &rec) == 1) {
		if (rec.type == RAW_REC_PY_CODE) {
			CU_ASSERT(raw_py_read_code(rec.payload, rec.payload_len, &gc) == 0);
			CU_ASSERT(gc.addr == c.addr && gc.version == c.version &&
				  gc.flags == c.flags);
			CU_ASSERT(gc.code_size == 16 && gc.linetable.len == sizeof(lt));
			CU_ASSERT(gc.name.len == c.name.len &&
				  !memcmp(gc.name.s, c.name.s, c.name.len));
			CU_ASSERT(pycode_table_add_record(&tab, rec.payload, rec.payload_len) == 0);
			/* an id is defined once */
			CU_ASSERT(pycode_table_add_record(&tab, rec.payload, rec.payload_len) ==
				  -EINVAL);
			/* every cut payload is refused */
			for (size_t k = 0; k < rec.payload_len; k++)
				CU_ASSERT(raw_py_read_code(rec.payload, k, &gc) == -EINVAL);
			seen++;
		} else if (rec.type == RAW_REC_PY_STACK) {
			CU_ASSERT(raw_py_read_stack(rec.payload, rec.payload_len, &st, gips, gpy) ==
				  0);
			CU_ASSERT(st.id == 77 && st.flags == RAW_STACK_FIRST_IS_PC);
			CU_ASSERT(st.n == 3 && !memcmp(gips, ips, sizeof(ips)));
			/* the stack alone, as a reader before RAW_REC_PY_STACK_CALLEES reads it */
			CU_ASSERT(st.npy == 2 && !memcmp(gpy, py, sizeof(py[0])) &&
				  gpy[1].flags == RAW_PY_FRAME_ENTRY && gpy[1].callee == 0);
			seen++;
		} else if (rec.type == RAW_REC_PY_STACK_CALLEES) {
			CU_ASSERT(raw_py_read_stack_callees(rec.payload, rec.payload_len, 78, gpy,
							    2) == -EINVAL);
			CU_ASSERT(raw_py_read_stack_callees(rec.payload, rec.payload_len, 77, gpy,
							    1) == -EINVAL);
			for (size_t k = 0; k < rec.payload_len; k++)
				CU_ASSERT(raw_py_read_stack_callees(rec.payload, k, 77, gpy, 2) ==
					  -EINVAL);
			CU_ASSERT(gpy[1].callee == 0);
			CU_ASSERT(raw_py_read_stack_callees(rec.payload, rec.payload_len, 77, gpy,
							    2) == 0);
			CU_ASSERT(!memcmp(gpy, py, sizeof(py)));
			seen++;
		} else if (rec.type == RAW_REC_PY_NOTE) {
			CU_ASSERT(raw_py_read_note(rec.payload, rec.payload_len, &gn) == 0);
			CU_ASSERT(gn.time_ns == -5 && gn.kind == note.kind && gn.count == 9);
			CU_ASSERT(gn.detail.len == note.detail.len);
			seen++;
		} else if (rec.type == RAW_REC_PY_THREAD_NAME) {
			CU_ASSERT(raw_py_read_thread_name(rec.payload, rec.payload_len, &gt) == 0);
			CU_ASSERT(gt.tid == 4321 && gt.time_ns == 17 && gt.name.len == 18 &&
				  !memcmp(gt.name.s, "CustomThreadName-3", 18));
			for (size_t k = 0; k < rec.payload_len; k++)
				CU_ASSERT(raw_py_read_thread_name(rec.payload, k, &gt) == -EINVAL);
			seen++;
		} else if (rec.type == RAW_REC_PY_CALLEE) {
			CU_ASSERT(raw_py_read_callee(rec.payload, rec.payload_len, &gcal) == 0);
			CU_ASSERT(gcal.id == 3 && gcal.kind == RAW_PY_CALLEE_METHOD &&
				  gcal.name.len == 3 && gcal.owner.len == 4);
			for (size_t k = 0; k < rec.payload_len; k++)
				CU_ASSERT(raw_py_read_callee(rec.payload, k, &gcal) == -EINVAL);
			/* named as cProfile names it; an id is defined once */
			CU_ASSERT(pystream_take(&ps, rec.type, rec.payload, rec.payload_len, NULL,
						NULL, NULL) == 0);
			CU_ASSERT(pystream_take(&ps, rec.type, rec.payload, rec.payload_len, NULL,
						NULL, NULL) == 0 &&
				  ps.rejected == 1);
			CU_ASSERT(pystream_callee(&ps, 3) &&
				  !strcmp(pystream_callee(&ps, 3),
					  "{method 'get' of 'dict' objects}"));
			CU_ASSERT(!pystream_callee(&ps, 2) && !pystream_callee(&ps, 4));
			seen++;
		}
	}
	CU_ASSERT(seen == 7);
	pystream_release(&ps);
	pc = pycode_table_get(&tab, 2);
	CU_ASSERT_FATAL(pc != NULL);
	CU_ASSERT(strcmp(pc->filename, "/src/app.py") == 0 && pc->firstlineno == 30);
	CU_ASSERT(pycode_line(pc, 0) == 31 && pycode_line(pc, 6) == 31 && pycode_line(pc, 8) == -1);
	CU_ASSERT(pycode_table_get(&tab, 3) == NULL && pycode_table_get(&tab, 1 << 30) == NULL);
	CU_ASSERT(tab.rejected == 2);
	pycode_table_release(&tab);
	raw_reader_free(r);
	free(data);
	close(fd);
}

/* A stream's Python records through pystream: frames named, lines decoded, notes kept. */
static void test_python_merge_pystream(void)
{
	static const uint8_t lt[] = { 0x80 | (13 << 3) | 3, 0x02 };
	uint8_t buf[512];
	struct raw_enc e;
	struct raw_py_code c = {
		.id = 1, .version = RAW_PY_VERSION(3, 12), .firstlineno = 7, .code_size = 16
	};
	struct raw_py_frame py[3] = { { 1, 6, 0 },
				      { 1, 0, RAW_PY_FRAME_BAD_OFFSET },
				      { 9, 2, RAW_PY_FRAME_ENTRY } };
	struct raw_py_note note = { .kind = RAW_PY_NOTE_NO_THREAD_STATE, .count = 3 };
	uint64_t ips[2] = { 0x1000, 0x2000 }, gips[RAW_MAX_DEPTH];
	struct raw_file_header h;
	struct raw_writer w;
	struct raw_reader *r;
	struct raw_record rec;
	struct raw_py_stack st;
	struct pyframe_info fi;
	struct pystream ps;
	int fd = stream_begin(&w, &h, "pystream"), stacks = 0;
	size_t off = 99;
	uint8_t *data;

	code_strings(&c, "f", lt, sizeof(lt));
	note.detail = rs("first");
	CU_ASSERT(raw_py_write_code(&w, &c, scratch, sizeof(scratch)) == 0);
	CU_ASSERT(raw_py_write_note(&w, &note, scratch, sizeof(scratch)) == 0);
	CU_ASSERT(raw_py_write_stack(&w, 5, 0, ips, 2, py, 3, scratch, sizeof(scratch)) == 0);
	note.count = 8; /* a later note of the same kind replaces the first */
	note.detail = rs("second");
	CU_ASSERT(raw_py_write_note(&w, &note, scratch, sizeof(scratch)) == 0);
	/* an unknown Python record type is skipped, a damaged one refused */
	e.p = buf;
	e.end = buf + sizeof(buf);
	e.overflow = false;
	raw_enc_varint(&e, 1);
	CU_ASSERT(raw_writer_record(&w, 30, buf, (size_t)(e.p - buf)) == 0);
	CU_ASSERT(raw_writer_record(&w, RAW_REC_PY_STACK, buf, (size_t)(e.p - buf)) == 0);

	r = stream_read_back(&w, fd, &data);
	pystream_init(&ps);
	while (raw_reader_next(r, &rec) == 1) {
		int ret =
			pystream_take(&ps, rec.type, rec.payload, rec.payload_len, &st, gips, &off);

		if (ret == 1) {
			CU_ASSERT(st.id == 5 && st.n == 2 && st.npy == 3 && off == 0);
			CU_ASSERT(gips[0] == 0x1000 && gips[1] == 0x2000);
			stacks++;
		} else if (rec.type == RAW_REC_PY_STACK) {
			CU_ASSERT(ret == -EINVAL);
		} else {
			CU_ASSERT(ret == 0);
		}
	}
	CU_ASSERT(stacks == 1 && ps.nframes == 3 && ps.rejected == 1);
	CU_ASSERT(ps.version == RAW_PY_VERSION(3, 12));
	CU_ASSERT(ps.notes[RAW_PY_NOTE_NO_THREAD_STATE] == 8);
	CU_ASSERT_FATAL(ps.note_detail[RAW_PY_NOTE_NO_THREAD_STATE] != NULL);
	CU_ASSERT(strcmp(ps.note_detail[RAW_PY_NOTE_NO_THREAD_STATE], "second") == 0);
	pystream_frame_info(&ps, &ps.frames[0], &fi);
	CU_ASSERT(fi.known && !strcmp(fi.name, "f") && !strcmp(fi.file, "/src/app.py"));
	CU_ASSERT(fi.firstlineno == 7 && fi.line == 8);
	pystream_frame_info(&ps, &ps.frames[1], &fi);
	CU_ASSERT(fi.known && fi.line == 7); /* bad offset: the first line */
	pystream_frame_info(&ps, &ps.frames[2], &fi);
	CU_ASSERT(!fi.known && !strcmp(fi.name, "[python]") && fi.file == NULL && fi.line == -1);
	CU_ASSERT(!strcmp(pynote_kind_name(RAW_PY_NOTE_SUBINTERPRETER), "subinterpreter"));
	CU_ASSERT(pynote_kind_name(0) == NULL && pynote_kind_name(99) == NULL);
	pystream_release(&ps);
	raw_reader_free(r);
	free(data);
	close(fd);
}

static void test_python_merge_eval_names(void)
{
	CU_ASSERT(pymerge_is_eval("_PyEval_EvalFrameDefault"));
	CU_ASSERT(pymerge_is_eval("_PyEval_EvalFrameDefault.cold"));
	CU_ASSERT(!pymerge_is_eval("_PyEval_EvalFrameDefaultX"));
	CU_ASSERT(!pymerge_is_eval("_PyEval_EvalFrame"));
	CU_ASSERT(!pymerge_is_eval(NULL));
}

#define E PYMERGE_NATIVE_EVAL
#define I PYMERGE_NATIVE_INTERP
#define P RAW_PY_FRAME_ENTRY

/* Render a merge as "n0 p1 ..." for easy comparison. */
static const char *render(const uint32_t *nat, size_t n, const uint32_t *py, size_t npy,
			  enum pymerge_mode mode, uint32_t *res)
{
	static char out[256];
	struct pymerge_item items[32];
	size_t k, len = pymerge_stack(nat, n, py, npy, mode, items, 32, res);

	out[0] = 0;
	for (k = 0; k < len; k++)
		snprintf(out + strlen(out), sizeof(out) - strlen(out), "%s%c%u", k ? " " : "",
			 items[k].python ? 'p' : 'n', items[k].index);
	return out;
}

static void test_python_merge_stacks(void)
{
	/* native, innermost first: numpy loop, numpy call, PyObject_Call (interp), eval, call
	   glue (interp), eval, Py_RunMain (interp), main (interp) */
	const uint32_t nat[] = { 0, 0, I, E, I, E, I, I };
	/* Python: f (innermost, entry of the inner eval), g, h (entry of the outer eval) */
	const uint32_t py[] = { P, 0, P };
	uint32_t res;

	CU_ASSERT_STRING_EQUAL(render(nat, 8, py, 3, PYMERGE_USER_ONLY, &res), "n0 n1 p0 p1 p2");
	CU_ASSERT(res == 0);
	CU_ASSERT_STRING_EQUAL(render(nat, 8, py, 3, PYMERGE_ALL, &res),
			       "n0 n1 n2 p0 n3 n4 p1 p2 n5 n6 n7");
	CU_ASSERT_STRING_EQUAL(render(nat, 8, py, 3, PYMERGE_PYTHON_ONLY, &res), "p0 p1 p2");
	/* no Python frames: the native stack as it is */
	CU_ASSERT_STRING_EQUAL(render(nat, 8, py, 0, PYMERGE_USER_ONLY, &res),
			       "n0 n1 n2 n3 n4 n5 n6 n7");
	/* the native unwind stopped early: Python groups left over go to the outer end */
	CU_ASSERT_STRING_EQUAL(render(nat, 4, py, 3, PYMERGE_USER_ONLY, &res), "n0 n1 p0 p1 p2");
	CU_ASSERT(res == PYMERGE_UNMATCHED_PY);
	/* an eval frame whose Python frames were not read */
	{
		const uint32_t py1[] = { P };

		CU_ASSERT_STRING_EQUAL(render(nat, 8, py1, 1, PYMERGE_ALL, &res),
				       "n0 n1 n2 p0 n3 n4 n5 n6 n7");
		CU_ASSERT(res == PYMERGE_UNMATCHED_EVAL);
	}
}

UNIT_MAIN("python-merge", NULL, NULL,
	  {
		  { "python records round trip", test_python_merge_records_round_trip },
		  { "a stream's python records", test_python_merge_pystream },
		  { "eval loop names", test_python_merge_eval_names },
		  { "merged stacks in each mode", test_python_merge_stacks },
	  })
