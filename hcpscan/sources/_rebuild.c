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
 *
 * yaml-rs hands only dicts, lists, str, int, float, bool, None, tuples and frozensets,
 * whose hashing runs no Python code; a caller may hand keys whose hashing does, and may
 * change the tree (or the keep) from there. So what is read is held while it is used, a
 * list's length is read again at each entry and a mapping that changed size raises
 * RuntimeError, as Python's iteration does; a list is tracked by the collector only
 * once filled; and a starting depth below 0, which Python takes, is a ValueError here
 * (the C stack has no recursion limit to stop a cycle).
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
static PyObject *mapping(PyObject *source, PyObject *strings, PyObject *restore, Py_ssize_t depth);

/* A new reference to an entry of a mapping or list at ``depth`` as rebuilt (the dispatch
 * _mapping and _sequence inline). */
static PyObject *
rebuilt_value(PyObject *item, PyObject *strings, PyObject *restore, Py_ssize_t depth)
{
    if (PyUnicode_CheckExact(item)) {
        if (PyUnicode_GET_LENGTH(item) < SharedLength)
            return shared(strings, item);
        Py_INCREF(item);
        return item;
    }
    if (PyDict_CheckExact(item))
        return mapping(item, strings, restore, depth + 1);
    if (PyList_CheckExact(item))
        return sequence(item, strings, restore, depth + 1);
    return restored(item, restore);
}

/* Entry ``i`` of a list made at length ``size`` set to ``value`` (stolen), appended past
 * it (the source grew while read); 0, or -1 with an exception set. */
static int
put(PyObject *out, Py_ssize_t size, Py_ssize_t i, PyObject *value)
{
    if (i < size) {
        PyList_SET_ITEM(out, i, value);
        return 0;
    }
    int failed = PyList_Append(out, value);
    Py_DECREF(value);
    return failed;
}

/* A new list of ``size`` empty (NULL) slots, which the collector does not track until it
 * is filled (PyObject_GC_Track): Python code a key's hash runs may walk what the collector
 * tracks (gc.get_objects), and reading a NULL slot crashes. Its free skips NULL slots. */
static PyObject *
made_list(Py_ssize_t size)
{
    PyObject *out = PyList_New(size);
    if (out != NULL)
        PyObject_GC_UnTrack(out);
    return out;
}

/* 1 with RuntimeError set when a mapping read changed size meanwhile (what Python's
 * iteration of it raises), else 0. */
static int
changed_size(PyObject *source, Py_ssize_t size)
{
    if (PyDict_GET_SIZE(source) == size)
        return 0;
    PyErr_SetString(PyExc_RuntimeError, "dictionary changed size during iteration");
    return 1;
}

/* ``out[name] = value`` (both references given up), then whether ``source``, being read,
 * kept its ``size``; 0, or -1 with an exception set. */
static int
set_entry(PyObject *out, PyObject *name, PyObject *value, PyObject *source, Py_ssize_t size)
{
    int failed = PyDict_SetItem(out, name, value);
    Py_DECREF(name);
    Py_DECREF(value);
    return failed || changed_size(source, size) ? -1 : 0;
}

/* A list made at ``size`` (``made_list``) and filled up to ``filled``: cut where the
 * source, read again at each entry, ended (the slots past it were never set), and
 * handed to the collector now that every slot holds an object. */
static PyObject *
finished_list(PyObject *out, Py_ssize_t size, Py_ssize_t filled)
{
    if (filled < size)
        Py_SET_SIZE(out, filled);
    PyObject_GC_Track(out);
    return out;
}

