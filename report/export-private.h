/* SPDX-License-Identifier: MIT */
/* What the exports share: their table, the metrics they write, names and sums over the tree. */
#ifndef PCOLLECT_REPORT_EXPORT_PRIVATE_H
#define PCOLLECT_REPORT_EXPORT_PRIVATE_H

#include "report/key-index.h"
#include "report/outbuf.h"
#include "report/report-private.h"

enum export_flags {
	EXPORT_LINES = 1 << 0,       /* the tree has a node per function and source line */
	EXPORT_ONE_METRIC = 1 << 1,  /* writes one metric: -metric's, else the main one */
	EXPORT_ALL_METRICS = 1 << 2, /* without -metric, every metric of the result */
	EXPORT_BINARY = 1 << 3,      /* not for a terminal */
	EXPORT_DIFF = 1 << 4,        /* takes two results: -r A -r B */
	EXPORT_NO_GROUPS = 1 << 5,   /* takes no -group-by */
};

/* What an export writes: the report(s) and the metrics, in the order written. */
struct export_job {
	struct report *r; /* nr of them: two for a difference */
	size_t nr;
	int metrics[REPORT_MAX_METRICS]; /* indexes into r[0].m.metrics */
	size_t nmetrics;
	struct outbuf *b;
};

int export_pstats(struct export_job *x);
int export_callgrind(struct export_job *x);
int export_folded(struct export_job *x);
int export_speedscope(struct export_job *x);
int export_chrome(struct export_job *x);
int export_pprof(struct export_job *x);
int export_firefox(struct export_job *x);
int export_html(struct export_job *x);

/*
 * The name of node of t as the exports write it: its function's (-name-style), or a group's
 * in brackets with its kind, "[thread worker-1 (TID 1234)]", "[rank 3]" (in buf).
 */
const char *export_node_name(const struct report *r, const struct cct *t, int node, char *buf,
			     size_t size);

/* A process as the timelines name it: "app (PID 1230), rank 3, on nid00058" (in buf). */
const char *export_process_label(const struct model_process *p, char *buf, size_t size);

/* The unit a metric's values are written in: "ns", "bytes", or "" for a count. */
const char *export_unit(const struct model_metric *mt);

/* The nodes of t with a value at them (leaves of samples), in index order. *out: caller frees. */
int export_leaves(const struct cct *t, int **out, size_t *n);

/*
 * Ids for tuples of three ints ((caller, callee, line), (file, line, name), ...), given in the
 * order first seen: export_ids_get() returns the tuple's id, adding it when new, or -ENOMEM.
 */
struct export_ids {
	struct hash_index index;
	int (*tuple)[3];
	size_t n, cap;
};

/* A zeroed one is empty (export_ids_init()); EXPORT_IDS_RELEASE(&a, &b, ...) releases each. */
void export_ids_init(struct export_ids *ids);
void export_ids_release(struct export_ids *ids);
void export_ids_release_all(struct export_ids *const *ids, size_t n);
#define EXPORT_IDS_RELEASE(...)                                                                    \
	export_ids_release_all((struct export_ids *const[]){ __VA_ARGS__ },                        \
			       sizeof((struct export_ids *const[]){ __VA_ARGS__ }) /               \
				       sizeof(struct export_ids *))
int export_ids_get(struct export_ids *ids, int a, int b, int c);

/* Ids for strings, in the order first seen (the strings must outlive the ids). */
struct export_names {
	struct hash_index index;
	const char **s;
	size_t n, cap;
};

/* A zeroed one is empty (export_names_init()); EXPORT_NAMES_RELEASE(&a, ...) releases each. */
void export_names_init(struct export_names *ns);
void export_names_release(struct export_names *ns);
void export_names_release_all(struct export_names *const *ns, size_t n);
#define EXPORT_NAMES_RELEASE(...)                                                                  \
	export_names_release_all((struct export_names *const[]){ __VA_ARGS__ },                    \
				 sizeof((struct export_names *const[]){ __VA_ARGS__ }) /           \
					 sizeof(struct export_names *))
/* The id of s, adding it when new; -ENOMEM. */
int export_names_get(struct export_names *ns, const char *s);

/*
 * The tree node of each kept sample (after -filter and -time-filter) by (stack, thread,
 * metric): where the timeline's events go, or -1 for events the filters leave out. Most
 * stacks are one thread's, of one metric: each stack's first key is at hand in an array of
 * the stacks, one look per event; the keys of stacks shared by threads are in an index.
 */
struct export_kept {
	struct export_kept_first {
		int thread, metric, node; /* node -1: none */
	} * first;                        /* per stack */
	struct hash_index more;
};

/* 0, -ENOMEM, or -EOVERFLOW when the keys do not fit the index's. */
int export_kept_init(struct export_kept *kept, const struct report *r);
int export_kept_node(const struct export_kept *kept, const struct model_event *e);
void export_kept_release(struct export_kept *kept);

/* -time-filter's window in ns, [*from, *to) (the whole run without it). */
void export_window(const struct report *r, int64_t *from, int64_t *to);

/* Per tree node: the node's path from the outermost frame, root excluded (into path). */
int export_path(const struct cct *t, int node, int *path, int max);

#endif
