/* SPDX-License-Identifier: MIT */
/* What the result directory's unit tests share: a scratch directory, its files, no job around. */
#ifndef PCOLLECT_TESTS_UNIT_RESULT_FIXTURE_H
#define PCOLLECT_TESTS_UNIT_RESULT_FIXTURE_H

#include <stdbool.h>

/* The scratch directory, /tmp/<program>.XXXXXX, from fixture_init() to fixture_clean(). */
extern char fixture_dir[];
/* The directory the test started in: where a test that changed directory goes back to. */
extern int fixture_cwd;

/* unit_run()'s init: outside any parallel job, a new scratch directory. 0 or -1. */
int fixture_init(void);
/* unit_run()'s clean: back to the start directory, the scratch directory removed. */
int fixture_clean(void);

/* Unsets every launcher's variable: a test runs outside any job, even under Slurm, unless it
   sets them. */
void env_clear(void);
/* fixture_dir/name, in a static buffer of its own per slot (0 to 3; make_dir() uses 3). */
const char *tmp_path(int slot, const char *name);
/* Makes fixture_dir/name, a directory. */
void make_dir(const char *name);
/* Whether dir/name exists (a dangling link does). */
bool exists(const char *dir, const char *name);
/* Makes dir/name an empty file. */
void touch(const char *dir, const char *name);
/* Makes dir look like the user made it long ago. */
void make_old(const char *dir);

#endif
