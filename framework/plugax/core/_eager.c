/* plugax.core._eager: the eager fast path of one elementwise op, in C.

   Optional: plugax works without it (core/eager_ops.py falls back to the Python
   function it wraps, which has the very same fast path). Why C: on a float32[16]
   operand NumPy's ufunc itself takes ~0.2 us, and a Python-level wrapper
   (call frame, checks, building the result Array) cost as much again; here the
   wrapper costs a few dozen nanoseconds.

   An EagerOp wraps `fallback`, a Python function (plugax.numpy.sin, Array.__add__
   & co.), and a `cell`, the list [numpy_fn or None, set of signature ids] that the
   elementwise family keeps per primitive. A call takes the fast path only when
   all of these hold, exactly the conditions of the Python fast path:

   - one (unary) or two (binary) positional operands, each exactly an Array
     holding a NumPy value, the two with one aval (the same interned object);
   - the aval's signature id is in the cell's set (an earlier real bind of this
     primitive typed such operands as a result of that very aval: the
     eager/traced agreement check, made once per signature);
   - the cell holds a NumPy function (the family's impl rule is still the one in
     the table);
   - no transformation is running: the count of open non-eager blocks is zero,
     or this thread's current trace is the eval trace.

   It then calls the NumPy function and builds the result Array with the
   operands' aval. Anything else calls `fallback` with the same arguments.
   Array's slots are written by their offsets, read once from the class's
   member descriptors at `configure` time. */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <structmember.h>

static PyTypeObject *array_type = NULL;   /* plugax.Array */
static PyTypeObject *aval_type = NULL;    /* plugax's ShapedArray */
static PyTypeObject *ndarray_type = NULL; /* numpy.ndarray */
static PyObject *state = NULL;            /* the thread-local trace state */
static PyObject *eval_trace = NULL;       /* the bottom interpreter */
static PyObject *blocks = NULL;           /* [count of open non-eager blocks] */
static PyObject *wrap = NULL;             /* wrap(value, aval): a non-ndarray result */
static PyObject *trace_name = NULL;       /* "trace" */
static PyObject *zero = NULL;             /* 0 */
static Py_ssize_t off_value, off_buf, off_aval, off_sig, off_dtype;
/* eval_fast: the EvalTrace's tables and helpers (configure_eval) */
static PyObject *abstract_eval_cache = NULL;  /* (primitive, *sigs, *params.items()) -> aval */
static PyObject *impl_rules = NULL;           /* primitive -> impl rule */
static PyObject *impl_ctx = NULL;             /* the RuleContext impl rules get */
static PyObject *as_result = NULL;            /* as_result(out, aval, primitive) */
static PyObject *miss = NULL;                 /* what eval_fast returns when it does not apply */
static PyObject *dtype_name = NULL;           /* "dtype" */
#define MAX_OPERANDS 8

#define SLOT(obj, off) (*(PyObject **)((char *)(obj) + (off)))

typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    PyObject *fallback;
    PyObject *cell;
    PyObject *weakrefs;   /* as functions: caches (jaxlib's jit among them) hold weak references */
    int arity;
} EagerOp;

static int
slot_offset(PyTypeObject *type, const char *name, Py_ssize_t *offset)
{
    PyObject *descr = PyDict_GetItemString(type->tp_dict, name);
    if (descr == NULL || !PyObject_TypeCheck(descr, &PyMemberDescr_Type)) {
        PyErr_Format(PyExc_TypeError, "%s.%s is not a slot", type->tp_name, name);
        return -1;
    }
    PyMemberDef *member = ((PyMemberDescrObject *)descr)->d_member;
    if (member->type != T_OBJECT_EX) {
        PyErr_Format(PyExc_TypeError, "%s.%s is not an object slot", type->tp_name, name);
        return -1;
    }
    *offset = member->offset;
    return 0;
}

