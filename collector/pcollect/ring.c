/* SPDX-License-Identifier: MIT */
/* -ring-buffer: thread streams' chunks older than the window dropped, and snapshots of it. */
#define LOG_DOMAIN "ring"
#include <dirent.h>
#include <errno.h>
#include <fcntl.h>
#include <limits.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <time.h>
#include <unistd.h>

#include "collector/pcollect/launcher.h"
#include "common/io.h"
#include "common/log.h"
#include "common/raw-stream.h"
#include "common/result-dir.h"

#define RING_BLOCK 4096u /* holes are looked for from block boundaries (SEEK_DATA) */

static uint64_t mono_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * Reads of a stream the agent may cut (at its end) while we look: pread, never a mapping,
 * whose pages past the new end would raise SIGBUS.
 */
struct peek {
	int fd;
	uint64_t off; /* file offset of buf[0] */
	size_t len;   /* bytes of buf read */
	uint8_t buf[1 << 16];
};

/* n bytes (at most the buffer) at pos into out: false past the end or on an error. */
static bool peek_at(struct peek *k, uint64_t pos, void *out, size_t n)
{
	if (pos < k->off || pos + n > k->off + k->len) {
		ssize_t got;

		do
			got = pread(k->fd, k->buf, sizeof(k->buf), (off_t)pos);
		while (got < 0 && errno == EINTR);
		k->off = pos;
		k->len = got > 0 ? (size_t)got : 0;
		if (k->len < n)
			return false;
	}
	memcpy(out, k->buf + (pos - k->off), n);
	return true;
}

/*
 * The offset of the first chunk of the thread stream k->fd to keep:
 * every chunk before it ended before the window began, since the chunk after it opened
 * before then (the agent stamps a chunk with the time it opened under -ring-buffer,
 * docs/raw-format.md). *from gets where the part that may go begins: after the header, and
 * after chunk 0, the thread's start (its name), which the agent ends at once and which is
 * kept. Returns *from when nothing is to go, 0 when the file is not a whole version 2 thread
 * stream. An open or damaged chunk ends the walk: nothing after it is judged.
 */
static uint64_t keep_from(struct peek *k, uint64_t now, uint64_t keep_ns, uint64_t *from)
{
	struct raw_file_header h;
	uint64_t pos, keep;
	int64_t cutoff;
	bool first = true;

	if (!peek_at(k, 0, &h, sizeof(h)))
		return 0;
	if (memcmp(h.magic, RAW_MAGIC, sizeof(h.magic)) || h.byte_order != RAW_BYTE_ORDER_MARK ||
	    h.version != 2 || h.header_size != sizeof(h) || h.kind != RAW_STREAM_THREAD ||
	    h.origin_ns > now)
		return 0;
	*from = keep = pos = sizeof(h);
	cutoff = (int64_t)(now - h.origin_ns) - (int64_t)keep_ns;
	for (;;) {
		struct raw_chunk_header ch;
		uint64_t word;

		/* A hole (a part dropped before) is skipped whole, not read as zeros. */
		if (pos % RING_BLOCK == 0) {
			off_t d = lseek(k->fd, (off_t)pos, SEEK_DATA);

			if (d < 0)
				break;
			if ((uint64_t)d > pos) {
				pos = (uint64_t)d;
				continue;
			}
		}
		if (!peek_at(k, pos, &word, sizeof(word)))
			break;
		if (!word) { /* padding, a window's unused end, or a part dropped before */
			pos += 8;
			continue;
		}
		if (!peek_at(k, pos, &ch, sizeof(ch)) || ch.magic != RAW_CHUNK_MAGIC)
			break;
		if (!first) {
			/* base_ns is stored after the magic: 0 is one not stored yet. */
			if (ch.base_ns <= 0 || ch.base_ns >= cutoff)
				break;
			keep = pos;
		}
		if (ch.size == RAW_CHUNK_OPEN || ch.size > RAW_MAX_CHUNK)
			break;
		pos = (pos + sizeof(ch) + ch.size + 7) & ~(uint64_t)7;
		if (first && ch.seq == 0)
			*from = keep = pos;
		first = false;
	}
	return keep;
}

