"""The Numba CPU backend: executes plans with compiled, parallel kernels.

For each (op, loop dtypes) a ``Spec`` picks the row-function kind (``rows``), the raw
types it loads and stores, and the codec of the values (``codecs``); row functions are
compiled on first use and cached on disk (``cache``).  For each (plan, spec layout) an
``iteration_meta`` array (``meta``) says how the drivers (``drivers``) walk the output.

Signed integers are computed as unsigned of the same width where the result does not depend on
the sign (``scalars.SIGN_AGNOSTIC``), and data movement by item size, not dtype: fewer
specialisations to compile.

Everything with a raw type runs here: every numeric dtype, bfloat16 included, and data movement
(``copy``, ``where``) of any item size (strings, void) as raw units.  Object arrays go to the NumPy
reference backend.  Inputs or outputs that are misaligned, or inputs that partially overlap the
output, are staged through aligned copies of the bytes they touch.

Threads: outputs of at least ``PARALLEL_MIN`` elements (``PARALLEL_MIN_HEAVY`` for the ``heavy``
ops) run on every thread, through gpubcast's thread pool (``pool``), or Numba's threading layer where
the compiled module is absent (TBB where installed: fork- and thread-safe, ``threading_layer``).  A
forked child of a process whose OpenMP threads started runs every op on the serial drivers: GNU
OpenMP would kill it at its first parallel region.
"""

from __future__ import annotations

import ctypes
import functools
import os
from dataclasses import dataclass

import numba
import numpy as np

from ... import compiled_calls
from ... import dtypes as _dt
from ... import host_pool
from ...plan import SCALAR
from .. import threading_layer
from ..reference import HostArrays, NumpyBackend
from . import drivers, pool, rows
from . import scalars as S
from .codecs import BFLOAT16, BOOL, FLOAT16, NATIVE
from .meta import H_CHUNK, H_DRIVER, H_FLAGS, H_ROW, SHORT_ROWS, extent, full_walk, iteration_meta, unit_sizes

#: outputs with at least this many elements run on every thread (the thread pool, ``pool``); ops that
#: compute more per element (``heavy``) split sooner.  Measured on the 2-core VM (2026-11-28, float32,
#: one call into out=, serial against the pool): add of 16 K 2.2 vs 2.2 us, 32 K 3.9 vs 3.5, 64 K 8.3
#: vs 5.8; tanh of 4 K 1.9 vs 2.5, 8 K 3.5 vs 2.7, 16 K 6.5 vs 4.5
PARALLEL_MIN = 1 << 15
PARALLEL_MIN_HEAVY = 1 << 13
#: ops beyond a few instructions per element (transcendentals, their activations, power)
HEAVY = S.HEAVY_UNARY | {"power", "sqrt", "cbrt", "swish", "elu", "selu", "celu", "logaddexp", "logaddexp2",
                         "arctan2", "hypot"}


def heavy(op) -> bool:
    return op.name in HEAVY or "math" in op.tags


def light(op, in_dtypes, out_dtype) -> bool:
    """Whether ``op``'s rows stream memory, their loops ``rows.LIGHT_BITS`` wide: not heavy (``heavy``),
    and ``unnarrowed``."""
    return not heavy(op) and unnarrowed(in_dtypes, out_dtype)


def unnarrowed(in_dtypes, out_dtype) -> bool:
    """No input wider than the output (a comparison's 256-bit loop packs its bools slower: float32
    greater, 4 M elements, one core, 0.27 against 0.22 ns an element)."""
    return all(np.dtype(d).itemsize <= np.dtype(out_dtype).itemsize for d in in_dtypes)
#: True in a forked child of a process whose OpenMP threads started: GNU OpenMP kills such a child
#: at its first parallel region, so it runs the serial drivers (``_after_fork_in_child``)
_FORKED_FROM_OMP = False
#: fused programs' Specs kept (by structure, output dtype and stride pattern), least recently used dropped
MAX_FUSED_SPECS = 1024

_MOVE_TYPES = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64, 16: np.complex128}


def _raw(dt: np.dtype, unsigned: bool = False):
    """(raw NumPy type, codec) of a numeric dtype; ``unsigned`` views signed ints as unsigned."""
    if dt == _dt.bfloat16:
        return np.uint16, BFLOAT16
    if dt.kind == "b":
        return np.uint8, BOOL
    if dt == np.float16:
        return np.uint16, FLOAT16
    if dt.kind == "i" and unsigned:
        return np.dtype(f"u{dt.itemsize}").type, NATIVE
    return dt.type, NATIVE


