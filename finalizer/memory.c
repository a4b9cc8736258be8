/* SPDX-License-Identifier: MIT */
/* memory-consumption in the finalizer: the aggregate files and counters records as events. */
#define LOG_DOMAIN "memory"
#include <errno.h>
#include <fcntl.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/cmp.h"
#include "common/grow.h"
#include "common/log.h"
#include "common/result-dir.h"
#include "finalizer/finalize-private.h"
#include "finalizer/metrics.h"

/*
 * The agent aggregates allocations in the process (common/raw-memory.h): one entry per
 * (thread, stack) in raw/<pid>.pmem, naming its stack by the id of a STACK record of that
 * thread's stream. Here each entry becomes, in its thread's stream, untimed events of the
 * six allocation metrics, which the pipeline then locates and aggregates like any other. The
 * streams' counters records (live heap and RSS over time) go to the counters table, with
 * one more point of the live heap at each process's peak.
 */

#define COUNTER_LIVE "Live Heap"
#define COUNTER_RSS  "RSS"

static int entry_cmp(const void *a, const void *b)
{
	const struct raw_mem_entry *x = a, *y = b;

	return CMP(x->tid, y->tid);
}

/* Read one file into m. A file that is not one is told and left out (returns 0). */
static int load_one(struct mem_file *m, const char *path)
{
	struct stat st;
	uint8_t *data = NULL;
	uint64_t n, i, k = 0;
	ssize_t got = 0;
	int fd, ret;

	m->image = -1;
	if (!(m->path = strdup(path)))
		return -ENOMEM;
	fd = result_open_file(path, true, 1ull << 34, &st);
	if (fd < 0) {
		log_warn("cannot open memory file '%s': %s", path, result_strerror(-fd));
		return 0;
	}
	if (!(data = malloc((size_t)st.st_size + 1))) {
		close(fd);
		return -ENOMEM;
	}
	while (got < st.st_size) {
		ssize_t r = read(fd, data + got, (size_t)(st.st_size - got));

		if (r <= 0)
			break;
		got += r;
	}
	close(fd);
	ret = raw_mem_check(data, (uint64_t)got);
	if (ret) {
		if (ret != -ENODATA)
			log_warn("'%s' is not a memory file of this version (%s): left out", path,
				 strerror(-ret));
		free(data);
		return 0;
	}
	memcpy(&m->hdr, data, sizeof(m->hdr));
	n = ((uint64_t)got - m->hdr.header_size) / m->hdr.entry_size;
	if (m->hdr.nentries < n)
		n = m->hdr.nentries;
	m->entries = malloc((n ? n : 1) * sizeof(*m->entries));
	if (!m->entries) {
		free(data);
		return -ENOMEM;
	}
	for (i = 0; i < n; i++) {
		struct raw_mem_entry e;

		memcpy(&e, data + m->hdr.header_size + i * m->hdr.entry_size, sizeof(e));
		/* a killed process may leave one half made: no tid yet, or a free half counted */
		if (!e.tid)
			continue;
		if (e.freed_bytes > e.alloc_bytes)
			e.freed_bytes = e.alloc_bytes;
		if (e.frees > e.allocs)
			e.frees = e.allocs;
		m->entries[k++] = e;
	}
	m->nentries = k;
	qsort(m->entries, k, sizeof(*m->entries), entry_cmp);
	free(data);
	log_debug("'%s': pid %d, %zu entries, %s", path, m->hdr.pid, m->nentries,
		  m->hdr.flags & RAW_MEM_ENDED ? "ended" : "killed or still running");
	return 0;
}

int fin_load_memory(struct fin *f)
{
	char dir[4200], path[4400];
	char **names;
	long n, i;
	int ret = 0;

	result_path(dir, sizeof(dir), f->dir, RESULT_PATH_RAW_DIR, 0, 0, NULL, NULL);
	n = fin_list_dir(dir, ".pmem", &names);
	if (n <= 0)
		return n == -ENOMEM ? -ENOMEM : 0;
	f->mems = calloc((size_t)n, sizeof(*f->mems));
	if (!f->mems) {
		fin_free_list(names, n);
		return -ENOMEM;
	}
	for (i = 0; i < n && !ret; i++) {
		snprintf(path, sizeof(path), "%s/%s", dir, names[i]);
		ret = load_one(&f->mems[f->nmems], path);
		if (f->mems[f->nmems].path)
			f->nmems++;
	}
	fin_free_list(names, n);
	return ret;
}

void fin_memory_release(struct fin *f)
{
	size_t i;

	for (i = 0; i < f->nmems; i++)
		FREE_ALL(f->mems[i].path, f->mems[i].entries);
	FREE_ALL(f->mems, f->counters);
}

int mem_take(struct stream *s, const struct raw_record *rec)
{
	struct raw_mem_counters c;

	if (rec->type != RAW_REC_MEM_COUNTERS) {
		s->unknown_records++; /* a later record of the range */
		return 0;
	}
	if (raw_mem_counters_decode(rec->payload, rec->payload_len, &c)) {
		s->records_malformed++;
		return 0;
	}
	if (GROW(s->mem_counters, s->nmem_counters + 1, s->mem_counters_cap))
		return -ENOMEM;
	s->mem_counters[s->nmem_counters++] = (struct mem_counters_rec){ c.time_ns, c.live, c.rss };
	return 0;
}

/* The memory file of image im, or NULL. */
static struct mem_file *file_of(struct fin *f, const struct image *im, uint32_t image)
{
	size_t i;

	for (i = 0; i < f->nmems; i++) {
		struct mem_file *m = &f->mems[i];

		if (m->hdr.pid == im->pid && m->hdr.generation == im->generation) {
			m->image = image;
			return m;
		}
	}
	return NULL;
}