/*
 * The part of the stream at path to keep: up to *from, and from *keep to its end (*size
 * bytes); with punch, what lies between is dropped from the file (a hole: the blocks are
 * freed, the reader takes the zeros for padding). 0, or -errno (-ENODATA: not a stream
 * whose chunks may go).
 */
static int stream_window(const char *path, uint64_t now, uint64_t keep_ns, bool punch, int *fdp,
			 uint64_t *from, uint64_t *keep, uint64_t *size)
{
	static struct peek k;
	struct stat st;
	int fd = open(path, (punch ? O_RDWR : O_RDONLY) | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK);

	*keep = 0;
	if (fd < 0)
		return -errno;
	if (fstat(fd, &st) || !S_ISREG(st.st_mode) ||
	    st.st_size < (off_t)sizeof(struct raw_file_header)) {
		close(fd);
		return -ENODATA;
	}
	*size = (uint64_t)st.st_size;
	k.fd = fd;
	k.off = k.len = 0;
	*keep = keep_from(&k, now, keep_ns, from);
	if (punch && *keep > *from &&
	    fallocate(fd, FALLOC_FL_PUNCH_HOLE | FALLOC_FL_KEEP_SIZE, (off_t)*from,
		      (off_t)(*keep - *from))) {
		int err = errno;

		close(fd);
		return -err;
	}
	if (fdp)
		*fdp = fd;
	else
		close(fd);
	return 0;
}

/* Calls fn(dir/raw/name) for each raw stream (.praw) of dir. */
static int each_stream(const char *dir, int (*fn)(const char *path, const char *name, void *ctx),
		       void *ctx)
{
	char raw[PATH_MAX];
	struct dirent *e;
	DIR *d;
	int ret = 0;

	if (result_path(raw, sizeof(raw), dir, RESULT_PATH_RAW_DIR, 0, 0, NULL, NULL) < 0)
		return -ENAMETOOLONG;
	if (!(d = opendir(raw)))
		return -errno;
	while (!ret && (e = readdir(d))) {
		char path[PATH_MAX * 2];

		if (e->d_name[0] == '.')
			continue;
		snprintf(path, sizeof(path), "%s/%s", raw, e->d_name);
		ret = fn(path, e->d_name, ctx);
	}
	closedir(d);
	return ret;
}

struct trim {
	uint64_t now, keep_ns;
	unsigned warned;
};

static int trim_one(const char *path, const char *name, void *ctx)
{
	struct trim *t = ctx;
	uint64_t from, keep, size;
	int ret;

	(void)name;
	ret = stream_window(path, t->now, t->keep_ns, true, NULL, &from, &keep, &size);
	if (ret && ret != -ENODATA && ret != -ENOENT && !t->warned++)
		log_warn("-ring-buffer: cannot drop the old part of '%s': %s", path,
			 strerror(-ret));
	return 0;
}

void ring_trim(const char *dir, uint64_t keep_ns, uint64_t now)
{
	static unsigned warned;
	struct trim t = { now ? now : mono_ns(), keep_ns, warned };

	each_stream(dir, trim_one, &t);
	warned = t.warned;
}

/* Copy [from, to) of in to the same offsets of out. */
static int copy_range(int in, int out, uint64_t from, uint64_t to)
{
	static char buf[1 << 16];

	while (from < to) {
		size_t want = to - from < sizeof(buf) ? (size_t)(to - from) : sizeof(buf);
		ssize_t n = pread(in, buf, want, (off_t)from);

		if (n < 0 && errno == EINTR)
			continue;
		if (n < 0)
			return -errno;
		if (n == 0)
			break;
		if (lseek(out, (off_t)from, SEEK_SET) < 0)
			return -errno;
		if (io_write_all(out, buf, (size_t)n))
			return -errno;
		from += (uint64_t)n;
	}
	return 0;
}

struct snap {
	const char *to; /* the snapshot's directory */
	const char *sub;
	uint64_t now, keep_ns;
	mode_t mode;
};

