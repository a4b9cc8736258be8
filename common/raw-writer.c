/* SPDX-License-Identifier: MIT */
/* Raw stream writer: encodes records into a buffer written by chunks, or into a mapped window. */
#include "common/raw-stream.h"

#include <errno.h>
#include <stdarg.h>
#include <stddef.h>
#include <string.h>
#include <sys/random.h>
#include <time.h>
#include <unistd.h>

#include "common/hash.h"
#include "common/io.h"

#define CHUNK_HDR sizeof(struct raw_chunk_header)
#define NO_CHUNK  SIZE_MAX

/*
 * The order of stores matters in a mapped window: a process may be killed between any two
 * instructions, and what it stored stays in the file. A chunk header appears with its magic
 * and size (RAW_CHUNK_OPEN) in one aligned 8-byte store; a record's type byte is stored last,
 * into memory that is zero until then; a chunk is closed by storing its checksum before its
 * size. A reader thus finds whole records only. Release stores keep the compiler from
 * reordering the bytes before them past them.
 */

static size_t strlen_safe(const char *s)
{
	return s ? strlen(s) : 0;
}

static bool is_mapped(const struct raw_writer *w)
{
	return w->window != NULL;
}

/* A random id, or one mixed from what differs between streams when getrandom() fails. */
static uint64_t stream_id_new(const struct raw_file_header *h)
{
	uint64_t id = 0;

	if (getrandom(&id, sizeof(id), GRND_NONBLOCK) != (ssize_t)sizeof(id) || !id) {
		id = hash_combine(hash_mix(h->origin_ns), h->origin_realtime_ns);
		id = hash_combine(id, (uint64_t)(uint32_t)h->pid << 32 | (uint32_t)h->tid);
		id = hash_combine(id, (uint64_t)(uintptr_t)h);
	}
	return id ? id : 1;
}

void raw_header_init(struct raw_file_header *h, int32_t pid, int32_t tid, int32_t rank,
		     const char *host, uint64_t interval_ns, uint32_t sample_clock)
{
	struct timespec mono, real;
	size_t i;

	memset(h, 0, sizeof(*h));
	memcpy(h->magic, RAW_MAGIC, sizeof(h->magic));
	h->byte_order = RAW_BYTE_ORDER_MARK;
	h->version = RAW_VERSION;
	h->header_size = sizeof(*h);
	h->pid = pid;
	h->tid = tid;
	h->rank = rank;
	h->clock_id = CLOCK_MONOTONIC;
	clock_gettime(CLOCK_MONOTONIC, &mono);
	clock_gettime(CLOCK_REALTIME, &real);
	h->origin_ns = (uint64_t)mono.tv_sec * 1000000000u + (uint64_t)mono.tv_nsec;
	h->origin_realtime_ns = (uint64_t)real.tv_sec * 1000000000u + (uint64_t)real.tv_nsec;
	h->interval_ns = interval_ns;
	h->sample_clock = sample_clock;
	for (i = 0; host && host[i] && i < sizeof(h->host) - 1; i++)
		h->host[i] = host[i];
	h->kind = RAW_STREAM_THREAD;
	h->stream_id = stream_id_new(h);
}

uint32_t raw_header_crc(const struct raw_file_header *h)
{
	struct raw_file_header c = *h;
	size_t size = h->header_size < sizeof(c) ? h->header_size : sizeof(c);

	c.header_crc = 0;
	return raw_crc32(0, &c, size);
}

int64_t raw_header_now(const struct raw_file_header *h)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)((uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec - h->origin_ns);
}

/* The header as it goes into the file: current version fields and checksum. */
static void header_final(struct raw_file_header *out, const struct raw_file_header *h)
{
	*out = *h;
	out->version = RAW_VERSION;
	out->header_size = sizeof(*out);
	if (!out->kind)
		out->kind = RAW_STREAM_THREAD;
	out->header_crc = raw_header_crc(out);
}

