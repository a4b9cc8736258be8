/* SPDX-License-Identifier: MIT */
/* One name for an MPI function whatever its language binding: mpi_sendrecv_ is MPI_Sendrecv. */
#include <ctype.h>
#include <stdbool.h>
#include <stdio.h>
#include <string.h>

#include "finalizer/mpi-names.h"

/*
 * The libraries of the Fortran bindings: Open MPI's mpif.h, mpi module and mpi_f08 module
 * bindings, MPICH's (and its derivatives') Fortran library. Only there is a symbol such as
 * "mpi_send_" certainly a binding; elsewhere it may be anything.
 */
static const char *const binding_libraries[] = {
	"libmpi_mpifh.", "libmpi_usempi", "libmpichfort.", "libmpifort.", "libfmpich.", NULL,
};

static bool is_binding_library(const char *module)
{
	for (const char *const *p = binding_libraries; *p; p++)
		if (!strncmp(module, *p, strlen(*p)))
			return true;
	return false;
}

static bool cut_suffix(char *s, size_t *n, const char *suffix)
{
	size_t k = strlen(suffix);

	if (*n <= k || strncmp(s + *n - k, suffix, k))
		return false;
	*n -= k;
	s[*n] = '\0';
	return true;
}

/*
 * The bindings' symbols: [p]mpi_<name>[_f08ts|_f08|_f][_large][_|__] ([_large] before the
 * binding's suffix too) and the same in capitals
 * (gfortran, Intel and other compilers' name manglings; the profiling interface's PMPI
 * entry points), Open MPI's ompi_<name>_f[08] that they are aliases of. The C name follows
 * the standard's capitalisation: MPI_ and the first letter in capitals, the rest in lower
 * case (MPI_T_ for the tool interface's), _c for MPI-4's large-count forms.
 */
bool mpi_names_binding(const char *module, const char *sym, char *out, size_t size)
{
	char s[128];
	size_t n = strlen(sym), i, skip;
	bool ompi, large, binding;

	if (!module || !is_binding_library(module) || n >= sizeof(s) || n < 5)
		return false;
	for (i = 0; i <= n; i++)
		s[i] = (char)tolower((unsigned char)sym[i]);
	ompi = !strncmp(s, "ompi_", 5);
	skip = ompi ? 5 : !strncmp(s, "pmpi_", 5) ? 5 : !strncmp(s, "mpi_", 4) ? 4 : 0;
	if (!skip)
		return false;
	if (cut_suffix(s, &n, "_"))
		cut_suffix(s, &n, "_");
	large = cut_suffix(s, &n, "_large"); /* MPICH: mpi_send_f08ts_large_ */
	binding =
		cut_suffix(s, &n, "_f08ts") || cut_suffix(s, &n, "_f08") || cut_suffix(s, &n, "_f");
	if (ompi && !binding)
		return false; /* Open MPI's own functions are ompi_* too */
	large = large || cut_suffix(s, &n, "_large");
	if (n <= skip)
		return false;
	for (i = skip; i < n; i++)
		if (!islower((unsigned char)s[i]) && !isdigit((unsigned char)s[i]) && s[i] != '_')
			return false;
	if (!strncmp(s + skip, "t_", 2))
		s[skip] = 'T';
	else
		s[skip] = (char)toupper((unsigned char)s[skip]);
	n = strlen(s + skip) + (large ? 2 : 0);
	if (n + 4 >= size)
		return false;
	snprintf(out, size, "MPI_%s%s", s + skip, large ? "_c" : "");
	return true;
}
