/* SPDX-License-Identifier: MIT */
/* The LD_PRELOAD list that loads the agent into a program, kept across exec. */
#include <stdbool.h>
#include <string.h>

#include "common/preload.h"

/* Runtimes that refuse to start unless they come first in the initial library list. */
static const char *const first_runtimes[] = {
	"libasan.",         "libhwasan.",         "libtsan.",
	"libclang_rt.asan", "libclang_rt.hwasan", "libclang_rt.tsan",
};

static bool is_first_runtime(const char *entry, size_t len)
{
	const char *base = entry;
	size_t i, n;

	for (i = 0; i < len; i++)
		if (entry[i] == '/')
			base = entry + i + 1;
	n = len - (size_t)(base - entry);
	for (i = 0; i < sizeof(first_runtimes) / sizeof(first_runtimes[0]); i++) {
		size_t m = strlen(first_runtimes[i]);

		if (n >= m && !strncmp(base, first_runtimes[i], m))
			return true;
	}
	return false;
}

bool preload_is_sanitizer(const char *path)
{
	return is_first_runtime(path, strlen(path));
}

struct out {
	char *p;
	size_t size, len;
	bool overflow;
};

static void out_entry(struct out *o, const char *s, size_t len)
{
	size_t need = len + (o->len ? 1 : 0);

	if (o->len + need >= o->size) {
		o->overflow = true;
		return;
	}
	if (o->len)
		o->p[o->len++] = ':';
	memcpy(o->p + o->len, s, len);
	o->len += len;
	o->p[o->len] = '\0';
}

/* True when entry (len bytes) is one of the ':'-separated entries of ours. */
static bool is_ours(const char *entry, size_t len, const char *ours)
{
	const char *q = ours;

	while (*q) {
		size_t n = strcspn(q, ":");

		if (n == len && !strncmp(q, entry, len))
			return true;
		q += n;
		while (*q == ':')
			q++;
	}
	return false;
}

/* Write old's entries for which is_first_runtime() is first (ours left out). */
static void out_entries(struct out *o, const char *old, const char *ours, bool first)
{
	const char *q = old;

	while (q && *q) {
		size_t len = strcspn(q, ": ");

		if (len && !is_ours(q, len, ours) && is_first_runtime(q, len) == first)
			out_entry(o, q, len);
		q += len;
		while (*q == ':' || *q == ' ')
			q++;
	}
}

int preload_compose(char *out, size_t size, const char *ours, const char *old)
{
	struct out o = { out, size, 0, false };
	const char *q = ours;

	if (!size)
		return -1;
	out[0] = '\0';
	out_entries(&o, old, ours, true);
	while (*q) {
		size_t n = strcspn(q, ":");

		if (n)
			out_entry(&o, q, n);
		q += n;
		while (*q == ':')
			q++;
	}
	out_entries(&o, old, ours, false);
	return o.overflow ? -1 : (int)o.len;
}
