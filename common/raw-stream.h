/* SPDX-License-Identifier: MIT */
/* Raw stream format v2: the contract between the agent (writer) and pfinalize (reader). */
#ifndef PCOLLECT_COMMON_RAW_STREAM_H
#define PCOLLECT_COMMON_RAW_STREAM_H

/*
 * This header includes no SQLite, libdwarf or libunwind header: the agent and the finalizer
 * both build against it. docs/raw-format.md describes every byte; keep them in step.
 *
 * A stream is one file per thread of a profiled process, plus one per process image for its
 * process and module records:
 *
 *   file   := file_header (padding | chunk)*
 *   chunk  := chunk_header record*        (chunk_header.size bytes of records)
 *   record := type:u8 length:varint payload[length]
 *
 * The agent writes straight into a MAP_SHARED window of the file (see raw_writer_init_mapped):
 * what it wrote is in the page cache at once and survives abort(), a crash or SIGKILL of the
 * program with no handler of ours. The chunk being filled is "open" (size RAW_CHUNK_OPEN, no
 * checksum yet); each record's type byte is stored last into memory that is zero until
 * written, so a reader decodes an open chunk up to its first zero type byte and never sees
 * half a record. A closed chunk carries a CRC-32 of its header and records; the reader skips
 * a damaged, cut, repeated or out-of-order chunk and resynchronises on the next chunk magic,
 * counting what it skipped and why. Zero bytes between chunks and at the end (a window's
 * unused tail) are padding, not damage. A reader skips record types it does not know by
 * their length, so later record types do not break older readers.
 *
 * Integers in records are LEB128 varints (unsigned) or zigzag varints (signed, "svarint").
 * Times are nanoseconds of the header's clock relative to header.origin_ns, as svarints.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RAW_MAGIC           "PCRAW\r\n\032" /* 8 bytes, no NUL: catches text-mode mangling */
#define RAW_VERSION         2               /* what the writer writes */
#define RAW_VERSION_MIN     1               /* the oldest version the reader reads */
#define RAW_BYTE_ORDER_MARK 0x01020304u     /* as written by the writer, in its native order */
#define RAW_CHUNK_MAGIC     0x4b484350u     /* "PCHK" read as a little-endian u32 */
#define RAW_CHUNK_OPEN      0xffffffffu     /* chunk_header.size of a chunk still being filled */

/* Limits a reader enforces; a writer never produces more. */
#define RAW_MAX_CHUNK       (16u << 20)    /* bytes of records in one chunk */
#define RAW_MAX_DEPTH       2048           /* frames in one stack */
#define RAW_MAX_SEGMENTS    64             /* segments in one module record */
#define RAW_MAX_ARGS        4096           /* argv entries in one process record */
#define RAW_MAX_BUILD_ID    64             /* bytes */
#define RAW_MIN_BUFFER      4096           /* smallest writer buffer or window */
#define RAW_MAX_WEIGHT      (1u << 24)     /* sampling intervals one sample may stand for */
#define RAW_MIN_INTERVAL_NS 1000ull        /* header.interval_ns a reader accepts: 1 us.. */
#define RAW_MAX_INTERVAL_NS 10000000000ull /* ..10 s */
/* ns: how often the agent writes THREAD_CPU for a thread sampled since its last one */
#define RAW_THREAD_CPU_EVERY_NS 100000000ull

/* What the header's clock and the samples measure. */
enum raw_sample_clock {
	RAW_SAMPLE_NONE = 0,       /* the stream carries no samples */
	RAW_SAMPLE_THREAD_CPU = 1, /* one sample weight unit = interval_ns of thread CPU time */
	RAW_SAMPLE_WALL = 2,       /* one sample weight unit = interval_ns of wall time */
};

/* What a stream holds. */
enum raw_stream_kind {
	RAW_STREAM_THREAD = 1,  /* one thread: samples, stacks, thread and lost records */
	RAW_STREAM_PROCESS = 2, /* one process image: process and module records (tid: the
				   thread that created it) */
};

/*
 * File header, 144 bytes, native byte order (byte_order tells which). Version 1 headers are
 * the first 128 bytes; a reader gives them stream_id from a hash of those bytes and kind
 * RAW_STREAM_THREAD.
 */
