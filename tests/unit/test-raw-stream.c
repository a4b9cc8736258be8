/* SPDX-License-Identifier: MIT */
/* Unit tests of the raw stream format: round trips, varints, cut and damaged streams. */
#include "common/raw-stream.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "tests/unit/unit.h"

static uint8_t wbuf[64 * 1024];

/* A writer on an anonymous file; read_back() maps what was written. */
static int open_stream(struct raw_writer *w, struct raw_file_header *h, size_t cap)
{
	int fd = memfd_create("raw-test", 0);

	CU_ASSERT_FATAL(fd >= 0);
	raw_header_init(h, 1234, 1235, 7, "node01", 10000000, RAW_SAMPLE_THREAD_CPU);
	CU_ASSERT_FATAL(raw_writer_init(w, fd, wbuf, cap, h) == 0);
	return fd;
}

static uint8_t *read_back(int fd, size_t *len)
{
	off_t end = lseek(fd, 0, SEEK_END);
	uint8_t *data = malloc((size_t)end + 1);

	CU_ASSERT_FATAL(data != NULL);
	CU_ASSERT_FATAL(pread(fd, data, (size_t)end, 0) == end);
	*len = (size_t)end;
	return data;
}

static bool str_eq(struct raw_string s, const char *want)
{
	return s.len == strlen(want) && memcmp(s.s, want, s.len) == 0;
}

static void test_raw_varint_edges(void)
{
	static const uint64_t values[] = { 0,          1,
					   127,        128,
					   255,        16383,
					   16384,      (1ull << 32) - 1,
					   1ull << 32, (1ull << 63) - 1,
					   1ull << 63, UINT64_MAX };
	uint8_t buf[RAW_VARINT_MAX + 2];
	size_t i;

	for (i = 0; i < sizeof(values) / sizeof(values[0]); i++) {
		const uint8_t *p = buf;
		uint64_t out = 12345;
		size_t n = raw_varint_put(buf, values[i]);

		CU_ASSERT(n == raw_varint_size(values[i]));
		CU_ASSERT(n <= RAW_VARINT_MAX);
		CU_ASSERT(raw_varint_get(&p, buf + n, &out) == 0);
		CU_ASSERT(out == values[i]);
		CU_ASSERT(p == buf + n);
		/* Cut by one byte: must fail, not read past the end. */
		p = buf;
		CU_ASSERT(raw_varint_get(&p, buf + n - 1, &out) == -1);
	}
	CU_ASSERT(raw_varint_size(UINT64_MAX) == 10);
	CU_ASSERT(raw_varint_size(127) == 1 && raw_varint_size(128) == 2);

	/* Eleven continuation bytes, and a tenth byte with bits beyond 64: both rejected. */
	{
		uint8_t bad[11];
		const uint8_t *p = bad;
		uint64_t out;

		memset(bad, 0xff, sizeof(bad));
		CU_ASSERT(raw_varint_get(&p, bad + sizeof(bad), &out) == -1);
		memset(bad, 0x80, 9);
		bad[9] = 0x02;
		p = bad;
		CU_ASSERT(raw_varint_get(&p, bad + 10, &out) == -1);
		bad[9] = 0x01;
		p = bad;
		CU_ASSERT(raw_varint_get(&p, bad + 10, &out) == 0 && out == 1ull << 63);
	}
	/* Non-canonical (padded) encodings decode to the same value. */
	{
		uint8_t pad[3] = { 0x85, 0x80, 0x00 };
		const uint8_t *p = pad;
		uint64_t out;

		CU_ASSERT(raw_varint_get(&p, pad + 3, &out) == 0 && out == 5);
	}
}

static void test_raw_zigzag(void)
{
	static const int64_t values[] = { 0, -1, 1, -2, 63, -64, INT64_MAX, INT64_MIN };
	size_t i;

	for (i = 0; i < sizeof(values) / sizeof(values[0]); i++)
		CU_ASSERT(raw_unzigzag(raw_zigzag(values[i])) == values[i]);
	CU_ASSERT(raw_zigzag(0) == 0 && raw_zigzag(-1) == 1 && raw_zigzag(1) == 2);
}

static void test_raw_crc32_known(void)
{
	/* The standard check value of CRC-32/ISO-HDLC. */
	CU_ASSERT(raw_crc32(0, "123456789", 9) == 0xcbf43926u);
	CU_ASSERT(raw_crc32(0, "", 0) == 0);
}

static void test_raw_header_fields(void)
{
	struct raw_file_header h;

	raw_header_init(&h, 42, 43, -1,
			"a-very-long-host-name-that-goes-past-sixty-four-bytes-"
			"for-sure-really",
			1000000, RAW_SAMPLE_WALL);
	CU_ASSERT(memcmp(h.magic, RAW_MAGIC, 8) == 0);
	CU_ASSERT(h.version == RAW_VERSION && h.header_size == sizeof(h) && sizeof(h) == 144);
	CU_ASSERT(h.kind == RAW_STREAM_THREAD && h.stream_id != 0);
	CU_ASSERT(h.pid == 42 && h.tid == 43 && h.rank == -1);
	CU_ASSERT(h.host[63] == '\0' && strlen(h.host) == 63);
	CU_ASSERT(h.origin_ns > 0 && h.origin_realtime_ns > 1600000000ull * 1000000000ull);
	CU_ASSERT(raw_header_now(&h) >= 0);
}

