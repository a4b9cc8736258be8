/* SPDX-License-Identifier: MIT */
/* Finding a module's files: its binary (the result's archive by build-id, -search-dir, the
   original path, debuginfod) and its separate debug file, each taken only with its build-id. */
#define LOG_DOMAIN "module"
#include <errno.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/debuginfod.h"
#include "common/elf-note.h"
#include "common/log.h"
#include "common/result-dir.h"
#include "finalizer/module-private.h"

#define MAX_CANDIDATES 16

/* Why elf_file_open() refused a file, for -verbose. */
static const char *open_error(int err)
{
	return err == -EINVAL ? "not an ELF file" : strerror(-err);
}

/* Open path (found in where) when its build-id matches the recorded one. */
static bool open_candidate(struct module *m, const char *path, const char *where,
			   struct elf_file *f)
{
	char hex[2 * ELF_FILE_MAX_BUILD_ID + 1];
	int err = elf_file_open(f, path);

	if (err) {
		log_debug("'%s': %s '%s': %s", m->path, where, path, open_error(err));
		return false;
	}
	if (m->build_id_len && !elf_file_build_id_is(f, m->build_id, m->build_id_len)) {
		log_debug("'%s': %s '%s' refused: its build-id is %s, the profiled one %s", m->path,
			  where, path,
			  f->build_id_len
				  ? elf_note_hex(f->build_id, f->build_id_len, hex, sizeof(hex))
				  : "none",
			  m->build_id_hex);
		if (!m->mismatch_path)
			m->mismatch_path = strdup(path);
		elf_file_close(f);
		return false;
	}
	log_debug("'%s': %s '%s' taken (%s)", m->path, where, path,
		  m->build_id_len ? "same build-id" : "no build-id recorded: taken by its name");
	return true;
}

bool module_find_file(struct module *m, const struct resolve_opts *o, struct elf_file *f)
{
	char path[PATH_MAX];
	const char *cands[MAX_CANDIDATES];
	size_t n, i;

	if (m->build_id_len && o->result_dir &&
	    result_path(path, sizeof(path), o->result_dir, RESULT_PATH_ARCHIVE, 0, 0,
			m->build_id_hex, m->name) > 0 &&
	    open_candidate(m, path, "archive copy", f)) {
		m->found_in = "archive";
		return true;
	}
	n = o->search ? search_index_find(o->search, m->name, cands, MAX_CANDIDATES) : 0;
	if (o->search)
		log_debug("'%s': %zu file%s named '%s' in the search directories", m->path, n,
			  n == 1 ? "" : "s", m->name);
	for (i = 0; i < n; i++) {
		if (open_candidate(m, cands[i], "search-dir file", f)) {
			m->found_in = "search-dir";
			return true;
		}
	}
	if (m->path[0] == '/' && open_candidate(m, m->path, "original path", f)) {
		m->found_in = "original";
		return true;
	}
	log_debug("'%s': not found%s: its frames stay unresolved", m->path,
		  m->mismatch_path ? " with its build-id" : "");
	return false;
}

