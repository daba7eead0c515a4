/* The rebuild of a parsed document, compiled: what fastyaml.py's _canonical, _kept and
 * _refusable do, node for node, in C.
 *
 * A parsed tree is visited once after parsing, to share equal strings, put YAML 1.2
 * numbers back to their YAML 1.1 values, leave out what a kind's keep prunes and look
 * through what is left out for what the whole rebuild refuses. In Python that visit
 * costs more than the parse itself (a call and a dispatch per node); here it is a loop.
 *
 * The Python functions stay the definition: fastyaml.py uses this module only when it
 * imports and hands it the same constants (configure), and tests/sources/
 * test_compiled_rebuild.py holds the two equal on generated trees and every real file.
 * Results are the same objects the Python code builds, with one difference that no
 * reader can see: a list is allocated at its final length rather than grown.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>

static PyObject *Whole = NULL;    /* inventory.kept.WHOLE */
static PyObject *AnyKey = NULL;   /* inventory.shapes.ANY_KEY */
static PyObject *NotFast = NULL;  /* fastyaml._NotFast */
static Py_ssize_t MaxDepth = 0;   /* core.yamldocs.MAX_DEPTH; 0 until configured */
static Py_ssize_t SharedLength = 0;

static PyObject *canonical(PyObject *value, PyObject *strings, PyObject *restore, Py_ssize_t depth);

static PyObject *
not_fast(void)
{
    PyErr_SetNone(NotFast);
    return NULL;
}

/* A new reference to the one object of this string (``strings.setdefault(s, s)``). */
static PyObject *
shared(PyObject *strings, PyObject *text)
{
    PyObject *found = PyDict_SetDefault(strings, text, text);
    Py_XINCREF(found);
    return found;
}

/* A new reference to a scalar as put back: an int or float YAML 1.2 read differently
 * (``restore.get((type(v), v), v)``), anything else itself. */
static PyObject *
restored(PyObject *value, PyObject *restore)
{
    if (PyDict_GET_SIZE(restore) && (PyLong_CheckExact(value) || PyFloat_CheckExact(value))) {
        PyObject *key = PyTuple_Pack(2, (PyObject *)Py_TYPE(value), value);
        if (key == NULL)
            return NULL;
        PyObject *found = PyDict_GetItemWithError(restore, key);
        Py_DECREF(key);
        if (found != NULL) {
            Py_INCREF(found);
            return found;
        }
        if (PyErr_Occurred())
            return NULL;
    }
    Py_INCREF(value);
    return value;
}

static inline int
is_collection_key(PyObject *key)
{
    return PyFrozenSet_CheckExact(key) || PyTuple_CheckExact(key);
}

/* A new reference to a mapping's key as rebuilt; NULL with NotFast set for a
 * collection as a key (PyYAML refuses it). */
static PyObject *
rebuilt_key(PyObject *key, PyObject *strings, PyObject *restore)
{
    if (PyUnicode_CheckExact(key))
        return shared(strings, key);
    if (is_collection_key(key))
        return not_fast();
    return restored(key, restore);
}

static PyObject *sequence(PyObject *items, PyObject *strings, PyObject *restore, Py_ssize_t depth);

static PyObject *
mapping(PyObject *source, PyObject *strings, PyObject *restore, Py_ssize_t depth)
{
    if (depth >= MaxDepth)
        return not_fast();
    PyObject *out = PyDict_New();
    if (out == NULL)
        return NULL;
    Py_ssize_t pos = 0;
    PyObject *key, *item;
    while (PyDict_Next(source, &pos, &key, &item)) {
        PyObject *value;
        if (PyUnicode_CheckExact(item)) {
            if (PyUnicode_GET_LENGTH(item) < SharedLength)
                value = shared(strings, item);
            else {
                Py_INCREF(item);
                value = item;
            }
        }
        else if (PyDict_CheckExact(item))
            value = mapping(item, strings, restore, depth + 1);
        else if (PyList_CheckExact(item))
            value = sequence(item, strings, restore, depth + 1);
        else
            value = restored(item, restore);
        if (value == NULL)
            goto fail;
        PyObject *name = rebuilt_key(key, strings, restore);
        if (name == NULL) {
            Py_DECREF(value);
            goto fail;
        }
        int failed = PyDict_SetItem(out, name, value);
        Py_DECREF(name);
        Py_DECREF(value);
        if (failed)
            goto fail;
    }
    return out;
fail:
    Py_DECREF(out);
    return NULL;
}

static PyObject *
sequence(PyObject *items, PyObject *strings, PyObject *restore, Py_ssize_t depth)
{
    if (depth >= MaxDepth)
        return not_fast();
    Py_ssize_t size = PyList_GET_SIZE(items);
    PyObject *out = PyList_New(size);
    if (out == NULL)
        return NULL;
    for (Py_ssize_t i = 0; i < size; i++) {
        PyObject *item = PyList_GET_ITEM(items, i);
        PyObject *value;
        if (PyUnicode_CheckExact(item)) {
            if (PyUnicode_GET_LENGTH(item) < SharedLength)
                value = shared(strings, item);
            else {
                Py_INCREF(item);
                value = item;
            }
        }
        else if (PyDict_CheckExact(item))
            value = mapping(item, strings, restore, depth + 1);
        else if (PyList_CheckExact(item))
            value = sequence(item, strings, restore, depth + 1);
        else
            value = restored(item, restore);
        if (value == NULL) {
            Py_DECREF(out);  /* the slots not yet set are NULL, which the list's free skips */
            return NULL;
        }
        PyList_SET_ITEM(out, i, value);
    }
    return out;
}