/* A file of the collection into the snapshot: a thread stream's window only (header kept). */
static int snap_one(const char *path, const char *name, void *ctx)
{
	const struct snap *s = ctx;
	char dst[PATH_MAX * 2];
	uint64_t from = 0, keep = 0, size = 0;
	int in = -1, out, ret;

	snprintf(dst, sizeof(dst), "%s/%s/%s", s->to, s->sub, name);
	if (!s->keep_ns ||
	    stream_window(path, s->now, s->keep_ns, false, &in, &from, &keep, &size) || !keep) {
		struct stat st;

		if (in >= 0)
			close(in);
		if ((in = result_open_file(path, true, 0, &st)) < 0)
			return in == -ENOENT ? 0 : in; /* a stream that ended and went: none */
		size = (uint64_t)st.st_size;
		keep = 0;
	}
	if ((out = result_create_file(dst, s->mode)) < 0) {
		close(in);
		return out;
	}
	ret = copy_range(in, out, 0, keep ? from : size);
	if (!ret && keep)
		ret = copy_range(in, out, keep, size);
	if (!ret && ftruncate(out, (off_t)size))
		ret = -errno;
	close(in);
	close(out);
	return ret;
}

/* Every file of DIR/sub (meta/) into the snapshot. */
static int snap_dir(const char *dir, const char *sub, struct snap *s)
{
	char from[PATH_MAX];
	struct dirent *e;
	DIR *d;
	int ret = 0;

	snprintf(from, sizeof(from), "%s/%s", dir, sub);
	if (!(d = opendir(from)))
		return -errno;
	s->sub = sub;
	while (!ret && (e = readdir(d))) {
		char path[PATH_MAX * 2];
		uint64_t keep_ns = s->keep_ns;

		if (e->d_name[0] == '.' || !strstr(e->d_name, ".meta") ||
		    strstr(e->d_name, ".tmp."))
			continue;
		snprintf(path, sizeof(path), "%s/%s", from, e->d_name);
		s->keep_ns = 0;
		ret = snap_one(path, e->d_name, s);
		s->keep_ns = keep_ns;
	}
	closedir(d);
	return ret;
}

static int snap_stream(const char *path, const char *name, void *ctx)
{
	return snap_one(path, name, ctx);
}

/* Make dir/snapshots/N, N the first free from 1, as a result directory: its path in buf. */
static int snapshot_dir_make(const char *dir, enum result_mode mode, char *buf, size_t size)
{
	char err[600];
	bool created;
	int n, rc;

	snprintf(buf, size, "%s/snapshots", dir);
	if (mkdir(buf, result_dir_mode(mode)) && errno != EEXIST)
		return -errno;
	for (n = 1; n < INT_MAX; n++) {
		if ((size_t)snprintf(buf, size, "%s/snapshots/%d", dir, n) >= size)
			return -ENAMETOOLONG;
		if (!mkdir(buf, result_dir_mode(mode)))
			break;
		if (errno != EEXIST)
			return -errno;
	}
	/* Empty and ours: result_dir_create() takes it, with meta/, raw/ and log/. */
	if ((rc = result_dir_create(buf, mode, &created, err, sizeof(err)))) {
		log_error("%s", err);
		return rc;
	}
	return 0;
}

int ring_snapshot(const char *dir, uint64_t keep_ns, bool quiet)
{
	enum result_mode mode =
		result_file_mode(dir) & 0040 ? RESULT_MODE_GROUP : RESULT_MODE_PRIVATE;
	char to[PATH_MAX];
	struct snap s = { to, "raw", mono_ns(), keep_ns, result_file_mode_of(mode) };
	char *argv[5];
	int ret, n = 0;

	if ((ret = snapshot_dir_make(dir, mode, to, sizeof(to)))) {
		log_error("cannot make a snapshot of '%s': cannot create '%s': %s", dir, to,
			  strerror(-ret));
		return EXIT_RUNTIME;
	}
	if ((ret = snap_dir(dir, "meta", &s)) ||
	    (s.sub = "raw", ret = each_stream(dir, snap_stream, &s))) {
		log_error("cannot make a snapshot of '%s' in '%s': %s", dir, to, strerror(-ret));
		return EXIT_RUNTIME;
	}
	argv[n++] = "pcollect";
	argv[n++] = "-r";
	argv[n++] = to;
	argv[n++] = "-quiet";
	argv[n] = NULL;
	if ((ret = launcher_run_tool("pfinalize", argv)))
		return ret;
	if (!quiet)
		log_info("snapshot of '%s' in '%s'", dir, to);
	return EXIT_OK;
}
