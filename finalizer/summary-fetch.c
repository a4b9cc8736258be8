/* SPDX-License-Identifier: MIT */
/* The summary's debuginfod line: which modules' files the servers gave, which they did not. */
#include <errno.h>
#include <stdio.h>
#include <string.h>

#include "common/debuginfod.h"
#include "finalizer/finalize-private.h"

#define NAMES_SHOWN 6

/* Module names of one outcome, the first NAMES_SHOWN spelled out. */
struct name_list {
	const char *title;
	char text[1024];
	size_t len;
	int count;
};

static void list_add(struct name_list *l, const char *name, const char *what)
{
	if (l->count++ >= NAMES_SHOWN || l->len >= sizeof(l->text))
		return;
	l->len += (size_t)snprintf(l->text + l->len, sizeof(l->text) - l->len, "%s%s%s%s%s",
				   l->count > 1 ? ", " : "", name, what ? " (" : "",
				   what ? what : "", what ? ")" : "");
}

static void list_print(FILE *o, const struct name_list *l, bool *first)
{
	if (!l->count)
		return;
	fprintf(o, "%s%s: %s", *first ? "" : "; ", l->title, l->text);
	if (l->count > NAMES_SHOWN)
		fprintf(o, " and %d more", l->count - NAMES_SHOWN);
	*first = false;
}

/* "binary, debug file": the files of one module whose answer pick() accepts. */
static const char *kinds(const struct module *m, bool (*pick)(int), char *buf, size_t size)
{
	snprintf(buf, size, "%s%s%s", pick(m->fetch_binary) ? "binary" : "",
		 pick(m->fetch_binary) && pick(m->fetch_debug) ? ", " : "",
		 pick(m->fetch_debug) ? "debug file" : "");
	return buf;
}

static bool is_downloaded(int r)
{
	return r == MODULE_FETCH_DOWNLOADED;
}

static bool is_cached(int r)
{
	return r == MODULE_FETCH_CACHED;
}

static bool is_absent(int r)
{
	return r == -ENOENT;
}

static bool is_failed(int r)
{
	return r < 0 && r != -ENOENT;
}

void fin_print_fetches(FILE *o, const struct fin *f)
{
	struct name_list got = { "fetched" }, cached = { "from its cache" },
			 absent = { "not on the servers" }, failed = { "failed" };
	size_t i, lacking = 0;
	bool first = true;
	char buf[64];

	for (i = 0; i < f->nmodules; i++) {
		const struct module *m = &f->modules[i];
		int err = is_failed(m->fetch_debug) ? m->fetch_debug : m->fetch_binary;

		if (!m->naddrs || m->kind != RAW_MODULE_FILE)
			continue;
		lacking += strcmp(m->symbols, "dwarf") != 0;
		if (is_downloaded(m->fetch_binary) || is_downloaded(m->fetch_debug))
			list_add(&got, m->name, kinds(m, is_downloaded, buf, sizeof(buf)));
		if (is_cached(m->fetch_binary) || is_cached(m->fetch_debug))
			list_add(&cached, m->name, kinds(m, is_cached, buf, sizeof(buf)));
		if (is_absent(m->fetch_binary) || is_absent(m->fetch_debug))
			list_add(&absent, m->name, kinds(m, is_absent, buf, sizeof(buf)));
		if (is_failed(m->fetch_binary) || is_failed(m->fetch_debug))
			list_add(&failed, m->name,
				 err == -EINVAL ? "the servers' file does not fit"
						: strerror(-err));
	}
	if (f->o->no_debuginfod && debug_server_configured() && lacking) {
		fprintf(o,
			"  debuginfod: not asked (-no-debuginfod) for %zu module%s without debug "
			"information\n",
			lacking, lacking == 1 ? "" : "s");
		return;
	}
	if (!got.count && !cached.count && !absent.count && !failed.count)
		return;
	fprintf(o, "  debuginfod: ");
	list_print(o, &got, &first);
	list_print(o, &cached, &first);
	list_print(o, &absent, &first);
	list_print(o, &failed, &first);
	fputc('\n', o);
}
