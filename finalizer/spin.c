/* SPDX-License-Identifier: MIT */
/* Spin Time: the CPU samples taken in an OpenMP runtime's wait loops (barriers, locks). */
#include <errno.h>
#include <string.h>

#include "finalizer/finalize-private.h"

/*
 * The OpenMP runtimes: GCC's libgomp and LLVM's libomp (Intel's libiomp5 is the same code).
 * Their builds in distributions are stripped of everything but the exported functions, and
 * their entry points reach the wait loops by tail calls, so a sample there is seldom named:
 * the code itself tells (a spin loop executes PAUSE), or the thread's entry (a worker).
 */
static const char *const runtime_modules[] = { "libgomp", "libomp", "libiomp", NULL };

/*
 * The functions of the runtimes that wait, one table for both: their internal wait loops
 * (named when the runtime has its symbols, e.g. from a debug package) and the exported
 * entry points whose time outside user code is waiting (a barrier, a critical section, a
 * lock, the end of a region or a worksharing loop, a taskwait). __kmpc_fork_call is libomp's
 * start and end of a region: its time outside the region's code is the join barrier's wait,
 * and the little fork work, which is counted with it.
 */
static const char *const spin_functions[] = {
	/* libgomp, internal (config/linux): the spin, then the futex wait */
	"do_spin",
	"do_wait",
	"futex_wait",
	"gomp_barrier_wait",
	"gomp_barrier_wait_end",
	"gomp_barrier_wait_last",
	"gomp_team_barrier_wait",
	"gomp_team_barrier_wait_end",
	"gomp_team_barrier_wait_final",
	"gomp_team_barrier_wait_cancel",
	"gomp_team_barrier_wait_cancel_end",
	"gomp_mutex_lock_slow",
	"gomp_sem_wait_slow",
	"gomp_ptrlock_get_slow",
	"gomp_spin_count",
	/* libgomp, exported */
	"GOMP_barrier",
	"GOMP_barrier_cancel",
	"GOMP_critical_start",
	"GOMP_critical_name_start",
	"GOMP_atomic_start",
	"GOMP_ordered_start",
	"GOMP_loop_end",
	"GOMP_loop_end_cancel",
	"GOMP_sections_end",
	"GOMP_sections_end_cancel",
	"GOMP_parallel_end",
	"GOMP_taskwait",
	"GOMP_taskgroup_end",
	"GOMP_single_copy_start",
	"GOMP_doacross_wait",
	"GOMP_doacross_ull_wait",
	"omp_set_lock",
	"omp_set_nest_lock",
	/* libomp, internal */
	"__kmp_wait_template",
	"__kmp_wait_yield_4",
	"__kmp_yield",
	"__kmp_suspend_64",
	"__kmp_suspend_32",
	"__kmp_suspend_oncore",
	"__kmp_hyper_barrier_gather",
	"__kmp_hyper_barrier_release",
	"__kmp_linear_barrier_gather",
	"__kmp_linear_barrier_release",
	"__kmp_tree_barrier_gather",
	"__kmp_tree_barrier_release",
	"__kmp_hierarchical_barrier_gather",
	"__kmp_hierarchical_barrier_release",
	"__kmp_dist_barrier_gather",
	"__kmp_dist_barrier_release",
	"__kmp_barrier",
	"__kmp_fork_barrier",
	"__kmp_join_barrier",
	"__kmp_join_call",
	/* libomp, exported */
	"__kmp_wait_4",
	"__kmp_wait_64",
	"__kmpc_barrier",
	"__kmpc_critical",
	"__kmpc_critical_with_hint",
	"__kmpc_ordered",
	"__kmpc_reduce",
	"__kmpc_end_reduce",
	"__kmpc_omp_taskwait",
	"__kmpc_set_lock",
	"__kmpc_set_nest_lock",
	"__kmpc_doacross_wait",
	"__kmpc_fork_call",
	"__kmp_acquire_tas_lock",
	"__kmp_acquire_ticket_lock",
	"__kmp_acquire_queuing_lock",
	"__kmp_acquire_drdpa_lock",
	"__kmp_acquire_nested_tas_lock",
	"__kmp_acquire_nested_ticket_lock",
	"__kmp_acquire_nested_queuing_lock",
	"__kmp_acquire_nested_drdpa_lock",
	NULL,
};

