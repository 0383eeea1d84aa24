/* cuda_launch.cpp -- gpubcast.native.cuda_launch, the compiled launch path: one repeated call on device arrays, from the public
 * function to cuLaunchKernel, without Python in between (gpubcast/cuda/compiled_launch.py builds,
 * loads and feeds it; the design is hot_call.cpp's, whose tables it shares).
 * Whole though over 600 lines: setup.py builds an extension module from its one .cpp, whose SHA-256 tells a stale build.
 *
 * Operands.  A call's operands are read from their own fields, by the reader registered for their
 * exact type (register_type):
 *   READ_ATTRS  CuPy's ndarray (and stand-ins): dtype, shape, strides, data.ptr, data.device_id
 *   READ_TORCH  a torch tensor: dtype (mapped to a NumPy dtype by the type's dict), shape,
 *               stride() (elements), data_ptr(), get_device(); requires_grad must be False and a
 *               complex tensor must carry no conjugate or negative bit (else: not answered)
 * plus Python / NumPy scalars (by value, converted by hot_call.cpp's exact NumPy conversion) and
 * 0-d NumPy arrays (their bytes, a host value).
 *
 * Contract:
 *   key(mode, *operands) -> bytes | None
 *       The signature: per operand its kind and, for a device array, its dtype object (by
 *       identity; a torch dtype mapped), shape, byte strides and device; for a scalar its type.
 *       Not the library of an array: a torch tensor and the CuPy view of it have one key (the
 *       launches are the same; the library is chosen at run time, see run).
 *   entry(context, mode, nops, first_out, device, slots, aligns, allocs, launches, keep) -> capsule
 *       What a call of that key runs: per operand a slot (SLOT_DEVICE, SLOT_HOST0D, SLOT_ALLOC, or
 *       the NumPy type number a scalar converts to) and a pointer alignment; what it allocates
 *       ((index, shape, dtype), ...): out= at 0 (mode 0, where None), and after the call's operands
 *       the outputs (mode 1) or temporaries (mode 0: an input converted first, a result converted
 *       into out=; released after the launches, in stream order as the Python path releases them);
 *       the launches, in order ((CUfunction, grid, block, parameter bytes, ((operand, offset, add),
 *       ...) pointer slots, ((operand, offset), ...) value slots), ...).
 *   call(table, out, x1, ...) -> result | None                    (mode 0: out is operand 0)
 *   call_kernel(table, *args) -> tuple of outputs | None          (mode 1: outputs allocated after args)
 *       table[key]'s entry run on these operands; None (nothing launched, nothing raised) when the
 *       key is not in the table, an array is not on the current device or not aligned, a scalar's
 *       value does not convert exactly, or out= (mode 0) shares memory with an input other than
 *       element for element.  The result is allocated by the library of the operands (a torch
 *       tensor among them: torch's allocator; else the first array's) and the launches go to that
 *       library's current stream.  An error from the launcher raises (context's on_error).
 *   context(launch_address, get_device, on_error) -> capsule    the launcher cuLaunchKernel's ABI
 *   driver_launcher(path) -> address of cuLaunchKernel in libcuda (dlopen; OSError if absent)
 *   noop_launcher() -> address of a launcher that launches nothing (the host-path benchmark)
 *   connect(api) -> None         installs ``call`` as hot_call.cpp's fallback for device operands
 *   answered() -> int            calls this code answered (tests prove the path with it)
 *   SOURCE_SHA256: str           this file's SHA-256 when built (setup.py, compiled_calls.native_module)
 * Invariant: a call this code answers gets exactly the launches the Python path would make.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>
#include <dlfcn.h>
#include <stdint.h>
#include <string.h>
#include <initializer_list>

#define MAX_OPS 24
#define MAX_DIMS 32
#define ENTRY_CAPSULE "gpubcast.cuda_launch.entry"
#define CONTEXT_CAPSULE "gpubcast.cuda_launch.context"
#define API_CAPSULE "gpubcast.hot_call.api"
#define KEY_MAGIC 0x6762637564610000LL   /* "gbcuda": no hot_call.cpp key starts so */
#define STACK_PARAMS 4096

typedef int CUresult;
#define CUDA_ERROR_INVALID_CONTEXT 201
typedef CUresult (*launch_fn)(void *f, unsigned gx, unsigned gy, unsigned gz, unsigned bx, unsigned by,
                              unsigned bz, unsigned shared, void *stream, void **params, void **extra);
typedef PyObject *(*fallback_fn)(PyObject *table, PyObject *const *ops, Py_ssize_t n);
typedef struct { int version; int (*convert)(PyObject *, int, void *); fallback_fn *fallback; } HotCallApi;

static int (*convert)(PyObject *, int, void *) = NULL;   /* hot_call.cpp's, set by connect */
static long long n_answered = 0;

/* ---- array types and their libraries ------------------------------------------------------------ */

enum { READ_ATTRS = 0, READ_TORCH = 1 };
#define MAX_TYPES 16

