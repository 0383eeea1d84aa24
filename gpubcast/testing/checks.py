"""Cases that run the CUDA kernels (emulated on the CPU, or on a GPU) against the NumPy reference.

A ``Case`` is one call of ``dispatch.apply`` (op, inputs, rule); ``run(case, backend)``
computes it on any backend and ``agree(case, got, want)`` compares with the reference
backend's result: exactly (NaN where NaN), except where a GPU's math library may differ
from the host's (``tolerance``).  Used by ``python -m gpubcast kernels --emulate``, the
emulation tests and the GPU tests.

``benchmark_patterns`` are the shapes of the benchmark, scaled down; ``random_cases`` draw
ops, dtypes, shapes, layouts (transposed, flipped, sliced, misaligned, scalars) and values
(edge cases included) from a seeded generator.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import ml_dtypes
import numpy as np

from .. import dtypes as _dt
from .. import ops as _ops
from ..cuda import catalog
from ..dispatch import apply

#: dtypes the emulation build covers (every op is instantiated for each it accepts)
EMULATION_DTYPES = tuple(np.dtype(t) for t in (
    "bool", "int8", "int32", "int64", "uint8", "uint64", "float16", "float32", "float64",
    "complex64", "complex128")) + (_dt.bfloat16,)


@dataclass
class Case:
    name: str
    op: _ops.Op
    inputs: list
    rule: str = "numpy"
    axis: int = -1
    axes_mapping: tuple | None = None
    shape: tuple | None = None          # data movement target shape
    target: int = 0
    dtype: object = None                # dtype= of the call (cast's target)
    meta: dict = field(default_factory=dict)

    @property
    def family(self) -> str:
        return catalog.FAMILY_OF_KIND[self.op.kind]


def run(case: Case, backend: str, out=None, inputs=None):
    return apply(case.op, case.inputs if inputs is None else inputs, rule=case.rule, axis=case.axis,
                 axes_mapping=case.axes_mapping, shape=case.shape, target=case.target, backend=backend,
                 out=out, dtype=case.dtype)


def tolerance(op_name: str, dtype, device: bool = False) -> float | None:
    """Relative tolerance (of the result's magnitude; as many ulps of the smallest subnormal where
    the result is subnormal) where exact agreement is not defined (None: exact).  NumPy's own
    results depend on the memory layout there (measured on NumPy 2.4, x86-64 AVX-512): its
    contiguous complex multiply loop fuses multiply-adds, its strided one does not; its contiguous
    float power uses SVML, its strided one libm.  On a GPU (``device``) the math library is CUDA's,
    which may differ in the last bits too."""
    dt = np.dtype(dtype)
    eps = float(ml_dtypes.finfo(dt).eps) if _dt.kind(dt) in "fc" else 0.0
    if device and dt == np.float64 and _ops.math_ulps(op_name, dt):
        # NumPy's float64 is not the truth against CUDA's math library: each within k ulps of it
        return 2 * _ops.math_ulps(op_name, dt) * eps
    if _ops.math_rtol(op_name, dt):
        return _ops.math_rtol(op_name, dt)
    if device and op_name == "sign" and dt.kind == "c":
        return 4 * eps              # z / |z| with CUDA's hypot (an H100, 2026-11-27: 1.12 eps at most)
    if op_name in ("multiply", "axpby", "square") and dt.kind == "c":   # a complex multiply (square: x * x)
        return 16 * eps
    if op_name == "power" and dt.kind == "c":
        return 1e3 * eps            # glibc's cpow vs exp(b * log(a)) in CUDA or host math
    if op_name == "power" and _dt.kind(dt) == "f":
        return (16 if device else 8) * eps
    return None


def agree(op_name: str, got, want, rtol: float | None = None) -> bool:
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape or got.dtype != want.dtype:
        return False
    if rtol is None:
        if got.dtype.kind in "fc" or got.dtype == _dt.bfloat16:
            return bool(np.array_equal(got, want, equal_nan=True))
        return bool(np.array_equal(got, want))
    return bool(np.all(_within(op_name, got, want, rtol)))


#: ops whose error is absolute near their zero crossing (x1 + log1p(...) cancels): measured against
#: max(|want|, 1) rather than |want| (an H100, 2026-11-27: float64 logaddexp2 was 2292 eps of a result
#: near 0 from NumPy's, and 1-2 ulps from it where the sampled results were not near 0)
ABSOLUTE_NEAR_ZERO = ("logaddexp", "logaddexp2")


def _within(op_name: str, got, want, rtol: float) -> np.ndarray:
    """Per element: equal, both NaN, or within ``rtol`` of want's magnitude (``agree``)."""
    info = ml_dtypes.finfo(got.real.dtype if got.dtype.kind == "c" else got.dtype)
    floor = rtol / float(info.eps) * float(info.smallest_subnormal)  # the same ulps where subnormal
    g = got.astype(np.complex128 if got.dtype.kind == "c" else np.float64)
    w = want.astype(g.dtype)
    scale = np.maximum(np.abs(w), 1.0) if op_name in ABSOLUTE_NEAR_ZERO else np.abs(w)
    same = (g == w) | (np.isnan(g) & np.isnan(w))
    with np.errstate(invalid="ignore"):
        close = np.abs(g - w) <= np.maximum(rtol * scale, floor)
    return same | close


