/* SPDX-License-Identifier: MIT */
/* The summary pfinalize prints at the end: what was read, what resolved, what would help. */
#include <errno.h>
#include <inttypes.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "common/log.h"
#include "common/sat.h"
#include "finalizer/finalize-private.h"

static double pct(uint64_t a, uint64_t b)
{
	return b ? 100.0 * (double)a / (double)b : 0.0;
}

/* A hint for a module without debug information. */
static const char *debug_hint(const struct module *m)
{
	if (!m->resolved_path)
		return "pass -search-dir with a copy of it";
	if (!strncmp(m->resolved_path, "/usr/", 5) || !strncmp(m->resolved_path, "/lib", 4))
		return "install its debug package (Debian: the -dbgsym or -dbg package of the "
		       "package 'dpkg -S' names) or point -search-dir at an unstripped copy";
	return "rebuild it with -g, or pass -search-dir with an unstripped copy";
}

/*
 * Why threads' samples cover less CPU time than they used. Damage is named as damage, never
 * blamed on the clock; nor is the data limit. short_threads: threads of a few intervals each,
 * whose last partial interval (never sampled) is a large part of their time.
 */
static const char *undersampled_why(uint64_t damaged, bool limit_hit, bool task_clock,
				    bool short_threads)
{
	if (damaged)
		return "damaged raw data (see 'damaged:' below): the samples in the damaged "
		       "parts are missing";
	if (limit_hit)
		return "sampling stopped when the raw data reached -data-limit";
	if (short_threads)
		return "the CPU time of a thread after its last sample (up to one sampling "
		       "interval) is never sampled, which is much of a short thread's time: "
		       "collect with a smaller -knob sampling-interval";
	if (task_clock)
		return "the task-clock event stopped early (see the agent log in DIR/log)";
	return "timer signals came late: collect with -knob sampling-clock=task-clock "
	       "(LIMITS in docs/pcollect.md)";
}

/*
 * The CPU time the threads of image im used: what its threads measured at their end, or
 * what the process measured at its end (RAW_NOTE_PROCESS_CPU) when more: threads made after
 * sampling stopped (-data-limit, -duration) have no stream, and count there. *unstreamed:
 * the part no thread of a stream accounts for.
 */
static uint64_t image_used(const struct fin *f, size_t im, uint64_t *unstreamed)
{
	uint64_t threads = 0, process = 0;
	size_t i, k;

	for (i = 0; i < f->nthreads; i++)
		if (f->threads[i].image == im)
			threads = sat_add_u64(threads, f->threads[i].cpu_ns);
	for (i = 0; i < f->nstreams; i++) {
		const struct stream *s = &f->streams[i];

		if (!s->has_header || s->image != im)
			continue;
		/* The last is the whole (an image whose exec failed noted before it too). */
		for (k = 0; k < s->nnotes; k++)
			if (s->notes[k].kind == RAW_NOTE_PROCESS_CPU && s->notes[k].detail) {
				uint64_t v = strtoull(s->notes[k].detail, NULL, 10);

				process = v > process ? v : process;
			}
	}
	*unstreamed = process > threads ? process - threads : 0;
	return process > threads ? process : threads;
}

/*
 * The thread an exec continued: an exec keeps the process and its calling thread, so the
 * main thread of an image that came by exec (generation g) is the one of the image before it
 * (g - 1) in the same process, and so on back to the first. Its index, or i itself.
 */
static size_t thread_first(const struct fin *f, size_t i)
{
	for (;;) {
		const struct thread *t = &f->threads[i];
		const struct image *im = &f->images[t->image];
		size_t j;

		if (!im->generation || t->tid != im->pid)
			return i;
		for (j = 0; j < f->nthreads; j++) {
			const struct image *pj = &f->images[f->threads[j].image];

			if (f->threads[j].tid == t->tid && pj->pid == im->pid &&
			    pj->generation + 1 == im->generation)
				break;
		}
		if (j == f->nthreads)
			return i;
		i = j;
	}
}

