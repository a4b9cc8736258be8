/* SPDX-License-Identifier: MIT */
/* Saturating sums and products of values read from input: they stop at the limit, never wrap. */
#ifndef PCOLLECT_COMMON_SAT_H
#define PCOLLECT_COMMON_SAT_H

#include <stdint.h>

/*
 * A result's values come from files anyone may have damaged or forged: a sum of them must not
 * overflow (undefined for signed integers, a wrong answer for unsigned ones). These stop at
 * the largest (or, signed, smallest) value instead; a saturated figure is absurd but never
 * negative where it should be large, and never a crash under UBSan.
 */
static inline int64_t sat_add_i64(int64_t a, int64_t b)
{
	int64_t r;

	if (__builtin_add_overflow(a, b, &r))
		return b > 0 ? INT64_MAX : INT64_MIN;
	return r;
}

static inline int64_t sat_sub_i64(int64_t a, int64_t b)
{
	int64_t r;

	if (__builtin_sub_overflow(a, b, &r))
		return b < 0 ? INT64_MAX : INT64_MIN;
	return r;
}

static inline int64_t sat_mul_i64(int64_t a, int64_t b)
{
	int64_t r;

	if (__builtin_mul_overflow(a, b, &r))
		return (a < 0) != (b < 0) ? INT64_MIN : INT64_MAX;
	return r;
}

static inline uint64_t sat_add_u64(uint64_t a, uint64_t b)
{
	uint64_t r;

	return __builtin_add_overflow(a, b, &r) ? UINT64_MAX : r;
}

static inline uint64_t sat_mul_u64(uint64_t a, uint64_t b)
{
	uint64_t r;

	return __builtin_mul_overflow(a, b, &r) ? UINT64_MAX : r;
}

#endif
