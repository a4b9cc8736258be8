/* SPDX-License-Identifier: MIT */
/* The table of views: each named once, with its handlers and what it accepts. */
#include <string.h>

#include "report/report-private.h"

/*
 * X(name, run, diff, text, flags): adding a view is one line here (and its docs). The
 * difference handler runs for "-r A -r B"; text renders the view's own text (NULL: the
 * table renderer).
 */
#define VIEWS(X)                                                                                   \
	X("summary", view_summary, NULL, view_summary_text, VIEW_SELF_ONLY | VIEW_FRAME_LINES)     \
	X("hotspots", view_hotspots, view_hotspots_diff, NULL, VIEW_FLAT_GROUPS | VIEW_FUNCTION)   \
	X("top-down", view_topdown, view_topdown_diff, NULL, VIEW_TREE | VIEW_SORT_TOTAL)          \
	X("bottom-up", view_bottomup, view_bottomup_diff, NULL, VIEW_TREE | VIEW_SELF_ONLY)        \
	X("caller-callee", view_callers, view_callers_diff, NULL,                                  \
	  VIEW_RECURSION | VIEW_FUNCTION | VIEW_SORT_TOTAL)                                        \
	X("callstacks", view_callstacks, NULL, NULL, VIEW_TREE | VIEW_SELF_ONLY)                   \
	X("source", view_source, NULL, NULL, VIEW_LINES | VIEW_SOURCE_OBJECT | VIEW_NO_SORT)       \
	X("timeline", view_timeline, NULL, NULL, VIEW_TIME | VIEW_NO_SORT)                         \
	X("mpi", view_mpi, NULL, NULL, VIEW_FLAT_GROUPS)

#define VIEW_ENTRY(name, run, diff, text, flags) { name, run, diff, text, flags },
#define VIEW_NAME(name, run, diff, text, flags)  name,

static const struct report_view views[] = { VIEWS(VIEW_ENTRY) };

const char *const report_views[] = { VIEWS(VIEW_NAME) NULL };

const struct report_view *report_view_find(const char *name)
{
	size_t i;

	for (i = 0; i < sizeof(views) / sizeof(views[0]); i++)
		if (!strcmp(views[i].name, name))
			return &views[i];
	return NULL;
}
