/* SPDX-License-Identifier: MIT */
/* Where the threads wait (-collect threading): blocking calls measured, their stacks recorded. */
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <sched.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include "collector/agent/agent-private.h"
#include "collector/agent/agent-unwind.h"
#include "collector/agent/probe.h"
#include "common/preload.h"
#include "common/hash.h"

/*
 * The interposers (agent-wait-*.c, agent-omp.c) measure each blocking call around the real
 * one: agent_wait_enter() takes the start, agent_wait_leave() the end. A wait of at least the
 * threshold is a WAIT record with the whole stack where the thread blocked: unwound from
 * here, in the thread itself (the agent's own frames on top dropped), with its Python frames,
 * and written into the thread's stream with our signal blocked meanwhile, so the handler
 * never meets a writer in use. A shorter wait is counted in a per-thread table of call
 * sites, with no system call once its site is known: a site is the return address into the
 * caller and the interposer's frame address (which tells call paths apart), and for a
 * thread running Python its innermost Python frames; its stack is taken at its first wait.
 * The table is written out as WAIT_SUM records when full, about once a second while the
 * thread waits, at the thread's end and before exec.
 *
 * Nothing is recorded for the agent's own calls (their return address is in the agent's
 * code, or agent_in_agent / agent_in_unwind is set while it records or unwinds), before the
 * agent is active, in a vfork child (which shares the parent's memory), or once sampling
 * has stopped.
 */

bool agent_waits_on;
uintptr_t agent_text_lo, agent_text_hi;
__thread unsigned agent_sig_count AGENT_TLS;
__thread int agent_in_agent AGENT_TLS;

static uint64_t now_ns(void)
{
	struct timespec ts;

	clock_gettime(CLOCK_MONOTONIC, &ts);
	return (uint64_t)ts.tv_sec * 1000000000u + (uint64_t)ts.tv_nsec;
}

/*
 * A sanitizer runtime's interceptors stand between the program and us: their frames on top of
 * a wait's stack are left out like ours, so the stack begins at the program's call.
 */
#define SANITIZER_RANGES 4
static struct {
	uintptr_t lo, hi;
} sanitizer[SANITIZER_RANGES];
static unsigned nsanitizer;

/* The executable segments of the object that holds this function: the agent's code. */
static int text_cb(struct dl_phdr_info *info, size_t size, void *data)
{
	uintptr_t self = (uintptr_t)(void *)agent_wait_init, lo, hi;
	bool san = info->dlpi_name && preload_is_sanitizer(info->dlpi_name);

	(void)size;
	(void)data;
	agent_module_text(info, &lo, &hi);
	if (san && lo < hi && nsanitizer < SANITIZER_RANGES) {
		sanitizer[nsanitizer].lo = lo;
		sanitizer[nsanitizer++].hi = hi;
	}
	if (self >= lo && self < hi) {
		agent_text_lo = lo;
		agent_text_hi = hi;
	}
	return 0;
}

void agent_wait_init(void)
{
	if (!agent.active)
		return;
	/* For every analysis: the stacks where threads and OpenMP regions begin leave our
	   frames out too (agent_origin_stack_here()). */
	agent_real.dl_iterate_phdr(text_cb, NULL);
	if (!agent.cfg.waits)
		return;
	if (agent_text_hi <= agent_text_lo) {
		agent_log("cannot find the agent's own code: waits not recorded");
		return;
	}
	agent_waits_on = true;
}

void agent_wait_stop(void)
{
	agent_waits_on = false;
}

void agent_wait_thread_begin(struct agent_thread *t)
{
	/* A new stream: the stack ids kept were the old one's. */
	memset(t->origin_cache, 0, sizeof(t->origin_cache));
	t->origin_tid = 0;
	t->origin_stack = 0;
	if (!agent.cfg.waits)
		return;
	if (!t->wait) {
		t->wait = agent_map_zeroed(sizeof(*t->wait));
		if (!t->wait)
			agent_log("thread %d: no memory for its waits: not recorded", (int)t->tid);
		return;
	}
	/* A new stream (a fork child's): stack ids and named descriptors were the old one's. */
	memset(t->wait, 0, sizeof(*t->wait));
}