/* Write one of every record type, read each back and compare every field. */
static void test_raw_roundtrip_every_type(void)
{
	struct raw_file_header h;
	struct raw_writer w;
	struct raw_record rec;
	struct raw_reader *r;
	uint64_t ips[300];
	uint8_t bid[20];
	struct raw_segment segs[3] = { { 0x400000, 0x1000, 0, 4 },
				       { 0x401000, 0x5000, 0x1000, 5 },
				       { 0x7f0000, 0x20, 0x6000, 6 } };
	const char *argv[] = { "./app", "--size", "", "α β" };
	uint8_t ext[5] = { 1, 2, 3, 4, 5 };
	size_t len, i;
	uint8_t *data;
	int fd, err;

	for (i = 0; i < 300; i++)
		ips[i] = 0x7f0000001000ull - i * 0x40 + (i % 3 ? 0x10000000ull : 0);
	for (i = 0; i < sizeof(bid); i++)
		bid[i] = (uint8_t)(i * 13);
	fd = open_stream(&w, &h, sizeof(wbuf));

	struct raw_process p = { .pid = 1234,
				 .ppid = 1,
				 .time_ns = -5,
				 .origin = RAW_PROCESS_FORK,
				 .parent_pid = 1000,
				 .generation = 2,
				 .exe = "/bin/app",
				 .argc = 4,
				 .argv = argv };
	struct raw_module m = { .time_ns = 99,
				.kind = RAW_MODULE_FILE,
				.base = 0x7f0000000000ull,
				.path = "/lib/libx.so",
				.build_id = bid,
				.build_id_len = 20,
				.nsegs = 3,
				.segs = segs };

	CU_ASSERT(raw_writer_process(&w, &p) == 0);
	CU_ASSERT(raw_writer_module_load(&w, &m) == 0);
	CU_ASSERT(raw_writer_thread_start(&w, 1235, 10, "worker-1") == 0);
	CU_ASSERT(raw_writer_thread_name(&w, 1235, 11, "renamed") == 0);
	CU_ASSERT(raw_writer_stack(&w, 1, RAW_STACK_FIRST_IS_PC, ips, 300) == 0);
	CU_ASSERT(raw_writer_sample(&w, 1000, 1, 1) == 0);
	CU_ASSERT(raw_writer_sample(&w, 11000000, 1, 3) == 0);
	CU_ASSERT(raw_writer_flush(&w) == 0); /* the next sample's delta crosses a chunk */
	CU_ASSERT(raw_writer_sample(&w, 21000000, 1, 1) == 0);
	CU_ASSERT(raw_writer_lost(&w, 22000000, RAW_LOST_UNWIND, 2, 5) == 0);
	CU_ASSERT(raw_writer_metric(&w, 3, "Bytes Allocated", RAW_UNIT_BYTES, RAW_AGG_PEAK, 1) ==
		  0);
	CU_ASSERT(raw_writer_value(&w, 21500000, 1, 3, -4096) == 0);
	CU_ASSERT(raw_writer_record(&w, 40, ext, sizeof(ext)) == 0);
	CU_ASSERT(raw_writer_module_unload(&w, 23000000, 0x7f0000000000ull, "/lib/libx.so") == 0);
	CU_ASSERT(raw_writer_thread_cpu(&w, 1235, 23500000, 98765) == 0);
	CU_ASSERT(raw_writer_thread_end(&w, 1235, 24000000, 123456789) == 0);
	CU_ASSERT(raw_writer_flush(&w) == 0);
	CU_ASSERT(raw_writer_pending(&w) == 0);
	CU_ASSERT(w.dropped_records == 0);

	data = read_back(fd, &len);
	CU_ASSERT(w.bytes_written == len);
	r = raw_reader_open_mem(data, len, &err);
	CU_ASSERT_FATAL(r != NULL);
	CU_ASSERT(raw_reader_header(r)->pid == 1234 && raw_reader_header(r)->rank == 7);
	CU_ASSERT(strcmp(raw_reader_header(r)->host, "node01") == 0);
	CU_ASSERT(raw_reader_header(r)->interval_ns == 10000000);
	CU_ASSERT(raw_reader_header(r)->stream_id == h.stream_id);
	CU_ASSERT(!raw_reader_stats(r)->header_crc_bad);

	CU_ASSERT_FATAL(raw_reader_next(r, &rec) == 1);
	CU_ASSERT(rec.type == RAW_REC_PROCESS && rec.decoded);
	CU_ASSERT(rec.u.process.pid == 1234 && rec.u.process.ppid == 1);
	CU_ASSERT(rec.u.process.time_ns == -5 && rec.u.process.origin == RAW_PROCESS_FORK);
	CU_ASSERT(rec.u.process.parent_pid == 1000 && rec.u.process.generation == 2);
	CU_ASSERT(rec.u.process.exe_len == 8 && !memcmp(rec.u.process.exe, "/bin/app", 8));
	CU_ASSERT_FATAL(rec.u.process.argc == 4);
	for (i = 0; i < 4; i++)
		CU_ASSERT(str_eq(rec.u.process.args[i], argv[i]));

	CU_ASSERT_FATAL(raw_reader_next(r, &rec) == 1);
	CU_ASSERT(rec.type == RAW_REC_MODULE_LOAD);
	CU_ASSERT(rec.u.module.time_ns == 99 && rec.u.module.base == 0x7f0000000000ull);
	CU_ASSERT(rec.u.module.path_len == 12 && !memcmp(rec.u.module.path, "/lib/libx.so", 12));
	CU_ASSERT(rec.u.module.build_id_len == 20 && !memcmp(rec.u.module.build_id, bid, 20));
	CU_ASSERT_FATAL(rec.u.module.nsegs == 3);
	for (i = 0; i < 3; i++) {
		CU_ASSERT(rec.u.module.segs[i].start == segs[i].start);
		CU_ASSERT(rec.u.module.segs[i].size == segs[i].size);
		CU_ASSERT(rec.u.module.segs[i].file_offset == segs[i].file_offset);
		CU_ASSERT(rec.u.module.segs[i].prot == segs[i].prot);
	}

	CU_ASSERT_FATAL(raw_reader_next(r, &rec) == 1);
	CU_ASSERT(rec.type == RAW_REC_THREAD_START && rec.u.thread.tid == 1235);
	CU_ASSERT(rec.time_ns == 10 && str_eq(rec.u.thread.name, "worker-1"));
	CU_ASSERT_FATAL(raw_reader_next(r, &rec) == 1);
	CU_ASSERT(rec.type == RAW_REC_THREAD_NAME && str_eq(rec.u.thread.name, "renamed"));

	CU_ASSERT_FATAL(raw_reader_next(r, &rec) == 1);
	CU_ASSERT(rec.type == RAW_REC_STACK && rec.u.stack.id == 1);
	CU_ASSERT(rec.u.stack.flags == RAW_STACK_FIRST_IS_PC);
	CU_ASSERT_FATAL(rec.u.stack.depth == 300);
	CU_ASSERT(memcmp(rec.u.stack.ips, ips, sizeof(ips)) == 0);

	CU_ASSERT_FATAL(raw_reader_next(r, &rec) == 1);
	CU_ASSERT(rec.type == RAW_REC_SAMPLE && rec.time_ns == 1000);
	CU_ASSERT(rec.u.sample.stack_id == 1 && rec.u.sample.weight == 1);
	CU_ASSERT_FATAL(raw_reader_next(r, &rec) == 1);
	CU_ASSERT(rec.time_ns == 11000000 && rec.u.sample.weight == 3);
	CU_ASSERT_FATAL(raw_reader_next(r, &rec) == 1);
	CU_ASSERT(rec.type == RAW_REC_SAMPLE && rec.time_ns == 21000000);

	CU_ASSERT_FATAL(raw_reader_next(r, &rec) == 1);
	CU_ASSERT(rec.type == RAW_REC_LOST && rec.time_ns == 22000000);
	CU_ASSERT(rec.u.lost.reason == RAW_LOST_UNWIND && rec.u.lost.count == 2);
	CU_ASSERT(rec.u.lost.weight == 5);

	CU_ASSERT_FATAL(raw_reader_next(r, &rec) == 1);
	CU_ASSERT(rec.type == RAW_REC_METRIC && rec.decoded && rec.u.metric.id == 3);
	CU_ASSERT(str_eq(rec.u.metric.name, "Bytes Allocated"));
	CU_ASSERT(rec.u.metric.unit == RAW_UNIT_BYTES && rec.u.metric.aggregation == RAW_AGG_PEAK);
	CU_ASSERT(rec.u.metric.kind == 1);
	CU_ASSERT_FATAL(raw_reader_next(r, &rec) == 1);
	CU_ASSERT(rec.type == RAW_REC_VALUE && rec.time_ns == 21500000);
	CU_ASSERT(rec.u.value.stack_id == 1 && rec.u.value.metric == 3);
	CU_ASSERT(rec.u.value.value == -4096);

	CU_ASSERT_FATAL(raw_reader_next(r, &rec) == 1);
	CU_ASSERT(rec.type == 40 && !rec.decoded && rec.payload_len == 5);
	CU_ASSERT(memcmp(rec.payload, ext, 5) == 0);

	CU_ASSERT_FATAL(raw_reader_next(r, &rec) == 1);
	CU_ASSERT(rec.type == RAW_REC_MODULE_UNLOAD && rec.time_ns == 23000000);
	CU_ASSERT(rec.u.unload.base == 0x7f0000000000ull);
	CU_ASSERT(str_eq(rec.u.unload.path, "/lib/libx.so"));

	CU_ASSERT_FATAL(raw_reader_next(r, &rec) == 1);
	CU_ASSERT(rec.type == RAW_REC_THREAD_CPU && rec.time_ns == 23500000);
	CU_ASSERT(rec.u.thread_end.tid == 1235 && rec.u.thread_end.cpu_ns == 98765);
	CU_ASSERT_FATAL(raw_reader_next(r, &rec) == 1);
	CU_ASSERT(rec.type == RAW_REC_THREAD_END && rec.u.thread_end.cpu_ns == 123456789);
	CU_ASSERT(raw_reader_next(r, &rec) == 0);
	CU_ASSERT(raw_reader_stats(r)->chunks == 2);
	CU_ASSERT(raw_reader_stats(r)->bytes_skipped == 0);
	CU_ASSERT(raw_reader_stats(r)->first_problem[0] == '\0');

	raw_reader_free(r);
	free(data);
	close(fd);
}

