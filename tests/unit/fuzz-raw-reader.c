/* SPDX-License-Identifier: MIT */
/* Feeds the raw stream reader thousands of random and mutated streams; run under ASan+UBSan. */
#include "common/raw-stream.h"

#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "tests/unit/unit.h"

#define HDR sizeof(struct raw_file_header)

/* xorshift64*: deterministic, so a failure reproduces with the printed seed. */
static uint64_t rng_state = 0x9e3779b97f4a7c15ull;

static uint64_t rng(void)
{
	rng_state ^= rng_state >> 12;
	rng_state ^= rng_state << 25;
	rng_state ^= rng_state >> 27;
	return rng_state * 0x2545f4914f6cdd1dull;
}

static uint8_t *seed_stream(size_t *len)
{
	static uint8_t buf[8192];
	struct raw_file_header h;
	struct raw_writer w;
	uint64_t ips[64];
	uint8_t bid[20] = { 1, 2, 3 };
	struct raw_segment seg = { 0x400000, 0x1000, 0, 5 };
	const char *argv[] = { "prog", "-x", "arg" };
	int fd = memfd_create("fuzz-seed", 0);
	int i;

	CU_ASSERT_FATAL(fd >= 0);
	raw_header_init(&h, 10, 11, 0, "host", 1000000, RAW_SAMPLE_THREAD_CPU);
	CU_ASSERT_FATAL(raw_writer_init(&w, fd, buf, sizeof(buf), &h) == 0);
	struct raw_process p = {
		.pid = 10, .ppid = 1, .exe = "/bin/prog", .argc = 3, .argv = argv
	};
	struct raw_module m = { .path = "/bin/prog",
				.base = 0x400000,
				.build_id = bid,
				.build_id_len = 20,
				.nsegs = 1,
				.segs = &seg };
	raw_writer_process(&w, &p);
	raw_writer_module_load(&w, &m);
	raw_writer_thread_start(&w, 11, 5, "main");
	for (i = 0; i < 64; i++)
		ips[i] = 0x400000 + (uint64_t)i * 37;
	for (i = 0; i < 200; i++) {
		if (i % 20 == 0)
			raw_writer_stack(&w, (uint64_t)i / 20, RAW_STACK_FIRST_IS_PC, ips,
					 (uint32_t)(1 + i % 64));
		raw_writer_sample(&w, i * 1000, (uint64_t)i / 20, 1 + (uint64_t)i % 3);
		if (i % 50 == 49)
			raw_writer_flush(&w);
	}
	raw_writer_lost(&w, 1, RAW_LOST_BUSY, 1, 1);
	raw_writer_record(&w, 77, "opaque", 6);
	raw_writer_module_unload(&w, 2, 0x400000, "/bin/prog");
	raw_writer_thread_end(&w, 11, 3, 4);
	raw_writer_flush(&w);
	*len = (size_t)lseek(fd, 0, SEEK_END);
	uint8_t *data = malloc(*len);
	CU_ASSERT_FATAL(pread(fd, data, *len, 0) == (ssize_t)*len);
	close(fd);
	return data;
}

/* A mapped writer's file as a killed process leaves it: an open last chunk, a zero tail. */
static uint8_t mapped_file[4 * 16384] __attribute__((aligned(4096)));

static int mem_window(void *ctx, uint64_t off, size_t min, uint8_t **base, size_t *size)
{
	(void)ctx;
	if (off + 16384 > sizeof(mapped_file) || min > 16384)
		return -EFBIG;
	*base = mapped_file + off;
	*size = 16384;
	return 0;
}

static uint8_t *seed_mapped(size_t *len)
{
	struct raw_file_header h;
	struct raw_writer w;
	uint64_t ips[32];
	uint8_t *data;
	int i;

	memset(mapped_file, 0, sizeof(mapped_file));
	raw_header_init(&h, 10, 12, 0, "host", 1000000, RAW_SAMPLE_THREAD_CPU);
	CU_ASSERT_FATAL(raw_writer_init_mapped(&w, mem_window, NULL, 1024, 256, &h) == 0);
	for (i = 0; i < 32; i++)
		ips[i] = 0x400000 + (uint64_t)i * 91;
	raw_writer_metric(&w, 0, "CPU Time", RAW_UNIT_NS, RAW_AGG_SUM, 1);
	raw_writer_note(&w, 3, 12, RAW_NOTE_TIMER_FALLBACK, "why");
	for (i = 0; i < 400; i++) {
		if (i % 25 == 0)
			raw_writer_stack(&w, (uint64_t)i / 25, 0, ips, (uint32_t)(1 + i % 32));
		raw_writer_sample(&w, i * 1000, (uint64_t)i / 25, 1);
		if (i % 7 == 0)
			raw_writer_value(&w, i * 1000 + 1, (uint64_t)i / 25, 0, -i);
	}
	/* No flush: the last chunk stays open, the rest of the window zeros. */
	*len = (size_t)(w.window_off + w.cap);
	data = malloc(*len);
	CU_ASSERT_FATAL(data != NULL);
	memcpy(data, mapped_file, *len);
	return data;
}

