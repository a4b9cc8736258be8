/* SPDX-License-Identifier: MIT */
/* Names for what the OpenMP runtimes' and MPI libraries' unnamed code does and for the
   compilers' outlined parallel regions, from the sampled stacks: who calls what, spin code,
   thread entries. */
#define LOG_DOMAIN "names"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "common/log.h"
#include "finalizer/finalize-private.h"

/*
 * The roles of the runtimes' functions that have no symbol (Debian's libgomp1 and libomp5 are
 * stripped of their local symbols), in VTune's style. A function has one role, the same in
 * every stack it is in; the first rule that holds of it gives it:
 *   worker:     the frame right above a thread's entry (start_thread): a worker's root;
 *   wait:       its code at a sampled address is a spin loop's (module_spin_code): a barrier
 *               wait, or a lock wait when the nearest named runtime function outwards takes
 *               a lock or enters a critical section in every stack;
 *   dispatcher: the runtime's innermost unnamed function before the program's code (through
 *               named runtime functions only, __kmp_invoke_microtask): it starts a region's
 *               work;
 *   then, of those still without a role: a wait when every stack through it goes on, within
 *   the runtimes and the C runtime, to a wait, or when a wait calls it in every stack (a
 *   helper of the spin loop: a clock read, a flag's test); a worker when every stack through
 *   it has only unnamed runtime functions between it and a worker's root.
 * An unnamed function of an MPI library or its transports (fin_mpi_module: libmpich, Open
 * MPI's libraries and components, UCX, libfabric) is the library's progress engine,
 * "[MPI progress]", when in a stack the function right inside it is a named progress
 * function (ucp_worker_progress, opal_progress) or the nearest named function outwards,
 * through the MPI libraries only, is one; then, of those still without a role, one whose
 * nearest named function outwards is in every stack a call that waits for communication
 * (MPI_Recv, MPI_Wait, MPI_Barrier, the collectives: mpi_wait_calls) and that, in a stack,
 * the engine calls or that calls it (through the MPI libraries). Code under MPI_Init, or
 * a collective's reduction arithmetic (which does not reach the engine), keeps its name.
 * The rest keep their func@0x... names.
 */
enum role {
	ROLE_NONE,
	ROLE_WORKER,
	ROLE_BARRIER,
	ROLE_LOCK,
	ROLE_DISPATCHER,
	ROLE_PROGRESS,
	ROLE_COUNT
};

static const char *const role_names[ROLE_COUNT] = {
	NULL,
	"[OpenMP worker]",
	"[OpenMP barrier wait]",
	"[OpenMP lock wait]",
	"[OpenMP dispatcher]",
	"[MPI progress]",
};

bool fin_runtime_wait_name(const char *name)
{
	return !strcmp(name, role_names[ROLE_BARRIER]) || !strcmp(name, role_names[ROLE_LOCK]);
}

/* What the stacks showed of a function (bits of names.seen). */
enum seen {
	SEEN_ROOT = 1 << 0,
	SEEN_SPIN = 1 << 1,
	SEEN_CALLS_PROGRAM = 1 << 2,
	SEEN_FROM_LOCK = 1 << 3,
	SEEN_FROM_OTHER = 1 << 4,
	SEEN_TO_BARRIER = 1 << 5,
	SEEN_TO_LOCK = 1 << 6,
	SEEN_TO_OTHER = 1 << 7,
	SEEN_IN_WORKER = 1 << 8,
	SEEN_NOT_WORKER = 1 << 9,
	SEEN_UNDER_BARRIER = 1 << 10,
	SEEN_UNDER_LOCK = 1 << 11,
	SEEN_UNDER_OTHER = 1 << 12,
	SEEN_MPI_PROGRESS = 1 << 13, /* under or calling a progress function */
	SEEN_MPI_WAIT = 1 << 14,     /* under a call that waits */
	SEEN_MPI_OTHER = 1 << 15,    /* under another call, or none */
	SEEN_MPI_NEAR = 1 << 16,     /* called by the progress engine or leading to it */
};

/* The runtimes' named functions that take a lock or enter a critical section: a wait below
   them is for the lock. */
