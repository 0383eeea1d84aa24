"""Numba kernels: generic drivers plus one small compiled row function per (op, raw types).

A *row function* is a C-callable (``numba.cfunc``) that computes one segment of the output along
the innermost dim.  It is generated from an op's scalar function (``numba_scalar``) by one factory
per op kind: ``binary_row`` (two inputs), ``where_row`` (condition + two values), ``variadic_row``
(N inputs folded into an accumulator, one pass over the output) and ``move_row`` (data movement by
element size).  Row functions have specialised loops for unit-stride and broadcast (stride 0)
operands, which LLVM vectorises, and one strided loop.

A *driver* (``drive``/``drive_parallel``, ``drive_n``/``drive_n_parallel``; compiled once for all
ops) walks the work items of a plan and calls the row function through its address; the parallel
drivers run one chunk of items per thread under ``prange``.  Splitting the two keeps compile time
per (op, dtype) small: only the row function is specialised.

Row function contract: ``row(ptrs, offs, strides, nops, n, scratch)``, all int64; ``ptrs``,
``offs`` and ``strides`` are addresses of int64 arrays holding, per operand (inputs, then the
output), its data address, the element offset of the segment's first element and its element
stride along the segment; ``n`` elements; ``scratch`` is the address of ``SCRATCH`` bytes.

Driver contract: operands are data addresses plus ``meta``, an int64 array built by
``numba_cpu.iteration_meta`` from a plan:

    meta[0:8]  nd, nops, n (inner extent), tb (segment length), nb (segments per row),
               tiled (0: rows outer, segments inner; 1: segments outer, rows inner - the tiled
               order for an operand that is transposed), rows (product of outer extents), items
    meta[8:8+nd]                         extents in iteration order (the inner dim last)
    meta[8+nd+k*nd : 8+nd+(k+1)*nd]      element strides of operand k (the output is the last)
    then per operand k: lo_k, hi_k       element offset range it touches (for overlap checks)
    then per operand k: same_k           1 if it walks memory exactly like the output
    then per operand k: align_k          required address alignment in bytes
    then per operand k: size_k           item size in bytes

A work item is one segment of at most ``tb`` elements of a row; chunk ``c`` of ``C`` runs items
[c*items/C, (c+1)*items/C).  A driver first checks the operands: it returns ``ST_MISALIGNED`` or
``ST_OVERLAP`` (an input partially overlapping the output) without computing anything, else 0.

Assumptions: offsets fit int64; the output is writable (the launchers report it).  Loads and
stores go through raw pointers, without bounds or negative-index checks.
"""

from __future__ import annotations

import hashlib
import os

import numpy as np
from llvmlite import ir
from numba import cfunc, get_num_threads, njit, prange, types
from numba.extending import intrinsic, overload, register_jitable

HEADER = 8
H_ND, H_NOPS, H_N, H_TB, H_NB, H_TILED, H_ROWS, H_ITEMS = range(HEADER)

#: options of every compiled function
JIT = dict(cache=True, nogil=True, error_model="numpy", boundscheck=False)

#: elements per accumulator segment of the variadic rows; SCRATCH bytes hold ACC of any raw type
ACC = 1024
SCRATCH = ACC * 16

ST_MISALIGNED, ST_OVERLAP = 1, 2

ROW_SIGNATURE = types.void(*(types.int64,) * 6)


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
def call_row(typingctx, fn, ptrs, offs, strides, nops, n, scratch):
    """Call the row function at address ``fn``."""
    sig = types.void(fn, ptrs, offs, strides, nops, n, scratch)

    def codegen(context, builder, signature, args):
        i64 = ir.IntType(64)
        fnty = ir.FunctionType(ir.VoidType(), [i64] * 6)
        builder.call(builder.inttoptr(args[0], fnty.as_pointer()), args[1:])
        return context.get_dummy_value()
    return sig, codegen


I64 = np.int64


# --- launchers: data addresses and the output's writability (one tiny function per array types) ---

def _writable(a):
    raise NotImplementedError


@overload(_writable)
def _ov_writable(a):
    w = bool(getattr(a, "mutable", True))
    return lambda a: w


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
def address(a):
    return a.ctypes.data, _writable(a)