typedef struct {
    PyTypeObject *type;
    int reader, torch;
    PyObject *stream_fn, *stream_attr, *alloc, *dtypes;   /* stream_attr, dtypes: may be NULL */
} Library;

static Library libraries[MAX_TYPES];
static int n_libraries = 0;

static void library_clear(Library *l) {
    Py_CLEAR(l->type); Py_CLEAR(l->stream_fn); Py_CLEAR(l->stream_attr); Py_CLEAR(l->alloc); Py_CLEAR(l->dtypes);
}

static Library *library_of(PyTypeObject *t) {
    for (int i = 0; i < n_libraries; i++)
        if (libraries[i].type == t) return &libraries[i];
    return NULL;
}

static PyObject *register_type(PyObject *self, PyObject *args) {
    PyObject *type, *stream_fn, *stream_attr, *alloc, *dtypes;
    int reader, torch;
    if (!PyArg_ParseTuple(args, "O!iiOOOO", &PyType_Type, &type, &reader, &torch, &stream_fn, &stream_attr, &alloc,
                          &dtypes))
        return NULL;
    if (reader != READ_ATTRS && reader != READ_TORCH) {
        PyErr_SetString(PyExc_ValueError, "register_type: reader must be READ_ATTRS (0) or READ_TORCH (1)");
        return NULL;
    }
    if (reader == READ_TORCH && !PyDict_Check(dtypes)) {
        PyErr_SetString(PyExc_TypeError, "register_type: a torch reader needs a dict of dtypes");
        return NULL;
    }
    Library *l = library_of((PyTypeObject *)type);
    if (!l) {
        if (n_libraries == MAX_TYPES) {   /* full: the oldest goes (its calls take the Python path) */
            library_clear(&libraries[0]);
            memmove(&libraries[0], &libraries[1], (MAX_TYPES - 1) * sizeof(Library));
            n_libraries--;
            memset(&libraries[n_libraries], 0, sizeof(Library));
        }
        l = &libraries[n_libraries++];
    } else {
        library_clear(l);
    }
    Py_INCREF(type); l->type = (PyTypeObject *)type;
    l->reader = reader; l->torch = torch;
    Py_INCREF(stream_fn); l->stream_fn = stream_fn;
    l->stream_attr = stream_attr == Py_None ? NULL : (Py_INCREF(stream_attr), stream_attr);
    Py_INCREF(alloc); l->alloc = alloc;
    l->dtypes = dtypes == Py_None ? NULL : (Py_INCREF(dtypes), dtypes);
    Py_RETURN_NONE;
}

/* ---- reading operands ------------------------------------------------------------------------------ */

enum { TAG_NONE = 1, TAG_DEVICE = 2, TAG_SCALAR = 3, TAG_HOST0D = 4 };

typedef struct {
    PyObject *obj;             /* borrowed: an argument, or an allocated output (owned by the caller) */
    int tag;
    Library *lib;              /* TAG_DEVICE */
    PyArray_Descr *dtype;      /* TAG_DEVICE / TAG_HOST0D: borrowed, alive while the array is */
    int ndim;
    int64_t *shape, *strides;  /* into the key */
    int64_t ptr, device;
} Operand;

static PyObject *s_dtype, *s_shape, *s_strides, *s_data, *s_ptr, *s_device_id, *s_stride, *s_data_ptr,
    *s_get_device, *s_requires_grad, *s_is_conj, *s_is_neg;

static int as_int64(PyObject *o, int64_t *v) {
    if (!o) return 0;
    long long x = PyLong_AsLongLong(o);
    Py_DECREF(o);
    if (x == -1 && PyErr_Occurred()) return 0;
    *v = x;
    return 1;
}

/* shape and strides tuples into k[0..nd) and k[nd..2nd) (strides times ``scale``); 0 if not ints */
static int put_dims(int64_t *k, PyObject *shape, PyObject *strides, int nd, int64_t scale) {
    for (int d = 0; d < nd; d++) {
        long long n = PyLong_AsLongLong(PyTuple_GET_ITEM(shape, d));
        long long s = PyLong_AsLongLong(PyTuple_GET_ITEM(strides, d));
        if ((n == -1 || s == -1) && PyErr_Occurred()) return 0;
        k[d] = n; k[nd + d] = s * scale;
    }
    return 1;
}

