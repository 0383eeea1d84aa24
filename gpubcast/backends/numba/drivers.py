"""Numba kernels: generic drivers plus one small compiled row function per (op, raw types).

A *row function* is a C-callable (``numba.cfunc``) that computes one slab of the output: ``m``
rows of ``n`` elements along the two innermost dims.  It is generated from an op's scalar function
(``scalars``) by one factory per op kind: ``unary_row``, ``binary_row`` (two inputs), ``where_row``
(condition + two values), ``variadic_row`` (N inputs folded into an accumulator, one pass over the
output); data movement is ``unary_row`` of ``scalars.move``, by element size.  Row functions have
specialised loops for unit-stride and broadcast (stride 0) operands, which LLVM vectorises, and a
strided loop.

A *driver* (``drive``/``drive_parallel``, ``drive_n``/``drive_n_parallel``; compiled once for all
ops) walks the work items of a plan and calls the row function through its address; the parallel
drivers run one chunk of items per thread under ``prange``.  Splitting the two keeps compile time
per (op, dtype) small: only the row function is specialised.

Row function contract: ``row(ptrs, offs, strides, nops, n, m, scratch)``, all int64; ``ptrs``
and ``offs`` are addresses of int64 arrays holding, per operand (inputs, then the output), its data
address and the element offset of the slab's first element; ``strides`` holds ``2 * nops`` element
strides: along the row (inner dim) for every operand, then from one row to the next; ``scratch`` is
the address of ``ACC * 16`` bytes (64-byte aligned).

Transposed inputs: an input whose elements along the row are far apart but close from row to row
(e.g. ``a.T``) has each slab (at most TILE_BYTES) copied into scratch in row order first - read
along its own contiguous dim - and the row function reads that copy with unit stride.

Streaming: with ``NON_TEMPORAL`` in meta's flags, the drivers have contiguous output rows computed
into a scratch block (the row function sees the block as its output) and copied out with
non-temporal stores: no read-for-ownership of output lines that will not stay in cache.

Driver contract: operands are data addresses plus ``meta``, an int64 array built by
``backend.iteration_meta`` from a plan:

    meta[0:14] nd (>= 2), nops, n (inner extent), tb (slab columns), nb (column blocks),
               r2 (extent of dim nd-2), m (slab rows), mb (row blocks), outer (product of the
               extents of dims 0..nd-3), items (outer * mb * nb), flags (NON_TEMPORAL), the addresses
               of the row function and of the serial driver (for ``run1``..``run3``; else 0),
               transposed (1 + the input whose slabs are staged transposed, or 0)
    meta[14:14+nd]                       extents in iteration order (the inner dim last)
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

import platform

import numpy as np
from llvmlite import ir
from numba import literal_unroll, prange, types
from numba.extending import intrinsic, overload, register_jitable

from .cache import cfunc, njit

HEADER = 14
(H_ND, H_NOPS, H_N, H_TB, H_NB, H_R2, H_M, H_MB, H_OUTER, H_ITEMS, H_FLAGS, H_ROW, H_DRIVER,
 H_TRANSPOSED) = range(HEADER)

#: options of every compiled function (cached by ``cache``, not by Numba's ``cache=True``)
JIT = dict(nogil=True, error_model="numpy", boundscheck=False)

#: elements per accumulator segment of the variadic rows; SCRATCH bytes hold ACC of any raw type
ACC = 1024
#: bytes of a staged tile of a transposed input
TILE_BYTES = ACC * 16
#: a row function's scratch, an output block (+ room to place it at its destination's offset in a
#: cache line), a staged tile
SCRATCH = 2 * (ACC * 16 + 64) + TILE_BYTES
SCRATCH_SLOTS = SCRATCH // 8

ROW_SIGNATURE = types.void(*(types.int64,) * 7)

#: row flag: write the output with non-temporal (streaming) stores, through ``scratch``
NON_TEMPORAL = 1
#: rows shorter than this many bytes are written with plain stores even under NON_TEMPORAL
NT_ROW_BYTES = 1024


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
U8, U16, U32, U64 = np.uint8, np.uint16, np.uint32, np.uint64


def _nt_store32(src_align):
    def impl(typingctx, dst, src):
        def codegen(context, builder, sig, args):
            vt = ir.VectorType(ir.IntType(32), 8)
            v = builder.load(builder.inttoptr(args[1], vt.as_pointer()), align=src_align)
            st = builder.store(v, builder.inttoptr(args[0], vt.as_pointer()), align=32)
            st.set_metadata("nontemporal", builder.module.add_metadata([ir.Constant(ir.IntType(32), 1)]))
            return context.get_dummy_value()
        return types.void(dst, src), codegen
    return intrinsic(impl)


#: copy 32 bytes from ``src`` to ``dst`` (32-byte aligned) with a non-temporal store; ``src``
#: 32-byte aligned too / of any alignment
nt_store32, nt_store32_unaligned = _nt_store32(32), _nt_store32(1)


_X86 = platform.machine().lower() in ("x86_64", "amd64")


@intrinsic
def store_fence(typingctx):
    """Order earlier non-temporal stores before later stores (x86 ``sfence``; a sequentially
    consistent fence elsewhere)."""
    def codegen(context, builder, sig, args):
        if _X86:
            builder.call(builder.module.declare_intrinsic(
                "llvm.x86.sse.sfence", fnty=ir.FunctionType(ir.VoidType(), [])), [])
        else:
            builder.fence("seq_cst")
        return context.get_dummy_value()
    return types.void(), codegen


@register_jitable
def _copy_small(dst, src, nbytes):
    """Copy fewer than 64 bytes with plain stores, in the widest units the alignment allows."""
    i = 0
    while i < nbytes:
        a = dst + i
        if a % 8 == 0 and (src + i) % 8 == 0 and i + 8 <= nbytes:
            store(a, 0, load(src + i, 0, U64), U64)
            i += 8
        elif a % 4 == 0 and (src + i) % 4 == 0 and i + 4 <= nbytes:
            store(a, 0, load(src + i, 0, U32), U32)
            i += 4
        else:
            store(a, 0, load(src + i, 0, U8), U8)
            i += 1


@register_jitable
def nt_first(dst, osz):
    """Elements of a first block that ends on a 64-byte line of the output at ``dst`` (item size
    ``osz``), so that the later blocks of ``ACC`` elements start on line boundaries."""
    lead = ((64 - dst % 64) % 64 + osz - 1) // osz
    per_line = max(1, 64 // osz)
    return lead + max(0, (ACC - lead) // per_line) * per_line


@register_jitable
def nt_copy(dst, src, nbytes):
    """Copy ``nbytes`` from ``src`` to ``dst``, streaming the whole 64-byte cache lines past the
    caches (non-temporal stores) and the partial lines at the ends with plain stores, so that no
    line is written both ways (fastest with ``src`` at ``dst``'s offset in a 32-byte block).  The
    caller issues ``store_fence`` before the data is read by others (the drivers do, per chunk)."""
    head = min(nbytes, (64 - dst % 64) % 64)
    _copy_small(dst, src, head)
    i = head
    if (src - dst) % 32 == 0:
        while i + 64 <= nbytes:
            nt_store32(dst + i, src + i)
            nt_store32(dst + i + 32, src + i + 32)
            i += 64
    else:
        while i + 64 <= nbytes:
            nt_store32_unaligned(dst + i, src + i)
            nt_store32_unaligned(dst + i + 32, src + i + 32)
            i += 64
    _copy_small(dst + i, src + i, nbytes - i)


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
            slot.align = 64
        return builder.ptrtoint(slot, i64)
    return types.int64(n), codegen


@intrinsic
def call_driver(typingctx, fn, row, p0, p1, p2, p3, meta):
    """Call the serial driver at address ``fn`` (see ``driver_address``)."""
    sig = types.int64(fn, row, p0, p1, p2, p3, meta)

    def codegen(context, builder, signature, args):
        i64 = ir.IntType(64)
        fnty = ir.FunctionType(i64, [i64] * 6)
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
def addresses(arrays, ptrs):
    """Store the data address of each array of the tuple ``arrays`` (the output last) into ``ptrs``;
    whether the last is writable."""
    k = 0
    w = True
    for a in literal_unroll(arrays):
        ptrs[k] = a.ctypes.data
        w = _writable(a)
        k += 1
    return w


@njit(**JIT)
def run1(a, o, mp):
    """Serial run of one input, by the driver and row function whose addresses ``meta`` (at
    address ``mp``) holds: the driver's status, or ST_READONLY for a read-only output."""
    if not _writable(o):
        return ST_READONLY
    return call_driver(load(mp, H_DRIVER, I64), load(mp, H_ROW, I64), a.ctypes.data, o.ctypes.data, 0, 0, mp)


@njit(**JIT)
def run2(a, b, o, mp):
    if not _writable(o):
        return ST_READONLY
    return call_driver(load(mp, H_DRIVER, I64), load(mp, H_ROW, I64), a.ctypes.data, b.ctypes.data,
                       o.ctypes.data, 0, mp)


@njit(**JIT)
def run3(a, b, c, o, mp):
    if not _writable(o):
        return ST_READONLY
    return call_driver(load(mp, H_DRIVER, I64), load(mp, H_ROW, I64), a.ctypes.data, b.ctypes.data,
                       c.ctypes.data, o.ctypes.data, mp)


# --- drivers (``meta`` and work areas passed by address) ---------------------------------------------

#: int64 slots of a driver's work area: per operand (at most 4) offsets, 2 strides, outer offsets
#: and 6 redirect slots, then the outer index (at most 72 dims)
WORK_SLOTS = 10 * 4 + 72


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
    10 * nops + nd int64 slots."""
    items = _m(mp, H_ITEMS)
    q0, q1 = c * items // nchunks, (c + 1) * items // nchunks
    if q0 >= q1:
        return
    nd, nops, n, tb, nb = _m(mp, H_ND), _m(mp, H_NOPS), _m(mp, H_N), _m(mp, H_TB), _m(mp, H_NB)
    r2, m, mb, flags = _m(mp, H_R2), _m(mp, H_M), _m(mp, H_MB), _m(mp, H_FLAGS)
    offs, strides, off = work, work + 8 * nops, work + 24 * nops
    redirect, idx = work + 32 * nops, work + 80 * nops  # redirect: 6 * nops slots
    tk = _m(mp, H_TRANSPOSED) - 1
    tp, to, ts = redirect + 16 * nops, redirect + 24 * nops, redirect + 32 * nops  # a staged view
    tile = scratch + 2 * (ACC * 16 + 64)
    for k in range(nops):
        store(strides, k, _stride(mp, k, nd - 1), I64)
        store(strides, nops + k, _stride(mp, k, nd - 2), I64)
        store(off, k, 0, I64)
    out = nops - 1
    osz = _m(mp, HEADER + nd + nops * nd + 4 * nops + out)
    nt = (flags & NON_TEMPORAL) != 0 and load(strides, out, I64) == 1
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
        w, h = min(tb, n - j0), min(m, r2 - i0)
        ip, io, ist = pp, offs, strides
        if tk >= 0:  # stage the transposed input's slab: rows of w elements in ``tile``
            for k in range(nops):
                store(tp, k, load(pp, k, I64), I64)
                store(to, k, load(offs, k, I64), I64)
                store(ts, k, load(strides, k, I64), I64)
                store(ts, nops + k, load(strides, nops + k, I64), I64)
            isz = _m(mp, HEADER + nd + nops * nd + 4 * nops + tk)
            _stage_transposed(tile, load(pp, tk, I64) + load(offs, tk, I64) * isz, w, h,
                              load(strides, tk, I64), load(strides, nops + tk, I64), isz)
            store(tp, tk, tile, I64)
            store(to, tk, 0, I64)
            store(ts, tk, 1, I64)
            store(ts, nops + tk, w, I64)
            ip, io, ist = tp, to, ts
        packed = w == load(ist, nops + out, I64) and w <= ACC  # the slab's output is one block
        if nt and (w * osz >= NT_ROW_BYTES or (packed and w * h * osz >= NT_ROW_BYTES)):
            _streamed(row, ip, io, ist, nops, w, h, scratch, osz, redirect, packed)
        else:
            call_row(row, ip, io, ist, nops, w, h, scratch)
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
    if nt:
        store_fence()


@register_jitable
def _transpose_units(tile, src, w, h, s_in, s_row, T, k):
    """tile[(i * w + j) * k + u] = src[(j * s_in + i * s_row) * k + u] for u < k: elements of k
    units of type T, read along i."""
    for j in range(w):
        for i in range(h):
            for u in range(k):
                store(tile, (i * w + j) * k + u, load(src, (j * s_in + i * s_row) * k + u, T), T)


@register_jitable
def _stage_transposed(tile, src, w, h, s_in, s_row, isz):
    """tile[i * w + j] = src[j * s_in + i * s_row] for i < h, j < w (elements of ``isz`` bytes),
    reading ``src`` along i (its small stride)."""
    if isz == 4:
        _transpose_units(tile, src, w, h, s_in, s_row, U32, 1)
    elif isz == 8:
        _transpose_units(tile, src, w, h, s_in, s_row, U64, 1)
    elif isz == 2:
        _transpose_units(tile, src, w, h, s_in, s_row, U16, 1)
    elif isz == 1:
        _transpose_units(tile, src, w, h, s_in, s_row, U8, 1)
    else:  # 16 bytes: two 8-byte units
        _transpose_units(tile, src, w, h, s_in, s_row, U64, 2)


@register_jitable
def _streamed(row, pp, offs, strides, nops, n, m, scratch, osz, redirect, packed):
    """Run a slab with its output computed in ``scratch`` blocks of at most ACC elements and
    streamed out with ``nt_copy``: whole rows at a time if the slab's output rows follow each other
    (``packed``), else blocks of each row (the later ones starting on cache lines).  ``redirect``:
    2 * nops int64 slots for the operand addresses and offsets of a block."""
    out = nops - 1
    rp, ro = redirect, redirect + 8 * nops
    block = scratch + SCRATCH // 2  # the first half stays the row function's own scratch
    po = load(pp, out, I64)
    for k in range(out):
        store(rp, k, load(pp, k, I64), I64)
    store(ro, out, 0, I64)
    if packed:
        per = max(1, ACC // n)
        for i0 in range(0, m, per):
            h = min(per, m - i0)
            dst = po + (load(offs, out, I64) + i0 * n) * osz
            for k in range(out):
                store(ro, k, load(offs, k, I64) + i0 * load(strides, nops + k, I64), I64)
            target = block + dst % 64
            store(rp, out, target, I64)
            call_row(row, rp, ro, strides, nops, n, h, scratch)
            nt_copy(dst, target, h * n * osz)
        return
    for i in range(m):
        dst = po + (load(offs, out, I64) + i * load(strides, nops + out, I64)) * osz
        first, j = nt_first(dst, osz), 0
        while j < n:
            w = min(n - j, ACC if j else first)
            for k in range(out):
                o = load(offs, k, I64) + i * load(strides, nops + k, I64) + j * load(strides, k, I64)
                store(ro, k, o, I64)
            target = block + (dst + j * osz) % 64  # at the destination's offset in a line
            store(rp, out, target, I64)
            call_row(row, rp, ro, strides, nops, w, 1, scratch)
            nt_copy(dst + j * osz, target, w * osz)
            j += w


@register_jitable
def _serial(row, p0, p1, p2, p3, mp):
    """Serial driver over up to four operands (inputs, then the output; unused addresses 0)."""
    pp = stack_i64(4)
    store(pp, 0, p0, I64)
    store(pp, 1, p1, I64)
    store(pp, 2, p2, I64)
    store(pp, 3, p3, I64)
    st = check(mp, pp)
    if st:
        return st
    _run_chunk(row, 0, 1, pp, mp, stack_i64(WORK_SLOTS), stack_i64(SCRATCH_SLOTS))
    return 0


def _serial_driver(row, p0, p1, p2, p3, mp):
    return _serial(row, p0, p1, p2, p3, mp)


_DRIVER = []


def driver_address() -> int:
    """Address of the serial driver as a C callable ``int64(row, p0, p1, p2, p3, meta address)``
    (compiled on first use), for ``run1``/``run2``/``run3``."""
    if not _DRIVER:
        _DRIVER.append(cfunc(types.int64(*(types.int64,) * 6), _serial_driver,
                             f"{__name__}._serial_driver", **JIT))
    return _DRIVER[0].address


@njit(**JIT)
def drive(row, p0, p1, p2, p3, meta):
    """The serial driver, from Python: 0, or the status of rejected operands."""
    return _serial(row, p0, p1, p2, p3, np.int64(meta.ctypes.data))


@njit(parallel=True, **JIT)
def drive_parallel(row, p0, p1, p2, p3, meta, threads):
    """The serial driver's work split in ``threads`` chunks, one per thread."""
    pp = stack_i64(4)
    store(pp, 0, p0, I64)
    store(pp, 1, p1, I64)
    store(pp, 2, p2, I64)
    store(pp, 3, p3, I64)
    mp = np.int64(meta.ctypes.data)
    st = check(mp, pp)
    if st:
        return st
    nchunks = max(1, min(meta[H_ITEMS], threads))
    for c in prange(nchunks):
        _run_chunk(row, c, nchunks, pp, mp, stack_i64(WORK_SLOTS), stack_i64(SCRATCH_SLOTS))
    return 0


@njit(**JIT)
def drive_n(row, ptrs, meta):
    """Serial driver over ``ptrs`` (N input addresses, then the output's)."""
    mp, pp = np.int64(meta.ctypes.data), np.int64(ptrs.ctypes.data)
    st = check(mp, pp)
    if st:
        return st
    work = np.empty(10 * meta[H_NOPS] + meta[H_ND], np.int64)
    _run_chunk(row, 0, 1, pp, mp, np.int64(work.ctypes.data), stack_i64(SCRATCH_SLOTS))
    return 0


@njit(parallel=True, **JIT)
def drive_n_parallel(row, ptrs, meta, threads):
    """``drive_n`` split in ``threads`` chunks, one per thread."""
    mp, pp = np.int64(meta.ctypes.data), np.int64(ptrs.ctypes.data)
    st = check(mp, pp)
    if st:
        return st
    nchunks = max(1, min(meta[H_ITEMS], threads))
    for c in prange(nchunks):
        work = np.empty(10 * meta[H_NOPS] + meta[H_ND], np.int64)
        _run_chunk(row, c, nchunks, pp, mp, np.int64(work.ctypes.data), stack_i64(SCRATCH_SLOTS))
    return 0


# --- row functions -----------------------------------------------------------------------------------

def _compile(fn, factory, *made_from):
    """Compile row function ``fn`` made by ``factory`` from ``made_from`` (its cache identity, and
    its symbol's name: no two row functions share either)."""
    parts = [getattr(x, "__name__", None) or getattr(x, "name", None) or str(x) for x in made_from]
    identity = "-".join([factory, *parts])
    fn.__name__ = fn.__qualname__ = identity.replace("-", "_")
    return cfunc(ROW_SIGNATURE, fn, identity, **JIT)


def binary_row(F, FY, C, TA, TB, TO):
    """Row function of scalar function ``F`` (``FY`` where the second operand is one value along
    the row; ``backend.make_spec`` passes ``F`` unless it is one value over the whole call) under
    codec ``C``: raw input types ``TA``, ``TB``, raw output type ``TO``."""
    def row(ptrs, offs, strides, nops, n, m, scratch):
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
    return _compile(row, "binary_row", F, FY, C, TA, TB, TO)


def where_row(TC, TV):
    """Row function of ``where``: condition raw type ``TC`` (nonzero is true), values moved as raw
    type ``TV`` (an unsigned int or complex128 of the item size)."""
    def row(ptrs, offs, strides, nops, n, m, scratch):
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
    return _compile(row, "where_row", TC, TV)


def unary_row(F, C, TA, TO):
    """Row function of unary scalar function ``F`` under codec ``C``: raw input type ``TA``, raw
    output type ``TO``."""
    def row(ptrs, offs, strides, nops, n, m, scratch):
        px, po = load(ptrs, 0, I64), load(ptrs, 1, I64)
        sx, so = load(strides, 0, I64), load(strides, 1, I64)
        rx, ro = load(strides, 2, I64), load(strides, 3, I64)
        for i in range(m):
            ox, oo = load(offs, 0, I64) + i * rx, load(offs, 1, I64) + i * ro
            if so == 1 and sx == 1:
                for k in range(n):
                    store(po, oo + k, F(C, load(px, ox + k, TA)), TO)
            elif sx == 0:  # one value along the row
                y = F(C, load(px, ox, TA))
                for k in range(n):
                    store(po, oo + k * so, y, TO)
            else:
                for k in range(n):
                    store(po, oo + k * so, F(C, load(px, ox + k * sx, TA)), TO)
    return _compile(row, "unary_row", F, C, TA, TO)


def variadic_row(STEP, FIN, C, T):
    """Row function folding N inputs of raw type ``T`` with ``STEP`` into an accumulator (in
    ``scratch``), ``FIN(acc, N)`` stored to the output: one pass over the output."""
    def row(ptrs, offs, strides, nops, n, m, scratch):
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
    return _compile(row, "variadic_row", STEP, FIN, C, T)


def axpby_row(MUL, ADD, C, T):
    """Row function of ``axpby`` over inputs (alpha, x, beta, y): ``alpha * x + beta * y``, each
    product rounded in the raw type's codec (no FMA), like the registry's NumPy reference.
    Operands as in ``variadic_row``: 4 inputs, then the output (index 4)."""
    def row(ptrs, offs, strides, nops, n, m, scratch):
        pa, pb, pc, pd, po = (load(ptrs, 0, I64), load(ptrs, 1, I64), load(ptrs, 2, I64),
                              load(ptrs, 3, I64), load(ptrs, 4, I64))
        sa, sb, sc, sd, so = (load(strides, 0, I64), load(strides, 1, I64), load(strides, 2, I64),
                              load(strides, 3, I64), load(strides, 4, I64))
        ra, rb, rc, rd, ro = (load(strides, nops, I64), load(strides, nops + 1, I64),
                              load(strides, nops + 2, I64), load(strides, nops + 3, I64),
                              load(strides, nops + 4, I64))
        for i in range(m):
            oa = load(offs, 0, I64) + i * ra
            ob = load(offs, 1, I64) + i * rb
            oc = load(offs, 2, I64) + i * rc
            od = load(offs, 3, I64) + i * rd
            oo = load(offs, 4, I64) + i * ro
            for k in range(n):
                ax = MUL(C, load(pa, oa + k * sa, T), load(pb, ob + k * sb, T))
                by = MUL(C, load(pc, oc + k * sc, T), load(pd, od + k * sd, T))
                store(po, oo + k * so, ADD(C, ax, by), T)
    return _compile(row, "axpby_row", MUL, ADD, C, T)
