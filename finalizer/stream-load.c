/* SPDX-License-Identifier: MIT */
/* Reading one raw stream into memory: stacks, samples, module, thread and process records. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/sat.h"
#include "finalizer/finalize-private.h"

static char *dup_mem(const void *s, size_t len)
{
	char *d = malloc(len + 1);

	if (d) {
		memcpy(d, s, len);
		d[len] = '\0';
	}
	return d;
}

/* Append arg to buf, single-quoted when the shell would otherwise split or expand it. */
static int quote_append(char **buf, size_t *len, size_t *cap, const char *arg, size_t n)
{
	static const char safe[] = "abcdefghijklmnopqrstuvwxyzABCDEFGHIJKLMNOPQRSTUVWXYZ"
				   "0123456789_-+=./:,@%^";
	bool plain = n > 0;
	size_t i, need = n * 4 + 4;

	for (i = 0; i < n && plain; i++)
		if (!arg[i] || !strchr(safe, arg[i]))
			plain = false;
	if (array_reserve(buf, cap, *len + need + 1, 1))
		return -ENOMEM;
	if (*len)
		(*buf)[(*len)++] = ' ';
	if (plain) {
		memcpy(*buf + *len, arg, n);
		*len += n;
	} else {
		(*buf)[(*len)++] = '\'';
		for (i = 0; i < n; i++) {
			if (arg[i] == '\'') {
				memcpy(*buf + *len, "'\\''", 4);
				*len += 4;
			} else {
				(*buf)[(*len)++] = arg[i];
			}
		}
		(*buf)[(*len)++] = '\'';
	}
	(*buf)[*len] = '\0';
	return 0;
}

static int take_process(struct stream *s, const struct raw_process *p)
{
	struct process_rec *r = &s->process;
	char *cl = NULL;
	size_t len = 0, cap = 0;
	uint32_t i;

	/* The first record describes the image; later ones (if any) repeat it. */
	if (r->seen)
		return 0;
	for (i = 0; i < p->argc; i++)
		if (quote_append(&cl, &len, &cap, p->args[i].s, p->args[i].len))
			goto oom;
	r->exe = dup_mem(p->exe, p->exe_len);
	if (!r->exe)
		goto oom;
	r->seen = true;
	r->pid = p->pid;
	r->ppid = p->ppid;
	r->parent_pid = p->parent_pid;
	r->time_ns = p->time_ns;
	r->origin = p->origin;
	r->generation = p->generation;
	r->command_line = cl ? cl : strdup("");
	return r->command_line ? 0 : -ENOMEM;
oom:
	free(cl);
	return -ENOMEM;
}

static int take_module(struct stream *s, const struct raw_record *rec)
{
	struct module_event *e;

	if (array_reserve(&s->mods, &s->mods_cap, s->nmods + 1, sizeof(*s->mods)))
		return -ENOMEM;
	e = &s->mods[s->nmods];
	memset(e, 0, sizeof(*e));
	e->time_ns = rec->time_ns;
	if (rec->type == RAW_REC_MODULE_LOAD) {
		const struct raw_module *m = &rec->u.module;
		struct raw_segment *segs;

		e->rm = *m;
		e->rm.path = dup_mem(m->path, m->path_len);
		e->rm.build_id = (const uint8_t *)dup_mem(m->build_id, m->build_id_len);
		segs = malloc((m->nsegs ? m->nsegs : 1) * sizeof(*segs));
		if (!e->rm.path || !e->rm.build_id || !segs) {
			free((char *)e->rm.path);
			free((uint8_t *)e->rm.build_id);
			free(segs);
			return -ENOMEM;
		}
		memcpy(segs, m->segs, m->nsegs * sizeof(*segs));
		e->rm.segs = segs;
	} else {
		e->unload = true;
		e->rm.base = rec->u.unload.base;
		e->rm.path = dup_mem(rec->u.unload.path.s, rec->u.unload.path.len);
		e->rm.path_len = rec->u.unload.path.len;
		if (!e->rm.path)
			return -ENOMEM;
	}
	s->nmods++;
	return 0;
}