/* No transformation running in this process, or none in this thread. */
static int
is_eager(void)
{
    if (PyList_GET_ITEM(blocks, 0) == zero)   /* small ints are shared objects */
        return 1;
    PyObject *trace = PyObject_GetAttr(state, trace_name);
    if (trace == NULL) {
        PyErr_Clear();
        return 0;
    }
    Py_DECREF(trace);
    return trace == eval_trace;
}

/* The operands' common aval if the fast path applies to them, else NULL. */
static PyObject *
fast_aval(EagerOp *op, PyObject *const *args)
{
    PyObject *x = args[0];
    if (Py_TYPE(x) != array_type)
        return NULL;
    PyObject *aval = SLOT(x, off_aval);
    if (aval == NULL || Py_TYPE(aval) != aval_type || SLOT(x, off_value) == NULL)
        return NULL;
    if (op->arity == 2) {
        PyObject *y = args[1];
        if (Py_TYPE(y) != array_type || SLOT(y, off_aval) != aval || SLOT(y, off_value) == NULL)
            return NULL;
    }
    PyObject *sig = SLOT(aval, off_sig);
    if (sig == NULL || PyList_GET_ITEM(op->cell, 0) == Py_None)
        return NULL;
    int known = PySet_Contains(PyList_GET_ITEM(op->cell, 1), sig);
    if (known != 1) {
        if (known < 0)
            PyErr_Clear();
        return NULL;
    }
    return is_eager() ? aval : NULL;
}

static PyObject *
new_array(PyObject *value, PyObject *aval)
{
    PyObject *out = array_type->tp_alloc(array_type, 0);
    if (out == NULL) {
        Py_DECREF(value);
        return NULL;
    }
    SLOT(out, off_value) = value;   /* the reference is the Array's now */
    Py_INCREF(Py_None);
    SLOT(out, off_buf) = Py_None;
    Py_INCREF(aval);
    SLOT(out, off_aval) = aval;
    return out;
}

static PyObject *
eager_op_vectorcall(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kwnames)
{
    EagerOp *op = (EagerOp *)self;
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf);
    PyObject *aval;
    if (kwnames == NULL && nargs == op->arity && (aval = fast_aval(op, args)) != NULL) {
        PyObject *fn = PyList_GET_ITEM(op->cell, 0);
        PyObject *vals[2] = {SLOT(args[0], off_value), NULL};
        if (op->arity == 2)
            vals[1] = SLOT(args[1], off_value);
        Py_INCREF(fn);
        Py_INCREF(aval);
        PyObject *out = PyObject_Vectorcall(fn, vals, op->arity, NULL);
        Py_DECREF(fn);
        if (out != NULL && Py_TYPE(out) == ndarray_type) {
            PyObject *result = new_array(out, aval);
            Py_DECREF(aval);
            return result;
        }
        if (out != NULL) {   /* a NumPy scalar (rank 0): Array's own constructor */
            PyObject *wrap_args[2] = {out, aval};
            PyObject *result = PyObject_Vectorcall(wrap, wrap_args, 2, NULL);
            Py_DECREF(out);
            Py_DECREF(aval);
            return result;
        }
        Py_DECREF(aval);
        return NULL;
    }
    return PyObject_Vectorcall(op->fallback, args, nargsf, kwnames);
}

/* Attributes are the wrapped function's (__name__, __doc__, __wrapped__ itself,
   ...), so introspection (help, inspect.signature, the API tables) sees it. */
static PyObject *
eager_op_getattro(PyObject *self, PyObject *name)
{
    EagerOp *op = (EagerOp *)self;
    if (PyUnicode_Check(name) && PyUnicode_CompareWithASCIIString(name, "__wrapped__") == 0) {
        Py_INCREF(op->fallback);
        return op->fallback;
    }
    if (PyUnicode_Check(name) && PyUnicode_CompareWithASCIIString(name, "__class__") == 0)
        return PyObject_GenericGetAttr(self, name);
    return PyObject_GetAttr(op->fallback, name);
}