static const char *const lock_functions[] = {
	"GOMP_critical_start",       "GOMP_critical_name_start",
	"GOMP_atomic_start",         "omp_set_lock",
	"omp_set_nest_lock",         "__kmpc_critical",
	"__kmpc_critical_with_hint", "__kmpc_set_lock",
	"__kmpc_set_nest_lock",      NULL,
};

/* The MPI libraries' and their transports' named progress functions: what is inside them, or
   calls them, is the progress engine. */
static const char *const progress_functions[] = {
	"ucp_worker_progress", "uct_worker_progress", "opal_progress",       "MPID_Progress_wait",
	"MPID_Progress_test",  "MPID_Progress_poke",  "MPIDI_progress_test", NULL,
};

/* The MPI calls (less their MPI_ or PMPI_ prefix) that wait for communication, each between
   spaces: the library's unnamed code below them polls for its completion. */
static const char mpi_wait_calls[] =
	" Recv Mrecv Send Ssend Bsend Rsend Sendrecv Sendrecv_replace"
	" Wait Waitall Waitany Waitsome Test Testall Testany Testsome"
	" Probe Iprobe Mprobe Improbe Request_get_status"
	" Barrier Bcast Reduce Allreduce Reduce_scatter Reduce_scatter_block Gather Gatherv"
	" Allgather Allgatherv Scatter Scatterv Alltoall Alltoallv Alltoallw Scan Exscan"
	" Win_fence Win_wait Win_complete Win_lock Win_unlock Win_lock_all Win_unlock_all"
	" Win_flush Win_flush_all ";

/* A parallel region's outlined function, as the stacks place it. */
struct region {
	uint32_t parent; /* frame of the program's function that started it, UINT32_MAX: none */
	uint32_t entry;  /* function of the runtime's entry it called (GOMP_parallel) */
	uint32_t outer;  /* function of the outlined function it is inlined into (clang's
			    .omp_outlined._debug__ in .omp_outlined.), UINT32_MAX: none */
	bool unnamed;    /* a function without a symbol that the runtime called (a stripped
			    program's region) */
};

struct names {
	struct fin *f;
	size_t nfn;        /* functions before this pass: the ones looked at */
	uint32_t *seen;    /* per function */
	uint8_t *role;     /* per function, enum role */
	struct region *rg; /* per function */
	uint32_t *fr;      /* one stack's frames, outermost first */
	size_t n, cap;
};

static const struct function *fn_of(const struct names *w, uint32_t frame)
{
	return &w->f->functions[w->f->frames[frame].function];
}

static const char *mod_of(const struct names *w, uint32_t frame)
{
	return fin_frame_module_name(w->f, &w->f->frames[frame]);
}

static bool in_runtime(const struct names *w, uint32_t frame)
{
	return fin_openmp_module(mod_of(w, frame));
}

/* The agent's wrappers of the runtime's entries and of the outlined functions (-stitch, waits):
   as transparent as the runtime between a region's outlined function and its caller. */
static bool in_agent(const struct names *w, uint32_t frame)
{
	return !strncmp(mod_of(w, frame), "libpcollect", 11);
}

static bool in_mpi(const struct names *w, uint32_t frame)
{
	return fin_mpi_module(mod_of(w, frame));
}

/* An unnamed function of an MPI library: one this pass may call its progress engine. */
static bool unnamed_mpi(const struct names *w, uint32_t frame)
{
	const struct function *fn = fn_of(w, frame);

	return w->f->frames[frame].function < w->nfn && !fn->resolved && in_mpi(w, frame);
}

/* A progress function, or its PLT entry. */
static bool progress_function(const char *name)
{
	size_t n = strlen(name);
	char base[64];

	if (n > 4 && !strcmp(name + n - 4, "@plt") && n - 4 < sizeof(base)) {
		memcpy(base, name, n - 4);
		base[n - 4] = '\0';
		name = base;
	}
	return fin_name_listed(name, progress_functions);
}

/* The MPI call a name is, less its MPI_ or PMPI_ prefix; NULL: not an MPI call. */
static const char *mpi_call(const char *name)
{
	if (name[0] == 'P')
		name++;
	return strncmp(name, "MPI_", 4) ? NULL : name + 4;
}

static bool mpi_wait_call(const char *call)
{
	char word[64];

	return snprintf(word, sizeof(word), " %s ", call) < (int)sizeof(word) &&
	       strstr(mpi_wait_calls, word);
}