static PyObject *
canonical(PyObject *value, PyObject *strings, PyObject *restore, Py_ssize_t depth)
{
    if (PyDict_CheckExact(value))
        return mapping(value, strings, restore, depth + 1);
    if (PyList_CheckExact(value))
        return sequence(value, strings, restore, depth + 1);
    if (PyUnicode_CheckExact(value)) {
        if (PyUnicode_GET_LENGTH(value) < SharedLength)
            return shared(strings, value);
        Py_INCREF(value);
        return value;
    }
    return restored(value, restore);
}

/* 0, or -1 with NotFast set where the whole rebuild would refuse ``value`` at ``depth``
 * (a collection as a key, nesting past MaxDepth); builds nothing. */
static int
refusable(PyObject *value, Py_ssize_t depth)
{
    if (depth >= MaxDepth) {
        PyErr_SetNone(NotFast);
        return -1;
    }
    Py_ssize_t inner = depth + 1;
    int deep = inner >= MaxDepth;
    if (PyDict_CheckExact(value)) {
        Py_ssize_t pos = 0;
        PyObject *key, *item;
        while (PyDict_Next(value, &pos, &key, &item)) {
            if (is_collection_key(key)) {
                PyErr_SetNone(NotFast);
                return -1;
            }
            if (PyDict_CheckExact(item) ? (deep || PyDict_GET_SIZE(item))
                : PyList_CheckExact(item) ? (deep || PyList_GET_SIZE(item)) : 0) {
                if (refusable(item, inner) < 0)
                    return -1;
            }
        }
        return 0;
    }
    Py_ssize_t size = PyList_GET_SIZE(value);
    for (Py_ssize_t i = 0; i < size; i++) {
        PyObject *item = PyList_GET_ITEM(value, i);
        if (PyDict_CheckExact(item) ? (deep || PyDict_GET_SIZE(item))
            : PyList_CheckExact(item) ? (deep || PyList_GET_SIZE(item)) : 0) {
            if (refusable(item, inner) < 0)
                return -1;
        }
    }
    return 0;
}

static PyObject *
kept(PyObject *value, PyObject *keep, PyObject *strings, PyObject *restore, Py_ssize_t depth)
{
    if (keep == Whole)
        return canonical(value, strings, restore, depth);
    if (PyDict_CheckExact(keep) && PyDict_CheckExact(value)) {
        if (depth + 1 >= MaxDepth)
            return not_fast();
        PyObject *every = PyDict_GetItemWithError(keep, AnyKey);  /* borrowed; NULL: None */
        if (every == NULL && PyErr_Occurred())
            return NULL;
        PyObject *out = PyDict_New();
        if (out == NULL)
            return NULL;
        Py_ssize_t pos = 0;
        PyObject *key, *item;
        while (PyDict_Next(value, &pos, &key, &item)) {
            PyObject *name = rebuilt_key(key, strings, restore);
            if (name == NULL)
                goto fail;
            PyObject *sub = every;
            if (PyUnicode_CheckExact(name)) {
                PyObject *found = PyDict_GetItemWithError(keep, name);
                if (found != NULL)
                    sub = found;
                else if (PyErr_Occurred()) {
                    Py_DECREF(name);
                    goto fail;
                }
            }
            if (sub == NULL || sub == Py_None) {
                Py_DECREF(name);
                if ((PyDict_CheckExact(item) || PyList_CheckExact(item)) && refusable(item, depth + 2) < 0)
                    goto fail;
                continue;
            }
            PyObject *built = (sub == Whole || item == Py_None)
                ? canonical(item, strings, restore, depth + 1)
                : kept(item, sub, strings, restore, depth + 1);
            if (built == NULL) {
                Py_DECREF(name);
                goto fail;
            }
            int failed = PyDict_SetItem(out, name, built);
            Py_DECREF(name);
            Py_DECREF(built);
            if (failed)
                goto fail;
        }
        return out;
    fail:
        Py_DECREF(out);
        return NULL;
    }
    if (PyList_CheckExact(keep) && PyList_CheckExact(value)) {
        if (depth + 1 >= MaxDepth)
            return not_fast();
        if (PyList_GET_SIZE(keep) < 1) {
            PyErr_SetString(PyExc_IndexError, "list index out of range");
            return NULL;
        }
        PyObject *inner = PyList_GET_ITEM(keep, 0);
        Py_INCREF(inner);  /* the keep is not ours: held while it is used */
        Py_ssize_t size = PyList_GET_SIZE(value);
        PyObject *out = PyList_New(size);
        if (out == NULL) {
            Py_DECREF(inner);
            return NULL;
        }
        for (Py_ssize_t i = 0; i < size; i++) {
            PyObject *item = PyList_GET_ITEM(value, i);
            PyObject *built;
            if (item == Py_None) {
                Py_INCREF(Py_None);
                built = Py_None;
            }
            else
                built = kept(item, inner, strings, restore, depth + 1);
            if (built == NULL) {
                Py_DECREF(inner);
                Py_DECREF(out);
                return NULL;
            }
            PyList_SET_ITEM(out, i, built);
        }
        Py_DECREF(inner);
        return out;
    }
    return canonical(value, strings, restore, depth);  /* does not fit: kept whole */
}

