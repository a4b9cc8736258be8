/* SPDX-License-Identifier: MIT */
/* The metrics a result declares (docs/schema.md): CPU Time, and those the streams declare. */
#include "finalizer/finalize-private.h"
#include "finalizer/metrics.h"

size_t fin_metrics_declare(const struct fin *f, struct fin_metric *out, size_t max)
{
	size_t n = 0;

	(void)f;
	if (n < max)
		out[n++] = (struct fin_metric){
			.name = FIN_METRIC_CPU_NAME,
			.unit = "ns",
			.aggregation = "sum",
			.kind = "cpu",
			.description = "CPU time of the sampled threads: sample weight x sampling "
				       "interval",
			.main = true,
		};
	/* Metrics declared by the raw streams' METRIC records go here, in stream order. */
	return n;
}