static int
eager_op_setattro(PyObject *self, PyObject *name, PyObject *value)
{
    return PyObject_SetAttr(((EagerOp *)self)->fallback, name, value);
}

static PyObject *
eager_op_repr(PyObject *self)
{
    return PyObject_Repr(((EagerOp *)self)->fallback);
}

/* A method, like the function it wraps: `Array.__add__` gets self first. */
static PyObject *
eager_op_descr_get(PyObject *self, PyObject *obj, PyObject *type)
{
    if (obj == NULL || obj == Py_None) {
        Py_INCREF(self);
        return self;
    }
    return PyMethod_New(self, obj);
}

static int
eager_op_traverse(PyObject *self, visitproc visit, void *arg)
{
    Py_VISIT(((EagerOp *)self)->fallback);
    Py_VISIT(((EagerOp *)self)->cell);
    return 0;
}

static int
eager_op_clear(PyObject *self)
{
    Py_CLEAR(((EagerOp *)self)->fallback);
    Py_CLEAR(((EagerOp *)self)->cell);
    return 0;
}

static void
eager_op_dealloc(PyObject *self)
{
    PyObject_GC_UnTrack(self);
    if (((EagerOp *)self)->weakrefs != NULL)
        PyObject_ClearWeakRefs(self);
    eager_op_clear(self);
    Py_TYPE(self)->tp_free(self);
}

static PyTypeObject EagerOpType = {
    PyVarObject_HEAD_INIT(NULL, 0)
    .tp_name = "plugax.core._eager.EagerOp",
    .tp_basicsize = sizeof(EagerOp),
    .tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL
                | Py_TPFLAGS_METHOD_DESCRIPTOR,
    .tp_vectorcall_offset = offsetof(EagerOp, vectorcall),
    .tp_weaklistoffset = offsetof(EagerOp, weakrefs),
    .tp_call = PyVectorcall_Call,
    .tp_getattro = eager_op_getattro,
    .tp_setattro = eager_op_setattro,
    .tp_repr = eager_op_repr,
    .tp_descr_get = eager_op_descr_get,
    .tp_traverse = eager_op_traverse,
    .tp_clear = eager_op_clear,
    .tp_dealloc = eager_op_dealloc,
    .tp_doc = "An elementwise op's eager fast path in C; everything else is its __wrapped__.",
};

static PyObject *
eager_op(PyObject *module, PyObject *args)
{
    PyObject *fallback, *cell;
    int arity;
    if (!PyArg_ParseTuple(args, "OO!i:eager_op", &fallback, &PyList_Type, &cell, &arity))
        return NULL;
    if (array_type == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "plugax.core._eager: configure() first");
        return NULL;
    }
    if ((arity != 1 && arity != 2) || PyList_GET_SIZE(cell) != 2
            || !PyAnySet_Check(PyList_GET_ITEM(cell, 1))) {
        PyErr_SetString(PyExc_ValueError, "eager_op(fallback, [fn, set()], arity 1 or 2)");
        return NULL;
    }
    EagerOp *op = PyObject_GC_New(EagerOp, &EagerOpType);
    if (op == NULL)
        return NULL;
    op->vectorcall = eager_op_vectorcall;
    Py_INCREF(fallback);
    op->fallback = fallback;
    Py_INCREF(cell);
    op->cell = cell;
    op->arity = arity;
    op->weakrefs = NULL;
    PyObject_GC_Track((PyObject *)op);
    return (PyObject *)op;
}

