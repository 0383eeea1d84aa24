"""Numba kernels: generic drivers plus one small compiled row function per (op, raw types).

A *row function* is a C-callable (``numba.cfunc``) that computes one slab of the output: ``m``
rows of ``n`` elements along the two innermost dims.  It is generated from an op's scalar function
(``numba_scalar``) by one factory per op kind: ``binary_row`` (two inputs), ``where_row``
(condition + two values), ``variadic_row`` (N inputs folded into an accumulator, one pass over the
output) and ``move_row`` (data movement by element size).  Row functions have specialised loops
for unit-stride and broadcast (stride 0) operands, which LLVM vectorises, and a strided loop.

A *driver* (``drive``/``drive_parallel``, ``drive_n``/``drive_n_parallel``; compiled once for all
ops) walks the work items of a plan and calls the row function through its address; the parallel
drivers run one chunk of items per thread under ``prange``.  Splitting the two keeps compile time
per (op, dtype) small: only the row function is specialised.

Row function contract: ``row(ptrs, offs, strides, nops, n, m, scratch)``, all int64; ``ptrs`` and
``offs`` are addresses of int64 arrays holding, per operand (inputs, then the output), its data
address and the element offset of the slab's first element; ``strides`` holds ``2 * nops`` element
strides: along the row (inner dim) for every operand, then from one row to the next; ``scratch``
is the address of ``SCRATCH`` bytes.

Driver contract: operands are data addresses plus ``meta``, an int64 array built by
``numba_cpu.iteration_meta`` from a plan:

    meta[0:10] nd (>= 2), nops, n (inner extent), tb (slab columns), nb (column blocks),
               r2 (extent of dim nd-2), m (slab rows), mb (row blocks), outer (product of the
               extents of dims 0..nd-3), items (outer * mb * nb)
    meta[10:10+nd]                       extents in iteration order (the inner dim last)
    then per operand k, nd strides       element strides of operand k (the output is the last)
    then per operand k: lo_k, hi_k       element offset range it touches (for overlap checks)
    then per operand k: same_k           1 if it walks memory exactly like the output
    then per operand k: align_k          required address alignment in bytes
    then per operand k: size_k           item size in bytes

Work item q is the slab (outer index q // (mb*nb), row block (q // nb) % mb, column block q % nb);
chunk ``c`` of ``C`` runs items [c*items/C, (c+1)*items/C).  A driver first checks the operands: it
returns ``ST_MISALIGNED`` or ``ST_OVERLAP`` (an input partially overlapping the output) without
computing anything, else 0.

Assumptions: offsets fit int64; the output is writable (the launchers report it).  Loads and
stores go through raw pointers, without bounds or negative-index checks.
"""

from __future__ import annotations

import hashlib
import os

import numpy as np
from llvmlite import ir
from numba import cfunc, njit, prange, types
from numba.extending import intrinsic, overload, register_jitable

HEADER = 10
H_ND, H_NOPS, H_N, H_TB, H_NB, H_R2, H_M, H_MB, H_OUTER, H_ITEMS = range(HEADER)

#: options of every compiled function
JIT = dict(cache=True, nogil=True, error_model="numpy", boundscheck=False)

#: elements per accumulator segment of the variadic rows; SCRATCH bytes hold ACC of any raw type
ACC = 1024
SCRATCH = ACC * 16

ROW_SIGNATURE = types.void(*(types.int64,) * 7)


def _source_hash() -> str:
    """Hash of the Numba backend's sources: part of every row function's closure, hence of
    Numba's cache key, so an edit of the scalar semantics invalidates cached rows (Numba alone
    only watches the file that defines the function)."""
    h = hashlib.sha256()
    here = os.path.dirname(__file__)
    for name in sorted(os.listdir(here)):
        if name.startswith("numba_") and name.endswith(".py"):
            with open(os.path.join(here, name), "rb") as f:
                h.update(f.read())
    return h.hexdigest()[:16]


