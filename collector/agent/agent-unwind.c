/* SPDX-License-Identifier: MIT */
/* The agent's one libunwind loop (agent-unwind.h): the handler's samples, waits, MPI calls. */
#define UNW_LOCAL_ONLY
#include <libunwind.h>

#include "collector/agent/agent-private.h"
#include "collector/agent/agent-unwind.h"

/* Whether the frame at ip is one u leaves out (the first one kept ends the skipping). */
static bool skips(struct agent_unwind *u, unw_word_t ip, unw_word_t *last)
{
	if (u->skip == AGENT_UNWIND_SKIP_TO_RET ? ip != u->until : agent_ip_is_ours(ip)) {
		*last = ip;
		return true;
	}
	u->skipped = true;
	if (u->skip == AGENT_UNWIND_SKIP_OURS_LAST && *last && u->n < u->max)
		u->ips[u->n++] = *last;
	return false;
}

/*
 * Step from c's frame outwards into u. A frame is stored only while there is room: the first
 * that finds none marks the stack truncated, so a stack of exactly u->max frames is whole.
 */
static void walk(struct agent_unwind *u, unw_cursor_t *c)
{
	bool skipping = u->skip != AGENT_UNWIND_KEEP_ALL;
	unw_word_t ip, last = 0;
	int r;

	for (;;) {
		if (unw_get_reg(c, UNW_REG_IP, &ip) < 0 || ip == 0)
			break;
		if (__builtin_expect(skipping, 0))
			skipping = skips(u, ip, &last);
		if (!skipping) {
			if (u->n >= u->max) {
				u->flags |= RAW_STACK_TRUNCATED;
				break;
			}
			u->ips[u->n++] = ip;
		}
		r = unw_step(c);
		if (r <= 0) {
			if (r < 0)
				u->flags |= RAW_STACK_UNWIND_ERROR;
			break;
		}
	}
}

uint32_t agent_unwind_signal(struct agent_unwind *u, void *uc)
{
	unw_cursor_t c;

	u->flags |= RAW_STACK_FIRST_IS_PC;
	agent_in_unwind++;
	if (unw_init_local2(&c, (unw_context_t *)uc, UNW_INIT_SIGNAL_FRAME) >= 0)
		walk(u, &c);
	agent_in_unwind--;
	return u->n;
}

uint32_t agent_unwind_here(struct agent_unwind *u)
{
	unw_context_t uc;
	unw_cursor_t c;

	/* The context stays valid while this frame lives: the walk runs under it. */
	agent_in_unwind++;
	if (!unw_getcontext(&uc) && !unw_init_local(&c, &uc))
		walk(u, &c);
	agent_in_unwind--;
	return u->n;
}
