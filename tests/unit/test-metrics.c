/* SPDX-License-Identifier: MIT */
/* Unit tests of finalizer/metrics.c and waits.c: metrics one per name, their display order,
   conflicts left out, and what each wait kind's object is. */
#include <stdlib.h>
#include <string.h>

#include "common/log.h"
#include "common/metric.h"
#include "common/raw-memory.h"
#include "common/raw-stream.h"
#include "finalizer/finalize-private.h"
#include "finalizer/metrics.h"
#include "tests/unit/unit.h"

/* One metric per name: asked again, the same index; the known ones keep their definition. */
static void test_metrics_one_per_name(void)
{
	struct fin f;

	memset(&f, 0, sizeof(f));
	CU_ASSERT(fin_metrics_standard(&f, METRIC_CPU_TIME) == 0);
	CU_ASSERT(fin_metrics_add(&f, "Widgets", "count", "sum", "other", NULL) == 1);
	CU_ASSERT(fin_metrics_add(&f, "Wait Time", "ns", "sum", "other", "theirs") == 2);
	CU_ASSERT(fin_metrics_standard(&f, METRIC_WAIT_TIME) == 2);
	CU_ASSERT(fin_metrics_add(&f, "Widgets", "count", "sum", "other", NULL) == 1);
	CU_ASSERT_EQUAL(f.nmetrics, 3);
	CU_ASSERT_STRING_EQUAL(f.metrics[2].kind, "wait"); /* pfinalize's, not the stream's */
	CU_ASSERT(strcmp(f.metrics[2].description, "theirs") != 0);
	CU_ASSERT(f.metrics[0].main && !f.metrics[1].main && !f.metrics[2].main);
	CU_ASSERT(fin_metrics_find(&f, "Widgets") == 1 && fin_metrics_find(&f, "Nope") == -1);
	fin_metrics_release(&f);
}

/* A name declared again with another unit or aggregation: its values cannot be added. */
static void test_metrics_conflicts(void)
{
	struct fin f;

	memset(&f, 0, sizeof(f));
	CU_ASSERT(fin_metrics_standard(&f, METRIC_CPU_TIME) == 0);
	CU_ASSERT(fin_metrics_add(&f, "Widgets", "count", "sum", "other", NULL) == 1);
	CU_ASSERT(fin_metrics_add(&f, "Widgets", "bytes", "sum", "other", NULL) == UINT32_MAX);
	CU_ASSERT(fin_metrics_add(&f, "Widgets", "count", "peak", "other", NULL) == UINT32_MAX);
	CU_ASSERT(fin_metrics_add(&f, "Wait Time", "count", "sum", "wait", NULL) == UINT32_MAX);
	CU_ASSERT_EQUAL(f.nmetrics, 2);
	fin_metrics_release(&f);
}

/* CPU Time and Spin Time first, then the waits, then the others in the order they came. */
static void test_metrics_display_order(void)
{
	struct fin f;
	struct fin_metric out[8];
	size_t n;

	memset(&f, 0, sizeof(f));
	fin_metrics_standard(&f, METRIC_CPU_TIME);
	fin_metrics_add(&f, "Widgets", "count", "sum", "other", NULL);
	fin_metrics_standard(&f, METRIC_WAIT_COUNT);
	fin_metrics_add(&f, "Gadgets", "bytes", "peak", "other", NULL);
	fin_metrics_standard(&f, METRIC_SPIN_TIME);
	n = fin_metrics_declare(&f, out, 8);
	CU_ASSERT_EQUAL_FATAL(n, 5);
	/* index order is kept (the ids the samples carry); display_order ranks them */
	CU_ASSERT_STRING_EQUAL(out[0].name, "CPU Time");
	CU_ASSERT_EQUAL(out[0].display_order, 1);
	CU_ASSERT_EQUAL(out[4].display_order, 2); /* Spin Time */
	CU_ASSERT_EQUAL(out[2].display_order, 3); /* Wait Count */
	CU_ASSERT_EQUAL(out[1].display_order, 4); /* Widgets */
	CU_ASSERT_EQUAL(out[3].display_order, 5); /* Gadgets */
	CU_ASSERT_STRING_EQUAL(out[3].aggregation, "peak");
	CU_ASSERT_EQUAL(fin_metrics_declare(&f, out, 2), 2);
	fin_metrics_release(&f);
}