/*
 * The CPU time the threads measured at their end against what their samples account for.
 * A thread whose process a signal ended measured nothing at its end: the agent's last look
 * at its CPU time (THREAD_CPU) and its samples after stand for it, and a line says how many.
 * Samples the agent counted as lost (the summary of preport lists them by reason) are
 * accounted for: a thread is named only for time that no sample, taken or lost, covers.
 */
static void print_coverage(FILE *o, const struct fin *f)
{
	const char *clock = meta_get(&f->meta, "sampling_clock");
	const char *hit = meta_get(&f->meta, "data_limit_hit");
	const char *ring = meta_get(&f->meta, "ring_buffer_ns");
	bool task_clock = clock && !strcmp(clock, "task-clock");
	bool limit_hit = hit && !strcmp(hit, "1");
	uint64_t used = 0, sampled = 0, unstreamed = 0, *covered, *damaged, *cpu;
	uint64_t rest_used = 0, rest_covered = 0, rest_damaged = 0;
	size_t i, k, shown = 0, rest = 0, looked = 0;

	for (i = 0; i < f->nthreads; i++) {
		if (f->threads[i].cpu_ns)
			sampled = sat_add_u64(sampled, f->threads[i].time_ns);
		looked += f->threads[i].cpu_looked;
	}
	for (i = 0; i < f->nimages; i++) {
		uint64_t un;

		used = sat_add_u64(used, image_used(f, i, &un));
		unstreamed = sat_add_u64(unstreamed, un);
	}
	if (!used)
		return;
	fprintf(o, "  cpu time:  %.3f s sampled of %.3f s the threads used (%.1f%%)\n",
		(double)sampled / 1e9, (double)used / 1e9, pct(sampled, used));
	/* The threads measured the whole run: the samples of its last seconds are all kept. */
	if (ring && strtoull(ring, NULL, 10)) {
		fprintf(o,
			"  cpu time:  -ring-buffer kept the last %.3g s of the run (and at most a "
			"chunk more per thread)\n",
			(double)strtoull(ring, NULL, 10) / 1e9);
		return;
	}
	if (looked)
		fprintf(o,
			"  cpu time:  %zu threads whose process a signal ended: measured up to the "
			"agent's last look (every %.1f s while sampled), their samples after it\n",
			looked, (double)RAW_THREAD_CPU_EVERY_NS / 1e9);
	if (unstreamed >= used / 10 && unstreamed >= 50000000)
		fprintf(o, "  undersampled: %.3f s of CPU time in threads never sampled; %s\n",
			(double)unstreamed / 1e9,
			limit_hit ? "they started after the raw data reached -data-limit"
				  : "they started after sampling stopped");
	covered = calloc(f->nthreads, sizeof(*covered));
	damaged = calloc(f->nthreads, sizeof(*damaged));
	cpu = calloc(f->nthreads, sizeof(*cpu));
	if (!covered || !damaged || !cpu) {
		FREE_ALL(covered, damaged, cpu);
		return;
	}
	for (i = 0; i < f->nthreads; i++)
		covered[i] = f->threads[i].time_ns;
	for (i = 0; i < f->nstreams; i++) {
		const struct stream *s = &f->streams[i];

		if (!s->has_header || s->thread >= f->nthreads)
			continue;
		for (k = 0; k < s->nlost; k++)
			covered[s->thread] =
				sat_add_u64(covered[s->thread],
					    sat_mul_u64(s->lost[k].weight, s->hdr.interval_ns));
		if (s->hdr.kind != RAW_STREAM_PROCESS)
			damaged[s->thread] += s->stats.bytes_skipped + s->samples_bad_stack +
					      (s->header_distrusted ? 1 : 0);
	}
	/* A thread that execs is one thread: its images' figures summed on the first one's. */
	for (i = 0; i < f->nthreads; i++) {
		size_t first = thread_first(f, i);

		cpu[i] = f->threads[i].cpu_ns;
		if (first == i)
			continue;
		cpu[first] = sat_add_u64(cpu[first], cpu[i]);
		covered[first] = sat_add_u64(covered[first], covered[i]);
		damaged[first] += damaged[i];
		cpu[i] = 0;
	}
	/* Name the threads short by at least 10% and 50 ms: their profile is short. */
	for (i = 0; i < f->nthreads; i++) {
		const struct thread *t = &f->threads[i];

		if (!cpu[i] || covered[i] >= cpu[i])
			continue;
		if (shown == 5 || cpu[i] - covered[i] < cpu[i] / 10 ||
		    cpu[i] - covered[i] < 50000000) {
			/* Each short by little, many threads may be short by much together. */
			rest++;
			rest_used = sat_add_u64(rest_used, cpu[i]);
			rest_covered = sat_add_u64(rest_covered, covered[i]);
			rest_damaged += damaged[i];
			continue;
		}
		fprintf(o, "  undersampled: thread %d '%s': %.3f s sampled of %.3f s used; %s\n",
			t->tid, t->name ? t->name : "", (double)covered[i] / 1e9,
			(double)cpu[i] / 1e9,
			undersampled_why(damaged[i], limit_hit, task_clock, false));
		shown++;
	}
	if (rest >= 2 && rest_used - rest_covered >= used / 10 &&
	    rest_used - rest_covered >= 50000000) {
		double each_ms = (double)rest_used / (double)rest / 1e6;

		fprintf(o,
			"  undersampled: %zu threads of %.1f ms of CPU time each on average: "
			"%.3f s of their %.3f s covered by samples (%.1f%%); %s\n",
			rest, each_ms, (double)rest_covered / 1e9, (double)rest_used / 1e9,
			pct(rest_covered, rest_used),
			undersampled_why(rest_damaged, limit_hit, task_clock,
					 each_ms * 1e6 < 10.0 * (double)f->interval_ns));
	}
	FREE_ALL(covered, damaged, cpu);
}