/* A steady program repeats one stack: a sample must cost well under 16 bytes. */
static void test_raw_sample_size(void)
{
	struct raw_file_header h;
	struct raw_writer w;
	uint64_t ips[20];
	size_t len, i;
	uint8_t *data;
	int fd;

	for (i = 0; i < 20; i++)
		ips[i] = 0x555555554000ull + i * 0x100;
	fd = open_stream(&w, &h, 16384);
	CU_ASSERT(raw_writer_stack(&w, 0, 0, ips, 20) == 0);
	for (i = 0; i < 10000; i++)
		CU_ASSERT(raw_writer_sample(&w, (int64_t)(i + 1) * 10000000, 0, 1) == 0);
	CU_ASSERT(raw_writer_flush(&w) == 0);
	data = read_back(fd, &len);
	CU_ASSERT(len < sizeof(h) + 10000 * 9);
	free(data);
	close(fd);
}

/* Reads every record of data; returns how many are of type (0: of any), and the stats. */
static unsigned count_records(const uint8_t *data, size_t len, unsigned type,
			      struct raw_reader_stats *st)
{
	struct raw_record rec;
	struct raw_reader *r;
	unsigned n = 0;
	int err;

	r = raw_reader_open_mem(data, len, &err);
	CU_ASSERT_FATAL(r != NULL);
	while (raw_reader_next(r, &rec) == 1)
		n += !type || rec.type == type;
	*st = *raw_reader_stats(r);
	raw_reader_free(r);
	return n;
}