int raw_writer_init(struct raw_writer *w, int fd, void *buf, size_t cap,
		    const struct raw_file_header *h)
{
	struct raw_file_header hdr;
	int saved = errno;
	int ret;

	memset(w, 0, sizeof(*w));
	w->chunk = NO_CHUNK;
	if (!buf || cap < RAW_MIN_BUFFER)
		return -EINVAL;
	w->fd = fd;
	w->buf = buf;
	w->cap = cap > RAW_MAX_CHUNK + CHUNK_HDR ? RAW_MAX_CHUNK + CHUNK_HDR : cap;
	w->chunk_max = w->cap;
	header_final(&hdr, h);
	ret = io_write_all(fd, &hdr, sizeof(hdr));
	if (ret)
		w->error = ret;
	else
		w->bytes_written += sizeof(hdr);
	errno = saved; /* the handler must not disturb the program's errno */
	return ret;
}

/* Map the window that follows the current one, of at least min bytes. */
static int window_next(struct raw_writer *w, size_t min)
{
	uint8_t *base;
	size_t size;
	uint64_t off = w->buf ? w->window_off + w->cap : 0;
	int saved = errno;
	int ret = w->window(w->window_ctx, off, min, &base, &size);

	errno = saved;
	if (ret)
		return ret;
	w->buf = base;
	w->cap = size;
	w->len = 0;
	w->window_off = off;
	return 0;
}

int raw_writer_init_mapped(struct raw_writer *w, raw_window_fn fn, void *ctx, size_t chunk_max,
			   size_t reserve, const struct raw_file_header *h)
{
	struct raw_file_header hdr;
	uint64_t first;
	int ret;

	memset(w, 0, sizeof(*w));
	w->fd = -1;
	w->chunk = NO_CHUNK;
	w->window = fn;
	w->window_ctx = ctx;
	w->reserve = reserve;
	w->chunk_max = chunk_max < RAW_MIN_BUFFER ? RAW_MIN_BUFFER : chunk_max;
	if (w->chunk_max > RAW_MAX_CHUNK)
		w->chunk_max = RAW_MAX_CHUNK;
	ret = window_next(w, sizeof(hdr) + CHUNK_HDR + reserve + RAW_MIN_BUFFER);
	if (ret) {
		w->error = ret;
		return ret;
	}
	/* The magic last, in one store: a file killed here reads as empty, not as damaged. */
	header_final(&hdr, h);
	memcpy(w->buf + sizeof(first), (const uint8_t *)&hdr + sizeof(first),
	       sizeof(hdr) - sizeof(first));
	memcpy(&first, &hdr, sizeof(first));
	__atomic_store_n((uint64_t *)w->buf, first, __ATOMIC_RELEASE);
	w->len = sizeof(hdr);
	w->bytes_written = sizeof(hdr);
	return 0;
}

size_t raw_writer_pending(const struct raw_writer *w)
{
	return w->chunk == NO_CHUNK ? 0 : w->len - w->chunk - CHUNK_HDR;
}

void raw_writer_finishing(struct raw_writer *w)
{
	w->finishing = true;
}

uint64_t raw_writer_file_size(const struct raw_writer *w)
{
	return is_mapped(w) ? w->window_off + w->len : w->bytes_written;
}

/* Stores into a mapped window are single and ordered; a caller's buffer may be unaligned. */
static void store64(const struct raw_writer *w, uint8_t *p, uint64_t v)
{
	if (is_mapped(w))
		__atomic_store_n((uint64_t *)(void *)p, v, __ATOMIC_RELEASE);
	else
		memcpy(p, &v, sizeof(v));
}

static void store32(const struct raw_writer *w, uint8_t *p, uint32_t v)
{
	if (is_mapped(w))
		__atomic_store_n((uint32_t *)(void *)p, v, __ATOMIC_RELEASE);
	else
		memcpy(p, &v, sizeof(v));
}