/* A device array's part of the key at k (its fields into op); the new end, or NULL (no key). */
static int64_t *put_device(int64_t *k, PyObject *x, Library *lib, Operand *op) {
    PyObject *dtype = NULL, *shape = NULL, *strides = NULL, *data = NULL;
    int64_t *end = NULL, ptr = 0, device = 0;
    int nd;
    op->lib = lib;
    if (lib->reader == READ_ATTRS) {
        dtype = PyObject_GetAttr(x, s_dtype);
        if (!dtype || !PyArray_DescrCheck(dtype)) goto done;
        op->dtype = (PyArray_Descr *)dtype;
        shape = PyObject_GetAttr(x, s_shape);
        strides = shape ? PyObject_GetAttr(x, s_strides) : NULL;
        data = strides ? PyObject_GetAttr(x, s_data) : NULL;
        if (!data || !as_int64(PyObject_GetAttr(data, s_ptr), &ptr) ||
            !as_int64(PyObject_GetAttr(data, s_device_id), &device))
            goto done;
    } else {
        dtype = PyObject_GetAttr(x, s_dtype);
        PyObject *mapped = dtype ? PyDict_GetItemWithError(lib->dtypes, dtype) : NULL;   /* borrowed */
        if (!mapped || !PyArray_DescrCheck(mapped)) goto done;
        op->dtype = (PyArray_Descr *)mapped;
        PyObject *grad = PyObject_GetAttr(x, s_requires_grad);
        int plain = grad == Py_False;
        Py_XDECREF(grad);
        if (!plain) goto done;               /* autograd's tensors: torch's own rules (the Python path) */
        if (PyDataType_ISCOMPLEX(op->dtype)) {   /* a lazy conjugate or negation: not the bytes' value */
            for (PyObject *name : {s_is_conj, s_is_neg}) {
                PyObject *bit = PyObject_CallMethodNoArgs(x, name);
                int set = bit != Py_False;
                Py_XDECREF(bit);
                if (set) goto done;
            }
        }
        shape = PyObject_GetAttr(x, s_shape);
        strides = shape ? PyObject_CallMethodNoArgs(x, s_stride) : NULL;
        if (!strides || !as_int64(PyObject_CallMethodNoArgs(x, s_data_ptr), &ptr) ||
            !as_int64(PyObject_CallMethodNoArgs(x, s_get_device), &device) || device < 0)
            goto done;
    }
    if (!PyTuple_Check(shape) || !PyTuple_Check(strides)) goto done;
    nd = (int)PyTuple_GET_SIZE(shape);
    if (nd > MAX_DIMS || PyTuple_GET_SIZE(strides) != nd) goto done;
    k[0] = TAG_DEVICE;
    k[1] = (int64_t)(intptr_t)op->dtype;
    k[2] = nd;
    k[3] = device;
    if (!put_dims(k + 4, shape, strides, nd,
                  lib->reader == READ_TORCH ? (int64_t)PyDataType_ELSIZE(op->dtype) : 1))
        goto done;
    op->tag = TAG_DEVICE; op->ndim = nd; op->shape = k + 4; op->strides = k + 4 + nd;
    op->ptr = ptr; op->device = device;
    end = k + 4 + 2 * nd;
done:
    /* the dtype stays alive: the array holds it (READ_ATTRS), or the type's dict does (READ_TORCH) */
    Py_XDECREF(dtype); Py_XDECREF(shape); Py_XDECREF(strides); Py_XDECREF(data);
    if (!end) PyErr_Clear();
    return end;
}

static int is_scalar(PyObject *x) {
    PyTypeObject *t = Py_TYPE(x);
    return t == &PyBool_Type || t == &PyLong_Type || t == &PyFloat_Type || t == &PyComplex_Type ||
           PyArray_IsScalar(x, Generic);
}

/* Operand x's part of the key at k; the new end, or NULL for an operand no key has. */
static int64_t *put(int64_t *k, PyObject *x, Operand *op, int may_be_none) {
    memset(op, 0, sizeof(*op));
    op->obj = x;
    if (x == Py_None) {
        if (!may_be_none) return NULL;
        op->tag = TAG_NONE; *k++ = TAG_NONE;
        return k;
    }
    Library *lib = library_of(Py_TYPE(x));
    if (lib) return put_device(k, x, lib, op);
    if (PyArray_CheckExact(x)) {
        PyArrayObject *a = (PyArrayObject *)x;
        if (PyArray_NDIM(a) != 0 || PyArray_ITEMSIZE(a) > 16) return NULL;
        op->tag = TAG_HOST0D; op->dtype = PyArray_DESCR(a);
        *k++ = TAG_HOST0D; *k++ = (int64_t)(intptr_t)op->dtype;
        return k;
    }
    if (is_scalar(x)) {
        op->tag = TAG_SCALAR;
        *k++ = TAG_SCALAR; *k++ = (int64_t)(intptr_t)Py_TYPE(x);
        return k;
    }
    return NULL;
}

#define KEY_SLOTS (2 + MAX_OPS * (4 + 2 * MAX_DIMS))

/* The key of a call into buf (operands into ops); its length in int64s, 0 for none. In mode 0,
 * operand 0 (out=) may be None. */
static Py_ssize_t make_key(int64_t *buf, int mode, PyObject *const *args, Py_ssize_t n, Operand *ops) {
    if (n < 1 || n > MAX_OPS) return 0;
    int64_t *k = buf;
    *k++ = KEY_MAGIC + mode;
    *k++ = n;
    for (Py_ssize_t i = 0; k && i < n; i++) k = put(k, args[i], &ops[i], mode == 0 && i == 0);
    return k ? k - buf : 0;
}

