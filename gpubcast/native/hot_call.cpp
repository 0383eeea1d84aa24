/* hot_call.cpp -- the compiled hot path: one repeated small call, from the public function to the
 * serial driver, without Python in between: the extension module gpubcast.native.hot_call, built by
 * setup.py with the package (a source tree that was not built: by gpubcast/compiled_calls.py at run
 * time); compiled_calls loads it.
 * Whole though over 600 lines: setup.py builds an extension module from its one .cpp, whose SHA-256 tells a stale build.
 *
 * Contract:
 *   key(out, x1[, x2[, x3]]) -> bytes | None
 *       The call's signature: per operand (out first) its kind, and for an array its dtype object
 *       (by identity), ndim, shape and strides; for a scalar its Python type.  None when an operand
 *       is neither an exact numpy.ndarray nor a bool/int/float/complex/NumPy scalar (nor out None).
 *   entry(driver, row, meta, slots, out_dtype, out_shape, keep[, variadic, casts, cast_out, chunk, check,
 *         chunks, allocate]) -> capsule
 *       What the call runs: the serial driver ``int64 driver(row, p0, p1, p2, p3, meta)`` (driver 0:
 *       NumPy's own cast, ``copyto(out, x, casting='unsafe')``), or with ``variadic`` the serial
 *       driver of any number of operands ``int64 driver(row, operand addresses, meta)``; a scalar
 *       slot per input (0: an array; else 1 + the NumPy type number of the loop dtype its value
 *       converts to); per input None or the dtype an array is converted to first (NumPy's
 *       conversion into a new array laid out as the input: ``numpy.asarray(x, dtype)``); with
 *       ``cast_out``, the result computed into a new array, then converted into out= (NumPy's
 *       ``copyto(out, result, casting='unsafe')``); the output's dtype and shape; ``keep`` holds
 *       what the addresses point into and the dtype objects of the key; ``allocate`` (or None:
 *       NumPy's empty) makes a call's new output as ``allocate(shape, dtype)`` (the host pool's).
 *   call(table, out, x1, ..., xn) -> result | None       (table: a dict, or a subclass; n <= MAX_IN)
 *       table[key(...)]'s entry run on these operands; None (nothing computed, nothing raised) when
 *       the key is not in ``table``, a scalar's value is not one this code converts exactly as
 *       NumPy does (an int beyond the loop dtype, a float beyond float32, ...), out= is read-only,
 *       or the driver rejects the operands (misaligned, out= partially overlapping an input).
 *       A call with an operand that has no key here (a device array) goes to the fallback installed
 *       through ``api`` (cuda_launch.cpp's, for the same table), else is None.
 *   function(general, declined, table, inputs, extra, out_mode[, options[, keyed]]) -> a callable
 *       A public function (api.py's gb.add, gb.tanh, ...) whose default call -- `inputs` positional
 *       operands, out= or not, nothing else -- is call(table, out, *operands, *extra) with no Python
 *       frame, else declined(out, *operands, *extra); one keyword option that `options` maps to a
 *       table ({(name, value): table}, e.g. backend='numba', broadcast='none') takes that table; every
 *       other call is general(*args, **kwargs).  With `keyed` (a dict), one more positional argument
 *       after the operands picks the table (gb.cast's dtype: keyed[dtype]), declined gets it last.
 *   SOURCE_SHA256: str
 *       The SHA-256 of this file's text when it was built (GB_SOURCE_SHA256, defined by setup.py and
 *       compiled_calls): compiled_calls loads no module built from another text.
 *   api: a capsule ``gpubcast.hot_call.api`` (HotCallApi): this code's scalar conversion, and where
 *       the fallback is installed.
 * Invariant: a call this code answers gets exactly the result the general path would give it.
 * One file over 600 lines by design: one extension module whose entries, public functions and pool
 * share its static state (the fallback, the pool) and its build digest (SOURCE_SHA256).
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#define NPY_NO_DEPRECATED_API NPY_1_7_API_VERSION
#include <numpy/arrayobject.h>
#include <numpy/arrayscalars.h>
#include <stdint.h>
#include <string.h>
#include <pthread.h>
#include <atomic>
#include <chrono>
#include <cmath>
#include <cfloat>
#include <cstdlib>
#include <mutex>
#include <new>

#define MAX_IN 16                 /* inputs of a call (the 4-operand driver: 3) */
#define CAPSULE "gpubcast.hot_call.entry"

typedef int64_t (*driver_fn)(int64_t, int64_t, int64_t, int64_t, int64_t, int64_t);
typedef int64_t (*driver_n_fn)(int64_t, int64_t, int64_t);   /* (row, operand addresses, meta) */
/* the drivers' chunk runner: (row, chunk, chunks, operand addresses, meta, work, scratch) */
typedef void (*chunk_fn)(int64_t, int64_t, int64_t, int64_t, int64_t, int64_t, int64_t);
typedef int64_t (*check_fn)(int64_t, int64_t);               /* (meta, operand addresses) -> status */

/* ---- the pool: worker threads that run a walk's chunks (drive_parallel) ------------------------
 * One job at a time: a caller that finds the pool busy (another thread's job) runs its chunks itself.
 * Home chunks: thread k of T (the caller is 0) first takes chunks [k*C/T, (k+1)*C/T) -- the same
 * memory on every call of a walk, so a middle-sized operand stays in that core's cache -- then
 * steals the others'.  A chunk is claimed by a compare-exchange of its owner from an older job to
 * this one (jobs are numbered from 1, never reused): so a chunk runs once, and a worker that read a
 * job late can claim nothing of it once it is done (every chunk it had is owned by it or a newer
 * job).  A worker reads a job's fields under a seqlock (odd while the caller writes them).  Workers
 * spin SPIN_NS after a job, then sleep; a forked child starts with no workers (made again on its
 * first job).  No Python is touched off the calling thread; callers release the GIL. */
