/* SPDX-License-Identifier: MIT */
/* Lexical path helpers: join and clean path names without asking the file system. */
#ifndef PCOLLECT_COMMON_PATH_H
#define PCOLLECT_COMMON_PATH_H

/*
 * dir/name as a new string (caller frees), or NULL with errno ENOMEM. One '/' separates them:
 * none is added after a dir that ends with one; an empty dir gives a copy of name.
 */
char *path_join(const char *dir, const char *name);

/*
 * Clean p in place, lexically, as Go's filepath.Clean does: "//" and "/./" fold and "dir/.."
 * goes away ("/b/../tests/x.c" is "/tests/x.c", "./csu/../sysdeps/x.h" is "sysdeps/x.h"); ".."
 * that cannot be folded stays at the front of a relative path ("a/../../b" is "../b"), "/.."
 * is "/", a trailing '/' goes and an empty result is "." ("" itself stays "": no room). Build
 * systems write names such as "../tests/x.c" under the build directory; shown as is they
 * read badly and one file gets two names. Symbolic links are not followed: "l/.." is "."
 * even when l points elsewhere.
 */
void path_clean(char *p);

#endif