static PyObject *key(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    int64_t buf[KEY_SLOTS];
    Operand ops[MAX_OPS];
    if (nargs < 2) {
        PyErr_SetString(PyExc_TypeError, "key(mode, *operands)");
        return NULL;
    }
    long mode = PyLong_AsLong(args[0]);
    if (mode == -1 && PyErr_Occurred()) return NULL;
    Py_ssize_t n = make_key(buf, (int)mode, args + 1, nargs - 1, ops);
    if (!n) Py_RETURN_NONE;
    return PyBytes_FromStringAndSize((const char *)buf, n * sizeof(int64_t));
}

/* ---- contexts: the launcher, the current device, errors ----------------------------------------- */

typedef struct {
    launch_fn launch;
    PyObject *get_device, *on_error;
} Context;

static void context_free(PyObject *capsule) {
    Context *c = (Context *)PyCapsule_GetPointer(capsule, CONTEXT_CAPSULE);
    if (!c) return;
    Py_XDECREF(c->get_device); Py_XDECREF(c->on_error);
    PyMem_Free(c);
}

static PyObject *context(PyObject *self, PyObject *args) {
    unsigned long long address;
    PyObject *get_device, *on_error;
    if (!PyArg_ParseTuple(args, "KOO", &address, &get_device, &on_error)) return NULL;
    if (!address || !PyCallable_Check(get_device) || !PyCallable_Check(on_error)) {
        PyErr_SetString(PyExc_ValueError, "context(launch_address, get_device, on_error): a launcher and two callables");
        return NULL;
    }
    Context *c = (Context *)PyMem_Calloc(1, sizeof(Context));
    if (!c) return PyErr_NoMemory();
    c->launch = (launch_fn)(uintptr_t)address;
    Py_INCREF(get_device); c->get_device = get_device;
    Py_INCREF(on_error); c->on_error = on_error;
    PyObject *capsule = PyCapsule_New(c, CONTEXT_CAPSULE, context_free);
    if (!capsule) { Py_DECREF(get_device); Py_DECREF(on_error); PyMem_Free(c); }
    return capsule;
}

static CUresult noop_launch(void *, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void *,
                            void **, void **) {
    return 0;
}

static PyObject *noop_launcher(PyObject *self, PyObject *unused) {
    return PyLong_FromVoidPtr((void *)&noop_launch);
}

static PyObject *driver_launcher(PyObject *self, PyObject *arg) {
    const char *path = PyUnicode_AsUTF8(arg);
    if (!path) return NULL;
    void *lib = dlopen(path, RTLD_NOW | RTLD_LOCAL);   /* kept open: the process launches through it */
    if (!lib) {
        const char *why = dlerror();
        PyErr_Format(PyExc_OSError, "cannot load %s: %s", path, why ? why : "unknown error");
        return NULL;
    }
    void *fn = dlsym(lib, "cuLaunchKernel");
    if (!fn) {
        const char *why = dlerror();
        PyErr_Format(PyExc_OSError, "%s has no cuLaunchKernel: %s", path, why ? why : "unknown error");
        dlclose(lib);
        return NULL;
    }
    return PyLong_FromVoidPtr(fn);
}

/* ---- entries -------------------------------------------------------------------------------------------- */

enum { SLOT_DEVICE = -1, SLOT_HOST0D = -2, SLOT_ALLOC = -3 };

typedef struct { int32_t operand, offset; int64_t add; } PtrSlot;
typedef struct { int32_t operand, offset; } ValSlot;

typedef struct {
    void *fn;
    unsigned grid, block;
    size_t nbytes;
    char *params;
    int nptr, nval;
    PtrSlot *ptrs;
    ValSlot *vals;
} Launch;

typedef struct {
    int mode, nops, nall, first_out, nalloc, nlaunch;   /* nall: operands, allocated ones included */
    int slot[MAX_OPS], align[MAX_OPS], vsize[MAX_OPS];
    int alloc_at[MAX_OPS];
    PyObject *alloc_shape[MAX_OPS], *alloc_dtype[MAX_OPS];
    int64_t device;
    Launch *launches;
    Context *ctx;
    PyObject *ctx_obj, *keep;
} Entry;

static void entry_free(PyObject *capsule) {
    Entry *e = (Entry *)PyCapsule_GetPointer(capsule, ENTRY_CAPSULE);
    if (!e) return;
    for (int i = 0; i < e->nalloc; i++) { Py_XDECREF(e->alloc_shape[i]); Py_XDECREF(e->alloc_dtype[i]); }
    if (e->launches)
        for (int j = 0; j < e->nlaunch; j++) {
            PyMem_Free(e->launches[j].params); PyMem_Free(e->launches[j].ptrs); PyMem_Free(e->launches[j].vals);
        }
    PyMem_Free(e->launches);
    Py_XDECREF(e->ctx_obj); Py_XDECREF(e->keep);
    PyMem_Free(e);
}

static int fail(const char *what) {
    PyErr_Format(PyExc_ValueError, "entry: %s", what);
    return 0;
}

