/* SPDX-License-Identifier: MIT */
/* The raw-data counter all processes of a collection share, for -data-limit. */
#include "collector/data-counter.h"

#include <errno.h>
#include <fcntl.h>
#include <string.h>
#include <sys/mman.h>
#include <unistd.h>

#include "common/result-dir.h"

int data_counter_path(char *buf, size_t size, const char *dir)
{
	int n = result_path(buf, size, dir, RESULT_PATH_DATA_USED, 0, 0, NULL, NULL);

	return n < 0 ? n : 0;
}

struct agent_data_counter *data_counter_map(const char *dir, int create)
{
	char path[4096];
	void *p;
	int fd;

	if (data_counter_path(path, sizeof(path), dir))
		return NULL;
	/* The agent maps it and closes the descriptor at once: nothing of ours stays open. */
	fd = create ? result_create_file(path, result_file_mode(dir))
		    : open(path, O_RDWR | O_CLOEXEC | O_NOFOLLOW);
	if (fd < 0)
		return NULL;
	if (create && ftruncate(fd, (off_t)sizeof(struct agent_data_counter))) {
		close(fd);
		return NULL;
	}
	p = mmap(NULL, sizeof(struct agent_data_counter), PROT_READ | PROT_WRITE, MAP_SHARED, fd,
		 0);
	close(fd);
	return p == MAP_FAILED ? NULL : p;
}
