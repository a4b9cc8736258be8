/* SPDX-License-Identifier: MIT */
/* A library loaded with dlopen by dlopen-work and dlopen-stress: one function that burns CPU. */
#include "burn.h"

__attribute__((visibility("default"))) void dl_work(long n);

__attribute__((visibility("default"), noinline)) void dl_work(long n)
{
	BURN(n);
}