def emulation_kernels() -> list[catalog.Kernels]:
    """Every instantiation whose types are all in EMULATION_DTYPES (sizes 1..16 for movement)."""
    keep = set(catalog.CXX_TYPES[t] for t in EMULATION_DTYPES)
    out = []
    for family, kernels in catalog.every_instantiation().items():
        for k in kernels:
            types = [t.strip() for t in k.targs.split(",")[1:]]
            if family in ("ternary", "copy") or all(t in keep for t in types):
                out.append(k)
    return out


# ---- values ------------------------------------------------------------------------------------

def values(rng, dtype, shape, *, op_name: str = "", role: int = 0) -> np.ndarray:
    """Random values of ``dtype`` with edge cases (0, -1, extremes, NaN, inf, -0.0, subnormals)."""
    dt = np.dtype(dtype)
    n = int(np.prod(shape, dtype=np.int64))
    if dt == np.bool_:
        return np.asarray(rng.random(shape) < 0.5)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        if op_name in ("left_shift", "right_shift") and role == 1:
            lo = -2 if dt.kind == "i" else 0
            return rng.integers(lo, 8 * dt.itemsize + 3, size=shape).astype(dt)
        if op_name == "power" and role == 1:
            lo = -3 if dt.kind == "i" else 0
            return rng.integers(lo, 6, size=shape).astype(dt)
        small = rng.integers(max(info.min, -9), min(info.max, 9) + 1, size=n)
        big = rng.integers(info.min, info.max, size=n, endpoint=True, dtype=dt)
        edges = np.array([0, info.min, info.max, 1] + ([-1] if dt.kind == "i" else []), dtype=dt)
        pick = rng.random(n)
        flat = np.where(pick < 0.5, small.astype(dt), big)
        spots = rng.random(n) < 0.15
        flat[spots] = rng.choice(edges, size=int(spots.sum()))
        return flat.reshape(shape)
    real_dt = np.dtype(np.float32) if dt in (np.float16, _dt.bfloat16) else (
        np.dtype(np.float64) if dt.kind == "c" else dt)
    def real(count):
        x = (rng.standard_normal(count) * 10).astype(real_dt)
        if op_name == "power":
            x = np.where(rng.random(count) < 0.5, np.round(x / 3), x / 3).astype(real_dt)
        spots = rng.random(count) < 0.12
        edges = np.array([0.0, -0.0, np.nan, np.inf, -np.inf, 1.0, -1.0, 1e-40 if real_dt == np.float32 else 1e-310,
                          2.5, -2.5], dtype=real_dt)
        x[spots] = rng.choice(edges, size=int(spots.sum()))
        return x
    if dt.kind == "c":
        z = np.empty(n, dt)
        z.real, z.imag = real(n), real(n)
        return z.reshape(shape)
    return real(n).astype(dt).reshape(shape)


