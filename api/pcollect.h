/* SPDX-License-Identifier: MIT */
/* pcollect's control API: say what to measure from the program itself (docs/api.md). */
#ifndef PCOLLECT_H
#define PCOLLECT_H

/*
 * Link with libpcollect (pkg-config pcollect). Every call does nothing, cheaply, when the
 * program is not being profiled, so a program built with it runs anywhere; under pcollect
 * (started by it, or attached to later with -target-pid) the calls reach the collector.
 *
 *   pcollect_pause()    stop sampling the whole collection (every process of it): no
 *                       timer fires while paused; what runs meanwhile is not in the profile.
 *   pcollect_resume()   sample again (also after pcollect -start-paused).
 *   pcollect_region_begin(name)   the calling thread enters a region called name (nesting
 *                       allowed: preport shows "outer/inner"; a name should hold no '/').
 *   pcollect_region_end()         the calling thread leaves its innermost region.
 *
 * Regions are per thread: samples of a thread between its begin and end belong to the
 * region (preport -group-by region, -filter region=NAME; the summary's time per region).
 * Pause and resume are not async-signal-safe; the region calls are cheap (a few hundred ns
 * under pcollect, a look-up that fails when not profiled).
 *
 * Fortran: call pcollect_pause(), pcollect_resume(), pcollect_region_begin('name'),
 * pcollect_region_end() (the names with a trailing underscore, as gfortran calls them).
 */

#ifdef __cplusplus
extern "C" {
#endif

void pcollect_pause(void);
void pcollect_resume(void);
void pcollect_region_begin(const char *name);
void pcollect_region_end(void);

#ifdef __cplusplus
}
#endif

#endif
