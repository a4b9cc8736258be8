/* SPDX-License-Identifier: MIT */
/* Three-way comparison of two keys: the one way the sort and search comparators order. */
#ifndef PCOLLECT_COMMON_CMP_H
#define PCOLLECT_COMMON_CMP_H

/*
 * -1, 0 or 1 as a is below, equal to or above b: keys of one integer or floating type, where
 * a - b could overflow (or, for unsigned keys, wrap). CMP(b, a) orders the larger first.
 */
#define CMP(a, b) (((a) > (b)) - ((a) < (b)))

/* A comparison of keys in turn: the first that is not a tie decides. */
#define CMP_THEN(first, then) ((first) ? (first) : (then))

#endif