/* Begin a chunk at w->len (8-byte aligned when mapped; the bytes skipped are zero). */
static void chunk_open(struct raw_writer *w)
{
	struct raw_chunk_header ch;
	uint8_t *p;
	uint64_t first;

	/* A first record taken a little earlier has a negative delta: an svarint. */
	if (w->clock)
		w->last_ns = raw_header_now(w->clock);
	ch = (struct raw_chunk_header){ RAW_CHUNK_MAGIC, RAW_CHUNK_OPEN, 0, w->seq, w->last_ns };
	if (is_mapped(w)) {
		size_t pad = (8 - (w->len & 7)) & 7;

		w->len += pad;
		w->bytes_written += pad;
	}
	p = w->buf + w->len;
	memcpy(&first, &ch, sizeof(first));
	store64(w, p, first);
	memcpy(p + sizeof(first), (const uint8_t *)&ch + sizeof(first), sizeof(ch) - sizeof(first));
	w->chunk = w->len;
	w->chunk_base_ns = w->last_ns;
	w->len += CHUNK_HDR;
	w->bytes_written += CHUNK_HDR;
}

/* Close the open chunk in place: checksum, then size. Returns its size in bytes. */
static uint32_t chunk_seal(struct raw_writer *w)
{
	uint8_t *p = w->buf + w->chunk;
	struct raw_chunk_header ch;

	memcpy(&ch, p, sizeof(ch));
	ch.size = (uint32_t)(w->len - w->chunk - CHUNK_HDR);
	ch.crc = raw_chunk_crc(&ch, p + CHUNK_HDR);
	store32(w, p + offsetof(struct raw_chunk_header, crc), ch.crc);
	store32(w, p + offsetof(struct raw_chunk_header, size), ch.size);
	return ch.size;
}

/* A chunk with no record (its record failed): take it back, leaving zeros. */
static void chunk_unopen(struct raw_writer *w)
{
	uint8_t *p = w->buf + w->chunk;

	memset(p + sizeof(uint64_t), 0, CHUNK_HDR - sizeof(uint64_t));
	store64(w, p, 0);
	w->bytes_written -= CHUNK_HDR;
	w->len = w->chunk;
	w->chunk = NO_CHUNK;
}

int raw_writer_flush(struct raw_writer *w)
{
	int saved = errno;
	int ret;

	if (w->chunk == NO_CHUNK)
		return w->error;
	if (w->len == w->chunk + CHUNK_HDR) {
		chunk_unopen(w);
		return w->error;
	}
	chunk_seal(w);
	if (is_mapped(w)) {
		w->chunk = NO_CHUNK;
		w->seq++;
		return w->error;
	}
	/* Buffered: the chunk is the whole buffer. bytes_written already counts it. */
	ret = io_write_all(w->fd, w->buf, w->len);
	errno = saved;
	if (ret) {
		/*
		 * A partial write leaves a cut chunk in the file; the reader skips it. Reopen the
		 * chunk so a later flush may still succeed (a full disk that frees up).
		 */
		store32(w, w->buf + offsetof(struct raw_chunk_header, size), RAW_CHUNK_OPEN);
		store32(w, w->buf + offsetof(struct raw_chunk_header, crc), 0);
		w->error = ret;
		return ret;
	}
	w->error = 0;
	w->seq++;
	w->len = 0;
	w->chunk = NO_CHUNK;
	return 0;
}

/* Bytes of w->buf that records may use: a mapped window keeps its reserve for the end. */
static size_t usable(const struct raw_writer *w)
{
	if (!is_mapped(w) || w->finishing)
		return w->cap;
	return w->reserve < w->cap ? w->cap - w->reserve : 0;
}

/* Room for need more bytes of records after w->len, counting the chunk header to open. */
static bool fits(const struct raw_writer *w, size_t need)
{
	size_t at = w->len;

	if (w->chunk == NO_CHUNK)
		at += (is_mapped(w) ? (8 - (at & 7)) & 7 : 0) + CHUNK_HDR;
	return at <= usable(w) && need <= usable(w) - at;
}

bool raw_writer_room(const struct raw_writer *w, size_t need)
{
	return raw_writer_pending(w) + need <= w->chunk_max && (!is_mapped(w) || fits(w, need));
}

int raw_writer_turn(struct raw_writer *w, size_t need)
{
	int ret = raw_writer_flush(w);

	if (!ret && is_mapped(w) && !w->full && !fits(w, need)) {
		ret = window_next(w, CHUNK_HDR + need + w->reserve + 8);
		if (ret) {
			/* The window stays, as in record_begin(): its reserve is the last records'.
			 */
			w->full = true;
			w->error = ret;
		}
	}
	return ret;
}