void agent_wait_thread_free(struct agent_thread *t)
{
	agent_unmap(t->wait, sizeof(*t->wait));
	t->wait = NULL;
}

static bool try_take(_Atomic int *flag)
{
	int expected = 0;

	return atomic_compare_exchange_strong(flag, &expected, 1);
}

static void give(_Atomic int *flag)
{
	atomic_store_explicit(flag, 0, memory_order_release);
}

bool agent_take_soon(_Atomic int *flag)
{
	unsigned i;

	for (i = 0; i < AGENT_TAKE_TRIES; i++) {
		if (try_take(flag))
			return true;
		sched_yield();
	}
	return false;
}

/* ---- stacks ------------------------------------------------------------------------------ */

bool agent_ip_is_ours(uintptr_t ip)
{
	unsigned i;

	if (ip >= agent_text_lo && ip < agent_text_hi)
		return true;
	for (i = 0; i < nsanitizer; i++)
		if (ip >= sanitizer[i].lo && ip < sanitizer[i].hi)
			return true;
	return false;
}

/*
 * The id of the stack where the thread is (its Python frames taken already, or not): unwound
 * from here, without the agent's frames (and a sanitizer's interceptors) on top (keep_last:
 * but the last of them, a frame of ours the program's code runs under: OpenMP's outlined
 * functions, called by our trampoline). pc, when not 0, goes first (exact).
 */
static uint64_t stack_id_here(struct agent_thread *t, uintptr_t pc, bool keep_last, bool python)
{
	struct agent_unwind u = {
		.ips = t->ips,
		.max = agent.cfg.stack_depth,
		.skip = keep_last ? AGENT_UNWIND_SKIP_OURS_LAST : AGENT_UNWIND_SKIP_OURS,
	};
	uint64_t id = 0;

	if (pc) {
		u.ips[u.n++] = pc;
		u.flags |= RAW_STACK_FIRST_IS_PC;
	}
	if (!agent_unwind_here(&u))
		return 0;
	if (python)
		id = agent_python_stack_id(t, u.n, u.flags);
	return id ? id : agent_stack_id(t, u.n, u.flags);
}

bool agent_wait_writer_take(struct agent_thread *t, sigset_t *old)
{
	agent_block_sampling(old);
	if (t->write_stopped || !agent_take_soon(&t->busy)) {
		agent_restore_mask(old);
		return false;
	}
	return true;
}

void agent_wait_writer_give(struct agent_thread *t, const sigset_t *old)
{
	agent_account(t);
	agent_thread_give(t);
	agent_restore_mask(old);
}

uint64_t agent_wait_stack_id(struct agent_thread *t, bool python)
{
	return stack_id_here(t, 0, false, python);
}

/* site: a call site to keep the stack of (agent_origin_stack_at()), 0 for none. */
static uint64_t stack_here_taken(struct agent_thread *t, uintptr_t pc, bool keep_last, bool python,
				 uintptr_t site, uintptr_t sp)
{
	uint64_t id = 0, pykey = 0, key = hash_combine(hash_mix(site), sp) | 1;
	sigset_t old;

	/* Without Python frames the site alone is the key: a known one costs no system call. */
	if (site && !python && t->origin_cache[key % AGENT_ORIGIN_CACHE].key == key)
		return t->origin_cache[key % AGENT_ORIGIN_CACHE].id;
	agent_in_agent++;
	if (agent_wait_writer_take(t, &old)) {
		if (python)
			pykey = agent_python_capture(t);
		if (pykey)
			key = hash_combine(key, pykey) | 1;
		if (site && t->origin_cache[key % AGENT_ORIGIN_CACHE].key == key) {
			id = t->origin_cache[key % AGENT_ORIGIN_CACHE].id;
		} else {
			id = stack_id_here(t, pc, keep_last, pykey != 0);
			if (site && id) {
				t->origin_cache[key % AGENT_ORIGIN_CACHE].key = key;
				t->origin_cache[key % AGENT_ORIGIN_CACHE].id = id;
			}
		}
		agent_wait_writer_give(t, &old);
	}
	agent_in_agent--;
	return id;
}