def layout(rng, base: np.ndarray, kind: str) -> np.ndarray:
    """``base``'s values in another memory layout (same shape and values)."""
    if kind == "contiguous" or base.ndim == 0:
        return base
    if kind == "transposed":
        return np.ascontiguousarray(base.T).T
    if kind == "flipped":
        axes = tuple(a for a in range(base.ndim) if rng.random() < 0.6) or (0,)
        return np.ascontiguousarray(np.flip(base, axes))[tuple(slice(None, None, -1) if a in axes else slice(None)
                                                               for a in range(base.ndim))]
    if kind == "sliced":
        ax = int(rng.integers(base.ndim))
        shape = list(base.shape)
        shape[ax] *= 2
        big = np.zeros(shape, base.dtype)
        index = [slice(None)] * base.ndim
        index[ax] = slice(None, None, 2)
        big[tuple(index)] = base
        return big[tuple(index)]
    if kind == "misaligned":
        flat = np.zeros(base.size + 1, base.dtype)
        flat[1:] = base.ravel()
        return flat[1:].reshape(base.shape)
    raise ValueError(kind)


LAYOUTS = ("contiguous", "transposed", "flipped", "sliced", "misaligned")


def binary_layouts(rng, dtype, op_name: str) -> dict:
    """layout name -> (x1, x2) for a binary op: every operand class and fast path of the kernels."""
    dtype = np.dtype(dtype)
    v = lambda *s, role=0: values(rng, dtype, s, op_name=op_name, role=role)
    a, b = v(37, 45), v(37, 45, role=1)
    scalar = v(role=1)
    py = complex(scalar) if dtype.kind == "c" else float(scalar) if _dt.kind(dtype) == "f" else scalar.item()
    return {
        "contiguous": (a, b),                                    # contiguous kernel, vector loads
        "misaligned": (layout(rng, a, "misaligned"), b),         # contiguous kernel, element loads
        "python scalar": (a, py),                                # weak scalar: a kernel argument
        "0-d value": (a, np.asarray(scalar)),                    # strong 0-d: a kernel argument
        "device scalar": (a, v(1, 1, role=1)),                   # one device element
        "row": (a, v(45, role=1)),                               # contiguous + strided in one kernel
        "column": (v(37, 1), b),
        "transposed": (layout(rng, a, "transposed"), b),
        "negative strides": (a, layout(rng, b, "flipped")),
        "sliced": (layout(rng, a, "sliced"), v(45, role=1)),
        "NCHW": (v(2, 3, 5, 7), v(1, 3, 1, 1, role=1)),                 # 3 coalesced dims
        "rank-6 interleaved": (v(2, 1, 3, 1, 4, 5), v(1, 3, 1, 2, 4, 1, role=1)),
    }


def unary_layouts(rng, dtype, op_name: str) -> dict:
    """layout name -> x for a unary op: contiguous (vector loads), misaligned (element loads), a 0-d
    value, a device scalar, transposed, negative strides, sliced, and a transposed rank-6 array."""
    a = values(rng, dtype, (37, 45), op_name=op_name)
    return {"contiguous": a, "misaligned": layout(rng, a, "misaligned"),
            "0-d value": np.asarray(values(rng, dtype, (), op_name=op_name)),
            "device scalar": values(rng, dtype, (1, 1), op_name=op_name),
            "transposed": layout(rng, a, "transposed"), "flipped": layout(rng, a, "flipped"),
            "sliced": layout(rng, a, "sliced"),
            "rank 6": layout(rng, values(rng, dtype, (2, 1, 3, 4, 2, 5), op_name=op_name), "transposed")}