static int
ready(PyObject *strings, PyObject *restore)
{
    if (MaxDepth <= 0) {
        PyErr_SetString(PyExc_RuntimeError, "hcpscan.sources._rebuild: configure() was not called");
        return 0;
    }
    if (!PyDict_CheckExact(strings) || !PyDict_CheckExact(restore)) {
        PyErr_SetString(PyExc_TypeError, "strings and restore must be dicts");
        return 0;
    }
    return 1;
}

static PyObject *
py_canonical(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    Py_ssize_t depth;
    if (nargs != 4) {
        PyErr_SetString(PyExc_TypeError, "canonical(value, strings, restore, depth)");
        return NULL;
    }
    if (!ready(args[1], args[2]) || ((depth = PyLong_AsSsize_t(args[3])) == -1 && PyErr_Occurred()))
        return NULL;
    return canonical(args[0], args[1], args[2], depth);
}

static PyObject *
py_kept(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    Py_ssize_t depth;
    if (nargs != 5) {
        PyErr_SetString(PyExc_TypeError, "kept(value, keep, strings, restore, depth)");
        return NULL;
    }
    if (!ready(args[2], args[3]) || ((depth = PyLong_AsSsize_t(args[4])) == -1 && PyErr_Occurred()))
        return NULL;
    return kept(args[0], args[1], args[2], args[3], depth);
}

static PyObject *
py_refusable(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    Py_ssize_t depth;
    if (nargs != 2) {
        PyErr_SetString(PyExc_TypeError, "refusable(value, depth)");
        return NULL;
    }
    if (MaxDepth <= 0) {
        PyErr_SetString(PyExc_RuntimeError, "hcpscan.sources._rebuild: configure() was not called");
        return NULL;
    }
    if (!PyDict_CheckExact(args[0]) && !PyList_CheckExact(args[0])) {
        PyErr_SetString(PyExc_TypeError, "refusable() takes a dict or a list");
        return NULL;
    }
    if ((depth = PyLong_AsSsize_t(args[1])) == -1 && PyErr_Occurred())
        return NULL;
    if (refusable(args[0], depth) < 0)
        return NULL;
    Py_RETURN_NONE;
}

static PyObject *
py_configure(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 5) {
        PyErr_SetString(PyExc_TypeError, "configure(whole, any_key, not_fast, max_depth, shared_length)");
        return NULL;
    }
    if (!PyExceptionClass_Check(args[2]) || !PyUnicode_CheckExact(args[1])) {
        PyErr_SetString(PyExc_TypeError, "configure: any_key must be a str and not_fast an exception class");
        return NULL;
    }
    Py_ssize_t max_depth = PyLong_AsSsize_t(args[3]);
    Py_ssize_t shared_length = PyLong_AsSsize_t(args[4]);
    if (PyErr_Occurred())
        return NULL;
    if (max_depth <= 0 || max_depth > 10000) {
        /* the C stack holds a frame per level: the bound keeps it far from its end */
        PyErr_SetString(PyExc_ValueError, "configure: max_depth must be in 1..10000");
        return NULL;
    }
    Py_INCREF(args[0]);
    Py_INCREF(args[1]);
    Py_INCREF(args[2]);
    Py_XSETREF(Whole, args[0]);
    Py_XSETREF(AnyKey, args[1]);
    Py_XSETREF(NotFast, args[2]);
    MaxDepth = max_depth;
    SharedLength = shared_length;
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"configure", (PyCFunction)(void (*)(void))py_configure, METH_FASTCALL,
     "configure(whole, any_key, not_fast, max_depth, shared_length): the constants fastyaml uses."},
    {"canonical", (PyCFunction)(void (*)(void))py_canonical, METH_FASTCALL,
     "canonical(value, strings, restore, depth): fastyaml._canonical."},
    {"kept", (PyCFunction)(void (*)(void))py_kept, METH_FASTCALL,
     "kept(value, keep, strings, restore, depth): fastyaml._kept."},
    {"refusable", (PyCFunction)(void (*)(void))py_refusable, METH_FASTCALL,
     "refusable(value, depth): fastyaml._refusable."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_rebuild",
    "The rebuild of parsed documents (fastyaml._canonical, _kept, _refusable), compiled.",
    -1, methods,
};

PyMODINIT_FUNC
PyInit__rebuild(void)
{
    return PyModule_Create(&module);
}
