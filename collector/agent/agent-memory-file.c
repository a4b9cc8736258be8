/* SPDX-License-Identifier: MIT */
/* memory-consumption's aggregate file: a header and the entries, mapped MAP_SHARED. */
#include <errno.h>
#include <fcntl.h>
#include <stdio.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/resource.h>
#include <unistd.h>

#include "collector/agent/agent-memory-private.h"
#include "common/raw-window.h"
#include "common/result-dir.h"

/*
 * raw/<pid>.pmem (common/raw-memory.h): the address space for the whole file is reserved at
 * once (PROT_NONE, no memory), and the file is mapped into it piece by piece as entries are
 * added, each piece's blocks reserved on disk first (a store into the map then never meets a
 * full disk). As with the streams, no descriptor stays open: each growth opens the file,
 * reserves, maps and closes. The file is never cut: entries past nentries are zeros.
 */

#define MEM_FILE_RESERVE  (1ull << 30) /* address space for the file: 14 million entries */
#define MEM_FILE_FIRST    (64u << 10)  /* bytes mapped at first */
#define MEM_FILE_STEP     (16u << 20)  /* growth at most this much at a time */
#define MEM_FILE_AS_SHARE 32           /* under RLIMIT_AS: at most this part of it reserved */

/* Map [old, size) of the file into the reservation. 0 or -errno. */
static int map_more(uint64_t old, uint64_t size)
{
	struct rlimit rl;
	void *p;
	int fd, ret;

	if (size > mem.reserve_len)
		return -ENOSPC;
	if (!getrlimit(RLIMIT_FSIZE, &rl) && rl.rlim_cur != RLIM_INFINITY && size > rl.rlim_cur)
		return -EFBIG; /* past it the kernel would send SIGXFSZ */
	fd = raw_window_open(mem.path, O_RDWR | O_CLOEXEC | O_NOFOLLOW, 0);
	if (fd < 0)
		return -errno;
	ret = raw_window_reserve(fd, old, size - old);
	if (!ret) {
		p = mmap(mem.reserve + old, (size_t)(size - old), PROT_READ | PROT_WRITE,
			 MAP_SHARED | MAP_FIXED, fd, (off_t)old);
		if (p == MAP_FAILED)
			ret = -errno;
	}
	close(fd);
	return ret;
}

/*
 * The reservation counts against an address-space limit (RLIMIT_AS) as if it were used: under
 * one it takes a 32nd of the limit (8 MiB of 256 MiB: 110,000 entries), never all of 1 GiB.
 */
static uint64_t reserve_len(void)
{
	uint64_t len = MEM_FILE_RESERVE, page = (uint64_t)sysconf(_SC_PAGESIZE);
	struct rlimit rl;

	if (!getrlimit(RLIMIT_AS, &rl) && rl.rlim_cur != RLIM_INFINITY &&
	    rl.rlim_cur / MEM_FILE_AS_SHARE < len)
		len = rl.rlim_cur / MEM_FILE_AS_SHARE / page * page;
	return len > MEM_FILE_FIRST ? len : MEM_FILE_FIRST;
}

static uint64_t mapped_bytes(void)
{
	return mem.file_size;
}

int mem_file_open(void)
{
	char gen[16];
	struct raw_mem_header *h;
	uint64_t size = MEM_FILE_FIRST;
	int fd, ret;

	snprintf(gen, sizeof(gen), "x%u", agent.generation);
	if (result_path(mem.path, sizeof(mem.path), agent.cfg.result_dir, RESULT_PATH_RAW_MEM,
			agent.pid, 0, NULL, agent.generation ? gen : NULL) < 0)
		return -ENAMETOOLONG;
	mem.reserve_len = reserve_len();
	mem.reserve = mmap(NULL, mem.reserve_len, PROT_NONE,
			   MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
	if (mem.reserve == MAP_FAILED) {
		mem.reserve = NULL;
		return -ENOMEM;
	}
	fd = result_create_file(mem.path, agent.cfg.file_mode);
	if (fd < 0) {
		ret = fd;
		goto fail;
	}
	close(fd);
	ret = map_more(0, size);
	if (ret)
		goto fail;
	mem.file_size = size;
	h = (struct raw_mem_header *)mem.reserve;
	mem.entries = (struct raw_mem_entry *)(mem.reserve + RAW_MEM_HEADER_SIZE);
	mem.entries_cap = (size - RAW_MEM_HEADER_SIZE) / sizeof(struct raw_mem_entry);
	h->byte_order = RAW_BYTE_ORDER_MARK;
	h->version = RAW_MEM_VERSION;
	h->header_size = RAW_MEM_HEADER_SIZE;
	h->pid = agent.pid;
	h->generation = agent.generation;
	h->entry_size = sizeof(struct raw_mem_entry);
	h->flags = mem.sampled ? RAW_MEM_SAMPLED : 0;
	h->origin_ns = agent_now_mono();
	h->sample_bytes = mem.sample_bytes;
	/* A reader takes the file for one once its magic is there: stored last. */
	__atomic_thread_fence(__ATOMIC_RELEASE);
	memcpy(h->magic, RAW_MEM_MAGIC, sizeof(h->magic));
	mem.hdr = h;
	mem_file_account();
	return 0;
fail:
	agent_log("memory: cannot create '%s': %s", mem.path, strerror(-ret));
	munmap(mem.reserve, mem.reserve_len);
	mem.reserve = NULL;
	return ret;
}

uint32_t mem_file_entry_new(pid_t tid, uint64_t stack)
{
	struct raw_mem_header *h = mem.hdr;
	struct raw_mem_entry *e;
	uint64_t idx;

	if (!h || h->nentries >= UINT32_MAX - 1)
		return MEM_NO_ENTRY;
	idx = h->nentries;
	if (idx >= mem.entries_cap) {
		uint64_t old = mapped_bytes(), more = old < MEM_FILE_STEP ? old : MEM_FILE_STEP;
		int ret = map_more(old, old + more);

		if (ret) {
			static bool told;

			if (!told)
				agent_log(
					"memory: cannot grow '%s' (%s): new call stacks are counted "
					"without their stack",
					mem.path, strerror(-ret));
			told = true;
			return MEM_NO_ENTRY;
		}
		mem.file_size = old + more;
		mem.entries_cap = (mem.file_size - RAW_MEM_HEADER_SIZE) / sizeof(*e);
		mem_file_account();
	}
	e = &mem.entries[idx];
	e->stack = stack;
	h->nentries = idx + 1;
	/* published by its tid, stored last */
	__atomic_store_n(&e->tid, (uint32_t)tid, __ATOMIC_RELEASE);
	return (uint32_t)idx;
}

void mem_file_drop(void)
{
	if (mem.reserve)
		munmap(mem.reserve, (size_t)mem.reserve_len);
	mem.reserve = NULL;
	mem.hdr = NULL;
	mem.entries = NULL;
	mem.entries_cap = 0;
	mem.file_size = 0;
}

void mem_file_account(void)
{
	uint64_t n;

	if (!mem.hdr)
		return;
	n = mapped_bytes() + mem.blocks.mapped + mem.regions.mapped +
	    (mem.sampled ? sizeof(mem_filter) : 0) +
	    __atomic_load_n(&mem.agent_static, __ATOMIC_RELAXED);
	mem.hdr->agent_bytes = n;
	if (n > mem.hdr->agent_peak_bytes)
		mem.hdr->agent_peak_bytes = n;
}