# --- drivers ---------------------------------------------------------------------------------------

@register_jitable
def _stride(meta, k, d):
    nd = meta[H_ND]
    return meta[HEADER + nd + k * nd + d]


@register_jitable
def check(meta, ptrs):
    """ST_MISALIGNED if an operand is misaligned, ST_OVERLAP if an input partially overlaps the
    output, else 0."""
    nd, nops = meta[H_ND], meta[H_NOPS]
    ext = HEADER + nd + nops * nd
    out = nops - 1
    po, osize = ptrs[out], meta[ext + 4 * nops + out]
    olo, ohi = po + meta[ext + 2 * out] * osize, po + meta[ext + 2 * out + 1] * osize
    st = 0
    for k in range(nops):
        p = ptrs[k]
        if p % meta[ext + 3 * nops + k] != 0:
            st |= ST_MISALIGNED
        if k < out:
            size = meta[ext + 4 * nops + k]
            lo, hi = p + meta[ext + 2 * k] * size, p + meta[ext + 2 * k + 1] * size
            if lo < ohi and olo < hi and not (p == po and meta[ext + 2 * nops + k] == 1):
                st |= ST_OVERLAP
    return st


@register_jitable
def _start(meta, q, idx, off):
    """Decompose item ``q`` into (row, segment); fill the outer index and operand offsets."""
    nd, nops = meta[H_ND], meta[H_NOPS]
    if meta[H_TILED]:
        blk, r = q // meta[H_ROWS], q % meta[H_ROWS]
    else:
        r, blk = q // meta[H_NB], q % meta[H_NB]
    for k in range(nops):
        off[k] = 0
    rem = r
    for d in range(nd - 2, -1, -1):
        ext = meta[HEADER + d]
        i = rem % ext
        rem //= ext
        idx[d] = i
        for k in range(nops):
            off[k] += i * _stride(meta, k, d)
    return r, blk


@register_jitable
def _next_row(meta, idx, off):
    nd, nops = meta[H_ND], meta[H_NOPS]
    d = nd - 2
    while d >= 0:
        idx[d] += 1
        for k in range(nops):
            off[k] += _stride(meta, k, d)
        if idx[d] < meta[HEADER + d]:
            return
        ext = meta[HEADER + d]
        for k in range(nops):
            off[k] -= ext * _stride(meta, k, d)
        idx[d] = 0
        d -= 1


@register_jitable
def _advance(meta, r, blk, idx, off):
    """The item after (row ``r``, segment ``blk``)."""
    if meta[H_TILED]:
        r += 1
        if r == meta[H_ROWS]:
            r = 0
            blk += 1
            for d in range(meta[H_ND] - 1):
                idx[d] = 0
            for k in range(meta[H_NOPS]):
                off[k] = 0
        else:
            _next_row(meta, idx, off)
    else:
        blk += 1
        if blk == meta[H_NB]:
            blk = 0
            r += 1
            _next_row(meta, idx, off)
    return r, blk


@register_jitable
def _run_chunk(row, c, nchunks, ptrs, meta, scratch):
    """Run items [c*items/nchunks, (c+1)*items/nchunks) through ``row``."""
    items = meta[H_ITEMS]
    q0, q1 = c * items // nchunks, (c + 1) * items // nchunks
    if q0 >= q1:
        return
    nd, nops, n, tb = meta[H_ND], meta[H_NOPS], meta[H_N], meta[H_TB]
    work = np.empty(3 * nops + nd, np.int64)
    offs, inner, off, idx = work[:nops], work[nops:2 * nops], work[2 * nops:3 * nops], work[3 * nops:]
    for k in range(nops):
        inner[k] = _stride(meta, k, nd - 1)
    r, blk = _start(meta, q0, idx, off)
    pp, po, pi, ps = ptrs.ctypes.data, offs.ctypes.data, inner.ctypes.data, scratch.ctypes.data
    for q in range(q0, q1):
        j0 = blk * tb
        for k in range(nops):
            offs[k] = off[k] + j0 * inner[k]
        call_row(row, pp, po, pi, nops, min(tb, n - j0), ps)
        r, blk = _advance(meta, r, blk, idx, off)


