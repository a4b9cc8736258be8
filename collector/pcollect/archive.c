/* SPDX-License-Identifier: MIT */
/* -archive: copy the binaries that have samples into DIR/archive/<build-id>/<name>. */
#include "collector/pcollect/launcher.h"

#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/elf-note.h"
#include "common/grow.h"
#include "common/log.h"
#include "common/raw-stream.h"
#include "common/result-dir.h"

/* A module of one process image (pid, generation), as its MODULE_LOAD records say. */
struct arch_module {
	int32_t pid;
	uint32_t generation;
	uint32_t kind;
	char *path;
	char build_id[2 * RAW_MAX_BUILD_ID + 1];
	uint32_t nsegs;
	struct raw_segment segs[RAW_MAX_SEGMENTS];
	bool sampled;
};

struct arch_ip {
	int32_t pid;
	uint32_t generation;
	uint64_t ip;
};

struct archive {
	struct arch_module *mods;
	size_t nmods, capmods;
	struct arch_ip *ips;
	size_t nips, capips;
};

static int read_stream(struct archive *a, const char *path)
{
	const struct raw_file_header *h;
	struct raw_reader *r;
	struct raw_record rec;
	int err;

	r = raw_reader_open(path, &err);
	if (!r)
		return err;
	h = raw_reader_header(r);
	while (raw_reader_next(r, &rec) > 0) {
		if (!rec.decoded)
			continue;
		if (rec.type == RAW_REC_MODULE_LOAD) {
			struct arch_module *m;

			if (GROW(a->mods, a->nmods + 1, a->capmods))
				break;
			m = &a->mods[a->nmods];
			memset(m, 0, sizeof(*m));
			m->pid = h->pid;
			m->generation = h->generation;
			m->kind = rec.u.module.kind;
			m->path = strndup(rec.u.module.path, rec.u.module.path_len);
			elf_note_hex(rec.u.module.build_id, rec.u.module.build_id_len, m->build_id,
				     sizeof(m->build_id));
			m->nsegs = rec.u.module.nsegs;
			memcpy(m->segs, rec.u.module.segs, m->nsegs * sizeof(m->segs[0]));
			if (m->path)
				a->nmods++;
		} else if (rec.type == RAW_REC_STACK) {
			/* A stack is written only for a sample that uses it. */
			uint32_t i;

			for (i = 0; i < rec.u.stack.depth; i++) {
				struct arch_ip *ip;

				if (GROW(a->ips, a->nips + 1, a->capips))
					break;
				ip = &a->ips[a->nips++];
				ip->pid = h->pid;
				ip->generation = h->generation;
				ip->ip = rec.u.stack.ips[i];
			}
		}
	}
	raw_reader_free(r);
	return 0;
}

static int copy_file(const char *from, const char *to, mode_t mode)
{
	char buf[65536], tmp[PATH_MAX + 16];
	int in, out, ret = 0;
	ssize_t n;

	in = open(from, O_RDONLY | O_CLOEXEC);
	if (in < 0)
		return -errno;
	snprintf(tmp, sizeof(tmp), "%s.tmp", to);
	unlink(tmp);
	out = result_create_file(tmp, mode);
	if (out < 0) {
		close(in);
		return out;
	}
	while ((n = read(in, buf, sizeof(buf))) > 0) {
		if (write(out, buf, (size_t)n) != n) {
			ret = -EIO;
			break;
		}
	}
	if (n < 0)
		ret = -errno;
	close(in);
	if (close(out) && !ret)
		ret = -errno;
	if (!ret && rename(tmp, to))
		ret = -errno;
	if (ret)
		unlink(tmp);
	return ret;
}

static void mark_sampled(struct archive *a)
{
	size_t i, j;
	uint32_t k;

	for (i = 0; i < a->nips; i++) {
		const struct arch_ip *ip = &a->ips[i];

		for (j = 0; j < a->nmods; j++) {
			struct arch_module *m = &a->mods[j];

			if (m->sampled || m->pid != ip->pid || m->generation != ip->generation)
				continue;
			for (k = 0; k < m->nsegs; k++)
				if (ip->ip >= m->segs[k].start &&
				    ip->ip < m->segs[k].start + m->segs[k].size)
					m->sampled = true;
		}
	}
}

