/* SPDX-License-Identifier: MIT */
/* Files by build-id from debuginfod servers (libdebuginfod): debug files, binaries, sources. */
#ifndef PCOLLECT_COMMON_DEBUGINFOD_H
#define PCOLLECT_COMMON_DEBUGINFOD_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

enum debug_server_kind {
	DEBUG_SERVER_DEBUGINFO,  /* the separate debug file (DWARF and .symtab) */
	DEBUG_SERVER_EXECUTABLE, /* the binary itself */
	DEBUG_SERVER_SOURCE,     /* a source file its DWARF names */
};

/* True when servers are configured: DEBUGINFOD_URLS is set and not blank. */
bool debug_server_configured(void);

/*
 * Ask the debuginfod servers of DEBUGINFOD_URLS, through libdebuginfod (and so with its
 * cache, $DEBUGINFOD_CACHE_PATH else ~/.cache/debuginfod_client, and its limits,
 * $DEBUGINFOD_TIMEOUT, $DEBUGINFOD_MAXTIME...), for the file of kind of the build-id
 * id[0..len) (a source: source_path, as the DWARF names it). Returns 0 with *path a new
 * string, the file in libdebuginfod's cache (caller frees), and *downloaded true when it
 * came over the network now, false when the cache had it; -ENOENT when no server has it;
 * -ENOSYS when no server is configured; another negative errno when the servers could not
 * be asked or answered badly (-ETIMEDOUT, -ECONNREFUSED, ...). Thread-safe: each call has
 * its own client.
 */
int debug_server_fetch(enum debug_server_kind kind, const uint8_t *id, size_t len,
		       const char *source_path, char **path, bool *downloaded);

/* debug_server_fetch() by a build-id in lower-case hex (modules.build_id). */
int debug_server_fetch_hex(enum debug_server_kind kind, const char *hex, const char *source_path,
			   char **path, bool *downloaded);

/* "debug file", "binary" or "source file", for messages. */
const char *debug_server_kind_name(enum debug_server_kind kind);

#endif