struct raw_file_header {
	char magic[8];               /* RAW_MAGIC */
	uint32_t byte_order;         /* RAW_BYTE_ORDER_MARK */
	uint16_t version;            /* RAW_VERSION */
	uint16_t header_size;        /* bytes: sizeof(struct raw_file_header) */
	int32_t pid;                 /* process that wrote the stream */
	int32_t tid;                 /* thread that wrote the stream */
	int32_t rank;                /* MPI rank, or -1 outside a parallel job */
	uint32_t clock_id;           /* clockid_t of all record times: CLOCK_MONOTONIC (1) */
	uint64_t origin_ns;          /* ns: clock_id's value when the stream began */
	uint64_t origin_realtime_ns; /* ns since the Unix epoch at the same instant */
	uint64_t interval_ns;        /* ns: one sample weight unit; 0 without samples */
	uint32_t sample_clock;       /* enum raw_sample_clock */
	uint32_t generation;         /* execs the process went through before this image */
	char host[64];               /* short host name, NUL padded */
	/* version 2 */
	uint64_t stream_id;  /* random: tells a copied stream from another one */
	uint32_t kind;       /* enum raw_stream_kind */
	uint32_t header_crc; /* CRC-32 of the header_size header bytes, this field
				counted as 0 */
};
_Static_assert(sizeof(struct raw_file_header) == 144, "raw_file_header changed size");
#define RAW_HEADER_V1_SIZE 128u

/*
 * Chunk header, 24 bytes, native byte order. Version 2: crc covers the header (crc counted as
 * 0) and the records, so seq and base_ns cannot be flipped silently; version 1: the records.
 * A mapped writer starts each chunk on an 8-byte boundary of the file.
 */
struct raw_chunk_header {
	uint32_t magic;  /* RAW_CHUNK_MAGIC */
	uint32_t size;   /* bytes of records after this header; RAW_CHUNK_OPEN while open */
	uint32_t crc;    /* CRC-32 (IEEE, reflected); 0 while open */
	uint32_t seq;    /* chunk number in this stream, from 0, always increasing */
	int64_t base_ns; /* ns since origin: the time sample deltas in this chunk start from */
};
_Static_assert(sizeof(struct raw_chunk_header) == 24, "raw_chunk_header changed size");

/* The checksum of a version 2 chunk: its header's other 20 bytes (crc left out) and its records. */
uint32_t raw_chunk_crc(const struct raw_chunk_header *ch, const void *records);

/*
 * Record types. 1-15 are the core; 16-127 are assigned to analyses; a reader returns types it
 * does not decode with only their payload, and skips them by length.
 */
enum raw_type {
	RAW_REC_SAMPLE = 1,        /* dt:svarint stack:varint weight:varint */
	RAW_REC_STACK = 2,         /* id:varint flags:varint n:varint ip[n]:svarint (delta) */
	RAW_REC_THREAD_START = 3,  /* tid:varint time:svarint name:string */
	RAW_REC_THREAD_END = 4,    /* tid:varint time:svarint cpu_ns:varint */
	RAW_REC_THREAD_NAME = 5,   /* tid:varint time:svarint name:string */
	RAW_REC_PROCESS = 6,       /* see struct raw_process */
	RAW_REC_MODULE_LOAD = 7,   /* see struct raw_module */
	RAW_REC_MODULE_UNLOAD = 8, /* time:svarint base:varint path:string */
	RAW_REC_LOST = 9,          /* time:svarint reason:varint count:varint weight:varint */
	RAW_REC_METRIC = 10,       /* id:varint name:string unit:varint aggregation:varint
				      kind:varint */
	RAW_REC_VALUE = 11,        /* dt:svarint stack:varint metric:varint value:svarint */
	RAW_REC_NOTE = 12,         /* time:svarint tid:varint kind:varint detail:string */
	RAW_REC_REGION_BEGIN = 13, /* time:svarint depth:varint name:string */
	RAW_REC_REGION_END = 14,   /* time:svarint depth:varint */
	RAW_REC_THREAD_CPU = 15,   /* tid:varint time:svarint cpu_ns:varint: the CPU time the
				      thread used so far, as THREAD_END counts it, looked at by
				      the control thread: the figure of a thread that had no end
				      of its own (its process ended by a signal) */
	RAW_REC_CORE_LAST = 15,
	/* Reserved ranges for later analyses; payloads documented with them. */
	RAW_REC_PYTHON_FIRST = 16, /* 16-31: Python code objects and frames */
	RAW_REC_ALLOC_FIRST = 32,  /* 32-47: allocations */
	RAW_REC_WAIT_FIRST = 48,   /* 48-63: waits and locks */
	RAW_REC_WAIT = 48,         /* time:svarint stack:varint duration:varint kind:varint
				      object:varint */
	RAW_REC_WAIT_SUM = 49,     /* time:svarint stack:varint kind:varint object:varint
				      count:varint total:varint */
	RAW_REC_OBJECT = 50,       /* kind:varint object:varint name:string */
	RAW_REC_OMP_REGION = 51,   /* time:svarint duration:varint object:varint
				      threads:varint */
	RAW_REC_WAIT_OPEN = 52,    /* time:svarint stack:varint kind:varint object:varint
				      seen:svarint: a wait begun at time, not ended at seen */
	RAW_REC_ORIGIN = 53,       /* time:svarint tid:varint stack:varint kind:varint: from
				      time on, the thread's work was started by thread tid at
				      its stack (enum raw_origin_kind) */
	RAW_REC_MAX = 127,
};

