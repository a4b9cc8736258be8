/* SPDX-License-Identifier: MIT */
/* A library profiled stripped: 75% of the CPU in a static function of many hot blocks, 25% in
 * a static one of one block (the known answer of tests/e2e/finalize-stripped.py). */
#include <stdio.h>

#include "burn.h"

/*
 * many_blocks() takes one of four paths each iteration (by the top bits of x), so its samples
 * fall on many addresses across the function; the unlikely call to odd_value() goes to the
 * part gcc splits off (-freorder-blocks-and-partition: "many_blocks.cold", an FDE of its
 * own). Stripped, neither static function has a symbol: each must still be one function,
 * named by its FDE range. Both burn a budget of this thread's CPU time.
 */
static volatile unsigned long sink;

static __attribute__((cold, noinline)) void odd_value(unsigned long x)
{
	fprintf(stderr, "odd value %lu\n", x);
}

static __attribute__((noinline, noclone)) unsigned long many_blocks(double ms, unsigned long x)
{
	long long end = burn_cpu_ns() + (long long)(ms * 1e6);

	while (burn_cpu_ns() < end) {
		for (long i = 0; i < BURN_CHUNK; i++) {
			switch (x >> 62) {
			case 0:
				x = x * 6364136223846793005ul + 1;
				break;
			case 1:
				x = (x ^ (x >> 17)) * 0x9e3779b97f4a7c15ul;
				break;
			case 2:
				x = (x << 5) + (x >> 3) + 0x632be59bd9b4e019ul;
				break;
			default:
				x = x * 2862933555777941757ul + 3037000493ul;
				break;
			}
			__asm__ volatile("" : "+r"(x)::"memory");
			if (__builtin_expect(x == 0, 0))
				odd_value(x);
		}
	}
	return x;
}

static __attribute__((noinline, noclone)) unsigned long one_block(double ms, unsigned long x)
{
	long long end = burn_cpu_ns() + (long long)(ms * 1e6);

	while (burn_cpu_ns() < end) {
		for (long i = 0; i < BURN_CHUNK; i++) {
			x = x * 6364136223846793005ul + 1;
			__asm__ volatile("" : "+r"(x)::"memory");
		}
	}
	return x;
}

/* rounds of 3 units in many_blocks and 1 in one_block, unit_ms of CPU each */
__attribute__((visibility("default"))) void stripped_work(double unit_ms, int rounds);

void stripped_work(double unit_ms, int rounds)
{
	unsigned long x = 1;

	for (int r = 0; r < rounds; r++) {
		x = many_blocks(3 * unit_ms, x);
		x = one_block(unit_ms, x);
	}
	sink = x;
}
