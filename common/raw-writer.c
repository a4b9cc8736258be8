/* SPDX-License-Identifier: MIT */
/* Raw stream writer: encodes records into a preallocated buffer, flushes chunks with write(2). */
#include "common/raw-stream.h"

#include <errno.h>
#include <string.h>
#include <time.h>
#include <unistd.h>

#define CHUNK_HDR sizeof(struct raw_chunk_header)

static size_t strlen_safe(const char *s)
{
	return s ? strlen(s) : 0;
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
}

int64_t raw_header_now(const struct raw_file_header *h)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (int64_t)((uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec - h->origin_ns);
}

/* write(2) all of it, across EINTR and short writes. */
static int write_all(int fd, const void *data, size_t len, uint64_t *counter)
{
	const uint8_t *p = data;

	while (len) {
		ssize_t n = write(fd, p, len);
		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EIO;
		p += n;
		len -= (size_t)n;
		*counter += (uint64_t)n;
	}
	return 0;
}

int raw_writer_init(struct raw_writer *w, int fd, void *buf, size_t cap,
		    const struct raw_file_header *h)
{
	int saved = errno;
	int ret;

	memset(w, 0, sizeof(*w));
	if (!buf || cap < RAW_MIN_BUFFER)
		return -EINVAL;
	w->fd = fd;
	w->buf = buf;
	w->cap = cap > RAW_MAX_CHUNK + CHUNK_HDR ? RAW_MAX_CHUNK + CHUNK_HDR : cap;
	w->len = CHUNK_HDR;
	ret = write_all(fd, h, sizeof(*h), &w->bytes_written);
	if (ret)
		w->error = ret;
	errno = saved; /* the handler must not disturb the program's errno */
	return ret;
}

size_t raw_writer_pending(const struct raw_writer *w)
{
	return w->len - CHUNK_HDR;
}

int raw_writer_flush(struct raw_writer *w)
{
	struct raw_chunk_header ch;
	int saved = errno;
	int ret;

	if (w->len == CHUNK_HDR)
		return w->error;
	ch.magic = RAW_CHUNK_MAGIC;
	ch.size = (uint32_t)(w->len - CHUNK_HDR);
	ch.crc = raw_crc32(0, w->buf + CHUNK_HDR, ch.size);
	ch.seq = w->seq;
	ch.base_ns = w->chunk_base_ns;
	memcpy(w->buf, &ch, sizeof(ch));
	ret = write_all(w->fd, w->buf, w->len, &w->bytes_written);
	errno = saved;
	if (ret) {
		/*
		 * A partial write leaves a cut chunk in the file; the reader skips it. Keep the
		 * buffer so a later flush may still succeed (a full disk that frees up).
		 */
		w->error = ret;
		return ret;
	}
	w->error = 0;
	w->seq++;
	w->len = CHUNK_HDR;
	w->chunk_base_ns = w->last_ns;
	return 0;
}

/*
 * Reserve room for a record of at most max_payload bytes: flushes when the buffer cannot take
 * it. On success e covers the payload area and *lenbytes the room left for the length.
 */
static int record_begin(struct raw_writer *w, size_t max_payload, struct raw_enc *e,
			size_t *lenbytes)
{
	size_t need;

	*lenbytes = raw_varint_size(max_payload);
	need = 1 + *lenbytes + max_payload;
	if (need > w->cap - CHUNK_HDR) {
		w->dropped_records++;
		return -E2BIG;
	}
	if (w->len + need > w->cap) {
		int ret = raw_writer_flush(w);
		if (ret) {
			w->dropped_records++;
			return ret;
		}
	}
	e->p = w->buf + w->len + 1 + *lenbytes;
	e->end = e->p + max_payload;
	e->overflow = false;
	return 0;
}