static PyObject *
mapping(PyObject *source, PyObject *strings, PyObject *restore, Py_ssize_t depth)
{
    if (depth >= MaxDepth)
        return not_fast();
    PyObject *out = PyDict_New();
    if (out == NULL)
        return NULL;
    Py_ssize_t pos = 0, size = PyDict_GET_SIZE(source);
    PyObject *key, *item;
    while (PyDict_Next(source, &pos, &key, &item)) {
        /* held: hashing a key that is no str may run Python code, which may change the
         * source; what it took out must not be freed under us */
        Py_INCREF(key);
        Py_INCREF(item);
        PyObject *value = rebuilt_value(item, strings, restore, depth);
        PyObject *name = value == NULL ? NULL : rebuilt_key(key, strings, restore);
        Py_DECREF(item);
        Py_DECREF(key);
        if (name == NULL) {
            Py_XDECREF(value);
            goto fail;
        }
        if (set_entry(out, name, value, source, size) < 0)
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
    PyObject *out = made_list(size);
    if (out == NULL)
        return NULL;
    Py_ssize_t i;
    /* the length read again at each entry, as Python's iteration does: Python code run by
     * a key's hash may have changed the list */
    for (i = 0; i < PyList_GET_SIZE(items); i++) {
        PyObject *item = PyList_GET_ITEM(items, i);
        Py_INCREF(item);
        PyObject *value = rebuilt_value(item, strings, restore, depth);
        Py_DECREF(item);
        if (value == NULL || put(out, size, i, value) < 0) {
            Py_DECREF(out);  /* the slots not yet set are NULL, which the list's free skips */
            return NULL;
        }
    }
    return finished_list(out, size, i);
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

static PyObject *kept(PyObject *value, PyObject *keep, PyObject *strings, PyObject *restore,
                      Py_ssize_t depth);

/* A new reference to the entry ``item`` (of key ``name``) of a mapping pruned to ``keep``
 * at ``depth``; NULL with no exception set when the keep leaves it out (it was looked
 * through for refusals), NULL with one set on failure. */
static PyObject *
kept_entry(PyObject *name, PyObject *item, PyObject *keep, PyObject *every, PyObject *strings,
           PyObject *restore, Py_ssize_t depth)
{
    PyObject *sub = every;
    if (PyUnicode_CheckExact(name)) {
        PyObject *found = PyDict_GetItemWithError(keep, name);
        if (found != NULL)
            sub = found;
        else if (PyErr_Occurred())
            return NULL;
    }
    if (sub == NULL || sub == Py_None) {
        if (PyDict_CheckExact(item) || PyList_CheckExact(item))
            (void)refusable(item, depth + 2);
        return NULL;
    }
    Py_INCREF(sub);  /* the keep is not ours: Python code a key's hash runs may change it */
    PyObject *built = (sub == Whole || item == Py_None)
        ? canonical(item, strings, restore, depth + 1)
        : kept(item, sub, strings, restore, depth + 1);
    Py_DECREF(sub);
    return built;
}

static PyObject *
kept_mapping(PyObject *value, PyObject *keep, PyObject *strings, PyObject *restore, Py_ssize_t depth)
{
    if (depth + 1 >= MaxDepth)
        return not_fast();
    PyObject *every = PyDict_GetItemWithError(keep, AnyKey);  /* NULL: None */
    if (every == NULL && PyErr_Occurred())
        return NULL;
    Py_XINCREF(every);
    PyObject *out = PyDict_New();
    if (out == NULL)
        goto fail;
    Py_ssize_t pos = 0, size = PyDict_GET_SIZE(value);
    PyObject *key, *item;
    while (PyDict_Next(value, &pos, &key, &item)) {
        Py_INCREF(key);  /* held, as in mapping() */
        Py_INCREF(item);
        PyObject *name = rebuilt_key(key, strings, restore);
        PyObject *built = name == NULL ? NULL
            : kept_entry(name, item, keep, every, strings, restore, depth);
        Py_DECREF(item);
        Py_DECREF(key);
        if (built != NULL) {
            if (set_entry(out, name, built, value, size) < 0)
                goto fail;
            continue;
        }
        Py_XDECREF(name);  /* left out (no error), or failed */
        if (PyErr_Occurred() || changed_size(value, size))
            goto fail;
    }
    Py_XDECREF(every);
    return out;
fail:
    Py_XDECREF(out);
    Py_XDECREF(every);
    return NULL;
}

static PyObject *
kept_sequence(PyObject *value, PyObject *keep, PyObject *strings, PyObject *restore, Py_ssize_t depth)
{
    if (depth + 1 >= MaxDepth)
        return not_fast();
    if (PyList_GET_SIZE(keep) < 1) {
        PyErr_SetString(PyExc_IndexError, "list index out of range");
        return NULL;
    }
    PyObject *inner = PyList_GET_ITEM(keep, 0);
    Py_INCREF(inner);  /* the keep is not ours: held while it is used */
    Py_ssize_t size = PyList_GET_SIZE(value);
    PyObject *out = made_list(size);
    if (out == NULL) {
        Py_DECREF(inner);
        return NULL;
    }
    Py_ssize_t i;
    for (i = 0; i < PyList_GET_SIZE(value); i++) {  /* as in sequence() */
        PyObject *item = PyList_GET_ITEM(value, i);
        PyObject *built;
        if (item == Py_None) {
            Py_INCREF(Py_None);
            built = Py_None;
        }
        else {
            Py_INCREF(item);
            built = kept(item, inner, strings, restore, depth + 1);
            Py_DECREF(item);
        }
        if (built == NULL || put(out, size, i, built) < 0) {
            Py_DECREF(inner);
            Py_DECREF(out);
            return NULL;
        }
    }
    Py_DECREF(inner);
    return finished_list(out, size, i);
}

static PyObject *
kept(PyObject *value, PyObject *keep, PyObject *strings, PyObject *restore, Py_ssize_t depth)
{
    if (keep == Whole)
        return canonical(value, strings, restore, depth);
    if (PyDict_CheckExact(keep) && PyDict_CheckExact(value))
        return kept_mapping(value, keep, strings, restore, depth);
    if (PyList_CheckExact(keep) && PyList_CheckExact(value))
        return kept_sequence(value, keep, strings, restore, depth);
    return canonical(value, strings, restore, depth);  /* does not fit: kept whole */
}

static int
configured(void)
{
    if (MaxDepth > 0)
        return 1;
    PyErr_SetString(PyExc_RuntimeError, "hcpscan.sources._rebuild: configure() was not called");
    return 0;
}

static int
ready(PyObject *strings, PyObject *restore)
{
    if (!configured())
        return 0;
    if (!PyDict_CheckExact(strings) || !PyDict_CheckExact(restore)) {
        PyErr_SetString(PyExc_TypeError, "strings and restore must be dicts");
        return 0;
    }
    return 1;
}

/* The depth a call starts at, into ``*depth``; 0 with an exception set. A depth below 0
 * would let the recursion run past the C stack's end (a cycle would never stop), so it is
 * refused; one past MaxDepth is taken as MaxDepth, which refuses the same (every bound is
 * ``depth + k >= MaxDepth``) and keeps ``depth + k`` from overflowing. */
static int
start_depth(PyObject *given, Py_ssize_t *depth)
{
    int overflow;
    long long value = PyLong_AsLongLongAndOverflow(given, &overflow);
    if (value == -1 && PyErr_Occurred())
        return 0;
    if (overflow < 0 || (overflow == 0 && value < 0)) {
        PyErr_SetString(PyExc_ValueError, "depth must be 0 or more");
        return 0;
    }
    *depth = (overflow > 0 || value >= MaxDepth) ? MaxDepth : (Py_ssize_t)value;
    return 1;
}

/* The arguments of a call taking ``count`` of them, the last the depth it starts at (into
 * ``*depth``) and, at ``dicts`` and ``dicts + 1`` (if not -1), the strings and restore
 * dicts; 0 with an exception set. */
static int
arguments(Py_ssize_t nargs, PyObject *const *args, Py_ssize_t count, const char *usage,
          Py_ssize_t dicts, Py_ssize_t *depth)
{
    if (nargs != count) {
        PyErr_SetString(PyExc_TypeError, usage);
        return 0;
    }
    if (dicts >= 0 ? !ready(args[dicts], args[dicts + 1]) : !configured())
        return 0;
    return start_depth(args[count - 1], depth);
}

static PyObject *
py_canonical(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    Py_ssize_t depth;
    if (!arguments(nargs, args, 4, "canonical(value, strings, restore, depth)", 1, &depth))
        return NULL;
    return canonical(args[0], args[1], args[2], depth);
}

static PyObject *
py_kept(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    Py_ssize_t depth;
    if (!arguments(nargs, args, 5, "kept(value, keep, strings, restore, depth)", 2, &depth))
        return NULL;
    return kept(args[0], args[1], args[2], args[3], depth);
}

static PyObject *
py_refusable(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    Py_ssize_t depth;
    if (!arguments(nargs, args, 2, "refusable(value, depth)", -1, &depth))
        return NULL;
    if (!PyDict_CheckExact(args[0]) && !PyList_CheckExact(args[0])) {
        PyErr_SetString(PyExc_TypeError, "refusable() takes a dict or a list");
        return NULL;
    }
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
    if (max_depth == -1 && PyErr_Occurred())
        return NULL;
    Py_ssize_t shared_length = PyLong_AsSsize_t(args[4]);
    if (shared_length == -1 && PyErr_Occurred())
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
    PyObject *made = PyModule_Create(&module);
    if (made == NULL)
        return NULL;
#ifdef HCPSCAN_REBUILD_SOURCE
    /* the CRC-32 of this file as setup.py read it: fastyaml tells a stale build by it */
    PyObject *stamp = PyLong_FromUnsignedLong(HCPSCAN_REBUILD_SOURCE);
    if (stamp == NULL || PyModule_AddObject(made, "SOURCE", stamp) < 0) {
        Py_XDECREF(stamp);
        Py_DECREF(made);
        return NULL;
    }
#endif
    return made;
}
