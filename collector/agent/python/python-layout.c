/* SPDX-License-Identifier: MIT */
/* The layouts of CPython 3.10-3.15 on x86_64: lookups in the rows python-probe.c printed. */
#include "collector/agent/python/python-layout.h"

#define COUNT(a) (sizeof(a) / sizeof((a)[0]))

/*
 * The rows are generated: scripts/python-layouts compiles python-probe.c against a version's
 * headers (-DPy_BUILD_CORE) and writes what it prints into python-layout-rows.def, one row
 * per minor version, its values in the order the structs declare their fields (the unit
 * test holds the file's columns to that order). Internal structures may change in a patch
 * release: the unit test recompiles the probe against every interpreter whose headers it
 * finds and compares; 3.13+ also publish most of these in _Py_DebugOffsets, which
 * python-debug.c prefers at run time.
 */
#define PYLAYOUT_ROW(...) { __VA_ARGS__ },
static const struct pylayout layouts[] = {
#include "collector/agent/python/python-layout-rows.def"
};

#define PYDEBUG_ROW(...) { __VA_ARGS__ },
static const struct pydebug_map debug_maps[] = {
#include "collector/agent/python/python-layout-rows.def"
};

#define PYOBJ_ROW(...) { __VA_ARGS__ },
static const struct pyobj_layout obj_layouts[] = {
#include "collector/agent/python/python-layout-rows.def"
};

const struct pylayout *pylayout_find(int minor)
{
	size_t i;

	for (i = 0; i < COUNT(layouts); i++)
		if (layouts[i].minor == minor)
			return &layouts[i];
	return NULL;
}

const struct pylayout *pylayout_newest(void)
{
	return &layouts[COUNT(layouts) - 1];
}

const struct pydebug_map *pydebug_map_find(int minor)
{
	size_t i;

	if (minor < debug_maps[0].minor)
		return NULL;
	for (i = 0; i < COUNT(debug_maps); i++)
		if (debug_maps[i].minor == minor)
			return &debug_maps[i];
	return &debug_maps[COUNT(debug_maps) - 1];
}

const struct pyobj_layout *pyobj_layout_find(int minor)
{
	size_t i;

	for (i = 0; i < COUNT(obj_layouts); i++)
		if (obj_layouts[i].minor == minor)
			return &obj_layouts[i];
	return minor > obj_layouts[COUNT(obj_layouts) - 1].minor
		       ? &obj_layouts[COUNT(obj_layouts) - 1]
		       : NULL;
}

/* The rows' columns, named as python-probe.c prints them. */
#define PYLAYOUT_COLUMN(name) { #name, offsetof(struct pylayout, name) },
const struct pylayout_field pylayout_fields[] = {
	{ "minor", offsetof(struct pylayout, minor) },
#include "collector/agent/python/python-layout-rows.def"
	{ NULL, 0 },
};

#define PYDEBUG_COLUMN(name) { "dbg_" #name, offsetof(struct pydebug_map, name) },
const struct pylayout_field pydebug_map_fields[] = {
#include "collector/agent/python/python-layout-rows.def"
	{ NULL, 0 },
};

#define PYOBJ_COLUMN(name) { "obj_" #name, offsetof(struct pyobj_layout, name) },
const struct pylayout_field pyobj_layout_fields[] = {
#include "collector/agent/python/python-layout-rows.def"
	{ NULL, 0 },
};

/* Every field has a column, and every row a value per column (a short one would leave zeros). */
#define ROW_FITS(S, ...)                                                                           \
	_Static_assert(                                                                            \
		sizeof((int32_t[]){ __VA_ARGS__ }) == sizeof(S),                                   \
		"a row of python-layout-rows.def does not hold one value per field of " #S);
#define PYLAYOUT_ROW(...) ROW_FITS(struct pylayout, __VA_ARGS__)
#define PYDEBUG_ROW(...)  ROW_FITS(struct pydebug_map, __VA_ARGS__)
#define PYOBJ_ROW(...)    ROW_FITS(struct pyobj_layout, __VA_ARGS__)
#include "collector/agent/python/python-layout-rows.def"

_Static_assert(
	sizeof(struct pylayout) == (COUNT(pylayout_fields) - 1) * sizeof(int32_t),
	"python-layout-rows.def lacks a field of struct pylayout: run scripts/python-layouts");
_Static_assert(sizeof(struct pydebug_map) == COUNT(pydebug_map_fields) * sizeof(int32_t),
	       "python-layout-rows.def lacks a field of struct pydebug_map: run "
	       "scripts/python-layouts");
_Static_assert(sizeof(struct pyobj_layout) == COUNT(pyobj_layout_fields) * sizeof(int32_t),
	       "python-layout-rows.def lacks a field of struct pyobj_layout: run "
	       "scripts/python-layouts");
