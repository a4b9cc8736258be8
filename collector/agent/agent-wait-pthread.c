/* SPDX-License-Identifier: MIT */
/* Waits on pthread objects and semaphores: mutexes, rwlocks, conditions, joins, barriers. */
#include <dlfcn.h>
#include <errno.h>
#include <semaphore.h>

#include "collector/agent/agent-private.h"

/*
 * A lock is tried first: taken at once, it costs the program one trylock and no clock read,
 * as the uncontended lock it is (and its result is the lock's own: a recursive mutex counts
 * up, a robust one reports its dead owner). Only when it is busy is the real call measured.
 * Conditions, joins and barriers are measured every time. A condition or mutex of CPython's
 * GIL is a wait of kind gil (pyagent_is_gil()).
 */

static struct {
	int (*mutex_lock)(pthread_mutex_t *);
	int (*mutex_trylock)(pthread_mutex_t *);
	int (*mutex_timedlock)(pthread_mutex_t *, const struct timespec *);
	int (*mutex_clocklock)(pthread_mutex_t *, clockid_t, const struct timespec *);
	int (*rdlock)(pthread_rwlock_t *);
	int (*tryrdlock)(pthread_rwlock_t *);
	int (*timedrdlock)(pthread_rwlock_t *, const struct timespec *);
	int (*clockrdlock)(pthread_rwlock_t *, clockid_t, const struct timespec *);
	int (*wrlock)(pthread_rwlock_t *);
	int (*trywrlock)(pthread_rwlock_t *);
	int (*timedwrlock)(pthread_rwlock_t *, const struct timespec *);
	int (*clockwrlock)(pthread_rwlock_t *, clockid_t, const struct timespec *);
	int (*cond_wait)(pthread_cond_t *, pthread_mutex_t *);
	int (*cond_timedwait)(pthread_cond_t *, pthread_mutex_t *, const struct timespec *);
	int (*cond_clockwait)(pthread_cond_t *, pthread_mutex_t *, clockid_t,
			      const struct timespec *);
	int (*join)(pthread_t, void **);
	int (*tryjoin)(pthread_t, void **);
	int (*timedjoin)(pthread_t, void **, const struct timespec *);
	int (*clockjoin)(pthread_t, void **, clockid_t, const struct timespec *);
	int (*barrier_wait)(pthread_barrier_t *);
	int (*sem_wait)(sem_t *);
	int (*sem_trywait)(sem_t *);
	int (*sem_timedwait)(sem_t *, const struct timespec *);
	int (*sem_clockwait)(sem_t *, clockid_t, const struct timespec *);
} real;

void agent_wait_pthread_resolve(void)
{
#define R(field, name) *(void **)&real.field = dlsym(RTLD_NEXT, name)
	R(mutex_lock, "pthread_mutex_lock");
	R(mutex_trylock, "pthread_mutex_trylock");
	R(mutex_timedlock, "pthread_mutex_timedlock");
	R(mutex_clocklock, "pthread_mutex_clocklock");
	R(rdlock, "pthread_rwlock_rdlock");
	R(tryrdlock, "pthread_rwlock_tryrdlock");
	R(timedrdlock, "pthread_rwlock_timedrdlock");
	R(clockrdlock, "pthread_rwlock_clockrdlock");
	R(wrlock, "pthread_rwlock_wrlock");
	R(trywrlock, "pthread_rwlock_trywrlock");
	R(timedwrlock, "pthread_rwlock_timedwrlock");
	R(clockwrlock, "pthread_rwlock_clockwrlock");
	R(cond_wait, "pthread_cond_wait");
	R(cond_timedwait, "pthread_cond_timedwait");
	R(cond_clockwait, "pthread_cond_clockwait");
	R(join, "pthread_join");
	R(tryjoin, "pthread_tryjoin_np");
	R(timedjoin, "pthread_timedjoin_np");
	R(clockjoin, "pthread_clockjoin_np");
	R(barrier_wait, "pthread_barrier_wait");
	R(sem_wait, "sem_wait");
	R(sem_trywait, "sem_trywait");
	R(sem_timedwait, "sem_timedwait");
	R(sem_clockwait, "sem_clockwait");
#undef R
}

