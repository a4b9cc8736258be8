/* SPDX-License-Identifier: MIT */
/* Raw stream records of MPI tracing: the function table, encoders and decoders. */
#include <errno.h>
#include <string.h>

#include "common/raw-mpi.h"

static const struct {
	const char *name;
	uint32_t kind;
} functions[RAW_MPI_FUNCTION_MAX + 1] = {
#define RAW_MPI_ROW(id, fname, fkind) [id] = { #fname, fkind },
	RAW_MPI_FUNCTIONS(RAW_MPI_ROW)
#undef RAW_MPI_ROW
};

const char *raw_mpi_function_name(uint32_t id)
{
	return id <= RAW_MPI_FUNCTION_MAX ? functions[id].name : NULL;
}

uint32_t raw_mpi_function_id(const char *name)
{
	uint32_t id;

	for (id = 1; name && id <= RAW_MPI_FUNCTION_MAX; id++)
		if (functions[id].name && !strcmp(functions[id].name, name))
			return id;
	return 0;
}

uint32_t raw_mpi_function_kind(uint32_t id)
{
	return id <= RAW_MPI_FUNCTION_MAX ? functions[id].kind : RAW_MPI_KIND_OTHER;
}

const char *raw_mpi_kind_name(uint32_t kind)
{
	static const char *const names[] = { "other", "send",       "receive",     "send-receive",
					     "wait",  "collective", "communicator" };

	return kind < sizeof(names) / sizeof(names[0]) ? names[kind] : "other";
}

/* The most one record may say: more is damage (and could overflow the sums). */
#define MAX_COUNT (1ull << 40)
#define MAX_NS    (1ull << 53) /* about 104 days */
#define MAX_BYTES (1ull << 56)

int raw_mpi_write_call(struct raw_writer *w, const struct raw_mpi_call *c)
{
	uint8_t buf[8 * RAW_VARINT_MAX];
	struct raw_enc e = { buf, buf + sizeof(buf), false };

	raw_enc_svarint(&e, c->time_ns);
	raw_enc_varint(&e, c->stack);
	raw_enc_varint(&e, c->function);
	if (c->summed) {
		raw_enc_varint(&e, c->comm_size);
		raw_enc_varint(&e, c->count);
		raw_enc_varint(&e, c->total_ns);
	} else {
		raw_enc_varint(&e, c->total_ns);
		raw_enc_varint(&e, c->comm_size);
	}
	raw_enc_varint(&e, c->sent);
	raw_enc_varint(&e, c->received);
	if (e.overflow)
		return -E2BIG;
	return raw_writer_record(w, c->summed ? RAW_REC_MPI_SUM : RAW_REC_MPI_CALL, buf,
				 (size_t)(e.p - buf));
}

int raw_mpi_write_rank(struct raw_writer *w, const struct raw_mpi_rank *r)
{
	uint8_t buf[3 * RAW_VARINT_MAX];
	struct raw_enc e = { buf, buf + sizeof(buf), false };

	raw_enc_svarint(&e, r->time_ns);
	raw_enc_varint(&e, r->rank);
	raw_enc_varint(&e, r->size);
	if (e.overflow)
		return -E2BIG;
	return raw_writer_record(w, RAW_REC_MPI_RANK, buf, (size_t)(e.p - buf));
}

int raw_mpi_read_call(const struct raw_record *rec, struct raw_mpi_call *out)
{
	struct raw_dec d = { rec->payload, rec->payload + rec->payload_len, false };
	uint64_t function, comm_size;

	memset(out, 0, sizeof(*out));
	if (rec->type != RAW_REC_MPI_CALL && rec->type != RAW_REC_MPI_SUM)
		return -EINVAL;
	out->summed = rec->type == RAW_REC_MPI_SUM;
	out->time_ns = raw_dec_svarint(&d);
	out->stack = raw_dec_varint(&d);
	function = raw_dec_varint(&d);
	if (out->summed) {
		comm_size = raw_dec_varint(&d);
		out->count = raw_dec_varint(&d);
		out->total_ns = raw_dec_varint(&d);
	} else {
		out->total_ns = raw_dec_varint(&d);
		comm_size = raw_dec_varint(&d);
		out->count = 1;
	}
	out->sent = raw_dec_varint(&d);
	out->received = raw_dec_varint(&d);
	if (d.error || function > UINT32_MAX || comm_size > UINT32_MAX || !out->count ||
	    out->count > MAX_COUNT || out->total_ns > MAX_NS || out->sent > MAX_BYTES ||
	    out->received > MAX_BYTES)
		return -EINVAL;
	out->function = (uint32_t)function;
	out->comm_size = (uint32_t)comm_size;
	return 0;
}

int raw_mpi_read_rank(const struct raw_record *rec, struct raw_mpi_rank *out)
{
	struct raw_dec d = { rec->payload, rec->payload + rec->payload_len, false };
	uint64_t rank, size;

	memset(out, 0, sizeof(*out));
	if (rec->type != RAW_REC_MPI_RANK)
		return -EINVAL;
	out->time_ns = raw_dec_svarint(&d);
	rank = raw_dec_varint(&d);
	size = raw_dec_varint(&d);
	if (d.error || rank >= size || size > INT32_MAX)
		return -EINVAL;
	out->rank = (uint32_t)rank;
	out->size = (uint32_t)size;
	return 0;
}