/* Where a thread's stack begins: a worker whose frames above this are all the runtime's is
   waiting for work. */
static const char *const thread_entries[] = { "start_thread", "clone",    "clone3",
					      "__clone",      "__clone3", NULL };

/* The C runtime, which the wait loops call (sched_yield, syscall) at the innermost frames. */
static const char *const c_runtime_modules[] = { "libc.so", "libpthread.so", "ld-linux",
						 "ld64.so", "[vdso]",        NULL };

static bool prefixed(const char *s, const char *const *prefixes)
{
	for (; *prefixes; prefixes++)
		if (!strncmp(s, *prefixes, strlen(*prefixes)))
			return true;
	return false;
}

bool fin_name_listed(const char *s, const char *const *names)
{
	for (; *names; names++)
		if (!strcmp(s, *names))
			return true;
	return false;
}

/* A libomp template instance ("__kmp_wait_template<kmp_flag_64<...>, ...>") or a name. */
static bool spin_function(const char *name)
{
	const char *lt = strchr(name, '<');
	char base[128];

	if (fin_name_listed(name, spin_functions))
		return true;
	if (!lt || (size_t)(lt - name) >= sizeof(base))
		return false;
	memcpy(base, name, (size_t)(lt - name));
	base[lt - name] = '\0';
	return fin_name_listed(base, spin_functions);
}

const char *fin_frame_module_name(const struct fin *f, const struct frame *fr)
{
	return fr->module == NO_MODULE ? "" : f->modules[fr->module].name;
}

bool fin_openmp_module(const char *name)
{
	return prefixed(name, runtime_modules);
}

/* MPI libraries and their transports, whose progress engines runtime-names.c names. */
static const char *const mpi_modules[] = { "libmpi", "libpmpi",   "libopen-pal", "libopen-rte",
					   "mca_",   "libucp",    "libuct",      "libucs",
					   "libucm", "libfabric", "libpsm",      "libhcoll",
					   "libucc", NULL };

bool fin_mpi_module(const char *name)
{
	return prefixed(name, mpi_modules);
}

bool fin_c_runtime_module(const char *name)
{
	return prefixed(name, c_runtime_modules);
}

bool fin_thread_entry(const char *name)
{
	return fin_name_listed(name, thread_entries);
}

/*
 * From the innermost frame outwards: C runtime frames first (sched_yield), then the OpenMP
 * runtime's. It spins when one of the runtime's frames is in a spin loop (its code next to a
 * PAUSE: module_spin_code()), a wait function of the table or one runtime-names.c named a
 * wait (the tree keeps one node for its functions, the outermost's), or when the runtime's frames
 * reach the thread's entry (a worker between regions). Leaving the runtime for the program's
 * code otherwise (a region starting, a loop's scheduling) is the runtime working for it.
 */
static bool walk_spins(const struct fin *f, uint32_t node)
{
	bool in_runtime = false;
	uint32_t n;

	for (n = node; n != UINT32_MAX; n = f->nodes[n].parent) {
		const struct frame *fr = &f->frames[f->nodes[n].frame];
		const char *mod = fin_frame_module_name(f, fr);
		const char *name = f->functions[fr->function].name;

		if (prefixed(mod, runtime_modules)) {
			in_runtime = true;
			if (spin_function(name) ||
			    module_spin_code(&f->modules[fr->module], fr->address) ||
			    (f->functions[fr->function].given && fin_runtime_wait_name(name)))
				return true;
			continue;
		}
		if (!in_runtime && prefixed(mod, c_runtime_modules))
			continue;
		return in_runtime && fin_name_listed(name, thread_entries);
	}
	return false;
}

void fin_mark_openmp_runtimes(struct fin *f)
{
	size_t i;

	for (i = 0; i < f->nmodules; i++)
		f->modules[i].want_spin_code = prefixed(f->modules[i].name, runtime_modules);
}

bool fin_node_spins(struct fin *f, uint32_t node)
{
	size_t old = f->node_spin_cap;

	if (node >= f->node_spin_cap) {
		if (GROW(f->node_spin, (size_t)node + 1, f->node_spin_cap))
			return walk_spins(f, node); /* no room to remember: asked again */
		memset(f->node_spin + old, 0, f->node_spin_cap - old);
	}
	if (!f->node_spin[node])
		f->node_spin[node] = walk_spins(f, node) ? 1 : 2;
	return f->node_spin[node] == 1;
}