SOURCE_HASH = _source_hash()


# --- raw memory access -----------------------------------------------------------------------------

@intrinsic
def load(typingctx, addr, idx, cls):
    """The element ``idx`` of type ``cls`` at address ``addr`` (no checks)."""
    ty = cls.instance_type

    def codegen(context, builder, sig, args):
        lty = context.get_data_type(ty)
        ptr = builder.inttoptr(args[0], lty.as_pointer())
        val = builder.load(builder.gep(ptr, [args[1]]))
        return context.data_model_manager[ty].from_data(builder, val)
    return ty(addr, idx, cls), codegen


@intrinsic
def store(typingctx, addr, idx, val, cls):
    """Store ``val`` (cast to ``cls``) as element ``idx`` at address ``addr`` (no checks)."""
    ty = cls.instance_type

    def codegen(context, builder, sig, args):
        v = context.cast(builder, args[2], sig.args[2], ty)
        lty = context.get_data_type(ty)
        ptr = builder.inttoptr(args[0], lty.as_pointer())
        builder.store(context.data_model_manager[ty].as_data(builder, v), builder.gep(ptr, [args[1]]))
        return context.get_dummy_value()
    return types.void(addr, idx, val, cls), codegen


@intrinsic
def call_row(typingctx, fn, ptrs, offs, strides, nops, n, m, scratch):
    """Call the row function at address ``fn``."""
    sig = types.void(fn, ptrs, offs, strides, nops, n, m, scratch)

    def codegen(context, builder, signature, args):
        i64 = ir.IntType(64)
        fnty = ir.FunctionType(ir.VoidType(), [i64] * 7)
        builder.call(builder.inttoptr(args[0], fnty.as_pointer()), args[1:])
        return context.get_dummy_value()
    return sig, codegen


I64 = np.int64


@intrinsic
def stack_i64(typingctx, n):
    """Address of ``n`` (a constant) int64 slots on the calling function's stack."""
    if not isinstance(n, types.IntegerLiteral):
        return None
    count = n.literal_value

    def codegen(context, builder, sig, args):
        i64 = ir.IntType(64)
        with builder.goto_entry_block():
            slot = builder.alloca(ir.ArrayType(i64, count))
        return builder.ptrtoint(slot, i64)
    return types.int64(n), codegen


@intrinsic
def call_driver(typingctx, fn, row, p0, p1, p2, p3, meta, scratch):
    """Call the serial driver at address ``fn`` (a C callable, see ``DRIVER``)."""
    sig = types.int64(fn, row, p0, p1, p2, p3, meta, scratch)

    def codegen(context, builder, signature, args):
        i64 = ir.IntType(64)
        fnty = ir.FunctionType(i64, [i64] * 7)
        return builder.call(builder.inttoptr(args[0], fnty.as_pointer()), args[1:])
    return sig, codegen


# --- launchers: data addresses and the output's writability (one tiny function per array types) ---

ST_MISALIGNED, ST_OVERLAP, ST_READONLY = 1, 2, 4


def _writable(a):
    raise NotImplementedError


@overload(_writable)
def _ov_writable(a):
    w = bool(getattr(a, "mutable", True))
    return lambda a: w


@njit(**JIT)
def address(a):
    return a.ctypes.data, _writable(a)


@njit(**JIT)
def launch1(a, o):
    return a.ctypes.data, o.ctypes.data, _writable(o)


@njit(**JIT)
def launch2(a, b, o):
    return a.ctypes.data, b.ctypes.data, o.ctypes.data, _writable(o)


@njit(**JIT)
def launch3(a, b, c, o):
    return a.ctypes.data, b.ctypes.data, c.ctypes.data, o.ctypes.data, _writable(o)


