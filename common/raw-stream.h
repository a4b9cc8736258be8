/* SPDX-License-Identifier: MIT */
/* Raw stream format v1: the contract between the agent (writer) and pfinalize (reader). */
#ifndef PCOLLECT_COMMON_RAW_STREAM_H
#define PCOLLECT_COMMON_RAW_STREAM_H

/*
 * This header includes no SQLite, libdwarf or libunwind header: the agent and the finalizer
 * both build against it. docs/raw-format.md describes every byte; keep them in step.
 *
 * A stream is one file per thread of a profiled process:
 *
 *   file   := file_header chunk*
 *   chunk  := chunk_header record*        (chunk_header.size bytes of records)
 *   record := type:u8 length:varint payload[length]
 *
 * The writer fills a preallocated buffer and writes one whole chunk per write(2), so a process
 * killed at any moment loses at most the chunk it had not yet written. Each chunk carries a
 * CRC-32 of its records; the reader skips a damaged or cut chunk and resynchronises on the
 * next chunk magic, counting what it skipped and why. A reader skips record types it does not
 * know by their length, so later record types (Python code objects, allocations, waits) do not
 * break older readers.
 *
 * Integers in records are LEB128 varints (unsigned) or zigzag varints (signed, "svarint").
 * Times are nanoseconds of the header's clock relative to header.origin_ns, as svarints.
 */

#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>

#define RAW_MAGIC	    "PCRAW\r\n\032" /* 8 bytes, no NUL: catches text-mode mangling */
#define RAW_VERSION	    1
#define RAW_BYTE_ORDER_MARK 0x01020304u /* as written by the writer, in its native order */
#define RAW_CHUNK_MAGIC	    0x4b484350u /* "PCHK" read as a little-endian u32 */

/* Limits a reader enforces; a writer never produces more. */
#define RAW_MAX_CHUNK	   (16u << 20) /* bytes of records in one chunk */
#define RAW_MAX_DEPTH	   2048	       /* frames in one stack */
#define RAW_MAX_SEGMENTS   64	       /* segments in one module record */
#define RAW_MAX_ARGS	   4096	       /* argv entries in one process record */
#define RAW_MAX_BUILD_ID   64	       /* bytes */
#define RAW_MIN_BUFFER	   4096	       /* smallest writer buffer */

/* What the header's clock and the samples measure. */
enum raw_sample_clock {
	RAW_SAMPLE_NONE = 0,	   /* the stream carries no samples */
	RAW_SAMPLE_THREAD_CPU = 1, /* one sample weight unit = interval_ns of thread CPU time */
	RAW_SAMPLE_WALL = 2,	   /* one sample weight unit = interval_ns of wall time */
};

/* File header, 128 bytes, native byte order (byte_order tells which). */
struct raw_file_header {
	char magic[8];		     /* RAW_MAGIC */
	uint32_t byte_order;	     /* RAW_BYTE_ORDER_MARK */
	uint16_t version;	     /* RAW_VERSION */
	uint16_t header_size;	     /* bytes: sizeof(struct raw_file_header) */
	int32_t pid;		     /* process that wrote the stream */
	int32_t tid;		     /* thread that wrote the stream */
	int32_t rank;		     /* MPI rank, or -1 outside a parallel job */
	uint32_t clock_id;	     /* clockid_t of all record times: CLOCK_MONOTONIC (1) */
	uint64_t origin_ns;	     /* ns: clock_id's value when the stream began */
	uint64_t origin_realtime_ns; /* ns since the Unix epoch at the same instant */
	uint64_t interval_ns;	     /* ns: one sample weight unit; 0 without samples */
	uint32_t sample_clock;	     /* enum raw_sample_clock */
	uint32_t generation;	     /* execs the process went through before this image */
	char host[64];		     /* short host name, NUL padded */
};
_Static_assert(sizeof(struct raw_file_header) == 128, "raw_file_header changed size");

/* Chunk header, 24 bytes, native byte order. */
struct raw_chunk_header {
	uint32_t magic;	  /* RAW_CHUNK_MAGIC */
	uint32_t size;	  /* bytes of records after this header */
	uint32_t crc;	  /* CRC-32 (IEEE, reflected) of those bytes */
	uint32_t seq;	  /* chunk number in this stream, from 0 */
	int64_t base_ns;  /* ns since origin: the time sample deltas in this chunk start from */
};
_Static_assert(sizeof(struct raw_chunk_header) == 24, "raw_chunk_header changed size");

