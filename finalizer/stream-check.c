/* SPDX-License-Identifier: MIT */
/* Which streams to believe: copies ignored, header fields cross-checked with names and meta/. */
#include <stdlib.h>
#include <string.h>

#include "common/sat.h"
#include "finalizer/finalize-private.h"

static const char *base_name(const char *path)
{
	const char *s = strrchr(path, '/');

	return s ? s + 1 : path;
}

/* What the file name says agrees with the header. */
static bool name_agrees(const struct stream *s)
{
	const struct raw_file_header *h = &s->hdr;

	if (!s->name_ok || s->name.pid != h->pid || s->name.generation != h->generation)
		return false;
	if (s->name.process)
		return h->kind == RAW_STREAM_PROCESS;
	return h->kind != RAW_STREAM_PROCESS && s->name.tid == h->tid;
}

static const struct fin *sort_fin;

/* By stream id; within one id the stream whose name agrees with its header first. */
static int by_identity(const void *a, const void *b)
{
	const struct stream *x = &sort_fin->streams[*(const size_t *)a];
	const struct stream *y = &sort_fin->streams[*(const size_t *)b];
	bool ax = name_agrees(x), ay = name_agrees(y);

	if (x->hdr.stream_id != y->hdr.stream_id)
		return x->hdr.stream_id < y->hdr.stream_id ? -1 : 1;
	if (ax != ay)
		return ax ? -1 : 1;
	return *(const size_t *)a < *(const size_t *)b ? -1 : 1;
}

/*
 * A stream copied beside itself (cp raw/A.praw raw/B.praw) has the same stream id: only one
 * is read, so nothing is counted twice.
 */
static void drop_copies(struct fin *f)
{
	size_t *order = malloc((f->nstreams ? f->nstreams : 1) * sizeof(*order));
	size_t i, n = 0, keep = 0;

	if (!order)
		return; /* without memory to sort, the check is skipped; the run fails later */
	for (i = 0; i < f->nstreams; i++)
		if (f->streams[i].has_header)
			order[n++] = i;
	sort_fin = f;
	qsort(order, n, sizeof(*order), by_identity);
	for (i = 0; i < n; i++) {
		struct stream *s = &f->streams[order[i]];

		if (i == 0 || s->hdr.stream_id != f->streams[order[i - 1]].hdr.stream_id) {
			keep = order[i];
			continue;
		}
		s->duplicate_of = (int64_t)keep;
		stream_drop_records(s);
		stream_problem(s, true, "a copy of '%s' (the same stream id): ignored",
			       base_name(f->streams[keep].path));
		f->streams_duplicate++;
	}
	free(order);
}

/*
 * The header's pid, tid, generation and kind against the file name, which the agent built
 * from the same values: when they disagree (a header damaged, by chance or with its checksum
 * made again, or a version 1 header, which has none) the name is believed and the header
 * fields are taken from it. A renamed file would be misplaced; a renamed copy is caught by
 * its stream id first. False when the header cannot be checked (no name to believe) and its
 * checksum failed.
 */
static bool header_from_name(struct stream *s, bool crc_bad)
{
	struct raw_file_header *h = &s->hdr;

	if (!s->name_ok)
		return !crc_bad;
	if (!crc_bad && name_agrees(s))
		return true;
	if (crc_bad)
		stream_problem(s, false,
			       "file header damaged (checksum mismatch): pid, tid and "
			       "generation taken from the file name");
	else
		stream_problem(s, false,
			       "the file name says pid %d tid %d generation %u, the "
			       "header pid %d tid %d generation %u: the file name is believed",
			       (int)s->name.pid, (int)s->name.tid, s->name.generation, h->pid,
			       h->tid, h->generation);
	h->pid = s->name.pid;
	h->tid = s->name.process ? h->tid : s->name.tid;
	h->generation = s->name.generation;
	h->kind = s->name.process ? RAW_STREAM_PROCESS : RAW_STREAM_THREAD;
	s->header_distrusted = true;
	return true;
}

/* A thread stream's interval: meta/'s when the launcher wrote one, else a plausible header. */
static bool check_interval(struct fin *f, struct stream *s)
{
	uint64_t iv = s->hdr.interval_ns;

	if (s->hdr.kind == RAW_STREAM_PROCESS || !s->nsamples)
		return true;
	if (f->interval_from_meta) {
		if (iv != f->interval_ns) {
			stream_problem(s, false,
				       "interval_ns %llu in its header, %llu in meta/: "
				       "meta/'s is used",
				       (unsigned long long)iv, (unsigned long long)f->interval_ns);
			s->hdr.interval_ns = f->interval_ns;
		}
		return true;
	}
	if (iv >= RAW_MIN_INTERVAL_NS && iv <= RAW_MAX_INTERVAL_NS && !s->header_distrusted)
		return true;
	stream_problem(s, true,
		       "interval_ns %llu cannot be trusted and meta/ has none: its "
		       "samples are not counted",
		       (unsigned long long)iv);
	return false;
}

