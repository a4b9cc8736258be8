/* SPDX-License-Identifier: MIT */
/* Demangling of C++ and Rust (Itanium-style "_Z...") symbol names. */
#ifndef PCOLLECT_FINALIZER_DEMANGLE_H
#define PCOLLECT_FINALIZER_DEMANGLE_H

/*
 * The demangled form of name, as a new string the caller frees, or NULL when name is not a
 * mangled name (or does not demangle). Uses __cxa_demangle from libstdc++; thread-safe.
 */
char *demangle(const char *name);

#endif
