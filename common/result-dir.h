/* SPDX-License-Identifier: MIT */
/* The result directory: its layout, every path inside it, its creation, its parallel jobs. */
#ifndef PCOLLECT_COMMON_RESULT_DIR_H
#define PCOLLECT_COMMON_RESULT_DIR_H

#include <errno.h>
#include <stdbool.h>
#include <stddef.h>
#include <stdint.h>
#include <sys/stat.h>
#include <sys/types.h>

/*
 * The result directory's contract, one header for the result-*.c files that implement it:
 *   result-path.c    every path inside it, a raw stream's name, DIR's own name
 *   result-job.c     parallel jobs: rank and size, the job's identity, its DIR.<host> parts
 *   result-file.c    its files: modes, exact creation, safe opening
 *   result-create.c  its race-free creation (claim, join, refuse) and removal when empty
 *   result-open.c    what a directory is (common/result.h: result_open())
 *   result-owned.c   whether a path to write names a file it owns
 *   result-live.c    whether it is still being collected
 *
 * Layout (documented in docs/result-dir.md):
 *   DIR/                     the result; DIR.<host> inside a parallel job
 *   DIR/pcollect.job         identity of the job that owns the directory (one line)
 *   DIR/.pcollect.job.<pid>  a claim being written, linked to pcollect.job when complete
 *   DIR/meta/<pid>.meta      collection metadata written by each pcollect launcher (key=value)
 *   DIR/raw/<pid>.<tid>.praw raw streams, one per thread of each profiled process;
 *   DIR/raw/<pid>.<tid>.<name>.praw  the same after an exec (name is the exec generation,
 *                            "x1", "x2", ...) since the pid and main tid survive exec
 *   DIR/raw/<pid>.proc.praw  the process stream of a process image: its process and module
 *                            records; <pid>.<name>.proc.praw after an exec
 *   DIR/raw/<pid>.pmem       memory-consumption's aggregates of a process image
 *                            (common/raw-memory.h); <pid>.<name>.pmem after an exec
 *   DIR/log/agent.<pid>.log  messages of the agent inside process <pid>
 *   DIR/log/.data-used       the raw-byte counter all processes share (-data-limit)
 *   DIR/archive/<build-id>/<file name>  binaries copied by -archive
 *   DIR/archive/src/<path>   sources put there for preport (read by result_open_beneath())
 *   DIR/result.db            the SQLite database written by pfinalize
 *   DIR/.result.db.tmp.<pid> a database being written, renamed over result.db when complete
 *   DIR/source-cache/        reserved
 */

/* Paths and names (result-path.c). */

enum result_path_kind {
	RESULT_PATH_DIR,         /* DIR itself */
	RESULT_PATH_JOB,         /* DIR/pcollect.job */
	RESULT_PATH_META_DIR,    /* DIR/meta */
	RESULT_PATH_META,        /* DIR/meta/<pid>.meta */
	RESULT_PATH_RAW_DIR,     /* DIR/raw */
	RESULT_PATH_RAW,         /* DIR/raw/<pid>.<tid>.praw; <pid>.<tid>.<name>.praw with a name */
	RESULT_PATH_RAW_PROC,    /* DIR/raw/<pid>.proc.praw; <pid>.<name>.proc.praw with a name */
	RESULT_PATH_RAW_MEM,     /* DIR/raw/<pid>.pmem; <pid>.<name>.pmem with a name */
	RESULT_PATH_LOG_DIR,     /* DIR/log */
	RESULT_PATH_LOG,         /* DIR/log/agent.<pid>.log */
	RESULT_PATH_ARCHIVE_DIR, /* DIR/archive */
	RESULT_PATH_ARCHIVE,     /* DIR/archive/<build-id>/<name>; name in the name argument */
	RESULT_PATH_DB,          /* DIR/result.db */
	RESULT_PATH_DB_TMP,      /* DIR/.result.db.tmp.<pid> */
	RESULT_PATH_JOB_TMP,     /* DIR/.pcollect.job.<pid>, linked to pcollect.job when whole */
	RESULT_PATH_DATA_USED,   /* DIR/log/.data-used: raw bytes written by all processes, shared
				    through mmap for -data-limit */
};

/*
 * Build the path of kind inside result directory dir into buf (size bytes).
 * pid and tid are used by the kinds that name them; build_id (hex) and name by ARCHIVE;
 * name (optional, may be NULL) by RAW. ARCHIVE uses only the last component of name; RAW's
 * name must be a single component. Trailing slashes of dir are dropped.
 * Returns the length, or -ENAMETOOLONG (also past PATH_MAX), or -EINVAL (empty dir, unknown
 * kind, a build id that is not hex, a name of "", "." or ".." or a RAW name with '/'); buf is
 * then "". Async-signal-safe (no malloc, no stdio), so the agent may call it anywhere. This is
 * the only place that knows the layout.
 */
int result_path(char *buf, size_t size, const char *dir, enum result_path_kind kind, pid_t pid,
		pid_t tid, const char *build_id, const char *name);