/* Samples the collector did not take because it had to stop: the limit or the disk. */
static void print_stopped(FILE *o, const struct fin *f)
{
	static const struct {
		uint32_t reason;
		const char *why;
	} stops[] = {
		{ RAW_LOST_DATA_LIMIT, "sampling stopped when the raw data reached -data-limit "
				       "(raise it; 0: no limit)" },
		{ RAW_LOST_DISK_FULL, "the file system of the result was full: the streams could "
				      "not grow (make room, or collect elsewhere)" },
		{ RAW_LOST_NO_SIGNAL, "the program claimed every real-time signal, the last "
				      "one free for sampling among them (docs/pcollect.md, "
				      "Sampling signal)" },
		{ RAW_LOST_ADDRESS_SPACE, "the program left no address space for a stream's next "
					  "window (RLIMIT_AS, ulimit -v): its thread's sampling "
					  "stopped (docs/pcollect.md, Address space)" },
	};
	size_t i, k, j;

	for (j = 0; j < sizeof(stops) / sizeof(stops[0]); j++) {
		uint64_t count = 0, ns = 0;

		for (i = 0; i < f->nstreams; i++)
			for (k = 0; f->streams[i].has_header && k < f->streams[i].nlost; k++)
				if (f->streams[i].lost[k].reason == stops[j].reason) {
					count = sat_add_u64(count, f->streams[i].lost[k].count);
					ns = sat_add_u64(
						ns, sat_mul_u64(f->streams[i].lost[k].weight,
								f->streams[i].hdr.interval_ns));
				}
		if (count)
			fprintf(o,
				"  lost:      %" PRIu64 " samples (%.3f s of CPU time), %s: %s\n",
				count, (double)ns / 1e9, raw_lost_reason_name(stops[j].reason),
				stops[j].why);
	}
}