/* RAW_REC_ORIGIN kinds. */
enum raw_origin_kind {
	RAW_ORIGIN_CREATE = 0, /* the thread's creation (pthread_create) */
	RAW_ORIGIN_WORK = 1,   /* a part of work another thread started (an OpenMP region's
				  implicit task) begins, lasting to the next one; tid 0: the
				  thread's own work again */
	RAW_ORIGIN_TASK = 2,   /* a thread pool task another thread submitted begins, as
				  RAW_ORIGIN_WORK (tid 0: it ended); stack: the submitting stack */
};

/* RAW_REC_STACK flags. */
enum raw_stack_flags {
	RAW_STACK_TRUNCATED = 1 << 0,    /* the unwinder stopped at the depth limit */
	RAW_STACK_UNWIND_ERROR = 1 << 1, /* the unwinder stopped on an error, not at the root */
	RAW_STACK_FIRST_IS_PC = 1 << 2,  /* ip[0] is the interrupted pc (exact), the rest are
					    return addresses (look up at ip - 1) */
	RAW_STACK_AGENT = 1 << 3,        /* taken while the agent's own code ran in the thread
					    (its module scan, its records): no frames (depth 0),
					    the collector's overhead, never the program's */
};
/* The one frame pfinalize gives a RAW_STACK_AGENT stack, a root of its own (docs/schema.md). */
#define RAW_STACK_AGENT_NAME "[pcollect agent]"

/* RAW_REC_PROCESS origin. */
enum raw_process_origin {
	RAW_PROCESS_START = 0, /* the agent started in a new process (launch or unknown parent) */
	RAW_PROCESS_FORK = 1,  /* child of fork()/vfork(): parent_pid is the parent */
	RAW_PROCESS_EXEC = 2,  /* a new image in the same pid after exec */
};

/* RAW_REC_MODULE_LOAD kinds. */
enum raw_module_kind {
	RAW_MODULE_FILE = 0, /* an ELF file mapped from path */
	RAW_MODULE_ANON = 1, /* executable anonymous memory (JIT code): path is "[anon]" or the
				mapping's name */
	RAW_MODULE_VDSO = 2, /* the kernel's [vdso] */
};

/* RAW_REC_LOST reasons. */
enum raw_lost_reason {
	RAW_LOST_BUFFER = 1,          /* the record did not fit or could not be written */
	RAW_LOST_UNWIND = 2,          /* no stack could be taken */
	RAW_LOST_DATA_LIMIT = 3,      /* -data-limit reached: sampling stopped */
	RAW_LOST_STACK_TABLE = 4,     /* the per-thread stack table was full */
	RAW_LOST_BUSY = 5,            /* the signal arrived while the thread's writer was in use */
	RAW_LOST_FILE_SIZE_LIMIT = 6, /* the stream reached RLIMIT_FSIZE: sampling stopped */
	RAW_LOST_DISK_FULL = 7,       /* no room on the file system (ENOSPC, EDQUOT): sampling
					 stopped */
	RAW_LOST_NO_SIGNAL = 8,       /* the program claimed every real-time signal: sampling
					 stopped, the CPU time after counted */
	RAW_LOST_ADDRESS_SPACE = 9,   /* the stream's next window could not be mapped (ENOMEM:
					 RLIMIT_AS, or no address space left): sampling stopped */
	RAW_LOST_REASON_MAX = 9,
};

/* The name of a lost reason as reports show it ("busy", "file-size-limit"), "other" else. */
const char *raw_lost_reason_name(uint32_t reason);

/* RAW_REC_NOTE kinds: what happened to a thread's sampling (in the process stream). */
enum raw_note_kind {
	RAW_NOTE_TIMER_FALLBACK = 1, /* sampled with the CPU-time timer: no task-clock event */
	RAW_NOTE_NO_STREAM = 2,      /* not sampled: its stream could not be created */
	RAW_NOTE_STREAM_STOPPED = 3, /* its stream stopped early (detail: why) */
	RAW_NOTE_PROCESS_CPU = 4,    /* tid: the pid; detail: the CPU time in ns (decimal) all
					the process's threads used while the image ran, sampled
					or not (CLOCK_PROCESS_CPUTIME_ID at its end less at the
					agent's start): threads made after sampling stopped have
					no stream, and count here */
	RAW_NOTE_KIND_MAX = 4,
};