def computes(dtypes) -> bool:
    """Whether compiled rows compute on every one of ``dtypes``: bool, integer, floating and complex
    types up to float64/complex128 (Numba has no long double: ``longdouble``/``clongdouble`` run on
    the NumPy reference, NumPy's own loops)."""
    return all(_dt.kind(d) in "biufc" and d.type not in _LONG for d in dtypes)


_LONG = (np.longdouble, np.clongdouble)
_TYPEABLE: dict = {}


def _numba_typeable(dt: np.dtype) -> bool:
    """Whether Numba can take arrays of ``dt`` as they are (else they are viewed as raw units)."""
    ok = _TYPEABLE.get(dt)
    if ok is None:
        try:
            numba.typeof(np.empty(0, dt))
            ok = dt.kind not in "OV" and dt != np.float16  # Numba has no float16 data model on CPUs
        except Exception:  # noqa: BLE001 - any failure of numba.typeof means: not as it is
            ok = False
        _TYPEABLE[dt] = ok
    return ok


@dataclass(eq=False)
class Spec:
    """How one (op, loop dtypes, output dtype) runs: row kind, raw types, views."""

    kind: str                      # unary | binary | where | variadic | move | fused
    make_row: object               # () -> compiled row function (numba cfunc)
    raws: tuple                    # raw NumPy types of the operands, output last
    views: tuple                   # per operand: dtype to view the array as first, or None
    factor: int = 1                # raw units per element (item sizes without a raw type)
    parallel_min: int = 0          # outputs of at least this many elements run on every thread (0: PARALLEL_MIN)
    make_short_row: object = None  # () -> the row function for plans of short rows (rows.SHORT_ROW), or None
    _row: object = None
    _short_row: object = None

    def parallel(self, size: int) -> bool:
        """Whether an output of ``size`` elements runs on every thread (``_parallel``)."""
        return size >= (self.parallel_min or PARALLEL_MIN) and _threads_usable()

    @property
    def row(self) -> int:
        """Address of the compiled row function (compiled on first use)."""
        if self._row is None:
            self._row = self.make_row()
        return self._row.address

    def row_for(self, meta) -> int:
        """Address of the row function for the walk ``meta``: the short-row one where there is one and
        its slabs are of short rows (meta's ``SHORT_ROWS`` flag; compiled on first use: other plans
        never compile it)."""
        if self.make_short_row is None or not meta[H_FLAGS] & SHORT_ROWS:
            return self.row
        if self._short_row is None:
            self._short_row = self.make_short_row()
        return self._short_row.address

    @property
    def itemsizes(self):
        return tuple(np.dtype(t).itemsize for t in self.raws)


def _view(dt, raw):
    return None if _numba_typeable(dt) else np.dtype(raw)


