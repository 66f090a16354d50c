/* A Python syntax tree's nodes grouped by their exact class (common.Walk) as one loop in C.

   common.py holds the definition and the Python path, which runs where this was not built: a
   breadth-first walk from the tree, each node appended to the list of its class, the fields each
   class's plan names read in order. A plan is a tuple of (field name, reading) pairs, made by the
   caller's `plan_of(kind)` the first time a class is met and kept in `plans`:
     0: a node or None;  1: a list of nodes, some None;  2: unknown, each value tested for a node.
   A field a node lacks reads as None, as `getattr(node, name, None)` does.
   tests/test_compiled_walk.py compares the two on real modules. */

#define PY_SSIZE_T_CLEAN
#include <Python.h>

enum { READ_NODE = 0, READ_NODES = 1, READ_UNKNOWN = 2 };

/* node.<name>, or a new reference to None when the node lacks it; NULL on any other error.
   `direct`: the node's class reads its fields as `object` does (no data descriptor for any of
   them, no __getattr__): then a field ast.parse set is read from the node's own dictionary,
   without the class's attribute lookup before it (most of the walk's time was that). */
static PyObject *field_of(PyObject *node, PyObject *name, int direct)
{
    if (direct) {
        PyObject **dictionary = _PyObject_GetDictPtr(node);
        if (dictionary != NULL && *dictionary != NULL && PyDict_CheckExact(*dictionary)) {
            PyObject *found = PyDict_GetItemWithError(*dictionary, name);
            if (found != NULL) {
                Py_INCREF(found);
                return found;
            }
            if (PyErr_Occurred())
                return NULL;
        }
    }
    PyObject *value = PyObject_GetAttr(node, name);
    if (value == NULL && PyErr_ExceptionMatches(PyExc_AttributeError)) {
        PyErr_Clear();
        Py_RETURN_NONE;
    }
    return value;
}

/* Whether `kind` reads every field of `plan` as `object` does (see field_of); -1 on a bad plan. */
static int reads_directly(PyTypeObject *kind, PyObject *plan)
{
    if (kind->tp_getattro != PyObject_GenericGetAttr)
        return 0;
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(plan); i++) {
        PyObject *step = PyTuple_GET_ITEM(plan, i);
        if (!PyTuple_CheckExact(step) || PyTuple_GET_SIZE(step) != 2 || !PyUnicode_Check(PyTuple_GET_ITEM(step, 0))) {
            PyErr_SetString(PyExc_TypeError, "a walk plan's step must be a (name, reading) pair");
            return -1;
        }
        PyObject *declared = _PyType_Lookup(kind, PyTuple_GET_ITEM(step, 0)); /* borrowed */
        if (declared != NULL && Py_TYPE(declared)->tp_descr_set != NULL)
            return 0;
    }
    return 1;
}

/* Appends to `queue` what one field's value holds, read as `reading` says. */
static int queue_field(PyObject *queue, PyObject *value, long reading, PyObject *node_type)
{
    if (reading == READ_NODE) {
        return value == Py_None ? 0 : PyList_Append(queue, value);
    }
    if (reading == READ_NODES) {
        if (value == Py_None)
            return 0;
        PyObject *items = PySequence_Fast(value, "a list field of a syntax node is not a sequence");
        if (items == NULL)
            return -1;
        /* Its length and items read again at each step, each item held while it is tested: a
           test that runs Python code (a __bool__) cannot leave a pointer here dangling. */
        for (Py_ssize_t i = 0; i < PySequence_Fast_GET_SIZE(items); i++) {
            PyObject *item = PySequence_Fast_GET_ITEM(items, i);
            if (item == Py_None)
                continue;
            Py_INCREF(item);
            int truth = PyObject_IsTrue(item);
            int failed = truth < 0 || (truth && PyList_Append(queue, item) < 0);
            Py_DECREF(item);
            if (failed) {
                Py_DECREF(items);
                return -1;
            }
        }
        Py_DECREF(items);
        return 0;
    }
    if (PyList_CheckExact(value)) {
        for (Py_ssize_t i = 0; i < PyList_GET_SIZE(value); i++) {
            PyObject *item = PyList_GET_ITEM(value, i);
            Py_INCREF(item); /* held while tested, as above */
            int is_node = PyObject_IsInstance(item, node_type);
            int failed = is_node < 0 || (is_node && PyList_Append(queue, item) < 0);
            Py_DECREF(item);
            if (failed)
                return -1;
        }
        return 0;
    }
    int is_node = PyObject_IsInstance(value, node_type);
    if (is_node < 0)
        return -1;
    return is_node ? PyList_Append(queue, value) : 0;
}