/* 10 chunks of 100 samples each. */
static uint8_t *ten_chunks(size_t *len, size_t *chunk_start)
{
	struct raw_file_header h;
	struct raw_writer w;
	uint64_t ip = 0x401000;
	int c, i, fd;

	fd = open_stream(&w, &h, sizeof(wbuf));
	CU_ASSERT(raw_writer_stack(&w, 7, 0, &ip, 1) == 0);
	for (c = 0; c < 10; c++) {
		chunk_start[c] = (size_t)w.bytes_written;
		for (i = 0; i < 100; i++)
			CU_ASSERT(raw_writer_sample(&w, (c * 100 + i) * 1000, 7, 1) == 0);
		CU_ASSERT(raw_writer_flush(&w) == 0);
	}
	chunk_start[10] = (size_t)w.bytes_written;
	uint8_t *data = read_back(fd, len);
	close(fd);
	return data;
}

static void test_raw_truncated(void)
{
	struct raw_reader_stats st;
	size_t len, starts[11];
	uint8_t *data = ten_chunks(&len, starts);

	CU_ASSERT(count_records(data, len, RAW_REC_SAMPLE, &st) == 1000);
	/* Cut in the middle of the last chunk: the nine whole chunks survive. */
	size_t cut = (starts[9] + starts[10]) / 2;
	CU_ASSERT(count_records(data, cut, RAW_REC_SAMPLE, &st) == 900);
	CU_ASSERT(st.chunks_truncated == 1);
	CU_ASSERT(st.bytes_skipped == cut - starts[9]);
	CU_ASSERT(strstr(st.first_problem, "cut") != NULL);
	/* Cut inside a chunk header. */
	CU_ASSERT(count_records(data, starts[5] + 10, RAW_REC_SAMPLE, &st) == 500);
	CU_ASSERT(st.bytes_skipped == 10);
	/* Just the file header: valid, empty. */
	CU_ASSERT(count_records(data, sizeof(struct raw_file_header), RAW_REC_SAMPLE, &st) == 0 &&
		  st.bytes_skipped == 0);
	/* Less than a header: not a stream. */
	int err = 0;
	CU_ASSERT(raw_reader_open_mem(data, 100, &err) == NULL && err == -EINVAL);
	free(data);
}

static void test_raw_corrupted(void)
{
	struct raw_reader_stats st;
	size_t len, starts[11];
	uint8_t *data = ten_chunks(&len, starts);

	/* A flipped bit in chunk 3's records: that chunk is dropped, the rest kept. */
	data[starts[3] + 40] ^= 0x10;
	CU_ASSERT(count_records(data, len, RAW_REC_SAMPLE, &st) == 900);
	CU_ASSERT(st.chunks_bad_crc == 1);
	CU_ASSERT(st.bytes_skipped == starts[4] - starts[3]);
	CU_ASSERT(strstr(st.first_problem, "checksum") != NULL);
	data[starts[3] + 40] ^= 0x10;

	/* A damaged chunk size: the reader resynchronises on the next chunk. */
	uint32_t huge = 0x7fffffff;
	memcpy(data + starts[6] + 4, &huge, 4);
	CU_ASSERT(count_records(data, len, RAW_REC_SAMPLE, &st) == 900);
	CU_ASSERT(st.chunks_bad_magic + st.chunks_truncated == 1);

	/* Garbage between chunks (a torn partial write). */
	free(data);
	data = ten_chunks(&len, starts);
	uint8_t *g = malloc(len + 77);
	memcpy(g, data, starts[2]);
	memset(g + starts[2], 0xa5, 77);
	memcpy(g + starts[2] + 77, data + starts[2], len - starts[2]);
	CU_ASSERT(count_records(g, len + 77, RAW_REC_SAMPLE, &st) == 1000);
	CU_ASSERT(st.bytes_skipped == 77 && st.chunks_bad_magic == 1);
	free(g);

	/* Bad file headers. */
	int err = 0;
	data[0] = 'X';
	CU_ASSERT(raw_reader_open_mem(data, len, &err) == NULL && err == -EINVAL);
	data[0] = 'P';
	uint16_t v = 99;
	memcpy(data + 12, &v, 2);
	CU_ASSERT(raw_reader_open_mem(data, len, &err) == NULL && err == -EPROTONOSUPPORT);
	v = RAW_VERSION;
	memcpy(data + 12, &v, 2);
	uint32_t bom = 0x04030201;
	memcpy(data + 8, &bom, 4);
	CU_ASSERT(raw_reader_open_mem(data, len, &err) == NULL && err == -EPROTO);
	free(data);
}