/* The program's own code (or a library of its): neither a runtime nor the C runtime. */
static bool in_program(const struct names *w, uint32_t frame)
{
	const char *m = mod_of(w, frame);

	return m[0] && !fin_openmp_module(m) && !fin_c_runtime_module(m);
}

/* An unnamed function of a runtime: one this pass may name. */
static bool unnamed_runtime(const struct names *w, uint32_t frame)
{
	const struct function *fn = fn_of(w, frame);

	return w->f->frames[frame].function < w->nfn && !fn->resolved && in_runtime(w, frame);
}

/* The length of the name before gcc's outlining suffix ("main._omp_fn.0", "f(int) [clone
   ._omp_fn.1]"); for clang's ".omp_outlined." and "__omp_outlined__N" functions 0. -1: not an
   outlined function. */
static long outlined_base(const char *name)
{
	const char *p = strstr(name, " [clone ._omp_fn.");

	if (!p)
		p = strstr(name, "._omp_fn.");
	if (p)
		return p - name;
	return strncmp(name, ".omp_outlined.", 14) && strncmp(name, "__omp_outlined__", 16) ? -1
											    : 0;
}

/* One stack's frames, outermost first, into w->fr. 0 or -ENOMEM. */
static int stack_frames(struct names *w, const struct stream *s, const struct stack_rec *st)
{
	uint32_t k, c;

	w->n = 0;
	for (k = st->depth; k-- > 0;) {
		const struct loc *l = &s->locs[st->loc + k];
		uint32_t first, count = 1;

		if (l->module == NO_MODULE) {
			first = fin_unknown_frame(w->f, l->addr);
		} else {
			int64_t ai = module_addr_index(&w->f->modules[l->module], l->addr);

			if (ai < 0)
				continue;
			first = w->f->module_frames[l->module][ai];
			count = w->f->modules[l->module].count[ai];
		}
		if (GROW(w->fr, w->n + count, w->cap))
			return -ENOMEM;
		for (c = 0; c < count; c++)
			w->fr[w->n++] = first + c;
	}
	return 0;
}

/* Where an outlined function at i was called from: its region's parent and entry. */
static void see_region(struct names *w, size_t i)
{
	uint32_t fn = w->f->frames[w->fr[i]].function;
	struct region *r = &w->rg[fn];
	size_t k = i;

	if (i && w->f->frames[w->fr[i]].inline_depth &&
	    outlined_base(fn_of(w, w->fr[i - 1])->name) >= 0) {
		r->outer = w->f->frames[w->fr[i - 1]].function;
		return;
	}
	while (k > 0 && (in_runtime(w, w->fr[k - 1]) || in_agent(w, w->fr[k - 1])))
		k--;
	if (r->parent == UINT32_MAX && k > 0 && k < i && in_program(w, w->fr[k - 1])) {
		r->parent = w->fr[k - 1];
		r->entry = w->f->frames[w->fr[k]].function;
	}
}

/* What the unnamed MPI function at i is inside of in this stack (SEEN_MPI_*). */
static void see_mpi(struct names *w, size_t i)
{
	uint32_t *seen = &w->seen[w->f->frames[w->fr[i]].function];
	long k;

	if (i + 1 < w->n && in_mpi(w, w->fr[i + 1]) &&
	    progress_function(fn_of(w, w->fr[i + 1])->name)) {
		*seen |= SEEN_MPI_PROGRESS;
		return;
	}
	for (k = (long)i - 1; k >= 0 && in_mpi(w, w->fr[k]); k--) {
		const struct function *fn = fn_of(w, w->fr[k]);
		const char *call;

		if (!fn->resolved)
			continue;
		if (progress_function(fn->name)) {
			*seen |= SEEN_MPI_PROGRESS;
			return;
		}
		call = mpi_call(fn->name);
		if (call) {
			*seen |= mpi_wait_call(call) ? SEEN_MPI_WAIT : SEEN_MPI_OTHER;
			return;
		}
	}
	*seen |= SEEN_MPI_OTHER;
}