#define POOL_MAX_THREADS 256
#define POOL_MAX_CHUNKS 1024
#define POOL_WORK_SLOTS (10 * 128 + 128)   /* int64 slots: 10 per operand + the dims (meta) */
#define SPIN_NS 100000
#define ST_POOL_TOO_BIG 8                   /* drivers.ST_TOO_MANY: more operands than the work space */

struct Buffers {                            /* a thread's work space and scratch (per thread, once) */
    int64_t *work = nullptr;
    char *scratch = nullptr;
    ~Buffers() { std::free(work); std::free(scratch); }
};

struct Job { chunk_fn fn; int64_t row, pp, mp, chunks; int threads; uint64_t id; };

static struct {
    std::atomic<uint64_t> seq{0};           /* 2 * job id when its fields are whole; odd while written */
    std::atomic<uint64_t> owner[POOL_MAX_CHUNKS];   /* the job that claimed each chunk (0: none yet) */
    std::atomic<int64_t> pending{0};        /* chunks of the job not yet done */
    std::atomic<int> sleeping{0};
    std::atomic<chunk_fn> fn{nullptr};
    std::atomic<int64_t> row{0}, pp{0}, mp{0}, chunks{0};
    std::atomic<int> job_threads{1};
    uint64_t last_id = 0;                   /* the caller's (under busy) */
    int threads = 1, started = 0;           /* threads: of a job (the caller's included); started: workers */
    size_t scratch_bytes = 0;
    std::mutex busy;                        /* held by the job running */
    pthread_mutex_t sleep_lock = PTHREAD_MUTEX_INITIALIZER;
    pthread_cond_t wake = PTHREAD_COND_INITIALIZER;
} pool;

static thread_local Buffers buffers;

static Buffers *my_buffers() {
    if (!buffers.work) {
        void *w = nullptr, *s = nullptr;
        if (posix_memalign(&w, 64, POOL_WORK_SLOTS * sizeof(int64_t)) ||
            posix_memalign(&s, 64, pool.scratch_bytes ? pool.scratch_bytes : 64)) {
            std::free(w);
            return nullptr;
        }
        buffers.work = (int64_t *)w;
        buffers.scratch = (char *)s;
    }
    return &buffers;
}

static inline void relax() {
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#endif
}

/* The current job's fields, whole (false: being written, or none yet). */
static bool read_job(Job *j) {
    uint64_t s1 = pool.seq.load(std::memory_order_acquire);
    if (s1 & 1 || !s1) return false;
    j->fn = pool.fn.load(std::memory_order_relaxed);
    j->row = pool.row.load(std::memory_order_relaxed);
    j->pp = pool.pp.load(std::memory_order_relaxed);
    j->mp = pool.mp.load(std::memory_order_relaxed);
    j->chunks = pool.chunks.load(std::memory_order_relaxed);
    j->threads = pool.job_threads.load(std::memory_order_relaxed);
    std::atomic_thread_fence(std::memory_order_acquire);
    j->id = s1 / 2;
    return pool.seq.load(std::memory_order_relaxed) == s1;
}

/* Thread k's part of job j: its home chunks, then any other not yet claimed. */
static void run_job(const Job &j, int k, Buffers *b) {
    int64_t chunks = j.chunks, home = chunks * (k % j.threads) / j.threads;
    for (int64_t i = 0; i < chunks; i++) {
        int64_t c = (home + i) % chunks;
        uint64_t old = pool.owner[c].load(std::memory_order_acquire);
        if (old >= j.id || !pool.owner[c].compare_exchange_strong(old, j.id, std::memory_order_acq_rel))
            continue;
        j.fn(j.row, c, chunks, j.pp, j.mp, (int64_t)(intptr_t)b->work, (int64_t)(intptr_t)b->scratch);
        pool.pending.fetch_sub(1, std::memory_order_acq_rel);
    }
}

static void *worker(void *arg) {
    int k = (int)(intptr_t)arg;
    Buffers *b = my_buffers();
    uint64_t seen = pool.seq.load(std::memory_order_acquire);
    for (;;) {
        auto start = std::chrono::steady_clock::now();
        for (int i = 0; pool.seq.load(std::memory_order_acquire) == seen; i++) {
            relax();
            if ((i & 255) == 255 && std::chrono::steady_clock::now() - start > std::chrono::nanoseconds(SPIN_NS)) {
                pthread_mutex_lock(&pool.sleep_lock);
                pool.sleeping.fetch_add(1, std::memory_order_seq_cst);
                while (pool.seq.load(std::memory_order_seq_cst) == seen)
                    pthread_cond_wait(&pool.wake, &pool.sleep_lock);
                pool.sleeping.fetch_sub(1);
                pthread_mutex_unlock(&pool.sleep_lock);
                break;
            }
        }
        Job j;
        if (!read_job(&j)) { relax(); continue; }   /* being written: look again */
        seen = 2 * j.id;
        if (b) run_job(j, k, b);
    }
    return nullptr;
}

static void pool_after_fork_in_child() {       /* the workers are the parent's: none here */
    pool.started = 0;
    new (&pool.busy) std::mutex();
    pthread_mutex_init(&pool.sleep_lock, nullptr);
    pthread_cond_init(&pool.wake, nullptr);
    pool.sleeping.store(0);
}

static void start_workers() {
    pthread_attr_t attr;
    pthread_attr_init(&attr);
    pthread_attr_setdetachstate(&attr, PTHREAD_CREATE_DETACHED);
    while (pool.started < pool.threads - 1) {
        pthread_t t;
        if (pthread_create(&t, &attr, worker, (void *)(intptr_t)(pool.started + 1))) break;   /* fewer: the caller does more */
        pool.started++;
    }
    pthread_attr_destroy(&attr);
}

