/* SPDX-License-Identifier: MIT */
/* Two callers whose allocations meet the same frames at the same stack depth, for
 * memory-consumption's known answers (tests/e2e/mem-known.py, part callers).
 *
 * main calls from_a and from_b in turn, 50 times each for each recursion depth 1 to 40: each
 * calls descend(depth), which recurses and then allocates in alloc_here. from_a and from_b
 * have the same frame, so every frame from descend inward lies at the same stack pointer with
 * the same return address in both: the stacks differ in one return address, the one into
 * from_a or from_b. The agent's unwinds (a new depth misses its call-site cache; a collision
 * is checked) must not take one caller's outer frames for the other's.
 *
 *   from_a   40 * 50 blocks of 100 bytes:  200000 bytes, all freed
 *   from_b   40 * 50 blocks of 300 bytes:  600000 bytes, all freed
 */
#include <stdlib.h>
#include <unistd.h>

#define KEEP(p) __asm__ volatile("" : : "r"(p) : "memory")
#define SITE    __attribute__((noipa)) static

SITE void alloc_here(size_t n)
{
	void *p = malloc(n);

	KEEP(p);
	free(p);
}

SITE void descend(int depth, size_t n)
{
	if (depth > 1)
		descend(depth - 1, n);
	else
		alloc_here(n);
	__asm__ volatile("" ::: "memory"); /* not a tail call: each level keeps its frame */
}

SITE void from_a(int depth, size_t n)
{
	descend(depth, n);
	__asm__ volatile("# from_a" ::: "memory"); /* not folded into from_b */
}

SITE void from_b(int depth, size_t n)
{
	descend(depth, n);
	__asm__ volatile("# from_b" ::: "memory");
}

int main(void)
{
	int depth, i;

	for (depth = 1; depth <= 40; depth++)
		for (i = 0; i < 50; i++) {
			from_a(depth, 100);
			from_b(depth, 300);
		}
	return write(1, "done\n", 5) == 5 ? 0 : 1;
}
