/* SPDX-License-Identifier: MIT */
/* Functions this project does not call, refused at compile time (git's banned.h, by attribute). */
#ifndef PCOLLECT_COMMON_BANNED_H
#define PCOLLECT_COMMON_BANNED_H

/*
 * meson.build force-includes this header ahead of every C file and makes
 * -Wdeprecated-declarations an error, so a call of one of these fails the build with the
 * replacement named. They write without a bound: snprintf() and memcpy() with the size
 * known say what fits, and a too long string is cut, not spilled. Declared again here with
 * the attribute, not hidden behind a macro, so the C library's own headers (and its fortified
 * inline versions) stay as they are.
 */
#include <stdarg.h>
#include <stdio.h>
#include <string.h>

#define BANNED_USE(alt) __attribute__((deprecated("banned (common/banned.h): use " alt)))

extern int sprintf(char *, const char *, ...) BANNED_USE("snprintf");
extern int vsprintf(char *, const char *, va_list) BANNED_USE("vsnprintf");
extern char *strcpy(char *, const char *) BANNED_USE("snprintf, or memcpy with the length");
extern char *strcat(char *, const char *) BANNED_USE("snprintf into the rest of the buffer");
extern char *strncpy(char *, const char *, size_t) BANNED_USE("snprintf (strncpy may not end "
							      "the string)");
extern char *strncat(char *, const char *, size_t) BANNED_USE("snprintf");

#endif