/* The first pass over a stack: what each unnamed runtime function is next to. */
static void see_stack(struct names *w)
{
	size_t i, j;
	long k;

	for (i = 0; i < w->n; i++) {
		uint32_t fr = w->fr[i], fn = w->f->frames[fr].function;
		uint32_t *seen = &w->seen[fn];

		if (fn < w->nfn && in_program(w, fr) && outlined_base(fn_of(w, fr)->name) >= 0) {
			see_region(w, i);
		} else if (fn < w->nfn && i && in_program(w, fr) && !fn_of(w, fr)->resolved &&
			   in_runtime(w, w->fr[i - 1])) {
			w->rg[fn].unnamed = true;
			see_region(w, i);
		}
		if (unnamed_mpi(w, fr))
			see_mpi(w, i);
		if (!unnamed_runtime(w, fr))
			continue;
		if (i && fin_thread_entry(fn_of(w, w->fr[i - 1])->name))
			*seen |= SEEN_ROOT;
		if (module_spin_code(&w->f->modules[w->f->frames[fr].module],
				     w->f->frames[fr].address))
			*seen |= SEEN_SPIN;
		for (j = i + 1;
		     j < w->n && in_runtime(w, w->fr[j]) && !unnamed_runtime(w, w->fr[j]);)
			j++;
		if (j < w->n && in_program(w, w->fr[j]))
			*seen |= SEEN_CALLS_PROGRAM;
		for (k = (long)i - 1; k >= 0 && in_runtime(w, w->fr[k]); k--)
			if (!unnamed_runtime(w, w->fr[k]))
				break;
		*seen |= k >= 0 && in_runtime(w, w->fr[k]) &&
					 fin_name_listed(fn_of(w, w->fr[k])->name, lock_functions)
				 ? SEEN_FROM_LOCK
				 : SEEN_FROM_OTHER;
	}
}

static uint8_t role_of(const struct names *w, uint32_t frame)
{
	uint32_t fn = w->f->frames[frame].function;

	return fn < w->nfn ? w->role[fn] : ROLE_NONE;
}

/* The second pass for the unnamed MPI function at i still without a role, under calls that
   wait only: whether the progress engine calls it or it leads to the engine (MPICH's wait
   loop that calls the loop that calls ucp_worker_progress). */
static void see_mpi_again(struct names *w, size_t i)
{
	size_t j;

	if (i && role_of(w, w->fr[i - 1]) == ROLE_PROGRESS) {
		w->seen[w->f->frames[w->fr[i]].function] |= SEEN_MPI_NEAR;
		return;
	}
	for (j = i + 1; j < w->n && in_mpi(w, w->fr[j]); j++)
		if (role_of(w, w->fr[j]) == ROLE_PROGRESS ||
		    progress_function(fn_of(w, w->fr[j])->name)) {
			w->seen[w->f->frames[w->fr[i]].function] |= SEEN_MPI_NEAR;
			return;
		}
}

/* The second pass: where the stacks through a function still without a role lead. */
static void see_stack_again(struct names *w)
{
	size_t i, j;
	long k;

	for (i = 0; i < w->n; i++) {
		uint32_t fr = w->fr[i], fn = w->f->frames[fr].function;
		uint16_t to = SEEN_TO_OTHER;

		if (unnamed_mpi(w, fr) && w->role[fn] == ROLE_NONE &&
		    (w->seen[fn] & (SEEN_MPI_WAIT | SEEN_MPI_OTHER | SEEN_MPI_NEAR)) ==
			    SEEN_MPI_WAIT)
			see_mpi_again(w, i);
		if (!unnamed_runtime(w, fr) || w->role[fn] != ROLE_NONE)
			continue;
		for (j = i + 1; j < w->n; j++) {
			uint8_t r = role_of(w, w->fr[j]);

			if (r == ROLE_BARRIER || r == ROLE_LOCK) {
				to = r == ROLE_LOCK ? SEEN_TO_LOCK : SEEN_TO_BARRIER;
				break;
			}
			if (!in_runtime(w, w->fr[j]) && !fin_c_runtime_module(mod_of(w, w->fr[j])))
				break;
		}
		w->seen[fn] |= to;
		if (i && (role_of(w, w->fr[i - 1]) == ROLE_BARRIER ||
			  role_of(w, w->fr[i - 1]) == ROLE_LOCK))
			w->seen[fn] |= role_of(w, w->fr[i - 1]) == ROLE_LOCK ? SEEN_UNDER_LOCK
									     : SEEN_UNDER_BARRIER;
		else
			w->seen[fn] |= SEEN_UNDER_OTHER;
		for (k = (long)i - 1;
		     k >= 0 && unnamed_runtime(w, w->fr[k]) && role_of(w, w->fr[k]) == ROLE_NONE;)
			k--;
		w->seen[fn] |= k >= 0 && role_of(w, w->fr[k]) == ROLE_WORKER ? SEEN_IN_WORKER
									     : SEEN_NOT_WORKER;
	}
}

