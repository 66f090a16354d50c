/* A Python syntax tree's nodes grouped by their exact class (python_walk.Walk) as one loop in C.

   python_walk.py holds the definition and the Python path: a breadth-first walk from the tree, each node
   appended to the list of its class, the fields each class's plan names read in order. This walks
   only what ast.parse makes: nodes of the classes in `known` (the `ast` module's own, whose fields
   are read as `object` reads them, each with its plan: a tuple of (field name, reading) pairs),
   fields holding such nodes, None, exact lists of them, or plain values. It answers None at the
   first thing outside that (a class of another module, a field holding a tuple where a list is
   read, an object of its own), and the caller walks the tree in Python: so the answer is always
   the Python path's, and no Python code runs during the walk (no truth or class test of an object
   of its own, no hash of a name that is not an exact string).
   Readings: 0: a node or None;  1: a list of nodes, some None;  2: unknown, each value tested.
   tests/test_compiled_walk.py compares the two on real modules and on trees ast.parse never makes. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>

enum { READ_NODE = 0, READ_NODES = 1, READ_UNKNOWN = 2 };
enum { WALKED = 0, FAILED = -1, NOT_MINE = -2 }; /* NOT_MINE: the Python path walks this tree */

/* node.<name> (new reference), read from the node's own dictionary (held while it is read), or
   NULL with no error set when the node lacks it (the Python path reads None then: the classes
   walked here have no class attribute of a field's name that reads otherwise, see python_walk.py). */
static PyObject *field_of(PyObject *node, PyObject *name)
{
    PyObject **dictionary = _PyObject_GetDictPtr(node);
    if (dictionary == NULL || *dictionary == NULL || !PyDict_CheckExact(*dictionary))
        return NULL;
    PyObject *held = Py_NewRef(*dictionary);
    PyObject *found = PyDict_GetItemWithError(held, name);
    Py_XINCREF(found);
    Py_DECREF(held);
    return found;
}

/* Whether `value` is one of the values a walk passes over without a test that could run code. */
static int plain(PyObject *value)
{
    return value == Py_None || value == Py_Ellipsis || PyUnicode_CheckExact(value) || PyLong_CheckExact(value)
           || PyFloat_CheckExact(value) || PyBytes_CheckExact(value) || PyComplex_CheckExact(value)
           || PyBool_Check(value);
}

/* Appends to `queue` what one field's value holds, read as `reading` says. A value that is not a
   node goes on the queue too where the Python path would queue it (a node that is not `known` is
   NOT_MINE when its turn comes); one the Python path would test is NOT_MINE here unless plain. */
static int queue_field(PyObject *queue, PyObject *value, long reading, PyObject *known)
{
    if (reading == READ_NODE)
        return value == Py_None ? WALKED : PyList_Append(queue, value);
    if (reading == READ_NODES) {
        if (value == Py_None)
            return WALKED;
        if (!PyList_CheckExact(value))
            return NOT_MINE; /* its truth and its items are the Python path's to read */
        for (Py_ssize_t i = 0; i < PyList_GET_SIZE(value); i++) {
            PyObject *item = PyList_GET_ITEM(value, i);
            if (item != Py_None && PyList_Append(queue, item) < 0)
                return FAILED;
        }
        return WALKED;
    }
    if (PyList_CheckExact(value)) {
        for (Py_ssize_t i = 0; i < PyList_GET_SIZE(value); i++) {
            PyObject *item = PyList_GET_ITEM(value, i);
            int is_known = PyDict_Contains(known, (PyObject *)Py_TYPE(item));
            if (is_known < 0)
                return FAILED;
            if (is_known) {
                if (PyList_Append(queue, item) < 0)
                    return FAILED;
            } else if (!plain(item)) {
                return NOT_MINE;
            }
        }
        return WALKED;
    }
    int is_known = PyDict_Contains(known, (PyObject *)Py_TYPE(value));
    if (is_known < 0)
        return FAILED;
    if (is_known)
        return PyList_Append(queue, value);
    return plain(value) ? WALKED : NOT_MINE;
}

/* Whether `plan` has the shape this reads: a tuple of (exact string, 0 to 2) pairs. */
static int plan_is_read_here(PyObject *plan)
{
    if (!PyTuple_CheckExact(plan))
        return 0;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(plan); i++) {
        PyObject *step = PyTuple_GET_ITEM(plan, i);
        if (!PyTuple_CheckExact(step) || PyTuple_GET_SIZE(step) != 2 || !PyUnicode_CheckExact(PyTuple_GET_ITEM(step, 0))
            || !PyLong_CheckExact(PyTuple_GET_ITEM(step, 1)))
            return 0;
        long reading = PyLong_AsLong(PyTuple_GET_ITEM(step, 1));
        if (reading < READ_NODE || reading > READ_UNKNOWN) {
            PyErr_Clear();
            return 0;
        }
    }
    return 1;
}