/*
 * RAW_REC_REGION_BEGIN/END: a region of the thread's time named by the program
 * (pcollect_region_begin(), pcollect.region() in Python), written by the thread itself into
 * its stream, so the records and the samples between them come in time order. depth is the
 * region's nesting level, 1 for the outermost: a BEGIN at depth d replaces whatever the
 * reader had at depths d and over, an END at depth d closes the region at d (and any deeper),
 * so a record lost to damage costs only until the next one.
 */
#define RAW_MAX_REGION_DEPTH 64  /* nesting levels a reader keeps */
#define RAW_MAX_REGION_NAME  255 /* bytes of a region name */

/* RAW_REC_METRIC: what a metric's values are. */
enum raw_metric_unit {
	RAW_UNIT_NS = 0,
	RAW_UNIT_BYTES = 1,
	RAW_UNIT_COUNT = 2,
};

enum raw_metric_aggregation {
	RAW_AGG_SUM = 0,  /* values add up */
	RAW_AGG_PEAK = 1, /* the largest value counts */
};

/* RAW_REC_METRIC kind: which records carry the metric. */
enum raw_metric_kind {
	RAW_METRIC_KIND_CPU_SAMPLE = 1, /* SAMPLE records: weight x interval_ns */
	RAW_METRIC_KIND_WAIT = 2,       /* WAIT and WAIT_SUM records: Wait Time is their duration
					   and total, Wait Count 1 and count */
};

/*
 * The METRIC numbers of the metrics the agent declares (their names, units and aggregations:
 * common/metric.h). CPU Time: every process stream declares it, samples carry it implicitly.
 * Wait Time and Wait Count: a process whose threads record waits (-collect threading).
 */
#define RAW_METRIC_CPU_TIME   0
#define RAW_METRIC_WAIT_TIME  1
#define RAW_METRIC_WAIT_COUNT 2

/*
 * What a thread waited for: RAW_REC_WAIT and RAW_REC_WAIT_SUM kind. The names
 * (raw_wait_kind_name()) are what result.db's contexts.wait_kind holds. The object of each:
 * the address of the mutex, rwlock, condition, barrier or semaphore; the descriptor of I/O
 * (the first one polled, -1 written as 0); the pid waited for (0: any child); the pthread_t
 * of a join; 0 for sleeps; the futex word; the GIL's condition or mutex; for OpenMP, the
 * code address of the construct (the return address into the program of the runtime call
 * that began the parallel region or the barrier) or the lock's address.
 */
enum raw_wait_kind {
	RAW_WAIT_MUTEX = 1,
	RAW_WAIT_RWLOCK = 2,
	RAW_WAIT_COND = 3,
	RAW_WAIT_JOIN = 4,
	RAW_WAIT_BARRIER = 5,
	RAW_WAIT_SEMAPHORE = 6,
	RAW_WAIT_SLEEP = 7,
	RAW_WAIT_POLL = 8,   /* poll, ppoll, select, pselect, epoll_wait, epoll_pwait(2) */
	RAW_WAIT_READ = 9,   /* read, readv, pread, recv, recvfrom, recvmsg */
	RAW_WAIT_WRITE = 10, /* write, writev, pwrite, send, sendto, sendmsg */
	RAW_WAIT_ACCEPT = 11,
	RAW_WAIT_CONNECT = 12,
	RAW_WAIT_CHILD = 13,       /* wait, waitpid, waitid, wait3, wait4 */
	RAW_WAIT_FUTEX = 14,       /* syscall(SYS_futex, ...) */
	RAW_WAIT_GIL = 15,         /* a CPython thread waiting for the GIL */
	RAW_WAIT_OMP_BARRIER = 16, /* OpenMP barriers, implicit and explicit */
	RAW_WAIT_OMP_LOCK = 17,    /* OpenMP critical sections, locks, ordered */
	RAW_WAIT_OMP_OTHER = 18,   /* OpenMP taskwait, taskgroup, ... */
	/* An asyncio task suspended at an await (its duration, not a blocked thread: Task Wait
	   Time, docs/python.md) */
	RAW_WAIT_TASK = 19,
	RAW_WAIT_KIND_MAX = 19, /* values up to 31 are reserved for later kinds */
};

/* The name of a wait kind ("mutex", "openmp-barrier"), "other" for an unknown one. */
const char *raw_wait_kind_name(uint32_t kind);

/* A string in a record: length:varint then that many bytes, no NUL. */
struct raw_string {
	const char *s; /* not NUL terminated; points into the reader's data */
	uint32_t len;
};

/* One mapped segment of a module: [start, start + size) maps file_offset. */
struct raw_segment {
	uint64_t start;       /* runtime address */
	uint64_t size;        /* bytes */
	uint64_t file_offset; /* bytes into the file */
	uint32_t prot;        /* PF_R | PF_W | PF_X, as in ELF program headers */
};

