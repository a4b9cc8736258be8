/* SPDX-License-Identifier: MIT */
/* The LD_PRELOAD list that loads the agent into a program, kept across exec. */
#include <stdbool.h>
#include <string.h>

#include "collector/preload.h"

/* Runtimes that refuse to start unless they come first in the initial library list. */
static const char *const first_runtimes[] = {
	"libasan.", "libhwasan.", "libtsan.", "libclang_rt.asan", "libclang_rt.hwasan",
	"libclang_rt.tsan",
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

/* Write old's entries for which is_first_runtime() is first (the agent itself left out). */
static void out_entries(struct out *o, const char *old, const char *agent, bool first)
{
	size_t alen = strlen(agent);
	const char *q = old;

	while (q && *q) {
		size_t len = strcspn(q, ": ");

		if (len && !(len == alen && !strncmp(q, agent, len)) &&
		    is_first_runtime(q, len) == first)
			out_entry(o, q, len);
		q += len;
		while (*q == ':' || *q == ' ')
			q++;
	}
}

int preload_compose(char *out, size_t size, const char *agent, const char *old)
{
	struct out o = { out, size, 0, false };

	if (!size)
		return -1;
	out[0] = '\0';
	out_entries(&o, old, agent, true);
	out_entry(&o, agent, strlen(agent));
	out_entries(&o, old, agent, false);
	return o.overflow ? -1 : (int)o.len;
}