/* Reads every field the plan names of `node` onto `queue`. */
static int queue_fields(PyObject *queue, PyObject *node, PyObject *plan, PyObject *known)
{
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(plan); i++) {
        PyObject *step = PyTuple_GET_ITEM(plan, i);
        long reading = PyLong_AsLong(PyTuple_GET_ITEM(step, 1));
        PyObject *value = field_of(node, PyTuple_GET_ITEM(step, 0));
        if (value == NULL) {
            if (PyErr_Occurred())
                return FAILED;
            continue; /* unset: None to the Python path, which reads nothing from it */
        }
        int queued = queue_field(queue, value, reading, known);
        Py_DECREF(value);
        if (queued != WALKED)
            return queued;
    }
    return WALKED;
}

/* Walks the queue; `met` gets class -> (plan, its nodes). */
static int walk(PyObject *queue, PyObject *met, PyObject *known)
{
    /* The queue grows while it is read and is never popped: each item stays alive in it. */
    for (Py_ssize_t at = 0; at < PyList_GET_SIZE(queue); at++) {
        PyObject *node = PyList_GET_ITEM(queue, at);
        PyObject *kind = (PyObject *)Py_TYPE(node);
        PyObject *entry = PyDict_GetItemWithError(met, kind);
        if (entry == NULL) {
            if (PyErr_Occurred())
                return FAILED;
            PyObject *plan = PyDict_GetItemWithError(known, kind); /* borrowed: `known` is the caller's, unchanged here */
            if (plan == NULL)
                return PyErr_Occurred() ? FAILED : NOT_MINE;
            /* A class that reads its attributes its own way is the Python path's. */
            if (!plan_is_read_here(plan) || Py_TYPE(node)->tp_getattro != PyObject_GenericGetAttr)
                return NOT_MINE;
            PyObject *same = PyList_New(0);
            entry = same == NULL ? NULL : PyTuple_Pack(2, plan, same);
            Py_XDECREF(same);
            if (entry == NULL)
                return FAILED;
            int stored = PyDict_SetItem(met, kind, entry);
            Py_DECREF(entry);
            if (stored < 0)
                return FAILED;
        }
        if (PyList_Append(PyTuple_GET_ITEM(entry, 1), node) < 0)
            return FAILED;
        int queued = queue_fields(queue, node, PyTuple_GET_ITEM(entry, 0), known);
        if (queued != WALKED)
            return queued;
    }
    return WALKED;
}

static PyObject *grouped_nodes(PyObject *module, PyObject *args)
{
    (void)module;
    PyObject *tree, *known;
    if (!PyArg_ParseTuple(args, "OO!:grouped_nodes", &tree, &PyDict_Type, &known))
        return NULL;
    PyObject *queue = PyList_New(0), *met = PyDict_New(), *grouped = NULL;
    if (queue == NULL || met == NULL || PyList_Append(queue, tree) < 0)
        goto done;
    int walked = walk(queue, met, known);
    if (walked == NOT_MINE) {
        grouped = Py_NewRef(Py_None);
        goto done;
    }
    if (walked == FAILED || (grouped = PyDict_New()) == NULL)
        goto done;
    PyObject *kind, *entry;
    Py_ssize_t position = 0;
    while (PyDict_Next(met, &position, &kind, &entry)) {
        PyObject *nodes = PyList_AsTuple(PyTuple_GET_ITEM(entry, 1));
        if (nodes == NULL || PyDict_SetItem(grouped, kind, nodes) < 0) {
            Py_XDECREF(nodes);
            Py_CLEAR(grouped);
            goto done;
        }
        Py_DECREF(nodes);
    }
done:
    Py_XDECREF(queue);
    Py_XDECREF(met);
    return grouped;
}

static PyMethodDef methods[] = {
    {"grouped_nodes", grouped_nodes, METH_VARARGS,
     "grouped_nodes(tree, known) -> {class: nodes}, or None where the tree is the Python path's to walk."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_definition = {
    PyModuleDef_HEAD_INIT, "_walk", "A Python syntax tree's nodes grouped by class, compiled (python_walk.Walk).", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__walk(void)
{
    return PyModule_Create(&module_definition);
}