/* Read everything; check the reader's own accounting. */
static void read_all(const uint8_t *data, size_t len)
{
	struct raw_record rec;
	struct raw_reader *r;
	uint64_t payload = 0;
	int err = 0;

	r = raw_reader_open_mem(data, len, &err);
	if (!r) {
		CU_ASSERT(err < 0);
		return;
	}
	while (raw_reader_next(r, &rec) == 1) {
		CU_ASSERT(rec.type >= 1 && rec.type <= RAW_REC_MAX);
		CU_ASSERT(rec.payload >= data && rec.payload + rec.payload_len <= data + len);
		payload += rec.payload_len;
		if (rec.type == RAW_REC_STACK && rec.decoded)
			CU_ASSERT(rec.u.stack.depth <= RAW_MAX_DEPTH);
	}
	const struct raw_reader_stats *st = raw_reader_stats(r);
	CU_ASSERT(st->bytes_skipped <= st->bytes_total);
	CU_ASSERT(payload + st->bytes_skipped <= len);
	raw_reader_free(r);
}

static void fuzz_mutations(uint8_t *seed, size_t seed_len, size_t n);

static void test_fuzz_mutations(void)
{
	size_t n = 20000, len;
	const char *env = getenv("FUZZ_ITERATIONS");
	uint8_t *seed;

	if (env)
		n = strtoul(env, NULL, 10);
	seed = seed_stream(&len);
	fuzz_mutations(seed, len, n);
	seed = seed_mapped(&len);
	fuzz_mutations(seed, len, n);
}

static void fuzz_mutations(uint8_t *seed, size_t seed_len, size_t n)
{
	size_t i;
	uint8_t *buf = malloc(seed_len * 2 + 64);

	read_all(seed, seed_len);
	for (i = 0; i < n; i++) {
		size_t len = seed_len, k, nmut = 1 + rng() % 8;

		memcpy(buf, seed, seed_len);
		for (k = 0; k < nmut; k++) {
			size_t at = HDR + rng() % (len - HDR + 1);
			switch (rng() % 8) {
			case 0: /* flip a bit */
				if (at < len)
					buf[at] ^= (uint8_t)(1u << (rng() % 8));
				break;
			case 1: /* random byte */
				if (at < len)
					buf[at] = (uint8_t)rng();
				break;
			case 2: /* truncate */
				len = at;
				break;
			case 3: /* delete a run */
				if (at < len) {
					size_t run = 1 + rng() % 16;
					if (run > len - at)
						run = len - at;
					memmove(buf + at, buf + at + run, len - at - run);
					len -= run;
				}
				break;
			case 4: /* insert a run of random bytes */
				if (len + 16 <= seed_len * 2 + 64) {
					memmove(buf + at + 16, buf + at, len - at);
					for (size_t j = 0; j < 16; j++)
						buf[at + j] = (uint8_t)rng();
					len += 16;
				}
				break;
			case 5: /* an interesting 32-bit value, e.g. over a chunk size */
				if (at + 4 <= len) {
					static const uint32_t vals[] = {
						0,  1,   0xffffffff, 0x7fffffff, RAW_CHUNK_MAGIC,
						24, 4096
					};
					uint32_t v = vals[rng() % 7];
					memcpy(buf + at, &v, 4);
				}
				break;
			case 7: /* a header byte, its checksum made again half of the time */
				buf[rng() % HDR] ^= (uint8_t)(1u << (rng() % 8));
				if (rng() % 2) {
					struct raw_file_header h;

					memcpy(&h, buf, sizeof(h));
					h.header_crc = raw_header_crc(&h);
					memcpy(buf, &h, sizeof(h));
				}
				break;
			case 6: /* a valid-looking chunk header with a wrong checksum */
				if (at + 24 <= len) {
					struct raw_chunk_header ch = { RAW_CHUNK_MAGIC,
								       (uint32_t)(rng() % 64), 0, 0,
								       0 };
					memcpy(buf + at, &ch, sizeof(ch));
				}
				break;
			}
		}
		read_all(buf, len);
	}
	free(buf);
	free(seed);
}

/* Random bytes behind a valid file header, including chunks with correct checksums. */
static void test_fuzz_random(void)
{
	size_t i, n = 5000;
	uint8_t *buf = malloc(4096);
	struct raw_file_header h;

	raw_header_init(&h, 1, 1, -1, "h", 0, RAW_SAMPLE_NONE);
	h.header_crc = raw_header_crc(&h);
	for (i = 0; i < n; i++) {
		size_t len = HDR + rng() % (4096 - HDR), j;

		memcpy(buf, &h, sizeof(h));
		for (j = HDR; j < len; j++)
			buf[j] = (uint8_t)rng();
		if (len > HDR + 24 && rng() % 2) {
			/* A well-formed chunk of random records: exercises the record decoders. */
			struct raw_chunk_header ch = { RAW_CHUNK_MAGIC, (uint32_t)(len - HDR - 24),
						       0, 0, 0 };
			for (j = HDR + 24; j < len; j += 1 + rng() % 12)
				buf[j] = (uint8_t)(1 + rng() % 12); /* core types more often */
			if (rng() % 4 == 0)
				ch.size = RAW_CHUNK_OPEN; /* an open chunk: read to a zero type */
			else
				ch.crc = raw_chunk_crc(&ch, buf + HDR + 24);
			memcpy(buf + HDR, &ch, sizeof(ch));
		}
		read_all(buf, len);
	}
	/* Totally random data, headers included. */
	for (i = 0; i < n; i++) {
		size_t len = rng() % 512, j;
		for (j = 0; j < len; j++)
			buf[j] = (uint8_t)rng();
		read_all(buf, len);
	}
	free(buf);
}

UNIT_MAIN("fuzz-raw-reader", UNIT_TEST("mutated streams", test_fuzz_mutations),
	  UNIT_TEST("random streams", test_fuzz_random))
