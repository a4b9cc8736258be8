/* SPDX-License-Identifier: MIT */
/* Merging a native stack with the Python frames its eval-loop frames were running. */
#include <string.h>
#include "finalizer/python/python.h"

bool pymerge_is_eval(const char *name)
{
	static const char eval[] = "_PyEval_EvalFrameDefault";
	size_t n = sizeof(eval) - 1;

	/* gcc's hot/cold split and partial inlining make "name.cold", "name.part.0" */
	return name && strncmp(name, eval, n) == 0 && (name[n] == 0 || name[n] == '.');
}

static void put(struct pymerge_item *out, size_t cap, size_t *len, bool python, size_t index)
{
	if (*len < cap) {
		out[*len].python = python;
		out[*len].index = (uint32_t)index;
	}
	(*len)++;
}

/* Emit the next group of Python frames (innermost first), from *j to its entry frame. */
static void put_group(const uint32_t *pyflags, size_t npy, size_t *j, struct pymerge_item *out,
		      size_t cap, size_t *len)
{
	while (*j < npy) {
		bool entry = pyflags[*j] & RAW_PY_FRAME_ENTRY;

		put(out, cap, len, true, *j);
		(*j)++;
		if (entry)
			break;
	}
}

size_t pymerge_stack(const uint32_t *native, size_t n, const uint32_t *pyflags, size_t npy,
		     enum pymerge_mode mode, struct pymerge_item *out, size_t cap, uint32_t *result)
{
	size_t i, j = 0, len = 0;
	uint32_t res = 0;

	for (i = 0; i < n; i++) {
		bool eval = native[i] & PYMERGE_NATIVE_EVAL;
		bool interp = native[i] & (PYMERGE_NATIVE_INTERP | PYMERGE_NATIVE_EVAL);

		if (eval && j < npy) {
			put_group(pyflags, npy, &j, out, cap, &len);
			if (mode == PYMERGE_ALL)
				put(out, cap, &len, false, i);
			continue;
		}
		if (eval && npy)
			res |= PYMERGE_UNMATCHED_EVAL;
		if (npy && mode == PYMERGE_PYTHON_ONLY)
			continue;
		if (npy && mode == PYMERGE_USER_ONLY && interp)
			continue;
		put(out, cap, &len, false, i);
	}
	if (j < npy) {
		res |= PYMERGE_UNMATCHED_PY;
		while (j < npy)
			put(out, cap, &len, true, j++);
	}
	if (result)
		*result = res;
	return len < cap ? len : cap;
}