#define REAL(field) (real.field ? real.field : (agent_wait_pthread_resolve(), real.field))

static uint32_t gil_or(uint32_t kind, const void *object)
{
	return pyagent_is_gil((uintptr_t)object) ? RAW_WAIT_GIL : kind;
}

/* A call measured every time it is made (waits on), as a wait of kind on object. */
#define MEASURED(kind, object, call)                                                               \
	AGENT_WAIT_MEASURE(int, agent_wait_open(&c, kind, (uintptr_t)(object)), call,              \
			   agent_wait_leave(&c, kind, (uintptr_t)(object)))

/* ---- mutexes ----------------------------------------------------------------------------- */

/* A mutex call: tried first, then measured. */
#define MUTEX_CALL(call)                                                                           \
	do {                                                                                       \
		int tried;                                                                         \
                                                                                                   \
		if (!agent_waits_on)                                                               \
			return call;                                                               \
		if ((tried = REAL(mutex_trylock)(m)) != EBUSY)                                     \
			return tried;                                                              \
		MEASURED(gil_or(RAW_WAIT_MUTEX, m), m, call);                                      \
	} while (0)

AGENT_EXPORT int pthread_mutex_lock(pthread_mutex_t *m)
{
	MUTEX_CALL(REAL(mutex_lock)(m));
}

AGENT_EXPORT int pthread_mutex_timedlock(pthread_mutex_t *m, const struct timespec *abstime)
{
	MUTEX_CALL(REAL(mutex_timedlock)(m, abstime));
}

AGENT_EXPORT int pthread_mutex_clocklock(pthread_mutex_t *m, clockid_t clock,
					 const struct timespec *abstime)
{
	MUTEX_CALL(REAL(mutex_clocklock)(m, clock, abstime));
}

/* ---- rwlocks ----------------------------------------------------------------------------- */

/* A rwlock call: tried first, then measured. */
#define RWLOCK_CALL(tryfn, call)                                                                   \
	do {                                                                                       \
		int tried;                                                                         \
                                                                                                   \
		if (!agent_waits_on)                                                               \
			return call;                                                               \
		if ((tried = REAL(tryfn)(l)) != EBUSY)                                             \
			return tried;                                                              \
		MEASURED(RAW_WAIT_RWLOCK, l, call);                                                \
	} while (0)

AGENT_EXPORT int pthread_rwlock_rdlock(pthread_rwlock_t *l)
{
	RWLOCK_CALL(tryrdlock, REAL(rdlock)(l));
}

AGENT_EXPORT int pthread_rwlock_timedrdlock(pthread_rwlock_t *l, const struct timespec *t)
{
	RWLOCK_CALL(tryrdlock, REAL(timedrdlock)(l, t));
}

AGENT_EXPORT int pthread_rwlock_clockrdlock(pthread_rwlock_t *l, clockid_t clock,
					    const struct timespec *t)
{
	RWLOCK_CALL(tryrdlock, REAL(clockrdlock)(l, clock, t));
}

AGENT_EXPORT int pthread_rwlock_wrlock(pthread_rwlock_t *l)
{
	RWLOCK_CALL(trywrlock, REAL(wrlock)(l));
}

AGENT_EXPORT int pthread_rwlock_timedwrlock(pthread_rwlock_t *l, const struct timespec *t)
{
	RWLOCK_CALL(trywrlock, REAL(timedwrlock)(l, t));
}

AGENT_EXPORT int pthread_rwlock_clockwrlock(pthread_rwlock_t *l, clockid_t clock,
					    const struct timespec *t)
{
	RWLOCK_CALL(trywrlock, REAL(clockwrlock)(l, clock, t));
}

/* ---- conditions, joins, barriers --------------------------------------------------------- */