@njit(**JIT)
def run1(a, o, row, driver, meta):
    """Serial run of one input through the driver at address ``driver``: the driver's status, or
    ST_READONLY for a read-only output."""
    if not _writable(o):
        return ST_READONLY
    return call_driver(driver, row, a.ctypes.data, o.ctypes.data, 0, 0, meta, 0)


@njit(**JIT)
def run2(a, b, o, row, driver, meta):
    if not _writable(o):
        return ST_READONLY
    return call_driver(driver, row, a.ctypes.data, b.ctypes.data, o.ctypes.data, 0, meta, 0)


@njit(**JIT)
def run3(a, b, c, o, row, driver, meta):
    if not _writable(o):
        return ST_READONLY
    return call_driver(driver, row, a.ctypes.data, b.ctypes.data, c.ctypes.data, o.ctypes.data, meta, 0)


# --- drivers (``meta`` and work areas passed by address) ---------------------------------------------

#: int64 slots of a driver's work area: per operand (at most 4) offsets, 2 strides and outer
#: offsets, then the outer index (at most 72 dims)
WORK_SLOTS = 4 * 4 + 72


@register_jitable
def _m(mp, i):
    return load(mp, i, I64)


@register_jitable
def _stride(mp, k, d):
    nd = _m(mp, H_ND)
    return _m(mp, HEADER + nd + k * nd + d)


@register_jitable
def check(mp, pp):
    """ST_MISALIGNED if an operand is misaligned, ST_OVERLAP if an input partially overlaps the
    output, else 0 (``mp``: meta, ``pp``: operand addresses, both by address)."""
    nd, nops = _m(mp, H_ND), _m(mp, H_NOPS)
    ext = HEADER + nd + nops * nd
    out = nops - 1
    po, osize = load(pp, out, I64), _m(mp, ext + 4 * nops + out)
    olo, ohi = po + _m(mp, ext + 2 * out) * osize, po + _m(mp, ext + 2 * out + 1) * osize
    st = 0
    for k in range(nops):
        p = load(pp, k, I64)
        if p % _m(mp, ext + 3 * nops + k) != 0:
            st |= ST_MISALIGNED
        if k < out:
            size = _m(mp, ext + 4 * nops + k)
            lo, hi = p + _m(mp, ext + 2 * k) * size, p + _m(mp, ext + 2 * k + 1) * size
            if lo < ohi and olo < hi and not (p == po and _m(mp, ext + 2 * nops + k) == 1):
                st |= ST_OVERLAP
    return st


@register_jitable
def _run_chunk(row, c, nchunks, pp, mp, work, scratch):
    """Run items [c*items/nchunks, (c+1)*items/nchunks) through ``row``; ``work``: the address of
    4 * nops + nd int64 slots."""
    items = _m(mp, H_ITEMS)
    q0, q1 = c * items // nchunks, (c + 1) * items // nchunks
    if q0 >= q1:
        return
    nd, nops, n, tb, nb = _m(mp, H_ND), _m(mp, H_NOPS), _m(mp, H_N), _m(mp, H_TB), _m(mp, H_NB)
    r2, m, mb = _m(mp, H_R2), _m(mp, H_M), _m(mp, H_MB)
    offs, strides, off, idx = work, work + 8 * nops, work + 24 * nops, work + 32 * nops
    for k in range(nops):
        store(strides, k, _stride(mp, k, nd - 1), I64)
        store(strides, nops + k, _stride(mp, k, nd - 2), I64)
        store(off, k, 0, I64)
    # decompose q0: outer index (dims 0..nd-3), row block, column block
    r, rb, blk = q0 // (mb * nb), (q0 // nb) % mb, q0 % nb
    rem = r
    for d in range(nd - 3, -1, -1):
        ext = _m(mp, HEADER + d)
        i = rem % ext
        rem //= ext
        store(idx, d, i, I64)
        for k in range(nops):
            store(off, k, load(off, k, I64) + i * _stride(mp, k, d), I64)
    for q in range(q0, q1):
        j0, i0 = blk * tb, rb * m
        for k in range(nops):
            o = load(off, k, I64) + j0 * load(strides, k, I64) + i0 * load(strides, nops + k, I64)
            store(offs, k, o, I64)
        call_row(row, pp, offs, strides, nops, min(tb, n - j0), min(m, r2 - i0), scratch)
        blk += 1
        if blk == nb:
            blk = 0
            rb += 1
            if rb == mb:
                rb = 0
                # step the outer index (dims 0..nd-3) by one
                d = nd - 3
                while d >= 0:
                    store(idx, d, load(idx, d, I64) + 1, I64)
                    for k in range(nops):
                        store(off, k, load(off, k, I64) + _stride(mp, k, d), I64)
                    ext = _m(mp, HEADER + d)
                    if load(idx, d, I64) < ext:
                        break
                    for k in range(nops):
                        store(off, k, load(off, k, I64) - ext * _stride(mp, k, d), I64)
                    store(idx, d, 0, I64)
                    d -= 1


