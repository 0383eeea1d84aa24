"""The ``meta`` array: how the drivers walk an output, written by ``iteration_meta`` from a plan.

For each (plan, spec layout) it says how to walk the output: dims in the output's memory order, 2-D
slabs (several short rows per call, or tiles when an input is transposed, staged tile by tile),
enough slabs for every thread, and non-temporal stores for outputs larger than the cache.  Layout
(int64):

    meta[0:15] nd (>= 2), nops, n (inner extent), tb (slab columns), nb (column blocks),
               r2 (extent of dim nd-2), m (slab rows), mb (row blocks), outer (product of the
               extents of dims 0..nd-3), items (outer * mb * nb), flags (NON_TEMPORAL), the addresses
               of the row function and of the serial driver (for ``run1``..``run3``; else 0),
               transposed (1 + the input whose slabs are staged transposed, or 0), the address of
               the chunk runner (``drivers.chunk_address``, which every driver calls; written by the
               backend, ``full_walk`` says which)
    meta[15:15+nd]                       extents in iteration order (the inner dim last)
    then per operand k, nd strides       element strides of operand k (the output is the last)
    then per operand k: lo_k, hi_k       element offset range it touches (for overlap checks)
    then per operand k: same_k           1 if it walks memory exactly like the output (which has no
                                         internal overlap): in place, element for element
    then per operand k: align_k          required address alignment in bytes
    then per operand k: size_k           item size in bytes
"""

from __future__ import annotations

import math

import numpy as np

from ...plan import coalesce
from .memory import TILE_BYTES
from .rows import short_rows

#: meta's header: its length, then the index of each field
HEADER = 15
(H_ND, H_NOPS, H_N, H_TB, H_NB, H_R2, H_M, H_MB, H_OUTER, H_ITEMS, H_FLAGS, H_ROW, H_DRIVER,
 H_TRANSPOSED, H_CHUNK) = range(HEADER)

#: flag of meta[H_FLAGS]: write the output with non-temporal (streaming) stores, through ``scratch``
NON_TEMPORAL = 1
#: flag of meta[H_FLAGS]: its slabs are of short rows (``rows.short_rows``), decided once per walk
SHORT_ROWS = 2

#: slab columns (and at most rows) when an input is transposed: its slabs are staged in rows
TILE = 256
#: elements a slab of rows gathers (rows of the second-innermost dim; a longer row is a slab of its
#: own): each slab is one call of the row function, and a call costs about 100 ns besides its rows
#: (measured on the 2-core VM, float32 (2048, 2048) + (2048,) into out=, 2 threads: 0.212-0.227 ns an
#: element at 2048, 0.181-0.198 at 32 K; (1024, 1024): 0.076-0.077 against 0.060-0.064)
SLAB = 1 << 15
#: slabs are split until there are this many work items (for the threads)
MIN_ITEMS = 16
#: narrowest slab a long row is split into
MIN_SEGMENT = 4096


def _last_level_cache() -> int:
    try:
        with open("/sys/devices/system/cpu/cpu0/cache/index3/size") as f:
            text = f.read().strip().upper()
        scale = {"K": 1 << 10, "M": 1 << 20, "G": 1 << 30}.get(text[-1], 1)
        return int(text.rstrip("KMG")) * scale
    except (OSError, ValueError):
        return 32 << 20


#: outputs of at least this many bytes are written with non-temporal stores: twice the last-level
#: cache (measured on the 2-core VM, 32 MiB L3, float32 add and tanh with three input sets rotated:
#: at 16 and 32 MiB outputs regular stores were 10-20 % faster than streaming ones; at 64 MiB on
#: par, within noise)
NON_TEMPORAL_MIN = max(4 << 20, 2 * _last_level_cache())


