/* SPDX-License-Identifier: MIT */
/* The result database's tables and indexes, from finalizer/schema.sql (embedded at build). */
#ifndef PCOLLECT_FINALIZER_SCHEMA_H
#define PCOLLECT_FINALIZER_SCHEMA_H

/* The schema these strings create: meta.schema_version (docs/schema.md). */
#define FIN_SCHEMA_VERSION 2

/* The sections of schema.sql, each a string of SQL statements for sqlite3_exec(). */
extern const char fin_schema_tables[];
extern const char fin_schema_symbol_indexes[]; /* after functions and frames are written */
extern const char fin_schema_sample_indexes[]; /* after stacks and samples are written */

#endif