@register_jitable
def _serial(row, p0, p1, p2, p3, mp, scratch):
    """Serial driver over up to four operands (inputs, then the output; unused addresses 0)."""
    pp = stack_i64(4)
    store(pp, 0, p0, I64)
    store(pp, 1, p1, I64)
    store(pp, 2, p2, I64)
    store(pp, 3, p3, I64)
    st = check(mp, pp)
    if st:
        return st
    _run_chunk(row, 0, 1, pp, mp, stack_i64(WORK_SLOTS), scratch)
    return 0


def _serial_driver(row, p0, p1, p2, p3, mp, scratch):
    return _serial(row, p0, p1, p2, p3, mp, scratch)


_DRIVER = []


def driver_address() -> int:
    """Address of the serial driver as a C callable ``int64(row, p0, p1, p2, p3, meta address,
    scratch address)`` (compiled on first use), for ``run1``/``run2``/``run3``."""
    if not _DRIVER:
        _DRIVER.append(cfunc(types.int64(*(types.int64,) * 7), **JIT)(_serial_driver))
    return _DRIVER[0].address


@njit(**JIT)
def drive(row, p0, p1, p2, p3, meta, scratch_bytes):
    """The serial driver, from Python."""
    scratch = np.empty(scratch_bytes, np.uint8)
    return _serial(row, p0, p1, p2, p3, meta.ctypes.data, scratch.ctypes.data)


@njit(parallel=True, **JIT)
def drive_parallel(row, p0, p1, p2, p3, meta, scratch_bytes, threads):
    """The serial driver's work split in ``threads`` chunks, one per thread."""
    pp = stack_i64(4)
    store(pp, 0, p0, I64)
    store(pp, 1, p1, I64)
    store(pp, 2, p2, I64)
    store(pp, 3, p3, I64)
    mp = meta.ctypes.data
    st = check(mp, pp)
    if st:
        return st
    nchunks = max(1, min(meta[H_ITEMS], threads))
    for c in prange(nchunks):
        scratch = np.empty(scratch_bytes, np.uint8)
        _run_chunk(row, c, nchunks, pp, mp, stack_i64(WORK_SLOTS), scratch.ctypes.data)
    return 0


@njit(**JIT)
def drive_n(row, ptrs, meta, scratch_bytes):
    """Serial driver over ``ptrs`` (N input addresses, then the output's)."""
    mp, pp = meta.ctypes.data, ptrs.ctypes.data
    st = check(mp, pp)
    if st:
        return st
    work = np.empty(4 * meta[H_NOPS] + meta[H_ND], np.int64)
    scratch = np.empty(scratch_bytes, np.uint8)
    _run_chunk(row, 0, 1, pp, mp, work.ctypes.data, scratch.ctypes.data)
    return 0