/*
 * Reserve room for a record of at most max_payload bytes, in an open chunk: closes a chunk
 * past chunk_max, flushes a full buffer or moves to the next window. On success e covers the
 * payload area and *lenbytes the room left for the length.
 */
static int record_begin(struct raw_writer *w, size_t max_payload, struct raw_enc *e,
			size_t *lenbytes)
{
	size_t need;
	int ret;

	*lenbytes = raw_varint_size(max_payload);
	need = 1 + *lenbytes + max_payload;
	if (need > RAW_MAX_CHUNK || (!is_mapped(w) && need > w->cap - CHUNK_HDR)) {
		w->dropped_records++;
		return -E2BIG;
	}
	if (w->chunk != NO_CHUNK && raw_writer_pending(w) &&
	    raw_writer_pending(w) + need > w->chunk_max) {
		ret = raw_writer_flush(w);
		if (ret && !is_mapped(w)) {
			w->dropped_records++;
			return ret;
		}
	}
	if (!fits(w, need)) {
		if (!is_mapped(w)) {
			ret = raw_writer_flush(w);
			if (ret) {
				w->dropped_records++;
				return ret;
			}
		} else if (!w->full) {
			raw_writer_flush(w);
			ret = window_next(w, CHUNK_HDR + need + w->reserve + 8);
			if (ret) {
				/* The window stays: its reserve is left for the closing records. */
				w->full = true;
				w->error = ret;
			}
		}
		if (!fits(w, need)) {
			w->dropped_records++;
			return w->error ? w->error : -E2BIG;
		}
	}
	if (w->chunk == NO_CHUNK)
		chunk_open(w);
	e->p = w->buf + w->len + 1 + *lenbytes;
	e->end = e->p + max_payload;
	e->overflow = false;
	return 0;
}

/* Finish the record begun with record_begin(): exact length, payload moved, type stored last. */
static int record_end(struct raw_writer *w, uint8_t type, struct raw_enc *e, size_t lenbytes)
{
	uint8_t *rec = w->buf + w->len;
	uint8_t *payload = rec + 1 + lenbytes;
	size_t plen = (size_t)(e->p - payload);
	size_t n;

	if (e->overflow) {
		/* Leave zeros behind: the next record's type byte goes there. */
		memset(payload, 0, plen);
		w->dropped_records++;
		return -E2BIG;
	}
	n = raw_varint_put(rec + 1, plen);
	if (n < lenbytes) {
		memmove(rec + 1 + n, payload, plen);
		memset(rec + 1 + n + plen, 0, lenbytes - n);
	}
	__atomic_store_n(rec, type, __ATOMIC_RELEASE);
	w->len += 1 + n + plen;
	w->bytes_written += 1 + n + plen;
	return 0;
}

void raw_enc_stack(struct raw_enc *e, uint64_t id, uint32_t flags, const uint64_t *ips, uint32_t n)
{
	uint64_t prev = 0;
	uint32_t i;

	raw_enc_varint(e, id);
	raw_enc_varint(e, flags);
	raw_enc_varint(e, n);
	/* Neighbouring frames are close in memory: deltas keep most of them to 2-4 bytes. */
	for (i = 0; i < n; i++) {
		raw_enc_svarint(e, (int64_t)(ips[i] - prev));
		prev = ips[i];
	}
}

void raw_enc_varint(struct raw_enc *e, uint64_t v)
{
	if (e->end - e->p < RAW_VARINT_MAX && (size_t)(e->end - e->p) < raw_varint_size(v)) {
		e->overflow = true;
		return;
	}
	e->p += raw_varint_put(e->p, v);
}

void raw_enc_svarint(struct raw_enc *e, int64_t v)
{
	raw_enc_varint(e, raw_zigzag(v));
}

