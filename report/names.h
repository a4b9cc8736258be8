/* SPDX-License-Identifier: MIT */
/* Function names as people type them: short forms and suffixes of qualified names. */
#ifndef PCOLLECT_REPORT_NAMES_H
#define PCOLLECT_REPORT_NAMES_H

#include <stdbool.h>
#include <stddef.h>

/*
 * The length of name without its C++ parameter list and what follows it (" const", "&&"):
 * "ns::Grid<double>::relax(int) const" -> the length of "ns::Grid<double>::relax",
 * "ns::S::operator()(int)" -> "ns::S::operator()". Names without one ("Simulation.step",
 * "func@0x1a2b", "[unknown]") keep their length.
 */
size_t names_short_len(const char *name);

/*
 * True when typed names the function called full without being its whole name: typed is the
 * end of full, of full without its parameter list, or of that without template arguments,
 * starting at the beginning of a name component ("::" in C++, "." in Python). "relax" and
 * "Grid::relax" name "physics::Grid<double>::relax(int)"; "step" names "Simulation.step";
 * "lax" names neither.
 */
bool names_match(const char *full, const char *typed);

/* The last component of full's short form ("relax" of "physics::Grid<double>::relax(int)"). */
const char *names_last(const char *full, size_t *len);

#endif