static int read_launch(Launch *l, PyObject *t, int nall) {
    PyObject *params, *ptrs, *vals;
    unsigned long long fn;
    if (!PyArg_ParseTuple(t, "KIIO!O!O!", &fn, &l->grid, &l->block, &PyBytes_Type, &params, &PyTuple_Type, &ptrs,
                          &PyTuple_Type, &vals))
        return 0;
    l->fn = (void *)(uintptr_t)fn;
    l->nbytes = (size_t)PyBytes_GET_SIZE(params);
    l->params = (char *)PyMem_Malloc(l->nbytes ? l->nbytes : 1);
    l->nptr = (int)PyTuple_GET_SIZE(ptrs);
    l->nval = (int)PyTuple_GET_SIZE(vals);
    l->ptrs = (PtrSlot *)PyMem_Calloc(l->nptr + 1, sizeof(PtrSlot));
    l->vals = (ValSlot *)PyMem_Calloc(l->nval + 1, sizeof(ValSlot));
    if (!l->params || !l->ptrs || !l->vals) { PyErr_NoMemory(); return 0; }
    memcpy(l->params, PyBytes_AS_STRING(params), l->nbytes);
    for (int i = 0; i < l->nptr; i++) {
        PtrSlot *s = &l->ptrs[i];
        long long add;
        if (!PyArg_ParseTuple(PyTuple_GET_ITEM(ptrs, i), "iiL", &s->operand, &s->offset, &add)) return 0;
        s->add = add;
        if (s->operand < 0 || s->operand >= nall || s->offset < 0 || (size_t)s->offset + 8 > l->nbytes)
            return fail("a pointer slot outside the operands or the parameters");
    }
    for (int i = 0; i < l->nval; i++) {
        ValSlot *s = &l->vals[i];
        if (!PyArg_ParseTuple(PyTuple_GET_ITEM(vals, i), "ii", &s->operand, &s->offset)) return 0;
        if (s->operand < 0 || s->operand >= nall || s->offset < 0 || (size_t)s->offset + 16 > l->nbytes)
            return fail("a value slot outside the operands or the parameters");
    }
    return 1;
}

static PyObject *entry(PyObject *self, PyObject *args) {
    PyObject *ctx_obj, *slots, *aligns, *allocs, *launches, *keep;
    int mode, nops, first_out;
    long long device;
    if (!PyArg_ParseTuple(args, "OiiiLO!O!O!O!O", &ctx_obj, &mode, &nops, &first_out, &device, &PyTuple_Type, &slots,
                          &PyTuple_Type, &aligns, &PyTuple_Type, &allocs, &PyTuple_Type, &launches, &keep))
        return NULL;
    Context *ctx = (Context *)PyCapsule_GetPointer(ctx_obj, CONTEXT_CAPSULE);
    if (!ctx) return NULL;
    Py_ssize_t nalloc = PyTuple_GET_SIZE(allocs);
    int nall = (int)PyTuple_GET_SIZE(slots);   /* the call's operands, then what it allocates beyond them */
    if ((mode != 0 && mode != 1) || nops < 1 || nall < nops || nall > MAX_OPS || nalloc > MAX_OPS ||
        PyTuple_GET_SIZE(aligns) != nall || PyTuple_GET_SIZE(launches) < 1 || first_out < 0 || first_out > nall) {
        fail("mode 0 or 1, 1..24 operands, a slot and alignment each, at least one launch");
        return NULL;
    }
    Entry *e = (Entry *)PyMem_Calloc(1, sizeof(Entry));
    if (!e) return PyErr_NoMemory();
    PyObject *capsule = PyCapsule_New(e, ENTRY_CAPSULE, entry_free);
    if (!capsule) { PyMem_Free(e); return NULL; }
    e->mode = mode; e->nops = nops; e->first_out = first_out; e->device = device;
    Py_INCREF(ctx_obj); e->ctx_obj = ctx_obj; e->ctx = ctx;
    Py_INCREF(keep); e->keep = keep;
    e->nall = nall;
    for (int i = 0; i < nall; i++) {
        e->slot[i] = (int)PyLong_AsLong(PyTuple_GET_ITEM(slots, i));
        e->align[i] = (int)PyLong_AsLong(PyTuple_GET_ITEM(aligns, i));
        if (PyErr_Occurred()) goto error;
        if (e->align[i] < 1) e->align[i] = 1;
        if (e->slot[i] >= 0) {
            PyArray_Descr *d = PyArray_DescrFromType(e->slot[i]);
            if (!d) goto error;
            e->vsize[i] = (int)PyDataType_ELSIZE(d);
            Py_DECREF(d);
            if (e->vsize[i] > 16) { fail("a scalar of more than 16 bytes"); goto error; }
        }
    }
    for (Py_ssize_t i = 0; i < nalloc; i++) {
        PyObject *a = PyTuple_GET_ITEM(allocs, i), *shape, *dtype;
        int at;
        if (!PyArg_ParseTuple(a, "iO!O", &at, &PyTuple_Type, &shape, &dtype)) goto error;
        if (at < 0 || at >= nall || e->slot[at] != SLOT_ALLOC || (at < nops && (mode != 0 || at != 0))) {
            fail("an allocation at a slot not SLOT_ALLOC, or among the operands (only out=, in mode 0)");
            goto error;
        }
        e->alloc_at[i] = at;
        Py_INCREF(shape); e->alloc_shape[i] = shape;
        Py_INCREF(dtype); e->alloc_dtype[i] = dtype;
        e->nalloc = (int)i + 1;
    }
    {
        int wanted = 0;
        for (int i = 0; i < nall; i++) wanted += e->slot[i] == SLOT_ALLOC;
        if (wanted != e->nalloc) { fail("a SLOT_ALLOC without its allocation"); goto error; }
        for (int i = nops; i < nall; i++)
            if (e->slot[i] != SLOT_ALLOC) { fail("an operand beyond the call's that is not allocated"); goto error; }
    }
    e->launches = (Launch *)PyMem_Calloc(PyTuple_GET_SIZE(launches), sizeof(Launch));
    if (!e->launches) { PyErr_NoMemory(); goto error; }
    e->nlaunch = (int)PyTuple_GET_SIZE(launches);
    for (int j = 0; j < e->nlaunch; j++)
        if (!read_launch(&e->launches[j], PyTuple_GET_ITEM(launches, j), nall)) goto error;
    return capsule;
error:
    Py_DECREF(capsule);
    return NULL;
}