uint64_t agent_wait_stack_here(struct agent_thread *t, uintptr_t pc, bool keep_last)
{
	return stack_here_taken(t, pc, keep_last, false, 0, 0);
}

uint64_t agent_origin_stack_at(struct agent_thread *t, uintptr_t pc, uintptr_t site, uintptr_t sp)
{
	return stack_here_taken(t, pc, false,
				atomic_load_explicit(&t->py, memory_order_relaxed) &&
					pyagent_active(),
				site, sp);
}

uint64_t agent_call_stack_here(struct agent_thread *t, uintptr_t pc)
{
	return stack_here_taken(t, pc, false,
				atomic_load_explicit(&t->py, memory_order_relaxed) &&
					pyagent_active(),
				0, 0);
}

uint64_t agent_origin_stack_here(struct agent_thread *t)
{
	return agent_origin_stack_at(t, 0, 0, 0);
}

/* ---- descriptors' names ------------------------------------------------------------------ */

static bool names_fd(uint32_t kind)
{
	return kind == RAW_WAIT_READ || kind == RAW_WAIT_WRITE || kind == RAW_WAIT_ACCEPT ||
	       kind == RAW_WAIT_CONNECT || kind == RAW_WAIT_POLL;
}

static int addr_text(const struct sockaddr_storage *a, socklen_t len, char *buf, size_t size)
{
	char host[INET6_ADDRSTRLEN];

	if (a->ss_family == AF_INET) {
		const struct sockaddr_in *in = (const void *)a;

		inet_ntop(AF_INET, &in->sin_addr, host, sizeof(host));
		return snprintf(buf, size, "%s:%u", host, ntohs(in->sin_port));
	}
	if (a->ss_family == AF_INET6) {
		const struct sockaddr_in6 *in = (const void *)a;

		inet_ntop(AF_INET6, &in->sin6_addr, host, sizeof(host));
		return snprintf(buf, size, "[%s]:%u", host, ntohs(in->sin6_port));
	}
	if (a->ss_family == AF_UNIX) {
		const struct sockaddr_un *un = (const void *)a;
		size_t n = len > offsetof(struct sockaddr_un, sun_path)
				   ? len - offsetof(struct sockaddr_un, sun_path)
				   : 0;

		if (!n || !un->sun_path[0])
			return snprintf(buf, size, "unix");
		return snprintf(buf, size, "unix %.*s", (int)strnlen(un->sun_path, n),
				un->sun_path);
	}
	return snprintf(buf, size, "family %d", a->ss_family);
}

/* A descriptor's name: its path, or a socket's addresses ("tcp 127.0.0.1:41000 -> ..."). */
static void fd_name(int fd, char *buf, size_t size)
{
	struct sockaddr_storage local, peer;
	socklen_t llen = sizeof(local), plen = sizeof(peer);
	char path[64], a[100], b[100];
	int type = 0;
	socklen_t tlen = sizeof(type);
	ssize_t n;

	snprintf(path, sizeof(path), "/proc/self/fd/%d", fd);
	n = readlink(path, buf, size - 1);
	buf[n > 0 ? n : 0] = '\0';
	if (strncmp(buf, "socket:", 7) || getsockname(fd, (struct sockaddr *)&local, &llen))
		return;
	getsockopt(fd, SOL_SOCKET, SO_TYPE, &type, &tlen);
	addr_text(&local, llen, a, sizeof(a));
	if (getpeername(fd, (struct sockaddr *)&peer, &plen))
		snprintf(b, sizeof(b), "%s", "(not connected)");
	else
		addr_text(&peer, plen, b, sizeof(b));
	snprintf(buf, size, "%s %s -> %s", type == SOCK_DGRAM ? "udp" : "tcp", a, b);
	if (local.ss_family == AF_UNIX)
		snprintf(buf, size, "%s -> %s", a, b);
}

