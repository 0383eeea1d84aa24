"""Drivers: walk the work items of a plan and call a row function on each, through its address.

A *driver* (``drive``/``drive_parallel``, ``drive_n``/``drive_n_parallel``; compiled once for all
ops) walks the work items of a plan and calls the row function (``rows``) through its address; the
parallel drivers run one chunk of items per thread under ``prange``.  Splitting the two keeps compile
time per (op, dtype) small: only the row function is specialised.  The walk itself is one C callable,
the *chunk runner* (``chunk_address``, its address in meta), which every driver calls: compiled once,
not once inlined into each driver (a cold cache compiled the drivers in 20 s, most of it this walk);
a plan with no transposed input and no streamed output gets the plain runner, the walk without
those two paths (a first call on a fresh cache compiles that in a fraction of the time).
*Launchers* (``launch1``.., ``address``, ``addresses``) give the data addresses of arrays and the
output's writability; ``run1``..``run3`` run the serial driver whose address ``meta`` holds, from
Python in one call.

Transposed inputs: an input whose elements along the row are far apart but close from row to row
(e.g. ``a.T``) has each slab (at most TILE_BYTES) copied into scratch in row order first - read
along its own contiguous dim - and the row function reads that copy with unit stride.

Streaming: with ``NON_TEMPORAL`` in meta's flags, the drivers have contiguous output rows computed
into a scratch block (the row function sees the block as its output) and copied out with
non-temporal stores: no read-for-ownership of output lines that will not stay in cache.

Driver contract: operands are data addresses plus ``meta``, an int64 array built by
``meta.iteration_meta`` from a plan (its layout: ``meta``).  Work item q is the slab (outer index
q // (mb*nb), row block (q // nb) % mb, column block q % nb); chunk ``c`` of ``C`` runs items
[c*items/C, (c+1)*items/C).  A driver first checks the operands: it returns ``ST_MISALIGNED`` or
``ST_OVERLAP`` (an input partially overlapping the output) without computing anything, else 0.

Assumptions: offsets fit int64; the output is writable (the launchers report it).  Loads and
stores go through raw pointers (``memory``), without bounds or negative-index checks.
"""

from __future__ import annotations

import numpy as np
from numba import literal_unroll, prange, types

from .cache import JIT, cfunc, njit, overload, register_jitable
from .memory import (ACC, I64, SCRATCH, SCRATCH_SLOTS, U8, U16, U32, U64, call_chunk, call_driver, call_row, load,
                     nt_copy, nt_first, stack_i64, store, store_fence)
from .meta import (H_CHUNK, H_DRIVER, H_FLAGS, H_ITEMS, H_M, H_MB, H_N, H_NB, H_ND, H_NOPS, H_R2, H_ROW, H_TB,
                   H_TRANSPOSED, HEADER, NON_TEMPORAL)

#: rows shorter than this many bytes are written with plain stores even under NON_TEMPORAL
NT_ROW_BYTES = 1024


# --- launchers: data addresses and the output's writability (one tiny function per array types) ---

ST_MISALIGNED, ST_OVERLAP, ST_READONLY, ST_TOO_MANY = 1, 2, 4, 8


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


def _chunk_walk(full: bool):
    """The walk of a chunk: run items [c*items/nchunks, (c+1)*items/nchunks) through ``row``;
    ``work``: the address of 10 * nops + nd int64 slots.  ``full``: with its two special paths, a
    transposed input's slabs staged (meta's H_TRANSPOSED) and output rows streamed (NON_TEMPORAL);
    without them (Numba prunes the branches on the constant ``full``) it compiles in a fraction of
    the time and runs every plan that needs neither (``meta.iteration_meta`` picks the runner)."""
    @register_jitable
    def run_chunk(row, c, nchunks, pp, mp, work, scratch):
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
        for _ in range(q0, q1):
            j0, i0 = blk * tb, rb * m
            for k in range(nops):
                o = load(off, k, I64) + j0 * load(strides, k, I64) + i0 * load(strides, nops + k, I64)
                store(offs, k, o, I64)
            w, h = min(tb, n - j0), min(m, r2 - i0)
            ip, io, ist = pp, offs, strides
            if full and tk >= 0:  # stage the transposed input's slab: rows of w elements in ``tile``
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
            if full and nt and (w * osz >= NT_ROW_BYTES or (packed and w * h * osz >= NT_ROW_BYTES)):
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
        if full and nt:
            store_fence()
    return run_chunk


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