/* Stacks cut at the depth limit: how many samples, and the knob that keeps them whole. */
static void print_truncated(FILE *o, const struct fin *f)
{
	const char *depth = meta_get(&f->meta, "stack_depth");
	char at[64] = "at the depth limit";

	if (!f->samples_truncated)
		return;
	if (depth)
		snprintf(at, sizeof(at), "at %d frames (stack-depth)", atoi(depth));
	fprintf(o,
		"  truncated: %" PRIu64 " samples (%.1f%%) have stacks cut %s: their "
		"outermost frames are missing, shown under %s; ",
		f->samples_truncated, pct(f->samples_truncated, f->samples_total), at,
		FIN_TRUNCATED_STACK_NAME);
	if (depth && atoi(depth) >= RAW_MAX_DEPTH)
		fprintf(o, "the collector keeps no more than %d frames\n", RAW_MAX_DEPTH);
	else
		fprintf(o, "collect with -knob stack-depth=N (up to %d) for whole stacks\n",
			RAW_MAX_DEPTH);
}

/*
 * Waits: how many, how many were shorter than the threshold (summed per call site, without
 * their own stacks), and per process the threads' time that neither their CPU time nor
 * their measured waits explain (docs/pfinalize.md): blocking the collector cannot see.
 */
static void print_waits(FILE *o, const struct fin *f)
{
	const char *threshold = meta_get(&f->meta, "wait_threshold_ns");
	size_t i, k, shown = 0;

	if (!f->waits_total && !threshold)
		return;
	fprintf(o,
		"  waits:     %" PRIu64 " (%.3f s), %" PRIu64 " shorter than the threshold%s%s"
		"%s, counted per call site\n",
		f->waits_total, (double)f->wait_ns / 1e9, f->waits_short, threshold ? " of " : "",
		threshold ? threshold : "", threshold ? " ns" : "");
	/* -ring-buffer: the waits of the last seconds against the threads' whole lives: no. */
	if (meta_get(&f->meta, "ring_buffer_ns"))
		return;
	for (i = 0; i < f->nimages && shown < 8; i++) {
		const struct image *im = &f->images[i];
		const char *exe = im->process.exe ? im->process.exe : "?";
		uint64_t life = 0, rest = 0;

		for (k = 0; k < f->nthreads; k++) {
			const struct thread *t = &f->threads[k];
			uint64_t cpu = t->cpu_ns ? t->cpu_ns : t->time_ns, span;
			/* Spinning in an OpenMP wait is in both CPU and wait: counted once. */
			uint64_t sleeping = t->wait_ns > t->spin_ns ? t->wait_ns - t->spin_ns : 0;

			if (t->image != i || !t->has_start || !t->has_end ||
			    t->end_ns < t->start_ns)
				continue;
			span = (uint64_t)(t->end_ns - t->start_ns);
			life = sat_add_u64(life, span);
			if (span > sat_add_u64(cpu, sleeping))
				rest = sat_add_u64(rest, span - cpu - sleeping);
		}
		if (!life)
			continue;
		if (strrchr(exe, '/'))
			exe = strrchr(exe, '/') + 1;
		fprintf(o,
			"  unattributed: pid %d '%s': %.3f s of its threads' %.3f s (%.1f%%), "
			"neither CPU time nor measured waits\n",
			im->pid, exe, (double)rest / 1e9, (double)life / 1e9, pct(rest, life));
		shown++;
	}
}