/* The stream began during the collection (with a day of slack for programs left running). */
static void check_origin(struct fin *f, struct stream *s)
{
	const int64_t second = 1000000000ll, day = 86400ll * second;
	int64_t o = (int64_t)s->hdr.origin_ns;
	/* meta/'s times are the launcher's word, not trusted: no bound may overflow */
	int64_t lo = f->start_mono_ns > INT64_MIN + second ? f->start_mono_ns - second : INT64_MIN;
	int64_t hi = f->end_mono_ns < 0 || f->end_mono_ns > INT64_MAX - day ? INT64_MAX
									    : f->end_mono_ns + day;

	if (f->start_mono_ns <= 0 || (s->hdr.origin_ns <= INT64_MAX && o >= lo && o <= hi))
		return;
	stream_problem(s, false,
		       "its start (origin_ns %llu) lies outside the collection: its "
		       "times are approximate",
		       (unsigned long long)s->hdr.origin_ns);
	s->hdr.origin_ns = (uint64_t)f->start_mono_ns;
}

/* Weights that add up to more CPU time than any thread can use are damage. */
static bool check_weights(struct stream *s)
{
	uint64_t iv = s->hdr.interval_ns;

	if (!iv || s->weight_total <= (uint64_t)FIN_MAX_STREAM_NS / iv)
		return true;
	stream_problem(s, true,
		       "its sample weights add up to more than %lld s of CPU time: "
		       "damaged, not counted",
		       FIN_MAX_STREAM_NS / 1000000000ll);
	return false;
}

/* Scale the weights of s by num / den, rounding so that no weight is lost or made up. */
static void scale_weights(struct stream *s, uint64_t num, uint64_t den)
{
	__extension__ unsigned __int128 acc = 0;
	uint64_t out = 0;
	size_t i;

	for (i = 0; i < s->nsamples; i++) {
		uint64_t upto;

		acc += (unsigned __int128)s->samples[i].weight * num;
		upto = (uint64_t)(acc / den);
		s->samples[i].weight = upto - out;
		out = upto;
	}
	s->weight_total = out;
}

void fin_check_thread_times(struct fin *f)
{
	uint64_t *sampled = calloc(f->nthreads + 1, sizeof(*sampled));
	size_t i;

	if (!sampled)
		return; /* without memory for the check, the run fails later */
	for (i = 0; i < f->nstreams; i++) {
		const struct stream *s = &f->streams[i];

		if (s->has_header && s->hdr.kind != RAW_STREAM_PROCESS && s->thread < f->nthreads)
			sampled[s->thread] =
				sat_add_u64(sampled[s->thread],
					    sat_mul_u64(s->weight_total, s->hdr.interval_ns));
	}
	for (i = 0; i < f->nstreams; i++) {
		struct stream *s = &f->streams[i];
		const struct thread *t;
		uint64_t used, slack;

		if (!s->has_header || s->hdr.kind == RAW_STREAM_PROCESS || s->thread >= f->nthreads)
			continue;
		t = &f->threads[s->thread];
		used = t->cpu_ns;
		slack = FIN_SAMPLED_SLACK_NS(s->hdr.interval_ns, used);
		if (!used || sampled[s->thread] <= sat_add_u64(used, slack))
			continue;
		stream_problem(
			s, true,
			"its samples stand for %.3f s of CPU time, its thread "
			"used %.3f s: weights changed past the checksums; scaled down to the "
			"thread's time",
			(double)sampled[s->thread] / 1e9, (double)used / 1e9);
		scale_weights(s, used, sampled[s->thread]);
		s->weights_scaled = true;
	}
	free(sampled);
}

void fin_check_streams(struct fin *f)
{
	size_t i;

	drop_copies(f);
	for (i = 0; i < f->nstreams; i++) {
		struct stream *s = &f->streams[i];
		bool crc_bad = s->stats.header_crc_bad;

		if (!s->has_header || s->duplicate_of >= 0)
			continue;
		if (!header_from_name(s, crc_bad)) {
			/* Whose stream is this? Nothing in it can be placed. */
			stream_drop_records(s);
			stream_problem(s, true,
				       "file header damaged (checksum mismatch) and the "
				       "file name does not say whose stream it is: ignored");
			s->has_header = false;
			continue;
		}
		check_origin(f, s);
		if (!check_interval(f, s) || !check_weights(s)) {
			stream_drop_records(s);
			s->header_distrusted = true;
		}
	}
}