#: (op, dtype, x1, x2, expected): integer edge cases, values computed by hand
INTEGER_EDGE_CASES = [
    ("floor_divide", np.int8, [-128, 7, -7, 7, 0, -128], [-1, 0, 2, -2, 0, 3], [-128, 0, -4, -4, 0, -43]),
    ("remainder", np.int8, [-128, 7, -7, 7, 5, 0], [-1, 0, 2, -2, 5, -3], [0, 0, 1, -1, 0, 0]),
    ("fmod", np.int32, [-2**31, 7, -7, 7], [-1, 0, 2, -2], [0, 0, -1, 1]),
    ("div_trunc", np.int32, [-2**31, 7, -7, 7, 9], [-1, 0, 2, -2, 3], [-2**31, 0, -3, -3, 3]),
    ("div_trunc", np.int64, [-2**63, -9], [-1, 4], [-2**63, -2]),
    ("floor_divide", np.uint8, [200, 7], [0, 2], [0, 3]),
    ("left_shift", np.int8, [1, 1, 1, -1, 3], [7, 8, 100, 1, -1], [-128, 0, 0, -2, 0]),
    ("right_shift", np.int8, [-5, -5, 5, -128], [1, 8, 40, -1], [-3, -1, 0, -1]),
    ("right_shift", np.uint64, [2**64 - 1, 8], [63, 64], [1, 0]),
    ("power", np.int32, [2, 1, -1, -1, 0, 3, 2], [-1, -5, -3, -4, -2, 0, 31], [0, 1, -1, 1, 0, 1, -2**31]),
    ("power", np.uint8, [3, 2, 0], [5, 9, 0], [243, 0, 1]),
    ("add", np.int8, [127, -128], [1, -1], [-128, 127]),
    ("multiply", np.int64, [2**62, -2**63], [4, -1], [0, -2**63]),
    ("prelu", np.int8, [-3, 3, -128], [2, 5, 2], [-6, 3, 0]),
]


# ---- the benchmark's patterns, scaled down -------------------------------------------------------

def benchmark_patterns(rng, dtype=np.float32) -> list[Case]:
    dt = np.dtype(dtype)
    v = lambda *shape: values(rng, dt, shape)
    g = _ops.get
    M, K = 67, 131
    x4 = v(2, 6, 9, 11)
    cases = [
        Case("same shape (M,K)+(M,K)", g("add"), [v(M, K), v(M, K)]),
        Case("row (M,K)+(K,)", g("add"), [v(M, K), v(K)]),
        Case("column (M,K)+(M,1)", g("add"), [v(M, K), v(M, 1)]),
        Case("NCHW (N,C,H,W)+(1,C,1,1)", g("add"), [x4, v(1, 6, 1, 1)]),
        Case("outer (M,1)*(1,K)", g("multiply"), [v(M, 1), v(1, K)]),
        Case("rank-6 interleaved", g("add"), [v(2, 1, 3, 1, 5, 7), v(1, 3, 1, 4, 5, 1)]),
        Case("transposed operand (K,M).T+(M,)", g("add"), [np.ascontiguousarray(v(K, M)).T, v(K)]),
        Case("pdpd (N,C,H,W)*(C,H) axis=1", g("multiply"), [x4, v(6, 9)], rule="pdpd", axis=1),
        Case("explicit (C,)->(N,C,H,W) [1]", g("copy"), [v(6)], rule="explicit", axes_mapping=(1,),
             shape=(2, 6, 9, 11)),
        Case("expand (C,1) with (N,1,W)", g("copy"), [v(6, 1)], rule="bidirectional", shape=(2, 1, 11)),
        Case("where (H,W) ? (N,C,H,W) : scalar", g("where"), [v(9, 11) > 0, x4, dt.type(0.5)]),
        Case("variadic sum of 3", g("sum"), [x4, v(6, 1, 1), v(11)]),
        Case("variadic mean of 10 (chained)", g("mean"), [v(6, 1, 1) for _ in range(5)] + [v(11)] * 5),
        Case("variadic max of 9", g("max"), [v(9, 11)] + [v(11) for _ in range(8)]),
    ]
    return [c for c in cases if c.op.type_rule != "same" or _dt.kind(dt) in c.op.accepts]