def make_spec(op, in_dtypes, out_dtype, scalar_second: bool = False) -> Spec | None:
    """The Spec of ``op`` over loop dtypes ``in_dtypes`` into ``out_dtype``; None -> reference.
    ``scalar_second``: the second operand is one value over the whole call (NumPy's power then
    takes its fast path, ``scalars.SCALAR_SECOND_CONSTANT``; a broadcast one does not)."""
    if op.kind == "move" or op.name == "where":
        return _move_spec(op, in_dtypes, out_dtype)
    if not computes((*in_dtypes, out_dtype)):
        return None
    unsigned = op.name in S.SIGN_AGNOSTIC
    if op.kind == "variadic":
        step, finish = S.VARIADIC[op.name]
        raw, codec = _raw(in_dtypes[0], unsigned)
        return Spec("variadic", lambda: rows.variadic_row(step, finish, codec, raw),
                    (raw,) * (len(in_dtypes) + 1),
                    tuple(_view(d, raw) for d in (*in_dtypes, out_dtype)))
    if op.kind == "quaternary":  # axpby: Gemm's alpha * AB + beta * C, 4 inputs in one pass
        raw, codec = _raw(in_dtypes[0], False)
        return Spec("variadic", lambda: rows.axpby_row(S.SCALAR["multiply"], S.SCALAR["add"], codec, raw),
                    (raw,) * 5, tuple(_view(d, raw) for d in (*in_dtypes, out_dtype)))
    if op.kind == "parametric":  # an activation's x and two parameters, in one pass
        raw, codec = _raw(in_dtypes[0], False)
        f = S.PARAMETRIC[op.name]
        return Spec("variadic", lambda: rows.parametric_row(f, codec, raw, light(op, in_dtypes, out_dtype)), (raw,) * 4,
                    tuple(_view(d, raw) for d in (*in_dtypes, out_dtype)))
    if op.kind == "unary":
        if op.name not in S.UNARY:  # cast: NumPy's own astype (the reference backend)
            return None
        (ra, codec), (ro, _) = _raw(in_dtypes[0], False), _raw(out_dtype, False)
        f = S.UNARY[op.name]
        vector = S.UNARY_VECTOR.get(op.name, ())
        long_body = op.name in S.HEAVY_UNARY
        return Spec("unary", lambda: rows.unary_row(f, codec, ra, ro, *(vector or (None, None, 0)), long_body,
                                                    light(op, in_dtypes, out_dtype)),
                    (ra, ro), (_view(in_dtypes[0], ra), _view(out_dtype, ro)))
    if op.kind != "binary" or op.name not in S.SCALAR:
        return None
    (ra, codec), (rb, _), (ro, _) = (_raw(d, unsigned) for d in (*in_dtypes, out_dtype))
    f, fy = S.row_functions(op.name)
    fy = fy if scalar_second else f
    wide = light(op, in_dtypes, out_dtype)
    return Spec("binary", lambda: rows.binary_row(f, fy, codec, ra, rb, ro, wide), (ra, rb, ro),
                (_view(in_dtypes[0], ra), _view(in_dtypes[1], rb), _view(out_dtype, ro)),
                make_short_row=lambda: rows.binary_short_row(f, fy, codec, ra, rb, ro, wide))


def _move_spec(op, in_dtypes, out_dtype) -> Spec | None:
    values = in_dtypes[-1]
    data = (*in_dtypes[1:], out_dtype) if op.name == "where" else (*in_dtypes, out_dtype)
    if any(d.hasobject or d.itemsize != values.itemsize for d in data) or values.itemsize == 0:
        return None
    size = values.itemsize
    raw, factor = _MOVE_TYPES.get(size), 1
    if raw is None:
        unit = next(u for u in (8, 4, 2, 1) if size % u == 0)
        raw, factor = _MOVE_TYPES[unit], size // unit
    view = None if factor == 1 and _numba_typeable(values) else np.dtype(raw)
    if op.name == "where":
        return Spec("where", lambda: rows.where_row(np.uint8, raw), (np.uint8, raw, raw, raw),
                    (_view(in_dtypes[0], np.uint8), view, view, view), factor)
    return Spec("move", lambda: rows.unary_row(S.move, NATIVE, raw, raw, light=True), (raw, raw), (view, view), factor)


@functools.lru_cache(maxsize=MAX_FUSED_SPECS)
def _fused_spec(program, out_dtype, classes: str, raws, views, short: bool, light: bool) -> Spec:
    """The Spec of a fused program (``Program`` compares by structure, not by its constants' values);
    ``short``: for plans of short rows, ``light``: no heavy step (``fused.row_function``)."""
    from . import fused
    return Spec("fused", lambda: fused.row_function(program, out_dtype, classes, _raw, short, light), raws, views)


# --- the backend -----------------------------------------------------------------------------------------