static int take_thread(struct stream *s, const struct raw_record *rec)
{
	struct thread_event *e;

	if (array_reserve(&s->tevents, &s->tevents_cap, s->ntevents + 1, sizeof(*s->tevents)))
		return -ENOMEM;
	e = &s->tevents[s->ntevents];
	memset(e, 0, sizeof(*e));
	e->type = rec->type;
	e->time_ns = rec->time_ns;
	if (rec->type == RAW_REC_THREAD_END) {
		e->tid = rec->u.thread_end.tid;
		e->cpu_ns = rec->u.thread_end.cpu_ns;
	} else {
		e->tid = rec->u.thread.tid;
		e->name = dup_mem(rec->u.thread.name.s, rec->u.thread.name.len);
		if (!e->name)
			return -ENOMEM;
	}
	s->ntevents++;
	return 0;
}

static int take_stack(struct stream *s, const struct raw_record *rec)
{
	struct stack_rec *st;
	uint32_t n = rec->u.stack.depth;

	if (array_reserve(&s->stacks, &s->stacks_cap, s->nstacks + 1, sizeof(*s->stacks)) ||
	    array_reserve(&s->ips, &s->ips_cap, s->nips + n, sizeof(*s->ips)))
		return -ENOMEM;
	st = &s->stacks[s->nstacks++];
	st->id = rec->u.stack.id;
	st->flags = rec->u.stack.flags;
	st->depth = n;
	st->off = s->nips;
	st->loc = SIZE_MAX;
	st->node = UINT32_MAX;
	st->samples = 0;
	st->weight = 0;
	st->py_off = 0;
	st->npy = 0;
	memcpy(s->ips + s->nips, rec->u.stack.ips, n * sizeof(*s->ips));
	s->nips += n;
	return 0;
}

/* Records 16-31: Python code objects, mixed stacks and notes (finalizer/python/). */
static int take_python(struct stream *s, const struct raw_record *rec)
{
	struct raw_py_stack ps;
	struct stack_rec *st;
	size_t py_off = 0;
	int ret;

	if (array_reserve(&s->ips, &s->ips_cap, s->nips + RAW_MAX_DEPTH, sizeof(*s->ips)))
		return -ENOMEM;
	ret = pystream_take(&s->py, rec->type, rec->payload, rec->payload_len, &ps,
			    s->ips + s->nips, &py_off);
	if (ret == -ENOMEM)
		return ret;
	if (ret != 1)
		return 0; /* kept by pystream, or malformed (counted there) */
	if (array_reserve(&s->stacks, &s->stacks_cap, s->nstacks + 1, sizeof(*s->stacks)))
		return -ENOMEM;
	st = &s->stacks[s->nstacks++];
	st->id = ps.id;
	st->flags = ps.flags;
	st->depth = ps.n;
	st->off = s->nips;
	st->loc = SIZE_MAX;
	st->node = UINT32_MAX;
	st->samples = 0;
	st->weight = 0;
	st->py_off = py_off;
	st->npy = ps.npy;
	s->nips += ps.n;
	return 0;
}

static int take_sample(struct stream *s, const struct raw_record *rec)
{
	struct sample_rec *r;

	if (s->nsamples == s->samples_cap &&
	    array_reserve(&s->samples, &s->samples_cap, s->nsamples + 1, sizeof(*s->samples)))
		return -ENOMEM;
	r = &s->samples[s->nsamples++];
	r->time_ns = rec->time_ns;
	r->stack = rec->u.sample.stack_id;
	r->context = 0;
	r->weight = rec->u.sample.weight;
	/* The reader bounds one weight (RAW_MAX_WEIGHT); the sum saturates, never wraps. */
	s->weight_total = sat_add_u64(s->weight_total, r->weight);
	return 0;
}

