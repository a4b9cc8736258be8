/* SPDX-License-Identifier: MIT */
/* The part of OpenMP's tool interface (OMPT) the agent uses, as the OpenMP 5.1 spec fixes it. */
#ifndef PCOLLECT_COLLECTOR_OMPT_ABI_H
#define PCOLLECT_COLLECTOR_OMPT_ABI_H

/*
 * OpenMP 5.1, section 4 ("OMPT interface"), declares these types and values for every
 * runtime; the agent builds without a compiler's omp-tools.h (libomp-dev need not be
 * installed to build it) and only uses what is below. Values are the specification's.
 */

#include <stdint.h>

typedef uint64_t ompt_wait_id_t;

typedef union ompt_data_t {
	uint64_t value;
	void *ptr;
} ompt_data_t;

typedef struct ompt_frame_t {
	ompt_data_t exit_frame;
	ompt_data_t enter_frame;
	int exit_frame_flags;
	int enter_frame_flags;
} ompt_frame_t;

typedef enum ompt_callbacks_t {
	ompt_callback_parallel_begin = 3,
	ompt_callback_parallel_end = 4,
	ompt_callback_implicit_task = 7,
	ompt_callback_sync_region_wait = 16,
	ompt_callback_mutex_acquire = 26,
	ompt_callback_mutex_acquired = 27,
} ompt_callbacks_t;

typedef enum ompt_scope_endpoint_t {
	ompt_scope_begin = 1,
	ompt_scope_end = 2,
	ompt_scope_beginend = 3,
} ompt_scope_endpoint_t;

typedef enum ompt_sync_region_t {
	ompt_sync_region_barrier = 1,          /* deprecated in 5.1 */
	ompt_sync_region_barrier_implicit = 2, /* deprecated in 5.1 */
	ompt_sync_region_barrier_explicit = 3,
	ompt_sync_region_barrier_implementation = 4,
	ompt_sync_region_taskwait = 5,
	ompt_sync_region_taskgroup = 6,
	ompt_sync_region_reduction = 7,
	ompt_sync_region_barrier_implicit_workshare = 8,
	ompt_sync_region_barrier_implicit_parallel = 9,
	ompt_sync_region_barrier_teams = 10,
} ompt_sync_region_t;

typedef enum ompt_mutex_t {
	ompt_mutex_lock = 1,
	ompt_mutex_test_lock = 2,
	ompt_mutex_nest_lock = 3,
	ompt_mutex_test_nest_lock = 4,
	ompt_mutex_critical = 5,
	ompt_mutex_atomic = 6,
	ompt_mutex_ordered = 7,
} ompt_mutex_t;

enum ompt_task_flag_t {
	ompt_task_initial = 0x00000001,
};

typedef enum ompt_set_result_t {
	ompt_set_error = 0,
	ompt_set_never = 1,
	ompt_set_impossible = 2,
	ompt_set_sometimes = 3,
	ompt_set_sometimes_paired = 4,
	ompt_set_always = 5,
} ompt_set_result_t;

typedef void (*ompt_callback_t)(void);
typedef void (*ompt_interface_fn_t)(void);
typedef ompt_interface_fn_t (*ompt_function_lookup_t)(const char *interface_function_name);
typedef ompt_set_result_t (*ompt_set_callback_t)(ompt_callbacks_t event, ompt_callback_t callback);

typedef int (*ompt_initialize_t)(ompt_function_lookup_t lookup, int initial_device_num,
				 ompt_data_t *tool_data);
typedef void (*ompt_finalize_t)(ompt_data_t *tool_data);

typedef struct ompt_start_tool_result_t {
	ompt_initialize_t initialize;
	ompt_finalize_t finalize;
	ompt_data_t tool_data;
} ompt_start_tool_result_t;

#endif