static uint8_t first_role(uint32_t s)
{
	if (s & SEEN_MPI_PROGRESS)
		return ROLE_PROGRESS;
	if (s & SEEN_ROOT)
		return ROLE_WORKER;
	if (s & SEEN_SPIN)
		return (s & SEEN_FROM_LOCK) && !(s & SEEN_FROM_OTHER) ? ROLE_LOCK : ROLE_BARRIER;
	if (s & SEEN_CALLS_PROGRAM)
		return ROLE_DISPATCHER;
	return ROLE_NONE;
}

static uint8_t second_role(uint32_t s)
{
	if ((s & SEEN_MPI_WAIT) && !(s & SEEN_MPI_OTHER) && (s & SEEN_MPI_NEAR))
		return ROLE_PROGRESS;
	if (!(s & SEEN_TO_OTHER) && (s & (SEEN_TO_BARRIER | SEEN_TO_LOCK)))
		return s & SEEN_TO_BARRIER ? ROLE_BARRIER : ROLE_LOCK;
	if (!(s & SEEN_UNDER_OTHER) && (s & (SEEN_UNDER_BARRIER | SEEN_UNDER_LOCK)))
		return s & SEEN_UNDER_BARRIER ? ROLE_BARRIER : ROLE_LOCK;
	if ((s & SEEN_IN_WORKER) && !(s & SEEN_NOT_WORKER))
		return ROLE_WORKER;
	return ROLE_NONE;
}

/* Run see(w) over every located native stack of every stream. 0 or -ENOMEM. */
static int walk_stacks(struct names *w, void (*see)(struct names *w))
{
	size_t i, j;
	int ret;

	for (i = 0; i < w->f->nstreams; i++) {
		const struct stream *s = &w->f->streams[i];

		for (j = 0; s->has_header && j < s->nstacks; j++) {
			if (s->stacks[j].loc == SIZE_MAX)
				continue;
			ret = stack_frames(w, s, &s->stacks[j]);
			if (ret)
				return ret;
			see(w);
		}
	}
	return 0;
}

/* The base name of outlined function fn: gcc's prefix, else its parent's (clang). */
static int region_base(const struct names *w, uint32_t fn, char *buf, size_t size, int depth)
{
	const struct function *f = &w->f->functions[fn];
	const struct region *r = &w->rg[fn];
	long n = outlined_base(f->name);
	uint32_t pf;

	if (n > 0)
		return snprintf(buf, size, "%.*s", (int)n, f->name) < (int)size ? 0 : -1;
	if (r->outer != UINT32_MAX && depth < 8)
		return region_base(w, r->outer, buf, size, depth + 1);
	if (r->parent == UINT32_MAX)
		return -1;
	pf = w->f->frames[r->parent].function;
	if (outlined_base(w->f->functions[pf].name) >= 0 && pf < w->nfn && depth < 8)
		return region_base(w, pf, buf, size, depth + 1); /* a nested region */
	return snprintf(buf, size, "%s", w->f->functions[pf].name) < (int)size ? 0 : -1;
}

/* What the runtime entry a region was started by makes of it: "omp parallel", "omp task";
   "omp region" when no stack showed the entry. */
static const char *region_kind(const struct names *w, uint32_t entry)
{
	const char *name = entry == UINT32_MAX ? "" : w->f->functions[entry].name;

	if (strstr(name, "task"))
		return "omp task";
	if (strstr(name, "teams"))
		return "omp teams";
	if (strstr(name, "parallel") || strstr(name, "fork"))
		return "omp parallel";
	return "omp region";
}

/*
 * The name of outlined function fn: "<base> [omp parallel at <file>:<line>]", the line of the
 * directive: the outlined function's definition line (clang's DW_AT_decl_line, gcc's first
 * instruction's), else the line where its parent called the runtime. A function without a
 * symbol that the runtime calls keeps its name, with what it is: "func@0xf030 [omp
 * parallel]". Its function index, UINT32_MAX when neither the symbols nor the stacks tell,
 * -ENOMEM.
 */