/* Finish the record begun with record_begin(): type, exact length, payload moved in place. */
static int record_end(struct raw_writer *w, uint8_t type, struct raw_enc *e, size_t lenbytes)
{
	uint8_t *rec = w->buf + w->len;
	uint8_t *payload = rec + 1 + lenbytes;
	size_t plen = (size_t)(e->p - payload);
	size_t n;

	if (e->overflow) {
		w->dropped_records++;
		return -E2BIG;
	}
	rec[0] = type;
	n = raw_varint_put(rec + 1, plen);
	if (n < lenbytes)
		memmove(rec + 1 + n, payload, plen);
	w->len += 1 + n + plen;
	return 0;
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

int raw_writer_sample(struct raw_writer *w, int64_t time_ns, uint64_t stack_id, uint64_t weight)
{
	struct raw_enc e;
	size_t lb;
	int ret;

	ret = record_begin(w, 3 * RAW_VARINT_MAX, &e, &lb);
	if (ret)
		return ret;
	raw_enc_svarint(&e, time_ns - w->last_ns);
	raw_enc_varint(&e, stack_id);
	raw_enc_varint(&e, weight);
	ret = record_end(w, RAW_REC_SAMPLE, &e, lb);
	if (!ret)
		w->last_ns = time_ns;
	return ret;
}

int raw_writer_stack(struct raw_writer *w, uint64_t id, uint32_t flags, const uint64_t *ips,
		     uint32_t n)
{
	struct raw_enc e;
	uint64_t prev = 0;
	size_t lb;
	uint32_t i;
	int ret;

	if (n > RAW_MAX_DEPTH)
		n = RAW_MAX_DEPTH, flags |= RAW_STACK_TRUNCATED;
	ret = record_begin(w, (size_t)(3 + n) * RAW_VARINT_MAX, &e, &lb);
	if (ret)
		return ret;
	raw_enc_varint(&e, id);
	raw_enc_varint(&e, flags);
	raw_enc_varint(&e, n);
	/* Neighbouring frames are close in memory: deltas keep most of them to 2-4 bytes. */
	for (i = 0; i < n; i++) {
		raw_enc_svarint(&e, (int64_t)(ips[i] - prev));
		prev = ips[i];
	}
	return record_end(w, RAW_REC_STACK, &e, lb);
}

static int thread_named(struct raw_writer *w, uint8_t type, uint32_t tid, int64_t time_ns,
			const char *name)
{
	struct raw_enc e;
	size_t lb;
	int ret;

	ret = record_begin(w, 3 * RAW_VARINT_MAX + strlen_safe(name), &e, &lb);
	if (ret)
		return ret;
	raw_enc_varint(&e, tid);
	raw_enc_svarint(&e, time_ns);
	raw_enc_string(&e, name);
	return record_end(w, type, &e, lb);
}

int raw_writer_thread_start(struct raw_writer *w, uint32_t tid, int64_t time_ns,
			    const char *name)
{
	return thread_named(w, RAW_REC_THREAD_START, tid, time_ns, name);
}

int raw_writer_thread_name(struct raw_writer *w, uint32_t tid, int64_t time_ns,
			   const char *name)
{
	return thread_named(w, RAW_REC_THREAD_NAME, tid, time_ns, name);
}

int raw_writer_thread_end(struct raw_writer *w, uint32_t tid, int64_t time_ns, uint64_t cpu_ns)
{
	struct raw_enc e;
	size_t lb;
	int ret;

	ret = record_begin(w, 3 * RAW_VARINT_MAX, &e, &lb);
	if (ret)
		return ret;
	raw_enc_varint(&e, tid);
	raw_enc_svarint(&e, time_ns);
	raw_enc_varint(&e, cpu_ns);
	return record_end(w, RAW_REC_THREAD_END, &e, lb);
}

int raw_writer_process(struct raw_writer *w, const struct raw_process *p)
{
	size_t max = 8 * RAW_VARINT_MAX;
	size_t exe_len = p->exe ? (p->exe_len ? p->exe_len : strlen(p->exe)) : 0;
	uint32_t argc = p->argc > RAW_MAX_ARGS ? RAW_MAX_ARGS : p->argc;
	struct raw_enc e;
	uint32_t i;
	size_t lb;
	int ret;

	max += exe_len;
	for (i = 0; i < argc; i++)
		max += RAW_VARINT_MAX + strlen_safe(p->argv[i]);
	/* A command line too long for the buffer is cut, not dropped. */
	while (argc && max + 1 + RAW_VARINT_MAX > w->cap - CHUNK_HDR) {
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

int raw_writer_module_unload(struct raw_writer *w, int64_t time_ns, uint64_t base,
			     const char *path)
{
	struct raw_enc e;
	size_t lb;
	int ret;

	ret = record_begin(w, 3 * RAW_VARINT_MAX + strlen_safe(path), &e, &lb);
	if (ret)
		return ret;
	raw_enc_svarint(&e, time_ns);
	raw_enc_varint(&e, base);
	raw_enc_string(&e, path);
	return record_end(w, RAW_REC_MODULE_UNLOAD, &e, lb);
}

int raw_writer_lost(struct raw_writer *w, int64_t time_ns, uint32_t reason, uint64_t count,
		    uint64_t weight)
{
	struct raw_enc e;
	size_t lb;
	int ret;

	ret = record_begin(w, 4 * RAW_VARINT_MAX, &e, &lb);
	if (ret)
		return ret;
	raw_enc_svarint(&e, time_ns);
	raw_enc_varint(&e, reason);
	raw_enc_varint(&e, count);
	raw_enc_varint(&e, weight);
	return record_end(w, RAW_REC_LOST, &e, lb);
}