/* What the agent noted about threads (process streams), one line per kind of note. */
static void print_notes(FILE *o, const struct fin *f)
{
	static const char *const what[RAW_NOTE_KIND_MAX + 1] = {
		[RAW_NOTE_TIMER_FALLBACK] = "sampled with the CPU-time timer",
		[RAW_NOTE_NO_STREAM] = "not sampled",
		[RAW_NOTE_STREAM_STOPPED] = "sampled only in part",
	};
	size_t i, k, j, l, n, lines = 0;

	for (i = 0; i < f->nstreams; i++) {
		for (k = 0; k < f->streams[i].nnotes; k++) {
			const struct note_rec *nk = &f->streams[i].notes[k];
			bool seen = false;

			if (nk->kind == RAW_NOTE_PROCESS_CPU)
				continue; /* a figure, not a note: print_coverage() */
			/* Once per (kind, detail): the first time it appears. */
			for (j = 0; j <= i && !seen; j++)
				for (l = 0; l < (j < i ? f->streams[j].nnotes : k) && !seen; l++)
					seen = f->streams[j].notes[l].kind == nk->kind &&
					       !strcmp(f->streams[j].notes[l].detail, nk->detail);
			if (seen || lines++ >= 8)
				continue;
			for (j = i, n = 0; j < f->nstreams; j++)
				for (l = j == i ? k : 0; l < f->streams[j].nnotes; l++)
					n += f->streams[j].notes[l].kind == nk->kind &&
					     !strcmp(f->streams[j].notes[l].detail, nk->detail);
			fprintf(o, "  note:      %zu thread%s %s (first: pid %d thread %u): %s\n",
				n, n == 1 ? "" : "s",
				nk->kind <= RAW_NOTE_KIND_MAX && what[nk->kind] ? what[nk->kind]
										: "noted",
				f->streams[i].hdr.pid, nk->tid, nk->detail);
		}
	}
}

/* Streams not read, not counted, or read with damage: what it cost. */
static void print_streams(FILE *o, const struct fin *f)
{
	size_t i;

	for (i = 0; i < f->nstreams; i++) {
		const struct stream *s = &f->streams[i];
		const struct raw_reader_stats *st = &s->stats;
		char why[200];

		if (s->open_err == -ENODATA)
			continue; /* a writer stopped before its header: nothing was lost */
		if (s->open_err) {
			fprintf(o, "  damaged:   '%s' not read: %s\n", s->path,
				stream_open_strerror(s, why, sizeof(why)));
		} else if (s->duplicate_of >= 0 || !s->has_header) {
			fprintf(o, "  ignored:   '%s': %s\n", s->path, st->first_problem);
		} else if (st->bytes_skipped || s->samples_bad_stack) {
			fprintf(o,
				"  damaged:   '%s': %" PRIu64 " of %" PRIu64 " bytes skipped "
				"(%" PRIu64 " bad checksum, %" PRIu64 " cut, %" PRIu64
				" resynchronised, %" PRIu64 " duplicate chunks, %" PRIu64
				" malformed records); %" PRIu64
				" samples kept without their stack, "
				"as %s%s%s\n",
				s->path, st->bytes_skipped, st->bytes_total, st->chunks_bad_crc,
				st->chunks_truncated, st->chunks_bad_magic, st->chunks_duplicate,
				st->records_malformed, s->samples_bad_stack, FIN_DAMAGED_STACK_NAME,
				st->first_problem[0] ? ": " : "", st->first_problem);
		} else if (s->header_distrusted || st->first_problem[0]) {
			fprintf(o, "  damaged:   '%s': %s\n", s->path, st->first_problem);
		}
	}
}

/* memory-consumption: what was allocated, the peak, what leaked, per process file. */
static void print_memory(FILE *o, const struct fin *f)
{
	uint64_t allocs = 0, bytes = 0, peak = 0, leaked = 0, killed = 0;
	size_t i, k;

	for (i = 0; i < f->nmems; i++) {
		const struct mem_file *m = &f->mems[i];

		if (m->image < 0)
			continue;
		for (k = 0; k < m->nentries; k++) {
			allocs = sat_add_u64(allocs, m->entries[k].allocs);
			bytes = sat_add_u64(bytes, m->entries[k].alloc_bytes);
		}
		peak = sat_add_u64(peak, m->hdr.peak_bytes);
		leaked = sat_add_u64(leaked, m->hdr.live_bytes);
		killed += !(m->hdr.flags & RAW_MEM_ENDED);
	}
	fprintf(o,
		"  memory:    %" PRIu64 " allocations of %" PRIu64 " bytes, peak %" PRIu64
		" bytes live, %" PRIu64 " leaked%s\n",
		allocs, bytes, peak, leaked,
		killed ? " (a process was killed: what it held then)" : "");
}