AGENT_EXPORT int pthread_cond_wait(pthread_cond_t *cv, pthread_mutex_t *m)
{
	MEASURED(gil_or(RAW_WAIT_COND, cv), cv, REAL(cond_wait)(cv, m));
}

AGENT_EXPORT int pthread_cond_timedwait(pthread_cond_t *cv, pthread_mutex_t *m,
					const struct timespec *abstime)
{
	MEASURED(gil_or(RAW_WAIT_COND, cv), cv, REAL(cond_timedwait)(cv, m, abstime));
}

AGENT_EXPORT int pthread_cond_clockwait(pthread_cond_t *cv, pthread_mutex_t *m, clockid_t clock,
					const struct timespec *abstime)
{
	MEASURED(gil_or(RAW_WAIT_COND, cv), cv, REAL(cond_clockwait)(cv, m, clock, abstime));
}

AGENT_EXPORT int pthread_barrier_wait(pthread_barrier_t *b)
{
	MEASURED(RAW_WAIT_BARRIER, b, REAL(barrier_wait)(b));
}

/* A join of a thread that has ended already costs a tryjoin and no clock read. */
#define JOIN_CALL(call)                                                                            \
	do {                                                                                       \
		int tried;                                                                         \
                                                                                                   \
		if (agent_waits_on && (tried = REAL(tryjoin)(th, ret)) != EBUSY)                   \
			return tried;                                                              \
		MEASURED(RAW_WAIT_JOIN, th, call);                                                 \
	} while (0)

AGENT_EXPORT int pthread_join(pthread_t th, void **ret)
{
	JOIN_CALL(REAL(join)(th, ret));
}

AGENT_EXPORT int pthread_timedjoin_np(pthread_t th, void **ret, const struct timespec *abstime)
{
	JOIN_CALL(REAL(timedjoin)(th, ret, abstime));
}

AGENT_EXPORT int pthread_clockjoin_np(pthread_t th, void **ret, clockid_t clock,
				      const struct timespec *abstime)
{
	JOIN_CALL(REAL(clockjoin)(th, ret, clock, abstime));
}

/* ---- semaphores -------------------------------------------------------------------------- */

/*
 * A semaphore that can be taken costs a trywait (errno kept: it sets EAGAIN when it
 * cannot). A wait interrupted by our sampling signal alone is resumed: the program would not
 * have been interrupted without us (a timed wait goes on to the same deadline).
 */
#define SEM_CALL(call)                                                                             \
	do {                                                                                       \
		struct agent_wait_call c;                                                          \
		int r, saved = errno;                                                              \
		bool measured;                                                                     \
		unsigned sigs;                                                                     \
                                                                                                   \
		if (agent_waits_on && !REAL(sem_trywait)(s))                                       \
			return 0;                                                                  \
		errno = saved;                                                                     \
		measured = agent_waits_on && agent_wait_enter(&c, AGENT_WAIT_SITE, AGENT_WAIT_SP); \
		if (measured)                                                                      \
			agent_wait_open(&c, RAW_WAIT_SEMAPHORE, (uintptr_t)s);                     \
		do {                                                                               \
			sigs = agent_sig_count;                                                    \
			r = call;                                                                  \
		} while (r && errno == EINTR && sigs != agent_sig_count && agent.active);          \
		if (!r)                                                                            \
			errno = saved;                                                             \
		if (measured)                                                                      \
			agent_wait_leave(&c, RAW_WAIT_SEMAPHORE, (uintptr_t)s);                    \
		return r;                                                                          \
	} while (0)

AGENT_EXPORT int sem_wait(sem_t *s)
{
	SEM_CALL(REAL(sem_wait)(s));
}

AGENT_EXPORT int sem_timedwait(sem_t *s, const struct timespec *abstime)
{
	SEM_CALL(REAL(sem_timedwait)(s, abstime));
}

AGENT_EXPORT int sem_clockwait(sem_t *s, clockid_t clock, const struct timespec *abstime)
{
	SEM_CALL(REAL(sem_clockwait)(s, clock, abstime));
}
