/* SPDX-License-Identifier: MIT */
/* Which compilation unit holds which address, and the units read on several threads. */
#define LOG_DOMAIN "dwarf"
#include <errno.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "common/grow.h"
#include "common/log.h"
#include "finalizer/dwarf-info-private.h"
#include "finalizer/sorted.h"
#include "common/parallel.h"

static int u32_cmp(const void *a, const void *b)
{
	uint32_t x = *(const uint32_t *)a, y = *(const uint32_t *)b;

	return x < y ? -1 : x > y;
}

/*
 * The addresses inside rs that no earlier unit took, ascending, into idx; they become this
 * unit's (an address belongs to the first unit covering it). Returns how many.
 */
static size_t cu_addresses(const uint64_t *addrs, size_t n, const struct range_set *rs, bool *owned,
			   uint32_t *idx)
{
	size_t k = 0, i, r;

	for (r = 0; r < rs->n; r++) {
		/* addrs is sorted: binary search the first address of each range. */
		for (i = sorted_lower(addrs, n, rs->r[r].lo); i < n && addrs[i] < rs->r[r].hi; i++)
			if (!owned[i]) {
				owned[i] = true;
				idx[k++] = (uint32_t)i;
			}
	}
	if (rs->n > 1 && k > 1)
		qsort(idx, k, sizeof(*idx), u32_cmp); /* ranges need not be sorted */
	return k;
}

/* One worker of the parallel read: its context and, but for worker 0, its own chains. */
struct unit_worker {
	struct cu_ctx *c;
	struct cu_ctx own;
	struct dwarf_frame *frames;
	size_t nframes, fcap;
};

struct unit_read {
	struct cu_units *u;
	struct unit_worker *wk;
	struct dwarf_lookup *out;
};

static int unit_read_one(void *ctx, int worker, size_t i)
{
	struct unit_read *r = ctx;
	struct cu_unit *u = &r->u->v[i];

	u->worker = worker;
	return cu_resolve_unit(r->wk[worker].c, u, r->u->idx + u->idx_off, false, r->out);
}

static int unit_size_cmp(const void *a, const void *b)
{
	size_t x = ((const struct cu_unit *)a)->k, y = ((const struct cu_unit *)b)->k;

	return x > y ? -1 : x < y;
}

/*
 * Append the chains of workers 1 .. nw-1 to out->frames (worker 0 wrote there): the first[]
 * of the addresses each read become offsets into out->frames.
 */
static int chains_merge(const struct cu_units *u, struct unit_worker *wk, int nw,
			struct dwarf_lookup *out)
{
	size_t i, j, base;
	int k;

	for (k = 1; k < nw; k++) {
		base = out->nframes;
		if (!wk[k].nframes)
			continue;
		if (GROW(out->frames, base + wk[k].nframes, out->cap))
			return -ENOMEM;
		memcpy(out->frames + base, wk[k].frames, wk[k].nframes * sizeof(*wk[k].frames));
		out->nframes += wk[k].nframes;
		for (i = 0; i < u->n; i++) {
			const struct cu_unit *v = &u->v[i];

			if (v->worker != k)
				continue;
			for (j = 0; j < v->k; j++) {
				uint32_t a = u->idx[v->idx_off + j];

				if (out->count[a])
					out->first[a] += (uint32_t)base;
			}
		}
	}
	return 0;
}

/*
 * Read the units of u->v on up to jobs workers: worker 0 on c (out->frames), each other one
 * with its own libdwarf handle on path, string pool (handed to out) and chain array.
 */
static int units_read(struct cu_units *u, const char *path, struct cu_ctx *c, int jobs,
		      struct dwarf_lookup *out)
{
	struct unit_read r = { u, NULL, out };
	struct unit_worker *wk;
	int k, nw = 1, ret;

