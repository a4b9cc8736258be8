/* SPDX-License-Identifier: MIT */
/* Allocations while the collection is paused (pcollect_pause(), libpcollect) are not recorded,
 * and their frees are frees of blocks not recorded; what is allocated after the resume is.
 *
 *   paused_site    10 x malloc(1000) while paused, freed after the resume: nothing
 *   resumed_site   malloc(2000), freed at once: 2000 bytes, one temporary
 *   paused_leak    malloc(777) while paused, never freed: no leak recorded
 * With the argument "nopause" it runs the same without pausing (the test's baseline).
 */
#include <stdlib.h>
#include <string.h>
#include <unistd.h>

#include "api/pcollect.h"
#include "mem-sites.h"

static void *held[10];

SITE paused_site(void)
{
	int i;

	MALLOC_EACH(i, held, 10, 1000);
}

SITE paused_leak(void)
{
	KEEP(malloc(777));
}

SITE resumed_site(void)
{
	void *p = malloc(2000);

	KEEP(p);
	free(p);
}

int main(int argc, char **argv)
{
	int pause = argc < 2 || strcmp(argv[1], "nopause");
	int i;

	if (pause)
		pcollect_pause();
	paused_site();
	paused_leak();
	if (pause)
		pcollect_resume();
	resumed_site();
	for (i = 0; i < 10; i++)
		free(held[i]);
	return mem_say_done();
}