/* Runs `chunks` chunks of a walk: check(meta, operand addresses) first (its status: nothing run),
 * then every chunk on the pool's threads and the caller's.  The caller holds no GIL. */
static int64_t drive_parallel(chunk_fn fn, check_fn check, int64_t row, int64_t pp, int64_t mp, int64_t chunks) {
    const int64_t *meta = (const int64_t *)(intptr_t)mp;
    if (10 * meta[1] + meta[0] > POOL_WORK_SLOTS) return ST_POOL_TOO_BIG;   /* meta: nd, nops, ... */
    int64_t st = check(mp, pp);
    if (st) return st;
    Buffers *b = my_buffers();
    if (!b) return ST_POOL_TOO_BIG;
    chunks = chunks < 1 ? 1 : chunks > POOL_MAX_CHUNKS ? POOL_MAX_CHUNKS : chunks;
    if (!pool.busy.try_lock()) {             /* another thread's job runs: this one on this thread */
        for (int64_t c = 0; c < chunks; c++)
            fn(row, c, chunks, pp, mp, (int64_t)(intptr_t)b->work, (int64_t)(intptr_t)b->scratch);
        return 0;
    }
    if (pool.started < pool.threads - 1) start_workers();
    Job j{fn, row, pp, mp, chunks, pool.threads, ++pool.last_id};
    pool.pending.store(chunks, std::memory_order_relaxed);
    pool.seq.store(2 * j.id - 1, std::memory_order_relaxed);   /* odd: the fields are being written */
    std::atomic_thread_fence(std::memory_order_release);
    pool.fn.store(fn, std::memory_order_relaxed);
    pool.row.store(row, std::memory_order_relaxed);
    pool.pp.store(pp, std::memory_order_relaxed);
    pool.mp.store(mp, std::memory_order_relaxed);
    pool.chunks.store(chunks, std::memory_order_relaxed);
    pool.job_threads.store(pool.threads, std::memory_order_relaxed);
    /* seq_cst store then load, against the worker's seq_cst increment then load: either it sees this
     * job before it sleeps, or this sees it sleeping and wakes it (no lost wake-up) */
    pool.seq.store(2 * j.id, std::memory_order_seq_cst);
    if (pool.sleeping.load(std::memory_order_seq_cst)) {
        pthread_mutex_lock(&pool.sleep_lock);
        pthread_cond_broadcast(&pool.wake);
        pthread_mutex_unlock(&pool.sleep_lock);
    }
    run_job(j, 0, b);
    while (pool.pending.load(std::memory_order_acquire) > 0) relax();
    pool.busy.unlock();
    return 0;
}

typedef struct {
    driver_fn driver;              /* NULL (and no driver_n): NumPy's cast */
    driver_n_fn driver_n;          /* the driver of any number of operands, or NULL */
    int64_t row, meta;
    int nin;
    int slots[MAX_IN];             /* 0: array; else 1 + the loop type number of a scalar */
    PyArray_Descr *casts[MAX_IN];  /* an array converted to this dtype first; NULL: as it is */
    int cast_out;                  /* computed into a new array, then converted into out= */
    chunk_fn chunk;                /* with check and chunks: the walk run on the pool (drive_parallel) */
    check_fn check;
    int64_t chunks;
    PyArray_Descr *out_dtype;
    int out_ndim;
    npy_intp out_shape[NPY_MAXDIMS];
    PyObject *keep;
    PyObject *allocate;            /* allocate(shape, dtype): a new output (the host pool's), or NULL: NumPy's */
    PyObject *allocate_args;       /* (shape, dtype) */
} Entry;

typedef union { double f64; float f32; int64_t i64; uint64_t u64; int32_t i32; uint32_t u32; int16_t i16;
                uint16_t u16; int8_t i8; uint8_t u8; npy_bool b; double c128[2]; float c64[2]; } Value;


/* ---- keys ------------------------------------------------------------------------------------- */

enum { TAG_NONE = 1, TAG_ARRAY = 2, TAG_SCALAR = 3 };

static int is_scalar(PyObject *x) {
    PyTypeObject *t = Py_TYPE(x);
    return t == &PyBool_Type || t == &PyLong_Type || t == &PyFloat_Type || t == &PyComplex_Type ||
           PyArray_IsScalar(x, Generic);
}

/* Appends operand x's part of the key at k; returns the new end, or NULL for an operand no key has. */
static int64_t *put(int64_t *k, PyObject *x, int may_be_none, int may_be_scalar) {
    if (x == Py_None && may_be_none) { *k++ = TAG_NONE; return k; }
    if (PyArray_CheckExact(x)) {
        PyArrayObject *a = (PyArrayObject *)x;
        int nd = PyArray_NDIM(a);
        *k++ = TAG_ARRAY;
        *k++ = (int64_t)(intptr_t)PyArray_DESCR(a);
        *k++ = nd;
        memcpy(k, PyArray_DIMS(a), nd * sizeof(int64_t)); k += nd;
        memcpy(k, PyArray_STRIDES(a), nd * sizeof(int64_t)); k += nd;
        return k;
    }
    if (may_be_scalar && is_scalar(x)) {
        *k++ = TAG_SCALAR;
        *k++ = (int64_t)(intptr_t)Py_TYPE(x);
        return k;
    }
    return NULL;
}

/* The key of (out, inputs...) into buf; its length in int64s, or 0 for a call without a key. */
static Py_ssize_t make_key(int64_t *buf, PyObject *const *ops, Py_ssize_t n) {
    int64_t *k = put(buf, ops[0], 1, 0);
    for (Py_ssize_t i = 1; k && i < n; i++) k = put(k, ops[i], 0, 1);
    return k ? k - buf : 0;
}

