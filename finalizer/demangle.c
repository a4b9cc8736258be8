/* SPDX-License-Identifier: MIT */
/* Demangling through libstdc++'s __cxa_demangle (the C++ ABI's demangler, linked -lstdc++). */
#include <stddef.h>
#include <stdlib.h>
#include <string.h>

#include "finalizer/demangle.h"

/* Declared by <cxxabi.h>, which is C++ only; the ABI fixes this signature. */
char *__cxa_demangle(const char *mangled, char *buf, size_t *len, int *status);

char *demangle(const char *name)
{
	int status = 0;
	char *out;

	/* Only Itanium names: "_Z..." (also Rust's legacy scheme); plain C names stay as they are.
	 */
	if (!name || strncmp(name, "_Z", 2))
		return NULL;
	out = __cxa_demangle(name, NULL, NULL, &status);
	if (status) {
		free(out);
		return NULL;
	}
	return out;
}
