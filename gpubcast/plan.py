"""Broadcast plans: output shape, per-operand element strides, coalesced dims.

A plan is built once per (rule, operand shapes and strides, output strides)
and cached; backends only execute plans.  Building goes: rule -> dim maps
(``rules.dim_maps``) -> one stride builder -> coalescing -> operand classes
and index width.
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from .rules import check_options, check_shape, dim_maps

CONTIGUOUS, SCALAR, STRIDED = "contiguous", "scalar", "strided"
INT32_LIMIT = 2**31 - 1


@dataclass(frozen=True, slots=True)
class BroadcastPlan:
    """How the operands map onto one output; frozen and hashable.

    ``strides`` are per operand, in elements, aligned to ``out_shape``, 0 on
    broadcast dims; input strides (transposed, sliced, negative) pass through.
    The ``coalesced_*`` fields are what kernels iterate over: size-1 dims
    dropped and adjacent dims merged wherever every operand and the output
    allow it (at least one dim, so a rank-0 output is ``(1,)``).
    """

    rule: str
    out_shape: tuple[int, ...]
    strides: tuple[tuple[int, ...], ...]
    out_strides: tuple[int, ...]               # the output's own strides (elements), aligned to out_shape
    coalesced_shape: tuple[int, ...]
    coalesced_strides: tuple[tuple[int, ...], ...]
    coalesced_out_strides: tuple[int, ...]
    classes: tuple[str, ...]                   # per operand: contiguous | scalar | strided
    out_contiguous: bool
    size: int                                  # number of output elements
    index_bits: int                            # 32 or 64: width every offset computation fits in
    dim_maps: tuple[tuple[int | None, ...], ...]   # per operand, per own dim: the output dim it walks (None: broadcast)
    out_overlaps_itself: bool = False          # two output elements may share memory (``overlaps_itself``)

    @property
    def ndim(self) -> int:
        return len(self.out_shape)


def c_strides(shape) -> tuple[int, ...]:
    """C-contiguous strides in elements."""
    strides, step = [], 1
    for n in reversed(shape):
        strides.append(step)
        step *= max(n, 1)
    return tuple(reversed(strides))


def _operand_key(x):
    """The cache key of one operand: (shape, byte strides, itemsize), or (shape, None, 0) for a shape."""
    if type(x) is tuple or type(x) is list:
        return tuple(x), None, 0
    try:
        return x.shape, x.strides, x.itemsize
    except AttributeError:
        pass
    if not hasattr(x, "shape"):
        raise TypeError(f"plan() operands are arrays or shape tuples, got {type(x).__name__}")
    return tuple(x.shape), getattr(x, "strides", None), x.dtype.itemsize


def _element_strides(shape, strides, itemsize) -> tuple[int, ...]:
    """Byte strides in elements (C-contiguous for a bare shape)."""
    if strides is None:
        return c_strides(shape)
    elems = []
    for s in strides:
        if itemsize == 0 or s % itemsize:
            raise ValueError(f"array with strides {tuple(strides)} (bytes) is not aligned to its itemsize "
                             f"{itemsize}; copy it first (np.ascontiguousarray)")
        elems.append(s // itemsize)
    return tuple(elems)


def plan(*operands, rule: str = "numpy", axis: int = -1, axes_mapping=None, out=None) -> BroadcastPlan:
    """Plan broadcasting ``operands`` (arrays, whose strides are honoured, or shape tuples).

    ``out`` (an array) gives the output's strides; by default the output is
    C-contiguous.  Cached: a second call with the same shapes, strides and rule
    returns the same plan object without rebuilding anything.
    """
    if type(rule) is not str or type(axis) is not int or axes_mapping is not None:
        rule, axis, axes_mapping = check_options(rule, axis, axes_mapping)
    try:  # the hot path: every operand an array
        keys = tuple([(x.shape, x.strides, x.itemsize) for x in operands])
    except AttributeError:
        keys = tuple(map(_operand_key, operands))
    return cached_plan(keys, rule, axis, axes_mapping, None if out is None else _operand_key(out))


@functools.lru_cache(maxsize=8192)
def cached_plan(keys, rule, axis, axes_mapping, out_key) -> BroadcastPlan:
    """Build (once) the plan for operand keys ((shape, byte strides, itemsize), ...)."""
    shapes = tuple(check_shape(s, f"arg {i} shape") for i, (s, _, _) in enumerate(keys))
    out_shape, maps = dim_maps(shapes, rule, axis, axes_mapping)
    walks = tuple(_walks(shape, m, out_shape) for shape, m in zip(shapes, maps))
    strides = tuple(_aligned_strides(_element_strides(shape, st, size), w, out_shape)
                    for shape, (_, st, size), w in zip(shapes, keys, walks))
    if out_key is None:
        out_strides = c_strides(out_shape)
    else:
        if tuple(out_key[0]) != out_shape:
            raise ValueError(f"output array has shape {tuple(out_key[0])}, but the operands broadcast to "
                             f"{out_shape} under rule '{rule}'")
        out_strides = _element_strides(out_shape, out_key[1], out_key[2])
    shape, cstrides, cout = coalesce(out_shape, strides, out_strides)
    size = 1
    for n in out_shape:
        size *= n
    contiguous = c_strides(shape)
    classes = tuple(
        SCALAR if size <= 1 or not any(s) else CONTIGUOUS if s == contiguous else STRIDED
        for s in cstrides)
    reach = max([_reach(shape, s) for s in cstrides] + [_reach(shape, cout), size])
    return BroadcastPlan(rule, out_shape, strides, tuple(out_strides), shape, cstrides, cout, classes,
                         cout == contiguous, size, 32 if reach <= INT32_LIMIT else 64, walks,
                         out_key is not None and overlaps_itself(out_shape, out_strides))


#: outputs of at most this many elements get the exact answer of ``overlaps_itself`` by enumeration
EXACT_OVERLAP_ELEMENTS = 1 << 16


def overlaps_itself(shape, strides, itemsize: int = 1) -> bool:
    """Whether two elements of an array of ``shape``, ``strides`` and ``itemsize`` (strides and size in
    one unit: elements and 1, or bytes and the item's bytes) share memory (NumPy's
    ``solve_may_have_internal_overlap``): a stride-0 dim of extent > 1, a sliding window, ...
    Exact where the dims nest (each stride, by size, beyond the reach of the smaller ones: no
    overlap) or the array is small (its offsets enumerated); otherwise True, which only costs a
    copy where a caller copies on overlap."""
    dims = sorted((abs(s), n) for n, s in zip(shape, strides) if n != 1)
    if any(n == 0 for _, n in dims):
        return False
    reach = 0
    for s, n in dims:
        if s < reach + itemsize:
            break
        reach += s * (n - 1)
    else:
        return False                    # nested: every element's bytes apart
    if any(s == 0 for s, _ in dims):
        return True
    size = 1
    for _, n in dims:
        size *= n
    if size > EXACT_OVERLAP_ELEMENTS:
        return True
    offsets = np.zeros(1, np.int64)
    for s, n in dims:
        offsets = (offsets[:, None] + s * np.arange(n, dtype=np.int64)).ravel()
    return bool(np.diff(np.sort(offsets)).min(initial=itemsize) < itemsize)


def _walks(shape, dmap, out_shape) -> tuple[int | None, ...]:
    """For each dim of an operand, the output dim it walks: its mapped dim where it matches the
    output (and is not 1), else None (broadcast)."""
    return tuple(d if d is not None and n == out_shape[d] and n != 1 else None for n, d in zip(shape, dmap))


def _aligned_strides(strides, walks, out_shape) -> tuple[int, ...]:
    """The stride builder: own stride on the output dim a dim walks, else 0."""
    out = [0] * len(out_shape)
    for k, d in enumerate(walks):
        if d is not None:
            out[d] = strides[k]
    return tuple(out)


def _reach(shape, strides) -> int:
    """Largest |element offset| an index walk over ``shape`` can produce."""
    return sum((n - 1) * abs(s) for n, s in zip(shape, strides))


def coalesce(shape, operand_strides, out_strides):
    """Drop size-1 dims and merge adjacent dims that every stride set allows.

    Dims (j, j+1) merge when ``stride[j] == stride[j+1] * shape[j+1]`` for every
    operand and for the output (a run of 0 strides merges too).
    """
    sets = tuple(operand_strides) + (tuple(out_strides),)
    if 0 in shape:
        return (0,), tuple((0,) for _ in operand_strides), (0,)
    keep = [d for d, n in enumerate(shape) if n != 1]
    dims = [shape[d] for d in keep]
    cols = [[s[d] for d in keep] for s in sets]
    if not dims:
        return (1,), tuple((0,) for _ in operand_strides), (0,)
    new_dims, new_cols = [dims[-1]], [[c[-1]] for c in cols]
    for j in range(len(dims) - 2, -1, -1):
        inner = new_dims[0]
        if all(c[j] == nc[0] * inner for c, nc in zip(cols, new_cols)):
            new_dims[0] = dims[j] * inner
        else:
            new_dims.insert(0, dims[j])
            for c, nc in zip(cols, new_cols):
                nc.insert(0, c[j])
    return tuple(new_dims), tuple(tuple(c) for c in new_cols[:-1]), tuple(new_cols[-1])


@functools.lru_cache(maxsize=4096)
def take(p: BroadcastPlan, order: tuple[int, ...]) -> BroadcastPlan:
    """``p`` with its operands reordered / subset to ``order`` (e.g. the data operand of a
    broadcast_to, or Select's (cond, then, else) planned with then as the PDPD target)."""
    pick = lambda seq: tuple(seq[i] for i in order)
    return BroadcastPlan(p.rule, p.out_shape, pick(p.strides), p.out_strides, p.coalesced_shape,
                         pick(p.coalesced_strides), p.coalesced_out_strides, pick(p.classes),
                         p.out_contiguous, p.size, p.index_bits, pick(p.dim_maps), p.out_overlaps_itself)
