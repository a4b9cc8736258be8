/* SPDX-License-Identifier: MIT */
/* Reading one raw stream into memory: stacks, samples, module, thread and process records. */
#include <errno.h>
#include <stdarg.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/grow.h"
#include "common/sat.h"
#include "finalizer/finalize-private.h"
#include "finalizer/sorted.h"

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
	r->exe = str_dup_mem(p->exe, p->exe_len);
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

	if (GROW(s->mods, s->nmods + 1, s->mods_cap))
		return -ENOMEM;
	e = &s->mods[s->nmods];
	memset(e, 0, sizeof(*e));
	e->time_ns = rec->time_ns;
	if (rec->type == RAW_REC_MODULE_LOAD) {
		const struct raw_module *m = &rec->u.module;
		struct raw_segment *segs;

		e->rm = *m;
		e->rm.path = str_dup_mem(m->path, m->path_len);
		e->rm.build_id = (const uint8_t *)str_dup_mem(m->build_id, m->build_id_len);
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
		e->rm.path = str_dup_mem(rec->u.unload.path.s, rec->u.unload.path.len);
		e->rm.path_len = rec->u.unload.path.len;
		if (!e->rm.path)
			return -ENOMEM;
	}
	s->nmods++;
	return 0;
}

/* Keep the thread event e, its name a copy of name (NULL: none). */
static int tevent_add(struct stream *s, struct thread_event e, const struct raw_string *name)
{
	if (name && !(e.name = str_dup_mem(name->s, name->len)))
		return -ENOMEM;
	if (GROW(s->tevents, s->ntevents + 1, s->tevents_cap)) {
		free(e.name);
		return -ENOMEM;
	}
	s->tevents[s->ntevents++] = e;
	return 0;
}

static int take_thread(struct stream *s, const struct raw_record *rec)
{
	struct thread_event e = { .type = rec->type, .time_ns = rec->time_ns };

	if (rec->type == RAW_REC_THREAD_END || rec->type == RAW_REC_THREAD_CPU) {
		e.tid = rec->u.thread_end.tid;
		e.cpu_ns = rec->u.thread_end.cpu_ns;
		if (rec->type == RAW_REC_THREAD_CPU) {
			/* only the last look counts, with the samples after it (stream order) */
			s->look = e;
			s->has_look = true;
			s->weight_after_look = 0;
			return 0;
		}
		return tevent_add(s, e, NULL);
	}
	e.tid = rec->u.thread.tid;
	return tevent_add(s, e, &rec->u.thread.name);
}

/* A stack whose depth ips stand at s->ips + s->nips already: its record, and the ips kept. */
static int stack_add(struct stream *s, uint64_t id, uint32_t flags, uint32_t depth, size_t py_off,
		     uint32_t npy)
{
	if (GROW(s->stacks, s->nstacks + 1, s->stacks_cap))
		return -ENOMEM;
	s->stacks[s->nstacks++] = (struct stack_rec){
		.id = id,
		.flags = flags,
		.depth = depth,
		.off = s->nips,
		.loc = SIZE_MAX,
		.node = UINT32_MAX,
		.py_off = py_off,
		.npy = npy,
	};
	s->nips += depth;
	return 0;
}

/* A native stack of n ips, innermost first. */
static int stack_append(struct stream *s, uint64_t id, uint32_t flags, const uint64_t *ips,
			uint32_t n)
{
	if (GROW(s->ips, s->nips + n, s->ips_cap))
		return -ENOMEM;
	memcpy(s->ips + s->nips, ips, n * sizeof(*s->ips));
	return stack_add(s, id, flags, n, 0, 0);
}

static int take_stack(struct stream *s, const struct raw_record *rec)
{
	static const uint64_t agent_addr = FIN_AGENT_STACK_ADDR;

	/* The agent's own work: whatever frames it names, one root of its own. */
	if (rec->u.stack.flags & RAW_STACK_AGENT)
		return stack_append(s, rec->u.stack.id, RAW_STACK_FIRST_IS_PC | RAW_STACK_AGENT,
				    &agent_addr, 1);
	return stack_append(s, rec->u.stack.id, rec->u.stack.flags, rec->u.stack.ips,
			    rec->u.stack.depth);
}

