/* SPDX-License-Identifier: MIT */
/* The MPI shim's core: find the MPI library loaded, resolve each function, hand calls over. */
#include <dlfcn.h>
#include <link.h>
#include <pthread.h>
#include <string.h>

#include "collector/agent/mpi/shim-private.h"
#include "collector/agent/probe.h"

struct shim_lib shim;
__thread int shim_depth SHIM_TLS;

static pthread_mutex_t lock = PTHREAD_MUTEX_INITIALIZER;
static bool lib_found;

/*
 * A symbol of the MPI library, wherever it was loaded: a program linked with -lmpi has it in
 * the global scope; mpi4py's extension loads the library with RTLD_LOCAL, where only a handle
 * of an object that depends on it finds it. So each loaded object's handle is asked (dlsym
 * with a handle searches the object and its dependencies). RTLD_NOLOAD: nothing is loaded,
 * only handles taken.
 */
struct find {
	const char *name;
	void *sym;
};

static int find_one(struct dl_phdr_info *info, size_t size, void *arg)
{
	struct find *f = arg;
	void *h;

	(void)size;
	h = dlopen(info->dlpi_name && *info->dlpi_name ? info->dlpi_name : NULL,
		   RTLD_LAZY | RTLD_NOLOAD);
	if (!h)
		return 0;
	f->sym = dlsym(h, f->name);
	dlclose(h);
	return f->sym != NULL;
}

static void *find_symbol(const char *name)
{
	struct find f = { name, dlsym(RTLD_DEFAULT, name) };

	if (!f.sym)
		dl_iterate_phdr(find_one, &f);
	return f.sym;
}

/* The object that defines PMPI_Init: the library whose ABI decides. */
static void *find_library(void)
{
	void *sym = find_symbol("PMPI_Init"), *h;
	Dl_info info;

	if (!sym || !dladdr(sym, &info))
		return NULL;
	h = info.dli_fname && *info.dli_fname ? dlopen(info.dli_fname, RTLD_LAZY | RTLD_NOLOAD)
					      : NULL;
	/* The program itself (MPI linked in statically): its handle searches the global scope. */
	return h ? h : dlopen(NULL, RTLD_LAZY);
}

#define SYM(field, name) (*(void **)&shim.field = dlsym(shim.handle, name))

/*
 * A variable of the library, at the address the library itself uses: an executable linked
 * with it that names the variable (Open MPI's MPI_COMM_WORLD is &ompi_mpi_comm_world) holds
 * a copy of it (a copy relocation), and the library's own references go to that copy, which
 * the global scope finds first; a library loaded RTLD_LOCAL is used by shared objects only,
 * which never copy, so there its own definition is the one.
 */
static void *variable(const char *name)
{
	void *p = dlsym(RTLD_DEFAULT, name);

	return p ? p : dlsym(shim.handle, name);
}

/* Called with lock held: fills shim once the library is there. */
static void resolve_library(void)
{
	void *h;

	if (lib_found || !(h = find_library()))
		return;
	shim.handle = h;
#if SHIM_ABI == SHIM_OPENMPI
	shim.ours = dlsym(h, "ompi_mpi_comm_world") != NULL;
	if (shim.ours) {
		shim.comm_world = (MPI_Comm)variable("ompi_mpi_comm_world");
		shim.comm_null = (MPI_Comm)variable("ompi_mpi_comm_null");
		shim.byte = (MPI_Datatype)variable("ompi_mpi_byte");
		shim.datatype_null = (MPI_Datatype)variable("ompi_mpi_datatype_null");
		shim.request_null = (MPI_Request)variable("ompi_request_null");
		SYM(type_f2c, "PMPI_Type_f2c");
		SYM(comm_f2c, "PMPI_Comm_f2c");
		shim.ours = shim.comm_null && shim.byte && shim.datatype_null &&
			    shim.request_null && shim.type_f2c && shim.comm_f2c;
	}
#else
	/* MPICH and the MPIs built from it (Intel MPI, MVAPICH, Cray MPICH) share the ABI. */
	shim.ours = !dlsym(h, "ompi_mpi_comm_world") && dlsym(h, "MPIR_Err_create_code");
#endif
	SYM(comm_size, "PMPI_Comm_size");
	SYM(comm_rank, "PMPI_Comm_rank");
	SYM(type_size, "PMPI_Type_size");
	SYM(get_elements_x, "PMPI_Get_elements_x");
	SYM(status_f2c, "PMPI_Status_f2c");
	*(void **)&shim.f_status_ignore = variable("MPI_F_STATUS_IGNORE");
	*(void **)&shim.f_statuses_ignore = variable("MPI_F_STATUSES_IGNORE");
	shim.ours = shim.ours && shim.comm_size && shim.comm_rank && shim.type_size &&
		    shim.get_elements_x;
	/* The agent's hooks: without them (no -trace-mpi agent) calls go straight through. */
	*(void **)&shim.hook = dlsym(RTLD_DEFAULT, PCOLLECT_MPI_CALL_HOOK);
	*(void **)&shim.rank_hook = dlsym(RTLD_DEFAULT, PCOLLECT_MPI_RANK_HOOK);
	__atomic_store_n(&lib_found, true, __ATOMIC_RELEASE);
}

