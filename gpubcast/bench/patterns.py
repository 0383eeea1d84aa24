"""The benchmark's pattern suite, defined once for ``python -m gpubcast bench`` and ``pytest benchmarks/``.

A pattern is one broadcasting situation: an op (``add``, ``where``, ``sum``,
``copy``, the data movement of ``broadcast_to``/``expand``, or ``axpb``, a user kernel
``z = a * x + b`` run by ``gpubcast.ElementwiseKernel``), a rule set, and
operand shapes at three sizes:

``tiny``  a handful of elements: per-call latency;
``cpu``   the large size on a CPU, about 100 MB of traffic (the Numba issue's table shapes);
``gpu``   the large size on a GPU, at least 256 MB of traffic.

Users pick ``tiny`` or ``large``; ``large`` means ``cpu`` or ``gpu`` by where a
backend computes (``shapes(size, device)``).  For ``copy`` the operands are
``(input shape, target shape)``: the target is a shape, not an array.
``make_cases`` builds the input sets (distinct buffers with the same values,
so that rotating over them keeps caches from flattering) and output buffers.
``scaled(pattern, n)`` gives a pattern's shapes at any output size of ``4**k`` elements (the size
sweep, ``sweep.py``): the same operands, ranks and broadcast dims as its fixed sizes.
"""

from __future__ import annotations

import math
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from ..rules import remapped_shape, check_shape, dim_maps
from .measure import traffic_bytes

SIZES = ("tiny", "large")
DEVICES = ("cpu", "gpu")
OPS = ("add", "where", "sum", "copy", "axpb")

Shapes = tuple  # tuple[tuple[int, ...], ...]


@dataclass(frozen=True)
class Pattern:
    name: str
    title: str
    op: str                      # add | where | sum | copy | axpb (operands a, x, b)
    tiny: Shapes
    cpu: Shapes
    gpu: Shapes
    rule: str = "numpy"          # gpubcast's rule set (copy: numpy_to | bidirectional | explicit)
    axis: int = -1               # pdpd
    axes_mapping: tuple | None = None   # explicit
    transposed: tuple = ()       # operands stored as (K, M) and passed as a transposed (M, K) view
    peer_note: str | None = None  # how NumPy/CuPy/torch users express it when they cannot directly
    onnx_note: str | None = None  # the same for the one-node ONNX model

    def shapes(self, size: str, device: str) -> Shapes:
        """The operand shapes at ``size`` ("tiny" | "large") on ``device`` ("cpu" | "gpu")."""
        if size not in SIZES:
            raise ValueError(f"unknown size {size!r}; choose one of {', '.join(SIZES)}")
        if device not in DEVICES:
            raise ValueError(f"unknown device {device!r}; choose one of {', '.join(DEVICES)}")
        return self.tiny if size == "tiny" else getattr(self, device)

    def inputs(self, shapes: Shapes) -> Shapes:
        """The shapes of the array operands (a copy's target is a shape, not an array)."""
        return shapes[:1] if self.op == "copy" else shapes

    def out_shape(self, shapes: Shapes) -> tuple[int, ...]:
        return dim_maps(tuple(map(check_shape, shapes)), self.rule, self.axis, self.axes_mapping)[0]

    def aligned(self, shapes: Shapes) -> Shapes:
        """The input shapes as a NumPy user writes them for this pattern: laid onto the output's
        rank where the rule places dims other than right-aligned (pdpd, explicit), else as given."""
        if self.rule not in ("pdpd", "explicit"):
            return self.inputs(shapes)
        out, maps = dim_maps(tuple(map(check_shape, shapes)), self.rule, self.axis, self.axes_mapping)
        return tuple(remapped_shape(s, m, len(out)) for s, m in zip(self.inputs(shapes), maps))

    def dtypes(self, dtype) -> tuple[np.dtype, ...]:
        """The dtype of each array operand: ``where``'s condition is bool, the rest ``dtype``."""
        dtype = np.dtype(dtype)
        n = len(self.inputs(self.tiny))
        return (np.dtype(bool),) + (dtype,) * (n - 1) if self.op == "where" else (dtype,) * n

    def traffic(self, shapes: Shapes, dtype) -> int:
        """Least bytes one call moves: each operand's own bytes read, the output's written."""
        return traffic_bytes(zip(self.inputs(shapes), (dt.itemsize for dt in self.dtypes(dtype))),
                             (self.out_shape(shapes), np.dtype(dtype).itemsize))


NCHW_CPU, NCHW_GPU, NCHW_TINY = (128, 64, 56, 56), (384, 64, 56, 56), (2, 3, 2, 2)