static int counter_add(struct fin *f, int64_t t, uint32_t image, const char *name, uint64_t v)
{
	if (GROW(f->counters, f->ncounters + 1, f->counters_cap))
		return -ENOMEM;
	f->counters[f->ncounters++] =
		(struct counter_row){ t, image, name, (int64_t)(v > INT64_MAX ? INT64_MAX : v) };
	return 0;
}

/* The metric an image declared under its raw id; the registry's when the process stream was
   lost. */
static int64_t metric_of(struct fin *f, const struct image *im, enum metric_id id)
{
	int64_t m = fin_image_metric(im, (uint64_t)metric_def(id)->raw_id);

	return m >= 0 ? m : fin_metrics_standard(f, id);
}

/* The latest time of s (stream time): where its stacks are looked up. */
static int64_t stream_end(const struct stream *s)
{
	int64_t t = 0;
	size_t i;

	for (i = 0; i < s->ntevents; i++)
		if (s->tevents[i].time_ns > t)
			t = s->tevents[i].time_ns;
	for (i = 0; i < s->nmem_counters; i++)
		if (s->mem_counters[i].time_ns > t)
			t = s->mem_counters[i].time_ns;
	return t;
}

int mems_to_events(struct fin *f, struct stream *s)
{
	/* In the order of v[] below. */
	static const enum metric_id def[6] = { METRIC_MEM_ALLOCATED, METRIC_MEM_ALLOCS,
					       METRIC_MEM_FREED,     METRIC_MEM_LEAKED,
					       METRIC_MEM_PEAK,      METRIC_MEM_TEMPORARY };
	const struct image *im = &f->images[s->image];
	struct mem_file *m;
	int64_t metric[6], t;
	size_t i, k;
	int ret;

	if (s->hdr.kind == RAW_STREAM_PROCESS || s->duplicate_of >= 0)
		return 0;
	for (i = 0; i < s->nmem_counters; i++) {
		const struct mem_counters_rec *c = &s->mem_counters[i];

		t = c->time_ns + s->offset_ns;
		if ((ret = counter_add(f, t, s->image, COUNTER_LIVE, c->live)) ||
		    (c->rss && (ret = counter_add(f, t, s->image, COUNTER_RSS, c->rss))))
			return ret;
	}
	m = file_of(f, im, s->image);
	if (!m)
		return 0;
	for (k = 0; k < 6; k++) {
		metric[k] = metric_of(f, im, def[k]);
		if (metric[k] < 0)
			return (int)metric[k];
	}
	t = stream_end(s);
	for (i = 0; i < m->nentries; i++) {
		const struct raw_mem_entry *e = &m->entries[i];
		uint64_t live = e->alloc_bytes - e->freed_bytes;
		struct {
			int64_t value;
			uint64_t count;
		} v[6] = {
			{ (int64_t)e->alloc_bytes, e->allocs },
			{ (int64_t)e->allocs, e->allocs },
			{ (int64_t)e->freed_bytes, e->frees },
			{ (int64_t)live, e->allocs - e->frees },
			{ (int64_t)raw_mem_entry_at_peak(e, m->hdr.epoch), 1 },
			{ (int64_t)e->temporaries, e->temporaries },
		};

		if (e->tid != (uint32_t)s->hdr.tid)
			continue;
		for (k = 0; k < 6; k++) {
			if (v[k].value <= 0 || metric[k] == UINT32_MAX)
				continue;
			if (GROW(s->events, s->nevents + 1, s->events_cap))
				return -ENOMEM;
			s->events[s->nevents++] = (struct event_rec){
				.time_ns = t,
				.stack = e->stack,
				.metric = (uint32_t)metric[k],
				.value = v[k].value,
				.count = v[k].count,
			};
		}
	}
	return 0;
}

static int counter_cmp(const void *a, const void *b)
{
	const struct counter_row *x = a, *y = b;

	int c = CMP_THEN(CMP(x->time_ns, y->time_ns), CMP(x->image, y->image));

	return c ? c : strcmp(x->name, y->name);
}

int fin_memory_done(struct fin *f)
{
	size_t i, j;
	int ret;

	for (i = 0; i < f->nmems; i++) {
		const struct mem_file *m = &f->mems[i];
		size_t n = 0;

		if (m->image < 0) {
			log_warn("'%s': no stream of process %d was read: its allocations are left "
				 "out",
				 m->path, m->hdr.pid);
			continue;
		}
		/* an entry whose thread has no stream: its bytes cannot be placed */
		for (j = 0; j < m->nentries; j++) {
			size_t k;

			for (k = 0; k < f->nstreams; k++) {
				const struct stream *s = &f->streams[k];

				if (s->has_header && s->image == (uint32_t)m->image &&
				    s->hdr.tid == (int32_t)m->entries[j].tid &&
				    s->hdr.kind != RAW_STREAM_PROCESS)
					break;
			}
			n += k == f->nstreams;
		}
		if (n)
			log_warn("'%s': %zu entries of threads without a stream: left out", m->path,
				 n);
		/* the live heap at its peak, a point the periodic ones may have missed */
		if (m->hdr.peak_ns &&
		    (ret = counter_add(f, (int64_t)m->hdr.peak_ns - f->start_mono_ns,
				       (uint32_t)m->image, COUNTER_LIVE, m->hdr.peak_bytes)))
			return ret;
	}
	if (f->ncounters)
		qsort(f->counters, f->ncounters, sizeof(*f->counters), counter_cmp);
	/* one value per (time, process, name): the later of two equal keys is moved by 1 ns */
	for (i = 1; i < f->ncounters; i++)
		if (!counter_cmp(&f->counters[i - 1], &f->counters[i]))
			f->counters[i].time_ns = f->counters[i - 1].time_ns + 1;
	return 0;
}