static int cmp_ip(const void *x, const void *y)
{
	const struct arch_ip *a = x, *b = y;

	if (a->pid != b->pid)
		return a->pid < b->pid ? -1 : 1;
	if (a->generation != b->generation)
		return a->generation < b->generation ? -1 : 1;
	return a->ip < b->ip ? -1 : a->ip > b->ip;
}

int archive_result(const char *dir, bool quiet)
{
	struct archive a = { 0 };
	char path[PATH_MAX], to[PATH_MAX];
	struct dirent *e;
	size_t i, j, out = 0, copied = 0;
	mode_t fmode, dmode;
	int ret = 0;
	DIR *d;

	result_path(path, sizeof(path), dir, RESULT_PATH_RAW_DIR, 0, 0, NULL, NULL);
	d = opendir(path);
	if (!d) {
		ret = -errno;
		log_error("cannot archive the binaries of '%s': cannot read '%s': %s", dir, path,
			  strerror(-ret));
		return ret;
	}
	while ((e = readdir(d))) {
		size_t len = strlen(e->d_name);
		char file[PATH_MAX + 256];

		if (len < 6 || strcmp(e->d_name + len - 5, ".praw"))
			continue;
		snprintf(file, sizeof(file), "%s/%s", path, e->d_name);
		read_stream(&a, file);
	}
	closedir(d);
	/* Fewer distinct addresses make the module lookup cheap. */
	if (a.nips) {
		qsort(a.ips, a.nips, sizeof(a.ips[0]), cmp_ip);
		for (i = 1, out = 1; i < a.nips; i++)
			if (cmp_ip(&a.ips[i], &a.ips[out - 1]))
				a.ips[out++] = a.ips[i];
		a.nips = out;
	}
	mark_sampled(&a);
	/* The result's own mode: a private result keeps its binaries private too. */
	fmode = result_file_mode(dir);
	dmode = result_dir_mode(fmode & S_IRGRP ? RESULT_MODE_GROUP : RESULT_MODE_PRIVATE);
	result_path(path, sizeof(path), dir, RESULT_PATH_ARCHIVE_DIR, 0, 0, NULL, NULL);
	if (!mkdir(path, dmode))
		chmod(path, dmode);
	for (i = 0; i < a.nmods; i++) {
		struct arch_module *m = &a.mods[i];
		struct stat st;
		bool dup = false;

		if (!m->sampled || m->kind != RAW_MODULE_FILE)
			continue;
		for (j = 0; j < i && !dup; j++)
			dup = a.mods[j].sampled && !strcmp(a.mods[j].path, m->path) &&
			      !strcmp(a.mods[j].build_id, m->build_id);
		if (dup)
			continue;
		if (!m->build_id[0]) {
			if (!quiet)
				log_warn("not archived '%s': it has no build-id", m->path);
			continue;
		}
		if (result_path(to, sizeof(to), dir, RESULT_PATH_ARCHIVE, 0, 0, m->build_id,
				m->path) < 0)
			continue;
		if (stat(to, &st) == 0)
			continue;
		snprintf(path, sizeof(path), "%s", to);
		*strrchr(path, '/') = '\0';
		if (!mkdir(path, dmode)) {
			chmod(path, dmode);
		} else if (errno != EEXIST) {
			log_warn("cannot archive '%s': cannot create '%s': %s", m->path, path,
				 strerror(errno));
			continue;
		}
		ret = copy_file(m->path, to, fmode);
		if (ret) {
			log_warn("cannot archive '%s': %s", m->path, strerror(-ret));
			ret = 0;
			continue;
		}
		copied++;
	}
	if (!quiet)
		log_info("archived %zu binaries", copied);
	for (i = 0; i < a.nmods; i++)
		free(a.mods[i].path);
	free(a.mods);
	free(a.ips);
	return ret;
}