/* A record too large for the buffer is refused and counted; the writer goes on. */
static void test_raw_writer_limits(void)
{
	struct raw_file_header h;
	struct raw_writer w;
	static uint64_t ips[RAW_MAX_DEPTH];
	static char big[RAW_MIN_BUFFER * 2];
	int fd = open_stream(&w, &h, RAW_MIN_BUFFER);

	memset(big, 'x', sizeof(big) - 1);
	CU_ASSERT(raw_writer_thread_name(&w, 1, 0, big) == -E2BIG);
	CU_ASSERT(raw_writer_stack(&w, 1, 0, ips, RAW_MAX_DEPTH) == -E2BIG);
	CU_ASSERT(w.dropped_records == 2);
	CU_ASSERT(raw_writer_sample(&w, 5, 1, 1) == 0);
	/* Many records through a small buffer: flushes happen by themselves. */
	for (int i = 0; i < 5000; i++)
		CU_ASSERT(raw_writer_sample(&w, 10 + i, 1, 1) == 0);
	CU_ASSERT(w.seq > 3);
	CU_ASSERT(raw_writer_init(&w, fd, big, 100, &h) == -EINVAL);
	/* A write error is reported and the records kept. */
	struct raw_writer w2;
	int bad = open("/dev/null", 0);
	CU_ASSERT(raw_writer_init(&w2, fd, wbuf, sizeof(wbuf), &h) == 0);
	w2.fd = bad; /* read-only: write(2) fails with EBADF */
	CU_ASSERT(raw_writer_sample(&w2, 1, 1, 1) == 0);
	CU_ASSERT(raw_writer_flush(&w2) == -EBADF);
	CU_ASSERT(raw_writer_pending(&w2) > 0);
	close(bad);
	close(fd);
}

/* ---- mapped windows (in memory): what a killed writer leaves behind -------------------- */

#define MEM_WINDOW 8192
static uint8_t mem_file[64 * MEM_WINDOW] __attribute__((aligned(4096)));

struct mem_ctx {
	size_t windows_left; /* windows handed out before -EFBIG */
	size_t end;          /* bytes of mem_file the windows cover */
};

static int mem_window(void *ctx, uint64_t off, size_t min, uint8_t **base, size_t *size)
{
	struct mem_ctx *c = ctx;
	size_t want =
		min > MEM_WINDOW ? (min + MEM_WINDOW - 1) / MEM_WINDOW * MEM_WINDOW : MEM_WINDOW;

	if (!c->windows_left || off + want > sizeof(mem_file))
		return -EFBIG;
	c->windows_left--;
	*base = mem_file + off;
	*size = want;
	c->end = (size_t)off + want;
	return 0;
}

/* Records of every kind, in a fixed order; returns 0 or the writer's error. */
static int write_one(struct raw_writer *w, unsigned i)
{
	static const uint64_t ips[4] = { 0x401000, 0x401100, 0x402000, 0x7f0000001000ull };
	const char *argv[] = { "prog", "arg" };
	struct raw_process p = { .pid = 5, .ppid = 1, .exe = "/bin/prog", .argc = 2, .argv = argv };
	struct raw_segment seg = { 0x400000, 0x1000, 0, 5 };
	struct raw_module m = { .path = "/bin/prog", .base = 0x400000, .nsegs = 1, .segs = &seg };

	switch (i % 8) {
	case 0:
		return raw_writer_stack(w, i, RAW_STACK_FIRST_IS_PC, ips, 1 + i % 4);
	case 1:
		return raw_writer_process(w, &p);
	case 2:
		return raw_writer_module_load(w, &m);
	case 3:
		return raw_writer_metric(w, i, "CPU Time", RAW_UNIT_NS, RAW_AGG_SUM, 1);
	case 4:
		return raw_writer_value(w, (int64_t)i * 1000, i, 0, (int64_t)i);
	default:
		return raw_writer_sample(w, (int64_t)i * 1000, i / 8 * 8, 1 + i % 3);
	}
}

/*
 * Every record is in the file as soon as the call returns, across windows and chunks; and a
 * writer stopped between storing a record's bytes and its type byte leaves the records before
 * it, with nothing counted as damage.
 */
static void test_raw_mapped_visible(void)
{
	struct mem_ctx c = { 64, 0 };
	struct raw_file_header h;
	struct raw_reader_stats st;
	struct raw_writer w;
	static uint8_t before[sizeof(mem_file)];
	unsigned i, n = 2990;

	memset(mem_file, 0, sizeof(mem_file));
	raw_header_init(&h, 5, 6, -1, "host", 1000000, RAW_SAMPLE_THREAD_CPU);
	CU_ASSERT_FATAL(raw_writer_init_mapped(&w, mem_window, &c, 1024, 256, &h) == 0);
	CU_ASSERT(count_records(mem_file, c.end, 0, &st) == 0 && st.bytes_skipped == 0);
	for (i = 0; i < n; i++) {
		size_t at = (size_t)raw_writer_file_size(&w);

		memcpy(before, mem_file, c.end);
		CU_ASSERT_FATAL(write_one(&w, i) == 0);
		if (i % 97 == 0 || i < 40) {
			CU_ASSERT(count_records(mem_file, c.end, 0, &st) == i + 1);
			CU_ASSERT(st.bytes_skipped == 0 && st.chunks_bad_crc == 0 &&
				  st.chunks_bad_magic == 0 && st.chunks_duplicate == 0);
			/* The same moment without the type byte: the record is not there yet. */
			if (at + 32 < c.end && raw_writer_pending(&w)) {
				size_t rec = (size_t)raw_writer_file_size(&w);
				uint8_t keep;

				/* the new record starts where the pending bytes began growing */
				for (rec = at; rec < c.end && !mem_file[rec]; rec++)
					;
				if (mem_file[rec] != (uint8_t)(RAW_CHUNK_MAGIC & 0xff)) {
					keep = mem_file[rec];
					mem_file[rec] = 0;
					CU_ASSERT(count_records(mem_file, c.end, 0, &st) == i);
					CU_ASSERT(st.bytes_skipped == 0 &&
						  st.records_malformed == 0);
					mem_file[rec] = keep;
				}
			}
		}
		if (i % 500 == 499)
			CU_ASSERT(raw_writer_flush(&w) == 0);
	}
	CU_ASSERT(c.windows_left < 63); /* it went through several windows */
	CU_ASSERT(count_records(mem_file, c.end, 0, &st) == n && st.chunks_open == 1);
	CU_ASSERT(raw_writer_flush(&w) == 0);
	CU_ASSERT(count_records(mem_file, c.end, 0, &st) == n && st.chunks_open == 0);
	CU_ASSERT(st.bytes_skipped == 0 && st.bytes_padding > 0);
	/* Cut at the length the writer used: same records, less padding. */
	CU_ASSERT(count_records(mem_file, (size_t)raw_writer_file_size(&w), 0, &st) == n);
	CU_ASSERT(st.bytes_skipped == 0);
}

