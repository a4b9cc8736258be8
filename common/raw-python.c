/* SPDX-License-Identifier: MIT */
/* Encoders (async-signal-safe) and decoders of the Python record types. */
#include <errno.h>
#include "common/raw-python.h"

static void enc_init(struct raw_enc *e, uint8_t *scratch, size_t cap)
{
	e->p = scratch;
	e->end = scratch + cap;
	e->overflow = false;
}

static int enc_finish(struct raw_writer *w, uint8_t type, struct raw_enc *e, uint8_t *scratch)
{
	if (e->overflow)
		return -E2BIG;
	return raw_writer_record(w, type, scratch, (size_t)(e->p - scratch));
}

int raw_py_write_code(struct raw_writer *w, const struct raw_py_code *c, uint8_t *scratch,
		      size_t cap)
{
	struct raw_enc e;

	if (c->filename.len > RAW_PY_MAX_STRING || c->name.len > RAW_PY_MAX_STRING ||
	    c->linetable.len > RAW_PY_MAX_LINETABLE)
		return -E2BIG;
	enc_init(&e, scratch, cap);
	raw_enc_varint(&e, c->id);
	raw_enc_varint(&e, c->addr);
	raw_enc_varint(&e, c->version);
	raw_enc_varint(&e, c->flags);
	raw_enc_svarint(&e, c->firstlineno);
	raw_enc_varint(&e, c->code_size);
	raw_enc_bytes(&e, c->filename.s, c->filename.len);
	raw_enc_bytes(&e, c->name.s, c->name.len);
	raw_enc_bytes(&e, c->linetable.s, c->linetable.len);
	return enc_finish(w, RAW_REC_PY_CODE, &e, scratch);
}

int raw_py_write_stack(struct raw_writer *w, uint64_t id, uint32_t flags, const uint64_t *ips,
		       uint32_t n, const struct raw_py_frame *py, uint32_t npy, uint8_t *scratch,
		       size_t cap)
{
	struct raw_enc e;
	uint32_t i;

	if (n > RAW_MAX_DEPTH)
		n = RAW_MAX_DEPTH, flags |= RAW_STACK_TRUNCATED;
	if (npy > RAW_PY_MAX_FRAMES)
		npy = RAW_PY_MAX_FRAMES, flags |= RAW_PY_STACK_PY_TRUNCATED;
	enc_init(&e, scratch, cap);
	raw_enc_stack(&e, id, flags, ips, n);
	raw_enc_varint(&e, npy);
	for (i = 0; i < npy; i++) {
		raw_enc_varint(&e, py[i].code_id);
		raw_enc_varint(&e, py[i].offset);
		raw_enc_varint(&e, py[i].flags & ~(uint32_t)RAW_PY_FRAME_CALLEE);
	}
	return enc_finish(w, RAW_REC_PY_STACK, &e, scratch);
}

int raw_py_write_note(struct raw_writer *w, const struct raw_py_note *note, uint8_t *scratch,
		      size_t cap)
{
	struct raw_enc e;

	if (note->detail.len > RAW_PY_MAX_STRING)
		return -E2BIG;
	enc_init(&e, scratch, cap);
	raw_enc_svarint(&e, note->time_ns);
	raw_enc_varint(&e, note->kind);
	raw_enc_varint(&e, note->count);
	raw_enc_bytes(&e, note->detail.s, note->detail.len);
	return enc_finish(w, RAW_REC_PY_NOTE, &e, scratch);
}

int raw_py_write_thread_name(struct raw_writer *w, const struct raw_py_thread_name *tn,
			     uint8_t *scratch, size_t cap)
{
	struct raw_enc e;

	if (tn->name.len > RAW_PY_MAX_STRING)
		return -E2BIG;
	enc_init(&e, scratch, cap);
	raw_enc_varint(&e, tn->tid);
	raw_enc_svarint(&e, tn->time_ns);
	raw_enc_bytes(&e, tn->name.s, tn->name.len);
	return enc_finish(w, RAW_REC_PY_THREAD_NAME, &e, scratch);
}

int raw_py_write_callee(struct raw_writer *w, const struct raw_py_callee *c, uint8_t *scratch,
			size_t cap)
{
	struct raw_enc e;

	if (c->name.len > RAW_PY_CALLEE_MAX_STRING || c->owner.len > RAW_PY_CALLEE_MAX_STRING)
		return -E2BIG;
	enc_init(&e, scratch, cap);
	raw_enc_varint(&e, c->id);
	raw_enc_varint(&e, c->kind);
	raw_enc_bytes(&e, c->name.s, c->name.len);
	raw_enc_bytes(&e, c->owner.s, c->owner.len);
	return enc_finish(w, RAW_REC_PY_CALLEE, &e, scratch);
}

int raw_py_write_stack_callees(struct raw_writer *w, uint64_t stack_id,
			       const struct raw_py_frame *py, uint32_t npy, uint8_t *scratch,
			       size_t cap)
{
	struct raw_enc e;
	uint32_t i, n = 0;

	for (i = 0; i < npy; i++)
		n += !!(py[i].flags & RAW_PY_FRAME_CALLEE);
	if (!n)
		return 0;
	enc_init(&e, scratch, cap);
	raw_enc_varint(&e, stack_id);
	raw_enc_varint(&e, n);
	for (i = 0; i < npy; i++) {
		if (!(py[i].flags & RAW_PY_FRAME_CALLEE))
			continue;
		raw_enc_varint(&e, i);
		raw_enc_varint(&e, py[i].callee);
	}
	return enc_finish(w, RAW_REC_PY_STACK_CALLEES, &e, scratch);
}

