/* SPDX-License-Identifier: MIT */
/* The columns views share: a function's Module and Source, the shown metrics' values. */
#include <stdio.h>

#include "report/report-private.h"

double report_pct(const struct report *r, int metric, int64_t v)
{
	int64_t total = r->total[metric];

	return total > 0 ? 100.0 * (double)v / (double)total : 0.0;
}

void report_add_function_cols(struct table *t, struct function_cols *c)
{
	c->module = table_add_col(t, "Module", TABLE_TEXT, TABLE_SHRINK | TABLE_DETAIL);
	c->file = table_add_col(t, "Source File", TABLE_TEXT, TABLE_KEEP_END | TABLE_DETAIL);
	c->line = table_add_col(t, "Source Line", TABLE_INT, TABLE_DETAIL);
}

void report_set_function_cols(const struct report *r, struct table *t, size_t row,
			      const struct function_cols *c, int func)
{
	const struct model_function *f;

	if (func < 0)
		return;
	f = &r->m.functions[func];
	table_set_text_ref(t, row, c->module, report_module_name(r, func));
	if (f->file >= 0) {
		table_set_text_ref(t, row, c->file, report_file_path(r, f->file));
		if (f->line > 0)
			table_set_int(t, row, c->line, f->line);
	}
}

enum table_type report_metric_type(const struct model_metric *mt)
{
	switch (mt->unit) {
	case MODEL_UNIT_NS:
		return TABLE_TIME;
	case MODEL_UNIT_BYTES:
		return TABLE_BYTES;
	case MODEL_UNIT_COUNT:
		break;
	}
	return TABLE_INT;
}

void report_add_metric_cols(const struct report *r, struct table *t, struct metric_cols *c,
			    unsigned flags)
{
	size_t i;
	int side;

	for (i = 0; i < r->nshown; i++) {
		const struct model_metric *mt = &r->m.metrics[r->shown[i]];
		enum table_type type = report_metric_type(mt);
		char name[512];

		c->self[i] = c->selfp[i] = c->total[i] = c->totalp[i] = -1;
		for (side = 0; side < 2; side++) {
			bool total = (side == 0) == !!(flags & MC_TOTAL_FIRST);
			const char *word = total ? "Total" : "Self";

			if (!(flags & (total ? MC_TOTAL : MC_SELF)))
				continue;
			snprintf(name, sizeof(name), "%s:%s", mt->name, word);
			*(total ? &c->total[i] : &c->self[i]) = table_add_col(t, name, type, 0);
			snprintf(name, sizeof(name), "%s:%s %%", mt->name, word);
			/* Percentages go first when a terminal is too narrow for every column. */
			*(total ? &c->totalp[i] : &c->selfp[i]) =
				table_add_col(t, name, TABLE_PCT, TABLE_OPTIONAL);
		}
	}
}

void report_set_metric_cols(const struct report *r, struct table *t, size_t row,
			    const struct metric_cols *c, const int64_t *self, const int64_t *total)
{
	size_t i;

	for (i = 0; i < r->nshown; i++) {
		int k = r->shown[i];

		/* The column's type says how the number reads; the cell holds the value as is. */
		if (self && c->self[i] >= 0) {
			table_set_int(t, row, c->self[i], self[k]);
			table_set_pct(t, row, c->selfp[i], report_pct(r, k, self[k]));
		}
		if (total && c->total[i] >= 0) {
			table_set_int(t, row, c->total[i], total[k]);
			table_set_pct(t, row, c->totalp[i], report_pct(r, k, total[k]));
		}
	}
}