# ---- random cases -------------------------------------------------------------------------------

def _shapes(rng, n_operands: int):
    """Mutually broadcastable shapes (numpy rule) and their output shape."""
    rank = int(rng.integers(0, 6))
    out = [int(rng.integers(1, 8)) for _ in range(rank)]
    if rank and rng.random() < 0.05:
        out[int(rng.integers(rank))] = 0
    shapes = []
    for _ in range(n_operands):
        r = int(rng.integers(0, rank + 1))
        s = [d if rng.random() < 0.7 else 1 for d in out[rank - r:]]
        shapes.append(tuple(s))
    return shapes, tuple(out)


def dtypes_for(op: _ops.Op, dtypes=EMULATION_DTYPES) -> list[tuple]:
    """Input dtype tuples of ``op`` whose loop is their own dtype, among ``dtypes`` (binary ops:
    pairs, plus NumPy 2's int64/uint64 comparison loops; others: 1-tuples)."""
    if op.kind == "binary":
        pairs = []
        for a in dtypes:
            try:
                loop, _ = op.resolve((a, a))
            except TypeError:
                continue
            if loop == (a, a):
                pairs.append((a, a))
        if op.name in ("equal", "not_equal", "less", "less_equal", "greater", "greater_equal"):
            pairs.append((np.dtype(np.int64), np.dtype(np.uint64)))
        return pairs
    if op.kind in ("variadic", "quaternary", "parametric"):
        return [(t,) for t in dtypes if _dt.kind(t) in op.accepts]
    if op.kind == "unary":  # the dtypes that are their own loop, with a CUDA kernel
        own = []
        for t in dtypes:
            try:
                loop, _ = op.resolve((t,))
            except TypeError:
                continue
            if loop == (t,) and not (t.kind == "c" and op.name in catalog.COMPLEX_ON_CPU):
                own.append((t,))
        return own
    return [(t,) for t in dtypes]


def random_cases(rng, n: int) -> list[Case]:
    names = sorted(_ops.REGISTRY)
    cases = []
    while len(cases) < n:
        op = _ops.get(names[int(rng.integers(len(names)))])
        choices = dtypes_for(op)
        types = choices[int(rng.integers(len(choices)))]
        arity = op.arity or int(rng.integers(1, 12))
        shapes, out_shape = _shapes(rng, arity if op.kind != "move" else 1)
        inputs = []
        for i, shape in enumerate(shapes):
            dt = np.dtype(bool) if op.kind == "ternary" and i == 0 else types[min(i, len(types) - 1)]
            if op.kind == "ternary" and i:
                dt = types[0]
            kind = LAYOUTS[int(rng.integers(len(LAYOUTS)))]
            x = layout(rng, values(rng, dt, shape, op_name=op.name, role=i), kind)
            if rng.random() < 0.12 and op.kind != "move":
                x = x.reshape(-1)[:1].reshape(()) if x.size else x     # a 0-d operand: a kernel argument
            inputs.append(x)
        if op.kind == "move":
            case = Case(f"{op.name} {inputs[0].shape}->{out_shape} {types[0]}", op, inputs, rule="numpy_to",
                        shape=out_shape)
        else:
            desc = ", ".join(f"{getattr(x, 'shape', ())}" for x in inputs)
            case = Case(f"{op.name}({desc}) {'/'.join(str(t) for t in types)}", op, inputs)
            if op.name == "cast":
                case.dtype = EMULATION_DTYPES[int(rng.integers(len(EMULATION_DTYPES)))]
                case.inputs = [castable(x, case.dtype) for x in inputs]
                case.name += f" -> {case.dtype}"
        case.meta["dtype"] = types[0]
        cases.append(case)
    return cases