static PyObject *
configure(PyObject *module, PyObject *args)
{
    PyTypeObject *arr, *av, *nd;
    PyObject *st, *ev, *bl, *wr;
    if (!PyArg_ParseTuple(args, "O!O!O!OOO!O:configure", &PyType_Type, &arr, &PyType_Type, &av,
                          &PyType_Type, &nd, &st, &ev, &PyList_Type, &bl, &wr))
        return NULL;
    if (PyList_GET_SIZE(bl) != 1) {
        PyErr_SetString(PyExc_ValueError, "blocks must be a one-element list");
        return NULL;
    }
    if (slot_offset(arr, "_value", &off_value) < 0 || slot_offset(arr, "_buf", &off_buf) < 0
            || slot_offset(arr, "_aval", &off_aval) < 0 || slot_offset(av, "_sig", &off_sig) < 0
            || slot_offset(av, "dtype", &off_dtype) < 0)
        return NULL;
    PyObject *old[7] = {(PyObject *)array_type, (PyObject *)aval_type, (PyObject *)ndarray_type,
                        state, eval_trace, blocks, wrap};
    Py_INCREF(arr); Py_INCREF(av); Py_INCREF(nd);
    Py_INCREF(st); Py_INCREF(ev); Py_INCREF(bl); Py_INCREF(wr);
    array_type = arr; aval_type = av; ndarray_type = nd;
    state = st; eval_trace = ev; blocks = bl; wrap = wr;
    for (int i = 0; i < 7; i++)
        Py_XDECREF(old[i]);
    Py_RETURN_NONE;
}

/* The EvalTrace's fast path (core/trace.py, EvalTrace.process_primitive), for
   every eager bind: operands that are all exact Arrays holding a NumPy value, a
   signature (primitive, operand signature ids, params) already in the memoised
   abstract_eval cache, an impl rule in the table. Then it calls the rule and
   wraps its output with the cached aval (an ndarray of that very dtype directly,
   anything else through `as_result`). Returns `miss` when it does not apply,
   before running anything; an exception of the rule propagates (the caller
   words it). */
static PyObject *
eval_fast(PyObject *module, PyObject *const *fargs, Py_ssize_t nfargs)
{
    if (nfargs != 3) {
        PyErr_SetString(PyExc_TypeError, "eval_fast(primitive, args, params)");
        return NULL;
    }
    if (abstract_eval_cache == NULL || array_type == NULL) {
        PyErr_SetString(PyExc_RuntimeError, "plugax.core._eager: configure() first");
        return NULL;
    }
    PyObject *primitive = fargs[0], *args = fargs[1], *params = fargs[2];
    if (!(PyTuple_CheckExact(args) || PyList_CheckExact(args)) || !PyDict_CheckExact(params))
        goto not_here;
    Py_ssize_t n = PySequence_Fast_GET_SIZE(args);
    Py_ssize_t n_params = PyDict_GET_SIZE(params);
    if (n > MAX_OPERANDS)
        goto not_here;
    PyObject **items = PySequence_Fast_ITEMS(args);
    PyObject *call[MAX_OPERANDS + 1];
    call[0] = impl_ctx;
    PyObject *key = PyTuple_New(1 + n + n_params);
    if (key == NULL)
        return NULL;
    Py_INCREF(primitive);
    PyTuple_SET_ITEM(key, 0, primitive);
    for (Py_ssize_t i = 0; i < n; i++) {
        PyObject *x = items[i];
        if (Py_TYPE(x) != array_type)
            goto not_here_key;
        PyObject *aval = SLOT(x, off_aval), *value = SLOT(x, off_value);
        if (aval == NULL || value == NULL || Py_TYPE(aval) != aval_type
                || SLOT(aval, off_sig) == NULL)
            goto not_here_key;
        Py_INCREF(SLOT(aval, off_sig));
        PyTuple_SET_ITEM(key, 1 + i, SLOT(aval, off_sig));
        call[1 + i] = value;
    }
    Py_ssize_t pos = 0, j = 1 + n;
    PyObject *name, *val;
    while (PyDict_Next(params, &pos, &name, &val)) {
        PyObject *item = PyTuple_Pack(2, name, val);
        if (item == NULL) {
            Py_DECREF(key);
            return NULL;
        }
        PyTuple_SET_ITEM(key, j++, item);
    }
    PyObject *aval = PyDict_GetItemWithError(abstract_eval_cache, key);
    Py_DECREF(key);
    if (aval == NULL) {
        PyErr_Clear();   /* not seen yet, or an unhashable param: the general path */
        goto not_here;
    }
    PyObject *rule = PyDict_GetItemWithError(impl_rules, primitive);
    if (rule == NULL) {
        PyErr_Clear();
        goto not_here;
    }
    if (Py_TYPE(aval) != aval_type || SLOT(aval, off_dtype) == NULL)
        goto not_here;
    Py_INCREF(aval);
    Py_INCREF(rule);
    /* the operands' values stay alive: `args` holds the Arrays that hold them */
    PyObject *out = PyObject_VectorcallDict(rule, call, 1 + n, n_params ? params : NULL);
    Py_DECREF(rule);
    if (out == NULL) {
        Py_DECREF(aval);
        return NULL;
    }
    if (Py_TYPE(out) == ndarray_type) {
        PyObject *dtype = PyObject_GetAttr(out, dtype_name);
        if (dtype == NULL) {
            Py_DECREF(out);
            Py_DECREF(aval);
            return NULL;
        }
        Py_DECREF(dtype);   /* the ndarray holds it; only its identity matters */
        if (dtype == SLOT(aval, off_dtype)) {
            PyObject *result = new_array(out, aval);
            Py_DECREF(aval);
            return result;
        }
    }
    PyObject *wrap_args[3] = {out, aval, primitive};
    PyObject *result = PyObject_Vectorcall(as_result, wrap_args, 3, NULL);
    Py_DECREF(out);
    Py_DECREF(aval);
    return result;

not_here_key:
    Py_DECREF(key);
not_here:
    Py_INCREF(miss);
    return miss;
}

