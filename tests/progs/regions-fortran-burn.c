/* SPDX-License-Identifier: MIT */
/* CPU-time budgets for the Fortran regions program (burn_ms from Fortran: burn_ms_). */
#include "burn.h"

void burn_ms_(const double *ms);

void burn_ms_(const double *ms)
{
	BURN_CPU_MS(*ms);
}