def castable(x, target):
    """``x`` with the values a float -> integer cast leaves undefined (NaN, inf, out of the target's
    range: C, NumPy and CUDA each give their own) replaced by 0 and clipped into range."""
    x = np.asarray(x)
    if _dt.kind(np.dtype(target)) not in "iu" or _dt.kind(x.dtype) not in "fc":
        return x
    info = np.iinfo(target)
    real = x.real.astype(np.float64) if x.dtype.kind == "c" else x.astype(np.float64)
    lo, hi = max(float(info.min), -1e6), min(float(info.max), 1e6)
    safe = np.clip(np.nan_to_num(real, nan=0.0, posinf=0.0, neginf=0.0), lo, hi)
    return safe.astype(x.dtype) if x.dtype.kind != "c" else (safe + 1j * x.imag).astype(x.dtype)


#: an unsigned integer type of each element size: device_like copies floats as their bits
_BITS = {1: np.uint8, 2: np.uint16, 4: np.uint32, 8: np.uint64}


def device_like(x, cupy):
    """A CuPy array with ``x``'s values, shape, strides and address modulo 16 (so the same
    fast paths are taken as on the host); host scalars (Python numbers, 0-d NumPy arrays)
    stay on the host, as kernel arguments."""
    if not isinstance(x, np.ndarray) or x.ndim == 0:
        return x
    if x.size == 0:
        return cupy.asarray(x)
    flip = tuple(a for a, s in enumerate(x.strides) if s < 0)
    pos = np.flip(x, flip) if flip else x                     # the same memory, strides >= 0
    span = sum((n - 1) * s for n, s in zip(pos.shape, pos.strides)) + pos.itemsize
    shift = pos.__array_interface__["data"][0] % 16
    buf = cupy.zeros(shift + span, dtype=np.uint8)
    view = cupy.ndarray(pos.shape, pos.dtype, memptr=buf.data + shift, strides=pos.strides)
    bits = _BITS.get(pos.dtype.itemsize) if pos.dtype.kind in "fcV" else None
    if bits is None:
        view[...] = cupy.asarray(np.ascontiguousarray(pos))
    else:   # the bits, not the values: CuPy's kernels compile with -ftz=true (float32 subnormals)
        view.view(bits)[...] = cupy.asarray(np.ascontiguousarray(pos).view(bits))
    return view[tuple(slice(None, None, -1) if a in flip else slice(None) for a in range(x.ndim))]


def check(cases, backend: str, reference: str = "numpy"):
    """[(case, ok, detail)] comparing ``backend`` with ``reference`` on every case."""
    results = []
    for case in cases:
        want = run(case, reference)
        try:
            got = run(case, backend)
        except Exception as e:  # noqa: BLE001 - reported per case
            results.append((case, False, f"{type(e).__name__}: {e}"))
            continue
        got_host = got.get() if hasattr(got, "get") else got
        dtype = case.meta.get("dtype") or np.asarray(want).dtype
        rtol = tolerance(case.op.name, dtype)
        ok = agree(case.op.name, got_host, want, rtol)
        results.append((case, ok, "" if ok else _difference(got_host, want, rtol, case.op.name)))
    return results


def _difference(got, want, rtol: float | None = None, op_name: str = "") -> str:
    """The first three elements that ``agree(op_name, got, want, rtol)`` rejects, and how many."""
    got, want = np.asarray(got), np.asarray(want)
    if got.shape != want.shape or got.dtype != want.dtype:
        return f"got {got.dtype}{got.shape}, want {want.dtype}{want.shape}"
    bad = ~((got == want) | (_isnan(got) & _isnan(want)))
    if rtol is not None:   # only the elements outside the tolerance
        bad &= ~_within(op_name, got, want, rtol)
    idx = np.argwhere(bad)
    return f"{len(idx)} of {got.size} disagree; " + "; ".join(
        f"at {tuple(int(k) for k in i)}: got {got[tuple(i)]!r}, want {want[tuple(i)]!r}" for i in idx[:3])


def _isnan(x):
    try:
        return np.isnan(x)
    except TypeError:
        return np.zeros(x.shape, bool)