#define KEY_SLOTS ((1 + MAX_IN) * (3 + 2 * NPY_MAXDIMS))

static PyObject *key(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    int64_t buf[KEY_SLOTS];
    if (nargs < 2 || nargs > 1 + MAX_IN) {
        PyErr_SetString(PyExc_TypeError, "key(out, x1, ..., xn): 1..MAX_IN inputs");
        return NULL;
    }
    Py_ssize_t n = make_key(buf, args, nargs);
    if (!n) Py_RETURN_NONE;
    return PyBytes_FromStringAndSize((const char *)buf, n * sizeof(int64_t));
}

/* ---- scalars: NumPy's conversion, where it is exact here; 0: not converted (the general path) -- */

static int from_int(PyObject *x, int type, Value *v) {
    int overflow = 0;
    long long i = PyLong_AsLongLongAndOverflow(x, &overflow);
    if (overflow || (i == -1 && PyErr_Occurred())) { PyErr_Clear(); return 0; }
    switch (type) {
    case NPY_INT8: if (i < INT8_MIN || i > INT8_MAX) return 0; v->i8 = (int8_t)i; return 1;
    case NPY_INT16: if (i < INT16_MIN || i > INT16_MAX) return 0; v->i16 = (int16_t)i; return 1;
    case NPY_INT32: if (i < INT32_MIN || i > INT32_MAX) return 0; v->i32 = (int32_t)i; return 1;
    case NPY_INT64: v->i64 = i; return 1;
    case NPY_UINT8: if (i < 0 || i > UINT8_MAX) return 0; v->u8 = (uint8_t)i; return 1;
    case NPY_UINT16: if (i < 0 || i > UINT16_MAX) return 0; v->u16 = (uint16_t)i; return 1;
    case NPY_UINT32: if (i < 0 || i > UINT32_MAX) return 0; v->u32 = (uint32_t)i; return 1;
    case NPY_UINT64: if (i < 0) return 0; v->u64 = (uint64_t)i; return 1;
    /* exactly representable ints only: no rounding question */
    case NPY_FLOAT: if (i < -(1LL << 24) || i > (1LL << 24)) return 0; v->f32 = (float)i; return 1;
    case NPY_DOUBLE: if (i < -(1LL << 53) || i > (1LL << 53)) return 0; v->f64 = (double)i; return 1;
    default: return 0;
    }
}

static int from_float(double d, int type, Value *v) {
    switch (type) {
    case NPY_DOUBLE: v->f64 = d; return 1;
    case NPY_FLOAT:  /* round to nearest, as NumPy's cast; beyond float32's range: the general path */
        if (std::isfinite(d) && std::fabs(d) > FLT_MAX) return 0;
        v->f32 = (float)d; return 1;
    default: return 0;
    }
}

static int convert(PyObject *x, int type, Value *v) {
    PyTypeObject *t = Py_TYPE(x);
    if (t == &PyBool_Type) {
        int one = x == Py_True;
        switch (type) {
        case NPY_BOOL: v->b = (npy_bool)one; return 1;
        case NPY_FLOAT: v->f32 = (float)one; return 1;
        case NPY_DOUBLE: v->f64 = one; return 1;
        default: return from_int(x, type, v);
        }
    }
    if (t == &PyLong_Type) return from_int(x, type, v);
    if (t == &PyFloat_Type) return from_float(PyFloat_AS_DOUBLE(x), type, v);
    if (t == &PyComplex_Type) {
        Py_complex c = PyComplex_AsCComplex(x);
        if (type == NPY_CDOUBLE) { v->c128[0] = c.real; v->c128[1] = c.imag; return 1; }
        return 0;
    }
    /* a NumPy scalar of exactly the loop dtype: its bytes */
    PyArray_Descr *d = PyArray_DescrFromScalar(x);
    if (!d) { PyErr_Clear(); return 0; }
    int same = d->type_num == type && PyArray_ISNBO(d->byteorder) && PyDataType_ELSIZE(d) <= (npy_intp)sizeof(Value);
    Py_DECREF(d);
    if (!same) return 0;
    PyArray_ScalarAsCtype(x, v);
    return 1;
}

/* ---- the api other compiled paths use: the conversion, the fallback for other operands ---------- */

typedef PyObject *(*fallback_fn)(PyObject *table, PyObject *const *ops, Py_ssize_t n);
typedef struct { int version; int (*convert)(PyObject *, int, void *); fallback_fn *fallback; } HotCallApi;
static fallback_fn fallback = NULL;

static int convert_any(PyObject *x, int type, void *v) { return convert(x, type, (Value *)v); }

static HotCallApi api = {1, convert_any, &fallback};

/* ---- entries and calls -------------------------------------------------------------------------- */

static void entry_release(Entry *e) {
    Py_XDECREF(e->out_dtype);
    Py_XDECREF(e->keep);
    Py_XDECREF(e->allocate);
    Py_XDECREF(e->allocate_args);
    for (int i = 0; i < MAX_IN; i++) Py_XDECREF(e->casts[i]);
    PyMem_Free(e);
}

static void entry_free(PyObject *capsule) {
    Entry *e = (Entry *)PyCapsule_GetPointer(capsule, CAPSULE);
    if (e) entry_release(e);
}

