/* SPDX-License-Identifier: MIT */
/* Unit tests of the MPI records (common/raw-mpi.c): round trips, the table, malformed ones. */
#include "common/raw-mpi.h"

#include <errno.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>
#include "tests/unit/unit.h"

static uint8_t wbuf[16 * 1024];

/* Write the records with the writer on an anonymous file, then read them all back. */
struct written {
	uint8_t *data;
	size_t len;
	struct raw_reader *r;
};

static struct raw_writer *begin(struct raw_writer *w, int *fd)
{
	struct raw_file_header h;

	*fd = memfd_create("raw-mpi-test", 0);
	CU_ASSERT_FATAL(*fd >= 0);
	raw_header_init(&h, 4242, 4242, 3, "node07", 10000000, RAW_SAMPLE_THREAD_CPU);
	CU_ASSERT_FATAL(raw_writer_init(w, *fd, wbuf, sizeof(wbuf), &h) == 0);
	return w;
}

static void finish(struct raw_writer *w, int fd, struct written *out)
{
	off_t end;
	int err;

	CU_ASSERT_FATAL(raw_writer_flush(w) == 0);
	end = lseek(fd, 0, SEEK_END);
	out->data = malloc((size_t)end + 1);
	CU_ASSERT_FATAL(out->data != NULL);
	CU_ASSERT_FATAL(pread(fd, out->data, (size_t)end, 0) == end);
	out->len = (size_t)end;
	close(fd);
	out->r = raw_reader_open_mem(out->data, out->len, &err);
	CU_ASSERT_FATAL(out->r != NULL);
}

static void release(struct written *x)
{
	raw_reader_free(x->r);
	free(x->data);
}

/* The next record of an MPI type, skipping the others (thread start...). */
static bool next_mpi(struct raw_reader *r, struct raw_record *rec)
{
	while (raw_reader_next(r, rec))
		if (rec->type >= RAW_REC_MPI_FIRST && rec->type < RAW_REC_MPI_FIRST + 16)
			return true;
	return false;
}

static void test_raw_mpi_round_trip(void)
{
	const struct raw_mpi_call calls[] = {
		{ .time_ns = 123456789,
		  .stack = 7,
		  .function = RAW_MPI_Barrier,
		  .comm_size = 64,
		  .count = 1,
		  .total_ns = 2500000000ull },
		{ .time_ns = -5, .stack = 1, .function = RAW_MPI_Init, .count = 1, .total_ns = 1 },
		{ .time_ns = 999,
		  .stack = 1ull << 40,
		  .function = RAW_MPI_Sendrecv,
		  .comm_size = 4,
		  .count = 97,
		  .total_ns = 617043,
		  .sent = 198656,
		  .received = 1ull << 50,
		  .summed = true },
	};
	const struct raw_mpi_rank rank = { 42, 17, 10000 };
	struct raw_writer w;
	struct raw_record rec;
	struct raw_mpi_call got;
	struct raw_mpi_rank rgot;
	struct written x;
	size_t i;
	int fd;

	begin(&w, &fd);
	for (i = 0; i < sizeof(calls) / sizeof(calls[0]); i++)
		CU_ASSERT(raw_mpi_write_call(&w, &calls[i]) == 0);
	CU_ASSERT(raw_mpi_write_rank(&w, &rank) == 0);
	finish(&w, fd, &x);
	for (i = 0; i < sizeof(calls) / sizeof(calls[0]); i++) {
		CU_ASSERT_FATAL(next_mpi(x.r, &rec));
		CU_ASSERT(rec.type == (calls[i].summed ? RAW_REC_MPI_SUM : RAW_REC_MPI_CALL));
		CU_ASSERT_FATAL(raw_mpi_read_call(&rec, &got) == 0);
		CU_ASSERT(got.time_ns == calls[i].time_ns);
		CU_ASSERT(got.stack == calls[i].stack);
		CU_ASSERT(got.function == calls[i].function);
		CU_ASSERT(got.comm_size == calls[i].comm_size);
		CU_ASSERT(got.count == calls[i].count);
		CU_ASSERT(got.total_ns == calls[i].total_ns);
		CU_ASSERT(got.sent == calls[i].sent);
		CU_ASSERT(got.received == calls[i].received);
		CU_ASSERT(got.summed == calls[i].summed);
	}
	CU_ASSERT_FATAL(next_mpi(x.r, &rec));
	CU_ASSERT(rec.type == RAW_REC_MPI_RANK);
	CU_ASSERT(raw_mpi_read_rank(&rec, &rgot) == 0);
	CU_ASSERT(rgot.time_ns == 42 && rgot.rank == 17 && rgot.size == 10000);
	CU_ASSERT(!next_mpi(x.r, &rec));
	release(&x);
}