static void dec_init(struct raw_dec *d, const uint8_t *payload, size_t len)
{
	d->p = payload;
	d->end = payload + len;
	d->error = false;
}

/* A u32 field: values that do not fit are malformed. */
static uint32_t dec_u32(struct raw_dec *d)
{
	uint64_t v = raw_dec_varint(d);

	if (v > UINT32_MAX)
		d->error = true;
	return (uint32_t)v;
}

/* The payload must be used up exactly: trailing bytes mean a writer we do not understand. */
static int dec_finish(const struct raw_dec *d)
{
	return d->error || d->p != d->end ? -EINVAL : 0;
}

int raw_py_read_code(const uint8_t *payload, size_t len, struct raw_py_code *c)
{
	struct raw_dec d;
	int64_t first;

	dec_init(&d, payload, len);
	c->id = raw_dec_varint(&d);
	c->addr = raw_dec_varint(&d);
	c->version = dec_u32(&d);
	c->flags = dec_u32(&d);
	first = raw_dec_svarint(&d);
	c->code_size = dec_u32(&d);
	c->filename = raw_dec_string(&d);
	c->name = raw_dec_string(&d);
	c->linetable = raw_dec_string(&d);
	if (first < INT32_MIN || first > INT32_MAX)
		return -EINVAL;
	c->firstlineno = (int32_t)first;
	if (c->id == 0 || c->filename.len > RAW_PY_MAX_STRING || c->name.len > RAW_PY_MAX_STRING ||
	    c->linetable.len > RAW_PY_MAX_LINETABLE)
		return -EINVAL;
	return dec_finish(&d);
}

int raw_py_read_stack(const uint8_t *payload, size_t len, struct raw_py_stack *s, uint64_t *ips,
		      struct raw_py_frame *py)
{
	struct raw_dec d;
	uint64_t prev = 0;
	uint32_t i;

	dec_init(&d, payload, len);
	s->id = raw_dec_varint(&d);
	s->flags = dec_u32(&d);
	s->n = dec_u32(&d);
	if (d.error || s->n > RAW_MAX_DEPTH)
		return -EINVAL;
	for (i = 0; i < s->n && !d.error; i++) {
		prev += (uint64_t)raw_dec_svarint(&d);
		ips[i] = prev;
	}
	s->npy = dec_u32(&d);
	if (d.error || s->npy > RAW_PY_MAX_FRAMES)
		return -EINVAL;
	for (i = 0; i < s->npy && !d.error; i++) {
		py[i].code_id = raw_dec_varint(&d);
		py[i].offset = dec_u32(&d);
		py[i].flags = dec_u32(&d) & ~(uint32_t)RAW_PY_FRAME_CALLEE;
		py[i].callee = 0;
	}
	return dec_finish(&d);
}

int raw_py_read_note(const uint8_t *payload, size_t len, struct raw_py_note *note)
{
	struct raw_dec d;

	dec_init(&d, payload, len);
	note->time_ns = raw_dec_svarint(&d);
	note->kind = dec_u32(&d);
	note->count = raw_dec_varint(&d);
	note->detail = raw_dec_string(&d);
	if (note->detail.len > RAW_PY_MAX_STRING)
		return -EINVAL;
	return dec_finish(&d);
}

int raw_py_read_thread_name(const uint8_t *payload, size_t len, struct raw_py_thread_name *tn)
{
	struct raw_dec d;

	dec_init(&d, payload, len);
	tn->tid = dec_u32(&d);
	tn->time_ns = raw_dec_svarint(&d);
	tn->name = raw_dec_string(&d);
	if (tn->name.len > RAW_PY_MAX_STRING)
		return -EINVAL;
	return dec_finish(&d);
}

int raw_py_read_callee(const uint8_t *payload, size_t len, struct raw_py_callee *c)
{
	struct raw_dec d;

	dec_init(&d, payload, len);
	c->id = raw_dec_varint(&d);
	c->kind = dec_u32(&d);
	c->name = raw_dec_string(&d);
	c->owner = raw_dec_string(&d);
	if (c->id == 0 || c->kind == 0 || c->kind > RAW_PY_CALLEE_KIND_MAX || !c->name.len ||
	    c->name.len > RAW_PY_CALLEE_MAX_STRING || c->owner.len > RAW_PY_CALLEE_MAX_STRING)
		return -EINVAL;
	return dec_finish(&d);
}

int raw_py_read_stack_callees(const uint8_t *payload, size_t len, uint64_t stack_id,
			      struct raw_py_frame *py, uint32_t npy)
{
	struct raw_dec d;
	uint32_t n, i, frame[RAW_PY_MAX_FRAMES];
	uint64_t callee[RAW_PY_MAX_FRAMES];
	int64_t last = -1;

	dec_init(&d, payload, len);
	if (raw_dec_varint(&d) != stack_id || d.error)
		return -EINVAL;
	n = dec_u32(&d);
	if (d.error || n > npy)
		return -EINVAL;
	for (i = 0; i < n && !d.error; i++) {
		frame[i] = dec_u32(&d);
		callee[i] = raw_dec_varint(&d);
		if (frame[i] >= npy || (int64_t)frame[i] <= last || !callee[i])
			return -EINVAL;
		last = frame[i];
	}
	if (dec_finish(&d) < 0)
		return -EINVAL;
	for (i = 0; i < n; i++) {
		py[frame[i]].flags |= RAW_PY_FRAME_CALLEE;
		py[frame[i]].callee = callee[i];
	}
	return 0;
}