static PyObject *entry(PyObject *self, PyObject *args) {
    long long driver, row, meta;
    PyObject *slots, *out_shape, *keep, *casts = Py_None, *allocate = Py_None;
    PyArray_Descr *out_dtype;
    int variadic = 0, cast_out = 0;
    long long chunk = 0, check = 0, chunks = 0;
    if (!PyArg_ParseTuple(args, "LLLO!O&O!O|pOpLLLO", &driver, &row, &meta, &PyTuple_Type, &slots,
                          PyArray_DescrConverter, &out_dtype, &PyTuple_Type, &out_shape, &keep, &variadic,
                          &casts, &cast_out, &chunk, &check, &chunks, &allocate))
        return NULL;
    if (chunks && (!chunk || !check)) {
        Py_DECREF(out_dtype);
        PyErr_SetString(PyExc_ValueError, "entry: a parallel walk needs its chunk runner and check");
        return NULL;
    }
    Py_ssize_t nin = PyTuple_GET_SIZE(slots), nd = PyTuple_GET_SIZE(out_shape);
    int cast_of_scalar = !driver && nin == 1 && PyObject_IsTrue(PyTuple_GET_ITEM(slots, 0));
    int casts_ok = casts == Py_None || (PyTuple_Check(casts) && PyTuple_GET_SIZE(casts) == nin);
    if (nin < 1 || nin > (variadic ? MAX_IN : 3) || nd > NPY_MAXDIMS || (!driver && (nin != 1 || variadic))
            || cast_of_scalar || !casts_ok || (!driver && (cast_out || casts != Py_None))) {
        Py_DECREF(out_dtype);
        PyErr_SetString(PyExc_ValueError, "entry: 1..3 inputs (MAX_IN variadic; 1 array for a cast), "
                        "a cast per input or None, at most NPY_MAXDIMS dims");
        return NULL;
    }
    Entry *e = (Entry *)PyMem_Calloc(1, sizeof(Entry));
    if (!e) { Py_DECREF(out_dtype); return PyErr_NoMemory(); }
    if (variadic) e->driver_n = (driver_n_fn)(intptr_t)driver;
    else e->driver = (driver_fn)(intptr_t)driver;
    e->row = row; e->meta = meta; e->nin = (int)nin; e->cast_out = cast_out;
    e->chunk = (chunk_fn)(intptr_t)chunk; e->check = (check_fn)(intptr_t)check; e->chunks = chunks;
    e->out_dtype = out_dtype;            /* the converter's reference */
    Py_INCREF(keep); e->keep = keep;
    for (Py_ssize_t i = 0; i < nin; i++) {
        e->slots[i] = (int)PyLong_AsLong(PyTuple_GET_ITEM(slots, i));
        PyObject *c = casts == Py_None ? Py_None : PyTuple_GET_ITEM(casts, i);
        if (c != Py_None && !PyArray_DescrConverter(c, &e->casts[i])) break;   /* a new reference */
    }
    for (Py_ssize_t i = 0; i < nd; i++) e->out_shape[i] = PyLong_AsSsize_t(PyTuple_GET_ITEM(out_shape, i));
    e->out_ndim = (int)nd;
    if (allocate != Py_None) {
        Py_INCREF(allocate); e->allocate = allocate;
        e->allocate_args = PyTuple_Pack(2, out_shape, (PyObject *)out_dtype);
    }
    if (PyErr_Occurred()) { entry_release(e); return NULL; }
    PyObject *capsule = PyCapsule_New(e, CAPSULE, entry_free);
    if (!capsule) entry_release(e);
    return capsule;
}

/* x converted to dtype into a new array laid out as x (numpy.asarray(x, dtype)), or NULL (raised). */
static PyArrayObject *converted(PyArrayObject *x, PyArray_Descr *dtype) {
    Py_INCREF(dtype);                    /* NewLikeArray steals it */
    PyArrayObject *y = (PyArrayObject *)PyArray_NewLikeArray(x, NPY_KEEPORDER, dtype, 0);
    if (y && PyArray_CopyInto(y, x) < 0) Py_CLEAR(y);
    return y;
}

/* Whether the bytes a and b span intersect (a superset of sharing memory: conservative). */
static int may_overlap(PyArrayObject *a, PyArrayObject *b) {
    char *lo[2], *hi[2];
    PyArrayObject *ab[2] = {a, b};
    for (int j = 0; j < 2; j++) {
        lo[j] = hi[j] = PyArray_BYTES(ab[j]);
        for (int d = 0; d < PyArray_NDIM(ab[j]); d++) {
            npy_intp span = (PyArray_DIM(ab[j], d) - 1) * PyArray_STRIDE(ab[j], d);
            if (PyArray_DIM(ab[j], d) == 0) return 0;
            if (span < 0) lo[j] += span; else hi[j] += span;
        }
        hi[j] += PyArray_ITEMSIZE(ab[j]);
    }
    return lo[0] < hi[1] && lo[1] < hi[0];
}

static PyObject *run(Entry *e, PyObject *const *args, Py_ssize_t nargs);

/* Whether an allocator's array is the output the entry's plan writes: a writable, aligned,
 * C-contiguous ndarray of its dtype and shape. */
static int fits(PyArrayObject *a, const Entry *e) {
    if (!PyArray_Check(a) || PyArray_NDIM(a) != e->out_ndim || !PyArray_EquivTypes(PyArray_DESCR(a), e->out_dtype)
            || !PyArray_IS_C_CONTIGUOUS(a) || !PyArray_ISWRITEABLE(a) || !PyArray_ISALIGNED(a))
        return 0;
    for (int d = 0; d < e->out_ndim; d++)
        if (PyArray_DIM(a, d) != e->out_shape[d]) return 0;
    return 1;
}