/* Records 16-31: Python code objects, mixed stacks and notes (finalizer/python/). */
/* A thread's name in Python: a thread event, applied with the others (image-map.c). */
static int take_py_thread_name(struct stream *s, const struct raw_record *rec)
{
	struct raw_py_thread_name tn;

	if (raw_py_read_thread_name(rec->payload, rec->payload_len, &tn) < 0) {
		s->records_malformed++;
		return 0;
	}
	return tevent_add(s,
			  (struct thread_event){ .type = RAW_REC_PY_THREAD_NAME,
						 .tid = tn.tid,
						 .time_ns = tn.time_ns },
			  &tn.name);
}

static int take_python(struct stream *s, const struct raw_record *rec)
{
	struct raw_py_stack ps;
	size_t py_off = 0;
	int ret;

	if (rec->type == RAW_REC_PY_THREAD_NAME)
		return take_py_thread_name(s, rec);
	if (GROW(s->ips, s->nips + RAW_MAX_DEPTH, s->ips_cap))
		return -ENOMEM;
	ret = pystream_take(&s->py, rec->type, rec->payload, rec->payload_len, &ps,
			    s->ips + s->nips, &py_off);
	if (ret == -ENOMEM)
		return ret;
	if (ret != 1)
		return 0; /* kept by pystream, or malformed (counted there) */
	return stack_add(s, ps.id, ps.flags, ps.n, py_off, ps.npy);
}

static int take_sample(struct stream *s, const struct raw_record *rec)
{
	if (s->nsamples == s->samples_cap && GROW(s->samples, s->nsamples + 1, s->samples_cap))
		return -ENOMEM;
	s->samples[s->nsamples++] = (struct sample_rec){
		.time_ns = rec->time_ns,
		.stack = rec->u.sample.stack_id,
		.weight = rec->u.sample.weight,
	};
	/* The reader bounds one weight (RAW_MAX_WEIGHT); the sum saturates, never wraps. */
	s->weight_total = sat_add_u64(s->weight_total, rec->u.sample.weight);
	s->weight_after_look = sat_add_u64(s->weight_after_look, rec->u.sample.weight);
	return 0;
}

