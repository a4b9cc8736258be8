/* SPDX-License-Identifier: MIT */
/* Raw stream reader: decodes records, survives cut and damaged files, counts what it skips. */
#include "common/raw-stream.h"

#include <errno.h>
#include <fcntl.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#define CHUNK_HDR sizeof(struct raw_chunk_header)

struct raw_reader {
	const uint8_t *data;
	size_t size;
	bool mapped;
	struct raw_file_header header;
	struct raw_reader_stats stats;
	size_t pos;		   /* next chunk header */
	const uint8_t *rec, *rec_end; /* records left in the current chunk */
	int64_t last_ns;	   /* sample time base in the current chunk */
	uint64_t ips[RAW_MAX_DEPTH];
	struct raw_segment segs[RAW_MAX_SEGMENTS];
	struct raw_string args[RAW_MAX_ARGS];
};

static void problem(struct raw_reader *r, const char *fmt, ...)
	__attribute__((format(printf, 2, 3)));

static void problem(struct raw_reader *r, const char *fmt, ...)
{
	va_list ap;

	if (r->stats.first_problem[0])
		return;
	va_start(ap, fmt);
	vsnprintf(r->stats.first_problem, sizeof(r->stats.first_problem), fmt, ap);
	va_end(ap);
}

uint64_t raw_dec_varint(struct raw_dec *d)
{
	uint64_t v = 0;

	if (d->error || raw_varint_get(&d->p, d->end, &v)) {
		d->error = true;
		return 0;
	}
	return v;
}

int64_t raw_dec_svarint(struct raw_dec *d)
{
	return raw_unzigzag(raw_dec_varint(d));
}

struct raw_string raw_dec_string(struct raw_dec *d)
{
	struct raw_string s = {"", 0};
	uint64_t len = raw_dec_varint(d);

	if (d->error)
		return s;
	if (len > (uint64_t)(d->end - d->p)) {
		d->error = true;
		return s;
	}
	s.s = (const char *)d->p;
	s.len = (uint32_t)len;
	d->p += len;
	return s;
}

static struct raw_reader *reader_new(const void *data, size_t size, bool mapped, int *err)
{
	struct raw_reader *r;

	if (size < sizeof(struct raw_file_header)) {
		*err = -EINVAL;
		return NULL;
	}
	r = calloc(1, sizeof(*r));
	if (!r) {
		*err = -ENOMEM;
		return NULL;
	}
	r->data = data;
	r->size = size;
	r->mapped = mapped;
	memcpy(&r->header, data, sizeof(r->header));
	if (memcmp(r->header.magic, RAW_MAGIC, sizeof(r->header.magic))) {
		*err = -EINVAL;
		goto fail;
	}
	if (r->header.byte_order != RAW_BYTE_ORDER_MARK) {
		*err = -EPROTO;
		goto fail;
	}
	if (r->header.version != RAW_VERSION) {
		*err = -EPROTONOSUPPORT;
		goto fail;
	}
	/* A later minor revision may grow the header; never accept a smaller one. */
	if (r->header.header_size < sizeof(struct raw_file_header) || r->header.header_size > size) {
		*err = -EINVAL;
		goto fail;
	}
	r->pos = r->header.header_size;
	r->stats.bytes_total = size;
	return r;
fail:
	free(r);
	return NULL;
}

struct raw_reader *raw_reader_open_mem(const void *data, size_t len, int *err)
{
	return reader_new(data, len, false, err);
}

struct raw_reader *raw_reader_open(const char *path, int *err)
{
	struct raw_reader *r = NULL;
	struct stat st;
	void *map;
	int fd;

	fd = open(path, O_RDONLY | O_CLOEXEC);
	if (fd < 0) {
		*err = -errno;
		return NULL;
	}
	if (fstat(fd, &st)) {
		*err = -errno;
		goto out;
	}
	if ((size_t)st.st_size < sizeof(struct raw_file_header)) {
		*err = -EINVAL;
		goto out;
	}
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED) {
		*err = -errno;
		goto out;
	}
	r = reader_new(map, (size_t)st.st_size, true, err);
	if (!r)
		munmap(map, (size_t)st.st_size);
out:
	close(fd);
	return r;
}

void raw_reader_free(struct raw_reader *r)
{
	if (!r)
		return;
	if (r->mapped)
		munmap((void *)r->data, r->size);
	free(r);
}

const struct raw_file_header *raw_reader_header(const struct raw_reader *r)
{
	return &r->header;
}