class NumbaBackend(HostArrays):
    """Numba CPU backend: NumPy arrays in and out; compiled row functions per op kind and raw types."""

    name = "numba"

    def __init__(self):
        self._specs: dict = {}
        self._metas: dict = {}
        self._reference = NumpyBackend()

    def spec(self, op, in_dtypes, out_dtype, p=None) -> Spec | None:
        """The Spec of ``op`` on these dtypes over plan ``p`` (whose operand classes pick NumPy's
        scalar-exponent loop of ``power``)."""
        scalar_second = op.name in S.SCALAR_SECOND_CONSTANT and p is not None and p.classes[1:2] == (SCALAR,)
        key = (op.name, in_dtypes, out_dtype, scalar_second)
        try:
            return self._specs[key]
        except KeyError:
            s = self._specs[key] = make_spec(op, in_dtypes, out_dtype, scalar_second)
            if s is not None and heavy(op):
                s.parallel_min = PARALLEL_MIN_HEAVY
            return s

    def meta(self, p, spec: Spec) -> np.ndarray:
        parallel = p.size >= (spec.parallel_min or PARALLEL_MIN)
        key = (id(p), spec.kind, spec.factor, spec.itemsizes, parallel)
        hit = self._metas.get(key)
        if hit is not None and hit[0] is p:
            return hit[1]
        if len(self._metas) > 4096:
            self._metas.clear()
        m = iteration_meta(p, spec, parallel)
        m[H_CHUNK] = drivers.chunk_address(full=full_walk(m))   # the plain walk unless staged or streamed
        self._metas[key] = (p, m)  # holds p: its id cannot be reused while the entry lives
        return m

    def execute(self, op, p, inputs, out):
        spec = self.spec(op, tuple(x.dtype for x in inputs), out.dtype, p)
        if spec is None:
            return self._reference.execute(op, p, inputs, out)
        addrs = []
        for x, v in zip((*inputs, out), spec.views):
            if v is None:  # Numba takes the array: the quick way
                addr, writable = drivers.address(x)
            else:  # dtypes Numba has no type for (float16, bfloat16, strings, records)
                addr, writable = x.__array_interface__["data"][0], x.flags.writeable
            addrs.append(addr)
        if not writable:
            raise ValueError("output array is read-only")
        run(spec, self.meta(p, spec), addrs, p.size)

    def execute_fused(self, program, p, inputs, out) -> bool:
        """Run fused ``program`` (``gpubcast.fusion``) over plan ``p`` of its leaves ``inputs`` into
        ``out`` with one generated row function (``fused``); False if a dtype has no raw type."""
        if not computes((*(x.dtype for x in inputs), *(c.dtype for c in program.constants), out.dtype)):
            return False
        if program.constants:
            inputs = (*inputs, program.constant_block)
        found = self._fused_spec(program, p, tuple(x.dtype for x in inputs), out.dtype)
        if found is None:
            return False
        spec, meta = found
        addrs = []
        for x, v in zip((*inputs, out), spec.views):
            addr, writable = (drivers.address(x) if v is None
                              else (x.__array_interface__["data"][0], x.flags.writeable))
            addrs.append(addr)
        if not writable:
            raise ValueError("output array is read-only")
        run(spec, meta, addrs, p.size)
        return True

    def _fused_spec(self, program, p, dtypes, out_dtype):
        """(Spec, meta) of a fused program over plan ``p`` (operand dtypes ``dtypes``: the leaves and
        the constant block), its row function specialised on the inner strides ``meta`` gives."""
        from . import fused
        if not computes((*dtypes, out_dtype)):
            return None
        raws = tuple(_raw(d)[0] for d in (*dtypes, out_dtype))
        views = tuple(_view(d, r) for d, r in zip((*dtypes, out_dtype), raws))
        heavy_steps = any(heavy(node.op) for node, _ in program.steps)
        threshold = PARALLEL_MIN_HEAVY if heavy_steps else 0
        meta = self.meta(p, Spec("fused", None, raws, views, parallel_min=threshold))
        spec = _fused_spec(program, out_dtype, fused.pattern(meta), raws, views, bool(meta[H_FLAGS] & SHORT_ROWS),
                           not heavy_steps and unnarrowed(dtypes, out_dtype))
        spec.parallel_min = threshold
        return spec, meta

    def prepare_fused(self, program, p, in_dtypes, out_dtype):
        """``prepare`` for a fused program (``in_dtypes``: its leaves'); None for an empty output (the
        general path's: no walk to plan)."""
        if not p.size or not computes((*in_dtypes, *(c.dtype for c in program.constants), np.dtype(out_dtype))):
            return None
        block = (program.constant_block,) if program.constants else ()
        found = self._fused_spec(program, p, (*in_dtypes, *(b.dtype for b in block)), np.dtype(out_dtype))
        if found is None:
            return None
        n_in = len(in_dtypes) + len(block)
        runner = self._runner(found[0], p, out_dtype, n_in) if n_in <= 3 else self._runner_n(found[0], p, out_dtype)
        if runner is None or not block:
            return runner
        return lambda inputs, out: runner((*inputs, *block), out)

    def prepare(self, op, p, in_dtypes, out_dtype):
        """A runner ``f(inputs, out) -> out`` for repeated calls with plan ``p`` and these dtypes
        (``out`` None: a new array); it returns None when the general path must run instead
        (misaligned or overlapping operands, read-only output).  None if there is no runner."""
        spec = self.spec(op, in_dtypes, out_dtype, p)
        if spec is None and op.name == "cast" and all(_dt.kind(d) in "biufc" for d in (*in_dtypes, out_dtype)):
            return _cast_runner(p, out_dtype)   # numbers only: objects' errors are the general path's to word
        if spec is None:
            return None
        if spec.kind == "variadic":
            return self._runner_n(spec, p, out_dtype)
        return self._runner(spec, p, out_dtype, {"unary": 1, "binary": 2, "where": 3, "move": 1}[spec.kind])

    def _runner_n(self, spec, p, out_dtype):
        """A runner over any number of inputs (``drive_n``: operand addresses in an array)."""
        if not p.size or p.out_overlaps_itself or any(v is not None for v in spec.views):
            return None   # (an out= overlapping itself: the general path computes apart, writes in NumPy's order)
        meta, shape = self.meta(p, spec), p.out_shape
        row = spec.row_for(meta)
        empty = host_pool.empty_for(shape, out_dtype)
        parallel = spec.parallel(p.size)

        nops, addresses = len(spec.raws), drivers.addresses

        def runner(inputs, out):
            if out is None:
                out = empty(shape, out_dtype)
            ptrs = np.empty(nops, np.int64)   # per call: the drivers release the GIL
            if not addresses((*inputs, out), ptrs):
                return None
            if parallel and not _FORKED_FROM_OMP:
                st = _drive_parallel_n(row, ptrs, meta)
            else:
                st = drivers.drive_n(row, ptrs, meta)
            return None if st else out
        runner.keep = (meta, spec)
        if nops <= drivers.MAX_SERIAL_N:   # described to compiled_calls
            runner.native = _native(row, meta, parallel, True, empty)
        return runner

    def _runner(self, spec, p, out_dtype, n_in):
        """The runner of ``prepare``: ``spec``'s row function over plan ``p``, ``n_in`` (1..3) inputs."""
        if not p.size or p.out_overlaps_itself or any(v is not None for v in spec.views):
            return None   # (an out= overlapping itself: the general path computes apart, writes in NumPy's order)
        meta = self.meta(p, spec)
        shape, size, empty = p.out_shape, p.size, host_pool.empty_for(p.out_shape, out_dtype)
        row = spec.row_for(meta)
        if spec.parallel(size):
            launch = (drivers.launch1, drivers.launch2, drivers.launch3)[n_in - 1]
            serial = drivers.drive

            def runner(inputs, out):
                if out is None:
                    out = empty(shape, out_dtype)
                *addrs, w = launch(*inputs, out)
                if not w:
                    return None
                if _FORKED_FROM_OMP:
                    return None if serial(row, *addrs, *[0] * (4 - len(addrs)), meta) else out
                return None if _drive_parallel(row, addrs, meta) else out
            runner.keep = (meta, spec)
            runner.native = _native(row, meta, True, True, empty)   # for compiled_calls: the walk on the pool
            return runner
        meta = meta.copy()  # this runner's: with the addresses of its row function and driver
        meta[H_ROW], meta[H_DRIVER] = row, drivers.driver_address()
        mp = meta.ctypes.data
        if size == 0:
            def runner(inputs, out):
                return empty(shape, out_dtype) if out is None else out
        elif n_in == 2:
            run2 = drivers.run2

            def runner(inputs, out):
                if out is None:
                    out = empty(shape, out_dtype)
                a, b = inputs
                return None if run2(a, b, out, mp) else out
        else:
            run = drivers.run1 if n_in == 1 else drivers.run3

            def runner(inputs, out):
                if out is None:
                    out = empty(shape, out_dtype)
                if size and run(*inputs, out, mp):
                    return None
                return out
        runner.keep = (meta, spec)  # the arrays and compiled code at the addresses the runner uses
        if size:  # the same call for the compiled hot path (compiled_calls)
            runner.native = compiled_calls.Native(int(meta[H_DRIVER]), int(meta[H_ROW]), mp, allocate=_allocator(empty))
        return runner


