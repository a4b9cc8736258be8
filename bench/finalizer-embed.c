/* SPDX-License-Identifier: MIT */
/* A C program linked with a large library (libpython, -g DWARF 5): it calls libpython's C API
   in a loop (integers, strings, a dict), so its stacks are native frames through libpython and
   libc, with no Python frame. bench/finalizer-bench.py profiles it with pcollect and perf. */
#include <Python.h>

int main(int argc, char **argv)
{
	long n = argc > 1 ? atol(argv[1]) : 3000000, i, total = 0;
	PyObject *d;

	Py_Initialize();
	d = PyDict_New();
	for (i = 0; i < n; i++) {
		PyObject *k = PyLong_FromLong(i % 4096), *big = PyLong_FromLong(i);
		PyObject *sq = PyNumber_Multiply(big, big), *s = PyObject_Str(sq);
		PyObject *u = PyUnicode_FromFormat("key-%ld-%U", i % 977, s);

		PyDict_SetItem(d, k, u);
		total += PyUnicode_GetLength(u) + PyObject_Hash(u) % 3;
		Py_DECREF(k);
		Py_DECREF(big);
		Py_DECREF(sq);
		Py_DECREF(s);
		Py_DECREF(u);
	}
	printf("%ld %zd\n", total, PyDict_Size(d));
	Py_DECREF(d);
	return Py_FinalizeEx() < 0;
}