const struct raw_reader_stats *raw_reader_stats(const struct raw_reader *r)
{
	return &r->stats;
}

/* Skip to the next chunk magic after a bad spot at r->pos; count the bytes passed over. */
static void resync(struct raw_reader *r)
{
	const uint32_t magic = RAW_CHUNK_MAGIC;
	size_t from = r->pos + 1;
	const uint8_t *hit = NULL;

	if (from < r->size)
		hit = memmem(r->data + from, r->size - from, &magic, sizeof(magic));
	size_t next = hit ? (size_t)(hit - r->data) : r->size;
	r->stats.bytes_skipped += next - r->pos;
	r->pos = next;
}

/* Load the next good chunk into r->rec. Returns false at the end of the data. */
static bool next_chunk(struct raw_reader *r)
{
	while (r->pos < r->size) {
		struct raw_chunk_header ch;
		size_t left = r->size - r->pos;

		if (left < CHUNK_HDR) {
			r->stats.chunks_truncated++;
			problem(r, "stream cut at offset %zu inside a chunk header", r->pos);
			r->stats.bytes_skipped += left;
			r->pos = r->size;
			break;
		}
		memcpy(&ch, r->data + r->pos, sizeof(ch));
		if (ch.magic != RAW_CHUNK_MAGIC || ch.size > RAW_MAX_CHUNK) {
			r->stats.chunks_bad_magic++;
			problem(r, "no chunk header at offset %zu", r->pos);
			resync(r);
			continue;
		}
		if (ch.size > left - CHUNK_HDR) {
			/* Cut by the end of the file, or a damaged size: look for a later chunk. */
			r->stats.chunks_truncated++;
			problem(r, "chunk %u at offset %zu cut after %zu of %u bytes", ch.seq,
				r->pos, left - CHUNK_HDR, ch.size);
			resync(r);
			continue;
		}
		if (raw_crc32(0, r->data + r->pos + CHUNK_HDR, ch.size) != ch.crc) {
			r->stats.chunks_bad_crc++;
			problem(r, "chunk %u at offset %zu: checksum mismatch", ch.seq, r->pos);
			resync(r);
			continue;
		}
		r->stats.chunks++;
		r->rec = r->data + r->pos + CHUNK_HDR;
		r->rec_end = r->rec + ch.size;
		r->last_ns = ch.base_ns;
		r->pos += CHUNK_HDR + ch.size;
		return true;
	}
	return false;
}

static bool decode_stack(struct raw_reader *r, struct raw_dec *d, struct raw_record *rec)
{
	uint64_t n, ip = 0, i;

	rec->u.stack.id = raw_dec_varint(d);
	rec->u.stack.flags = (uint32_t)raw_dec_varint(d);
	n = raw_dec_varint(d);
	if (d->error || n > RAW_MAX_DEPTH)
		return false;
	for (i = 0; i < n; i++) {
		ip += (uint64_t)raw_dec_svarint(d);
		r->ips[i] = ip;
	}
	rec->u.stack.depth = (uint32_t)n;
	rec->u.stack.ips = r->ips;
	return !d->error;
}

static bool decode_process(struct raw_reader *r, struct raw_dec *d, struct raw_record *rec)
{
	struct raw_process *p = &rec->u.process;
	struct raw_string exe;
	uint64_t argc, i;

	p->pid = (int32_t)raw_dec_varint(d);
	p->ppid = (int32_t)raw_dec_varint(d);
	p->time_ns = raw_dec_svarint(d);
	p->origin = (uint32_t)raw_dec_varint(d);
	p->parent_pid = (int32_t)raw_dec_varint(d);
	p->generation = (uint32_t)raw_dec_varint(d);
	exe = raw_dec_string(d);
	p->exe = exe.s;
	p->exe_len = exe.len;
	argc = raw_dec_varint(d);
	if (d->error || argc > RAW_MAX_ARGS)
		return false;
	for (i = 0; i < argc; i++)
		r->args[i] = raw_dec_string(d);
	p->argc = (uint32_t)argc;
	p->argv = NULL;
	p->args = r->args;
	rec->time_ns = p->time_ns;
	return !d->error;
}

