/* SPDX-License-Identifier: MIT */
/* The metrics a result declares (docs/schema.md): CPU Time, and those the streams declare. */
#define LOG_DOMAIN "metrics"
#include <errno.h>
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "common/log.h"
#include "common/str.h"
#include "finalizer/finalize-private.h"
#include "common/metric.h"
#include "finalizer/metrics.h"

/*
 * The metrics the finalizer defines are the registry's (common/metric.h), in its order: a
 * stream declaring one of these names gets this definition. CPU Time is the main metric.
 */
static struct fin_metric known_of(enum metric_id id)
{
	const struct metric_def *d = metric_def(id);

	return (struct fin_metric){
		.name = d->name,
		.unit = metric_unit_name(d->unit),
		.aggregation = metric_aggregation_name(d->aggregation),
		.kind = d->kind,
		.description = d->description,
		.main = id == METRIC_CPU_TIME,
		.display_order = (int)id + 1,
	};
}

/* The registry's definition of the metric called name into *out: false when it is none. */
static bool known_metric(const char *name, struct fin_metric *out)
{
	int id = metric_find(name);

	if (id < 0)
		return false;
	*out = known_of((enum metric_id)id);
	return true;
}

void fin_metrics_release(struct fin *f)
{
	size_t i;

	for (i = 0; i < f->nmetrics; i++) {
		struct fin_metric_def *mt = &f->metrics[i];

		FREE_ALL(mt->name, mt->unit, mt->aggregation, mt->kind, mt->description);
	}
	free(f->metrics);
	f->metrics = NULL;
	f->nmetrics = f->metrics_cap = 0;
}

int64_t fin_metrics_find(const struct fin *f, const char *name)
{
	return str_find_field(f->metrics, f->nmetrics, sizeof(*f->metrics),
			      offsetof(struct fin_metric_def, name), name, false);
}

int64_t fin_metrics_add(struct fin *f, const char *name, const char *unit, const char *aggregation,
			const char *kind, const char *description)
{
	struct fin_metric known, *k = known_metric(name, &known) ? &known : NULL;
	struct fin_metric_def *d;
	int64_t i = fin_metrics_find(f, name);

	if (k) {
		if (strcmp(k->unit, unit) || strcmp(k->aggregation, aggregation)) {
			log_warn("metric '%s' declared in '%s' and '%s': its values are left out "
				 "(pfinalize knows it in '%s', '%s')",
				 name, unit, aggregation, k->unit, k->aggregation);
			return UINT32_MAX;
		}
		unit = k->unit;
		aggregation = k->aggregation;
		kind = k->kind;
		description = k->description;
	}
	if (i >= 0) {
		d = &f->metrics[i];
		if (strcmp(d->unit, unit) || strcmp(d->aggregation, aggregation)) {
			log_warn("metric '%s' declared in '%s' and '%s' by one process and in '%s' "
				 "and '%s' by another: the second's values are left out",
				 name, d->unit, d->aggregation, unit, aggregation);
			return UINT32_MAX;
		}
		return i;
	}
	if (f->nmetrics >= UINT32_MAX - 1 || GROW(f->metrics, f->nmetrics + 1, f->metrics_cap))
		return -ENOMEM;
	d = &f->metrics[f->nmetrics];
	memset(d, 0, sizeof(*d));
	d->name = strdup(name);
	d->unit = strdup(unit);
	d->aggregation = strdup(aggregation);
	d->kind = strdup(kind);
	d->description = description ? strdup(description) : NULL;
	d->main = k && k->main;
	if (!d->name || !d->unit || !d->aggregation || !d->kind ||
	    (description && !d->description)) {
		free(d->name);
		free(d->unit);
		free(d->aggregation);
		free(d->kind);
		free(d->description);
		return -ENOMEM;
	}
	log_debug("metric '%s' (%s, %s, %s)", name, unit, aggregation, kind);
	return (int64_t)f->nmetrics++;
}

int64_t fin_metrics_standard(struct fin *f, enum metric_id id)
{
	struct fin_metric k = known_of(id);

	return fin_metrics_add(f, k.name, k.unit, k.aggregation, k.kind, k.description);
}

size_t fin_metrics_declare(const struct fin *f, struct fin_metric *out, size_t max)
{
	size_t n = 0, i, j;
	int order = (int)METRIC_NKNOWN;

	for (i = 0; i < f->nmetrics && n < max; i++) {
		const struct fin_metric_def *d = &f->metrics[i];
		struct fin_metric known, *k = known_metric(d->name, &known) ? &known : NULL;

		out[n++] = (struct fin_metric){
			.name = d->name,
			.unit = d->unit,
			.aggregation = d->aggregation,
			.kind = d->kind,
			.description = d->description,
			.main = d->main,
			.display_order = k ? k->display_order : ++order,
		};
	}
	/* The known ones absent from the result leave no gap: 1, 2, ... in that order. */
	for (i = 0; i < n; i++) {
		int rank = 1;

		for (j = 0; j < n; j++)
			rank += out[j].display_order < out[i].display_order;
		out[i].display_order = rank;
	}
	return n;
}