/* ---- calls ---------------------------------------------------------------------------------------------- */

/* [lo, hi) bytes operand o spans; 0 when it holds no element */
static int span(const Operand *o, int64_t itemsize, int64_t *lo, int64_t *hi) {
    *lo = *hi = o->ptr;
    for (int d = 0; d < o->ndim; d++) {
        if (o->shape[d] == 0) return 0;
        int64_t s = (o->shape[d] - 1) * o->strides[d];
        if (s < 0) *lo += s; else *hi += s;
    }
    *hi += itemsize;
    return 1;
}

/* Whether input x may share memory with out other than element for element (NumPy's exception:
 * the same address, shape, strides and item size). */
static int overlaps(const Operand *out, const Operand *x) {
    int64_t a0, a1, b0, b1;
    int64_t ia = PyDataType_ELSIZE(out->dtype), ib = PyDataType_ELSIZE(x->dtype);
    if (!span(out, ia, &a0, &a1) || !span(x, ib, &b0, &b1) || a1 <= b0 || b1 <= a0) return 0;
    if (x->ptr != out->ptr || ia != ib || x->ndim != out->ndim) return 1;
    for (int d = 0; d < x->ndim; d++)
        if (x->shape[d] != out->shape[d] || x->strides[d] != out->strides[d]) return 1;
    return 0;
}

static int pointer_of(PyObject *x, int reader, int64_t *ptr) {
    if (reader == READ_TORCH) return as_int64(PyObject_CallMethodNoArgs(x, s_data_ptr), ptr);
    PyObject *data = PyObject_GetAttr(x, s_data);
    if (!data) return 0;
    int ok = as_int64(PyObject_GetAttr(data, s_ptr), ptr);
    Py_DECREF(data);
    return ok;
}