PATTERNS: tuple[Pattern, ...] = (
    Pattern("same", "same shape (N,)+(N,)", "add",
            tiny=((4,), (4,)), cpu=((2**25,), (2**25,)), gpu=((2**26,), (2**26,))),
    Pattern("scalar", "scalar (N,)+(1,)", "add",
            tiny=((4,), (1,)), cpu=((2**25,), (1,)), gpu=((2**26,), (1,))),
    Pattern("row", "row (M,K)+(K,)", "add",
            tiny=((2, 4), (4,)), cpu=((8192, 4096), (4096,)), gpu=((16384, 4096), (4096,))),
    Pattern("column", "column (M,K)+(M,1)", "add",
            tiny=((2, 4), (2, 1)), cpu=((8192, 4096), (8192, 1)), gpu=((16384, 4096), (16384, 1))),
    Pattern("nchw", "NCHW per-channel (N,C,H,W)+(1,C,1,1)", "add",
            tiny=(NCHW_TINY, (1, 3, 1, 1)), cpu=(NCHW_CPU, (1, 64, 1, 1)), gpu=(NCHW_GPU, (1, 64, 1, 1))),
    Pattern("outer", "outer (M,1)+(1,K)", "add",
            tiny=((4, 1), (1, 4)), cpu=((8192, 1), (1, 4096)), gpu=((16384, 1), (1, 4096))),
    Pattern("rank6", "rank-6 interleaved (a,1,b,1,c,d)+(1,e,1,f,c,1)", "add",
            tiny=((2, 1, 2, 1, 2, 2), (1, 2, 1, 2, 2, 1)),
            cpu=((8, 1, 16, 1, 32, 64), (1, 12, 1, 24, 32, 1)),
            gpu=((16, 1, 16, 1, 32, 64), (1, 12, 1, 24, 32, 1))),
    Pattern("transposed", "transposed operand (K,M).T+(M,K)", "add",
            tiny=((4, 4), (4, 4)), cpu=((4096, 4096), (4096, 4096)), gpu=((8192, 8192), (8192, 8192)),
            transposed=(0,)),
    Pattern("pdpd", "PDPD (N,C,H,W)+(C,H), axis=1", "add",
            tiny=(NCHW_TINY, (3, 2)), cpu=(NCHW_CPU, (64, 56)), gpu=(NCHW_GPU, (64, 56)),
            rule="pdpd", axis=1,
            peer_note="PDPD has no equivalent: (C,H) reshaped to (1,C,H,1), then broadcast",
            onnx_note="PDPD has no ONNX equivalent: (C,H) reshaped to (1,C,H,1) on the host, then Add"),
    Pattern("explicit", "explicit broadcast_to (C,W)->(N,C,H,W), axes_mapping=[1,3]", "copy",
            tiny=((3, 2), NCHW_TINY), cpu=((64, 56), NCHW_CPU), gpu=((64, 56), NCHW_GPU),
            rule="explicit", axes_mapping=(1, 3),
            peer_note="axes_mapping has no equivalent: (C,W) reshaped to (1,C,1,W), then a broadcast copy",
            onnx_note="axes_mapping has no ONNX equivalent: (C,W) reshaped to (1,C,1,W) on the host, then Expand"),
    Pattern("expand", "bidirectional expand (C,1) with (N,1,W)", "copy",
            tiny=((3, 1), (2, 1, 4)), cpu=((4096, 1), (2, 1, 4096)), gpu=((4096, 1), (8, 1, 4096)),
            rule="bidirectional",
            peer_note="Expand written as a broadcast copy into the np.broadcast_shapes(x.shape, shape) result"),
    Pattern("where", "where (M,1) ? (M,K) : (1,K)", "where",
            tiny=((4, 1), (4, 4), (1, 4)), cpu=((8192, 1), (8192, 4096), (1, 4096)),
            gpu=((16384, 1), (16384, 4096), (1, 4096))),
    Pattern("sum4", "Sum of 4: (N,C,H,W)+(1,C,1,1)+(N,1,H,W)+(W,)", "sum",
            tiny=(NCHW_TINY, (1, 3, 1, 1), (2, 1, 2, 2), (2,)),
            cpu=(NCHW_CPU, (1, 64, 1, 1), (128, 1, 56, 56), (56,)),
            gpu=(NCHW_GPU, (1, 64, 1, 1), (384, 1, 56, 56), (56,))),
    Pattern("axpb", "custom kernel z = a*x+b, (1,C,1,1)*(N,C,H,W)+(1,C,1,1)", "axpb",
            tiny=((1, 3, 1, 1), NCHW_TINY, (1, 3, 1, 1)), cpu=((1, 64, 1, 1), NCHW_CPU, (1, 64, 1, 1)),
            gpu=((1, 64, 1, 1), NCHW_GPU, (1, 64, 1, 1)),
            onnx_note="two nodes: Mul, then Add"),
)

BY_NAME = {p.name: p for p in PATTERNS}


#: the innermost extent the scaled matrices grow to (the fixed GPU shapes' K), and NCHW's C and H = W cap
MATRIX_K, CHANNELS, PLANE = 4096, 64, 64


def matrix(n: int) -> tuple[int, int]:
    """(M, K), M * K == n: square up to K = MATRIX_K, then rows."""
    k = min(MATRIX_K, math.isqrt(n))
    return n // k, k


def _nchw(n: int) -> tuple[int, int, int, int]:
    """(N, C, H, W), product n: C = CHANNELS, square planes up to PLANE x PLANE, then images."""
    plane = n // CHANNELS
    h = min(PLANE, math.isqrt(plane))
    return plane // (h * h), CHANNELS, h, h