int shim_resolve(struct shim_fn *fn)
{
	int way = SHIM_NONE;
	void *p;

	pthread_mutex_lock(&lock);
	if (fn->way != SHIM_UNRESOLVED) {
		way = fn->way;
		goto out;
	}
	resolve_library();
	if (!lib_found)
		goto out; /* no MPI yet: asked again next time */
	if (shim.ours) {
		/* The Fortran entries live in a library of their own (libmpi_mpifh, libmpichfort).
		 */
		p = dlsym(shim.handle, fn->pname);
		if (!p)
			p = find_symbol(fn->pname);
		if (!p)
			goto out;
		__atomic_store_n(&fn->real, p, __ATOMIC_RELAXED);
		way = SHIM_TRACE;
	} else {
		/* The next shim in LD_PRELOAD, else the library's own definition (never a
		   lookup from the start of the global scope: it would find this very shim). */
		p = dlsym(RTLD_NEXT, fn->name);
		if (!p)
			p = dlsym(shim.handle, fn->name);
		if (!p)
			goto out;
		__atomic_store_n(&fn->next, p, __ATOMIC_RELAXED);
		way = SHIM_FORWARD;
	}
	__atomic_store_n(&fn->way, way, __ATOMIC_RELEASE);
out:
	pthread_mutex_unlock(&lock);
	return way;
}

int shim_comm_size(MPI_Comm comm)
{
	int n = 0;

	if (comm == SHIM_COMM_NULL || shim.comm_size(comm, &n) != MPI_SUCCESS || n < 0)
		return 0;
	return n;
}

int shim_comm_rank(MPI_Comm comm)
{
	int r = -1;

	if (comm == SHIM_COMM_NULL || shim.comm_rank(comm, &r) != MPI_SUCCESS)
		return -1;
	return r;
}

void shim_end(struct pcollect_mpi_call *c, MPI_Comm comm, int ret)
{
	if (ret == MPI_SUCCESS && !c->comm_size && comm != SHIM_COMM_NULL)
		c->comm_size = (uint32_t)shim_comm_size(comm);
	shim.hook(c);
	shim_depth--;
}

uint64_t shim_bytes(int count, MPI_Datatype type)
{
	int size = 0;

	if (count <= 0 || type == SHIM_DATATYPE_NULL ||
	    shim.type_size(type, &size) != MPI_SUCCESS || size <= 0)
		return 0;
	return (uint64_t)count * (uint64_t)size;
}

uint64_t shim_bytes_v(const int *counts, int n, MPI_Datatype type)
{
	uint64_t elems = 0;
	int size = 0, i;

	if (!counts || n <= 0 || type == SHIM_DATATYPE_NULL ||
	    shim.type_size(type, &size) != MPI_SUCCESS || size <= 0)
		return 0;
	for (i = 0; i < n; i++)
		if (counts[i] > 0)
			elems += (uint64_t)counts[i];
	return elems * (uint64_t)size;
}

uint64_t shim_status_bytes(const MPI_Status *st)
{
	MPI_Count n = 0;

	/* Elements of MPI_BYTE: the bytes that arrived, whatever the receive's datatype. */
	if (shim.get_elements_x(st, SHIM_BYTE, &n) != MPI_SUCCESS || n < 0)
		return 0;
	return (uint64_t)n;
}