/*
 * RAW_REC_MODULE_LOAD payload:
 *   time:svarint kind:varint base:varint path:string build_id_len:varint build_id[len]
 *   nsegs:varint { start:varint size:varint file_offset:varint prot:varint } * nsegs
 * base is the load bias: file virtual address = runtime address - base.
 */
struct raw_module {
	int64_t time_ns;
	uint32_t kind; /* enum raw_module_kind */
	uint64_t base;
	const char *path;
	uint32_t path_len;
	const uint8_t *build_id;
	uint32_t build_id_len;
	uint32_t nsegs;
	const struct raw_segment *segs;
};

/*
 * RAW_REC_PROCESS payload:
 *   pid:varint ppid:varint time:svarint origin:varint parent_pid:varint generation:varint
 *   exe:string argc:varint arg:string * argc
 * parent_pid is the process this one forked from (origin FORK), itself (EXEC), or the launcher
 * or real parent (START). generation counts the execs this pid went through.
 */
struct raw_process {
	int32_t pid;
	int32_t ppid;
	int64_t time_ns;
	uint32_t origin; /* enum raw_process_origin */
	int32_t parent_pid;
	uint32_t generation;
	const char *exe;
	uint32_t exe_len;
	uint32_t argc;
	/* writer: argv[i] NUL terminated; reader: args[i] (argv is NULL) */
	const char *const *argv;
	const struct raw_string *args;
};

/* ---- varints ---------------------------------------------------------------------------- */

#define RAW_VARINT_MAX 10 /* bytes of a 64-bit varint */

static inline size_t raw_varint_put(uint8_t *p, uint64_t v)
{
	size_t n = 0;
	while (v >= 0x80) {
		p[n++] = (uint8_t)(v | 0x80);
		v >>= 7;
	}
	p[n++] = (uint8_t)v;
	return n;
}

static inline size_t raw_varint_size(uint64_t v)
{
	size_t n = 1;
	while (v >= 0x80) {
		v >>= 7;
		n++;
	}
	return n;
}

static inline uint64_t raw_zigzag(int64_t v)
{
	return ((uint64_t)v << 1) ^ (uint64_t)(v >> 63);
}

static inline int64_t raw_unzigzag(uint64_t v)
{
	return (int64_t)(v >> 1) ^ -(int64_t)(v & 1);
}

/*
 * Decode a varint from [*p, end). Returns 0 and advances *p, or -1 when the input ends first
 * or the value does not fit in 64 bits.
 */
static inline int raw_varint_get(const uint8_t **p, const uint8_t *end, uint64_t *out)
{
	uint64_t v = 0;
	unsigned shift = 0;
	const uint8_t *q = *p;

	while (q < end) {
		uint8_t b = *q++;
		if (shift == 63 && b > 1)
			return -1;
		v |= (uint64_t)(b & 0x7f) << shift;
		if (!(b & 0x80)) {
			*p = q;
			*out = v;
			return 0;
		}
		shift += 7;
		if (shift > 63)
			return -1;
	}
	return -1;
}

/* CRC-32 (IEEE 802.3, reflected, as zlib's crc32()); async-signal-safe. */
uint32_t raw_crc32(uint32_t crc, const void *data, size_t len);

/* ---- writer: async-signal-safe ------------------------------------------------------------ */

/*
 * A writer appends records either to a caller-supplied buffer, written out as whole chunks
 * with write(2) ("buffered": tools and tests), or straight into a mapped window of the stream
 * file handed out by a window function ("mapped": the agent). It calls no malloc, takes no
 * lock and uses no stdio, so it may be used from a signal handler. It is not reentrant: a
 * thread must not enter a writer from a signal handler while the same writer is in use outside
 * it (the agent guards each writer with a per-thread busy flag and counts RAW_LOST_BUSY).
 *
 * Every raw_writer_* call returns 0, or a negative errno: -E2BIG for a record larger than the
 * buffer or window (dropped and counted in dropped_records); buffered, the write(2) error,
 * after which the writer keeps its records and reports the error again on the next flush;
 * mapped, the window function's error (-EFBIG at RLIMIT_FSIZE, -ENOSPC...), after which the
 * writer is full: only the reserve at the end of its last window is left, for the records a
 * stream ends with (raw_writer_finishing()).
 */

/*
 * A mapped writer's window function: unmap the current window (if any) and map the next one
 * at file offset off, at least min bytes, page aligned, zero where not yet written. Returns 0
 * with *base and *size set, or a negative errno. Async-signal-safe.
 */
typedef int (*raw_window_fn)(void *ctx, uint64_t off, size_t min, uint8_t **base, size_t *size);