/* The wait kinds' names (raw_wait_kind_name) and objects, as contexts.* and naming use them. */
static void test_metrics_wait_kinds(void)
{
	CU_ASSERT_STRING_EQUAL(wait_kind_name(RAW_WAIT_MUTEX), "mutex");
	CU_ASSERT_STRING_EQUAL(wait_kind_name(RAW_WAIT_OMP_BARRIER), "openmp-barrier");
	CU_ASSERT_STRING_EQUAL(wait_kind_name(31), "other");
	CU_ASSERT_STRING_EQUAL(wait_object_type(RAW_WAIT_READ), "fd");
	CU_ASSERT_STRING_EQUAL(wait_object_type(RAW_WAIT_CHILD), "pid");
	CU_ASSERT_PTR_NULL(wait_object_type(RAW_WAIT_SLEEP));
	CU_ASSERT_PTR_NULL(wait_object_type(RAW_WAIT_GIL));
	CU_ASSERT_PTR_NULL(wait_object_type(1000));
	CU_ASSERT_EQUAL(wait_object_what(RAW_WAIT_COND), WAIT_OBJECT_DATA);
	CU_ASSERT_EQUAL(wait_object_what(RAW_WAIT_OMP_BARRIER), WAIT_OBJECT_CODE);
	CU_ASSERT_EQUAL(wait_object_what(RAW_WAIT_JOIN), WAIT_OBJECT_NUMBER);
	CU_ASSERT_EQUAL(wait_object_what(RAW_WAIT_SLEEP), WAIT_OBJECT_NONE);
	CU_ASSERT_EQUAL(wait_object_what(99), WAIT_OBJECT_NONE);
}

/* The registry: each metric once by name and by raw number, every unit and aggregation named,
   the known ones in the order the finalizer ranks them (CPU Time first). */
static void test_metrics_registry(void)
{
	int i, j;

	CU_ASSERT_STRING_EQUAL(metric_name(METRIC_CPU_TIME), "CPU Time");
	CU_ASSERT_EQUAL(metric_def(METRIC_CPU_TIME)->raw_id, RAW_METRIC_CPU_TIME);
	CU_ASSERT_EQUAL(metric_def(METRIC_WAIT_COUNT)->raw_id, RAW_METRIC_WAIT_COUNT);
	CU_ASSERT_EQUAL(metric_def(METRIC_MEM_PEAK)->aggregation, METRIC_AGG_PEAK);
	CU_ASSERT_EQUAL(metric_find("Nope"), -1);
	for (i = 0; i < METRIC_NKNOWN; i++) {
		const struct metric_def *d = metric_def((enum metric_id)i);

		CU_ASSERT_EQUAL(metric_find(d->name), i);
		CU_ASSERT_PTR_NOT_NULL(metric_unit_name(d->unit));
		CU_ASSERT_PTR_NOT_NULL(metric_aggregation_name(d->aggregation));
		CU_ASSERT(d->kind && *d->kind && d->description && *d->description);
		for (j = 0; j < i; j++)
			CU_ASSERT(d->raw_id < 0 ||
				  metric_def((enum metric_id)j)->raw_id != d->raw_id);
	}
	CU_ASSERT_PTR_NULL(metric_unit_name((enum metric_unit)7));
	CU_ASSERT_PTR_NULL(metric_aggregation_name((enum metric_aggregation)7));
}

int main(void)
{
	static const struct unit_test tests[] = {
		{ "one per name", test_metrics_one_per_name },
		{ "conflicts", test_metrics_conflicts },
		{ "display order", test_metrics_display_order },
		{ "wait kinds", test_metrics_wait_kinds },
		{ "registry", test_metrics_registry },
		{ NULL, NULL },
	};

	log_set_tool("test-metrics");
	log_set_level(-1); /* the conflicts' warnings are expected */
	return unit_run("metrics", tests, NULL, NULL);
}