/* No next window (RLIMIT_FSIZE): records fail, the reserve takes the closing records. */
static void test_raw_mapped_full(void)
{
	struct mem_ctx c = { 2, 0 };
	struct raw_file_header h;
	struct raw_reader_stats st;
	struct raw_record rec;
	struct raw_reader *r;
	struct raw_writer w;
	unsigned i, ok = 0, lost = 0, ends = 0;
	int ret = 0, err;

	memset(mem_file, 0, sizeof(mem_file));
	raw_header_init(&h, 5, 6, -1, "host", 1000000, RAW_SAMPLE_THREAD_CPU);
	CU_ASSERT_FATAL(raw_writer_init_mapped(&w, mem_window, &c, 1024, 512, &h) == 0);
	CU_ASSERT(raw_writer_stack(&w, 1, 0, (const uint64_t[]){ 0x401000 }, 1) == 0);
	for (i = 0; i < 10000 && !ret; i++) {
		ret = raw_writer_sample(&w, (int64_t)i, 1, 1);
		ok += !ret;
	}
	CU_ASSERT(ret == -EFBIG && w.full && w.error == -EFBIG);
	CU_ASSERT(raw_writer_sample(&w, 99999, 1, 1) == -EFBIG);
	raw_writer_finishing(&w);
	CU_ASSERT(raw_writer_lost(&w, 100000, RAW_LOST_FILE_SIZE_LIMIT, 2, 2) == 0);
	CU_ASSERT(raw_writer_thread_end(&w, 6, 100001, 5) == 0);
	raw_writer_flush(&w);
	CU_ASSERT(raw_writer_file_size(&w) <= c.end);

	r = raw_reader_open_mem(mem_file, c.end, &err);
	CU_ASSERT_FATAL(r != NULL);
	while (raw_reader_next(r, &rec) == 1) {
		lost += rec.type == RAW_REC_LOST && rec.u.lost.reason == RAW_LOST_FILE_SIZE_LIMIT;
		ends += rec.type == RAW_REC_THREAD_END;
	}
	st = *raw_reader_stats(r);
	raw_reader_free(r);
	CU_ASSERT(lost == 1 && ends == 1 && st.records == ok + 3);
	CU_ASSERT(st.bytes_skipped == 0);
	CU_ASSERT(!strcmp(raw_lost_reason_name(RAW_LOST_FILE_SIZE_LIMIT), "file-size-limit"));
	CU_ASSERT(!strcmp(raw_lost_reason_name(77), "other"));
}

/* A chunk seen again (copied, or a repeated write) is skipped and counted, never read twice. */
static void test_raw_duplicate_chunks(void)
{
	struct raw_reader_stats st;
	size_t len, starts[11], clen;
	uint8_t *data = ten_chunks(&len, starts);
	uint8_t *d = malloc(len + 2 * (starts[4] - starts[3]));

	clen = starts[4] - starts[3];
	/* chunks 0-5, chunk 3 again, chunks 6-9, chunk 9 again */
	memcpy(d, data, starts[6]);
	memcpy(d + starts[6], data + starts[3], clen);
	memcpy(d + starts[6] + clen, data + starts[6], len - starts[6]);
	memcpy(d + len + clen, data + starts[9], starts[10] - starts[9]);
	CU_ASSERT(count_records(d, len + clen + (starts[10] - starts[9]), RAW_REC_SAMPLE, &st) ==
		  1000);
	CU_ASSERT(st.chunks_duplicate == 2 && st.chunks == 10);
	CU_ASSERT(st.bytes_skipped == clen + (starts[10] - starts[9]));
	CU_ASSERT(strstr(st.first_problem, "duplicate") != NULL);
	free(d);
	free(data);
}