/* What a raw stream's file name says (result_raw_name_parse()). */
struct result_raw_name {
	pid_t pid;
	pid_t tid;           /* 0 for a process stream */
	uint32_t generation; /* the exec generation: N of "xN", 0 without */
	bool process;        /* <pid>[.xN].proc.praw */
};

/*
 * Parse the last component of a raw stream's path, as RESULT_PATH_RAW and RESULT_PATH_RAW_PROC
 * make it. Returns 0, or -EINVAL for any other name (a copy the user made, "a.praw").
 */
int result_raw_name_parse(const char *path, struct result_raw_name *out);

/* Analyses and the two-letter suffix of their default directory name (r000hs). */
const char *result_analysis_suffix(const char *analysis); /* "hs", "mc", "tr", or NULL */

/*
 * The short host name: PCOLLECT_HOSTNAME when set (tests simulate nodes with it), otherwise
 * gethostname() cut at the first dot.
 */
void result_short_hostname(char *buf, size_t size);

/*
 * Decide the result directory name from the user's -r value (NULL when not given):
 *   - given, in a parallel job: "<r>.<short host>";
 *   - given, otherwise: r itself;
 *   - not given: the next free "r%03d<suffix>" in the current directory (r000hs, r001hs, ...):
 *     one past the highest number any rNNN* entry uses, whatever its analysis; no suffix for
 *     an unknown or NULL analysis. Inside a parallel job give -r: ranks cannot agree on a
 *     number.
 * Writes the name into buf. Returns 0 or -errno (-ENAMETOOLONG, -EINVAL for an empty r).
 */
int result_dir_name(char *buf, size_t size, const char *r, const char *analysis);

/* Parallel jobs (result-job.c). */

/*
 * True inside a parallel job: any of PMI_RANK, PMIX_RANK, OMPI_COMM_WORLD_RANK, SLURM_PROCID
 * is set (and not empty). rank (may be NULL) receives the rank, or -1.
 */
bool result_in_parallel_job(int *rank);

/*
 * This process's rank and the number of ranks when a launcher started it as one of many
 * (PMI_RANK and PMI_SIZE, OMPI_COMM_WORLD_RANK and OMPI_COMM_WORLD_SIZE, SLURM_PROCID and
 * SLURM_NTASKS, PMIX_RANK and PMIX_SIZE): true with both set, rank below size.
 */
bool result_job_rank_size(int *rank, int *size);

/*
 * The identity of the parallel job this process belongs to, used so that ranks of one job
 * share DIR.<host> while a later job is refused: SLURM_JOB_ID.SLURM_STEP_ID, PMIX_NAMESPACE,
 * OMPI_MCA_ess_base_jobid, or "ppid:<parent pid>" as the last resort. Every one of the three
 * that is set goes in, joined by commas ("slurm:77.0,pmix:ns1"), since two mpirun in one Slurm
 * allocation share SLURM_JOB_ID but not PMIX_NAMESPACE.
 */
void result_job_id(char *buf, size_t size);

/*
 * The results a parallel job made for dir, one per host ("dir.<host>", docs/result-dir.md),
 * that exist beside it: their paths (dir's parent joined to each name), sorted, into *out
 * (allocated, every string too: result_dir_list_free()), *n of them. Returns 0 or -ENOMEM;
 * none is 0 with *n 0.
 */
int result_dir_job_parts(const char *dir, char ***out, size_t *n);
void result_dir_list_free(char **list, size_t n);

/*
 * The same, their names joined by ", " into buf (at most 10, then ", ..."). Returns how many
 * there are. For messages.
 */
size_t result_dir_host_variants(const char *dir, char *buf, size_t size);

/*
 * The job database of job dir, "dir.job.db" beside its DIR.<host> results (trailing slashes
 * of dir dropped), with what is to follow ("" for the database, ".lock" for the lock file
 * its writers take, ".tmp.<pid>" for one being written) into buf. Returns 0 or
 * -ENAMETOOLONG. Written by pfinalize (finalizer/job-db.c), read by preport
 * (report/model-job-db.c): docs/result-dir.md, docs/schema.md.
 */
int result_job_db_path(const char *dir, const char *suffix, char *buf, size_t size);

/* Files: modes, creation, opening (result-file.c). */

/*
 * Who may read a result: RESULT_MODE_PRIVATE (directories 0700, files 0600, the default) or
 * RESULT_MODE_GROUP (0750 and 0640: colleagues in the file's group may read it). Modes are set
 * exactly, whatever the umask.
 */
enum result_mode {
	RESULT_MODE_PRIVATE = 0,
	RESULT_MODE_GROUP = 1,
};
mode_t result_dir_mode(enum result_mode m);
mode_t result_file_mode_of(enum result_mode m);
/*
 * The mode for a new file of the existing result dir: group-readable when dir is, else
 * private. Async-signal-safe (one stat()): the agent creates its files with it.
 */
mode_t result_file_mode(const char *dir);
/* Create path (O_EXCL, read-write) with exactly mode; returns the descriptor or -errno. */
int result_create_file(const char *path, mode_t mode);

