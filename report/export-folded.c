/* SPDX-License-Identifier: MIT */
/* -format folded: Brendan Gregg's collapsed stacks, "main;solve;kernel 1234" per line. */
#include <errno.h>
#include <stdlib.h>
#include <string.h>

#include "report/escape.h"
#include "report/export-private.h"

/*
 * A frame as the format allows: ';' separates frames, a line ends the stack, and the SVG a
 * flame graph tool makes of it cannot hold control characters (escaped as "\x1b").
 */
static void put_frame(struct outbuf *b, const char *name)
{
	const char *p, *run;

	for (p = run = name;; p++) {
		if (*p && *p != ';')
			continue;
		escape_put(b, run, (size_t)(p - run));
		if (!*p)
			break;
		outbuf_putc(b, ':');
		run = p + 1;
	}
}

/*
 * One line per node with a value of the metric: the path from the outermost frame (the
 * -group-by groups first), then the value in the metric's unit (ns for times), so that the
 * widths are the metric's exact split.
 */
int export_folded(struct export_job *x)
{
	struct report *r = &x->r[0];
	const struct cct *t = &r->tree;
	size_t nm = t->nm, i;
	int k = x->metrics[0], *path, depth, d;
	char buf[1024];

	path = malloc((t->n + 1) * sizeof(*path));
	if (!path)
		return -ENOMEM;
	for (i = 1; i < t->n; i++) {
		int64_t v = t->self[i * nm + (size_t)k];

		if (v <= 0)
			continue;
		depth = export_path(t, (int)i, path, (int)t->n);
		for (d = 0; d < depth; d++) {
			if (d)
				outbuf_putc(x->b, ';');
			put_frame(x->b, export_node_name(r, t, path[d], buf, sizeof(buf)));
		}
		outbuf_putc(x->b, ' ');
		outbuf_int(x->b, v);
		outbuf_putc(x->b, '\n');
		outbuf_spill(x->b);
	}
	free(path);
	return 0;
}
