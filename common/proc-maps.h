/* SPDX-License-Identifier: MIT */
/* Parsing of /proc/<pid>/maps lines. */
#ifndef PCOLLECT_COMMON_PROC_MAPS_H
#define PCOLLECT_COMMON_PROC_MAPS_H

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

/* One mapping: "start-end perms offset dev inode   path". */
struct proc_map {
	uint64_t start, end; /* runtime addresses, end exclusive */
	uint64_t offset;     /* bytes into the file */
	uint64_t inode;
	uint32_t prot;    /* PF_R | PF_W | PF_X */
	bool shared;      /* 's' rather than 'p' */
	const char *path; /* points into the line: "", "[vdso]", "[heap]", a file... */
};

/*
 * Parse one line (its trailing newline, if any, is cut in place). Returns 0, or -1 when the
 * line is not a maps line. m->path points into line.
 */
int proc_map_parse(char *line, struct proc_map *m);

/*
 * True for executable memory no loaded ELF module accounts for: anonymous (no path, or a
 * name in brackets other than [vdso], [vsyscall] and [vvar]) or a deleted/memfd file
 * ("/memfd:..." or "... (deleted)"). Typical of JIT compilers.
 */
bool proc_map_is_anon_exec(const struct proc_map *m);

/*
 * The path of the file mapped at addr in this process (/proc/self/maps) into out (cap
 * bytes). Returns 0, or -1 when no file is mapped there (out is then left alone). Not
 * async-signal-safe (stdio).
 */
int proc_maps_path_at(uint64_t addr, char *out, size_t cap);

#endif