void shim_report_rank(void)
{
	int rank = -1, size = 0;

	if (!shim.rank_hook || shim.comm_rank(SHIM_COMM_WORLD, &rank) != MPI_SUCCESS ||
	    shim.comm_size(SHIM_COMM_WORLD, &size) != MPI_SUCCESS)
		return;
	shim.rank_hook(rank, size);
}

/* ---- receive requests in flight ---------------------------------------------------------- */

/*
 * An open-addressing set under a spin flag: a handful of entries is typical, a few thousand
 * in flight at most; beyond REQ_SLOTS / 2 new receives are not tracked (their bytes are not
 * counted) rather than slowing every call down.
 */
#define REQ_SLOTS 8192 /* a power of two */
#define REQ_EMPTY 0
#define REQ_GONE  1

static uint64_t req_slots[REQ_SLOTS];
static unsigned req_used; /* live entries and tombstones */
static unsigned req_live; /* live entries: 0 spares every completion the lock */
static bool req_flag;

static void req_lock(void)
{
	while (__atomic_test_and_set(&req_flag, __ATOMIC_ACQUIRE))
		;
}

static void req_unlock(void)
{
	__atomic_clear(&req_flag, __ATOMIC_RELEASE);
}

uint64_t shim_req_key(uintptr_t handle, bool fortran)
{
	/* 0 and 1 mark empty and removed slots: every key is 2 or more. */
	return ((uint64_t)handle << 1 | (fortran ? 1 : 0)) + 2;
}

static size_t req_find(uint64_t key, bool *found)
{
	size_t i, n = 0, free = SIZE_MAX;

	/* Tombstones may leave no empty slot: the search stops after every slot. */
	PROBE_EACH(i, (key * 0x9e3779b97f4a7c15ull) >> 51, REQ_SLOTS - 1) {
		if (n++ == REQ_SLOTS)
			break;
		if (req_slots[i] == key) {
			*found = true;
			return i;
		}
		if (req_slots[i] == REQ_GONE && free == SIZE_MAX)
			free = i;
		if (req_slots[i] == REQ_EMPTY) {
			*found = false;
			return free != SIZE_MAX ? free : i;
		}
	}
	*found = false;
	return free;
}

void shim_req_add(uint64_t key)
{
	bool found;
	size_t i;

	req_lock();
	if (req_used >= REQ_SLOTS / 2) {
		/* Tombstones pile up with long runs: sweep them when the set is full of them. */
		unsigned live = 0;

		for (i = 0; i < REQ_SLOTS; i++)
			live += req_slots[i] > REQ_GONE;
		if (live < REQ_SLOTS / 4) {
			uint64_t keep[REQ_SLOTS / 4];
			unsigned k = 0, j;

			for (i = 0; i < REQ_SLOTS; i++)
				if (req_slots[i] > REQ_GONE)
					keep[k++] = req_slots[i];
			memset(req_slots, 0, sizeof(req_slots));
			req_used = 0;
			req_live = 0;
			for (j = 0; j < k; j++) {
				i = req_find(keep[j], &found);
				req_slots[i] = keep[j];
				req_used++;
				req_live++;
			}
		}
	}
	if (req_used < REQ_SLOTS / 2) {
		i = req_find(key, &found);
		if (!found && i != SIZE_MAX) {
			if (req_slots[i] == REQ_EMPTY)
				req_used++;
			req_slots[i] = key;
			__atomic_store_n(&req_live, req_live + 1, __ATOMIC_RELAXED);
		}
	}
	req_unlock();
}

bool shim_req_has(uint64_t key)
{
	bool found;

	if (!__atomic_load_n(&req_live, __ATOMIC_RELAXED))
		return false;
	req_lock();
	req_find(key, &found);
	req_unlock();
	return found;
}

bool shim_req_take(uint64_t key)
{
	bool found;
	size_t i;

	if (!__atomic_load_n(&req_live, __ATOMIC_RELAXED))
		return false;
	req_lock();
	i = req_find(key, &found);
	if (found) {
		req_slots[i] = REQ_GONE;
		__atomic_store_n(&req_live, req_live - 1, __ATOMIC_RELAXED);
	}
	req_unlock();
	return found;
}
