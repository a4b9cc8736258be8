/* SPDX-License-Identifier: MIT */
/* memory-consumption's raw data: the counters record and the aggregate file's header check. */
#include <errno.h>
#include <string.h>

#include "common/raw-memory.h"

size_t raw_mem_counters_encode(uint8_t *buf, int64_t time_ns, uint64_t live, uint64_t rss)
{
	size_t n = 0;

	n += raw_varint_put(buf + n, raw_zigzag(time_ns));
	n += raw_varint_put(buf + n, live);
	n += raw_varint_put(buf + n, rss);
	return n;
}

int raw_mem_counters_decode(const uint8_t *payload, size_t len, struct raw_mem_counters *out)
{
	struct raw_dec d = { payload, payload + len, false };

	out->time_ns = raw_dec_svarint(&d);
	out->live = raw_dec_varint(&d);
	out->rss = raw_dec_varint(&d);
	return d.error ? -1 : 0;
}

int raw_mem_check(const void *data, uint64_t len)
{
	const struct raw_mem_header *h = data;
	static const char zeros[8];

	if (len < sizeof(*h))
		return -EINVAL;
	if (!memcmp(h->magic, zeros, sizeof(zeros)))
		return -ENODATA;
	if (memcmp(h->magic, RAW_MEM_MAGIC, sizeof(h->magic)))
		return -EINVAL;
	if (h->byte_order != RAW_BYTE_ORDER_MARK)
		return -EPROTO;
	if (h->version > RAW_MEM_VERSION)
		return -EPROTONOSUPPORT;
	if (h->version < 1 || h->header_size < sizeof(*h) || h->header_size > len ||
	    h->entry_size < sizeof(struct raw_mem_entry) || h->entry_size > 4096)
		return -EINVAL;
	return 0;
}