struct raw_writer {
	int fd;               /* buffered: not owned; mapped: -1 */
	uint8_t *buf;         /* buffered: the caller's buffer; mapped: the current window */
	size_t cap;           /* bytes of buf */
	size_t len;           /* bytes of buf used */
	size_t chunk;         /* offset in buf of the open chunk's header; SIZE_MAX: none */
	size_t chunk_max;     /* a chunk is closed once its records pass this many bytes */
	size_t reserve;       /* mapped: bytes at the end of a window for the closing records */
	bool finishing;       /* the closing records are being written: the reserve is theirs */
	bool full;            /* mapped: no next window could be had */
	raw_window_fn window; /* mapped */
	void *window_ctx;
	uint64_t window_off;      /* mapped: file offset of buf */
	int64_t chunk_base_ns;    /* base_ns of the open chunk */
	int64_t last_ns;          /* time of the last sample or value: deltas are taken from it */
	uint32_t seq;             /* number of the next chunk */
	uint64_t bytes_written;   /* bytes of the stream so far, header included */
	uint64_t dropped_records; /* records that could not be kept */
	int error;                /* last write or window error (negative errno), 0 if none */
	/*
	 * Set: a chunk's base_ns is the time it opened (this header's clock), not the last
	 * record's, so that the next chunk's base bounds every record of this one (-ring-buffer
	 * drops a chunk by it), and its writers define in each chunk what its records name.
	 * NULL: the last sample's time, which costs no clock read.
	 */
	const struct raw_file_header *clock;
};

/*
 * Fill a header for the calling thread; reads the clocks and draws a random stream_id (from
 * getrandom(), or mixed from the clocks, pid, tid and an address if that fails); kind is
 * RAW_STREAM_THREAD. Async-signal-safe. Change fields afterwards as needed: the writer
 * computes header_crc when it writes the header.
 */
void raw_header_init(struct raw_file_header *h, int32_t pid, int32_t tid, int32_t rank,
		     const char *host, uint64_t interval_ns, uint32_t sample_clock);
/*
 * Streams of one process image are those with the same (pid, generation): the finalizer
 * applies the module and process records of all of them to all of their samples. The agent
 * sets h->generation after raw_header_init() when the image came from an exec.
 */

/* The CRC-32 header_crc must hold for h (of h->header_size bytes, at most sizeof(*h)). */
uint32_t raw_header_crc(const struct raw_file_header *h);

/* The time to put in records: ns of CLOCK_MONOTONIC since h->origin_ns. */
int64_t raw_header_now(const struct raw_file_header *h);

/*
 * Start a buffered stream on fd (positioned at 0): writes the header at once. buf (cap bytes,
 * at least RAW_MIN_BUFFER) belongs to the caller and must live as long as the writer.
 */
int raw_writer_init(struct raw_writer *w, int fd, void *buf, size_t cap,
		    const struct raw_file_header *h);

/*
 * Start a mapped stream: asks fn for the window at offset 0 and writes the header into it.
 * Chunks are closed (checksummed) when their records pass chunk_max bytes, when a window is
 * full, and by raw_writer_flush(); reserve bytes at the end of every window are kept for the
 * records written after raw_writer_finishing(). Each record is visible in the file as soon as
 * the call that wrote it returns. Returns 0 or a negative errno (the window could not be had).
 */
int raw_writer_init_mapped(struct raw_writer *w, raw_window_fn fn, void *ctx, size_t chunk_max,
			   size_t reserve, const struct raw_file_header *h);

int raw_writer_sample(struct raw_writer *w, int64_t time_ns, uint64_t stack_id, uint64_t weight);
int raw_writer_stack(struct raw_writer *w, uint64_t id, uint32_t flags, const uint64_t *ips,
		     uint32_t n);
int raw_writer_thread_start(struct raw_writer *w, uint32_t tid, int64_t time_ns, const char *name);
int raw_writer_thread_end(struct raw_writer *w, uint32_t tid, int64_t time_ns, uint64_t cpu_ns);
int raw_writer_thread_cpu(struct raw_writer *w, uint32_t tid, int64_t time_ns, uint64_t cpu_ns);
int raw_writer_thread_name(struct raw_writer *w, uint32_t tid, int64_t time_ns, const char *name);
int raw_writer_process(struct raw_writer *w, const struct raw_process *p);
int raw_writer_module_load(struct raw_writer *w, const struct raw_module *m);
int raw_writer_module_unload(struct raw_writer *w, int64_t time_ns, uint64_t base,
			     const char *path);
int raw_writer_lost(struct raw_writer *w, int64_t time_ns, uint32_t reason, uint64_t count,
		    uint64_t weight);
int raw_writer_note(struct raw_writer *w, int64_t time_ns, uint32_t tid, uint32_t kind,
		    const char *detail);
int raw_writer_metric(struct raw_writer *w, uint64_t id, const char *name, uint32_t unit,
		      uint32_t aggregation, uint32_t kind);
int raw_writer_value(struct raw_writer *w, int64_t time_ns, uint64_t stack_id, uint64_t metric,
		     int64_t value);
