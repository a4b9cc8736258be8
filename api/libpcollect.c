/* SPDX-License-Identifier: MIT */
/* libpcollect: the control API (pcollect.h), a call into the agent when there is one. */
#include <dlfcn.h>
#include <stdatomic.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <string.h>

#include "api/pcollect.h"
#include "common/agent-api.h"

#define EXPORT __attribute__((visibility("default")))

/*
 * The agent is found by name at call time (common/agent-api.h): preloaded by pcollect, loaded
 * later by pcollect -target-pid, or not there. Once found it is kept (the agent is never
 * unloaded); until then every call looks again, so a program attached to in the middle of
 * its run is heard from its next call on.
 */
typedef int (*agent_call_fn)(int op, const char *arg);

static _Atomic(agent_call_fn) found;

/*
 * The regions this thread began, innermost last: bit d set for a level begun while no agent
 * answered (before an attach), whose end must not close one of the agent's. Levels past 64
 * are taken as heard.
 */
static __thread uint64_t unheard;
static __thread unsigned depth;

static int agent_call(int op, const char *arg)
{
	agent_call_fn fn = atomic_load_explicit(&found, memory_order_acquire);

	if (!fn) {
		fn = (agent_call_fn)dlsym(RTLD_DEFAULT, PCOLLECT_AGENT_CALL);
		if (!fn)
			return -1;
		atomic_store_explicit(&found, fn, memory_order_release);
	}
	return fn(op, arg);
}

EXPORT void pcollect_pause(void)
{
	agent_call(PCOLLECT_OP_PAUSE, NULL);
}

EXPORT void pcollect_resume(void)
{
	agent_call(PCOLLECT_OP_RESUME, NULL);
}

EXPORT void pcollect_region_begin(const char *name)
{
	bool heard = agent_call(PCOLLECT_OP_REGION_BEGIN, name ? name : "") == 0;

	if (depth < 64) {
		if (heard)
			unheard &= ~(1ull << depth);
		else
			unheard |= 1ull << depth;
	}
	depth++;
}

EXPORT void pcollect_region_end(void)
{
	if (!depth)
		return; /* more ends than begins: nothing of ours to close */
	depth--;
	if (depth >= 64 || !(unheard & (1ull << depth)))
		agent_call(PCOLLECT_OP_REGION_END, NULL);
}

/* Fortran (gfortran's names: a trailing underscore, strings with a hidden length). */
EXPORT void pcollect_pause_(void);
EXPORT void pcollect_resume_(void);
EXPORT void pcollect_region_begin_(const char *name, size_t len);
EXPORT void pcollect_region_end_(void);

void pcollect_pause_(void)
{
	pcollect_pause();
}

void pcollect_resume_(void)
{
	pcollect_resume();
}

/* A Fortran string: len bytes, blank-padded, no NUL. */
void pcollect_region_begin_(const char *name, size_t len)
{
	char buf[256];

	while (len && name[len - 1] == ' ')
		len--;
	if (len >= sizeof(buf))
		len = sizeof(buf) - 1;
	memcpy(buf, name, len);
	buf[len] = '\0';
	pcollect_region_begin(buf);
}

void pcollect_region_end_(void)
{
	pcollect_region_end();
}
