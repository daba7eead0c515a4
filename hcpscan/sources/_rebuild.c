/* The rebuild of a parsed document, compiled: what fastyaml.py's _canonical, _kept and
 * _refusable do, node for node, in C. Also, further below, three text scans of the fast
 * path over an ASCII text's bytes (the YAML 1.1/1.2 token pre-scan, List entries'
 * positions, document markers), each the function of fastyaml.py it is named after.
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

/* ---- spec_bytes: inventory.kept._spec_bytes, the bytes a pod spec's key is a digest of ---- */

#define SPEC_MAX_DEPTH 512  /* deeper: None (the marshal key decides), as kept._SPEC_DEPTH */

typedef struct {
    char *data;
    Py_ssize_t size, used;
} SpecBuffer;

/* 0, or -1 with MemoryError set */
static int
spec_room(SpecBuffer *buffer, Py_ssize_t more)
{
    if (more > PY_SSIZE_T_MAX - buffer->used) {
        PyErr_NoMemory();
        return -1;
    }
    Py_ssize_t need = buffer->used + more;
    if (need <= buffer->size)
        return 0;
    Py_ssize_t size = buffer->size ? buffer->size : 4096;
    while (size < need)
        size = size > PY_SSIZE_T_MAX / 2 ? need : size * 2;
    char *data = PyMem_Realloc(buffer->data, (size_t)size);
    if (data == NULL) {
        PyErr_NoMemory();
        return -1;
    }
    buffer->data = data;
    buffer->size = size;
    return 0;
}

/* A tag and 8 bytes little-endian (a length, an int's value or a float's bits). */
static int
spec_tagged(SpecBuffer *buffer, char tag, unsigned long long value)
{
    if (spec_room(buffer, 9) < 0)
        return -1;
    char *at = buffer->data + buffer->used;
    at[0] = tag;
    for (int i = 0; i < 8; i++)
        at[1 + i] = (char)((value >> (8 * i)) & 0xff);
    buffer->used += 9;
    return 0;
}

/* A length: below 256 the small tag and one byte, else the large tag and 8 bytes. */
static int
spec_length(SpecBuffer *buffer, char small, char large, Py_ssize_t length)
{
    if (length >= 256)
        return spec_tagged(buffer, large, (unsigned long long)length);
    if (spec_room(buffer, 2) < 0)
        return -1;
    buffer->data[buffer->used] = small;
    buffer->data[buffer->used + 1] = (char)length;
    buffer->used += 2;
    return 0;
}

/* 1 written, 0 a value not written here (the caller answers None), -1 an error set. */
static int
spec_write(SpecBuffer *buffer, PyObject *value, int depth)
{
    if (depth > SPEC_MAX_DEPTH)
        return 0;
    if (value == Py_None || value == Py_True || value == Py_False) {
        if (spec_room(buffer, 1) < 0)
            return -1;
        buffer->data[buffer->used++] = value == Py_None ? 'N' : value == Py_True ? 'T' : 'F';
        return 1;
    }
    if (PyUnicode_CheckExact(value)) {
        if (PyUnicode_READY(value) < 0)
            return -1;
        if (PyUnicode_IS_ASCII(value)) {  /* its own bytes are its UTF-8 */
            Py_ssize_t length = PyUnicode_GET_LENGTH(value);
            if (spec_length(buffer, 's', 'S', length) < 0 || spec_room(buffer, length) < 0)
                return -1;
            memcpy(buffer->data + buffer->used, PyUnicode_DATA(value), (size_t)length);
            buffer->used += length;
            return 1;
        }
        /* a bytes object made and dropped, as marshal does: PyUnicode_AsUTF8AndSize would
         * keep a UTF-8 copy inside every such string of the inventory */
        PyObject *encoded = PyUnicode_AsUTF8String(value);
        if (encoded == NULL) {  /* a lone surrogate: not written here */
            if (!PyErr_ExceptionMatches(PyExc_UnicodeEncodeError))
                return -1;
            PyErr_Clear();
            return 0;
        }
        Py_ssize_t length = PyBytes_GET_SIZE(encoded);
        int failed = spec_length(buffer, 's', 'S', length) < 0 || spec_room(buffer, length) < 0;
        if (!failed) {
            memcpy(buffer->data + buffer->used, PyBytes_AS_STRING(encoded), (size_t)length);
            buffer->used += length;
        }
        Py_DECREF(encoded);
        return failed ? -1 : 1;
    }
    if (PyLong_CheckExact(value)) {
        int overflow = 0;
        long long number = PyLong_AsLongLongAndOverflow(value, &overflow);
        if (overflow)
            return 0;  /* past 64 bits: not written here */
        if (number == -1 && PyErr_Occurred())
            return -1;
        if (number >= 0 && number < 256)
            return spec_length(buffer, 'i', 'I', (Py_ssize_t)number) < 0 ? -1 : 1;
        return spec_tagged(buffer, 'I', (unsigned long long)number) < 0 ? -1 : 1;
    }
    if (PyFloat_CheckExact(value)) {
        double number = PyFloat_AS_DOUBLE(value);
        unsigned long long bits;
        memcpy(&bits, &number, sizeof bits);
        return spec_tagged(buffer, 'f', bits) < 0 ? -1 : 1;
    }
    if (PyDict_CheckExact(value)) {
        Py_ssize_t pos = 0, size = PyDict_GET_SIZE(value);
        PyObject *key, *item;
        if (spec_length(buffer, 'd', 'D', size) < 0)
            return -1;
        /* nothing here runs Python code, so the dict cannot change while read */
        while (PyDict_Next(value, &pos, &key, &item)) {
            int done = spec_write(buffer, key, depth + 1);
            if (done > 0)
                done = spec_write(buffer, item, depth + 1);
            if (done <= 0)
                return done;
        }
        return 1;
    }
    if (PyList_CheckExact(value)) {
        Py_ssize_t size = PyList_GET_SIZE(value);
        if (spec_length(buffer, 'l', 'L', size) < 0)
            return -1;
        for (Py_ssize_t i = 0; i < size; i++) {
            int done = spec_write(buffer, PyList_GET_ITEM(value, i), depth + 1);
            if (done <= 0)
                return done;
        }
        return 1;
    }
    return 0;  /* any other type (a subclass, a tuple, bytes...): not written here */
}