/* Entry e run on operands ops[0..e->nops) (read by make_key); see the contract. */
static PyObject *run(Entry *e, Operand *ops) {
    unsigned char values[MAX_OPS][16];
    int vlen[MAX_OPS] = {0};   /* bytes of each host value */
    PyObject *owned[MAX_OPS] = {NULL};
    PyObject *result = NULL, *stream_fn = NULL, *stream_attr = NULL, *alloc = NULL;
    Library *lib = NULL;
    int nall = e->nall, reader = READ_ATTRS;
    int64_t device, stream = 0;
    alignas(16) char stack[STACK_PARAMS];

    if (!as_int64(PyObject_CallNoArgs(e->ctx->get_device), &device)) return NULL;
    if (device != e->device) Py_RETURN_NONE;                      /* CuPy's rule: the Python path says so */
    for (int i = 0; i < e->nops; i++) {
        Operand *o = &ops[i];
        int slot = e->slot[i];
        if (slot == SLOT_DEVICE) {
            if (o->tag != TAG_DEVICE || o->device != device || o->ptr % e->align[i]) Py_RETURN_NONE;
            if (!lib || (o->lib->torch && !lib->torch)) lib = o->lib;   /* a torch tensor among them: torch's */
        } else if (slot == SLOT_HOST0D) {
            if (o->tag != TAG_HOST0D) Py_RETURN_NONE;
            vlen[i] = (int)PyDataType_ELSIZE(o->dtype);   /* at most 16: the key has no larger */
            memcpy(values[i], PyArray_DATA((PyArrayObject *)o->obj), vlen[i]);
        } else if (slot == SLOT_ALLOC) {
            if (o->tag != TAG_NONE) Py_RETURN_NONE;
        } else {
            vlen[i] = e->vsize[i];
            if (o->tag != TAG_SCALAR || !convert || !convert(o->obj, slot, values[i])) Py_RETURN_NONE;
        }
    }
    if (!lib) Py_RETURN_NONE;
    if (e->mode == 0 && e->slot[0] == SLOT_DEVICE)   /* out= sharing an input's memory: the general path copies */
        for (int i = 1; i < e->nops; i++)
            if (e->slot[i] == SLOT_DEVICE && overlaps(&ops[0], &ops[i])) Py_RETURN_NONE;

    reader = lib->reader;
    Py_INCREF(lib->stream_fn); stream_fn = lib->stream_fn;     /* lib may change while Python code runs */
    Py_XINCREF(lib->stream_attr); stream_attr = lib->stream_attr;
    Py_INCREF(lib->alloc); alloc = lib->alloc;
    {
        PyObject *s = PyObject_CallNoArgs(stream_fn);
        if (s && stream_attr) { PyObject *p = PyObject_GetAttr(s, stream_attr); Py_DECREF(s); s = p; }
        if (!as_int64(s, &stream)) goto done;
    }
    for (int j = 0; j < e->nalloc; j++) {
        int at = e->alloc_at[j];
        PyObject *argv[2] = {e->alloc_shape[j], e->alloc_dtype[j]};
        owned[at] = PyObject_Vectorcall(alloc, argv, 2, NULL);
        if (!owned[at]) goto done;
        Operand *o = &ops[at];
        memset(o, 0, sizeof(*o));
        o->obj = owned[at]; o->tag = TAG_DEVICE;
        if (!pointer_of(owned[at], reader, &o->ptr)) goto done;
    }
    for (int j = 0; j < e->nlaunch; j++) {
        Launch *l = &e->launches[j];
        char *buf = l->nbytes <= STACK_PARAMS ? stack : (char *)PyMem_Malloc(l->nbytes);
        if (!buf) { PyErr_NoMemory(); goto done; }
        memcpy(buf, l->params, l->nbytes);
        for (int s = 0; s < l->nptr; s++) {
            const PtrSlot *p = &l->ptrs[s];
            uint64_t at = ops[p->operand].ptr ? (uint64_t)(ops[p->operand].ptr + p->add) : 0;
            memcpy(buf + p->offset, &at, 8);
        }
        for (int s = 0; s < l->nval; s++)
            memcpy(buf + l->vals[s].offset, values[l->vals[s].operand], vlen[l->vals[s].operand]);
        size_t size = l->nbytes;
        void *extra[] = {(void *)1 /* CU_LAUNCH_PARAM_BUFFER_POINTER */, buf, (void *)2 /* ..._BUFFER_SIZE */, &size,
                         (void *)0 /* CU_LAUNCH_PARAM_END */};
        CUresult status = e->ctx->launch(l->fn, l->grid, 1, 1, l->block, 1, 1, 0, (void *)(intptr_t)stream, NULL, extra);
        if (buf != stack) PyMem_Free(buf);
        if (status == CUDA_ERROR_INVALID_CONTEXT && j == 0) {   /* no context on this thread yet: nothing ran, */
            Py_INCREF(Py_None);                               /* the Python path (CuPy's launch) decides */
            result = Py_None;
            goto done;
        }
        if (status) {
            PyObject *r = PyObject_CallFunction(e->ctx->on_error, "i", (int)status);
            Py_XDECREF(r);
            if (!PyErr_Occurred())
                PyErr_Format(PyExc_RuntimeError, "cuLaunchKernel failed with CUresult %d", (int)status);
            goto done;
        }
    }
    if (e->mode == 0) {
        result = ops[0].obj;
        Py_INCREF(result);
    } else {
        result = PyTuple_New(nall - e->first_out);
        if (!result) goto done;
        for (int i = e->first_out; i < nall; i++) {
            Py_INCREF(ops[i].obj);
            PyTuple_SET_ITEM(result, i - e->first_out, ops[i].obj);
        }
    }
    n_answered++;
done:
    for (int i = 0; i < MAX_OPS; i++) Py_XDECREF(owned[i]);
    Py_XDECREF(stream_fn); Py_XDECREF(stream_attr); Py_XDECREF(alloc);
    return result;
}

/* table[key(mode, operands)] run (see the contract); None where it does not answer. */
static PyObject *lookup_and_run(PyObject *table, int mode, PyObject *const *args, Py_ssize_t n) {
    int64_t buf[KEY_SLOTS];
    Operand ops[MAX_OPS];
    if (!PyDict_Check(table)) {
        PyErr_SetString(PyExc_TypeError, "a compiled call's table must be a dict");
        return NULL;
    }
    Py_ssize_t len = make_key(buf, mode, args, n, ops);
    if (!len) Py_RETURN_NONE;
    PyObject *k = PyBytes_FromStringAndSize((const char *)buf, len * sizeof(int64_t));
    if (!k) return NULL;
    PyObject *capsule = PyDict_GetItemWithError(table, k);   /* borrowed */
    Py_DECREF(k);
    if (!capsule) { if (PyErr_Occurred()) return NULL; Py_RETURN_NONE; }
    Entry *e = (Entry *)PyCapsule_GetPointer(capsule, ENTRY_CAPSULE);
    if (!e || e->mode != mode || e->nops != n) { PyErr_Clear(); Py_RETURN_NONE; }
    Py_INCREF(capsule);   /* the entry outlives this call even if Python code run here clears the table */
    PyObject *result = run(e, ops);
    Py_DECREF(capsule);
    return result;
}