@register_jitable
def _nchunks(meta):
    return max(1, min(meta[H_ITEMS], get_num_threads()))


@njit(**JIT)
def drive(row, p0, p1, p2, p3, meta, scratch_bytes):
    """Serial driver over up to three inputs (addresses p0.., the output's last among p0..p3)."""
    ptrs = np.empty(4, np.int64)
    ptrs[0], ptrs[1], ptrs[2], ptrs[3] = p0, p1, p2, p3
    st = check(meta, ptrs)
    if st:
        return st
    _run_chunk(row, 0, 1, ptrs, meta, np.empty(scratch_bytes, np.uint8))
    return 0


@njit(parallel=True, **JIT)
def drive_parallel(row, p0, p1, p2, p3, meta, scratch_bytes):
    """``drive`` with one chunk of work items per thread."""
    ptrs = np.empty(4, np.int64)
    ptrs[0], ptrs[1], ptrs[2], ptrs[3] = p0, p1, p2, p3
    st = check(meta, ptrs)
    if st:
        return st
    nchunks = _nchunks(meta)
    for c in prange(nchunks):
        _run_chunk(row, c, nchunks, ptrs, meta, np.empty(scratch_bytes, np.uint8))
    return 0


@njit(**JIT)
def drive_n(row, ptrs, meta, scratch_bytes):
    """Serial driver over ``ptrs`` (N input addresses, then the output's)."""
    st = check(meta, ptrs)
    if st:
        return st
    _run_chunk(row, 0, 1, ptrs, meta, np.empty(scratch_bytes, np.uint8))
    return 0


@njit(parallel=True, **JIT)
def drive_n_parallel(row, ptrs, meta, scratch_bytes):
    st = check(meta, ptrs)
    if st:
        return st
    nchunks = _nchunks(meta)
    for c in prange(nchunks):
        _run_chunk(row, c, nchunks, ptrs, meta, np.empty(scratch_bytes, np.uint8))
    return 0


# --- row functions -----------------------------------------------------------------------------------

def _compile(fn):
    return cfunc(ROW_SIGNATURE, **JIT)(fn)


def binary_row(F, FY, C, TA, TB, TO):
    """Row function of scalar function ``F`` (``FY`` where the second operand is one value along
    the row) under codec ``C``: raw input types ``TA``, ``TB``, raw output type ``TO``."""
    src = SOURCE_HASH

    def row(ptrs, offs, strides, nops, n, scratch):
        src  # noqa: B018  (a closure variable: part of the cache key)
        pa, pb, po = load(ptrs, 0, I64), load(ptrs, 1, I64), load(ptrs, 2, I64)
        oa, ob, oo = load(offs, 0, I64), load(offs, 1, I64), load(offs, 2, I64)
        sa, sb, so = load(strides, 0, I64), load(strides, 1, I64), load(strides, 2, I64)
        if sb == 0:
            y = load(pb, ob, TB)
            if sa == 1 and so == 1:
                for k in range(n):
                    store(po, oo + k, FY(C, load(pa, oa + k, TA), y), TO)
            else:
                for k in range(n):
                    store(po, oo + k * so, FY(C, load(pa, oa + k * sa, TA), y), TO)
            return
        if so == 1:
            if sa == 1 and sb == 1:
                for k in range(n):
                    store(po, oo + k, F(C, load(pa, oa + k, TA), load(pb, ob + k, TB)), TO)
                return
            if sa == 0 and sb == 1:
                x = load(pa, oa, TA)
                for k in range(n):
                    store(po, oo + k, F(C, x, load(pb, ob + k, TB)), TO)
                return
        for k in range(n):
            store(po, oo + k * so, F(C, load(pa, oa + k * sa, TA), load(pb, ob + k * sb, TB)), TO)
    return _compile(row)


