/* SPDX-License-Identifier: MIT */
/* What model.c and model-job.c share: a job's node models and the steps both run. */
#ifndef PCOLLECT_REPORT_MODEL_PRIVATE_H
#define PCOLLECT_REPORT_MODEL_PRIVATE_H

#include "report/model.h"

/* One node result of a job: its own model, and where its rows are in the job's. */
struct model_part {
	struct model m;    /* loaded from its database, which stays open */
	int64_t offset_ns; /* add to its times: its start after the job's first start */
	int *stack_map;    /* its stack i is the job's stack_map[i] */
	int *thread_map;
	int *metric_map;
	int *context_map;
};

/* Number the contexts' wait kinds and sync objects (model.c). 0 or -ENOMEM. */
int model_index_contexts(struct model *m);
/* Number the processes' hosts: model.nodes, model_process.node (model.c). 0 or -ENOMEM. */
int model_index_nodes(struct model *m);

/* model_load_time_range(), model_load_events() and model_free() of a job (model-job.c). */
int model_job_time_range(struct model *m, int64_t from_ns, int64_t to_ns, bool *skipped, char *err,
			 size_t err_size);
int model_job_events(struct model *m, int64_t from_ns, int64_t to_ns, struct model_event **out,
		     size_t *n, char *err, size_t err_size);
void model_job_free(struct model *m);

#endif