/* A record's payload alone, decoded: what the reader hands a decoder. */
static int decode(uint8_t type, const uint8_t *payload, size_t len, struct raw_mpi_call *c)
{
	struct raw_record rec = { .type = type, .payload = payload, .payload_len = len };

	return raw_mpi_read_call(&rec, c);
}

static void test_raw_mpi_malformed(void)
{
	/* time 0, stack 1, Barrier, duration 5, comm 4, sent 0, received 0 */
	static const uint8_t good[] = { 0, 1, RAW_MPI_Barrier, 5, 4, 0, 0 };
	/* a sum of 0 calls: time, stack, Send, comm 2, count 0, total 5, sent 1, received 0 */
	static const uint8_t zero[] = { 0, 1, RAW_MPI_Send, 2, 0, 5, 1, 0 };
	/* a duration past 2^53 ns: varint of 2^54 */
	static const uint8_t huge[] = {
		0, 1, RAW_MPI_Barrier, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x80, 0x40, 4, 0, 0
	};
	struct raw_mpi_call c;
	struct raw_record rank = { .type = RAW_REC_MPI_RANK };
	static const uint8_t bad_rank[] = { 0, 5, 5 }; /* rank 5 of 5 */
	struct raw_mpi_rank r;
	size_t n;

	CU_ASSERT(decode(RAW_REC_MPI_CALL, good, sizeof(good), &c) == 0);
	CU_ASSERT(c.count == 1 && c.total_ns == 5 && c.comm_size == 4);
	for (n = 0; n < sizeof(good); n++) /* every cut is refused */
		CU_ASSERT(decode(RAW_REC_MPI_CALL, good, n, &c) == -EINVAL);
	CU_ASSERT(decode(RAW_REC_MPI_SUM, zero, sizeof(zero), &c) == -EINVAL);
	CU_ASSERT(decode(RAW_REC_MPI_CALL, huge, sizeof(huge), &c) == -EINVAL);
	CU_ASSERT(decode(RAW_REC_MPI_RANK, good, sizeof(good), &c) == -EINVAL);
	rank.payload = bad_rank;
	rank.payload_len = sizeof(bad_rank);
	CU_ASSERT(raw_mpi_read_rank(&rank, &r) == -EINVAL);
}

static void test_raw_mpi_functions(void)
{
	uint32_t id;

	CU_ASSERT_STRING_EQUAL(raw_mpi_function_name(RAW_MPI_Allreduce), "MPI_Allreduce");
	CU_ASSERT(raw_mpi_function_name(0) == NULL);
	CU_ASSERT(raw_mpi_function_name(RAW_MPI_FUNCTION_MAX + 1) == NULL);
	CU_ASSERT(raw_mpi_function_id("MPI_Waitall") == RAW_MPI_Waitall);
	CU_ASSERT(raw_mpi_function_id("MPI_Nope") == 0);
	CU_ASSERT_STRING_EQUAL(raw_mpi_kind_name(raw_mpi_function_kind(RAW_MPI_Bcast)),
			       "collective");
	CU_ASSERT_STRING_EQUAL(raw_mpi_kind_name(raw_mpi_function_kind(RAW_MPI_Irecv)), "receive");
	/* Every id up to the last is named, and its name gives it back. */
	for (id = 1; id <= RAW_MPI_FUNCTION_MAX; id++) {
		CU_ASSERT_FATAL(raw_mpi_function_name(id) != NULL);
		CU_ASSERT(raw_mpi_function_id(raw_mpi_function_name(id)) == id);
	}
}

UNIT_MAIN("raw-mpi", UNIT_TEST("round_trip", test_raw_mpi_round_trip),
	  UNIT_TEST("malformed", test_raw_mpi_malformed),
	  UNIT_TEST("functions", test_raw_mpi_functions))
