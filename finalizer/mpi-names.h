/* SPDX-License-Identifier: MIT */
/* One name for an MPI function whatever its language binding. */
#ifndef PCOLLECT_FINALIZER_MPI_NAMES_H
#define PCOLLECT_FINALIZER_MPI_NAMES_H

#include <stdbool.h>
#include <stddef.h>

/*
 * When sym is a symbol of module (a base name) that is an MPI Fortran binding
 * ("mpi_sendrecv_", "MPI_SENDRECV", "ompi_sendrecv_f", "pmpi_allreduce_f08_"), the C name of
 * its function ("MPI_Sendrecv") in out[size], and true; false otherwise (out untouched).
 */
bool mpi_names_binding(const char *module, const char *sym, char *out, size_t size);

#endif