@njit(parallel=True, **JIT)
def drive_n_parallel(row, ptrs, meta, scratch_bytes, threads):
    """``drive_n`` split in ``threads`` chunks, one per thread."""
    mp, pp = meta.ctypes.data, ptrs.ctypes.data
    st = check(mp, pp)
    if st:
        return st
    nchunks = max(1, min(meta[H_ITEMS], threads))
    for c in prange(nchunks):
        work = np.empty(4 * meta[H_NOPS] + meta[H_ND], np.int64)
        scratch = np.empty(scratch_bytes, np.uint8)
        _run_chunk(row, c, nchunks, pp, mp, work.ctypes.data, scratch.ctypes.data)
    return 0


# --- row functions -----------------------------------------------------------------------------------

def _compile(fn):
    return cfunc(ROW_SIGNATURE, **JIT)(fn)


def binary_row(F, FY, C, TA, TB, TO):
    """Row function of scalar function ``F`` (``FY`` where the second operand is one value along
    the row) under codec ``C``: raw input types ``TA``, ``TB``, raw output type ``TO``."""
    src = SOURCE_HASH

    def row(ptrs, offs, strides, nops, n, m, scratch):
        src  # noqa: B018  (a closure variable: part of the cache key)
        pa, pb, po = load(ptrs, 0, I64), load(ptrs, 1, I64), load(ptrs, 2, I64)
        sa, sb, so = load(strides, 0, I64), load(strides, 1, I64), load(strides, 2, I64)
        ra, rb, ro = load(strides, 3, I64), load(strides, 4, I64), load(strides, 5, I64)
        for i in range(m):
            oa, ob, oo = load(offs, 0, I64) + i * ra, load(offs, 1, I64) + i * rb, load(offs, 2, I64) + i * ro
            if sb == 0:
                y = load(pb, ob, TB)
                if sa == 1 and so == 1:
                    for k in range(n):
                        store(po, oo + k, FY(C, load(pa, oa + k, TA), y), TO)
                else:
                    for k in range(n):
                        store(po, oo + k * so, FY(C, load(pa, oa + k * sa, TA), y), TO)
            elif sa == 1 and sb == 1 and so == 1:
                for k in range(n):
                    store(po, oo + k, F(C, load(pa, oa + k, TA), load(pb, ob + k, TB)), TO)
            elif sa == 0 and sb == 1 and so == 1:
                x = load(pa, oa, TA)
                for k in range(n):
                    store(po, oo + k, F(C, x, load(pb, ob + k, TB)), TO)
            else:
                for k in range(n):
                    store(po, oo + k * so, F(C, load(pa, oa + k * sa, TA), load(pb, ob + k * sb, TB)), TO)
    return _compile(row)


def where_row(TC, TV):
    """Row function of ``where``: condition raw type ``TC`` (nonzero is true), values moved as raw
    type ``TV`` (an unsigned int or complex128 of the item size)."""
    src = SOURCE_HASH

    def row(ptrs, offs, strides, nops, n, m, scratch):
        src  # noqa: B018
        pc, px, py, po = load(ptrs, 0, I64), load(ptrs, 1, I64), load(ptrs, 2, I64), load(ptrs, 3, I64)
        sc, sx = load(strides, 0, I64), load(strides, 1, I64)
        sy, so = load(strides, 2, I64), load(strides, 3, I64)
        rc, rx = load(strides, 4, I64), load(strides, 5, I64)
        ry, ro = load(strides, 6, I64), load(strides, 7, I64)
        for i in range(m):
            oc, ox = load(offs, 0, I64) + i * rc, load(offs, 1, I64) + i * rx
            oy, oo = load(offs, 2, I64) + i * ry, load(offs, 3, I64) + i * ro
            if so == 1 and sc == 1 and sx == 1 and sy == 1:
                for k in range(n):
                    x, y = load(px, ox + k, TV), load(py, oy + k, TV)
                    store(po, oo + k, x if load(pc, oc + k, TC) != 0 else y, TV)
            elif so == 1 and sc == 1 and sx == 1 and sy == 0:
                y = load(py, oy, TV)
                for k in range(n):
                    x = load(px, ox + k, TV)
                    store(po, oo + k, x if load(pc, oc + k, TC) != 0 else y, TV)
            elif so == 1 and sc == 1 and sx == 0 and sy == 1:
                x = load(px, ox, TV)
                for k in range(n):
                    y = load(py, oy + k, TV)
                    store(po, oo + k, x if load(pc, oc + k, TC) != 0 else y, TV)
            elif so == 1 and sc == 1 and sx == 0 and sy == 0:
                x, y = load(px, ox, TV), load(py, oy, TV)
                for k in range(n):
                    store(po, oo + k, x if load(pc, oc + k, TC) != 0 else y, TV)
            else:
                for k in range(n):
                    x, y = load(px, ox + k * sx, TV), load(py, oy + k * sy, TV)
                    store(po, oo + k * so, x if load(pc, oc + k * sc, TC) != 0 else y, TV)
    return _compile(row)