static PyObject *call(PyObject *self, PyObject *const *args, Py_ssize_t nargs) {
    int64_t buf[KEY_SLOTS];
    if (nargs < 3 || !PyDict_Check(args[0])) {
        PyErr_SetString(PyExc_TypeError, "call(table, out, x1, ..., xn)");
        return NULL;
    }
    if (nargs > 2 + MAX_IN) Py_RETURN_NONE;   /* more inputs than an entry takes: the general path */
    Py_ssize_t n = make_key(buf, args + 1, nargs - 1);
    if (!n) {
        if (fallback) return fallback(args[0], args + 1, nargs - 1);
        Py_RETURN_NONE;
    }
    PyObject *k = PyBytes_FromStringAndSize((const char *)buf, n * sizeof(int64_t));
    if (!k) return NULL;
    PyObject *capsule = PyDict_GetItemWithError(args[0], k);   /* borrowed */
    Py_DECREF(k);
    if (!capsule) { if (PyErr_Occurred()) return NULL; Py_RETURN_NONE; }
    Entry *e = (Entry *)PyCapsule_GetPointer(capsule, CAPSULE);
    if (!e || e->nin != nargs - 2) { PyErr_Clear(); Py_RETURN_NONE; }
    Py_INCREF(capsule);   /* the entry outlives this call even if an allocation's GC clears the table */
    PyObject *result = run(e, args, nargs);
    Py_DECREF(capsule);
    return result;
}

/* Entry e run on call(table, out, x1...)'s operands (see call). */
static PyObject *run(Entry *e, PyObject *const *args, Py_ssize_t nargs) {
    Value values[MAX_IN];
    PyArrayObject *temps[MAX_IN] = {NULL};   /* inputs converted to their loop dtype */
    int64_t p[MAX_IN + 1] = {0};
    PyObject *result = NULL;
    PyArrayObject *out = NULL, *into = NULL;  /* into: where the driver writes (out, or a new array) */
    for (int i = 0; i < e->nin; i++) {
        PyObject *x = args[2 + i];
        if (e->slots[i]) {
            if (!convert(x, e->slots[i] - 1, &values[i])) { result = Py_None; goto done; }
            p[i] = (int64_t)(intptr_t)&values[i];
        } else if (e->casts[i]) {
            temps[i] = converted((PyArrayObject *)x, e->casts[i]);
            if (!temps[i]) goto done;
            p[i] = (int64_t)(intptr_t)PyArray_DATA(temps[i]);
        } else {
            p[i] = (int64_t)(intptr_t)PyArray_DATA((PyArrayObject *)x);
        }
    }
    if (args[1] != Py_None) {
        if (!PyArray_ISWRITEABLE((PyArrayObject *)args[1])) { result = Py_None; goto done; }
        out = (PyArrayObject *)args[1];
        Py_INCREF(out);                    /* a reference of this call's own: done releases it */
    }
    if ((!out || e->cast_out) && e->allocate) {
        into = (PyArrayObject *)PyObject_Call(e->allocate, e->allocate_args, NULL);
        if (!into) goto done;
        if (!fits(into, e)) { result = Py_None; goto done; }   /* not the array the plan writes: the general path */
    } else if (!out || e->cast_out) {
        Py_INCREF(e->out_dtype);
        into = (PyArrayObject *)PyArray_NewFromDescr(&PyArray_Type, e->out_dtype, e->out_ndim, e->out_shape,
                                                     NULL, NULL, 0, NULL);
        if (!into) goto done;
    } else {
        into = out;
        Py_INCREF(into);
    }
    if (!e->driver && !e->driver_n) {   /* NumPy's cast; out= sharing the input's memory: the general path */
        PyArrayObject *x = (PyArrayObject *)args[2];
        if (out && may_overlap(into, x)) { result = Py_None; goto done; }
        if (PyArray_CopyInto(into, x) < 0) goto done;
    } else {
        p[e->nin] = (int64_t)(intptr_t)PyArray_DATA(into);
        int64_t st;
        if (e->chunks) {
            Py_BEGIN_ALLOW_THREADS
            st = drive_parallel(e->chunk, e->check, e->row, (int64_t)(intptr_t)p, e->meta, e->chunks);
            Py_END_ALLOW_THREADS
        } else {
            st = e->driver_n ? e->driver_n(e->row, (int64_t)(intptr_t)p, e->meta)
                             : e->driver(e->row, p[0], p[1], p[2], p[3], e->meta);
        }
        if (st) { result = Py_None; goto done; }   /* misaligned or overlapping: the general path */
    }
    if (out && into != out) {           /* cast_out: NumPy's conversion into out= */
        if (PyArray_CopyInto(out, into) < 0) goto done;
        Py_INCREF(out);
        result = (PyObject *)out;
    } else {
        Py_INCREF(into);
        result = (PyObject *)into;
    }
done:
    for (int i = 0; i < e->nin; i++) Py_XDECREF(temps[i]);
    Py_XDECREF(into);
    Py_XDECREF(out);
    if (result == Py_None) Py_INCREF(result);
    return result;
}

/* ---- functions: a public function whose default call runs from C --------------------------------
 * function(general, declined, table, inputs, extra, out_mode[, options]) -> a callable: a call of
 * `inputs` positional operands, out= given (by name with out_mode >= 1, or positionally after them with 2)
 * or not, and no other argument, is call(table, out, x1..., *extra), or where `call` does not answer
 * it, declined(out, x1..., *extra) (the general path of the default options, asked once); a call with
 * one keyword option besides out= whose (name, value) `options` maps to a table is call(that table,
 * ...), or where not answered general's; any other call is general(*args, **kwargs) as passed.  So the default call of gb.add runs with
 * no Python frame between the caller and the driver. */
typedef struct {
    PyObject_HEAD
    vectorcallfunc vectorcall;
    PyObject *general;      /* the Python function: the contract and every other call */
    PyObject *declined;     /* declined(out, *operands): a default call `call` did not answer */
    PyObject *table;        /* the default options' entries (a dict) */
    PyObject *extra;        /* a tuple of operands after the inputs (an activation's default parameters) */
    PyObject *options;      /* (name, value) of one keyword option -> its table (a dict), or None */
    PyObject *keyed;        /* the positional argument after the operands -> its table (a dict), or None */
    PyObject *dict;         /* __name__, __doc__, __wrapped__, ... (functools.update_wrapper) */
    int nin, out_mode;      /* 0: no out= (general's error); 1: out= by name; 2: also positionally */
} Function;

