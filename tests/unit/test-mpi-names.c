/* SPDX-License-Identifier: MIT */
/* Unit tests of finalizer/mpi-names.c: the C name of each Fortran binding's symbol, and no
   name for what is not a binding or not in a binding library. */
#include <string.h>

#include "finalizer/mpi-names.h"
#include "tests/unit/unit.h"

struct case_ {
	const char *module, *sym, *want; /* want NULL: not a binding */
};

static const struct case_ cases[] = {
	/* Open MPI: mpif.h's gfortran manglings and the functions they alias */
	{ "libmpi_mpifh.so.40", "mpi_sendrecv_", "MPI_Sendrecv" },
	{ "libmpi_mpifh.so.40", "mpi_sendrecv__", "MPI_Sendrecv" },
	{ "libmpi_mpifh.so.40", "MPI_SENDRECV", "MPI_Sendrecv" },
	{ "libmpi_mpifh.so.40", "ompi_sendrecv_f", "MPI_Sendrecv" },
	{ "libmpi_mpifh.so.40", "PMPI_Comm_rank_f08", "MPI_Comm_rank" },
	{ "libmpi_usempif08.so.40", "pmpi_allreduce_f08_", "MPI_Allreduce" },
	{ "libmpi_mpifh.so.40", "ompi_comm_rank", NULL }, /* Open MPI's own, not a binding */
	/* MPICH */
	{ "libmpichfort.so.12", "pmpi_isendrecv_", "MPI_Isendrecv" },
	{ "libmpichfort.so.12", "mpi_sendrecv_f08ts_large_", "MPI_Sendrecv_c" },
	{ "libmpichfort.so.12", "mpi_t_init_thread_", "MPI_T_init_thread" },
	{ "libmpichfort.so.12", "mpi_wtime_", "MPI_Wtime" },
	{ "libmpichfort.so.12", "mpi_", NULL },
	{ "libmpichfort.so.12", "mpir_err_return_comm", NULL },
	{ "libmpichfort.so.12", "mpi_sendrecv$", NULL },
	/* a program's own function of that shape is its own */
	{ "app", "mpi_sendrecv_", NULL },
	{ "libmpi.so.40", "mpi_sendrecv_", NULL },
	{ NULL, "mpi_sendrecv_", NULL },
};

static void test_mpi_names_bindings(void)
{
	for (size_t i = 0; i < sizeof(cases) / sizeof(cases[0]); i++) {
		char out[128] = "untouched";
		bool got = mpi_names_binding(cases[i].module, cases[i].sym, out, sizeof(out));

		CU_ASSERT_EQUAL(got, cases[i].want != NULL);
		CU_ASSERT_STRING_EQUAL(out, cases[i].want ? cases[i].want : "untouched");
		if (got != (cases[i].want != NULL) ||
		    strcmp(out, cases[i].want ? cases[i].want : "untouched"))
			fprintf(stderr, "case %zu: %s in %s gave %s\n", i, cases[i].sym,
				cases[i].module ? cases[i].module : "(none)", out);
	}
}

/* A name too long for out is not cut: no name at all. */
static void test_mpi_names_small_buffer(void)
{
	char out[8] = "x";

	CU_ASSERT_FALSE(mpi_names_binding("libmpichfort.so.12", "mpi_sendrecv_", out, sizeof(out)));
}

UNIT_MAIN("mpi-names", NULL, NULL,
	  {
		  { "bindings", test_mpi_names_bindings },
		  { "small buffer", test_mpi_names_small_buffer },
	  })