static int take_metric(struct stream *s, const struct raw_record *rec)
{
	struct metric_decl *m;

	if (GROW(s->metrics, s->nmetrics + 1, s->metrics_cap))
		return -ENOMEM;
	m = &s->metrics[s->nmetrics];
	m->name = dup_mem(rec->u.metric.name.s, rec->u.metric.name.len);
	if (!m->name)
		return -ENOMEM;
	m->id = rec->u.metric.id;
	m->unit = rec->u.metric.unit;
	m->aggregation = rec->u.metric.aggregation;
	m->kind = rec->u.metric.kind;
	s->nmetrics++;
	return 0;
}

static int take_value(struct stream *s, const struct raw_record *rec)
{
	if (GROW(s->values, s->nvalues + 1, s->values_cap))
		return -ENOMEM;
	s->values[s->nvalues++] = (struct value_rec){
		.time_ns = rec->time_ns,
		.stack = rec->u.value.stack_id,
		.metric = rec->u.value.metric,
		.value = rec->u.value.value,
	};
	return 0;
}

static int take_note(struct stream *s, const struct raw_record *rec)
{
	struct note_rec *n;

	if (GROW(s->notes, s->nnotes + 1, s->notes_cap))
		return -ENOMEM;
	n = &s->notes[s->nnotes];
	n->detail = dup_mem(rec->u.note.detail.s, rec->u.note.detail.len);
	if (!n->detail)
		return -ENOMEM;
	n->tid = rec->u.note.tid;
	n->kind = rec->u.note.kind;
	s->nnotes++;
	return 0;
}

/* The format version a stream's header says (the reader refused it), or 0. */
static unsigned header_version(const char *path)
{
	struct raw_file_header h;
	struct stat st;
	int fd = result_open_file(path, true, 0, &st);
	ssize_t n;

	if (fd < 0)
		return 0;
	n = pread(fd, &h, sizeof(h), 0);
	close(fd);
	return n >= (ssize_t)offsetof(struct raw_file_header, header_size) ? h.version : 0;
}

const char *stream_open_strerror(const struct stream *s, char *buf, size_t size)
{
	switch (-s->open_err) {
	case EINVAL:
		return "not a raw stream";
	case EPROTO:
		return "a raw stream of another byte order (written on another kind of machine)";
	case EPROTONOSUPPORT:
		snprintf(buf, size,
			 "raw stream format version %u, newer than this pfinalize reads "
			 "(%d to %d): finalize it with the pfinalize of the pcollect that wrote it",
			 s->open_version, RAW_VERSION_MIN, RAW_VERSION);
		return buf;
	default:
		return result_strerror(-s->open_err);
	}
}