static PyObject *function_vectorcall(PyObject *self, PyObject *const *args, size_t nargsf, PyObject *kwnames) {
    Function *f = (Function *)self;
    Py_ssize_t nargs = PyVectorcall_NARGS(nargsf), nkw = kwnames ? PyTuple_GET_SIZE(kwnames) : 0;
    Py_ssize_t ne = PyTuple_GET_SIZE(f->extra);
    PyObject *out = Py_None, *table = f->table, *chosen = NULL;
    int option = 0;                   /* an option given: its table; a call C declines is general's */
    int nk = f->keyed != Py_None;     /* positional arguments before out: the operands, the key */
    int mine = (nargs == f->nin + nk || (f->out_mode == 2 && nargs == f->nin + nk + 1)) && nkw <= 2
               && f->nin + ne + nk <= MAX_IN;
    if (mine && nk) {
        chosen = args[f->nin];
        table = PyDict_GetItemWithError(f->keyed, chosen);   /* borrowed: keyed holds it */
        if (!table) { PyErr_Clear(); mine = 0; }             /* no table yet (or unhashable): general's */
    }
    if (mine && nargs > f->nin + nk) out = args[f->nin + nk];
    for (Py_ssize_t i = 0; mine && i < nkw; i++) {
        PyObject *name = PyTuple_GET_ITEM(kwnames, i), *value = args[nargs + i];
        if (PyUnicode_CompareWithASCIIString(name, "out") == 0) {
            if (nargs > f->nin + nk || !f->out_mode) mine = 0;   /* out twice, or none taken: general's error */
            else out = value;
        } else if (option || f->options == Py_None) {
            mine = 0;                               /* a second option: general's */
        } else {
            PyObject *key = PyTuple_Pack(2, name, value);
            if (!key) return NULL;
            table = PyDict_GetItemWithError(f->options, key);   /* borrowed: options holds it */
            Py_DECREF(key);
            if (!table) { PyErr_Clear(); mine = 0; }   /* no table for it (or unhashable): general's */
            option = 1;
        }
    }
    if (mine) {
        PyObject *ops[2 + MAX_IN];
        Py_ssize_t n = 0;
        ops[n++] = table;
        ops[n++] = out;
        for (Py_ssize_t i = 0; i < f->nin; i++) ops[n++] = args[i];
        for (Py_ssize_t i = 0; i < ne; i++) ops[n++] = PyTuple_GET_ITEM(f->extra, i);
        PyObject *r = call(NULL, ops, n);
        if (r != Py_None) return r;   /* the result, or NULL: raised */
        Py_DECREF(r);
        if (chosen) ops[n++] = chosen;   /* declined(out, *operands, *extra, key) */
        if (!option) return PyObject_Vectorcall(f->declined, ops + 1, n - 1, NULL);
    }
    return PyObject_Vectorcall(f->general, args, nargsf, kwnames);
}

static int function_traverse(PyObject *self, visitproc visit, void *arg) {
    Function *f = (Function *)self;
    Py_VISIT(f->general); Py_VISIT(f->declined); Py_VISIT(f->table); Py_VISIT(f->extra); Py_VISIT(f->options);
    Py_VISIT(f->keyed); Py_VISIT(f->dict);
    return 0;
}

static int function_clear(PyObject *self) {
    Function *f = (Function *)self;
    Py_CLEAR(f->general); Py_CLEAR(f->declined); Py_CLEAR(f->table); Py_CLEAR(f->extra); Py_CLEAR(f->options);
    Py_CLEAR(f->keyed); Py_CLEAR(f->dict);
    return 0;
}

static void function_dealloc(PyObject *self) {
    PyObject_GC_UnTrack(self);
    function_clear(self);
    Py_TYPE(self)->tp_free(self);
}

static PyObject *function_repr(PyObject *self) {
    PyObject *name = PyObject_GetAttrString(self, "__qualname__");
    if (!name) { PyErr_Clear(); return PyUnicode_FromFormat("<gpubcast function at %p>", self); }
    PyObject *r = PyUnicode_FromFormat("<gpubcast function %U>", name);
    Py_DECREF(name);
    return r;
}

/* Not bound as a method when it is a class attribute, as a built-in function (and inspect's "routine"). */
static PyObject *function_get(PyObject *self, PyObject *obj, PyObject *type) {
    Py_INCREF(self);
    return self;
}

/* pickled by reference, as a function: its module's attribute of its __qualname__ */
static PyObject *function_reduce(PyObject *self, PyObject *unused) {
    return PyObject_GetAttrString(self, "__qualname__");
}

static PyMethodDef function_methods[] = {
    {"__reduce__", function_reduce, METH_NOARGS, NULL},
    {NULL, NULL, 0, NULL},
};

static PyGetSetDef function_getset[] = {
    {"__dict__", PyObject_GenericGetDict, PyObject_GenericSetDict, NULL, NULL},
    {NULL, NULL, NULL, NULL, NULL},
};

static PyTypeObject FunctionType = {PyVarObject_HEAD_INIT(NULL, 0)};