/*
 * Record types. 1-15 are the core; 16-127 are assigned to analyses; a reader returns types it
 * does not decode with only their payload, and skips them by length.
 */
enum raw_type {
	RAW_REC_SAMPLE = 1,	    /* dt:svarint stack:varint weight:varint */
	RAW_REC_STACK = 2,	    /* id:varint flags:varint n:varint ip[n]:svarint (delta) */
	RAW_REC_THREAD_START = 3,   /* tid:varint time:svarint name:string */
	RAW_REC_THREAD_END = 4,	    /* tid:varint time:svarint cpu_ns:varint */
	RAW_REC_THREAD_NAME = 5,    /* tid:varint time:svarint name:string */
	RAW_REC_PROCESS = 6,	    /* see struct raw_process */
	RAW_REC_MODULE_LOAD = 7,    /* see struct raw_module */
	RAW_REC_MODULE_UNLOAD = 8,  /* time:svarint base:varint path:string */
	RAW_REC_LOST = 9,	    /* time:svarint reason:varint count:varint weight:varint */
	RAW_REC_CORE_LAST = 15,
	/* Reserved ranges for later analyses; payloads documented with them. */
	RAW_REC_PYTHON_FIRST = 16,  /* 16-31: Python code objects and frames */
	RAW_REC_ALLOC_FIRST = 32,   /* 32-47: allocations */
	RAW_REC_WAIT_FIRST = 48,    /* 48-63: waits and locks */
	RAW_REC_MAX = 127,
};

/* RAW_REC_STACK flags. */
enum raw_stack_flags {
	RAW_STACK_TRUNCATED = 1 << 0, /* the unwinder stopped at the depth limit */
	RAW_STACK_UNWIND_ERROR = 1 << 1, /* the unwinder stopped on an error, not at the root */
	RAW_STACK_FIRST_IS_PC = 1 << 2,	 /* ip[0] is the interrupted pc (exact), the rest are
					    return addresses (look up at ip - 1) */
};

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
	RAW_LOST_BUFFER = 1,	  /* the record did not fit or could not be written */
	RAW_LOST_UNWIND = 2,	  /* no stack could be taken */
	RAW_LOST_DATA_LIMIT = 3,  /* -data-limit reached: sampling stopped */
	RAW_LOST_STACK_TABLE = 4, /* the per-thread stack table was full */
	RAW_LOST_BUSY = 5,	  /* the signal arrived while the thread's writer was in use */
};

/* A string in a record: length:varint then that many bytes, no NUL. */
struct raw_string {
	const char *s; /* not NUL terminated; points into the reader's data */
	uint32_t len;
};