def _rank6(n: int) -> tuple[int, ...]:
    """The output (a, e, b, f, c, d) of ``rank6``, product n: each broadcast dim at least 2, the
    innermost d up to 64 and c up to 32, the rest shared by a, e, b, f."""
    bits = [1, 1, 1, 1, 0, 0]                        # a, e, b, f, c, d (log2)
    left = n.bit_length() - 1 - 4
    for i, cap in ((5, 6), (4, 5)):
        bits[i] = min(cap, left)
        left -= bits[i]
    for k in range(left):
        bits[k % 4] += 1
    return tuple(2**b for b in bits)


def _scaled_shapes(name: str, n: int) -> Shapes:
    (m, k), (nn, c, h, w) = matrix(n), _nchw(n)
    if name == "rank6":
        a, e, b, f, c6, d = _rank6(n)
        return (a, 1, b, 1, c6, d), (1, e, 1, f, c6, 1)
    if name == "expand":
        ch = min(MATRIX_K, m)
        return (ch, 1), (m // ch, 1, k)
    return {
        "same": ((n,), (n,)), "scalar": ((n,), (1,)), "row": ((m, k), (k,)), "column": ((m, k), (m, 1)),
        "nchw": ((nn, c, h, w), (1, c, 1, 1)), "outer": ((m, 1), (1, k)), "transposed": ((m, k), (m, k)),
        "pdpd": ((nn, c, h, w), (c, h)), "explicit": ((c, w), (nn, c, h, w)), "where": ((m, 1), (m, k), (1, k)),
        "sum4": ((nn, c, h, w), (1, c, 1, 1), (nn, 1, h, w), (w,)),
        "axpb": ((1, c, 1, 1), (nn, c, h, w), (1, c, 1, 1)),
    }[name]


#: the least output the scaled shapes take (every broadcast dim of every pattern at least 2)
SCALED_MIN = 4**5


def scaled(pattern: Pattern, n: int) -> Shapes:
    """``pattern``'s operand shapes for an output of ``n`` elements (a power of 4, at least
    ``SCALED_MIN``): the operands, ranks and broadcast dims of its fixed shapes, grown in the
    dims its fixed sizes grow."""
    if n < SCALED_MIN or n & (n - 1) or (n.bit_length() - 1) % 2:
        raise ValueError(f"a scaled size is a power of 4 of at least {SCALED_MIN} elements, not {n}")
    try:
        return _scaled_shapes(pattern.name, n)
    except KeyError:
        raise ValueError(f"pattern {pattern.name!r} has no scaled shapes (patterns._scaled_shapes)") from None


def select(names=None) -> tuple[Pattern, ...]:
    """The patterns called ``names`` (all when None), in suite order; a clear error for unknown names."""
    if not names:
        return PATTERNS
    unknown = [n for n in names if n not in BY_NAME]
    if unknown:
        raise ValueError(f"unknown pattern(s) {', '.join(unknown)}; choose from {', '.join(BY_NAME)}")
    return tuple(p for p in PATTERNS if p.name in names)


class Case(NamedTuple):
    """One input set: the array operands (as the pattern passes them) and an output buffer."""
    inputs: tuple
    out: object


def host_operands(pattern: Pattern, shapes: Shapes, dtype, seed: int = 0) -> tuple[np.ndarray, ...]:
    """Random NumPy operands for ``shapes`` (transposed operands as C-contiguous (K, M) arrays;
    ``make_cases`` passes their transpose)."""
    rng = np.random.default_rng(seed)
    arrays = []
    for i, (shape, dt) in enumerate(zip(pattern.inputs(shapes), pattern.dtypes(dtype))):
        if i in pattern.transposed:
            shape = shape[::-1]
        arrays.append(_random(rng, shape, dt))
    return tuple(arrays)


def _random(rng, shape, dt: np.dtype) -> np.ndarray:
    if dt.kind == "b":
        return rng.random(shape, dtype=np.float32) < 0.5
    if dt.kind in "iu":
        return rng.integers(1, 100, size=shape, dtype=dt)
    wide = np.float64 if dt.itemsize >= 8 else np.float32
    return (rng.random(shape, dtype=wide) + 0.5).astype(dt)  # in [0.5, 1.5): no zeros, no denormals


def make_cases(pattern: Pattern, shapes: Shapes, dtype, xp=np, sets: int = 2, host=None) -> list[Case]:
    """``sets`` input sets in array module ``xp`` (numpy or cupy), each its own buffers holding the
    values of ``host`` (``host_operands`` by default), plus an uninitialised output each."""
    host = host_operands(pattern, shapes, dtype) if host is None else host
    out_shape, out_dtype = pattern.out_shape(shapes), np.dtype(dtype)
    cases = []
    for _ in range(sets):
        arrays = tuple(xp.array(h, copy=True) for h in host)
        arrays = tuple(a.T if i in pattern.transposed else a for i, a in enumerate(arrays))
        cases.append(Case(arrays, xp.empty(out_shape, out_dtype)))
    return cases
