/* SPDX-License-Identifier: MIT */
/* MPI calls handed over by the shims (-trace-mpi): per call site, written to the thread's stream.
 */
#include <stdlib.h>
#include <string.h>

#include "collector/agent/agent-private.h"
#include "collector/agent/agent-unwind.h"
#include "collector/agent/mpi/mpi-hook.h"
#include "collector/agent/probe.h"
#include "common/hash.h"
#include "common/raw-mpi.h"

/*
 * Most MPI calls are short and many: they are summed per call site, as WAIT_SUM sums waits.
 * A call site is (the return address into the caller, the Python frames when the thread
 * runs Python, the function, the communicator's size); its stack is unwound once,
 * at its first call, and named by id in every RAW_REC_MPI_SUM written for it: the calls of
 * one site made through different callers further out count under the first one's stack
 * (docs/pcollect.md). A call of the threshold or longer gets its own stack, unwound at its
 * return, and a RAW_REC_MPI_CALL of its own (a timeline row). The sums are written at the
 * first call a second after the last ones, when the table is full, at the thread's end and
 * before exec.
 *
 * Everything here runs in the calling thread, outside any signal handler, with the thread's
 * writer held (t->busy): its sampling handler, finding it busy, counts a sample as lost
 * rather than wait, which happens only if the timer fires during the few hundred
 * nanoseconds a call is accounted in.
 */

#define MPI_SITES        1024 /* call sites per thread: a power of two */
#define MPI_SUM_EVERY_NS 1000000000ll
/* A thread's sampling handler writes its sums this often: a killed job keeps its calls. */
#define MPI_SUM_TICK_NS 100000000ll

struct mpi_site {
	uintptr_t ret; /* 0: a free slot */
	uint64_t py;   /* the innermost Python frame's identity, 0 without one */
	uint32_t function, comm_size;
	uint64_t stack;                           /* its id in the thread's stream */
	uint64_t count, total_ns, sent, received; /* since the last sum written */
};

struct agent_mpi {
	uint64_t stream_id; /* the stream the sites' stack ids belong to */
	size_t used;
	int64_t last_sum_ns; /* stream time */
	struct mpi_site sites[MPI_SITES];
};

/* Not while paused (-start-paused, -command pause): as waits, nothing then is measured. */
static bool recording(void)
{
	return agent.active && agent.cfg.mpi_shims[0] && !agent_paused();
}

uint32_t agent_stack_here(struct agent_thread *t, uintptr_t entry, uintptr_t ret, uint32_t *flags)
{
	/* Up to the shim's return into its caller: the frames inside are the agent's and the
	   shim's own. */
	struct agent_unwind u = {
		.ips = t->ips,
		.max = agent.cfg.stack_depth,
		.flags = RAW_STACK_FIRST_IS_PC,
		.skip = AGENT_UNWIND_SKIP_TO_RET,
		.until = ret,
	};

	u.ips[u.n++] = entry;
	/* Not inside the loader: the unwinder would take its lock again. */
	if (!agent_in_dl)
		agent_unwind_here(&u);
	if (!u.skipped && u.n < u.max) {
		/* The caller's frame was not met (no unwind information): at least the site. */
		u.ips[u.n++] = ret;
		u.flags |= RAW_STACK_UNWIND_ERROR;
	}
	*flags = u.flags;
	return u.n;
}

/* Write the sums of every site that has calls since the last one. Writer held. */
static void sums_write(struct agent_thread *t, struct agent_mpi *m, int64_t now)
{
	size_t i;

	for (i = 0; i < MPI_SITES; i++) {
		struct mpi_site *s = &m->sites[i];
		struct raw_mpi_call rec = {
			.time_ns = now,
			.stack = s->stack,
			.function = s->function,
			.comm_size = s->comm_size,
			.count = s->count,
			.total_ns = s->total_ns,
			.sent = s->sent,
			.received = s->received,
			.summed = true,
		};

		if (!s->ret || !s->count)
			continue;
		if (raw_mpi_write_call(&t->w, &rec))
			continue; /* kept: the next sum has them */
		s->count = s->total_ns = s->sent = s->received = 0;
	}
	m->last_sum_ns = now;
}