	if ((size_t)jobs > u->n)
		jobs = (int)u->n;
	if (jobs < 1)
		jobs = 1;
	wk = calloc((size_t)jobs, sizeof(*wk));
	if (!wk)
		return -ENOMEM;
	/* Biggest first: the large units do not end up last on one thread. */
	if (u->n > 1)
		qsort(u->v, u->n, sizeof(*u->v), unit_size_cmp);
	wk[0].c = c;
	c->frames = &out->frames;
	c->nframes = &out->nframes;
	c->fcap = &out->cap;
	/* The pools must not move once the workers use them. */
	if (jobs > 1 && GROW(out->pools, out->npools + (size_t)jobs - 1, out->pools_cap))
		jobs = 1;
	for (; nw < jobs; nw++) {
		struct str_pool *pool = &out->pools[out->npools];
		Dwarf_Debug d;
		char err[256];

		if (dbg_open(path, &d, err, sizeof(err)))
			break;
		str_pool_init(pool);
		out->npools++;
		if (cu_ctx_init(&wk[nw].own, d, c->addrs, out->n, c->inline_chains, c->sections,
				pool)) {
			dbg_close(d);
			break;
		}
		wk[nw].c = &wk[nw].own;
		wk[nw].own.frames = &wk[nw].frames;
		wk[nw].own.nframes = &wk[nw].nframes;
		wk[nw].own.fcap = &wk[nw].fcap;
	}
	r.wk = wk;
	ret = parallel_for_worker(u->n, nw, unit_read_one, &r);
	if (!ret)
		ret = chains_merge(u, wk, nw, out);
	for (k = 1; k < nw; k++) {
		dbg_close(wk[k].own.dbg);
		cu_ctx_release(&wk[k].own);
		free(wk[k].frames);
	}
	free(wk);
	return ret;
}

/*
 * The units without ranges (gcc gives none to units without code, but some producers
 * may leave them out) only get the addresses no unit with ranges holds, and only those
 * their line table has.
 */
static int rangeless_resolve(struct cu_ctx *c, const struct cu_unit *v, size_t nv, size_t n,
			     const bool *owned, uint32_t *idx, struct dwarf_lookup *out)
{
	size_t i, k = 0, j;
	uint32_t *tmp;
	int ret = 0;

	for (i = 0; i < n; i++)
		if (!owned[i])
			idx[k++] = (uint32_t)i;
	if (!k || !nv)
		return 0;
	tmp = malloc(k * sizeof(*tmp));
	if (!tmp)
		return -ENOMEM;
	for (j = 0; j < nv && k && !ret; j++) {
		struct cu_unit u = v[j];
		size_t left = 0;

		u.k = k;
		memcpy(tmp, idx, k * sizeof(*tmp));
		ret = cu_resolve_unit(c, &u, tmp, true, out);
		/* The addresses this unit's line table holds are answered; the others go on. */
		for (i = 0; i < k; i++)
			if (!out->leaf_file[idx[i]] && !out->leaf_line[idx[i]])
				idx[left++] = idx[i];
		if (left < k)
			out->cus_parsed++;
		k = left;
	}
	free(tmp);
	return ret;
}

/*
 * Each thread opens its own libdwarf handle, which loads the debug sections again: worth it
 * only for many addresses, and a few threads are enough (memory grows with each).
 */
#define ADDRS_PER_THREAD 2048
#define UNITS_PER_THREAD 2
#define MAX_THREADS      4

static int threads_for(int jobs, size_t naddrs, size_t nunits)
{
	size_t t = naddrs / ADDRS_PER_THREAD;

	if (t > nunits / UNITS_PER_THREAD)
		t = nunits / UNITS_PER_THREAD;
	if (t > MAX_THREADS)
		t = MAX_THREADS;
	if ((size_t)jobs < t)
		t = (size_t)jobs;
	return t > 1 ? (int)t : 1;
}

