/* SPDX-License-Identifier: MIT */
/* Why a result holds no samples: damage, lost samples, notes, a short or crashed run. */
#include <inttypes.h>
#include <signal.h>
#include <stdio.h>
#include <string.h>

#include <sqlite3.h>

#include "common/log.h"
#include "report/report-private.h"

/* The first row of a query: nv integers, then (text != NULL) a text. False without a row or
   without the table (a result of an older pfinalize). */
static bool query_row(const struct model *m, const char *sql, int64_t *v, int nv, char *text,
		      size_t size)
{
	sqlite3_stmt *st;
	bool ok = false;
	int i;

	if (sqlite3_prepare_v2(m->db, sql, -1, &st, NULL) != SQLITE_OK)
		return false;
	if (sqlite3_step(st) == SQLITE_ROW) {
		for (i = 0; i < nv; i++)
			v[i] = sqlite3_column_int64(st, i);
		if (text) {
			const unsigned char *s = sqlite3_column_text(st, nv);

			snprintf(text, size, "%s", s ? (const char *)s : "");
		}
		ok = true;
	}
	sqlite3_finalize(st);
	return ok;
}

/* "data-limit 12, busy 3": the lost samples by reason, and their count. */
static int64_t lost_reasons(const struct model *m, char *buf, size_t size)
{
	sqlite3_stmt *st;
	int64_t total = 0;
	size_t len = 0;

	buf[0] = '\0';
	if (sqlite3_prepare_v2(m->db,
			       "SELECT reason, sum(count) FROM lost GROUP BY reason "
			       "HAVING sum(count) > 0 ORDER BY sum(count) DESC",
			       -1, &st, NULL) != SQLITE_OK)
		return 0;
	while (sqlite3_step(st) == SQLITE_ROW && len < size) {
		total += sqlite3_column_int64(st, 1);
		len += (size_t)snprintf(buf + len, size - len, "%s%s %" PRId64, len ? ", " : "",
					(const char *)sqlite3_column_text(st, 0),
					(int64_t)sqlite3_column_int64(st, 1));
	}
	sqlite3_finalize(st);
	return total;
}

void report_explain_empty(const struct report *r)
{
	const struct model *m = &r->m;
	const char *dir = r->dir;
	int64_t streams[3] = { 0, 0, 0 }, threads[2] = { 0, 0 }, notes = 0;
	int64_t signal = model_meta_int(m, "collect.exit_signal", 0);
	int64_t elapsed = model_meta_int(m, "elapsed_ns", 0);
	char first[600] = "", reasons[512], detail[300] = "";
	double interval_ms = (double)m->interval_ns / 1e6;

	/* Streams, those with a problem, and those of threads (not a process stream). */
	query_row(m,
		  "SELECT count(*), count(problem), coalesce(sum(path NOT LIKE '%.proc.praw'), 0) "
		  "FROM streams",
		  streams, 3, NULL, 0);
	query_row(m, "SELECT count(*), coalesce(sum(cpu_ns), 0) FROM threads", threads, 2, NULL, 0);
	/* What the collector noted, damage, losses come first: they are what went wrong. */
	if (streams[1] && query_row(m,
				    "SELECT path || ': ' || problem FROM streams WHERE "
				    "problem IS NOT NULL LIMIT 1",
				    NULL, 0, first, sizeof(first)))
		log_error("result '%s' holds no samples: %" PRId64 " of its %" PRId64
			  " raw streams "
			  "could not be read or counted (first: %s); see 'pfinalize -r %s'",
			  dir, streams[1], streams[0], first, dir);
	else if (lost_reasons(m, reasons, sizeof(reasons)) > 0)
		log_error("result '%s' holds no samples: every sample the collector took was lost "
			  "(by reason: %s; docs/schema.md, table lost)",
			  dir, reasons);
	else if (query_row(m,
			   "SELECT count(*), kind || ': ' || detail FROM notes "
			   "WHERE kind != 'process-cpu' GROUP BY kind, detail "
			   "ORDER BY count(*) DESC LIMIT 1",
			   &notes, 1, detail, sizeof(detail)) &&
		 notes)
		log_error("result '%s' holds no samples: the collector noted for %" PRId64
			  " thread%s: %s (see %s/log/)",
			  dir, notes, notes == 1 ? "" : "s", detail, dir);
	else if (!streams[0])
		log_error(
			"result '%s' holds no samples: it has no raw streams (the program did not "
			"run under the collector, or its streams were removed; see %s/log/)",
			dir, dir);
	else if (!streams[2])
		log_error("result '%s' holds no samples: it has process streams only, no thread's "
			  "stream (they were removed, or could not be written: see %s/log/)",
			  dir, dir);
	else if (signal > 0)
		log_error("result '%s' holds no samples: the program died of signal %" PRId64
			  " (%s) %.3f s after it started, before its first sample (one every "
			  "%.3g ms of CPU time)",
			  dir, signal, strsignal((int)signal), (double)elapsed / 1e9, interval_ms);
	else if (threads[1] > 0 && threads[1] < m->interval_ns)
		log_error(
			"result '%s' holds no samples: the program used %.3f ms of CPU time, less "
			"than one sampling interval (%.3g ms): collect with a smaller -knob "
			"sampling-interval",
			dir, (double)threads[1] / 1e6, interval_ms);
	else if (threads[1] > 0)
		log_error("result '%s' holds no samples although its threads used %.3f s of CPU "
			  "time: sampling failed (see %s/log/)",
			  dir, (double)threads[1] / 1e9, dir);
	else
		/* Nothing said what happened: a stream cut between chunks looks like one that
		   ended there. */
		log_error("result '%s' holds no samples: its %" PRId64 " thread stream%s end%s "
			  "before the first sample, and no thread said how much CPU time it used: "
			  "the program was killed or ran for less than one sampling interval (%.3g "
			  "ms of CPU time), or the streams were cut (see %s/log/)",
			  dir, streams[2], streams[2] == 1 ? "" : "s", streams[2] == 1 ? "s" : "",
			  interval_ms, dir);
}