static PyObject *function(PyObject *self, PyObject *args) {
    PyObject *general, *declined, *table, *extra, *options = Py_None, *keyed = Py_None;
    int nin, out_mode;
    if (!PyArg_ParseTuple(args, "OOO!iO!i|OO", &general, &declined, &PyDict_Type, &table, &nin, &PyTuple_Type,
                          &extra, &out_mode, &options, &keyed))
        return NULL;
    if ((options != Py_None && !PyDict_Check(options)) || (keyed != Py_None && !PyDict_Check(keyed))) {
        PyErr_SetString(PyExc_TypeError, "function: options and keyed are each a dict or None");
        return NULL;
    }
    if (!PyCallable_Check(general) || !PyCallable_Check(declined) || nin < 1
            || nin + PyTuple_GET_SIZE(extra) + (keyed != Py_None) > MAX_IN || out_mode < 0 || out_mode > 2) {
        PyErr_SetString(PyExc_ValueError, "function(general, declined, table, inputs, extra, out_mode): "
                        "callables, 1..MAX_IN operands, out_mode 0..2");
        return NULL;
    }
    Function *f = PyObject_GC_New(Function, &FunctionType);
    if (!f) return NULL;
    f->vectorcall = function_vectorcall;
    Py_INCREF(general); f->general = general;
    Py_INCREF(declined); f->declined = declined;
    Py_INCREF(table); f->table = table;
    Py_INCREF(extra); f->extra = extra;
    Py_INCREF(options); f->options = options;
    Py_INCREF(keyed); f->keyed = keyed;
    f->dict = NULL;
    f->nin = nin; f->out_mode = out_mode;
    PyObject_GC_Track((PyObject *)f);
    return (PyObject *)f;
}

static int function_type_ready(void) {
    FunctionType.tp_name = "gpubcast.native.hot_call.Function";
    FunctionType.tp_basicsize = sizeof(Function);
    FunctionType.tp_flags = Py_TPFLAGS_DEFAULT | Py_TPFLAGS_HAVE_GC | Py_TPFLAGS_HAVE_VECTORCALL;
    FunctionType.tp_doc = "A gpubcast function: its default call runs in C (hot_call.cpp, function)";
    FunctionType.tp_vectorcall_offset = offsetof(Function, vectorcall);
    FunctionType.tp_call = PyVectorcall_Call;
    FunctionType.tp_dictoffset = offsetof(Function, dict);
    FunctionType.tp_traverse = function_traverse;
    FunctionType.tp_clear = function_clear;
    FunctionType.tp_dealloc = function_dealloc;
    FunctionType.tp_repr = function_repr;
    FunctionType.tp_descr_get = function_get;
    FunctionType.tp_methods = function_methods;
    FunctionType.tp_getset = function_getset;
    return PyType_Ready(&FunctionType);
}

/* drive_parallel(chunk, check, row, operand addresses' address, meta address, chunks) -> status, from
 * Python (the runners and the general path of parallel sizes); the GIL is released meanwhile. */
static PyObject *py_drive_parallel(PyObject *self, PyObject *args) {
    long long chunk, check, row, pp, mp, chunks;
    if (!PyArg_ParseTuple(args, "LLLLLL", &chunk, &check, &row, &pp, &mp, &chunks)) return NULL;
    int64_t st;
    Py_BEGIN_ALLOW_THREADS
    st = drive_parallel((chunk_fn)(intptr_t)chunk, (check_fn)(intptr_t)check, row, pp, mp, chunks);
    Py_END_ALLOW_THREADS
    return PyLong_FromLongLong(st);
}

/* configure(threads, scratch bytes): the threads of a job (the caller's included) and each thread's
 * scratch; before the first job (workers already made keep their scratch). */
static PyObject *configure(PyObject *self, PyObject *args) {
    int threads;
    Py_ssize_t scratch;
    if (!PyArg_ParseTuple(args, "in", &threads, &scratch)) return NULL;
    if (threads < 1 || threads > POOL_MAX_THREADS || scratch < 0) {
        PyErr_Format(PyExc_ValueError, "configure: 1..%d threads and scratch >= 0", POOL_MAX_THREADS);
        return NULL;
    }
    pool.threads = threads;
    if ((size_t)scratch > pool.scratch_bytes) pool.scratch_bytes = (size_t)scratch;
    Py_RETURN_NONE;
}

static PyMethodDef methods[] = {
    {"drive_parallel", py_drive_parallel, METH_VARARGS, "run a walk's chunks on the pool: a status"},
    {"configure", configure, METH_VARARGS, "(threads, scratch bytes) of the pool"},
    {"key", (PyCFunction)(void (*)(void))key, METH_FASTCALL, "the signature of (out, *inputs), or None"},
    {"entry", entry, METH_VARARGS, "an entry: (driver, row, meta, slots, out_dtype, out_shape, keep)"},
    {"call", (PyCFunction)(void (*)(void))call, METH_FASTCALL, "table's entry for (out, *inputs), run; or None"},
    {"function", function, METH_VARARGS,
     "(general, declined, table, inputs, extra, out_mode[, options[, keyed]]): a public function"},
    {NULL, NULL, 0, NULL},
};

#ifndef GB_SOURCE_SHA256
#define GB_SOURCE_SHA256 ""   /* built without the digest: compiled_calls never takes it for this text's build */
#endif

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "gpubcast.native.hot_call", NULL, -1, methods};

PyMODINIT_FUNC PyInit_hot_call(void) {
    import_array();
    if (function_type_ready() < 0) return NULL;
    static int registered = 0;
    if (!registered && pthread_atfork(nullptr, nullptr, pool_after_fork_in_child) == 0) registered = 1;
    PyObject *m = PyModule_Create(&module);
    if (!m) return NULL;
    if (PyModule_AddStringConstant(m, "SOURCE_SHA256", GB_SOURCE_SHA256) < 0) {
        Py_DECREF(m);
        return NULL;
    }
    PyObject *capsule = PyCapsule_New(&api, "gpubcast.hot_call.api", NULL);
    if (!capsule || PyModule_AddObject(m, "api", capsule) < 0) { Py_XDECREF(capsule); Py_DECREF(m); return NULL; }
    return m;
}