void raw_enc_bytes(struct raw_enc *e, const void *data, size_t len)
{
	raw_enc_varint(e, len);
	if (e->overflow || (size_t)(e->end - e->p) < len) {
		e->overflow = true;
		return;
	}
	if (len)
		memcpy(e->p, data, len);
	e->p += len;
}

void raw_enc_string(struct raw_enc *e, const char *s)
{
	raw_enc_bytes(e, s ? s : "", strlen_safe(s));
}

int raw_writer_record(struct raw_writer *w, uint8_t type, const void *payload, size_t len)
{
	struct raw_enc e;
	size_t lb;
	int ret;

	if (type == 0 || type > RAW_REC_MAX)
		return -EINVAL;
	ret = record_begin(w, len, &e, &lb);
	if (ret)
		return ret;
	if (len)
		memcpy(e.p, payload, len);
	e.p += len;
	return record_end(w, type, &e, lb);
}

/*
 * A record of plain fields, fields saying their kinds in order: 'v' a varint (uint64_t), 'i' a
 * svarint (int64_t), 's' a string (const char *, NULL as ""), 'b' bytes (const void *, then
 * their length as size_t). Every argument must have exactly that type. Async-signal-safe.
 */
static int record_fields(struct raw_writer *w, uint8_t type, const char *fields, ...)
{
	size_t max = 0, lb, len;
	const char *f, *str;
	struct raw_enc e;
	va_list ap, aq;
	int ret;

	va_start(ap, fields);
	va_copy(aq, ap);
	for (f = fields; *f; f++) {
		max += RAW_VARINT_MAX;
		if (*f == 's') {
			max += strlen_safe(va_arg(aq, const char *));
		} else if (*f == 'b') {
			(void)va_arg(aq, const void *);
			max += va_arg(aq, size_t);
		} else {
			(void)va_arg(aq, uint64_t);
		}
	}
	va_end(aq);
	ret = record_begin(w, max, &e, &lb);
	for (f = fields; !ret && *f; f++) {
		switch (*f) {
		case 'v':
			raw_enc_varint(&e, va_arg(ap, uint64_t));
			break;
		case 'i':
			raw_enc_svarint(&e, va_arg(ap, int64_t));
			break;
		case 's':
			raw_enc_string(&e, va_arg(ap, const char *));
			break;
		case 'b':
			str = va_arg(ap, const void *);
			len = va_arg(ap, size_t);
			raw_enc_bytes(&e, str, len);
			break;
		}
	}
	va_end(ap);
	return ret ? ret : record_end(w, type, &e, lb);
}

/*
 * SAMPLE and VALUE: the time as a delta from the previous one of either (one running time
 * per chunk), the stack, then a varint and, for VALUE, a svarint.
 */
static int timed_record(struct raw_writer *w, uint8_t type, int64_t time_ns, uint64_t stack_id,
			uint64_t a, const int64_t *b)
{
	struct raw_enc e;
	size_t lb;
	int ret;

	ret = record_begin(w, 4 * RAW_VARINT_MAX, &e, &lb);
	if (ret)
		return ret;
	raw_enc_svarint(&e, (int64_t)((uint64_t)time_ns - (uint64_t)w->last_ns));
	raw_enc_varint(&e, stack_id);
	raw_enc_varint(&e, a);
	if (b)
		raw_enc_svarint(&e, *b);
	ret = record_end(w, type, &e, lb);
	if (!ret)
		w->last_ns = time_ns;
	return ret;
}

int raw_writer_sample(struct raw_writer *w, int64_t time_ns, uint64_t stack_id, uint64_t weight)
{
	return timed_record(w, RAW_REC_SAMPLE, time_ns, stack_id, weight, NULL);
}

int raw_writer_value(struct raw_writer *w, int64_t time_ns, uint64_t stack_id, uint64_t metric,
		     int64_t value)
{
	return timed_record(w, RAW_REC_VALUE, time_ns, stack_id, metric, &value);
}

int raw_writer_note(struct raw_writer *w, int64_t time_ns, uint32_t tid, uint32_t kind,
		    const char *detail)
{
	return record_fields(w, RAW_REC_NOTE, "ivvs", time_ns, (uint64_t)tid, (uint64_t)kind,
			     detail);
}

