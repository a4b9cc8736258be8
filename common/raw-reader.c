/* SPDX-License-Identifier: MIT */
/* Raw stream reader: decodes records, survives cut and damaged files, counts what it skips. */
#include "common/raw-stream.h"

#include <errno.h>
#include <fcntl.h>
#include <stddef.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/hash.h"
#include "common/result-dir.h"

#define CHUNK_HDR sizeof(struct raw_chunk_header)

struct raw_reader {
	const uint8_t *data;
	size_t size;
	bool mapped;
	struct raw_file_header header;
	struct raw_reader_stats stats;
	size_t pos;                   /* next chunk header (or padding) */
	size_t hole, hole_end;        /* the file's first hole (-ring-buffer's dropped chunks) */
	const uint8_t *rec, *rec_end; /* records left in the current chunk */
	bool open;                    /* the current chunk is open: it ends at a zero type byte */
	bool have_seq;                /* a chunk was read: last_seq is its seq */
	uint32_t last_seq;
	int64_t last_ns; /* sample time base in the current chunk */
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
	struct raw_string s = { "", 0 };
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

const char *raw_lost_reason_name(uint32_t reason)
{
	static const char *const names[RAW_LOST_REASON_MAX + 1] = {
		[RAW_LOST_BUFFER] = "buffer",
		[RAW_LOST_UNWIND] = "unwind",
		[RAW_LOST_DATA_LIMIT] = "data-limit",
		[RAW_LOST_STACK_TABLE] = "stack-table",
		[RAW_LOST_BUSY] = "busy",
		[RAW_LOST_FILE_SIZE_LIMIT] = "file-size-limit",
		[RAW_LOST_DISK_FULL] = "disk-full",
		[RAW_LOST_NO_SIGNAL] = "no-signal",
		[RAW_LOST_ADDRESS_SPACE] = "address-space",
	};

	return reason <= RAW_LOST_REASON_MAX && names[reason] ? names[reason] : "other";
}

const char *raw_wait_kind_name(uint32_t kind)
{
	static const char *const names[RAW_WAIT_KIND_MAX + 1] = {
		[RAW_WAIT_MUTEX] = "mutex",
		[RAW_WAIT_RWLOCK] = "rwlock",
		[RAW_WAIT_COND] = "cond",
		[RAW_WAIT_JOIN] = "join",
		[RAW_WAIT_BARRIER] = "barrier",
		[RAW_WAIT_SEMAPHORE] = "semaphore",
		[RAW_WAIT_SLEEP] = "sleep",
		[RAW_WAIT_POLL] = "poll",
		[RAW_WAIT_READ] = "read",
		[RAW_WAIT_WRITE] = "write",
		[RAW_WAIT_ACCEPT] = "accept",
		[RAW_WAIT_CONNECT] = "connect",
		[RAW_WAIT_CHILD] = "child",
		[RAW_WAIT_FUTEX] = "futex",
		[RAW_WAIT_GIL] = "gil",
		[RAW_WAIT_OMP_BARRIER] = "openmp-barrier",
		[RAW_WAIT_OMP_LOCK] = "openmp-lock",
		[RAW_WAIT_OMP_OTHER] = "openmp-other",
		[RAW_WAIT_TASK] = "task",
	};

	return kind <= RAW_WAIT_KIND_MAX && names[kind] ? names[kind] : "other";
}

/* The checksum a version 2 header of header_size bytes at data must carry. */
static uint32_t header_crc_of(const uint8_t *data, size_t header_size)
{
	static const uint8_t zero[4];
	size_t at = offsetof(struct raw_file_header, header_crc);
	uint32_t crc = raw_crc32(0, data, at);

	crc = raw_crc32(crc, zero, sizeof(zero));
	return raw_crc32(crc, data + at + 4, header_size - at - 4);
}

static int header_read(struct raw_reader *r)
{
	struct raw_file_header *h = &r->header;
	static const uint8_t zero[8];

	/* Nothing but zeros where the magic goes: the writer was stopped before its header. */
	if (r->size < sizeof(h->magic) || !memcmp(r->data, zero, sizeof(zero)))
		return r->size < sizeof(h->magic) && r->size ? -EINVAL : -ENODATA;
	if (r->size < RAW_HEADER_V1_SIZE)
		return -EINVAL;
	memcpy(h, r->data, r->size < sizeof(*h) ? r->size : sizeof(*h));
	if (memcmp(h->magic, RAW_MAGIC, sizeof(h->magic)))
		return -EINVAL;
	if (h->byte_order != RAW_BYTE_ORDER_MARK)
		return -EPROTO;
	if (h->version < RAW_VERSION_MIN || h->version > RAW_VERSION)
		return -EPROTONOSUPPORT;
	/* A later minor revision may grow the header; never accept a smaller one. */
	if (h->header_size > r->size ||
	    h->header_size < (h->version == 1 ? RAW_HEADER_V1_SIZE : sizeof(*h)))
		return -EINVAL;
	if (h->version == 1) {
		/* No identity in the file: a copy has the same bytes, so hash them. */
		h->stream_id = hash_bytes(r->data, RAW_HEADER_V1_SIZE) | 1;
		h->kind = RAW_STREAM_THREAD;
		h->header_crc = 0;
	} else if (header_crc_of(r->data, h->header_size) != h->header_crc) {
		r->stats.header_crc_bad = true;
		problem(r, "file header checksum mismatch: its fields are not to be trusted");
	}
	r->pos = h->header_size;
	r->stats.bytes_total = r->size;
	return 0;
}

static struct raw_reader *reader_new(const void *data, size_t size, bool mapped, int *err)
{
	struct raw_reader *r = calloc(1, sizeof(*r));

