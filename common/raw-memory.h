/* SPDX-License-Identifier: MIT */
/* memory-consumption's raw data: the per-process aggregate file and the allocation records. */
#ifndef PCOLLECT_COMMON_RAW_MEMORY_H
#define PCOLLECT_COMMON_RAW_MEMORY_H

/*
 * docs/raw-format.md ("Allocations") describes every byte. The agent does not write one record
 * per allocation: it aggregates in the process, per (thread, call stack), into a file of
 * fixed layout mapped MAP_SHARED (raw/<pid>.pmem, <pid>.x<N>.pmem after an exec): a header
 * with the process's totals and peak, then one entry per distinct (thread, stack). Every
 * counter is stored straight into the page cache, so a program killed by SIGKILL leaves its
 * figures as they were at the kill. An entry names its stack by the STACK (or PY_STACK) id of
 * the thread stream of its tid, written before the entry is published (tid stored last).
 *
 * The thread streams carry one record of the range RAW_REC_ALLOC_FIRST..+15: the live heap
 * and RSS sampled over time (RAW_REC_MEM_COUNTERS).
 */

#include <stdint.h>

#include "common/raw-stream.h"

#define RAW_MEM_MAGIC       "PCMEM\r\n\032" /* 8 bytes, no NUL */
#define RAW_MEM_VERSION     1
#define RAW_MEM_HEADER_SIZE 4096u /* bytes before the first entry */

/* raw_mem_header.flags */
enum raw_mem_flags {
	RAW_MEM_SAMPLED = 1 << 0, /* -knob sampling=bytes:N: counters are unbiased estimates */
	RAW_MEM_HOOKS = 1 << 1,   /* allocations seen through a sanitizer's allocator hooks */
	RAW_MEM_ENDED = 1 << 2,   /* the process ended normally (exit, exec): not killed */
};

/*
 * The file header, native byte order, padded with zeros to RAW_MEM_HEADER_SIZE. Counters are
 * updated as the program runs (plain stores under the agent's lock): a reader of a killed
 * process's file may see the last operation half applied. Times are CLOCK_MONOTONIC ns.
 */
struct raw_mem_header {
	char magic[8];        /* RAW_MEM_MAGIC, stored last when the file is made */
	uint32_t byte_order;  /* RAW_BYTE_ORDER_MARK */
	uint16_t version;     /* RAW_MEM_VERSION */
	uint16_t header_size; /* RAW_MEM_HEADER_SIZE */
	int32_t pid;
	uint32_t generation;   /* execs before this image, as in the stream headers */
	uint32_t entry_size;   /* sizeof(struct raw_mem_entry) */
	uint32_t flags;        /* enum raw_mem_flags */
	uint64_t origin_ns;    /* CLOCK_MONOTONIC when the file was made */
	uint64_t sample_bytes; /* mean bytes between two sampled allocations; 0: exact */
	uint64_t nentries;     /* entries reserved; one whose tid is 0 is not (yet) in use */
	/* The process's live bytes and their peak (estimates when sampled); the other totals
	   are the sums of the entries. */
	uint64_t live_bytes; /* recorded and not freed: leaked at the end */
	uint64_t peak_bytes; /* the largest live_bytes */
	uint64_t peak_ns;    /* when live_bytes last reached peak_bytes (0: unknown) */
	uint64_t epoch;      /* peaks reached: see struct raw_mem_entry */
	/* What was not attributed to a stack. */
	uint64_t untracked_allocs; /* before the agent started, on a thread without a stream, ... */
	uint64_t untracked_bytes;
	uint64_t unknown_frees; /* frees of blocks never recorded (passed through) */
	/* The agent's own cost and its stack cache (docs/pcollect.md). */
	uint64_t agent_bytes;      /* memory the analysis mapped for itself, now */
	uint64_t agent_peak_bytes; /* the most it had mapped */
	uint64_t cache_misses;     /* allocations that were unwound */
	uint64_t verifications;    /* cache hits unwound anyway to check the cache */
	uint64_t mismatches;       /* of which the cache named another stack (a collision) */
	uint64_t escalations;      /* call sites whose key was made longer after a collision */
	uint64_t ended_ns;         /* when the process ended (RAW_MEM_ENDED), else 0 */
	uint64_t sampled_allocs;   /* allocations sampled (RAW_MEM_SAMPLED), real count */
};