static void sites_reset(struct agent_mpi *m, uint64_t stream_id)
{
	memset(m->sites, 0, sizeof(m->sites));
	m->used = 0;
	m->stream_id = stream_id;
}

static uint64_t site_hash(uintptr_t ret, uint64_t py, uint32_t function, uint32_t comm_size)
{
	uint64_t h = (uint64_t)ret * 0x9e3779b97f4a7c15ull;

	h ^= (py + ((uint64_t)function << 32 | comm_size)) * 0xc2b2ae3d27d4eb4full;
	return h ^ (h >> 29);
}

/* The site of c, made (its stack written) when new; NULL when it cannot be had. */
static struct mpi_site *site_get(struct agent_thread *t, struct agent_mpi *m,
				 const struct pcollect_mpi_call *c, uint64_t py, int64_t now)
{
	struct mpi_site *s;
	uint32_t n, flags;
	uint64_t id;
	size_t i;

	PROBE_EACH(i, site_hash(c->ret, py, c->function, c->comm_size), MPI_SITES - 1) {
		s = &m->sites[i];
		if (!s->ret)
			break;
		if (s->ret == c->ret && s->py == py && s->function == c->function &&
		    s->comm_size == c->comm_size)
			return s;
	}
	if (!probe_has_room(m->used, MPI_SITES)) {
		/* Full: every sum out, and the sites start over (their stacks are unwound again).
		 */
		sums_write(t, m, now);
		sites_reset(m, m->stream_id);
		return site_get(t, m, c, py, now);
	}
	n = agent_stack_here(t, c->entry, c->ret, &flags);
	id = agent_stack_record(t, n, flags);
	if (!id)
		return NULL;
	*s = (struct mpi_site){ .ret = c->ret,
				.py = py,
				.function = c->function,
				.comm_size = c->comm_size,
				.stack = id };
	m->used++;
	return s;
}

/*
 * The Python part of a call site, when the thread runs Python: a key of its Python frames
 * (each frame's code and instruction). An extension module (mpi4py) makes every call of one
 * MPI function from a single return address, whichever Python lines led there: this tells
 * them apart, at the cost of a walk of the Python frames without their code objects (a few
 * microseconds) per call made from Python.
 */
static uint64_t python_site(struct agent_thread *t)
{
	struct agent_py *py = atomic_load_explicit(&t->py, memory_order_acquire);
	uint64_t key;

	if (!py || !pyagent_active() || pyagent_stack_key(&py->pt, &key))
		return 0;
	return key | 1;
}

/* One call: summed in its site, or written whole when it lasted the threshold. */
static void account(struct agent_thread *t, const struct pcollect_mpi_call *c)
{
	struct agent_mpi *m = t->mpi;
	uint64_t duration = c->end_ns > c->begin_ns ? c->end_ns - c->begin_ns : 0;
	int64_t now = (int64_t)(c->end_ns - t->hdr.origin_ns);
	struct mpi_site *s;

	if (!m) {
		m = t->mpi = malloc(sizeof(*m));
		if (!m)
			return;
		sites_reset(m, t->hdr.stream_id);
		m->last_sum_ns = now;
	}
	/* A new stream for this slot (a fork child, a reused slot): its stack ids start over. */
	if (m->stream_id != t->hdr.stream_id) {
		sites_reset(m, t->hdr.stream_id);
		m->last_sum_ns = now;
	}
	if (duration >= agent.cfg.mpi_threshold_ns) {
		struct raw_mpi_call rec = {
			.time_ns = (int64_t)(c->begin_ns - t->hdr.origin_ns),
			.function = c->function,
			.comm_size = c->comm_size,
			.count = 1,
			.total_ns = duration,
			.sent = c->sent,
			.received = c->received,
		};
		uint32_t flags, n = agent_stack_here(t, c->entry, c->ret, &flags);

		rec.stack = agent_stack_record(t, n, flags);
		if (rec.stack)
			raw_mpi_write_call(&t->w, &rec);
	} else {
		s = site_get(t, m, c, python_site(t), now);
		if (!s)
			return;
		s->count++;
		s->total_ns += duration;
		s->sent += c->sent;
		s->received += c->received;
	}
	if (now - m->last_sum_ns >= MPI_SUM_EVERY_NS) {
		if (agent.cfg.ring_ns) {
			agent_ring_turn(t, now);
			return;
		}
		sums_write(t, m, now);
		raw_writer_flush(&t->w);
	}
}