/* Before a WAIT on a descriptor: its OBJECT record, when this stream lacks its name. */
static void name_object(struct agent_thread *t, uint32_t kind, uint64_t object)
{
	struct agent_wait_thread *wt = t->wait;
	char name[256];
	uint64_t h;
	uint32_t i;

	if (!names_fd(kind) || object > INT32_MAX)
		return;
	fd_name((int)object, name, sizeof(name));
	if (!name[0])
		return;
	h = hash_bytes(name, strlen(name));
	for (i = 0; i < wt->nnamed; i++)
		if (wt->named[i].fd == (int)object)
			break;
	if (i < wt->nnamed && wt->named[i].hash == h)
		return;
	if (i == wt->nnamed) {
		if (wt->nnamed == AGENT_WAIT_NAMED)
			i = (uint32_t)(object % AGENT_WAIT_NAMED); /* forget one */
		else
			wt->nnamed++;
	}
	if (raw_writer_object(&t->w, kind, object, name))
		return;
	wt->named[i].fd = (int)object;
	wt->named[i].hash = h;
}

/* ---- short waits: the call sites' table ------------------------------------------------- */

static struct agent_wait_site *site_find(struct agent_wait_thread *wt, uint64_t key)
{
	return &wt->sites[PROBE_FIND(wt->sites, key, AGENT_WAIT_SITES - 1, key, key)];
}

/* Write a WAIT_SUM per site with waits, and start their counts over (writer held). */
static void sites_write(struct agent_thread *t, uint64_t now, bool forget)
{
	struct agent_wait_thread *wt = t->wait;
	int64_t time = (int64_t)(now - t->hdr.origin_ns);
	size_t i;

	for (i = 0; i < AGENT_WAIT_SITES; i++) {
		struct agent_wait_site *s = &wt->sites[i];

		if (!s->key)
			continue;
		if (s->count && raw_writer_wait_sum(&t->w, time, s->stack_id, s->kind, s->object,
						    s->count, s->total_ns))
			wt->lost += s->count;
		s->count = 0;
		s->total_ns = 0;
	}
	if (forget) {
		memset(wt->sites, 0, sizeof(wt->sites));
		wt->used = 0;
	}
	wt->last_flush_ns = now;
}

/*
 * The table's entry of site key, made when new with stack_id (0: the stack where the thread
 * is, taken now); NULL when no stack could be had. Writer held.
 */
static struct agent_wait_site *site_get(struct agent_thread *t, uint64_t key, uint64_t stack_id,
					uint32_t kind, uint64_t object, bool python)
{
	struct agent_wait_thread *wt = t->wait;
	struct agent_wait_site *s = site_find(wt, key);

	if (s->key)
		return s;
	if (!stack_id)
		stack_id = stack_id_here(t, 0, false, python);
	if (!stack_id)
		return NULL;
	if (!probe_has_room(wt->used, AGENT_WAIT_SITES)) {
		sites_write(t, now_ns(), true);
		s = site_find(wt, key);
	}
	s->key = key;
	s->stack_id = stack_id;
	s->kind = kind;
	s->object = object;
	wt->used++;
	return s;
}

/* Count a short wait of site key (stack_id: its stack when known already, else 0). */
static void site_add(struct agent_thread *t, uint64_t key, uint64_t stack_id, uint32_t kind,
		     uint64_t object, uint64_t dur, bool python)
{
	struct agent_wait_site *s = site_get(t, key, stack_id, kind, object, python);

	if (!s) {
		t->wait->lost++;
		return;
	}
	s->count++;
	s->total_ns += dur;
}

uint64_t agent_wait_site_stack(struct agent_thread *t, uint64_t key)
{
	struct agent_wait_thread *wt = t->wait;
	uint64_t id = 0;

	if (!wt || !try_take(&wt->lock))
		return 0;
	id = site_find(wt, key ? key : 1)->stack_id;
	give(&wt->lock);
	return id;
}