/* Header fields and a chunk's base_ns are covered by checksums. */
static void test_raw_header_and_base_checksums(void)
{
	struct raw_reader_stats st;
	size_t len, starts[11];
	uint8_t *data = ten_chunks(&len, starts);
	struct raw_file_header h;
	struct raw_reader *r;
	int err;

	memcpy(&h, data, sizeof(h));
	h.interval_ns ^= 1ull << 40;
	memcpy(data, &h, sizeof(h));
	r = raw_reader_open_mem(data, len, &err);
	CU_ASSERT_FATAL(r != NULL);
	CU_ASSERT(raw_reader_stats(r)->header_crc_bad);
	CU_ASSERT(strstr(raw_reader_stats(r)->first_problem, "header checksum") != NULL);
	raw_reader_free(r);
	h.header_crc = raw_header_crc(&h); /* a flip with the checksum made again passes */
	memcpy(data, &h, sizeof(h));
	r = raw_reader_open_mem(data, len, &err);
	CU_ASSERT_FATAL(r != NULL);
	CU_ASSERT(!raw_reader_stats(r)->header_crc_bad);
	raw_reader_free(r);

	/* base_ns of chunk 2 flipped: that chunk fails its checksum. */
	data[starts[2] + offsetof(struct raw_chunk_header, base_ns) + 3] ^= 0x40;
	CU_ASSERT(count_records(data, len, RAW_REC_SAMPLE, &st) == 900 && st.chunks_bad_crc == 1);
	free(data);
	/* A file of zeros (killed before its header): empty, not damaged. */
	data = calloc(1, 8192);
	CU_ASSERT(raw_reader_open_mem(data, 8192, &err) == NULL && err == -ENODATA);
	free(data);
}

/* A stream written by version 1 (tests/fixtures/raw-v1, made by the v1 writer) still reads. */
static void test_raw_v1_fixture(void)
{
	struct raw_record rec;
	struct raw_reader *r;
	uint64_t weight = 0, samples = 0, stacks = 0, cpu = 0, id;
	bool process = false, module = false;
	int err;

	r = raw_reader_open(FIXTURE_DIR "/raw-v1/4242.4243.praw", &err);
	CU_ASSERT_FATAL(r != NULL);
	CU_ASSERT(raw_reader_header(r)->version == 1 && raw_reader_header(r)->pid == 4242);
	CU_ASSERT(raw_reader_header(r)->kind == RAW_STREAM_THREAD);
	id = raw_reader_header(r)->stream_id;
	CU_ASSERT(id != 0);
	while (raw_reader_next(r, &rec) == 1) {
		if (rec.type == RAW_REC_SAMPLE) {
			samples++;
			weight += rec.u.sample.weight;
		}
		stacks += rec.type == RAW_REC_STACK;
		process |= rec.type == RAW_REC_PROCESS && rec.u.process.argc == 2;
		module |= rec.type == RAW_REC_MODULE_LOAD && rec.u.module.build_id_len == 4;
		if (rec.type == RAW_REC_THREAD_END)
			cpu = rec.u.thread_end.cpu_ns;
	}
	CU_ASSERT(samples == 30 && weight == 50 && stacks == 2 && process && module);
	CU_ASSERT(cpu == 540000000);
	CU_ASSERT(raw_reader_stats(r)->chunks == 2 && raw_reader_stats(r)->bytes_skipped == 0);
	raw_reader_free(r);
	/* The same bytes give the same identity: how a copied v1 stream is recognised. */
	r = raw_reader_open(FIXTURE_DIR "/raw-v1/4242.4243.praw", &err);
	CU_ASSERT_FATAL(r != NULL);
	CU_ASSERT(raw_reader_header(r)->stream_id == id);
	raw_reader_free(r);
}

/* Weights no timer gives are damage: refused, so no sum can be poisoned by one. */
static void test_raw_weight_bounds(void)
{
	struct raw_file_header h;
	struct raw_writer w;
	struct raw_reader_stats st;
	size_t len;
	uint8_t *data;
	int fd = open_stream(&w, &h, sizeof(wbuf));

	(void)h;
	CU_ASSERT(raw_writer_sample(&w, 1, 1, 1) == 0);
	CU_ASSERT(raw_writer_sample(&w, 2, 1, 0) == 0);
	CU_ASSERT(raw_writer_sample(&w, 3, 1, (uint64_t)RAW_MAX_WEIGHT + 1) == 0);
	CU_ASSERT(raw_writer_sample(&w, 4, 1, RAW_MAX_WEIGHT) == 0);
	CU_ASSERT(raw_writer_flush(&w) == 0);
	data = read_back(fd, &len);
	CU_ASSERT(count_records(data, len, RAW_REC_SAMPLE, &st) == 2 && st.records_malformed == 2);
	free(data);
	close(fd);
}