_run_chunk, _run_chunk_plain = _chunk_walk(True), _chunk_walk(False)


def _chunk_runner(row, c, nchunks, pp, mp, work, scratch):
    _run_chunk(row, c, nchunks, pp, mp, work, scratch)


def _plain_chunk_runner(row, c, nchunks, pp, mp, work, scratch):
    _run_chunk_plain(row, c, nchunks, pp, mp, work, scratch)


_CHUNK: dict = {}


def chunk_address(full: bool = True) -> int:
    """Address of a chunk runner as a C callable ``void(row, c, nchunks, pp, meta address, work,
    scratch)`` (compiled on first use), for meta[H_CHUNK]: ``_chunk_walk(full)``'s."""
    if full not in _CHUNK:
        fn = _chunk_runner if full else _plain_chunk_runner
        made = cfunc(types.void(*(types.int64,) * 7), fn, f"{__name__}.{fn.__name__}", **JIT)
        _CHUNK.setdefault(full, made)   # threads racing here: the first one's stays (its address is in use)
    return _CHUNK[full].address


@register_jitable
def _chunk(row, c, nchunks, pp, mp, work, scratch):
    """``_run_chunk`` through the chunk runner whose address meta holds."""
    call_chunk(load(mp, H_CHUNK, I64), row, np.int64(c), np.int64(nchunks), pp, mp, work, scratch)


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
    _chunk(row, 0, 1, pp, mp, stack_i64(WORK_SLOTS), stack_i64(SCRATCH_SLOTS))
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


#: operands (inputs and the output) the C-callable serial driver of many operands takes
MAX_SERIAL_N = 17
WORK_SLOTS_N = 10 * MAX_SERIAL_N + 72


def _serial_n_driver(row, pp, mp):
    """Serial driver over the operand addresses at ``pp`` (inputs, then the output)."""
    if _m(mp, H_NOPS) > MAX_SERIAL_N:
        return ST_TOO_MANY
    st = check(mp, pp)
    if st:
        return st
    _chunk(row, 0, 1, pp, mp, stack_i64(WORK_SLOTS_N), stack_i64(SCRATCH_SLOTS))
    return 0


_DRIVER_N = []
_CHECK = []


def _check_operands(mp, pp):
    return check(mp, pp)


def check_address() -> int:
    """Address of ``check`` as a C callable ``int64(meta address, operand addresses' address)`` (compiled
    on first use), for the thread pool's parallel walks (``pool``)."""
    if not _CHECK:
        _CHECK.append(cfunc(types.int64(types.int64, types.int64), _check_operands, f"{__name__}._check_operands",
                            **JIT))
    return _CHECK[0].address


def driver_n_address() -> int:
    """Address of the serial driver of up to ``MAX_SERIAL_N`` operands as a C callable
    ``int64(row, operand addresses' address, meta address)`` (compiled on first use)."""
    if not _DRIVER_N:
        _DRIVER_N.append(cfunc(types.int64(*(types.int64,) * 3), _serial_n_driver,
                               f"{__name__}._serial_n_driver", **JIT))
    return _DRIVER_N[0].address


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
        _chunk(row, c, nchunks, pp, mp, stack_i64(WORK_SLOTS), stack_i64(SCRATCH_SLOTS))
    return 0


@njit(**JIT)
def drive_n(row, ptrs, meta):
    """Serial driver over ``ptrs`` (N input addresses, then the output's)."""
    mp, pp = np.int64(meta.ctypes.data), np.int64(ptrs.ctypes.data)
    st = check(mp, pp)
    if st:
        return st
    work = np.empty(10 * meta[H_NOPS] + meta[H_ND], np.int64)
    _chunk(row, 0, 1, pp, mp, np.int64(work.ctypes.data), stack_i64(SCRATCH_SLOTS))
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
        _chunk(row, c, nchunks, pp, mp, np.int64(work.ctypes.data), stack_i64(SCRATCH_SLOTS))
    return 0