static uint64_t site_key(const struct agent_wait_call *c, uint32_t kind, uint64_t object)
{
	uint64_t k = hash_combine(hash_combine(hash_mix(c->site), c->sp), object);

	k = hash_combine(k, kind);
	return k ? k : 1;
}

/* A wait under the threshold: counted under its call site, its stack taken the first time. */
static void record_short(struct agent_thread *t, const struct agent_wait_call *c, uint64_t end,
			 uint32_t kind, uint64_t object)
{
	struct agent_wait_thread *wt = t->wait;
	uint64_t key = site_key(c, kind, object), dur = end - c->start_ns;
	bool python = atomic_load_explicit(&t->py, memory_order_relaxed) && pyagent_active();
	bool known = false;
	sigset_t old;

	if (!agent_take_soon(&wt->lock)) {
		wt->lost++;
		return;
	}
	if (!python) {
		/* The common case: a known site costs no system call. */
		struct agent_wait_site *s = site_find(wt, key);

		if (s->key) {
			s->count++;
			s->total_ns += dur;
			known = true;
			if (end - wt->last_flush_ns < AGENT_WAIT_FLUSH_NS)
				goto out;
		}
	}
	agent_in_agent++;
	if (!agent_wait_writer_take(t, &old)) {
		wt->lost += !known;
		agent_in_agent--;
		goto out;
	}
	if (python) {
		/* The Python frames tell apart the callers of one call site in the interpreter. */
		key = hash_combine(key, agent_python_capture(t));
		site_add(t, key ? key : 1, 0, kind, object, dur, true);
	} else if (!known) {
		site_add(t, key, 0, kind, object, dur, false);
	}
	if (end - wt->last_flush_ns >= AGENT_WAIT_FLUSH_NS)
		sites_write(t, end, false);
	agent_wait_writer_give(t, &old);
	agent_in_agent--;
out:
	give(&wt->lock);
}

/* ---- waits ------------------------------------------------------------------------------- */

/* A WAIT record (t's writer held), its descriptor named first. */
static void write_wait(struct agent_thread *t, uint64_t start, uint64_t end, uint32_t kind,
		       uint64_t object, uint64_t stack_id)
{
	if (!stack_id) {
		t->wait->lost++;
		return;
	}
	name_object(t, kind, object);
	if (raw_writer_wait(&t->w, (int64_t)(start - t->hdr.origin_ns), stack_id, end - start, kind,
			    object))
		t->wait->lost++;
}

/* A wait of at least the threshold: its own record, with the stack where it happened. */
static void record_long(struct agent_thread *t, uint64_t start, uint64_t end, uint32_t kind,
			uint64_t object)
{
	bool python;
	sigset_t old;

	agent_in_agent++;
	if (!agent_wait_writer_take(t, &old)) {
		t->wait->lost++;
		agent_in_agent--;
		return;
	}
	python = atomic_load_explicit(&t->py, memory_order_relaxed) && pyagent_active() &&
		 agent_python_capture(t);
	write_wait(t, start, end, kind, object, stack_id_here(t, 0, false, python));
	/* A thread that waits long now and then still writes out its short waits. */
	if (end - t->wait->last_flush_ns >= AGENT_WAIT_FLUSH_NS && try_take(&t->wait->lock)) {
		sites_write(t, end, false);
		give(&t->wait->lock);
	}
	agent_wait_writer_give(t, &old);
	agent_in_agent--;
}

/* Whether this thread may record now: recording, and not a vfork child's borrowed state. */
struct agent_thread *agent_wait_thread(void)
{
	struct agent_thread *t = agent_self;

	if (!agent_waits_on || !t || !t->wait || t->write_stopped || agent_paused() ||
	    atomic_load_explicit(&t->state, memory_order_relaxed) != AGENT_THREAD_LIVE ||
	    agent_in_vfork_child())
		return NULL;
	return t;
}

/* ---- waits in progress ------------------------------------------------------------------- */