/* The plan of `kind`: from `plans`, else made by `plan_of` (which keeps it there). Borrowed. */
static PyObject *plan_for(PyObject *kind, PyObject *plans, PyObject *plan_of)
{
    PyObject *plan = PyDict_GetItemWithError(plans, kind);
    if (plan != NULL || PyErr_Occurred())
        return plan;
    plan = PyObject_CallOneArg(plan_of, kind);
    if (plan == NULL)
        return NULL;
    if (!PyTuple_CheckExact(plan)) {
        PyErr_SetString(PyExc_TypeError, "a walk plan must be a tuple");
        Py_DECREF(plan);
        return NULL;
    }
    int stored = PyDict_SetItem(plans, kind, plan);
    Py_DECREF(plan);
    return stored < 0 ? NULL : PyDict_GetItemWithError(plans, kind);
}

/* Reads every field the plan names of `node` onto `queue` (its steps checked by reads_directly). */
static int queue_fields(PyObject *queue, PyObject *node, PyObject *plan, int direct, PyObject *node_type)
{
    for (Py_ssize_t i = 0; i < PyTuple_GET_SIZE(plan); i++) {
        PyObject *step = PyTuple_GET_ITEM(plan, i);
        long reading = PyLong_AsLong(PyTuple_GET_ITEM(step, 1));
        if (reading == -1 && PyErr_Occurred())
            return -1;
        PyObject *value = field_of(node, PyTuple_GET_ITEM(step, 0), direct);
        if (value == NULL)
            return -1;
        int queued = queue_field(queue, value, reading, node_type);
        Py_DECREF(value);
        if (queued < 0)
            return -1;
    }
    return 0;
}

static PyObject *grouped_nodes(PyObject *module, PyObject *args)
{
    (void)module;
    PyObject *tree, *plans, *plan_of, *node_type;
    if (!PyArg_ParseTuple(args, "OO!OO:grouped_nodes", &tree, &PyDict_Type, &plans, &plan_of, &node_type))
        return NULL;
    PyObject *queue = PyList_New(0);
    PyObject *met = PyDict_New(); /* class -> (plan, its nodes, read directly) */
    if (queue == NULL || met == NULL || PyList_Append(queue, tree) < 0)
        goto failed;
    /* The queue grows while it is read and is never popped: each item stays alive in it. */
    for (Py_ssize_t at = 0; at < PyList_GET_SIZE(queue); at++) {
        PyObject *node = PyList_GET_ITEM(queue, at);
        PyObject *kind = (PyObject *)Py_TYPE(node);
        PyObject *entry = PyDict_GetItemWithError(met, kind);
        if (entry == NULL) {
            if (PyErr_Occurred())
                goto failed;
            PyObject *plan = plan_for(kind, plans, plan_of);
            if (plan == NULL)
                goto failed;
            int direct = reads_directly((PyTypeObject *)kind, plan);
            if (direct < 0)
                goto failed;
            PyObject *same = PyList_New(0);
            entry = same == NULL ? NULL : PyTuple_Pack(3, plan, same, direct ? Py_True : Py_False);
            Py_XDECREF(same);
            if (entry == NULL)
                goto failed;
            int stored = PyDict_SetItem(met, kind, entry);
            Py_DECREF(entry);
            if (stored < 0)
                goto failed;
        }
        if (PyList_Append(PyTuple_GET_ITEM(entry, 1), node) < 0)
            goto failed;
        if (queue_fields(queue, node, PyTuple_GET_ITEM(entry, 0), PyTuple_GET_ITEM(entry, 2) == Py_True, node_type) < 0)
            goto failed;
    }
    PyObject *grouped = PyDict_New();
    if (grouped == NULL)
        goto failed;
    PyObject *kind, *entry;
    Py_ssize_t position = 0;
    while (PyDict_Next(met, &position, &kind, &entry)) {
        PyObject *nodes = PyList_AsTuple(PyTuple_GET_ITEM(entry, 1));
        if (nodes == NULL || PyDict_SetItem(grouped, kind, nodes) < 0) {
            Py_XDECREF(nodes);
            Py_DECREF(grouped);
            goto failed;
        }
        Py_DECREF(nodes);
    }
    Py_DECREF(queue);
    Py_DECREF(met);
    return grouped;
failed:
    Py_XDECREF(queue);
    Py_XDECREF(met);
    return NULL;
}

static PyMethodDef methods[] = {
    {"grouped_nodes", grouped_nodes, METH_VARARGS,
     "grouped_nodes(tree, plans, plan_of, node_type) -> {class: nodes}: common.Walk's grouping."},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_definition = {
    PyModuleDef_HEAD_INIT, "_walk", "A Python syntax tree's nodes grouped by class, compiled (common.Walk).", -1, methods,
    NULL, NULL, NULL, NULL,
};

PyMODINIT_FUNC PyInit__walk(void)
{
    return PyModule_Create(&module_definition);
}