/*
 * One (thread, stack), 72 bytes. live = alloc_bytes - freed_bytes. Its live bytes at the
 * moment of the process's peak: when peak_epoch == header.epoch, peak_live (the stack changed
 * since the last peak and kept its value then); otherwise live (unchanged since).
 */
struct raw_mem_entry {
	uint32_t tid; /* the thread whose stream defines the stack; 0: not in use */
	uint32_t reserved;
	uint64_t stack;       /* STACK or PY_STACK id in that thread's stream */
	uint64_t allocs;      /* allocations made at this stack by this thread */
	uint64_t alloc_bytes; /* bytes */
	uint64_t frees;       /* of those blocks, by any thread */
	uint64_t freed_bytes;
	uint64_t temporaries; /* of those blocks, freed as temporaries */
	uint64_t peak_epoch;  /* header.epoch when peak_live was taken */
	uint64_t peak_live;   /* live bytes at the start of epoch peak_epoch */
};

_Static_assert(sizeof(struct raw_mem_header) <= RAW_MEM_HEADER_SIZE, "raw_mem_header too big");
_Static_assert(sizeof(struct raw_mem_header) == 176, "raw_mem_header changed size");
_Static_assert(sizeof(struct raw_mem_entry) == 72, "raw_mem_entry changed size");

/* The live bytes of e at the process's peak (the rule above). */
static inline uint64_t raw_mem_entry_at_peak(const struct raw_mem_entry *e, uint64_t epoch)
{
	if (e->peak_epoch == epoch)
		return e->peak_live;
	return e->alloc_bytes - e->freed_bytes;
}

/* Thread-stream records of the allocation range (32-47). */
enum raw_mem_type {
	/* time:svarint live:varint rss:varint: the process's live bytes and its resident set
	   (bytes), sampled at time */
	RAW_REC_MEM_COUNTERS = RAW_REC_ALLOC_FIRST,
};

/* The METRIC numbers a memory-consumption process declares (RAW_METRIC_KIND_ALLOC; names,
   units and aggregations: common/metric.h). */
#define RAW_METRIC_KIND_ALLOC 3 /* values from the aggregate file, per (thread, stack) */
enum raw_mem_metric {
	RAW_METRIC_MEM_ALLOCATED = 32, /* bytes, sum */
	RAW_METRIC_MEM_ALLOCS = 33,    /* count, sum */
	RAW_METRIC_MEM_FREED = 34,     /* bytes, sum */
	RAW_METRIC_MEM_LEAKED = 35,    /* bytes, sum: live at the end */
	RAW_METRIC_MEM_PEAK = 36,      /* bytes, peak: live at the process's peak */
	RAW_METRIC_MEM_TEMPORARY = 37, /* count, sum */
};

/* Encode a RAW_REC_MEM_COUNTERS payload into buf (at least 3 varints); returns its length. */
size_t raw_mem_counters_encode(uint8_t *buf, int64_t time_ns, uint64_t live, uint64_t rss);

struct raw_mem_counters {
	int64_t time_ns;
	uint64_t live, rss; /* bytes */
};
/* Decode one: 0, or -1 when the payload is malformed. */
int raw_mem_counters_decode(const uint8_t *payload, size_t len, struct raw_mem_counters *out);

/*
 * Check a mapped aggregate file of len bytes: 0 when its header can be read (the entries that
 * follow are (len - header_size) / entry_size at most), -EINVAL when it is not one, -ENODATA
 * when its magic was never stored (a process killed while making it), -EPROTONOSUPPORT for a
 * later version, -EPROTO for the other byte order.
 */
int raw_mem_check(const void *data, uint64_t len);

#endif