static int64_t region_function(struct names *w, uint32_t fn)
{
	uint32_t src = w->rg[fn].outer != UINT32_MAX ? w->rg[fn].outer : fn;
	const struct region *r = &w->rg[src];
	const struct function *def = &w->f->functions[src];
	int64_t file = def->file;
	uint32_t line = def->line;
	const char *path, *slash;
	char base[1024], name[1400];

	if (r->unnamed) {
		snprintf(name, sizeof(name), "%s [%s]", def->name, region_kind(w, r->entry));
		return fin_function_given(w->f, def->module, name, 0, 0);
	}
	if (region_base(w, fn, base, sizeof(base), 0))
		return UINT32_MAX;
	if ((!file || !line) && r->parent != UINT32_MAX) {
		file = w->f->frames[r->parent].file;
		line = w->f->frames[r->parent].line;
	}
	if (!file || !line)
		return UINT32_MAX;
	path = w->f->files.strs[file - 1];
	slash = strrchr(path, '/');
	snprintf(name, sizeof(name), "%s [%s at %s:%u]", base, region_kind(w, r->entry),
		 slash ? slash + 1 : path, line);
	return fin_function_given(w->f, w->f->functions[fn].module, name, file, line);
}

/* The functions that replace the named ones, per old function. 0 or -ENOMEM. */
static int replace_functions(struct names *w)
{
	uint32_t *to = malloc((w->nfn ? w->nfn : 1) * sizeof(*to));
	size_t i, named = 0;
	int64_t g;

	if (!to)
		return -ENOMEM;
	for (i = 0; i < w->nfn; i++) {
		const struct function *fn = &w->f->functions[i];

		to[i] = UINT32_MAX;
		if (w->role[i] != ROLE_NONE)
			g = fin_function_given(w->f, fn->module, role_names[w->role[i]], 0, 0);
		else if (fn->module != NO_MODULE && !fn->python &&
			 (outlined_base(fn->name) >= 0 || w->rg[i].unnamed))
			g = region_function(w, (uint32_t)i);
		else
			continue;
		if (g < 0) {
			free(to);
			return (int)g;
		}
		to[i] = (uint32_t)g;
		named += g != UINT32_MAX;
	}
	for (i = 0; i < w->f->nframes; i++) {
		uint32_t fn = w->f->frames[i].function;

		if (fn < w->nfn && to[fn] != UINT32_MAX)
			w->f->frames[i].function = to[fn];
	}
	log_debug("%zu functions named by what they do in a parallel program", named);
	free(to);
	return 0;
}

int fin_name_runtime_frames(struct fin *f)
{
	struct names w = { .f = f, .nfn = f->nfunctions };
	size_t i;
	int ret = -ENOMEM;

	/* Without a runtime's code in a stack there is nothing to name: no stack to walk. */
	for (i = 0; i < f->nmodules && !f->modules[i].want_spin_code &&
		    !fin_mpi_module(f->modules[i].name);
	     i++)
		;
	if (i == f->nmodules)
		return 0;
	w.seen = calloc(w.nfn ? w.nfn : 1, sizeof(*w.seen));
	w.role = calloc(w.nfn ? w.nfn : 1, sizeof(*w.role));
	w.rg = malloc((w.nfn ? w.nfn : 1) * sizeof(*w.rg));
	if (!w.seen || !w.role || !w.rg)
		goto out;
	for (i = 0; i < w.nfn; i++)
		w.rg[i] = (struct region){ UINT32_MAX, UINT32_MAX, UINT32_MAX };
	ret = walk_stacks(&w, see_stack);
	for (i = 0; !ret && i < w.nfn; i++)
		w.role[i] = first_role(w.seen[i]);
	ret = ret ? ret : walk_stacks(&w, see_stack_again);
	for (i = 0; !ret && i < w.nfn; i++)
		if (w.role[i] == ROLE_NONE)
			w.role[i] = second_role(w.seen[i]);
	ret = ret ? ret : replace_functions(&w);
out:
	free(w.seen);
	free(w.role);
	free(w.rg);
	free(w.fr);
	return ret;
}