/*
 * A program ended by a signal it does not handle (TERM at a job's time limit, KILL) runs no
 * code of ours: a wait it was in would never be told. So each wait's start, stack, kind and
 * object are kept before it blocks, and the control thread writes a WAIT_OPEN record into
 * the thread's stream for one that lasted AGENT_WAIT_OPEN_NS (agent_wait_scan()); its end
 * then writes a WAIT with the same start, whatever its length, and pfinalize ends one left
 * open at the program's end. The stack is taken once per call site (return address, frame
 * and Python frames): a wait's start costs a table look-up after the first.
 */

void agent_wait_open(const struct agent_wait_call *c, uint32_t kind, uint64_t object)
{
	struct agent_thread *t = agent_wait_thread();
	struct agent_wait_thread *wt;
	uint64_t key, pykey = 0, stack = 0;
	bool python, io;
	size_t slot;
	sigset_t old;
	int saved = errno;

	if (!t)
		return;
	wt = t->wait;
	/*
	 * A wait inside a wait (a runtime's own calls, deeper in the stack): the outer one is the
	 * program's. One whose interposer's frame is gone (this one's is not deeper: a signal
	 * handler jumped out of it with siglongjmp) ended before now: told as ended now if it
	 * was put on record, then replaced.
	 */
	if (atomic_load_explicit(&wt->open.state, memory_order_relaxed)) {
		if (c->sp < wt->open.sp)
			return;
		agent_in_agent++;
		if (agent_wait_writer_take(t, &old)) {
			if (wt->open.written)
				write_wait(t, wt->open.start_ns, c->start_ns, wt->open.kind,
					   wt->open.object, wt->open.stack);
			atomic_store_explicit(&wt->open.state, 0, memory_order_relaxed);
			agent_wait_writer_give(t, &old);
		}
		agent_in_agent--;
		if (atomic_load_explicit(&wt->open.state, memory_order_relaxed)) {
			errno = saved;
			return;
		}
	}
	/*
	 * A Python thread's frames tell its callers apart, but reading them costs some 100 us:
	 * taken at most every AGENT_WAIT_PY_EVERY_NS for reads and writes, and as often for the
	 * other waits (a thread that waits more often, in a loop of I/O or of polls, gets its
	 * native stack: the interpreter's frames, unnamed in Python terms). A sleep after a
	 * write still gets its Python frames.
	 */
	io = kind == RAW_WAIT_READ || kind == RAW_WAIT_WRITE;
	python = atomic_load_explicit(&t->py, memory_order_relaxed) && pyagent_active() &&
		 c->start_ns - wt->open_py_ns[io] >= AGENT_WAIT_PY_EVERY_NS;
	agent_in_agent++;
	if (python && agent_wait_writer_take(t, &old)) {
		wt->open_py_ns[io] = c->start_ns;
		pykey = agent_python_capture(t);
		key = hash_combine(hash_combine(hash_mix(c->site), c->sp), pykey);
		slot = (key ? key : 1) & (AGENT_WAIT_OPEN_STACKS - 1);
		if (wt->open_stacks[slot].key == (key ? key : 1))
			stack = wt->open_stacks[slot].stack;
		else
			stack = stack_id_here(t, 0, false, pykey != 0);
		agent_wait_writer_give(t, &old);
	} else {
		key = hash_combine(hash_mix(c->site), c->sp);
		slot = (key ? key : 1) & (AGENT_WAIT_OPEN_STACKS - 1);
		if (wt->open_stacks[slot].key == (key ? key : 1))
			stack = wt->open_stacks[slot].stack;
		else if (agent_wait_writer_take(t, &old)) {
			stack = stack_id_here(t, 0, false, false);
			agent_wait_writer_give(t, &old);
		}
	}
	agent_in_agent--;
	errno = saved;
	if (!stack)
		return;
	wt->open_stacks[slot].key = key ? key : 1;
	wt->open_stacks[slot].stack = stack;
	wt->open.call = c;
	wt->open.sp = c->sp;
	wt->open.written = false;
	wt->open.start_ns = c->start_ns;
	wt->open.stack = stack;
	wt->open.kind = kind;
	wt->open.object = object;
	atomic_store_explicit(&wt->open.state, 1, memory_order_release);
}