AGENT_EXPORT void pcollect_mpi_call(const struct pcollect_mpi_call *c)
{
	struct agent_thread *t = agent_self;
	int expected = 0;

	if (!t || !recording() || atomic_load(&t->state) != AGENT_THREAD_LIVE)
		return;
	/* The control thread may hold it a moment (agent_mpi_scan()); else the stream is being
	   finished (exit): too late for this call. */
	if (!atomic_compare_exchange_strong(&t->busy, &expected, 1) && !agent_take_soon(&t->busy))
		return;
	if (!t->write_stopped) {
		account(t, c);
		agent_account(t);
	}
	agent_thread_give(t);
}

AGENT_EXPORT void pcollect_mpi_rank(int rank, int size)
{
	struct raw_mpi_rank r;
	struct raw_writer *w;
	sigset_t old;

	if (!agent.active || rank < 0 || size <= 0 || rank >= size)
		return;
	/* Streams opened from now on carry it in their header too. */
	agent.cfg.rank = rank;
	pthread_mutex_lock(&agent.lock);
	w = agent_proc_begin(&old);
	if (w) {
		r = (struct raw_mpi_rank){ raw_header_now(&agent.proc.hdr), (uint32_t)rank,
					   (uint32_t)size };
		if (raw_mpi_write_rank(w, &r))
			agent_log("cannot record the MPI rank %d of %d", rank, size);
	}
	agent_proc_end(&old);
	pthread_mutex_unlock(&agent.lock);
}

void agent_mpi_thread_sums(struct agent_thread *t, int64_t now)
{
	if (t->mpi && t->mpi->stream_id == t->hdr.stream_id)
		sums_write(t, t->mpi, now);
}

void agent_mpi_thread_turn(struct agent_thread *t, int64_t now)
{
	if (t->mpi && t->mpi->stream_id == t->hdr.stream_id) {
		sums_write(t, t->mpi, now);
		sites_reset(t->mpi, t->hdr.stream_id);
	}
}

void agent_mpi_thread_tick(struct agent_thread *t, int64_t now)
{
	/* In the handler, writer held: no account() is half done. sums_write() only encodes. */
	if (t->mpi && t->mpi->stream_id == t->hdr.stream_id &&
	    now - t->mpi->last_sum_ns >= MPI_SUM_TICK_NS)
		sums_write(t, t->mpi, now);
}

void agent_mpi_scan(void)
{
	size_t i, n = atomic_load(&agent.nthreads);

	if (!recording())
		return;
	for (i = 0; i < n && i < AGENT_MAX_THREADS; i++) {
		struct agent_thread *t = agent.threads[i];
		int expected = 0;
		int64_t now;

		if (!t || !t->mpi || atomic_load(&t->state) != AGENT_THREAD_LIVE ||
		    !atomic_compare_exchange_strong(&t->busy, &expected, 1))
			continue;
		now = raw_header_now(&t->hdr);
		if (t->mpi && !t->write_stopped && atomic_load(&t->state) == AGENT_THREAD_LIVE &&
		    t->mpi->stream_id == t->hdr.stream_id &&
		    now - t->mpi->last_sum_ns >= MPI_SUM_EVERY_NS) {
			sums_write(t, t->mpi, now);
			agent_account(t);
		}
		agent_thread_give(t);
	}
}

void agent_mpi_thread_finish(struct agent_thread *t)
{
	agent_mpi_thread_sums(t, raw_header_now(&t->hdr));
}

void agent_mpi_thread_free(struct agent_thread *t)
{
	free(t->mpi);
	t->mpi = NULL;
}
