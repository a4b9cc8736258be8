/* SPDX-License-Identifier: MIT */
/* The raw-data counter all processes of a collection share, for -data-limit. */
#include "collector/data-counter.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include "common/raw-window.h"
#include "common/result-dir.h"

int data_counter_path(char *buf, size_t size, const char *dir)
{
	int n = result_path(buf, size, dir, RESULT_PATH_DATA_USED, 0, 0, NULL, NULL);

	return n < 0 ? n : 0;
}

struct agent_data_counter *data_counter_map(const char *dir, int create)
{
	char path[4096];
	struct stat st;
	void *p = MAP_FAILED;
	int fd, err;

	if ((err = data_counter_path(path, sizeof(path), dir)))
		goto out;
	/* The agent maps it and closes the descriptor at once: nothing of ours stays open. */
	fd = create ? result_create_file(path, result_file_mode(dir))
		    : open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0) {
		err = create ? fd : -errno;
		goto out;
	}
	/*
	 * Its blocks reserved, not a hole: every process stores into the mapping, and a store
	 * into a page a full disk cannot give is a SIGBUS, in the program. For the same reason
	 * a file shorter than the counter (its reservation failed) is not mapped.
	 */
	err = create ? raw_window_reserve(fd, 0, sizeof(struct agent_data_counter)) : 0;
	if (!err && fstat(fd, &st))
		err = -errno;
	else if (!err && (uint64_t)st.st_size < sizeof(struct agent_data_counter))
		err = -ENOSPC;
	if (!err) {
		p = mmap(NULL, sizeof(struct agent_data_counter), PROT_READ | PROT_WRITE,
			 MAP_SHARED, fd, 0);
		err = p == MAP_FAILED ? -errno : 0;
	}
	close(fd);
	if (err && create)
		unlink(path);
out:
	errno = -err;
	return err ? NULL : p;
}