static int take_metric(struct stream *s, const struct raw_record *rec)
{
	struct metric_decl m = {
		.id = rec->u.metric.id,
		.name = str_dup_mem(rec->u.metric.name.s, rec->u.metric.name.len),
		.unit = rec->u.metric.unit,
		.aggregation = rec->u.metric.aggregation,
		.kind = rec->u.metric.kind,
	};

	if (!m.name || GROW(s->metrics, s->nmetrics + 1, s->metrics_cap)) {
		free(m.name);
		return -ENOMEM;
	}
	s->metrics[s->nmetrics++] = m;
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
	struct note_rec n = {
		.tid = rec->u.note.tid,
		.kind = rec->u.note.kind,
		.detail = str_dup_mem(rec->u.note.detail.s, rec->u.note.detail.len),
	};

	if (!n.detail || GROW(s->notes, s->nnotes + 1, s->notes_cap)) {
		free(n.detail);
		return -ENOMEM;
	}
	s->notes[s->nnotes++] = n;
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

/*
 * The records of v[0..n) (size bytes each, the stack id at byte stack_off) that name a stack
 * not among the sorted ids[0..nids) name FIN_DAMAGED_STACK_ID instead. Returns how many.
 */
static uint64_t orphans_adopt(const uint64_t *ids, size_t nids, void *v, size_t n, size_t size,
			      size_t stack_off)
{
	uint64_t adopted = 0, id;
	size_t i;

	for (i = 0; i < n; i++) {
		char *p = (char *)v + i * size + stack_off;

		memcpy(&id, p, sizeof(id));
		if (sorted_index(ids, nids, id) >= 0)
			continue;
		id = FIN_DAMAGED_STACK_ID;
		memcpy(p, &id, sizeof(id));
		adopted++;
	}
	return adopted;
}

/* v[0..n) of struct type T with its stack id in member stack, for orphans_adopt(). */
#define RECORDS(v, n, T) (v), (n), sizeof(T), offsetof(T, stack)

/*
 * Samples naming a stack whose STACK record was in a damaged chunk keep their time and
 * weight: they move to one placeholder stack (FIN_DAMAGED_STACK_ID), a single frame the tree
 * names FIN_DAMAGED_STACK_NAME. Damage then costs the stacks it touched, not the samples.
 */
static int keep_orphans(struct stream *s)
{
	static const uint64_t addr = FIN_DAMAGED_STACK_ADDR;
	uint64_t *ids;
	size_t i, n = 0;

	if (!s->nsamples && !s->nvalues && !s->nwaits && !s->nmpis)
		return 0;
	ids = malloc((s->nstacks ? s->nstacks : 1) * sizeof(*ids));
	if (!ids)
		return -ENOMEM;
	for (i = 0; i < s->nstacks; i++)
		ids[n++] = s->stacks[i].id;
	qsort(ids, n, sizeof(*ids), sorted_u64_cmp);
	s->samples_bad_stack +=
		orphans_adopt(ids, n, RECORDS(s->samples, s->nsamples, struct sample_rec));
	/* The events' records too: a value or a wait keeps its amount without its stack. */
	s->events_bad_stack +=
		orphans_adopt(ids, n, RECORDS(s->values, s->nvalues, struct value_rec)) +
		orphans_adopt(ids, n, RECORDS(s->waits, s->nwaits, struct wait_rec)) +
		orphans_adopt(ids, n, RECORDS(s->mpis, s->nmpis, struct mpi_rec));
	free(ids);
	if (!s->samples_bad_stack && !s->events_bad_stack)
		return 0;
	return stack_append(s, FIN_DAMAGED_STACK_ID, RAW_STACK_FIRST_IS_PC, &addr, 1);
}

static int take_lost(struct stream *s, const struct raw_record *rec)
{
	size_t i;

	for (i = 0; i < s->nlost; i++)
		if (s->lost[i].reason == rec->u.lost.reason)
			break;
	if (i == s->nlost) {
		if (GROW(s->lost, s->nlost + 1, s->lost_cap))
			return -ENOMEM;
		s->lost[s->nlost++] = (struct lost_rec){ .reason = rec->u.lost.reason };
	}
	s->lost[i].count += rec->u.lost.count;
	s->lost[i].weight += rec->u.lost.weight;
	return 0;
}

/* Regions the program named, and the analyses' records (32-127): events.c's decoders. */
static int take_event(struct stream *s, const struct raw_record *rec)
{
	int ret;

	if (rec->type == RAW_REC_ORIGIN)
		return origin_take(s, rec);
	ret = fin_events_take(s, rec);

	if (ret == 0 && rec->type >= RAW_REC_ALLOC_FIRST)
		s->unknown_records++; /* no decoder knows the type */
	return ret < 0 ? ret : 0;
}

static int take_process_rec(struct stream *s, const struct raw_record *rec)
{
	return take_process(s, &rec->u.process);
}

/* The core records (1-15) by type. */
static int (*const takers[RAW_REC_PYTHON_FIRST])(struct stream *s, const struct raw_record *rec) = {
	[RAW_REC_SAMPLE] = take_sample,       [RAW_REC_STACK] = take_stack,
	[RAW_REC_THREAD_START] = take_thread, [RAW_REC_THREAD_END] = take_thread,
	[RAW_REC_THREAD_NAME] = take_thread,  [RAW_REC_PROCESS] = take_process_rec,
	[RAW_REC_MODULE_LOAD] = take_module,  [RAW_REC_MODULE_UNLOAD] = take_module,
	[RAW_REC_LOST] = take_lost,           [RAW_REC_METRIC] = take_metric,
	[RAW_REC_VALUE] = take_value,         [RAW_REC_NOTE] = take_note,
	[RAW_REC_REGION_BEGIN] = take_event,  [RAW_REC_REGION_END] = take_event,
	[RAW_REC_THREAD_CPU] = take_thread,
};

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
		if (rec.type == RAW_REC_SAMPLE) /* most records: no call through the table */
			ret = take_sample(s, &rec);
		else if (rec.type >= RAW_REC_PYTHON_FIRST && rec.type < RAW_REC_ALLOC_FIRST)
			ret = take_python(s, &rec);
		else if (rec.type >= RAW_REC_ALLOC_FIRST)
			ret = take_event(s, &rec);
		else if (rec.decoded && takers[rec.type])
			ret = takers[rec.type](s, &rec);
		else
			s->unknown_records++;
	}
	s->stats = *raw_reader_stats(r);
	raw_reader_free(r);
	if (!ret && s->has_look) {
		/* The samples after the last look count at their weight (ns of thread CPU time). */
		if (s->hdr.sample_clock == RAW_SAMPLE_THREAD_CPU)
			s->look.cpu_ns =
				sat_add_u64(s->look.cpu_ns,
					    sat_mul_u64(s->weight_after_look, s->hdr.interval_ns));
		if (GROW(s->tevents, s->ntevents + 1, s->tevents_cap))
			ret = -ENOMEM;
		else
			s->tevents[s->ntevents++] = s->look;
	}
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
	free(s->works);
	s->works = NULL;
	s->nworks = s->works_cap = 0;
	s->has_origin = false;
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
