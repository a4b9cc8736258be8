/* SPDX-License-Identifier: MIT */
/* A function gcc splits into a hot part and a ".cold" one (the fixture of
 * tests/unit/test-symtab-split.c). */
#include <stdio.h>
#include <stdlib.h>

__attribute__((cold, noinline)) static void complain(const char *what, long v)
{
	fprintf(stderr, "odd %s: %ld\n", what, v);
}

long split_work(long n);

__attribute__((visibility("default"))) long split_work(long n)
{
	long s = 0, i;

	for (i = 0; i < n; i++) {
		if (__builtin_expect(i * 7 % 1000003 == 999999, 0)) {
			complain("i", i);
			s -= i * 3;
			if (s < -100)
				s = labs(s) / 2;
			continue;
		}
		s += i ^ (s >> 3);
	}
	return s;
}