static PyObject *
py_spec_bytes(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    if (nargs != 1) {
        PyErr_SetString(PyExc_TypeError, "spec_bytes(value)");
        return NULL;
    }
    SpecBuffer buffer = {NULL, 0, 0};
    int done = spec_write(&buffer, args[0], 0);
    PyObject *out = NULL;
    if (done > 0)
        out = PyBytes_FromStringAndSize(buffer.data, buffer.used);
    else if (done == 0) {
        Py_INCREF(Py_None);
        out = Py_None;
    }
    PyMem_Free(buffer.data);
    return out;
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

/* ---- The YAML 1.1/1.2 token pre-scan of an ASCII text: fastyaml._scalar_tokens ----
 *
 * fastyaml._scalar_tokens (with _plain_text, _plain_lines, _structure, _node_column,
 * _token, _whole_scalar and its patterns) is the definition; this is the same function
 * over a text's bytes, read once line by line, without splitting lines into strings or
 * remembering them across files. It takes pure-ASCII texts only (Python's regex classes
 * and str methods on other characters are the Python code's to answer), and the GIL is
 * released while the bytes are read. tests/sources/test_compiled_tokens.py holds it to
 * the Python definition. */

enum {
    K_FIRST = 1,  /* may start a token: [-+._0-9yYnNoO<=~&*!?%] (fastyaml._FIRST) */
    K_STOP = 2,   /* ends a token: blanks, line breaks, flow indicators */
    K_NAME = 4,   /* may follow "&", "*" or "!" in flow (fastyaml._ANCHOR_NAME) */
    K_DEEP = 8,   /* what block nesting is written with (fastyaml._DEEP) */
    K_LOOK = 16,  /* a character the line scan stops at */
};
static unsigned char kinds[256];

static void
init_kinds(void)
{
    const char *first = "-+._0123456789yYnNoO<=~&*!?%";
    for (const char *c = first; *c; c++)
        kinds[(unsigned char)*c] |= K_FIRST;
    for (const char *c = " \t\r\n,[]{}"; *c; c++)
        kinds[(unsigned char)*c] |= K_STOP;
    for (int c = 0; c < 256; c++)
        if ((c >= '0' && c <= '9') || (c >= 'A' && c <= 'Z') || (c >= 'a' && c <= 'z'))
            kinds[c] |= K_NAME;
    for (const char *c = "_-!"; *c; c++)
        kinds[(unsigned char)*c] |= K_NAME;
    for (const char *c = " \t?-"; *c; c++)
        kinds[(unsigned char)*c] |= K_DEEP;
    for (const char *c = ":-[{,\"']}\\\r"; *c; c++)
        kinds[(unsigned char)*c] |= K_LOOK;
    for (int c = 0; c < 256; c++)  /* not printable ASCII: PyYAML refuses it */
        if ((c < 0x20 && c != '\t' && c != '\r' && c != '\n') || c >= 0x7F)
            kinds[c] |= K_LOOK;
}

typedef struct {
    Py_ssize_t start, end;
} Span;

typedef struct {
    const unsigned char *s;
    Py_ssize_t n;
    Py_ssize_t *table;  /* distinct tokens: (start, length) pairs into s; start -1: free */
    size_t capacity;    /* pairs, a power of two */
    size_t used;
    Span *spans;        /* _structure's spans */
    Py_ssize_t nspans, spans_capacity;
    int special;        /* an anchor, alias, tag or complex key */
    int nomem;
    int crowded;        /* a probe ran past MAX_PROBES: tokens made to collide */
} Scan;

/* The longest run of taken slots a token is looked for in. Linear probing in a table at
 * most half full keeps runs short for any text written for Kubernetes (its longest run
 * over N = 500's files and the real ones is a few dozen slots), but the hash has no
 * secret: tokens computed to fall in one run would make the scan quadratic (200,000 of
 * them: 42 s). Past this bound the scan stops and the Python definition answers (its
 * sets' hash is seeded per process): the same tokens, in linear time. */
#define MAX_PROBES 512

static inline Py_ssize_t
past_blanks(const unsigned char *s, Py_ssize_t i, Py_ssize_t b)
{
    while (i < b && (s[i] == ' ' || s[i] == '\t'))
        i++;
    return i;
}

static inline Py_ssize_t
token_end(const unsigned char *s, Py_ssize_t i, Py_ssize_t b)
{
    while (i < b && !(kinds[s[i]] & K_STOP))
        i++;
    return i;
}

static size_t
token_hash(const unsigned char *p, Py_ssize_t length)
{
    size_t h = 14695981039346656037ULL;
    for (Py_ssize_t i = 0; i < length; i++)
        h = (h ^ p[i]) * 1099511628211ULL;
    return h ^ (h >> 29);
}

static int
grow_table(Scan *t)
{
    size_t capacity = t->capacity ? t->capacity * 2 : 64;
    Py_ssize_t *table = PyMem_RawMalloc(capacity * 2 * sizeof(Py_ssize_t));
    if (table == NULL)
        return -1;
    for (size_t i = 0; i < capacity; i++)
        table[2 * i] = -1;
    for (size_t i = 0; i < t->capacity; i++) {
        Py_ssize_t start = t->table[2 * i];
        if (start < 0)
            continue;
        Py_ssize_t length = t->table[2 * i + 1];
        size_t slot = token_hash(t->s + start, length) & (capacity - 1);
        for (int probes = 0; table[2 * slot] >= 0; probes++) {
            if (probes >= MAX_PROBES) {
                PyMem_RawFree(table);
                t->crowded = 1;
                return -1;
            }
            slot = (slot + 1) & (capacity - 1);
        }
        table[2 * slot] = start;
        table[2 * slot + 1] = length;
    }
    PyMem_RawFree(t->table);
    t->table = table;
    t->capacity = capacity;
    return 0;
}

/* The token s[start:start + length] kept (once). */
static void
keep_token(Scan *t, Py_ssize_t start, Py_ssize_t length)
{
    if ((t->used + 1) * 2 > t->capacity && grow_table(t) < 0) {
        if (!t->crowded)
            t->nomem = 1;
        return;
    }
    size_t mask = t->capacity - 1;
    size_t slot = token_hash(t->s + start, length) & mask;
    for (int probes = 0;; probes++) {
        Py_ssize_t at = t->table[2 * slot];
        if (at < 0)
            break;
        if (t->table[2 * slot + 1] == length && memcmp(t->s + at, t->s + start, length) == 0)
            return;
        if (probes >= MAX_PROBES) {
            t->crowded = 1;
            return;
        }
        slot = (slot + 1) & mask;
    }
    t->table[2 * slot] = start;
    t->table[2 * slot + 1] = length;
    t->used++;
}

/* _SCALAR_END matched at i, in a line ending at b (a line break or the searched text's end). */
static int
scalar_end(const unsigned char *s, Py_ssize_t i, Py_ssize_t b)
{
    i = past_blanks(s, i, b);
    if (i >= b)
        return 1;
    switch (s[i]) {
    case '#': case ',': case ']': case '}':
        return 1;
    case ':':
        return i + 1 >= b || s[i + 1] == ' ' || s[i + 1] == '\t' || s[i + 1] == '\r';
    case '\r':
        return i + 1 >= b;
    default:
        return 0;
    }
}

static inline int
is_digit(unsigned char c)
{
    return c >= '0' && c <= '9';
}

/* _DATE_START matched at the start of p[:length]. */
static int
date_start(const unsigned char *p, Py_ssize_t length)
{
    if (length < 8 || !is_digit(p[0]) || !is_digit(p[1]) || !is_digit(p[2]) || !is_digit(p[3]) || p[4] != '-'
        || !is_digit(p[5]))
        return 0;
    Py_ssize_t j = is_digit(p[6]) ? 7 : 6;
    return j + 1 < length && p[j] == '-' && is_digit(p[j + 1]);
}

/* One of fastyaml._BOOLEANS_1_1 (yes/no/on/off in lower, title and upper case). */
static int
boolean_1_1(const unsigned char *p, Py_ssize_t length)
{
    static const char *const twos[] = {"no", "No", "NO", "on", "On", "ON"};
    static const char *const threes[] = {"yes", "Yes", "YES", "off", "Off", "OFF"};
    if (length == 2) {
        for (int i = 0; i < 6; i++)
            if (p[0] == (unsigned char)twos[i][0] && p[1] == (unsigned char)twos[i][1])
                return 1;
    }
    else if (length == 3) {
        for (int i = 0; i < 6; i++)
            if (memcmp(p, threes[i], 3) == 0)
                return 1;
    }
    return 0;
}

/* What _found keeps of the token s[start:end] a pattern found, in a line ending at b:
 * _token's answer (``names``: in flow, where an anchor counts only with a name), then
 * _whole_scalar's. */
static void
found(Scan *t, Py_ssize_t start, Py_ssize_t end, Py_ssize_t b, int names)
{
    const unsigned char *s = t->s;
    Py_ssize_t stop = end;
    while (stop > start && s[stop - 1] == ':')
        stop--;
    if (stop == start)
        stop = end;
    Py_ssize_t length = stop - start;
    unsigned char first = s[start];
    if ((first == '&' || first == '*' || first == '!') && length > 1
        && (!names || (kinds[s[start + 1]] & K_NAME))) {
        t->special = 1;
        return;
    }
    if (first == '?' && length == 1) {
        t->special = 1;
        return;
    }
    switch (first) {
    case 'y': case 'Y': case 'n': case 'N': case 'o': case 'O':
        if (!boolean_1_1(s + start, length))
            return;
        break;
    case '&': case '*': case '!': case '?': case '%':
        return;
    case '-':
        if (length == 1 || (length == 3 && s[start + 1] == '-' && s[start + 2] == '-'))
            return;
        break;
    default:
        break;
    }
    if (s[end - 1] == ':' || scalar_end(s, end, b) || date_start(s + start, end - start))
        keep_token(t, start, length);
}

/* A token starting at i (after what a pattern requires before it), in a line ending at b:
 * its end, found() told; or -1 when no token starts there. */
static Py_ssize_t
token_at(Scan *t, Py_ssize_t i, Py_ssize_t b, int names)
{
    if (i >= b || !(kinds[t->s[i]] & K_FIRST))
        return -1;
    Py_ssize_t end = token_end(t->s, i, b);
    found(t, i, end, b, names);
    return end;
}

/* One line s[a:b] (b: its line break, or the text's end): _plain_lines' checks of it (for
 * the first line _plain_text's), then, where its tokens count, what the patterns find on
 * it: after ": ", after "- ", at its start (not for the first line: fastyaml looks at line
 * starts in the text's first 200 characters instead) and, where the text holds a flow
 * collection, in flow. 0, or -1 when the line is not plain. */
static int
scan_line(Scan *t, Py_ssize_t a, Py_ssize_t b, int first_line, int counted, int flow)
{
    const unsigned char *s = t->s;
    if (a < b) {
        if (s[a] == '%' || (b - a >= 3 && s[a] == '.' && s[a + 1] == '.' && s[a + 2] == '.'))
            return -1;
        Py_ssize_t i = a;
        if (!first_line)
            while (i < b && s[i] == ' ')
                i++;
        if (i < b && (s[i] == '\t' || (s[i] == '-' && i + 1 < b && s[i + 1] == '\t')))
            return -1;
        if (b - a >= MaxDepth) {
            for (i = a; i < a + MaxDepth && (kinds[s[i]] & K_DEEP); i++)
                ;
            if (i == a + MaxDepth)
                return -1;
        }
        if (counted && !first_line)
            token_at(t, past_blanks(s, a, b), b, 0);
    }
    Py_ssize_t after_colon = a, after_double = a, after_single = a;  /* where a match may start */
    for (Py_ssize_t i = a; i < b; i++) {
        unsigned char c = s[i];
        if (!(kinds[c] & K_LOOK))
            continue;
        Py_ssize_t j, end;
        switch (c) {
        case ':':
            if (i + 1 < b && (s[i + 1] == ']' || s[i + 1] == '}' || s[i + 1] == ','))
                return -1;
            if (counted && i >= after_colon) {
                j = past_blanks(s, i + 1, b);
                if (j > i + 1 && (end = token_at(t, j, b, 0)) >= 0)
                    after_colon = end;
            }
            break;
        case '-':
            if (i + 2 < b && s[i + 1] == '-' && s[i + 2] == '-') {
                for (j = i + 3; j < b && s[j] == ' '; j++)
                    ;
                if (j < b && (s[j] == '|' || s[j] == '>'))
                    return -1;
            }
            if (counted) {
                j = past_blanks(s, i + 1, b);
                if (j > i + 1)
                    token_at(t, j, b, 0);
            }
            break;
        case '[': case '{': case ',':
            if (counted && flow)
                token_at(t, past_blanks(s, i + 1, b), b, 1);
            break;
        case '"': case '\'':
            if (counted && flow && i + 1 < b && s[i + 1] == ':'
                && i >= (c == '"' ? after_double : after_single)) {
                end = token_at(t, past_blanks(s, i + 2, b), b, 1);
                if (end >= 0) {
                    if (c == '"')
                        after_double = end;
                    else
                        after_single = end;
                }
            }
            break;
        case ']': case '}':
            j = past_blanks(s, i + 1, b);
            if (j < b && s[j] == ':' && (j + 1 >= b || s[j + 1] == ' ' || s[j + 1] == '\t'))
                return -1;
            break;
        case '\\':
            if (i + 3 < b && s[i + 1] == 'u' && (s[i + 2] == 'd' || s[i + 2] == 'D')
                && strchr("89abAB", s[i + 3]) != NULL && s[i + 3] != '\0')
                return -1;
            break;
        case '\r':
            if (i + 1 < b)
                return -1;  /* a lone carriage return: a line break to PyYAML */
            break;
        default:
            return -1;  /* not printable ASCII */
        }
        if (t->special || t->nomem || t->crowded)
            return 0;
    }
    return 0;
}

/* _BLOCK_HEADERS matched at p (a "|" or ">"): the end of the match, or -1. */
static Py_ssize_t
header_end(const unsigned char *s, Py_ssize_t n, Py_ssize_t p)
{
    Py_ssize_t i = p + 1;
    while (i < n && (is_digit(s[i]) || s[i] == '-' || s[i] == '+'))
        i++;
    i = past_blanks(s, i, n);
    if (i < n && s[i] == '#') {
        const unsigned char *line_break = memchr(s + i, '\n', n - i);
        return line_break == NULL ? -1 : line_break - s + 1;
    }
    if (i < n && s[i] == '\r')
        i++;
    return i < n && s[i] == '\n' ? i + 1 : -1;
}

/* _node_column: the column of the node a block scalar header belongs to, or -1. */
static Py_ssize_t
node_column(const unsigned char *s, Py_ssize_t line_start, Py_ssize_t indicator)
{
    for (Py_ssize_t i = line_start; i + 1 < indicator; i++)
        if (s[i + 1] == '#' && (s[i] == ' ' || s[i] == '\t'))
            return -1;
    Py_ssize_t i = line_start;
    while (s[i] == ' ')
        i++;
    while (i < indicator && s[i] == '-' && (s[i + 1] == ' ' || s[i + 1] == '\t')) {
        i++;
        while (s[i] == ' ' || s[i] == '\t')
            i++;
    }
    return s[i] == '#' ? -1 : i - line_start;
}

static int
add_span(Scan *t, Py_ssize_t start, Py_ssize_t end)
{
    if (t->nspans == t->spans_capacity) {
        Py_ssize_t capacity = t->spans_capacity ? t->spans_capacity * 2 : 8;
        Span *spans = PyMem_RawRealloc(t->spans, capacity * sizeof(Span));
        if (spans == NULL)
            return -1;
        t->spans = spans;
        t->spans_capacity = capacity;
    }
    t->spans[t->nspans].start = start;
    t->spans[t->nspans].end = end;
    t->nspans++;
    return 0;
}

/* The next offset at or after ``from`` holding c, or n. */
static inline Py_ssize_t
next_of(const unsigned char *s, Py_ssize_t n, Py_ssize_t from, int c)
{
    if (from >= n)
        return n;
    const unsigned char *at = memchr(s + from, c, n - from);
    return at == NULL ? n : at - s;
}

/* _structure: the spans into t->spans; 1, 0 when a block scalar is empty (None), -1 when
 * out of memory. Each header pattern's matches are found as finditer finds them (a match
 * of one pattern is not looked into for more of that pattern), in order of their starts. */
static int
structure(Scan *t)
{
    const unsigned char *s = t->s;
    Py_ssize_t n = t->n, pos = 0;
    Py_ssize_t pipe = next_of(s, n, 0, '|'), fold = next_of(s, n, 0, '>');
    Py_ssize_t pipe_free = 0, fold_free = 0;  /* where a match of each pattern may start */
    for (;;) {
        Py_ssize_t p = pipe < fold ? pipe : fold;
        if (p >= n)
            break;
        int is_pipe = p == pipe;
        if (is_pipe)
            pipe = next_of(s, n, p + 1, '|');
        else
            fold = next_of(s, n, p + 1, '>');
        if (p < (is_pipe ? pipe_free : fold_free))
            continue;
        Py_ssize_t end_of_header = header_end(s, n, p);
        if (end_of_header < 0)
            continue;
        if (is_pipe)
            pipe_free = end_of_header;
        else
            fold_free = end_of_header;
        if (p < pos)
            continue;  /* inside the content of an earlier block scalar */
        Py_ssize_t before = p - 1;
        while (before >= 0 && (s[before] == ' ' || s[before] == '\t'))
            before--;
        if (before == p - 1 || before < 0 || (s[before] != ':' && s[before] != '-'))
            continue;  /* not after "key:" or "-": text */
        Py_ssize_t line_start = before;
        while (line_start > 0 && s[line_start - 1] != '\n')
            line_start--;
        Py_ssize_t column = node_column(s, line_start, before);
        if (column < 0)
            continue;
        Py_ssize_t end = n;
        for (Py_ssize_t q = end_of_header - 1; q < n; q = next_of(s, n, q + 1, '\n')) {
            Py_ssize_t k = q + 1;
            while (k < n && s[k] == ' ' && k - (q + 1) <= column)
                k++;
            if (k - (q + 1) <= column && k < n && s[k] != ' ' && s[k] != '\r' && s[k] != '\n') {
                end = q;
                break;
            }
        }
        int blank = 1;
        for (Py_ssize_t k = end_of_header; k < end && blank; k++)
            blank = s[k] == ' ' || s[k] == '\t' || s[k] == '\r' || s[k] == '\n';
        if (blank)
            return 0;
        if (add_span(t, pos, end_of_header) < 0)
            return -1;
        pos = end;
    }
    return add_span(t, pos, n) < 0 ? -1 : 1;
}

/* _FLOW_OPEN: a "[" not followed by "]" or a "{" not followed by "}". */
static int
flow_open(const unsigned char *s, Py_ssize_t n)
{
    for (Py_ssize_t i = next_of(s, n, 0, '['); i < n; i = next_of(s, n, i + 1, '['))
        if (i + 1 >= n || s[i + 1] != ']')
            return 1;
    for (Py_ssize_t i = next_of(s, n, 0, '{'); i < n; i = next_of(s, n, i + 1, '{'))
        if (i + 1 >= n || s[i + 1] != '}')
            return 1;
    return 0;
}

/* The whole pre-scan: 1 with the tokens in t->table, 0 for None, -1 out of memory, -2
 * for a token table crowded past MAX_PROBES (the Python definition answers). */
static int
scan_tokens(Scan *t)
{
    const unsigned char *s = t->s;
    Py_ssize_t n = t->n;
    if (n == 0)
        return 1;
    if (s[n - 1] != '\n')
        return 0;  /* a block scalar ending the input is chomped differently */
    int made = structure(t);
    if (made <= 0)
        return made;
    int flow = flow_open(s, n);
    Py_ssize_t first_end = next_of(s, n, 0, '\n');
    if (scan_line(t, 0, first_end, 1, 1, flow) < 0)
        return 0;
    /* line starts in "\n" + text[:200] */
    Py_ssize_t window = n < 200 ? n : 200;
    for (Py_ssize_t start = 0;;) {
        Py_ssize_t b = next_of(s, window, start, '\n');
        token_at(t, past_blanks(s, start, b), b, 0);
        if (b >= window)
            break;
        start = b + 1;
    }
    Py_ssize_t k = 0;
    for (Py_ssize_t start = first_end + 1; start <= n && !t->special && !t->nomem && !t->crowded;) {
        Py_ssize_t b = next_of(s, n, start, '\n');
        while (k < t->nspans && t->spans[k].end <= b)
            k++;
        int counted = k < t->nspans && t->spans[k].start < start;
        if (scan_line(t, start, b, 0, counted, flow) < 0)
            return 0;
        start = b + 1;
    }
    if (t->crowded)
        return -2;
    if (t->nomem)
        return -1;
    return t->special ? 0 : 1;
}

/* The one argument ``text`` of ``name`` as an ASCII str's bytes; 0 with an exception set
 * (TypeError for another type, ValueError for other characters: those texts are the
 * Python code's). */
static int
ascii_text(PyObject *const *args, Py_ssize_t nargs, Py_ssize_t count, const char *usage,
           const unsigned char **s, Py_ssize_t *n)
{
    if (nargs != count) {
        PyErr_SetString(PyExc_TypeError, usage);
        return 0;
    }
    if (!PyUnicode_Check(args[0])) {
        PyErr_Format(PyExc_TypeError, "%s: the text must be a str", usage);
        return 0;
    }
#if PY_VERSION_HEX < 0x030C0000
    if (PyUnicode_READY(args[0]) < 0)  /* a legacy string's characters, before 3.12 */
        return 0;
#endif
    if (!PyUnicode_IS_ASCII(args[0])) {
        PyErr_Format(PyExc_ValueError, "%s: an ASCII text only", usage);
        return 0;
    }
    *s = PyUnicode_1BYTE_DATA(args[0]);
    *n = PyUnicode_GET_LENGTH(args[0]);
    return 1;
}

static PyObject *
py_scalar_tokens(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    Scan t = {0};
    if (!ascii_text(args, nargs, 1, "scalar_tokens(text)", &t.s, &t.n) || !configured())
        return NULL;
    PyObject *text = args[0];
    int verdict;
    Py_BEGIN_ALLOW_THREADS
    verdict = scan_tokens(&t);
    Py_END_ALLOW_THREADS
    PyObject *tokens = NULL;
    if (verdict == -2) {
        Py_INCREF(Py_False);  /* not answered here: the Python definition answers */
        tokens = Py_False;
    }
    else if (verdict < 0)
        PyErr_NoMemory();
    else if (verdict == 0) {
        Py_INCREF(Py_None);
        tokens = Py_None;
    }
    else if ((tokens = PySet_New(NULL)) != NULL) {
        for (size_t i = 0; i < t.capacity; i++) {
            Py_ssize_t start = t.table[2 * i];
            if (start < 0)
                continue;
            PyObject *token = PyUnicode_Substring(text, start, start + t.table[2 * i + 1]);
            if (token == NULL || PySet_Add(tokens, token) < 0) {
                Py_XDECREF(token);
                Py_CLEAR(tokens);
                break;
            }
            Py_DECREF(token);
        }
    }
    PyMem_RawFree(t.table);
    PyMem_RawFree(t.spans);
    return tokens;
}

/* ---- The positions of a List's entries in an ASCII text: fastyaml._item_positions ----
 *
 * fastyaml._item_positions (with _content_at, _is_entry, _column and its patterns) is the
 * definition; this is the same function over the text's bytes, for a top-level ``items``
 * that is a list of ``count`` entries. Lines are counted on from a known (offset, line)
 * at or before the document's content (fastyaml._Lines' state), so a file of many
 * documents is not counted from its start for each. */

/* _content_at: the first character of content in s[start:end] (not blank, not a
 * comment), or -1. */
static Py_ssize_t
content_at(const unsigned char *s, Py_ssize_t start, Py_ssize_t end)
{
    Py_ssize_t pos = start;
    while (pos < end) {
        Py_ssize_t stop = next_of(s, end, pos, '\n');
        Py_ssize_t i = pos;
        while (i < stop && (s[i] == ' ' || s[i] == '\t' || s[i] == '\r'))
            i++;
        if (i < stop && s[i] != '#')
            return i;
        pos = stop + 1;
    }
    return -1;
}

static Py_ssize_t
column_of(const unsigned char *s, Py_ssize_t offset)
{
    Py_ssize_t i = offset;
    while (i > 0 && s[i - 1] != '\n')
        i--;
    return offset - i;
}

static Py_ssize_t
line_breaks(const unsigned char *s, Py_ssize_t from, Py_ssize_t to)
{
    Py_ssize_t found = 0;
    for (Py_ssize_t i = next_of(s, to, from, '\n'); i < to; i = next_of(s, to, i + 1, '\n'))
        found++;
    return found;
}

/* Whether s[at:at + width] is all spaces (at + width <= limit). */
static inline int
spaces(const unsigned char *s, Py_ssize_t at, Py_ssize_t width, Py_ssize_t limit)
{
    if (at + width > limit)
        return 0;
    for (Py_ssize_t i = 0; i < width; i++)
        if (s[at + i] != ' ')
            return 0;
    return 1;
}

/* The first occurrence of needle[:m] (m >= 1, needle[0] a line break) in hay[:size], or NULL. */
static const unsigned char *
find_bytes(const unsigned char *hay, Py_ssize_t size, const char *needle, Py_ssize_t m)
{
#if defined(__GLIBC__) || defined(__APPLE__)
    return memmem(hay, size, needle, m);
#else
    for (Py_ssize_t i = 0; i + m <= size; i++) {
        const unsigned char *at = memchr(hay + i, needle[0], size - m + 1 - i);
        if (at == NULL)
            return NULL;
        i = at - hay;
        if (memcmp(at, needle, m) == 0)
            return at;
    }
    return NULL;
#endif
}

/* Into ``entries`` and ``lines`` (room for count + 2 each) the offsets of the entries'
 * dashes and their lines (counted on from ``known`` at line ``known_line``); their number,
 * or -1 for what sends the file to PyYAML (fastyaml raises _NotFast); -2 for an empty
 * list written "[]" after the key. */
static Py_ssize_t
entry_dashes(const unsigned char *s, Py_ssize_t n, Py_ssize_t content, Py_ssize_t end,
             Py_ssize_t count, Py_ssize_t indent, Py_ssize_t known, Py_ssize_t known_line,
             Py_ssize_t *entries, Py_ssize_t *lines, Py_ssize_t *sequence_indent)
{
    if (content + 6 <= n && memcmp(s + content, "items:", 6) == 0)
        return -1;  /* items as the first key */
    /* the key: "\n", the document's indentation, "items:" -- exactly once */
    Py_ssize_t width = indent + 7;
    char *key = PyMem_RawMalloc(width);
    if (key == NULL)
        return -3;
    key[0] = '\n';
    memset(key + 1, ' ', indent);
    memcpy(key + 1 + indent, "items:", 6);
    Py_ssize_t key_at = -1;
    for (Py_ssize_t from = content; from + width <= end;) {
        const unsigned char *at = find_bytes(s + from, end - from, key, width);
        if (at == NULL)
            break;
        if (key_at >= 0) {
            key_at = -2;  /* given twice */
            break;
        }
        key_at = at - s + width;
        from = key_at;
    }
    PyMem_RawFree(key);
    if (key_at < 0)
        return -1;  /* quoted, given twice, or not at the document's indentation */
    Py_ssize_t key_end = next_of(s, end, key_at, '\n');
    Py_ssize_t rest = key_at, rest_end = key_end;
    while (rest < rest_end && (s[rest] == ' ' || s[rest] == '\t' || s[rest] == '\r'))
        rest++;
    while (rest_end > rest && (s[rest_end - 1] == ' ' || s[rest_end - 1] == '\t' || s[rest_end - 1] == '\r'))
        rest_end--;
    if (count == 0 && rest_end - rest >= 2 && s[rest] == '[' && s[rest + 1] == ']')
        return -2;
    if (rest < rest_end && s[rest] != '#')
        return -1;  /* a flow sequence, or something else on the key's line */
    Py_ssize_t first = content_at(s, key_end, end);
    if (first < 0)
        return -1;
    Py_ssize_t seq_indent = column_of(s, first);
    if (seq_indent < indent || s[first] != '-'
        || !(first + 1 >= n || s[first + 1] == ' ' || s[first + 1] == '\r' || s[first + 1] == '\t'
             || s[first + 1] == '\n'))
        return -1;
    Py_ssize_t found = 0, line = known_line + line_breaks(s, known, first);
    entries[found] = first;
    lines[found++] = line;
    /* each line after the first entry's: the end of the sequence (a line indented at most
     * as the key, not an entry), else a dash at the sequence's indentation */
    for (Py_ssize_t q = next_of(s, end, first, '\n'); q < end; q = next_of(s, end, q + 1, '\n')) {
        line++;
        Py_ssize_t k = q + 1;
        while (k < end && s[k] == ' ' && k - (q + 1) <= indent)
            k++;
        if (k - (q + 1) <= indent && k < end) {
            unsigned char c = s[k];
            if ((c != ' ' && c != '\t' && c != '\r' && c != '\n' && c != '#' && c != '-')
                || (c == '-' && k + 1 < end && s[k + 1] != ' ' && s[k + 1] != '\t' && s[k + 1] != '\r'
                    && s[k + 1] != '\n'))
            {
                end = q;  /* the sequence ends: the dashes are looked for before it */
                if (found > 1 && entries[found - 1] + 1 == q)
                    found--;  /* a dash ending its line right before: its lookahead met the end */
            }
        }
        Py_ssize_t dash = q + 1 + seq_indent;
        if (dash + 1 >= end || s[dash] != '-' || !spaces(s, q + 1, seq_indent, end))
            continue;
        unsigned char after = s[dash + 1];
        if (after != ' ' && after != '\t' && after != '\r' && after != '\n')
            continue;
        if (found == count + 1)
            return -1;  /* more entries than parsed (one more may be dropped at the end) */
        entries[found] = dash;
        lines[found++] = line;
    }
    *sequence_indent = seq_indent;
    return found == count ? found : -1;
}

static PyObject *
position(Py_ssize_t line, Py_ssize_t column)
{
    PyObject *pair = PyTuple_New(2);
    if (pair == NULL)
        return NULL;
    PyObject *l = PyLong_FromSsize_t(line), *c = PyLong_FromSsize_t(column);
    if (l == NULL || c == NULL) {
        Py_XDECREF(l);
        Py_XDECREF(c);
        Py_DECREF(pair);
        return NULL;
    }
    PyTuple_SET_ITEM(pair, 0, l);
    PyTuple_SET_ITEM(pair, 1, c);
    return pair;
}

static int
offset_argument(PyObject *given, Py_ssize_t low, Py_ssize_t high, Py_ssize_t *into)
{
    if (!PyLong_Check(given)) {
        PyErr_SetString(PyExc_TypeError, "item_positions: offsets and counts must be ints");
        return 0;
    }
    Py_ssize_t value = PyLong_AsSsize_t(given);
    if (value == -1 && PyErr_Occurred()) {
        if (!PyErr_ExceptionMatches(PyExc_OverflowError))
            return 0;
        PyErr_Clear();
        value = low - 1;
    }
    if (value < low || value > high) {
        PyErr_SetString(PyExc_ValueError, "item_positions: an offset or count out of range");
        return 0;
    }
    *into = value;
    return 1;
}

static PyObject *
py_item_positions(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    const unsigned char *s;
    Py_ssize_t n;
    if (!ascii_text(args, nargs, 7, "item_positions(text, content, end, count, indent, known_offset, known_line)",
                    &s, &n))
        return NULL;
    Py_ssize_t content, end, count, indent, known, known_line;
    if (!offset_argument(args[2], 0, n, &end) || !offset_argument(args[1], 0, end, &content)
        || !offset_argument(args[3], 0, PY_SSIZE_T_MAX, &count)
        || !offset_argument(args[4], 0, PY_SSIZE_T_MAX, &indent)
        || !offset_argument(args[5], 0, content, &known)
        || !offset_argument(args[6], 1, PY_SSIZE_T_MAX - n, &known_line))
        return NULL;
    if (count > n || indent > n) {
        /* no text holds that many entries, or a key indented that much: refused, as the
         * Python code refuses them */
        Py_RETURN_NONE;
    }
    Py_ssize_t *entries = PyMem_Malloc(2 * (count + 2) * sizeof(Py_ssize_t));
    if (entries == NULL)
        return PyErr_NoMemory();
    Py_ssize_t *lines = entries + count + 2;
    Py_ssize_t seq_indent = 0;
    Py_ssize_t found = entry_dashes(s, n, content, end, count, indent, known, known_line, entries, lines,
                                    &seq_indent);
    PyObject *positions = NULL;
    if (found == -3)
        PyErr_NoMemory();
    else if (found == -1) {
        Py_INCREF(Py_None);
        positions = Py_None;
    }
    else if (found == -2)
        positions = PyList_New(0);
    else if ((positions = PyList_New(found)) != NULL) {
        for (Py_ssize_t i = 0; i < found; i++) {
            Py_ssize_t dash = entries[i], start = dash + 2, line = lines[i], column = seq_indent + 3;
            if (!(start < end && s[dash + 1] == ' ' && s[start] != ' ' && s[start] != '\t' && s[start] != '\r'
                  && s[start] != '\n' && s[start] != '#')) {
                Py_ssize_t at = content_at(s, dash + 1, end);
                if (at < 0 || column_of(s, at) <= column_of(s, dash)) {
                    /* an empty entry: PyYAML marks it where its null would be */
                    Py_DECREF(positions);
                    Py_INCREF(Py_None);
                    positions = Py_None;
                    break;
                }
                line += line_breaks(s, dash, at);
                column = column_of(s, at) + 1;
            }
            PyObject *pair = position(line, column);
            if (pair == NULL) {
                Py_CLEAR(positions);
                break;
            }
            PyList_SET_ITEM(positions, i, pair);
        }
    }
    PyMem_Free(entries);
    return positions;
}

/* ---- Document markers of an ASCII text: fastyaml._document_markers ----
 * The offsets of the "---" lines that start documents; found with memmem (str.find of
 * "\n---" stops at every line of a dump). */
static PyObject *
py_document_markers(PyObject *module, PyObject *const *args, Py_ssize_t nargs)
{
    const unsigned char *s;
    Py_ssize_t n;
    if (!ascii_text(args, nargs, 1, "document_markers(text)", &s, &n))
        return NULL;
    PyObject *markers = PyList_New(0);
    if (markers == NULL)
        return NULL;
    int starts = n >= 3 && s[0] == '-' && s[1] == '-' && s[2] == '-';
    const unsigned char *found = starts ? s : find_bytes(s, n, "\n---", 4);
    while (found != NULL) {
        Py_ssize_t pos = found - s;
        Py_ssize_t at = (pos == 0 && starts) ? 0 : pos + 1;
        if (at + 3 >= n || s[at + 3] == ' ' || s[at + 3] == '\t' || s[at + 3] == '\r' || s[at + 3] == '\n') {
            PyObject *offset = PyLong_FromSsize_t(at);
            if (offset == NULL || PyList_Append(markers, offset) < 0) {
                Py_XDECREF(offset);
                Py_DECREF(markers);
                return NULL;
            }
            Py_DECREF(offset);
        }
        Py_ssize_t from = at + 3;
        found = from < n ? find_bytes(s + from, n - from, "\n---", 4) : NULL;
    }
    return markers;
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
    {"scalar_tokens", (PyCFunction)(void (*)(void))py_scalar_tokens, METH_FASTCALL,
     "scalar_tokens(text): fastyaml._scalar_tokens of an ASCII text."},
    {"item_positions", (PyCFunction)(void (*)(void))py_item_positions, METH_FASTCALL,
     "item_positions(text, content, end, count, indent, known_offset, known_line): "
     "fastyaml._item_positions of an ASCII text, None where it raises _NotFast."},
    {"document_markers", (PyCFunction)(void (*)(void))py_document_markers, METH_FASTCALL,
     "document_markers(text): fastyaml._document_markers of an ASCII text."},
    {"spec_bytes", (PyCFunction)(void (*)(void))py_spec_bytes, METH_FASTCALL,
     "spec_bytes(value): inventory.kept._spec_bytes."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {
    PyModuleDef_HEAD_INIT, "_rebuild",
    "The rebuild of parsed documents (fastyaml._canonical, _kept, _refusable), the token\n"
    "pre-scan (fastyaml._scalar_tokens), List entries' positions (_item_positions) and document\n"
    "markers (_document_markers), compiled.",
    -1, methods,
};

PyMODINIT_FUNC
PyInit__rebuild(void)
{
    init_kinds();
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