/*
 * Open a file of a result for reading (a raw stream, a metadata file, the database): only a
 * regular file is taken. The open never blocks (O_NONBLOCK: a FIFO put in place of the file
 * is opened and refused, not waited on), a symbolic link is not followed when nofollow is
 * set, and a file over max_size bytes (0: no limit) is refused. Returns a descriptor
 * (O_CLOEXEC, caller closes) with *st filled, or a negative errno: the open() error (-ELOOP:
 * a symbolic link with nofollow), -EISDIR, -RESULT_ENOTREG (a FIFO, a device, a socket) or
 * -EFBIG (too large). result_strerror() words them.
 */
#define RESULT_ENOTREG EMEDIUMTYPE
int result_open_file(const char *path, bool nofollow, uint64_t max_size, struct stat *st);

/* strerror() for result_open_file()'s errors (a positive errno): "not a regular file", ... */
const char *result_strerror(int errnum);

/*
 * Open the regular file rel beneath the directory dirfd as result_open_file() does, but
 * following no symbolic link in any component and taking no "..": a path that names a link
 * or climbs out is refused (-ELOOP, -EXDEV), so what a hostile result names reaches nothing
 * outside dirfd. Leading and doubled slashes and "." are skipped.
 */
int result_open_beneath(int dirfd, const char *rel, uint64_t max_size, struct stat *st);

/*
 * The identity of directory dir (follows a link to it), as pcollect records it in the
 * metadata (result_dir_id): its owner, device, inode and birth time, which no copy or other
 * user reproduces. preport trusts paths a result names (its build paths) only when the
 * identity it recorded is the directory's own and the caller owns it (docs/security.md).
 * Returns 0 or a negative errno.
 */
int result_dir_identity(const char *dir, char *buf, size_t size);

/* Creation and removal (result-create.c). */

/*
 * Create the result directory dir and its subdirectories, race-free:
 *   - a new directory is created with mkdir() and claimed by writing pcollect.job;
 *   - in a parallel job, a directory already claimed by the same job id is joined;
 *   - a directory that holds collected data (raw/, meta/ or result.db) from another job, or
 *     any non-empty directory outside a parallel job, is refused with -EEXIST;
 *   - an empty existing directory is used;
 *   - a directory of another user is refused with -EPERM, and the subdirectories are made
 *     relative to the directory's descriptor, none followed if a link, each the caller's.
 * On failure, err receives the message without the tool's name, for example
 *   "cannot create result directory 'res': Permission denied" or
 *   "result directory 'res' already holds collected data; choose another -r or remove it".
 * A directory this call claims (made, or found empty) and its subdirectories get exactly
 * result_dir_mode(mode); one joined in a parallel job keeps the mode its maker gave it.
 * created is set to true when this call made the directory (so the caller can remove it if
 * the launch then fails); it stays true if a later step fails.
 * A rank that finds the directory without pcollect.job waits up to RESULT_DIR_JOB_WAIT_NS for
 * the rank that made it to write one, unless the directory has not changed for that long (one
 * the user made earlier).
 */
int result_dir_create(const char *dir, enum result_mode mode, bool *created, char *err,
		      size_t err_size);

#define RESULT_DIR_JOB_WAIT_NS (2000LL * 1000 * 1000) /* ns */

/*
 * 0 when the result directory dir (st its stat) belongs to the caller (effective uid), else
 * -EPERM with err set ("result directory 'x' belongs to another user (uid N); ..."): the
 * tools write into no directory another user may change (docs/security.md).
 */
int result_dir_check_owner(const char *dir, const struct stat *st, char *err, size_t err_size);

/* result_dir_create() with that wait (ns) given: the unit tests wait less. */
int result_dir_create_timed(const char *dir, enum result_mode mode, long long wait_ns,
			    bool *created, char *err, size_t err_size);

/*
 * Remove a result directory that this launch created and that holds no data (used when
 * pcollect refuses a target after creating it). Best effort.
 */
void result_dir_remove_empty(const char *dir);

/* What a directory is (result-open.c; common/result.h has result_open()). */

/* True when dir looks like a result directory (has raw/ or result.db). */
bool result_dir_is_result(const char *dir);

/* Owned files (result-owned.c). */

/*
 * Whether writing path (a report, an export) would write over something result dir owns:
 * result.db and its journals, raw/, meta/, log/, archive/, source-cache/, the job file, the
 * tools' temporary files (result-owned.c). The file open(O_CREAT) would write is judged:
 * symbolic links followed (a dangling one too) and ".." resolved, and the result's folder
 * known by device and inode, so another way to it (a link, a bind mount) is seen; an
 * existing file with other names is compared with each of the result's files (a hard link).
 * A new file beside them in dir is not the result's. Returns 1 with why set to what the file
 * is ("the database (result.db)"), 0 when the result owns nothing there, or a negative errno.
 */
int result_dir_owns(const char *dir, const char *path, char *why, size_t size);

/* Collection in progress (result-live.c). */

/*
 * Whether dir is still being collected: the pid of a pcollect launcher of it that runs on this
 * host (its meta/<pid>.meta says status=running, and that pid is a pcollect), or 0
 * (result-live.c). Launchers on other hosts of a parallel job cannot be asked.
 */
long result_dir_collecting(const char *dir);

#endif