/* A region of depth (1 the outermost) named name begins or ends (RAW_REC_REGION_*). */
int raw_writer_region_begin(struct raw_writer *w, int64_t time_ns, uint32_t depth,
			    const char *name);
int raw_writer_region_end(struct raw_writer *w, int64_t time_ns, uint32_t depth);
/* Waits (types 48-52, docs/raw-format.md); times are ns since origin, absolute. */
int raw_writer_wait(struct raw_writer *w, int64_t time_ns, uint64_t stack_id, uint64_t duration_ns,
		    uint32_t kind, uint64_t object);
int raw_writer_wait_sum(struct raw_writer *w, int64_t time_ns, uint64_t stack_id, uint32_t kind,
			uint64_t object, uint64_t count, uint64_t total_ns);
int raw_writer_object(struct raw_writer *w, uint32_t kind, uint64_t object, const char *name);
/*
 * A wait begun at time_ns still in progress at seen_ns (RAW_REC_WAIT_OPEN): its WAIT, with the
 * same time, follows if it ends.
 */
int raw_writer_wait_open(struct raw_writer *w, int64_t time_ns, uint64_t stack_id, uint32_t kind,
			 uint64_t object, int64_t seen_ns);
int raw_writer_omp_region(struct raw_writer *w, int64_t time_ns, uint64_t duration_ns,
			  uint64_t object, uint32_t threads);
/*
 * From time_ns on, the thread's work was started by thread tid of the same process at its
 * stack stack_id, a STACK id of tid's own stream (RAW_REC_ORIGIN); kind: enum
 * raw_origin_kind (tid 0 with RAW_ORIGIN_WORK or RAW_ORIGIN_TASK: that work ended).
 */
int raw_writer_origin(struct raw_writer *w, int64_t time_ns, uint32_t tid, uint64_t stack_id,
		      uint32_t kind);
/* Any record type: payload is written as given (for analyses' own record types). */
int raw_writer_record(struct raw_writer *w, uint8_t type, const void *payload, size_t len);

/*
 * Close the open chunk. Buffered: write it with write(2). Mapped: store its checksum, then its
 * size. Nothing open: nothing done (returns the last error).
 */
int raw_writer_flush(struct raw_writer *w);
/* Bytes of records in the open chunk (chunk header excluded). */
size_t raw_writer_pending(const struct raw_writer *w);
/*
 * True when records of need bytes in all would go into the open chunk (or the one the next
 * record opens) without the writer closing it for its size or its window first.
 */
bool raw_writer_room(const struct raw_writer *w, size_t need);
/*
 * Close the open chunk, and when mapped and its window has no room for need bytes of
 * records, map the next one: the next chunk opens where need bytes fit. 0 or -errno.
 */
int raw_writer_turn(struct raw_writer *w, size_t need);
/* From now on the records that end a stream (lost counts, thread end) may use the reserve. */
void raw_writer_finishing(struct raw_writer *w);
/* Mapped: the file length the stream needs (header, chunks, padding written so far). */
uint64_t raw_writer_file_size(const struct raw_writer *w);

/* Payload encoder for analyses that build their own record types with raw_writer_record(). */
struct raw_enc {
	uint8_t *p, *end;
	bool overflow;
};
void raw_enc_varint(struct raw_enc *e, uint64_t v);
void raw_enc_svarint(struct raw_enc *e, int64_t v);
void raw_enc_bytes(struct raw_enc *e, const void *data, size_t len); /* len:varint + bytes */
void raw_enc_string(struct raw_enc *e, const char *s);               /* NULL writes "" */
/* A stack record's native part: id, flags, n, then the n frames as deltas (raw-format.md). */
void raw_enc_stack(struct raw_enc *e, uint64_t id, uint32_t flags, const uint64_t *ips, uint32_t n);

/* ---- reader ------------------------------------------------------------------------------ */

/* What a reader met on its way: everything skipped is counted with its reason. */
struct raw_reader_stats {
	uint64_t bytes_total;       /* file size */
	uint64_t bytes_skipped;     /* bytes not decoded, all reasons but padding */
	uint64_t bytes_padding;     /* zero bytes between and after chunks (not damage) */
	uint64_t chunks;            /* good chunks, open ones included */
	uint64_t chunks_open;       /* of which open: the writer was stopped before closing */
	uint64_t chunks_bad_magic;  /* resynchronisations after garbage */
	uint64_t chunks_bad_crc;    /* chunks whose checksum did not match */
	uint64_t chunks_truncated;  /* chunks cut by the end of the file */
	uint64_t chunks_duplicate;  /* chunks whose seq repeated or went back: skipped */
	uint64_t records;           /* records returned */
	uint64_t records_malformed; /* records that did not decode (rest of chunk skipped) */
	bool header_crc_bad;        /* version 2 header whose checksum does not match */
	char first_problem[160];    /* the first problem met, "" if none */
};

