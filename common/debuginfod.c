/* SPDX-License-Identifier: MIT */
/* The libdebuginfod client, loaded when first needed: one short session per file asked for. */
#define LOG_DOMAIN "debuginfod"
#include <dlfcn.h>
#include <elfutils/debuginfod.h>
#include <errno.h>
#include <pthread.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/log.h"
#include "common/debuginfod.h"
#include "common/elf-note.h"
#include "common/raw-stream.h" /* RAW_MAX_BUILD_ID */

/*
 * libdebuginfod is opened with dlopen() on first use, as elfutils' own libdw does: linked,
 * it brings libcurl and its TLS and authentication libraries (30 of them on Debian 12) into
 * every pfinalize and preport, whose start then costs 3 ms more CPU time even when no server
 * is configured.
 */
static struct {
	debuginfod_client *(*begin)(void);
	void (*end)(debuginfod_client *c);
	int (*find_debuginfo)(debuginfod_client *c, const unsigned char *id, int len, char **path);
	int (*find_executable)(debuginfod_client *c, const unsigned char *id, int len, char **path);
	int (*find_source)(debuginfod_client *c, const unsigned char *id, int len, const char *file,
			   char **path);
	void (*set_progressfn)(debuginfod_client *c, debuginfod_progressfn_t fn);
	void (*set_user_data)(debuginfod_client *c, void *data);
	void *(*get_user_data)(debuginfod_client *c);
	bool loaded;
} lib;
static pthread_once_t lib_once = PTHREAD_ONCE_INIT;

static void lib_load(void)
{
	void *h = dlopen(DEBUGINFOD_SONAME, RTLD_NOW | RTLD_LOCAL);

	if (!h) {
		log_debug("cannot load %s: %s", DEBUGINFOD_SONAME, dlerror());
		return;
	}
	*(void **)&lib.begin = dlsym(h, "debuginfod_begin");
	*(void **)&lib.end = dlsym(h, "debuginfod_end");
	*(void **)&lib.find_debuginfo = dlsym(h, "debuginfod_find_debuginfo");
	*(void **)&lib.find_executable = dlsym(h, "debuginfod_find_executable");
	*(void **)&lib.find_source = dlsym(h, "debuginfod_find_source");
	*(void **)&lib.set_progressfn = dlsym(h, "debuginfod_set_progressfn");
	*(void **)&lib.set_user_data = dlsym(h, "debuginfod_set_user_data");
	*(void **)&lib.get_user_data = dlsym(h, "debuginfod_get_user_data");
	lib.loaded = lib.begin && lib.end && lib.find_debuginfo && lib.find_executable &&
		     lib.find_source && lib.set_progressfn && lib.set_user_data &&
		     lib.get_user_data;
	if (!lib.loaded)
		log_debug("%s lacks a function this client calls", DEBUGINFOD_SONAME);
}

bool debug_server_configured(void)
{
	const char *urls = getenv(DEBUGINFOD_URLS_ENV_VAR);

	return urls && urls[strspn(urls, " \t\n")];
}

const char *debug_server_kind_name(enum debug_server_kind kind)
{
	return kind == DEBUG_SERVER_DEBUGINFO    ? "debug file"
	       : kind == DEBUG_SERVER_EXECUTABLE ? "binary"
						 : "source file";
}

/* Called by libdebuginfod while it transfers a file, never for one its cache holds. */
static int note_transfer(debuginfod_client *c, long done, long total)
{
	bool *downloaded = lib.get_user_data(c);

	*downloaded = true;
	return 0; /* go on */
}

/* id/len as libdebuginfod takes it: raw bytes, or (len 0) a hex string. */
static int fetch(enum debug_server_kind kind, const unsigned char *id, int len, const char *hex,
		 const char *source_path, char **path, bool *downloaded)
{
	debuginfod_client *c;
	int fd;

	*path = NULL;
	*downloaded = false;
	if (!debug_server_configured())
		return -ENOSYS;
	pthread_once(&lib_once, lib_load);
	if (!lib.loaded)
		return -ELIBACC;
	c = lib.begin();
	if (!c)
		return -ENOMEM;
	lib.set_user_data(c, downloaded);
	/* Our own: else $DEBUGINFOD_PROGRESS would have libdebuginfod print to the terminal. */
	lib.set_progressfn(c, note_transfer);
	if (kind == DEBUG_SERVER_DEBUGINFO)
		fd = lib.find_debuginfo(c, id, len, path);
	else if (kind == DEBUG_SERVER_EXECUTABLE)
		fd = lib.find_executable(c, id, len, path);
	else
		fd = lib.find_source(c, id, len, source_path, path);
	lib.end(c);
	if (fd >= 0) {
		close(fd);
		log_debug("%s of build-id %s%s%s: %s '%s'", debug_server_kind_name(kind), hex,
			  source_path ? " " : "", source_path ? source_path : "",
			  *downloaded ? "fetched from" : "in the cache of the servers' files at",
			  *path ? *path : "?");
		if (!*path)
			return -ENOMEM;
		return 0;
	}
	log_debug("%s of build-id %s%s%s: %s", debug_server_kind_name(kind), hex,
		  source_path ? " " : "", source_path ? source_path : "",
		  fd == -ENOENT ? "no server has it" : strerror(-fd));
	free(*path);
	*path = NULL;
	return fd;
}

int debug_server_fetch(enum debug_server_kind kind, const uint8_t *id, size_t len,
		       const char *source_path, char **path, bool *downloaded)
{
	char hex[2 * RAW_MAX_BUILD_ID + 1];

	if (!len || len > RAW_MAX_BUILD_ID)
		return -EINVAL;
	elf_note_hex(id, len, hex, sizeof(hex));
	return fetch(kind, id, (int)len, hex, source_path, path, downloaded);
}

int debug_server_fetch_hex(enum debug_server_kind kind, const char *hex, const char *source_path,
			   char **path, bool *downloaded)
{
	if (!hex || !*hex)
		return -EINVAL;
	return fetch(kind, (const unsigned char *)hex, 0, hex, source_path, path, downloaded);
}