def where_row(TC, TV):
    """Row function of ``where``: condition raw type ``TC`` (nonzero is true), values moved as raw
    type ``TV`` (an unsigned int or complex128 of the item size)."""
    src = SOURCE_HASH

    def row(ptrs, offs, strides, nops, n, scratch):
        src  # noqa: B018
        pc, px, py, po = load(ptrs, 0, I64), load(ptrs, 1, I64), load(ptrs, 2, I64), load(ptrs, 3, I64)
        oc, ox, oy, oo = load(offs, 0, I64), load(offs, 1, I64), load(offs, 2, I64), load(offs, 3, I64)
        sc, sx = load(strides, 0, I64), load(strides, 1, I64)
        sy, so = load(strides, 2, I64), load(strides, 3, I64)
        if so == 1 and sc == 1:
            if sx == 1 and sy == 1:
                for k in range(n):
                    x, y = load(px, ox + k, TV), load(py, oy + k, TV)
                    store(po, oo + k, x if load(pc, oc + k, TC) != 0 else y, TV)
                return
            if sx == 1 and sy == 0:
                y = load(py, oy, TV)
                for k in range(n):
                    x = load(px, ox + k, TV)
                    store(po, oo + k, x if load(pc, oc + k, TC) != 0 else y, TV)
                return
            if sx == 0 and sy == 1:
                x = load(px, ox, TV)
                for k in range(n):
                    y = load(py, oy + k, TV)
                    store(po, oo + k, x if load(pc, oc + k, TC) != 0 else y, TV)
                return
            if sx == 0 and sy == 0:
                x, y = load(px, ox, TV), load(py, oy, TV)
                for k in range(n):
                    store(po, oo + k, x if load(pc, oc + k, TC) != 0 else y, TV)
                return
        for k in range(n):
            x, y = load(px, ox + k * sx, TV), load(py, oy + k * sy, TV)
            store(po, oo + k * so, x if load(pc, oc + k * sc, TC) != 0 else y, TV)
    return _compile(row)


def move_row(T):
    """Row function copying raw elements of type ``T``."""
    src = SOURCE_HASH

    def row(ptrs, offs, strides, nops, n, scratch):
        src  # noqa: B018
        px, po = load(ptrs, 0, I64), load(ptrs, 1, I64)
        ox, oo = load(offs, 0, I64), load(offs, 1, I64)
        sx, so = load(strides, 0, I64), load(strides, 1, I64)
        if so == 1:
            if sx == 1:
                for k in range(n):
                    store(po, oo + k, load(px, ox + k, T), T)
                return
            if sx == 0:
                x = load(px, ox, T)
                for k in range(n):
                    store(po, oo + k, x, T)
                return
        for k in range(n):
            store(po, oo + k * so, load(px, ox + k * sx, T), T)
    return _compile(row)


def variadic_row(STEP, FIN, C, T):
    """Row function folding N inputs of raw type ``T`` with ``STEP`` into an accumulator (in
    ``scratch``), ``FIN(acc, N)`` stored to the output: one pass over the output."""
    src = SOURCE_HASH

    def row(ptrs, offs, strides, nops, n, scratch):
        src  # noqa: B018
        count = nops - 1
        p0, s0 = load(ptrs, 0, I64), load(strides, 0, I64)
        po, so = load(ptrs, count, I64), load(strides, count, I64)
        for j in range(0, n, ACC):
            m = min(ACC, n - j)
            o0 = load(offs, 0, I64) + j * s0
            for k in range(m):
                store(scratch, k, load(p0, o0 + k * s0, T), T)
            for i in range(1, count):
                pi, si = load(ptrs, i, I64), load(strides, i, I64)
                oi = load(offs, i, I64) + j * si
                if si == 1:
                    for k in range(m):
                        store(scratch, k, STEP(C, load(scratch, k, T), load(pi, oi + k, T)), T)
                elif si == 0:
                    v = load(pi, oi, T)
                    for k in range(m):
                        store(scratch, k, STEP(C, load(scratch, k, T), v), T)
                else:
                    for k in range(m):
                        store(scratch, k, STEP(C, load(scratch, k, T), load(pi, oi + k * si, T)), T)
            oo = load(offs, count, I64) + j * so
            if so == 1:
                for k in range(m):
                    store(po, oo + k, FIN(C, load(scratch, k, T), count), T)
            else:
                for k in range(m):
                    store(po, oo + k * so, FIN(C, load(scratch, k, T), count), T)
    return _compile(row)