	if (!r) {
		*err = -ENOMEM;
		return NULL;
	}
	r->data = data;
	r->size = size;
	r->mapped = mapped;
	*err = header_read(r);
	if (*err) {
		free(r);
		return NULL;
	}
	return r;
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

	fd = result_open_file(path, true, RAW_MAX_FILE, &st);
	if (fd < 0) {
		*err = fd;
		return NULL;
	}
	if (st.st_size == 0) {
		*err = -ENODATA;
		goto out;
	}
	map = mmap(NULL, (size_t)st.st_size, PROT_READ, MAP_PRIVATE, fd, 0);
	if (map == MAP_FAILED) {
		*err = -errno;
		goto out;
	}
	r = reader_new(map, (size_t)st.st_size, true, err);
	if (!r) {
		munmap(map, (size_t)st.st_size);
	} else {
		off_t hole = lseek(fd, 0, SEEK_HOLE),
		      data = hole >= 0 ? lseek(fd, hole, SEEK_DATA) : -1;

		/* No data after it: a hole to the end (ENXIO). */
		if (hole >= 0 && hole < st.st_size) {
			r->hole = (size_t)hole;
			r->hole_end = data > hole ? (size_t)data : (size_t)st.st_size;
		}
	}
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

/* The first non-zero byte at or after from, or r->size. */
static size_t skip_zeros(const struct raw_reader *r, size_t from)
{
	/* A hole reads as zeros: jumped, not read (hours of chunks dropped are one). */
	while (from < r->size && !r->data[from])
		from = from >= r->hole && from < r->hole_end ? r->hole_end : from + 1;
	return from;
}

/* A chunk's seq must grow: one that repeats or goes back is a copy (skipped, counted). */
static bool seq_duplicate(struct raw_reader *r, const struct raw_chunk_header *ch, size_t len)
{
	if (r->have_seq && ch->seq <= r->last_seq) {
		r->stats.chunks_duplicate++;
		r->stats.bytes_skipped += len;
		problem(r,
			"chunk %u at offset %zu repeats or precedes chunk %u: skipped as a "
			"duplicate",
			ch->seq, r->pos, r->last_seq);
		return true;
	}
	r->have_seq = true;
	r->last_seq = ch->seq;
	return false;
}

/*
 * An open chunk at r->pos: its records run to the first zero type byte, at most RAW_MAX_CHUNK
 * bytes. Returns false when it holds no record (a chunk header the writer had just begun):
 * padding, not damage.
 */
static bool open_chunk(struct raw_reader *r, const struct raw_chunk_header *ch)
{
	size_t start = r->pos + sizeof(*ch);
	size_t end = r->size - start > RAW_MAX_CHUNK ? start + RAW_MAX_CHUNK : r->size;

	if (start >= r->size || !r->data[start]) {
		r->stats.bytes_padding += start - r->pos;
		r->pos = start;
		return false;
	}
	if (seq_duplicate(r, ch, 0)) {
		/* Its end is unknown: skip to the next chunk magic (resync counts the bytes). */
		resync(r);
		return false;
	}
	r->stats.chunks++;
	r->stats.chunks_open++;
	r->rec = r->data + start;
	r->rec_end = r->data + end;
	r->open = true;
	r->last_ns = ch->base_ns;
	r->pos = end;
	return true;
}

/*
 * The open chunk ends at p: broken framing, or a zero type byte, where the writer stopped. The
 * record it was writing then may have its length and payload in place already (its type byte
 * is stored last): those bytes, up to the next chunk, are the writer's unfinished work, not
 * damage.
 */
static void open_chunk_end(struct raw_reader *r, const uint8_t *p, bool stopped)
{
	const uint32_t magic = RAW_CHUNK_MAGIC;
	const uint8_t *hit;

	r->pos = (size_t)(p - r->data);
	r->rec = r->rec_end = NULL;
	r->open = false;
	if (!stopped || r->pos >= r->size)
		return;
	hit = memmem(p, r->size - r->pos, &magic, sizeof(magic));
	hit = hit ? hit : r->data + r->size;
	r->stats.bytes_padding += (uint64_t)(hit - p);
	r->pos = (size_t)(hit - r->data);
}

/* Load the next good chunk into r->rec. Returns false at the end of the data. */
static bool next_chunk(struct raw_reader *r)
{
	while (r->pos < r->size) {
		struct raw_chunk_header ch;
		size_t left = r->size - r->pos;
		uint32_t crc;

		if (!r->data[r->pos]) {
			size_t next = skip_zeros(r, r->pos);

			r->stats.bytes_padding += next - r->pos;
			r->pos = next;
			continue;
		}
		if (left < CHUNK_HDR) {
			r->stats.chunks_truncated++;
			problem(r, "stream cut at offset %zu inside a chunk header", r->pos);
			r->stats.bytes_skipped += left;
			r->pos = r->size;
			break;
		}
		memcpy(&ch, r->data + r->pos, sizeof(ch));
		if (ch.magic == RAW_CHUNK_MAGIC && ch.size == RAW_CHUNK_OPEN &&
		    r->header.version >= 2) {
			if (open_chunk(r, &ch))
				return true;
			continue;
		}
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
		if (r->header.version >= 2)
			crc = raw_chunk_crc(&ch, r->data + r->pos + CHUNK_HDR);
		else
			crc = raw_crc32(0, r->data + r->pos + CHUNK_HDR, ch.size);
		if (crc != ch.crc) {
			r->stats.chunks_bad_crc++;
			problem(r, "chunk %u at offset %zu: checksum mismatch", ch.seq, r->pos);
			resync(r);
			continue;
		}
		if (seq_duplicate(r, &ch, CHUNK_HDR + ch.size)) {
			r->pos += CHUNK_HDR + ch.size;
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

/* A varint that must fit 32 bits (kinds, counts of threads): more is damage. */
static uint32_t dec_u32(struct raw_dec *d)
{
	uint64_t v = raw_dec_varint(d);

	if (v > UINT32_MAX)
		d->error = true;
	return (uint32_t)v;
}

/* t + dt without signed overflow: damaged deltas wrap instead of being undefined. */
static int64_t time_after(int64_t t, int64_t dt)
{
	return (int64_t)((uint64_t)t + (uint64_t)dt);
}

/*
 * Decode the fields a record's payload holds, in order, into the places after fields, whose
 * letters say their kinds: 'i' a svarint (int64_t *), 'v' a varint (uint64_t *), 'w' a varint
 * kept as uint32_t (uint32_t *, cut), 'u' a varint that must fit in a uint32_t (uint32_t *,
 * else malformed), 's' a string or bytes (struct raw_string *). Returns false when malformed.
 */
static bool dec_fields(struct raw_dec *d, const char *fields, ...)
{
	va_list ap;

	va_start(ap, fields);
	for (; *fields; fields++) {
		switch (*fields) {
		case 'i':
			*va_arg(ap, int64_t *) = raw_dec_svarint(d);
			break;
		case 'v':
			*va_arg(ap, uint64_t *) = raw_dec_varint(d);
			break;
		case 'w':
			*va_arg(ap, uint32_t *) = (uint32_t)raw_dec_varint(d);
			break;
		case 'u':
			*va_arg(ap, uint32_t *) = dec_u32(d);
			break;
		case 's':
			*va_arg(ap, struct raw_string *) = raw_dec_string(d);
			break;
		}
	}
	va_end(ap);
	return !d->error;
}

/* Decode a core record's payload into rec. Returns false when it is malformed. */
static bool decode(struct raw_reader *r, struct raw_record *rec)
{
	struct raw_dec d = { rec->payload, rec->payload + rec->payload_len, false };
	uint64_t depth;

	rec->decoded = true;
	switch (rec->type) {
	case RAW_REC_SAMPLE:
		rec->time_ns = time_after(r->last_ns, raw_dec_svarint(&d));
		rec->u.sample.stack_id = raw_dec_varint(&d);
		rec->u.sample.weight = raw_dec_varint(&d);
		/* A weight no timer gives: damage that would poison every sum it enters. */
		if (rec->u.sample.weight == 0 || rec->u.sample.weight > RAW_MAX_WEIGHT)
			d.error = true;
		if (!d.error)
			r->last_ns = rec->time_ns;
		return !d.error;
	case RAW_REC_VALUE:
		rec->time_ns = time_after(r->last_ns, raw_dec_svarint(&d));
		rec->u.value.stack_id = raw_dec_varint(&d);
		rec->u.value.metric = raw_dec_varint(&d);
		rec->u.value.value = raw_dec_svarint(&d);
		if (!d.error)
			r->last_ns = rec->time_ns;
		return !d.error;
	case RAW_REC_NOTE:
		return dec_fields(&d, "iwws", &rec->time_ns, &rec->u.note.tid, &rec->u.note.kind,
				  &rec->u.note.detail);
	case RAW_REC_REGION_BEGIN:
	case RAW_REC_REGION_END:
		rec->time_ns = raw_dec_svarint(&d);
		depth = raw_dec_varint(&d);
		if (rec->type == RAW_REC_REGION_BEGIN)
			rec->u.region.name = raw_dec_string(&d);
		/* Depth 0 is no region; a name longer than the writer's cut is damage. */
		if (depth == 0 || depth > UINT32_MAX ||
		    (rec->type == RAW_REC_REGION_BEGIN &&
		     rec->u.region.name.len > RAW_MAX_REGION_NAME))
			return 0;
		rec->u.region.depth = (uint32_t)depth;
		return !d.error;
	case RAW_REC_METRIC:
		return dec_fields(&d, "vswww", &rec->u.metric.id, &rec->u.metric.name,
				  &rec->u.metric.unit, &rec->u.metric.aggregation,
				  &rec->u.metric.kind);
	case RAW_REC_STACK:
		return decode_stack(r, &d, rec);
	case RAW_REC_THREAD_START:
	case RAW_REC_THREAD_NAME:
		return dec_fields(&d, "wis", &rec->u.thread.tid, &rec->time_ns,
				  &rec->u.thread.name);
	case RAW_REC_THREAD_END:
	case RAW_REC_THREAD_CPU:
		return dec_fields(&d, "wiv", &rec->u.thread_end.tid, &rec->time_ns,
				  &rec->u.thread_end.cpu_ns);
	case RAW_REC_PROCESS:
		return decode_process(r, &d, rec);
	case RAW_REC_MODULE_LOAD:
		return decode_module(r, &d, rec);
	case RAW_REC_MODULE_UNLOAD:
		return dec_fields(&d, "ivs", &rec->time_ns, &rec->u.unload.base,
				  &rec->u.unload.path);
	case RAW_REC_LOST:
		return dec_fields(&d, "iwvv", &rec->time_ns, &rec->u.lost.reason,
				  &rec->u.lost.count, &rec->u.lost.weight);
	case RAW_REC_WAIT:
		return dec_fields(&d, "ivvuv", &rec->time_ns, &rec->u.wait.stack_id,
				  &rec->u.wait.duration_ns, &rec->u.wait.kind, &rec->u.wait.object);
	case RAW_REC_WAIT_SUM:
		return dec_fields(&d, "ivuvvv", &rec->time_ns, &rec->u.wait_sum.stack_id,
				  &rec->u.wait_sum.kind, &rec->u.wait_sum.object,
				  &rec->u.wait_sum.count, &rec->u.wait_sum.total_ns);
	case RAW_REC_WAIT_OPEN:
		return dec_fields(&d, "ivuvi", &rec->time_ns, &rec->u.wait.stack_id,
				  &rec->u.wait.kind, &rec->u.wait.object, &rec->u.wait.seen_ns);
	case RAW_REC_OBJECT:
		return dec_fields(&d, "uvs", &rec->u.object.kind, &rec->u.object.object,
				  &rec->u.object.name);
	case RAW_REC_OMP_REGION:
		return dec_fields(&d, "ivvu", &rec->time_ns, &rec->u.omp_region.duration_ns,
				  &rec->u.omp_region.object, &rec->u.omp_region.threads);
	case RAW_REC_ORIGIN:
		return dec_fields(&d, "iuvw", &rec->time_ns, &rec->u.origin.tid,
				  &rec->u.origin.stack_id, &rec->u.origin.kind);
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

		if (r->rec >= r->rec_end) {
			if (r->open)
				open_chunk_end(r, r->rec_end, false);
			if (!next_chunk(r))
				return 0;
		}
		memset(rec, 0, sizeof(*rec));
		start = p = r->rec;
		rec->type = *p++;
		if (r->open && rec->type == 0) {
			/* Where the writer stopped: the rest is zeros, or a later chunk. */
			open_chunk_end(r, start, true);
			continue;
		}
		if (rec->type == 0 || rec->type > RAW_REC_MAX ||
		    raw_varint_get(&p, r->rec_end, &len) || len > (uint64_t)(r->rec_end - p)) {
			/* The framing itself is broken: nothing after it in this chunk can be
			 * found. */
			r->stats.records_malformed++;
			problem(r, "bad record framing at offset %zu", (size_t)(start - r->data));
			if (r->open) {
				/* Its end is unknown: what follows is resynchronised on. */
				open_chunk_end(r, start, false);
				continue;
			}
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