static bool decode_module(struct raw_reader *r, struct raw_dec *d, struct raw_record *rec)
{
	struct raw_module *m = &rec->u.module;
	struct raw_string path, bid;
	uint64_t nsegs, i;

	m->time_ns = raw_dec_svarint(d);
	m->kind = (uint32_t)raw_dec_varint(d);
	m->base = raw_dec_varint(d);
	path = raw_dec_string(d);
	bid = raw_dec_string(d);
	nsegs = raw_dec_varint(d);
	if (d->error || nsegs > RAW_MAX_SEGMENTS || bid.len > RAW_MAX_BUILD_ID)
		return false;
	for (i = 0; i < nsegs; i++) {
		r->segs[i].start = raw_dec_varint(d);
		r->segs[i].size = raw_dec_varint(d);
		r->segs[i].file_offset = raw_dec_varint(d);
		r->segs[i].prot = (uint32_t)raw_dec_varint(d);
	}
	m->path = path.s;
	m->path_len = path.len;
	m->build_id = (const uint8_t *)bid.s;
	m->build_id_len = bid.len;
	m->nsegs = (uint32_t)nsegs;
	m->segs = r->segs;
	rec->time_ns = m->time_ns;
	return !d->error;
}

/* Decode a core record's payload into rec. Returns false when it is malformed. */
static bool decode(struct raw_reader *r, struct raw_record *rec)
{
	struct raw_dec d = {rec->payload, rec->payload + rec->payload_len, false};

	rec->decoded = true;
	switch (rec->type) {
	case RAW_REC_SAMPLE:
		rec->time_ns = r->last_ns + raw_dec_svarint(&d);
		rec->u.sample.stack_id = raw_dec_varint(&d);
		rec->u.sample.weight = raw_dec_varint(&d);
		if (!d.error)
			r->last_ns = rec->time_ns;
		return !d.error;
	case RAW_REC_STACK:
		return decode_stack(r, &d, rec);
	case RAW_REC_THREAD_START:
	case RAW_REC_THREAD_NAME:
		rec->u.thread.tid = (uint32_t)raw_dec_varint(&d);
		rec->time_ns = raw_dec_svarint(&d);
		rec->u.thread.name = raw_dec_string(&d);
		return !d.error;
	case RAW_REC_THREAD_END:
		rec->u.thread_end.tid = (uint32_t)raw_dec_varint(&d);
		rec->time_ns = raw_dec_svarint(&d);
		rec->u.thread_end.cpu_ns = raw_dec_varint(&d);
		return !d.error;
	case RAW_REC_PROCESS:
		return decode_process(r, &d, rec);
	case RAW_REC_MODULE_LOAD:
		return decode_module(r, &d, rec);
	case RAW_REC_MODULE_UNLOAD:
		rec->time_ns = raw_dec_svarint(&d);
		rec->u.unload.base = raw_dec_varint(&d);
		rec->u.unload.path = raw_dec_string(&d);
		return !d.error;
	case RAW_REC_LOST:
		rec->time_ns = raw_dec_svarint(&d);
		rec->u.lost.reason = (uint32_t)raw_dec_varint(&d);
		rec->u.lost.count = raw_dec_varint(&d);
		rec->u.lost.weight = raw_dec_varint(&d);
		return !d.error;
	default:
		/* Not ours to decode: the caller gets the payload, skipped by its length. */
		rec->decoded = false;
		return true;
	}
}

int raw_reader_next(struct raw_reader *r, struct raw_record *rec)
{
	for (;;) {
		uint64_t len;
		const uint8_t *p, *start;

		if (r->rec >= r->rec_end && !next_chunk(r))
			return 0;
		memset(rec, 0, sizeof(*rec));
		start = p = r->rec;
		rec->type = *p++;
		if (rec->type == 0 || rec->type > RAW_REC_MAX ||
		    raw_varint_get(&p, r->rec_end, &len) || len > (uint64_t)(r->rec_end - p)) {
			/* The framing itself is broken: nothing after it in this chunk can be found. */
			r->stats.records_malformed++;
			problem(r, "bad record framing at offset %zu", (size_t)(start - r->data));
			r->stats.bytes_skipped += (uint64_t)(r->rec_end - r->rec);
			r->rec = r->rec_end;
			continue;
		}
		rec->payload = p;
		rec->payload_len = (size_t)len;
		r->rec = p + len;
		if (!decode(r, rec)) {
			r->stats.records_malformed++;
			problem(r, "malformed record of type %u at offset %zu", rec->type,
				(size_t)(start - r->data));
			r->stats.bytes_skipped += (uint64_t)(r->rec - start);
			continue;
		}
		r->stats.records++;
		return 1;
	}
}
