/* SPDX-License-Identifier: MIT */
/* pymeth: an extension module whose methods burn CPU time, named by the method tables only
   (tests/e2e/python-methods.py builds it with each interpreter's headers, stripped). */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

#include "../burn.h"

/*
 * Three ways CPython calls C: a method of a type made from a PyType_Spec (METH_VARARGS), a
 * module function (METH_O) and a METH_FASTCALL module function. burn and fast burn the CPU
 * time they are asked for themselves; spin has a nameless function of its own do it.
 */
static PyObject *burner_burn(PyObject *self, PyObject *args)
{
	double ms;

	(void)self;
	if (!PyArg_ParseTuple(args, "d", &ms))
		return NULL;
	BURN_CPU_MS_SEED(ms, 3);
	return PyLong_FromLong((long)(burn_sink & 0xff));
}

/* spin's work, in a function of its own that stripping leaves nameless (func@0x...), as a
   stripped extension's kernels are: it counts in spin (preport's user-only). */
__attribute__((noinline)) static void spin_kernel(double ms)
{
	BURN_CPU_MS_SEED(ms, 5);
}

static PyObject *pymeth_spin(PyObject *module, PyObject *arg)
{
	double ms = PyFloat_AsDouble(arg);

	(void)module;
	if (ms == -1.0 && PyErr_Occurred())
		return NULL;
	spin_kernel(ms);
	return PyLong_FromLong((long)(burn_sink & 0xff));
}

static PyObject *pymeth_fast(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
	double ms;

	(void)module;
	if (nargs != 1)
		return PyErr_Format(PyExc_TypeError, "fast() takes 1 argument");
	ms = PyFloat_AsDouble(args[0]);
	if (ms == -1.0 && PyErr_Occurred())
		return NULL;
	BURN_CPU_MS_SEED(ms, 7);
	return PyLong_FromLong((long)(burn_sink & 0xff));
}

/*
 * A module function as Cython makes one: a PyMethodDef of its own (no array, no zeroed entry
 * after it), its docstring a char array in writable data, made into a function by
 * PyCFunction_NewEx with the module's name.
 */
static PyObject *pymeth_lone(PyObject *module, PyObject *arg)
{
	double ms = PyFloat_AsDouble(arg);

	(void)module;
	if (ms == -1.0 && PyErr_Occurred())
		return NULL;
	BURN_CPU_MS_SEED(ms, 11);
	return PyLong_FromLong((long)(burn_sink & 0xff));
}

static char lone_doc[] = "lone(ms): burn ms of CPU time";
static PyMethodDef lone_def = { "lone", pymeth_lone, METH_O, lone_doc };

static PyMethodDef burner_methods[] = {
	{ "burn", burner_burn, METH_VARARGS, "burn(ms): burn ms of CPU time" },
	{ NULL, NULL, 0, NULL },
};

static PyType_Slot burner_slots[] = {
	{ Py_tp_methods, burner_methods },
	{ Py_tp_doc, (void *)"burns CPU time" },
	{ 0, NULL },
};

static PyType_Spec burner_spec = {
	"pymeth.Burner", sizeof(PyObject), 0, Py_TPFLAGS_DEFAULT, burner_slots,
};

static PyMethodDef pymeth_methods[] = {
	{ "spin", pymeth_spin, METH_O, "spin(ms): burn ms of CPU time" },
	{ "fast", (PyCFunction)(void (*)(void))pymeth_fast, METH_FASTCALL,
	  "fast(ms): burn ms of CPU time" },
	{ NULL, NULL, 0, NULL },
};

static struct PyModuleDef pymeth_module = {
	PyModuleDef_HEAD_INIT, "pymeth", NULL, -1, pymeth_methods, NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit_pymeth(void);

PyMODINIT_FUNC PyInit_pymeth(void)
{
	PyObject *m = PyModule_Create(&pymeth_module), *t, *name, *lone;

	if (!m)
		return NULL;
	t = PyType_FromSpec(&burner_spec);
	if (!t || PyModule_AddObject(m, "Burner", t)) {
		Py_XDECREF(t);
		Py_DECREF(m);
		return NULL;
	}
	name = PyUnicode_FromString("pymeth");
	lone = name ? PyCFunction_NewEx(&lone_def, NULL, name) : NULL;
	Py_XDECREF(name);
	if (!lone || PyModule_AddObject(m, "lone", lone)) {
		Py_XDECREF(lone);
		Py_DECREF(m);
		return NULL;
	}
	return m;
}