/* One mapped segment of a module: [start, start + size) maps file_offset. */
struct raw_segment {
	uint64_t start;	      /* runtime address */
	uint64_t size;	      /* bytes */
	uint64_t file_offset; /* bytes into the file */
	uint32_t prot;	      /* PF_R | PF_W | PF_X, as in ELF program headers */
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
 * A writer appends records to a caller-supplied buffer and writes whole chunks to fd with
 * write(2). It calls no malloc, takes no lock and uses no stdio, so it may be used from a
 * signal handler. It is not reentrant: a thread must not enter a writer from a signal handler
 * while the same writer is in use outside it (the agent guards each writer with a per-thread
 * busy flag and counts RAW_LOST_BUSY).
 *
 * Every raw_writer_* call returns 0, or a negative errno: -E2BIG for a record larger than the
 * buffer (dropped and counted in dropped_records), or the write(2) error, after which the
 * writer keeps its records in the buffer and reports the error again on the next flush.
 */
struct raw_writer {
	int fd;		       /* not owned */
	uint8_t *buf;	       /* not owned; first sizeof(struct raw_chunk_header) bytes reserved */
	size_t cap;	       /* bytes */
	size_t len;	       /* bytes used, including the reserved chunk header */
	int64_t chunk_base_ns; /* base_ns of the chunk being filled */
	int64_t last_ns;       /* time of the last sample: deltas are taken from it */
	uint32_t seq;	       /* number of the chunk being filled */
	uint64_t bytes_written;	  /* bytes written to fd, header included */
	uint64_t dropped_records; /* records that could not be kept */
	int error;		  /* last write error (negative errno), 0 if none */
};

/* Fill a header for the calling thread; reads the clocks. Async-signal-safe. */
void raw_header_init(struct raw_file_header *h, int32_t pid, int32_t tid, int32_t rank,
		     const char *host, uint64_t interval_ns, uint32_t sample_clock);
/*
 * Streams of one process image are those with the same (pid, generation): the finalizer
 * applies the module and process records of all of them to all of their samples. The agent
 * sets h->generation after raw_header_init() when the image came from an exec.
 */

/* The time to put in records: ns of CLOCK_MONOTONIC since h->origin_ns. */
int64_t raw_header_now(const struct raw_file_header *h);

/*
 * Start a stream on fd (positioned at 0): writes the header at once. buf (cap bytes, at least
 * RAW_MIN_BUFFER) belongs to the caller and must live as long as the writer.
 */
int raw_writer_init(struct raw_writer *w, int fd, void *buf, size_t cap,
		    const struct raw_file_header *h);

int raw_writer_sample(struct raw_writer *w, int64_t time_ns, uint64_t stack_id, uint64_t weight);
int raw_writer_stack(struct raw_writer *w, uint64_t id, uint32_t flags, const uint64_t *ips,
		     uint32_t n);
int raw_writer_thread_start(struct raw_writer *w, uint32_t tid, int64_t time_ns,
			    const char *name);
int raw_writer_thread_end(struct raw_writer *w, uint32_t tid, int64_t time_ns, uint64_t cpu_ns);
int raw_writer_thread_name(struct raw_writer *w, uint32_t tid, int64_t time_ns,
			   const char *name);
int raw_writer_process(struct raw_writer *w, const struct raw_process *p);
int raw_writer_module_load(struct raw_writer *w, const struct raw_module *m);
int raw_writer_module_unload(struct raw_writer *w, int64_t time_ns, uint64_t base,
			     const char *path);
int raw_writer_lost(struct raw_writer *w, int64_t time_ns, uint32_t reason, uint64_t count,
		    uint64_t weight);
/* Any record type: payload is written as given (for analyses' own record types). */
int raw_writer_record(struct raw_writer *w, uint8_t type, const void *payload, size_t len);

/* Write the records buffered so far as one chunk. Nothing buffered: nothing written. */
int raw_writer_flush(struct raw_writer *w);
/* Bytes buffered and not yet written (chunk header excluded). */
size_t raw_writer_pending(const struct raw_writer *w);

/* Payload encoder for analyses that build their own record types with raw_writer_record(). */
struct raw_enc {
	uint8_t *p, *end;
	bool overflow;
};
void raw_enc_varint(struct raw_enc *e, uint64_t v);
void raw_enc_svarint(struct raw_enc *e, int64_t v);
void raw_enc_bytes(struct raw_enc *e, const void *data, size_t len); /* len:varint + bytes */
void raw_enc_string(struct raw_enc *e, const char *s);		     /* NULL writes "" */

/* ---- reader ------------------------------------------------------------------------------ */

/* What a reader met on its way: everything skipped is counted with its reason. */
struct raw_reader_stats {
	uint64_t bytes_total;	     /* file size */
	uint64_t bytes_skipped;	     /* bytes not decoded, all reasons */
	uint64_t chunks;	     /* good chunks */
	uint64_t chunks_bad_magic;   /* resynchronisations after garbage */
	uint64_t chunks_bad_crc;     /* chunks whose checksum did not match */
	uint64_t chunks_truncated;   /* chunks cut by the end of the file */
	uint64_t records;	     /* records returned */
	uint64_t records_malformed;  /* records that did not decode (rest of chunk skipped) */
	char first_problem[160];     /* the first problem met, "" if none */
};

/* A decoded record. Pointers point into the reader and stay valid until the next call. */
struct raw_record {
	uint8_t type;		/* enum raw_type, or any other value 1-127 */
	bool decoded;		/* false: a type this reader does not decode; use payload */
	const uint8_t *payload; /* the record's payload, always set */
	size_t payload_len;
	int64_t time_ns;	/* for records that carry a time (samples: absolute, deltas applied) */
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
	} u;
};

struct raw_reader;

/*
 * Open the stream at path (the file is mapped, not copied). Returns a reader, or NULL with
 * *err set to a negative errno: -EINVAL (not a raw stream: bad magic or header),
 * -EPROTONOSUPPORT (a later format version), -EPROTO (other byte order), or the open/mmap
 * error. Caller frees with raw_reader_free().
 */
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