/* The wait c opened ends: whether its WAIT_OPEN was written (its end must be a WAIT then). */
static bool wait_close(const struct agent_wait_call *c)
{
	struct agent_thread *t = agent_self;
	struct agent_wait_thread *wt = t ? t->wait : NULL;
	bool held;

	if (!wt || wt->open.call != c || !atomic_load(&wt->open.state))
		return false;
	/* The control thread may be writing its WAIT_OPEN: a few microseconds. */
	held = agent_take_soon(&t->busy);
	atomic_store_explicit(&wt->open.state, 0, memory_order_release);
	wt->open.call = NULL;
	if (held)
		agent_thread_give(t);
	return wt->open.written;
}

/* Whether the wait in progress is to be put on record, or told still in progress, now. */
static bool open_due(const struct agent_wait_thread *wt, uint64_t now)
{
	uint64_t every = (now - wt->open.start_ns) / 10;

	if (!wt->open.written)
		return now - wt->open.start_ns >= AGENT_WAIT_OPEN_NS;
	return now - wt->open.seen_ns >= (every > AGENT_WAIT_SEEN_NS ? every : AGENT_WAIT_SEEN_NS);
}

void agent_wait_scan(void)
{
	size_t i, n = atomic_load(&agent.nthreads);
	uint64_t now = now_ns();

	if (!agent_waits_on)
		return;
	for (i = 0; i < n && i < AGENT_MAX_THREADS; i++) {
		struct agent_thread *t = agent.threads[i];
		struct agent_wait_thread *wt;

		if (!t || atomic_load(&t->state) != AGENT_THREAD_LIVE || !try_take(&t->busy))
			continue;
		wt = t->wait;
		/* Short waits a second old, of a thread that neither waits nor runs now. */
		if (wt && !t->write_stopped && now - wt->last_flush_ns >= AGENT_WAIT_FLUSH_NS &&
		    atomic_load(&t->state) == AGENT_THREAD_LIVE && try_take(&wt->lock)) {
			sites_write(t, now, false);
			give(&wt->lock);
			agent_account(t);
		}
		if (wt && !t->write_stopped && atomic_load(&wt->open.state) && open_due(wt, now) &&
		    atomic_load(&t->state) == AGENT_THREAD_LIVE) {
			if (!wt->open.written)
				name_object(t, wt->open.kind, wt->open.object);
			if (!raw_writer_wait_open(&t->w,
						  (int64_t)(wt->open.start_ns - t->hdr.origin_ns),
						  wt->open.stack, wt->open.kind, wt->open.object,
						  (int64_t)(now - t->hdr.origin_ns))) {
				wt->open.written = true;
				wt->open.seen_ns = now;
			}
			/* Its short waits before: the thread counts none until this one ends. */
			if (try_take(&wt->lock)) {
				sites_write(t, now, false);
				give(&wt->lock);
			}
			agent_account(t);
		}
		agent_thread_give(t);
	}
}

static void account(const struct agent_wait_call *c, uint64_t end, uint32_t kind, uint64_t object,
		    bool written)
{
	struct agent_thread *t = agent_wait_thread();

	if (!t || end < c->start_ns)
		return;
	/* One put on record while it lasted ends with its own WAIT, short or not. */
	if (written || end - c->start_ns >= agent.cfg.wait_threshold_ns)
		record_long(t, c->start_ns, end, kind, object);
	else
		record_short(t, c, end, kind, object);
}

void agent_wait_leave(const struct agent_wait_call *c, uint32_t kind, uint64_t object)
{
	int saved = errno;

	account(c, now_ns(), kind, object, wait_close(c));
	errno = saved;
}

void agent_wait_leave_at(const struct agent_wait_call *c, uint64_t end_ns, uint32_t kind,
			 uint64_t object)
{
	int saved = errno;

	account(c, end_ns, kind, object, wait_close(c));
	errno = saved;
}

/* Whether a descriptor can block a reader or writer: not a file or a block device. */
static bool fd_can_block(int fd)
{
	struct stat st;

	if (fstat(fd, &st))
		return false;
	return !S_ISREG(st.st_mode) && !S_ISBLK(st.st_mode) && !S_ISDIR(st.st_mode);
}