/* A decoded record. Pointers point into the reader and stay valid until the next call. */
struct raw_record {
	uint8_t type;           /* enum raw_type, or any other value 1-127 */
	bool decoded;           /* false: a type this reader does not decode; use payload */
	const uint8_t *payload; /* the record's payload, always set */
	size_t payload_len;
	int64_t time_ns; /* for records that carry a time (samples: absolute, deltas applied) */
	union {
		struct {
			uint64_t stack_id;
			uint64_t weight;
		} sample;
		struct {
			uint64_t id;
			uint32_t flags;
			uint32_t depth;
			const uint64_t *ips;
		} stack;
		struct {
			uint32_t tid;
			struct raw_string name;
		} thread; /* THREAD_START and THREAD_NAME */
		struct {
			uint32_t tid;
			uint64_t cpu_ns;
		} thread_end;
		struct raw_process process;
		struct raw_module module;
		struct {
			uint64_t base;
			struct raw_string path;
		} unload;
		struct {
			uint32_t reason;
			uint64_t count;
			uint64_t weight;
		} lost;
		struct {
			uint64_t id;
			struct raw_string name;
			uint32_t unit;        /* enum raw_metric_unit */
			uint32_t aggregation; /* enum raw_metric_aggregation */
			uint32_t kind;        /* enum raw_metric_kind */
		} metric;
		struct {
			uint64_t stack_id;
			uint64_t metric;
			int64_t value;
		} value;
		struct {
			uint32_t tid;
			uint32_t kind; /* enum raw_note_kind */
			struct raw_string detail;
		} note;
		struct {
			uint32_t depth;         /* 1 for the outermost */
			struct raw_string name; /* REGION_BEGIN only */
		} region;
		struct {
			uint64_t stack_id;
			uint64_t duration_ns; /* time_ns is when it began; WAIT_OPEN: 0 */
			uint32_t kind;        /* enum raw_wait_kind */
			uint64_t object;
			int64_t seen_ns; /* WAIT_OPEN: when it was still in progress */
		} wait;                  /* WAIT and WAIT_OPEN */
		struct {
			uint64_t stack_id;
			uint32_t kind; /* enum raw_wait_kind */
			uint64_t object;
			uint64_t count;    /* waits */
			uint64_t total_ns; /* their time */
		} wait_sum;                /* time_ns is when it was written */
		struct {
			uint32_t kind; /* enum raw_wait_kind */
			uint64_t object;
			struct raw_string name;
		} object;
		struct {
			uint64_t duration_ns; /* time_ns is when it began */
			uint64_t object;      /* as the region's openmp-barrier waits */
			uint32_t threads;     /* in its team */
		} omp_region;
		struct {
			uint32_t tid;      /* the thread that started the work, 0: none known */
			uint64_t stack_id; /* a STACK id of tid's stream */
			uint32_t kind;     /* enum raw_origin_kind */
		} origin;
	} u;
};

struct raw_reader;

/*
 * Open the stream at path (the file is mapped, not copied) with result_open_file(): only a
 * regular file of at most RAW_MAX_FILE bytes is read, a FIFO or device is refused without
 * blocking and a symbolic link is not followed. Returns a reader, or NULL with *err set to a
 * negative errno: -EINVAL (not a raw stream: bad magic or header), -EPROTONOSUPPORT (a later
 * format version), -EPROTO (other byte order), or what result_open_file() or mmap returned
 * (result_strerror() words them). A version 2 header whose checksum does not match is read,
 * with stats.header_crc_bad set: the caller decides what to trust. Caller frees with
 * raw_reader_free().
 */
#define RAW_MAX_FILE (1ull << 40) /* bytes: a larger stream is refused */
struct raw_reader *raw_reader_open(const char *path, int *err);
/* The same over a buffer the caller keeps alive (tests, fuzzing). */
struct raw_reader *raw_reader_open_mem(const void *data, size_t len, int *err);
void raw_reader_free(struct raw_reader *r);

const struct raw_file_header *raw_reader_header(const struct raw_reader *r);
const struct raw_reader_stats *raw_reader_stats(const struct raw_reader *r);

/* Next record: returns 1 with *rec filled, 0 at the end of the stream. Never fails. */
int raw_reader_next(struct raw_reader *r, struct raw_record *rec);

/* Payload decoder for analyses' record types (the mirror of struct raw_enc). */
struct raw_dec {
	const uint8_t *p, *end;
	bool error;
};
uint64_t raw_dec_varint(struct raw_dec *d);
int64_t raw_dec_svarint(struct raw_dec *d);
struct raw_string raw_dec_string(struct raw_dec *d); /* also for bytes */

#endif
