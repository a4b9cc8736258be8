/* SPDX-License-Identifier: MIT */
/* The decoder of MPI records (64-79): calls become MPI Time, MPI Calls and bytes; the rank. */
#include <errno.h>

#include "common/grow.h"
#include "common/raw-mpi.h"
#include "finalizer/finalize-private.h"
#include "finalizer/metrics.h"

int mpi_take(struct stream *s, const struct raw_record *rec)
{
	struct raw_mpi_call c;
	struct raw_mpi_rank r;

	switch (rec->type) {
	case RAW_REC_MPI_CALL:
	case RAW_REC_MPI_SUM:
		if (raw_mpi_read_call(rec, &c)) {
			s->records_malformed++;
			return 0;
		}
		if (!raw_mpi_function_name(c.function)) {
			s->unknown_records++; /* a function a later collector traces */
			return 0;
		}
		if (GROW(s->mpis, s->nmpis + 1, s->mpis_cap))
			return -ENOMEM;
		s->mpis[s->nmpis++] = (struct mpi_rec){
			.time_ns = c.time_ns,
			.stack = c.stack,
			.function = c.function,
			.comm_size = c.comm_size,
			.summed = c.summed,
			.count = c.count,
			.total_ns = c.total_ns,
			.sent = c.sent,
			.received = c.received,
		};
		return 0;
	case RAW_REC_MPI_RANK:
		if (raw_mpi_read_rank(rec, &r)) {
			s->records_malformed++;
			return 0;
		}
		/* The last one said wins (a program may call MPI_Init_thread after a failed init).
		 */
		s->has_mpi_rank = true;
		s->mpi_rank = (int32_t)r.rank;
		return 0;
	default:
		s->unknown_records++; /* a later record of the range */
		return 0;
	}
}

/*
 * Each call (or sum of calls) is four events of one context, the function and the
 * communicator's size: MPI Time (its duration), MPI Calls (its count), and the bytes when it
 * moved any. A call of the threshold or longer is timed: the timeline has it.
 */
int mpis_to_events(struct fin *f, struct stream *s)
{
	int64_t metric[4];
	static const enum metric_id ids[4] = { METRIC_MPI_TIME, METRIC_MPI_CALLS, METRIC_MPI_SENT,
					       METRIC_MPI_RECV };
	size_t i, k;
	int ret;

	if (s->has_mpi_rank)
		f->images[s->image].rank = s->mpi_rank;
	if (!s->nmpis)
		return 0;
	for (k = 0; k < 4; k++)
		if ((metric[k] = fin_metrics_standard(f, ids[k])) < 0)
			return (int)metric[k];
	for (i = 0; i < s->nmpis; i++) {
		const struct mpi_rec *c = &s->mpis[i];
		int64_t ctx = fin_context_get_mpi(f, s->image, c->function, c->comm_size,
						  region_at(s, c->time_ns));
		const int64_t value[4] = { (int64_t)c->total_ns, (int64_t)c->count,
					   (int64_t)c->sent, (int64_t)c->received };

		if (ctx < 0)
			return (int)ctx;
		for (k = 0; k < 4; k++) {
			struct event_rec e = {
				.time_ns = c->time_ns,
				.stack = c->stack,
				.metric = (uint32_t)metric[k],
				.context = (uint32_t)ctx,
				.value = value[k],
				.count = c->count,
				.timed = !c->summed,
			};

			/* A metric left out (declared otherwise by a stream), or no bytes moved. */
			if (metric[k] == UINT32_MAX || (k >= 2 && !value[k]))
				continue;
			if ((ret = fin_event_add(s, &e)))
				return ret;
		}
	}
	return 0;
}