int raw_writer_region_begin(struct raw_writer *w, int64_t time_ns, uint32_t depth, const char *name)
{
	size_t len = strlen_safe(name);

	if (len > RAW_MAX_REGION_NAME)
		len = RAW_MAX_REGION_NAME;
	return record_fields(w, RAW_REC_REGION_BEGIN, "ivb", time_ns, (uint64_t)depth,
			     (const void *)(name ? name : ""), len);
}

int raw_writer_region_end(struct raw_writer *w, int64_t time_ns, uint32_t depth)
{
	return record_fields(w, RAW_REC_REGION_END, "iv", time_ns, (uint64_t)depth);
}

int raw_writer_metric(struct raw_writer *w, uint64_t id, const char *name, uint32_t unit,
		      uint32_t aggregation, uint32_t kind)
{
	return record_fields(w, RAW_REC_METRIC, "vsvvv", id, name, (uint64_t)unit,
			     (uint64_t)aggregation, (uint64_t)kind);
}

int raw_writer_stack(struct raw_writer *w, uint64_t id, uint32_t flags, const uint64_t *ips,
		     uint32_t n)
{
	struct raw_enc e;
	size_t lb;
	int ret;

	if (n > RAW_MAX_DEPTH)
		n = RAW_MAX_DEPTH, flags |= RAW_STACK_TRUNCATED;
	ret = record_begin(w, (size_t)(3 + n) * RAW_VARINT_MAX, &e, &lb);
	if (ret)
		return ret;
	raw_enc_stack(&e, id, flags, ips, n);
	return record_end(w, RAW_REC_STACK, &e, lb);
}

int raw_writer_thread_start(struct raw_writer *w, uint32_t tid, int64_t time_ns, const char *name)
{
	return record_fields(w, RAW_REC_THREAD_START, "vis", (uint64_t)tid, time_ns, name);
}

int raw_writer_thread_name(struct raw_writer *w, uint32_t tid, int64_t time_ns, const char *name)
{
	return record_fields(w, RAW_REC_THREAD_NAME, "vis", (uint64_t)tid, time_ns, name);
}

int raw_writer_thread_end(struct raw_writer *w, uint32_t tid, int64_t time_ns, uint64_t cpu_ns)
{
	return record_fields(w, RAW_REC_THREAD_END, "viv", (uint64_t)tid, time_ns, cpu_ns);
}

int raw_writer_thread_cpu(struct raw_writer *w, uint32_t tid, int64_t time_ns, uint64_t cpu_ns)
{
	return record_fields(w, RAW_REC_THREAD_CPU, "viv", (uint64_t)tid, time_ns, cpu_ns);
}

int raw_writer_process(struct raw_writer *w, const struct raw_process *p)
{
	size_t max = 8 * RAW_VARINT_MAX;
	size_t exe_len = p->exe ? (p->exe_len ? p->exe_len : strlen(p->exe)) : 0;
	uint32_t argc = p->argc > RAW_MAX_ARGS ? RAW_MAX_ARGS : p->argc;
	/* A command line too long for one chunk (or the buffer) is cut, not dropped. */
	size_t room = is_mapped(w) ? w->chunk_max : w->cap - CHUNK_HDR;
	struct raw_enc e;
	uint32_t i;
	size_t lb;
	int ret;

	max += exe_len;
	for (i = 0; i < argc; i++)
		max += RAW_VARINT_MAX + strlen_safe(p->argv[i]);
	while (argc && max + 1 + RAW_VARINT_MAX > room) {
		argc--;
		max -= RAW_VARINT_MAX + strlen_safe(p->argv[argc]);
	}
	ret = record_begin(w, max, &e, &lb);
	if (ret)
		return ret;
	raw_enc_varint(&e, (uint32_t)p->pid);
	raw_enc_varint(&e, (uint32_t)p->ppid);
	raw_enc_svarint(&e, p->time_ns);
	raw_enc_varint(&e, p->origin);
	raw_enc_varint(&e, (uint32_t)p->parent_pid);
	raw_enc_varint(&e, p->generation);
	raw_enc_bytes(&e, p->exe ? p->exe : "", exe_len);
	raw_enc_varint(&e, argc);
	for (i = 0; i < argc; i++)
		raw_enc_string(&e, p->argv[i]);
	return record_end(w, RAW_REC_PROCESS, &e, lb);
}