void fin_print_summary(const struct fin *f)
{
	size_t i, nproc = 0, nthr = 0, nmod_used = 0;
	FILE *o = stderr;

	/* an image that came by exec is the same process, its main thread the same thread */
	for (i = 0; i < f->nimages; i++)
		nproc += !f->images[i].generation;
	for (i = 0; i < f->nthreads; i++)
		nthr += thread_first(f, i) == i;
	if (!nproc)
		nproc = f->nimages;
	for (i = 0; i < f->nmodules; i++)
		if (f->modules[i].naddrs)
			nmod_used++;
	fprintf(o,
		"%s: finalized '%s' in %.2f s (read %.2f, symbols %.2f, tree %.2f, "
		"database %.2f)\n",
		log_tool(), f->dir, f->t_load + f->t_resolve + f->t_tree + f->t_write, f->t_load,
		f->t_resolve, f->t_tree, f->t_write);
	fprintf(o,
		"  samples:   %" PRIu64 " (weight %" PRIu64 ") in %zu thread%s of %zu "
		"process%s, %zu stream%s\n",
		f->samples_total, f->weight_total, nthr, nthr == 1 ? "" : "s", nproc,
		nproc == 1 ? "" : "es", f->nstreams, f->nstreams == 1 ? "" : "s");
	fprintf(o, "  modules:   %zu loaded, %zu in stacks\n", f->nmodules, nmod_used);
	if (f->nmems) {
		/* no CPU samples: the threads' CPU time is not a measure of coverage here */
		print_memory(o, f);
	} else {
		fprintf(o,
			"  resolved:  %.1f%% of samples to a named function, %.1f%% to a source "
			"line\n",
			pct(f->samples_func, f->samples_total),
			pct(f->samples_line, f->samples_total));
		if (f->samples_func < f->samples_total)
			fprintf(o,
				"  unnamed:   %.1f%% of samples in functions known by their range "
				"(func@0x...), %.1f%% at addresses outside any\n",
				pct(f->samples_range, f->samples_total),
				pct(f->samples_total - f->samples_func - f->samples_range,
				    f->samples_total));
		print_coverage(o, f);
	}
	fin_print_fetches(o, f);
	print_stopped(o, f);
	print_truncated(o, f);
	if (f->samples_python)
		fprintf(o, "  python:    %.1f%% of samples with Python frames\n",
			pct(f->samples_python, f->samples_total));
	if (f->spin_samples)
		fprintf(o,
			"  spinning:  %.1f%% of samples in an OpenMP runtime's wait code (Spin "
			"Time, part of CPU Time)\n",
			pct(f->spin_samples, f->samples_total));
	print_waits(o, f);
	for (i = 0; i < f->nmodules; i++) {
		const struct module *m = &f->modules[i];

		if (!m->naddrs || m->kind != RAW_MODULE_FILE)
			continue;
		if (m->found_in &&
		    (!strcmp(m->found_in, "search-dir") || !strcmp(m->found_in, "archive")))
			fprintf(o, "  symbols of %s from %s '%s'\n", m->name,
				!strcmp(m->found_in, "archive") ? "the archive" : "-search-dir",
				m->resolved_path);
		if (!strcmp(m->status, "missing"))
			fprintf(o,
				"  not found: '%s' (%.1f%% of samples): frames unresolved; pass "
				"-search-dir with a copy\n",
				m->path, pct(m->leaf_samples, f->samples_total));
		else if (!strcmp(m->status, "build-id-mismatch"))
			fprintf(o,
				"  wrong build-id: '%s' (%.1f%% of samples): frames unresolved\n",
				m->mismatch_path, pct(m->leaf_samples, f->samples_total));
		else if (strcmp(m->symbols, "dwarf") && m->leaf_samples)
			fprintf(o,
				"  no debug information: %s (%.1f%% of samples, names from %s): "
				"%s\n",
				m->name, pct(m->leaf_samples, f->samples_total), m->symbols,
				debug_hint(m));
	}
	print_notes(o, f);
	print_streams(o, f);
}