def move_row(T):
    """Row function copying raw elements of type ``T``."""
    src = SOURCE_HASH

    def row(ptrs, offs, strides, nops, n, m, scratch):
        src  # noqa: B018
        px, po = load(ptrs, 0, I64), load(ptrs, 1, I64)
        sx, so = load(strides, 0, I64), load(strides, 1, I64)
        rx, ro = load(strides, 2, I64), load(strides, 3, I64)
        for i in range(m):
            ox, oo = load(offs, 0, I64) + i * rx, load(offs, 1, I64) + i * ro
            if so == 1 and sx == 1:
                for k in range(n):
                    store(po, oo + k, load(px, ox + k, T), T)
            elif so == 1 and sx == 0:
                x = load(px, ox, T)
                for k in range(n):
                    store(po, oo + k, x, T)
            else:
                for k in range(n):
                    store(po, oo + k * so, load(px, ox + k * sx, T), T)
    return _compile(row)


def variadic_row(STEP, FIN, C, T):
    """Row function folding N inputs of raw type ``T`` with ``STEP`` into an accumulator (in
    ``scratch``), ``FIN(acc, N)`` stored to the output: one pass over the output."""
    src = SOURCE_HASH

    def row(ptrs, offs, strides, nops, n, m, scratch):
        src  # noqa: B018
        count = nops - 1
        p0, s0, r0 = load(ptrs, 0, I64), load(strides, 0, I64), load(strides, nops, I64)
        po, so, ro = load(ptrs, count, I64), load(strides, count, I64), load(strides, nops + count, I64)
        for i in range(m):
            for j in range(0, n, ACC):
                w = min(ACC, n - j)
                o0 = load(offs, 0, I64) + i * r0 + j * s0
                for k in range(w):
                    store(scratch, k, load(p0, o0 + k * s0, T), T)
                for a in range(1, count):
                    pa, sa = load(ptrs, a, I64), load(strides, a, I64)
                    oa = load(offs, a, I64) + i * load(strides, nops + a, I64) + j * sa
                    if sa == 1:
                        for k in range(w):
                            store(scratch, k, STEP(C, load(scratch, k, T), load(pa, oa + k, T)), T)
                    elif sa == 0:
                        v = load(pa, oa, T)
                        for k in range(w):
                            store(scratch, k, STEP(C, load(scratch, k, T), v), T)
                    else:
                        for k in range(w):
                            store(scratch, k, STEP(C, load(scratch, k, T), load(pa, oa + k * sa, T)), T)
                oo = load(offs, count, I64) + i * ro + j * so
                if so == 1:
                    for k in range(w):
                        store(po, oo + k, FIN(C, load(scratch, k, T), count), T)
                else:
                    for k in range(w):
                        store(po, oo + k * so, FIN(C, load(scratch, k, T), count), T)
    return _compile(row)
