/* SPDX-License-Identifier: MIT */
/* Deterministic CPU work for the collector's known-behaviour programs. */
#ifndef PCOLLECT_TESTS_BURN_H
#define PCOLLECT_TESTS_BURN_H

/*
 * A chain of dependent multiplications: its latency (not loop alignment or the front end)
 * sets the speed, so equal iteration counts cost equal CPU time in every function. About
 * 80 million iterations per 100 ms here.
 */
static volatile unsigned long burn_sink;
#define BURN(n)                                                     \
	do {                                                        \
		unsigned long x_ = 1;                               \
		for (long i_ = 0; i_ < (long)(n); i_++) {           \
			x_ = x_ * 6364136223846793005ul + 1;        \
			__asm__ volatile("" : "+r"(x_)::"memory");  \
		}                                                   \
		burn_sink = x_;                                     \
	} while (0)

#define BURN_100MS 80000000L

#endif