int raw_writer_module_load(struct raw_writer *w, const struct raw_module *m)
{
	size_t path_len = m->path ? (m->path_len ? m->path_len : strlen(m->path)) : 0;
	uint32_t nsegs = m->nsegs > RAW_MAX_SEGMENTS ? RAW_MAX_SEGMENTS : m->nsegs;
	uint32_t bid_len = m->build_id_len > RAW_MAX_BUILD_ID ? 0 : m->build_id_len;
	struct raw_enc e;
	size_t lb;
	uint32_t i;
	int ret;

	ret = record_begin(w, (6 + 4 * (size_t)nsegs) * RAW_VARINT_MAX + path_len + bid_len, &e,
			   &lb);
	if (ret)
		return ret;
	raw_enc_svarint(&e, m->time_ns);
	raw_enc_varint(&e, m->kind);
	raw_enc_varint(&e, m->base);
	raw_enc_bytes(&e, m->path ? m->path : "", path_len);
	raw_enc_bytes(&e, m->build_id, bid_len);
	raw_enc_varint(&e, nsegs);
	for (i = 0; i < nsegs; i++) {
		raw_enc_varint(&e, m->segs[i].start);
		raw_enc_varint(&e, m->segs[i].size);
		raw_enc_varint(&e, m->segs[i].file_offset);
		raw_enc_varint(&e, m->segs[i].prot);
	}
	return record_end(w, RAW_REC_MODULE_LOAD, &e, lb);
}

int raw_writer_module_unload(struct raw_writer *w, int64_t time_ns, uint64_t base, const char *path)
{
	return record_fields(w, RAW_REC_MODULE_UNLOAD, "ivs", time_ns, base, path);
}

int raw_writer_lost(struct raw_writer *w, int64_t time_ns, uint32_t reason, uint64_t count,
		    uint64_t weight)
{
	return record_fields(w, RAW_REC_LOST, "ivvv", time_ns, (uint64_t)reason, count, weight);
}

int raw_writer_wait(struct raw_writer *w, int64_t time_ns, uint64_t stack_id, uint64_t duration_ns,
		    uint32_t kind, uint64_t object)
{
	return record_fields(w, RAW_REC_WAIT, "ivvvv", time_ns, stack_id, duration_ns,
			     (uint64_t)kind, object);
}

int raw_writer_wait_sum(struct raw_writer *w, int64_t time_ns, uint64_t stack_id, uint32_t kind,
			uint64_t object, uint64_t count, uint64_t total_ns)
{
	return record_fields(w, RAW_REC_WAIT_SUM, "ivvvvv", time_ns, stack_id, (uint64_t)kind,
			     object, count, total_ns);
}

int raw_writer_wait_open(struct raw_writer *w, int64_t time_ns, uint64_t stack_id, uint32_t kind,
			 uint64_t object, int64_t seen_ns)
{
	return record_fields(w, RAW_REC_WAIT_OPEN, "ivvvi", time_ns, stack_id, (uint64_t)kind,
			     object, seen_ns);
}

int raw_writer_omp_region(struct raw_writer *w, int64_t time_ns, uint64_t duration_ns,
			  uint64_t object, uint32_t threads)
{
	return record_fields(w, RAW_REC_OMP_REGION, "ivvv", time_ns, duration_ns, object,
			     (uint64_t)threads);
}

int raw_writer_origin(struct raw_writer *w, int64_t time_ns, uint32_t tid, uint64_t stack_id,
		      uint32_t kind)
{
	return record_fields(w, RAW_REC_ORIGIN, "ivvv", time_ns, (uint64_t)tid, stack_id,
			     (uint64_t)kind);
}

int raw_writer_object(struct raw_writer *w, uint32_t kind, uint64_t object, const char *name)
{
	return record_fields(w, RAW_REC_OBJECT, "vvs", (uint64_t)kind, object, name);
}