/* hot_call.cpp's fallback: call(table, out, x1, ...) when an operand is no NumPy one */
static PyObject *device_call(PyObject *table, PyObject *const *ops, Py_ssize_t n) {
    return lookup_and_run(table, 0, ops, n);
}

static PyObject *call(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs < 3) {
        PyErr_SetString(PyExc_TypeError, "call(table, out, x1, ...)");
        return NULL;
    }
    return lookup_and_run(args[0], 0, args + 1, nargs - 1);
}

static PyObject *call_kernel(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    if (nargs < 2) {
        PyErr_SetString(PyExc_TypeError, "call_kernel(table, *args)");
        return NULL;
    }
    return lookup_and_run(args[0], 1, args + 1, nargs - 1);
}

static PyObject *connect(PyObject *self, PyObject *capsule) {
    HotCallApi *api = (HotCallApi *)PyCapsule_GetPointer(capsule, API_CAPSULE);
    if (!api) return NULL;
    if (api->version != 1) {
        PyErr_Format(PyExc_RuntimeError, "hot_call.cpp's api is version %d, this code knows 1", api->version);
        return NULL;
    }
    convert = api->convert;
    *api->fallback = device_call;
    Py_RETURN_NONE;
}

static PyObject *answered(PyObject *self, PyObject *unused) {
    return PyLong_FromLongLong(n_answered);
}

static PyMethodDef methods[] = {
    {"key", (PyCFunction)(void (*)(void))key, METH_FASTCALL, "the signature of (mode, *operands), or None"},
    {"entry", entry, METH_VARARGS, "an entry (see the module's contract)"},
    {"call", (PyCFunction)(void (*)(void))call, METH_FASTCALL, "table's entry for (out, *inputs), run; or None"},
    {"call_kernel", (PyCFunction)(void (*)(void))call_kernel, METH_FASTCALL,
     "table's entry for (*args) run, the outputs' tuple; or None"},
    {"register_type", register_type, METH_VARARGS,
     "(type, reader, torch, stream_fn, stream_attr, alloc, dtypes): how arrays of an exact type are read"},
    {"context", context, METH_VARARGS, "(launch_address, get_device, on_error) -> a context capsule"},
    {"driver_launcher", driver_launcher, METH_O, "cuLaunchKernel's address in the libcuda at this path"},
    {"noop_launcher", noop_launcher, METH_NOARGS, "the address of a launcher that launches nothing"},
    {"connect", connect, METH_O, "become hot_call.cpp's fallback for device operands"},
    {"answered", answered, METH_NOARGS, "how many calls this code answered"},
    {NULL, NULL, 0, NULL},
};

#ifndef GB_SOURCE_SHA256
#define GB_SOURCE_SHA256 ""   /* built without the digest: compiled_calls never takes it for this text's build */
#endif

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "gpubcast.native.cuda_launch", NULL, -1, methods};

PyMODINIT_FUNC PyInit_cuda_launch(void) {
    import_array();
    struct { PyObject **at; const char *name; } names[] = {
        {&s_dtype, "dtype"}, {&s_shape, "shape"}, {&s_strides, "strides"}, {&s_data, "data"}, {&s_ptr, "ptr"},
        {&s_device_id, "device_id"}, {&s_stride, "stride"}, {&s_data_ptr, "data_ptr"}, {&s_get_device, "get_device"},
        {&s_requires_grad, "requires_grad"}, {&s_is_conj, "is_conj"}, {&s_is_neg, "is_neg"}};
    for (auto &n : names)
        if (!(*n.at = PyUnicode_InternFromString(n.name))) return NULL;
    PyObject *m = PyModule_Create(&module);
    if (!m) return NULL;
    if (PyModule_AddStringConstant(m, "SOURCE_SHA256", GB_SOURCE_SHA256) < 0) { Py_DECREF(m); return NULL; }
    struct { const char *name; long value; } constants[] = {
        {"SLOT_DEVICE", SLOT_DEVICE}, {"SLOT_HOST0D", SLOT_HOST0D}, {"SLOT_ALLOC", SLOT_ALLOC},
        {"READ_ATTRS", READ_ATTRS}, {"READ_TORCH", READ_TORCH}, {"MAX_OPS", MAX_OPS}, {"MAX_DIMS", MAX_DIMS}};
    for (auto &c : constants)
        if (PyModule_AddIntConstant(m, c.name, c.value) < 0) { Py_DECREF(m); return NULL; }
    return m;
}
