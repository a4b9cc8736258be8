/* SPDX-License-Identifier: MIT */
/* The synthetic stream writers' shared pieces: a stream being written, failing loudly, and the
   modules of the running program as MODULE_LOAD records. */
#ifndef PCOLLECT_TESTS_SYNTH_MODULES_H
#define PCOLLECT_TESTS_SYNTH_MODULES_H

#include <elf.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <link.h>
#include <stdbool.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "common/elf-note.h"
#include "common/raw-stream.h"
#include "common/result-dir.h"

/* A stream being written: its file, writer and header, and the writer's buffer. */
struct out {
	int fd;
	struct raw_writer w;
	struct raw_file_header h;
	uint8_t buf[1 << 16];
};

/* The writer's failure: the program stops, saying what it was doing and why. */
static inline void die(const char *what)
{
	fprintf(stderr, "%s: %s: %s\n", program_invocation_short_name, what, strerror(errno));
	exit(1);
}

static inline void check(int ret, const char *what)
{
	if (ret) {
		errno = -ret;
		die(what);
	}
}

/* Open the stream of thread tid of process pid (its process stream with process) in the
 * result dir, sampled every interval_ns, counting from origin_ns. */
static inline void out_open_stream(struct out *o, const char *dir, int pid, int tid, int rank,
				   const char *host, uint64_t origin_ns, int64_t interval_ns,
				   bool process)
{
	char path[PATH_MAX];

	result_path(path, sizeof(path), dir, process ? RESULT_PATH_RAW_PROC : RESULT_PATH_RAW, pid,
		    tid, NULL, NULL);
	o->fd = open(path, O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644);
	if (o->fd < 0)
		die(path);
	raw_header_init(&o->h, pid, tid, rank, host, process ? 0 : interval_ns,
			process ? RAW_SAMPLE_NONE : RAW_SAMPLE_THREAD_CPU);
	o->h.origin_ns = origin_ns;
	if (process)
		o->h.kind = RAW_STREAM_PROCESS;
	check(raw_writer_init(&o->w, o->fd, o->buf, sizeof(o->buf), &o->h), path);
}

/* The stream's last records out, and its file closed. */
static inline void out_close(struct out *o)
{
	check(raw_writer_flush(&o->w), "flush");
	close(o->fd);
}

/*
 * wait-synth and job-synth write stacks of real addresses of their own process, so that
 * pfinalize names them: the streams carry the modules as they are mapped here. Fill with
 * dl_iterate_phdr(phdr_cb, NULL); write with put_module_records().
 */

struct mod {
	char path[PATH_MAX];
	uint64_t base;
	uint8_t build_id[64];
	uint32_t build_id_len;
	struct raw_segment segs[16];
	uint32_t nsegs;
};

static struct mod mods[64];
static int nmods;

static int phdr_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	struct mod *m;
	int i;

	(void)size;
	(void)data;
	if (nmods == 64 || (nmods && !info->dlpi_name[0]))
		return 0; /* the vdso and such: no file */
	m = &mods[nmods];
	memset(m, 0, sizeof(*m));
	if (!nmods) {
		ssize_t n = readlink("/proc/self/exe", m->path, sizeof(m->path) - 1);

		if (n <= 0)
			return 1;
		m->path[n] = '\0';
	} else {
		snprintf(m->path, sizeof(m->path), "%s", info->dlpi_name);
	}
	m->base = info->dlpi_addr;
	for (i = 0; i < info->dlpi_phnum; i++) {
		const ElfW(Phdr) *ph = &info->dlpi_phdr[i];

		if (ph->p_type == PT_LOAD && m->nsegs < 16) {
			struct raw_segment *s = &m->segs[m->nsegs++];

			s->start = info->dlpi_addr + ph->p_vaddr;
			s->size = ph->p_memsz;
			s->file_offset = ph->p_offset;
			s->prot = ph->p_flags;
		}
		if (ph->p_type == PT_NOTE && !m->build_id_len)
			m->build_id_len =
				(uint32_t)elf_note_build_id((const void *)(info->dlpi_addr +
									   ph->p_vaddr),
							    ph->p_memsz, ph->p_align, m->build_id,
							    sizeof(m->build_id));
	}
	nmods++;
	return 0;
}

/* Every module as a MODULE_LOAD record; 0 or the writer's error. */
static int put_module_records(struct raw_writer *w)
{
	int i, rc = 0;

	for (i = 0; i < nmods && !rc; i++) {
		struct raw_module m = {
			.kind = RAW_MODULE_FILE,
			.base = mods[i].base,
			.path = mods[i].path,
			.path_len = (uint32_t)strlen(mods[i].path),
			.build_id = mods[i].build_id,
			.build_id_len = mods[i].build_id_len,
			.nsegs = mods[i].nsegs,
			.segs = mods[i].segs,
		};
		rc = raw_writer_module_load(w, &m);
	}
	return rc;
}

#endif