def iteration_meta(p, spec, parallel: bool) -> np.ndarray:
    """The int64 ``meta`` array of the drivers for plan ``p`` run with ``spec`` (a ``backend.Spec``);
    ``parallel``: the output runs on every thread, so it is split into enough work items for them."""
    shape = list(p.coalesced_shape)
    sets = [list(s) for s in p.coalesced_strides] + [list(p.coalesced_out_strides)]
    if spec.factor > 1:  # element bytes as an innermost dim of raw units (data operands only)
        f = spec.factor
        first = 1 if spec.kind == "where" else 0
        for k, s in enumerate(sets):
            scale = f if k >= first else 1
            s[:] = [x * scale for x in s] + [1 if k >= first else 0]
        shape.append(f)
    # dims in the output's memory order (outermost = largest |stride|), then re-coalesce
    order = sorted(range(len(shape)), key=lambda d: -abs(sets[-1][d]))
    shape = [shape[d] for d in order]
    sets = [[s[d] for d in order] for s in sets]
    cshape, cin, cout = coalesce(tuple(shape), tuple(tuple(s) for s in sets[:-1]), tuple(sets[-1]))
    shape, sets = list(cshape), [list(s) for s in cin] + [list(cout)]
    if len(shape) == 1:  # slabs are 2-D: a leading dim of 1
        shape, sets = [1] + shape, [[0] + s for s in sets]
    nd, nops = len(shape), len(sets)
    tiled = -1
    if abs(sets[-1][-1]) <= 1:
        for k, s in enumerate(sets[:-1]):
            inner = abs(s[-1])
            if inner <= 1:
                continue
            d = min((d for d in range(nd - 1) if s[d] != 0), key=lambda d: abs(s[d]), default=None)
            if d is not None and abs(s[d]) < inner:  # transposed: tiles staged along its rows
                move = [x for x in range(nd - 1) if x != d] + [d, nd - 1]
                shape = [shape[x] for x in move]
                sets = [[t[x] for x in move] for t in sets]
                tiled = k
                break
    n, r2, outer = shape[-1], shape[-2], math.prod(shape[:-2])
    if tiled >= 0:
        tb = min(TILE, n)
        m = max(1, min(r2, TILE, TILE_BYTES // (tb * spec.itemsizes[tiled])))
    else:
        tb, m = n, min(r2, max(1, -(-SLAB // n)))

    def items():
        return outer * -(-r2 // m) * -(-n // tb)
    while parallel and items() < MIN_ITEMS and (m > 1 or tb >= 2 * MIN_SEGMENT):
        if m > 1:
            m = -(-m // 2)
        else:
            half = -(-tb // 2)
            tb = -(-half // 64) * 64          # half the segment, rounded up to 64 elements
    nb, mb = -(-n // tb), -(-r2 // m)
    flags = NON_TEMPORAL if p.size * spec.itemsizes[-1] * spec.factor >= NON_TEMPORAL_MIN else 0
    flags |= SHORT_ROWS if short_rows(n, m) else 0
    head = [nd, nops, n, tb, nb, r2, m, mb, outer, outer * mb * nb, flags, 0, 0, tiled + 1, 0]
    ext, same, align = [], [], []
    unit = list(spec.itemsizes)  # of the raw types: strides are in raw units
    for k, s in enumerate(sets):
        lo = sum(min(0, (e - 1) * x) for e, x in zip(shape, s))
        hi = sum(max(0, (e - 1) * x) for e, x in zip(shape, s)) + 1
        ext += [lo, hi]
        same.append(int(s == sets[-1] and unit[k] == unit[-1] and not p.out_overlaps_itself))
        align.append(np.dtype(spec.raws[k]).alignment)
    flat = head + shape + [x for s in sets for x in s] + ext + same + align + unit
    return np.array(flat, dtype=np.int64)


def full_walk(meta) -> bool:
    """Whether the walk of ``meta`` needs the chunk runner with its two special paths (an input staged
    transposed, an output streamed); the plain one otherwise (``drivers.chunk_address``, which the
    backend writes into ``meta[H_CHUNK]``)."""
    return bool(meta[H_TRANSPOSED] or meta[H_FLAGS] & NON_TEMPORAL)


def _layout(meta):
    nd, nops = int(meta[H_ND]), int(meta[H_NOPS])
    return HEADER + nd + nops * nd, nops


def extent(meta, k):
    """(lo, hi): the element offsets operand ``k`` touches."""
    ext, _ = _layout(meta)
    return int(meta[ext + 2 * k]), int(meta[ext + 2 * k + 1])


def unit_sizes(meta):
    """The item size in bytes of every operand."""
    ext, nops = _layout(meta)
    return [int(x) for x in meta[ext + 4 * nops: ext + 5 * nops]]