def _cast_runner(p, out_dtype):
    """``cast``'s runner: NumPy's own conversion (``casting='unsafe'``, as the reference computes it),
    without the general path; an ``out=`` sharing memory with the input takes the general path."""
    shape = p.out_shape
    empty = host_pool.empty_for(shape, out_dtype)

    def runner(inputs, out):
        (x,) = inputs
        if out is None:
            out = empty(shape, out_dtype)
        elif np.may_share_memory(x, out):
            return None
        np.copyto(out, x, casting="unsafe")
        return out
    runner.native = compiled_calls.Native(0, 0, 0, allocate=_allocator(empty))   # driver 0: NumPy's cast
    return runner


def _threads_usable() -> bool:
    """More than one thread, and not a forked child of a process whose OpenMP threads started."""
    return not _FORKED_FROM_OMP and numba.get_num_threads() > 1


def _allocator(empty):
    """A runner's output allocator as ``compiled_calls.Native`` takes it: None for NumPy's own."""
    return None if empty is np.empty else empty


def _native(row, meta, parallel: bool, variadic: bool, empty):
    """A runner's description to ``compiled_calls``: the serial driver of many operands, or the walk on
    the thread pool (None where there is no pool: that runner stays Python's); new outputs from ``empty``."""
    if not parallel:
        return compiled_calls.Native(drivers.driver_n_address(), row, meta.ctypes.data, variadic,
                                     allocate=_allocator(empty))
    if not pool.available():
        return None
    return pool.native(row, meta, numba.get_num_threads())._replace(allocate=_allocator(empty))


