/* SPDX-License-Identifier: MIT */
/* What the agent's core calls of memory-consumption (built into libpcollect-agent-mem.so). */
#ifndef PCOLLECT_COLLECTOR_AGENT_MEMORY_H
#define PCOLLECT_COLLECTOR_AGENT_MEMORY_H

#include <stdbool.h>
#include <stddef.h>

struct agent_thread;

/*
 * memory-consumption interposes malloc, new, mmap and their families. A program profiled for
 * its CPU time must not pay for that, so those wrappers live in a second build of the agent,
 * libpcollect-agent-mem.so (AGENT_MEMORY defined), which pcollect preloads for that analysis
 * only. In the hotspots agent the calls below compile to nothing.
 */
#ifdef AGENT_MEMORY
struct mem_call;
/* The agent's constructor, after the process stream: start recording. */
void mem_start(void);
/* Around the agent's own work (constructor, fork child): its allocations are not counted. */
void mem_agent_enter(void);
void mem_agent_leave(void);
/* A thread's stream opened / is ending (own: the calling thread's). */
void mem_thread_begin(struct agent_thread *t);
void mem_thread_end(struct agent_thread *t, bool own);
/* A fork child lets go of a thread that did not survive the fork. */
void mem_thread_drop(struct agent_thread *t);
/* A fork child: a new aggregate file, empty tables. */
void mem_fork_child(void);
/* The image ends (exit, exec) / goes on after a failed exec. */
void mem_image_end(void);
void mem_image_resume(void);
/* An interpreter was found in a module (under agent.lock) / the scan is over (out of it). */
void mem_python_found(const char *path);
void mem_python_resolve(void);
/* The mmap wrapper made a mapping; ra and cfa: its caller's return address and stack. */
void mem_mapped_at(void *p, size_t len, int prot, int flags, void *ra, void *cfa);
#else
static inline void mem_start(void)
{
}
static inline void mem_agent_enter(void)
{
}
static inline void mem_agent_leave(void)
{
}
static inline void mem_thread_begin(struct agent_thread *t)
{
	(void)t;
}
static inline void mem_thread_end(struct agent_thread *t, bool own)
{
	(void)t;
	(void)own;
}
static inline void mem_thread_drop(struct agent_thread *t)
{
	(void)t;
}
static inline void mem_fork_child(void)
{
}
static inline void mem_image_end(void)
{
}
static inline void mem_image_resume(void)
{
}
static inline void mem_python_found(const char *path)
{
	(void)path;
}
static inline void mem_python_resolve(void)
{
}
static inline void mem_mapped_at(void *p, size_t len, int prot, int flags, void *ra, void *cfa)
{
	(void)p;
	(void)len;
	(void)prot;
	(void)flags;
	(void)ra;
	(void)cfa;
}
#endif

#endif