static PyObject *
configure_eval(PyObject *module, PyObject *args)
{
    PyObject *cache, *rules, *ctx, *wrap_result, *sentinel;
    if (!PyArg_ParseTuple(args, "O!O!OOO:configure_eval", &PyDict_Type, &cache, &PyDict_Type,
                          &rules, &ctx, &wrap_result, &sentinel))
        return NULL;
    PyObject *old[5] = {abstract_eval_cache, impl_rules, impl_ctx, as_result, miss};
    Py_INCREF(cache); Py_INCREF(rules); Py_INCREF(ctx); Py_INCREF(wrap_result);
    Py_INCREF(sentinel);
    abstract_eval_cache = cache; impl_rules = rules; impl_ctx = ctx;
    as_result = wrap_result; miss = sentinel;
    for (int i = 0; i < 5; i++)
        Py_XDECREF(old[i]);
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"configure", configure, METH_VARARGS,
     "configure(Array, ShapedArray, ndarray, trace_state, eval_trace, non_eager_blocks, wrap)"},
    {"eager_op", eager_op, METH_VARARGS,
     "eager_op(fallback, cell, arity): fallback with the eager fast path in front"},
    {"configure_eval", configure_eval, METH_VARARGS,
     "configure_eval(abstract_eval_cache, impl_rules, IMPL_CTX, as_result, miss)"},
    {"eval_fast", (PyCFunction)(void (*)(void))eval_fast, METH_FASTCALL,
     "eval_fast(primitive, args, params): the eager bind's fast path, or `miss`"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module_def = {
    PyModuleDef_HEAD_INIT, "plugax.core._eager",
    "The eager fast path of elementwise ops, in C (optional: see core/eager_ops.py).", -1,
    methods,
};

PyMODINIT_FUNC
PyInit__eager(void)
{
    if (PyType_Ready(&EagerOpType) < 0)
        return NULL;
    trace_name = PyUnicode_InternFromString("trace");
    zero = PyLong_FromLong(0);
    dtype_name = PyUnicode_InternFromString("dtype");
    if (trace_name == NULL || zero == NULL || dtype_name == NULL)
        return NULL;
    return PyModule_Create(&module_def);
}
