/* SPDX-License-Identifier: MIT */
/* Reading one raw stream into memory: stacks, samples, module, thread and process records. */
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

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
	r->weight = rec->u.sample.weight;
	return 0;
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

	r = raw_reader_open(s->path, &err);
	if (!r) {
		s->open_err = err;
		return 0;
	}
	s->hdr = *raw_reader_header(r);
	s->has_header = true;
	while (!ret && raw_reader_next(r, &rec) == 1) {
		if (rec.type >= RAW_REC_PYTHON_FIRST && rec.type < RAW_REC_ALLOC_FIRST) {
			ret = take_python(s, &rec);
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
		default:
			s->unknown_records++;
			break;
		}
	}
	s->stats = *raw_reader_stats(r);
	raw_reader_free(r);
	return ret;
}

void stream_release(struct stream *s)
{
	size_t i;

	for (i = 0; i < s->nmods; i++) {
		free((char *)s->mods[i].rm.path);
		free((uint8_t *)s->mods[i].rm.build_id);
		free((struct raw_segment *)s->mods[i].rm.segs);
	}
	for (i = 0; i < s->ntevents; i++)
		free(s->tevents[i].name);
	free(s->mods);
	free(s->tevents);
	free(s->stacks);
	free(s->ips);
	free(s->locs);
	free(s->samples);
	free(s->lost);
	free(s->process.exe);
	free(s->process.command_line);
	pystream_release(&s->py);
	free(s->py_frame_ids);
	free(s->path);
	memset(s, 0, sizeof(*s));
}