/* The wait records (48-52) read back field by field, the largest values included. */
static void test_raw_wait_records(void)
{
	struct raw_file_header h;
	struct raw_writer w;
	struct raw_record rec;
	struct raw_reader *r;
	uint8_t bad[3 * RAW_VARINT_MAX], *data;
	struct raw_enc e = { bad, bad + sizeof(bad), false };
	size_t len;
	int fd, err;

	fd = open_stream(&w, &h, sizeof(wbuf));
	CU_ASSERT(raw_writer_wait(&w, 300000000, 7, 301234567, RAW_WAIT_SLEEP, 0) == 0);
	CU_ASSERT(raw_writer_wait(&w, -3, 1, UINT64_MAX, RAW_WAIT_MUTEX, 0x7ffd12345678ull) == 0);
	CU_ASSERT(raw_writer_wait_sum(&w, 400000000, 9, RAW_WAIT_COND, 0x55550000ull, 1000,
				      47000000) == 0);
	CU_ASSERT(raw_writer_object(&w, RAW_WAIT_READ, 5, "pipe:[1234]") == 0);
	CU_ASSERT(raw_writer_omp_region(&w, 500, 2000000, 0x401234, 4) == 0);
	CU_ASSERT(raw_writer_wait_open(&w, 600, 11, RAW_WAIT_POLL, 3, 700) == 0);
	CU_ASSERT(raw_writer_origin(&w, 800, 4242, 13, RAW_ORIGIN_WORK) == 0);
	/* A kind that does not fit 32 bits is damage: the record is skipped. */
	raw_enc_svarint(&e, 1);
	raw_enc_varint(&e, 0x100000000ull);
	raw_enc_varint(&e, 5);
	CU_ASSERT(raw_writer_record(&w, RAW_REC_OBJECT, bad, (size_t)(e.p - bad)) == 0);
	CU_ASSERT(raw_writer_flush(&w) == 0);
	data = read_back(fd, &len);
	r = raw_reader_open_mem(data, len, &err);
	CU_ASSERT_FATAL(r != NULL);

	CU_ASSERT_FATAL(raw_reader_next(r, &rec) == 1);
	CU_ASSERT(rec.type == RAW_REC_WAIT && rec.decoded && rec.time_ns == 300000000);
	CU_ASSERT(rec.u.wait.stack_id == 7 && rec.u.wait.duration_ns == 301234567);
	CU_ASSERT(rec.u.wait.kind == RAW_WAIT_SLEEP && rec.u.wait.object == 0);
	CU_ASSERT_FATAL(raw_reader_next(r, &rec) == 1);
	CU_ASSERT(rec.type == RAW_REC_WAIT && rec.time_ns == -3);
	CU_ASSERT(rec.u.wait.duration_ns == UINT64_MAX && rec.u.wait.object == 0x7ffd12345678ull);
	CU_ASSERT_FATAL(raw_reader_next(r, &rec) == 1);
	CU_ASSERT(rec.type == RAW_REC_WAIT_SUM && rec.time_ns == 400000000);
	CU_ASSERT(rec.u.wait_sum.stack_id == 9 && rec.u.wait_sum.kind == RAW_WAIT_COND);
	CU_ASSERT(rec.u.wait_sum.object == 0x55550000ull && rec.u.wait_sum.count == 1000);
	CU_ASSERT(rec.u.wait_sum.total_ns == 47000000);
	CU_ASSERT_FATAL(raw_reader_next(r, &rec) == 1);
	CU_ASSERT(rec.type == RAW_REC_OBJECT && rec.u.object.kind == RAW_WAIT_READ);
	CU_ASSERT(rec.u.object.object == 5 && str_eq(rec.u.object.name, "pipe:[1234]"));
	CU_ASSERT_FATAL(raw_reader_next(r, &rec) == 1);
	CU_ASSERT(rec.type == RAW_REC_OMP_REGION && rec.time_ns == 500);
	CU_ASSERT(rec.u.omp_region.duration_ns == 2000000);
	CU_ASSERT(rec.u.omp_region.object == 0x401234 && rec.u.omp_region.threads == 4);
	CU_ASSERT_FATAL(raw_reader_next(r, &rec) == 1);
	CU_ASSERT(rec.type == RAW_REC_WAIT_OPEN && rec.decoded && rec.time_ns == 600);
	CU_ASSERT(rec.u.wait.stack_id == 11 && rec.u.wait.kind == RAW_WAIT_POLL);
	CU_ASSERT(rec.u.wait.object == 3 && rec.u.wait.duration_ns == 0);
	CU_ASSERT(rec.u.wait.seen_ns == 700);
	CU_ASSERT_FATAL(raw_reader_next(r, &rec) == 1);
	CU_ASSERT(rec.type == RAW_REC_ORIGIN && rec.decoded && rec.time_ns == 800);
	CU_ASSERT(rec.u.origin.tid == 4242 && rec.u.origin.stack_id == 13);
	CU_ASSERT(rec.u.origin.kind == RAW_ORIGIN_WORK);
	CU_ASSERT(raw_reader_next(r, &rec) == 0);
	CU_ASSERT(raw_reader_stats(r)->records_malformed == 1);

	CU_ASSERT(strcmp(raw_wait_kind_name(RAW_WAIT_GIL), "gil") == 0);
	CU_ASSERT(strcmp(raw_wait_kind_name(RAW_WAIT_OMP_BARRIER), "openmp-barrier") == 0);
	CU_ASSERT(strcmp(raw_wait_kind_name(0), "other") == 0);
	CU_ASSERT(strcmp(raw_wait_kind_name(RAW_WAIT_KIND_MAX + 1), "other") == 0);
	raw_reader_free(r);
	free(data);
	close(fd);
}

UNIT_MAIN("raw-stream", NULL, NULL,
	  {
		  { "varint edges", test_raw_varint_edges },
		  { "zigzag", test_raw_zigzag },
		  { "crc32 check value", test_raw_crc32_known },
		  { "header fields", test_raw_header_fields },
		  { "round trip of every record type", test_raw_roundtrip_every_type },
		  { "sample size", test_raw_sample_size },
		  { "truncated streams", test_raw_truncated },
		  { "corrupted streams", test_raw_corrupted },
		  { "writer limits and errors", test_raw_writer_limits },
		  { "mapped writer: every record visible at once", test_raw_mapped_visible },
		  { "mapped writer: no next window", test_raw_mapped_full },
		  { "duplicate chunks skipped", test_raw_duplicate_chunks },
		  { "header and base_ns checksums", test_raw_header_and_base_checksums },
		  { "version 1 fixture", test_raw_v1_fixture },
		  { "weight bounds", test_raw_weight_bounds },
		  { "wait records", test_raw_wait_records },
	  })