int cu_units_scan(struct cu_units *u, struct cu_ctx *c, struct dwarf_lookup *out, char *err,
		  size_t errsize)
{
	Dwarf_Debug dbg = c->dbg;
	Dwarf_Error e = NULL;
	Dwarf_Off cu_start = 0, cu_end = 0;
	struct range_set rs = { 0 };
	size_t n = out->n, nidx = 0;
	int res, ret = 0;

	memset(u, 0, sizeof(*u));
	u->idx = malloc((n ? n : 1) * sizeof(*u->idx));
	u->owned = calloc(n ? n : 1, sizeof(*u->owned));
	if (!u->idx || !u->owned)
		return -ENOMEM;
	for (;;) {
		Dwarf_Unsigned hlen = 0, typeoff = 0, next = 0;
		Dwarf_Half version = 0, asize = 0, lsize = 0, esize = 0, cutype = 0;
		Dwarf_Off abbrev = 0, die_off = 0;
		Dwarf_Sig8 sig;
		Dwarf_Die cu_die = NULL;
		Dwarf_Addr low = 0;
		struct cu_unit v;

		res = dwarf_next_cu_header_d(dbg, 1, &hlen, &version, &abbrev, &asize, &lsize,
					     &esize, &sig, &typeoff, &next, &cutype, &e);
		if (res == DW_DLV_NO_ENTRY)
			break;
		if (res != DW_DLV_OK) {
			err_set(err, errsize, "%s", dwarf_errmsg(e));
			log_debug(
				"unit header %llu unreadable (%s): the units after it are not read",
				(unsigned long long)out->cus + 1, err);
			dbg_drop_error(dbg, &e);
			break; /* keep what the earlier units gave */
		}
		out->cus++;
		/* The unit spans from the previous unit's end to the next header. */
		cu_start = cu_end;
		cu_end = next;
		if (!n)
			continue; /* nothing to look for: only count the units */
		if (dwarf_siblingof_b(dbg, NULL, 1, &cu_die, &e) != DW_DLV_OK ||
		    dwarf_dieoffset(cu_die, &die_off, &e) != DW_DLV_OK) {
			dbg_drop_error(dbg, &e);
			if (cu_die)
				dwarf_dealloc_die(cu_die);
			continue;
		}
		if (dwarf_lowpc(cu_die, &low, &e) != DW_DLV_OK)
			low = 0;
		dbg_drop_error(dbg, &e);
		v = (struct cu_unit){ .die = die_off,
				      .start = cu_start,
				      .end = cu_end,
				      .version = version,
				      .base = low };
		c->version = version;
		c->base = low;
		if (cu_die_ranges(c, cu_die, &rs)) {
			v.idx_off = nidx;
			v.k = cu_addresses(c->addrs, n, &rs, u->owned, u->idx + nidx);
			nidx += v.k;
			if (v.k && GROW(u->v, u->n + 1, u->cap))
				ret = -ENOMEM;
			else if (v.k)
				u->v[u->n++] = v;
		} else if (GROW(u->rangeless, u->nrangeless + 1, u->rangeless_cap)) {
			ret = -ENOMEM;
		} else {
			u->rangeless[u->nrangeless++] = v;
		}
		dwarf_dealloc_die(cu_die);
		if (ret || c->err) {
			ret = ret ? ret : c->err;
			break;
		}
	}
	free(rs.r);
	return ret;
}

int cu_units_resolve(struct cu_units *u, const char *path, struct cu_ctx *c, int jobs,
		     struct dwarf_lookup *out)
{
	uint32_t *rest;
	int ret;

	out->cus_parsed = u->n;
	log_debug("'%s': %zu addresses in %zu units with ranges, %zu units without; read on %d "
		  "threads",
		  path, out->n, u->n, u->nrangeless, threads_for(jobs, out->n, u->n));
	ret = units_read(u, path, c, threads_for(jobs, out->n, u->n), out);
	if (ret)
		return ret;
	rest = malloc((out->n ? out->n : 1) * sizeof(*rest));
	if (!rest)
		return -ENOMEM;
	ret = rangeless_resolve(c, u->rangeless, u->nrangeless, out->n, u->owned, rest, out);
	free(rest);
	return ret;
}

void cu_units_release(struct cu_units *u)
{
	FREE_ALL(u->v, u->rangeless, u->idx, u->owned);
	memset(u, 0, sizeof(*u));
}