/* A separate debug file with .debug_info for f: by build-id, then by .gnu_debuglink. */
char *module_find_debug_file(struct module *m, const struct resolve_opts *o,
			     const struct elf_file *f)
{
	char path[PATH_MAX * 2], dir[PATH_MAX];
	const char *cands[MAX_CANDIDATES];
	const char *slash;
	size_t n, i;
	struct elf_file d;
	char *tries[8];
	size_t ntries = 0;

	if (f->build_id_len) {
		char hex[2 * ELF_FILE_MAX_BUILD_ID + 1];

		elf_note_hex(f->build_id, f->build_id_len, hex, sizeof(hex));
		snprintf(path, sizeof(path), "%s/.build-id/%.2s/%s.debug", o->debug_root, hex,
			 hex + 2);
		tries[ntries++] = strdup(path);
	}
	if (f->debuglink) {
		slash = strrchr(f->path, '/');
		snprintf(dir, sizeof(dir), "%.*s", slash ? (int)(slash - f->path) : 1,
			 slash ? f->path : ".");
		snprintf(path, sizeof(path), "%s/%s", dir, f->debuglink);
		tries[ntries++] = strdup(path);
		snprintf(path, sizeof(path), "%s/.debug/%s", dir, f->debuglink);
		tries[ntries++] = strdup(path);
		snprintf(path, sizeof(path), "%s%s/%s", o->debug_root, dir, f->debuglink);
		tries[ntries++] = strdup(path);
	}
	for (i = 0; i < ntries; i++) {
		char *found = NULL;
		int err;

		if (!tries[i] || !strcmp(tries[i], f->path))
			continue;
		err = elf_file_open(&d, tries[i]);
		if (err) {
			log_debug("'%s': debug file '%s': %s", m->path, tries[i], open_error(err));
			continue;
		}
		if (!d.has_debug_info)
			log_debug("'%s': debug file '%s' refused: no .debug_info", m->path,
				  tries[i]);
		else if (f->build_id_len && d.build_id_len &&
			 !elf_file_build_id_is(&d, f->build_id, f->build_id_len))
			log_debug("'%s': debug file '%s' refused: another build-id", m->path,
				  tries[i]);
		else
			found = tries[i];
		elf_file_close(&d);
		if (found) {
			log_debug("'%s': debug file '%s' taken", m->path, found);
			for (n = 0; n < ntries; n++)
				if (n != i)
					free(tries[n]);
			return found;
		}
	}
	for (i = 0; i < ntries; i++)
		free(tries[i]);
	/* The debug file given in a search directory under the debug link's name. */
	if (f->debuglink && o->search) {
		n = search_index_find(o->search, f->debuglink, cands, MAX_CANDIDATES);
		for (i = 0; i < n; i++) {
			char *found = NULL;

			if (elf_file_open(&d, cands[i]))
				continue;
			if (d.has_debug_info && f->build_id_len &&
			    elf_file_build_id_is(&d, f->build_id, f->build_id_len))
				found = strdup(cands[i]);
			else
				log_debug("'%s': search-dir debug file '%s' refused: %s", m->path,
					  cands[i],
					  d.has_debug_info ? "another build-id or none"
							   : "no .debug_info");
			elf_file_close(&d);
			if (found) {
				log_debug("'%s': search-dir debug file '%s' taken", m->path, found);
				return found;
			}
		}
	}
	log_debug("'%s': no separate debug file for '%s'", m->path, f->path);
	return NULL;
}

/*
 * m's file of kind from the debuginfod servers (what: "debug file", "binary", for -verbose),
 * when m has samples and a build-id to ask by: a new path, caller frees, and *downloaded;
 * NULL when not asked, or when no server gave it (*status is then why).
 */
static char *fetch(struct module *m, const struct resolve_opts *o, enum debug_server_kind kind,
		   const char *what, int *status, bool *downloaded)
{
	char *path;
	int err;

	if (!o->debuginfod || !m->naddrs || !m->build_id_len)
		return NULL;
	err = debug_server_fetch(kind, m->build_id, m->build_id_len, NULL, &path, downloaded);
	if (!err)
		return path;
	*status = err;
	log_debug("'%s': debuginfod %s: %s", m->path, what,
		  err == -ENOENT ? "no server has it" : strerror(-err));
	return NULL;
}

/* A fetched file that is usable: how it came (enum module_fetch). */
static int fetched(bool downloaded)
{
	return downloaded ? MODULE_FETCH_DOWNLOADED : MODULE_FETCH_CACHED;
}

char *module_fetch_debug_file(struct module *m, const struct resolve_opts *o)
{
	struct elf_file d;
	bool downloaded, usable;
	char *path =
		fetch(m, o, DEBUG_SERVER_DEBUGINFO, "debug file", &m->fetch_debug, &downloaded);
	int err;

	if (!path)
		return NULL;
	err = elf_file_open(&d, path);
	usable = !err && (d.has_debug_info || d.has_symtab) &&
		 (!d.build_id_len || elf_file_build_id_is(&d, m->build_id, m->build_id_len));
	if (!err)
		elf_file_close(&d);
	if (!usable) {
		log_debug("'%s': debuginfod debug file '%s' refused: %s", m->path, path,
			  err ? open_error(err) : "no DWARF or .symtab, or another build-id");
		m->fetch_debug = -EINVAL;
		free(path);
		return NULL;
	}
	m->fetch_debug = fetched(downloaded);
	log_debug("'%s': debuginfod debug file '%s' taken (%s)", m->path, path,
		  downloaded ? "fetched now" : "from libdebuginfod's cache");
	return path;
}

bool module_fetch_binary(struct module *m, const struct resolve_opts *o, struct elf_file *f)
{
	bool downloaded, ok;
	char *path = fetch(m, o, DEBUG_SERVER_EXECUTABLE, "binary", &m->fetch_binary, &downloaded);

	if (!path)
		return false;
	ok = open_candidate(m, path, "debuginfod binary", f);
	m->fetch_binary = ok ? fetched(downloaded) : -EINVAL;
	if (ok)
		m->found_in = "debuginfod";
	free(path);
	return ok;
}
