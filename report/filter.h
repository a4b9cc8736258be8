/* SPDX-License-Identifier: MIT */
/* -filter: which samples a report keeps. */
#ifndef PCOLLECT_REPORT_FILTER_H
#define PCOLLECT_REPORT_FILTER_H

#include "report/report-private.h"

/*
 * Apply r->o->filters to r->m.samples: fill r->recs, r->total and r->count (per metric), add
 * each kept sample to r->tree and sum the tree. Keys (VALUE!=... excludes):
 *   thread=TID|NAME, process=PID|EXE  the sample's thread or process;
 *   function=NAME                     the function is anywhere on the sample's stack (every
 *                                     function the name names, see report_find_functions);
 *   module=NAME|PATH                  the sample was taken in the module (innermost frame);
 *   wait-kind=KIND                    a wait of that kind (mutex, sleep, read, ...);
 *   sync-object=NAME|LABEL|VALUE      a wait on that object (lock_a, "fd 5", 0x55d0c0a0);
 *   region=NAME|PATH|[no region]      in a region the program named NAME (at any depth, and
 *                                     the regions inside it), or in none.
 * Values of one key are alternatives; different keys must all hold.
 * Returns 0, -ERR_USAGE after a usage error (unknown key, no such item) or -ENOMEM.
 */
int report_filter_samples(struct report *r);

/*
 * The same filters for samples read otherwise (the timeline view's rows): open parses them
 * (the usage errors above), keep says whether a sample passes, close frees. The samples must
 * be r->m's (indexes into its tables).
 */
struct report_filter;
int report_filter_open(struct report *r, struct report_filter **out);
bool report_filter_keep(const struct report *r, const struct report_filter *f,
			const struct model_sample *s);
void report_filter_close(struct report_filter *f);

#endif