void agent_wait_leave_io(const struct agent_wait_call *c, uint32_t kind, int fd)
{
	int saved = errno;
	uint64_t end = now_ns(), dur = end - c->start_ns;
	bool written = wait_close(c);

	/*
	 * Too short to have blocked; a short one on a file is the page cache's copy, not a wait.
	 * Disk I/O lasts the threshold or more and is one, whatever the descriptor.
	 */
	if (written || (end > c->start_ns && dur >= AGENT_WAIT_IO_FLOOR_NS &&
			(dur >= agent.cfg.wait_threshold_ns || fd_can_block(fd))))
		account(c, end, kind, fd < 0 ? 0 : (uint64_t)fd, written);
	errno = saved;
}

void agent_wait_record_at(struct agent_thread *t, uint64_t start_ns, uint64_t end_ns, uint64_t key,
			  uint64_t stack_id, uint32_t kind, uint64_t object, bool writer_held)
{
	struct agent_wait_thread *wt = t->wait;
	sigset_t old;

	if (!wt || end_ns < start_ns)
		return;
	agent_in_agent++;
	if (!writer_held && !agent_wait_writer_take(t, &old)) {
		wt->lost++;
		agent_in_agent--;
		return;
	}
	if (end_ns - start_ns >= agent.cfg.wait_threshold_ns)
		write_wait(t, start_ns, end_ns, kind, object, stack_id);
	/* The site's stack is remembered either way: its next wait needs no unwinding. */
	if (stack_id && try_take(&wt->lock)) {
		struct agent_wait_site *s =
			site_get(t, key ? key : 1, stack_id, kind, object, false);

		if (s && end_ns - start_ns < agent.cfg.wait_threshold_ns) {
			s->count++;
			s->total_ns += end_ns - start_ns;
		}
		give(&wt->lock);
	} else if (end_ns - start_ns < agent.cfg.wait_threshold_ns) {
		wt->lost++;
	}
	if (!writer_held)
		agent_wait_writer_give(t, &old);
	agent_in_agent--;
}

void agent_wait_thread_tick(struct agent_thread *t)
{
	struct agent_wait_thread *wt = t->wait;
	uint64_t now;

	/* The lock is the thread's own, taken outside the handler: it is counting a wait now. */
	if (!wt || !try_take(&wt->lock))
		return;
	now = now_ns();
	if (now - wt->last_flush_ns >= AGENT_WAIT_TICK_NS)
		sites_write(t, now, false);
	give(&wt->lock);
}

void agent_wait_thread_turn(struct agent_thread *t)
{
	struct agent_wait_thread *wt = t->wait;

	if (!wt || !try_take(&wt->lock))
		return;
	sites_write(t, now_ns(), true);
	give(&wt->lock);
}

void agent_wait_thread_finish(struct agent_thread *t)
{
	struct agent_wait_thread *wt = t->wait;

	if (!wt)
		return;
	agent_omp_thread_finish(t);
	/*
	 * A wait still in progress as the stream ends (another thread's exit or exec ends it):
	 * it lasted until now. Written (and its WAIT_OPEN closed) here, or its end would be
	 * taken for the program's, which may be much later for a process of a family.
	 */
	if (atomic_load(&wt->open.state)) {
		uint64_t now = now_ns();

		if (wt->open.written || now - wt->open.start_ns >= agent.cfg.wait_threshold_ns)
			write_wait(t, wt->open.start_ns, now, wt->open.kind, wt->open.object,
				   wt->open.stack);
		atomic_store(&wt->open.state, 0);
	}
	/* The thread itself may be counting a wait (another thread ends it at exit): skip. */
	if (!try_take(&wt->lock))
		return;
	sites_write(t, now_ns(), false);
	give(&wt->lock);
	if (wt->lost)
		agent_log("thread %d: %llu waits not recorded (its writer was in use or its "
			  "stream full)",
			  (int)t->tid, (unsigned long long)wt->lost);
}