static int u64_cmp(const void *a, const void *b)
{
	uint64_t x = *(const uint64_t *)a, y = *(const uint64_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * Samples naming a stack whose STACK record was in a damaged chunk keep their time and
 * weight: they move to one placeholder stack (FIN_DAMAGED_STACK_ID), a single frame the tree
 * names FIN_DAMAGED_STACK_NAME. Damage then costs the stacks it touched, not the samples.
 */
/* True when id is not among the sorted ids: the stack it names was lost. */
static bool orphan(const uint64_t *ids, size_t n, const uint64_t *id)
{
	return !n || !bsearch(id, ids, n, sizeof(*ids), u64_cmp);
}

static int keep_orphans(struct stream *s)
{
	static const uint64_t addr = FIN_DAMAGED_STACK_ADDR;
	uint64_t *ids;
	size_t i, n = 0;
	struct raw_record rec;

	if (!s->nsamples && !s->nvalues && !s->nwaits && !s->nmpis)
		return 0;
	ids = malloc((s->nstacks ? s->nstacks : 1) * sizeof(*ids));
	if (!ids)
		return -ENOMEM;
	for (i = 0; i < s->nstacks; i++)
		ids[n++] = s->stacks[i].id;
	qsort(ids, n, sizeof(*ids), u64_cmp);
	for (i = 0; i < s->nsamples; i++) {
		struct sample_rec *r = &s->samples[i];

		if (!orphan(ids, n, &r->stack))
			continue;
		r->stack = FIN_DAMAGED_STACK_ID;
		s->samples_bad_stack++;
	}
	/* The events' records too: a value or a wait keeps its amount without its stack. */
	for (i = 0; i < s->nvalues; i++)
		if (orphan(ids, n, &s->values[i].stack)) {
			s->values[i].stack = FIN_DAMAGED_STACK_ID;
			s->events_bad_stack++;
		}
	for (i = 0; i < s->nwaits; i++)
		if (orphan(ids, n, &s->waits[i].stack)) {
			s->waits[i].stack = FIN_DAMAGED_STACK_ID;
			s->events_bad_stack++;
		}
	for (i = 0; i < s->nmpis; i++)
		if (orphan(ids, n, &s->mpis[i].stack)) {
			s->mpis[i].stack = FIN_DAMAGED_STACK_ID;
			s->events_bad_stack++;
		}
	free(ids);
	if (!s->samples_bad_stack && !s->events_bad_stack)
		return 0;
	memset(&rec, 0, sizeof(rec));
	rec.type = RAW_REC_STACK;
	rec.u.stack.id = FIN_DAMAGED_STACK_ID;
	rec.u.stack.flags = RAW_STACK_FIRST_IS_PC;
	rec.u.stack.depth = 1;
	rec.u.stack.ips = &addr;
	return take_stack(s, &rec);
}

static int take_lost(struct stream *s, const struct raw_record *rec)
{
	size_t i;

	for (i = 0; i < s->nlost; i++)
		if (s->lost[i].reason == rec->u.lost.reason)
			break;
	if (i == s->nlost) {
		if (array_reserve(&s->lost, &s->lost_cap, s->nlost + 1, sizeof(*s->lost)))
			return -ENOMEM;
		memset(&s->lost[i], 0, sizeof(*s->lost));
		s->lost[i].reason = rec->u.lost.reason;
		s->nlost++;
	}
	s->lost[i].count += rec->u.lost.count;
	s->lost[i].weight += rec->u.lost.weight;
	return 0;
}

int stream_load(struct stream *s)
{
	struct raw_reader *r;
	struct raw_record rec;
	int err = 0, ret = 0;

	s->duplicate_of = -1;
	s->name_ok = !result_raw_name_parse(s->path, &s->name);
	r = raw_reader_open(s->path, &err);
	if (!r) {
		s->open_err = err;
		if (err == -EPROTONOSUPPORT)
			s->open_version = header_version(s->path);
		return 0;
	}
	s->hdr = *raw_reader_header(r);
	s->has_header = true;
	while (!ret && raw_reader_next(r, &rec) == 1) {
		if (rec.type >= RAW_REC_PYTHON_FIRST && rec.type < RAW_REC_ALLOC_FIRST) {
			ret = take_python(s, &rec);
			continue;
		}
		if (rec.type >= RAW_REC_ALLOC_FIRST) {
			ret = fin_events_take(s, &rec);
			if (ret == 0)
				s->unknown_records++;
			ret = ret < 0 ? ret : 0;
			continue;
		}
		if (!rec.decoded) {
			s->unknown_records++;
			continue;
		}
		switch (rec.type) {
		case RAW_REC_SAMPLE:
			ret = take_sample(s, &rec);
			break;
		case RAW_REC_STACK:
			ret = take_stack(s, &rec);
			break;
		case RAW_REC_THREAD_START:
		case RAW_REC_THREAD_END:
		case RAW_REC_THREAD_NAME:
			ret = take_thread(s, &rec);
			break;
		case RAW_REC_PROCESS:
			ret = take_process(s, &rec.u.process);
			break;
		case RAW_REC_MODULE_LOAD:
		case RAW_REC_MODULE_UNLOAD:
			ret = take_module(s, &rec);
			break;
		case RAW_REC_LOST:
			ret = take_lost(s, &rec);
			break;
		case RAW_REC_METRIC:
			ret = take_metric(s, &rec);
			break;
		case RAW_REC_VALUE:
			ret = take_value(s, &rec);
			break;
		case RAW_REC_REGION_BEGIN:
		case RAW_REC_REGION_END:
			ret = fin_events_take(s, &rec);
			ret = ret < 0 ? ret : 0;
			break;
		case RAW_REC_NOTE:
			ret = take_note(s, &rec);
			break;
		default:
			s->unknown_records++;
			break;
		}
	}
	s->stats = *raw_reader_stats(r);
	raw_reader_free(r);
	if (s->records_malformed) {
		s->stats.records_malformed += s->records_malformed;
		if (!s->stats.first_problem[0])
			stream_problem(s, false, "%llu malformed analysis records skipped",
				       (unsigned long long)s->records_malformed);
	}
	return ret ? ret : keep_orphans(s);
}

void stream_drop_records(struct stream *s)
{
	size_t i;

	for (i = 0; i < s->nmods; i++) {
		free((char *)s->mods[i].rm.path);
		free((uint8_t *)s->mods[i].rm.build_id);
		free((struct raw_segment *)s->mods[i].rm.segs);
	}
	for (i = 0; i < s->ntevents; i++)
		free(s->tevents[i].name);
	for (i = 0; i < s->nmetrics; i++)
		free(s->metrics[i].name);
	for (i = 0; i < s->nnotes; i++)
		free(s->notes[i].detail);
	for (i = 0; i < s->nobjects; i++)
		free(s->objects[i].name);
	free(s->mods);
	free(s->tevents);
	free(s->stacks);
	free(s->ips);
	free(s->locs);
	free(s->samples);
	free(s->lost);
	free(s->metrics);
	free(s->values);
	free(s->notes);
	free(s->waits);
	free(s->mem_counters);
	free(s->objects);
	free(s->mpis);
	free(s->regions);
	free(s->events);
	free(s->process.exe);
	free(s->process.command_line);
	pystream_release(&s->py);
	regions_release(s);
	free(s->py_frame_ids);
	s->mods = NULL;
	s->tevents = NULL;
	s->stacks = NULL;
	s->ips = NULL;
	s->locs = NULL;
	s->samples = NULL;
	s->lost = NULL;
	s->metrics = NULL;
	s->values = NULL;
	s->notes = NULL;
	s->waits = NULL;
	s->mem_counters = NULL;
	s->objects = NULL;
	s->mpis = NULL;
	s->regions = NULL;
	s->events = NULL;
	s->py_frame_ids = NULL;
	s->nmods = s->mods_cap = s->ntevents = s->tevents_cap = 0;
	s->nstacks = s->stacks_cap = s->nips = s->ips_cap = s->nlocs = s->locs_cap = 0;
	s->nsamples = s->samples_cap = s->nlost = s->lost_cap = 0;
	s->nmetrics = s->metrics_cap = s->nvalues = s->values_cap = 0;
	s->nnotes = s->notes_cap = 0;
	s->nwaits = s->waits_cap = s->nobjects = s->objects_cap = 0;
	s->nmpis = s->mpis_cap = 0;
	s->has_mpi_rank = false;
	s->nregions = s->regions_cap = 0;
	s->nmem_counters = s->mem_counters_cap = 0;
	s->nevents = s->events_cap = 0;
	s->samples_bad_stack = s->events_bad_stack = 0;
	s->weight_total = 0;
	memset(&s->process, 0, sizeof(s->process));
}

void stream_problem(struct stream *s, bool force, const char *fmt, ...)
{
	va_list ap;

	if (s->stats.first_problem[0] && !force)
		return;
	va_start(ap, fmt);
	vsnprintf(s->stats.first_problem, sizeof(s->stats.first_problem), fmt, ap);
	va_end(ap);
}

void stream_release(struct stream *s)
{
	stream_drop_records(s);
	free(s->path);
	memset(s, 0, sizeof(*s));
}