def _drive_parallel(row, addrs, meta):
    """The parallel walk of ``meta`` over operands at ``addrs`` (inputs, then the output): on the thread
    pool, else Numba's parallel driver (no compiled module)."""
    ptrs = np.array(addrs, np.int64)
    st = pool.run(row, ptrs.ctypes.data, meta, numba.get_num_threads())
    if st is None:
        return drivers.drive_parallel(row, *addrs, *[0] * (4 - len(addrs)), meta, numba.get_num_threads())
    return st


def _drive_parallel_n(row, ptrs, meta):
    """``_drive_parallel`` over the operand addresses in the int64 array ``ptrs``."""
    st = pool.run(row, ptrs.ctypes.data, meta, numba.get_num_threads())
    if st is None:
        return drivers.drive_n_parallel(row, ptrs, meta, numba.get_num_threads())
    return st


def _after_fork_in_child() -> None:
    global _FORKED_FROM_OMP
    if threading_layer.started() == "omp":  # started: the parent may have run a parallel region
        _FORKED_FROM_OMP = True


if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_after_fork_in_child)


def run(spec: Spec, meta, addrs, size):
    """Run ``spec``'s row function over the operands at ``addrs`` (inputs, then the output),
    staging misaligned or overlapping operands through aligned copies of the bytes they touch."""
    parallel = spec.parallel(size)
    st = _drive(spec, meta, addrs, parallel)
    if not st:
        return
    addrs = list(addrs)
    sizes = unit_sizes(meta)
    staged = []  # the buffers behind the staged addresses
    out = len(addrs) - 1
    for k in range(out):
        buf, addrs[k] = _stage(meta, k, addrs[k], sizes[k])
        staged.append(buf)
    dst = addrs[out]
    misaligned_out = dst % np.dtype(spec.raws[out]).alignment
    if misaligned_out:
        buf, addrs[out] = _stage(meta, out, dst, sizes[out])
        staged.append(buf)
    st = _drive(spec, meta, addrs, parallel)
    if st:
        raise RuntimeError(f"numba backend: operands still rejected after staging (status {st})")
    if misaligned_out:
        lo, hi = extent(meta, out)
        ctypes.memmove(dst + lo * sizes[out], addrs[out] + lo * sizes[out], (hi - lo) * sizes[out])


def _drive(spec, meta, addrs, parallel):
    row = spec.row_for(meta)
    if spec.kind in ("variadic", "fused"):
        ptrs = np.array(addrs, dtype=np.int64)
        if parallel:
            return _drive_parallel_n(row, ptrs, meta)
        return drivers.drive_n(row, ptrs, meta)
    if parallel:
        return _drive_parallel(row, list(addrs), meta)
    return drivers.drive(row, *addrs, *[0] * (4 - len(addrs)), meta)


def _stage(meta, k, addr, itemsize):
    """An aligned copy of the bytes operand ``k`` touches: (buffer, address to use instead)."""
    lo, hi = extent(meta, k)
    buf = np.empty((hi - lo) * itemsize + 16, dtype=np.uint8)
    base = buf.ctypes.data
    base += (-base) % 16
    ctypes.memmove(base, addr + lo * itemsize, (hi - lo) * itemsize)
    return buf, base - lo * itemsize
