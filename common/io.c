/* SPDX-License-Identifier: MIT */
/* Writing a whole buffer to a descriptor (common/io.h). */
#include <errno.h>
#include <stdint.h>
#include <unistd.h>

#include "common/io.h"

int io_write_all(int fd, const void *data, size_t len)
{
	const uint8_t *p = data;

	while (len) {
		ssize_t n = write(fd, p, len);

		if (n < 0) {
			if (errno == EINTR)
				continue;
			return -errno;
		}
		if (n == 0)
			return -EIO;
		p += n;
		len -= (size_t)n;
	}
	return 0;
}
