"""Shared helpers of the backend tests: input values with edge cases, and comparison against the NumPy
reference (NaN == NaN, exact bits where it matters).  The memory layouts are ``layouts``."""

from __future__ import annotations

import warnings

import ml_dtypes
import numpy as np

from gpubcast import dtypes, ops
from gpubcast.dispatch import apply

NUMERIC = dtypes.NUMERIC
INTS = tuple(d for d in NUMERIC if d.kind in "iu")
N_INPUTS = {"unary": 1, "binary": 2, "ternary": 3, "parametric": 3, "variadic": 3, "quaternary": 4, "move": 1}


def loop_types(op, dt):
    """Input dtypes of ``op`` over ``dt`` (None where the op does not accept ``dt``)."""
    types = (np.dtype(bool), dt, dt) if op.kind == "ternary" else (dt,) * N_INPUTS[op.kind]
    try:
        op.resolve(types)
    except TypeError:
        return None
    return types


def op_dtype_cases():
    """Every (op name, dtype) the registry accepts (op over inputs of one dtype)."""
    return [(name, dt) for name, op in ops.REGISTRY.items() for dt in NUMERIC if loop_types(op, dt)]


def values(dt, n, rng) -> np.ndarray:
    """``n`` values of ``dt``: edge cases first (0, -1, extremes, NaN, inf, -0, subnormals), then
    random values, shuffled."""
    dt = np.dtype(dt)
    if dt.kind == "b":
        return rng.integers(0, 2, n).astype(bool)
    if dt.kind in "iu":
        info = np.iinfo(dt)
        special = [v for v in (0, 1, -1, 2, -2, 3, 7, 8, 9, 63, 64, 65, info.min, info.max, info.min + 1,
                               info.max - 1) if info.min <= v <= info.max]
        wide = rng.integers(info.min, info.max, n, dtype=dt, endpoint=True)
        small = rng.integers(max(info.min, -9), min(info.max, 9), n, endpoint=True).astype(dt)
        x = np.where(rng.random(n) < 0.5, small, wide).astype(dt)
        x[:min(n, len(special))] = special[:n]
        return rng.permutation(x)
    if dt.kind == "c":
        part = np.float64 if dt.itemsize == 16 else np.float32
        z = np.empty(n, dt)
        z.real, z.imag = values(part, n, rng), values(part, n, rng)
        return z
    work = np.float32 if dt in (dtypes.bfloat16, np.dtype(np.float16)) else dt
    special = [0.0, -0.0, 1.0, -1.0, np.nan, np.inf, -np.inf, 0.5, -0.5, 2.0, 3.0, -3.0, 1e-40, 7.5, -7.5,
               6e-8, 1e30]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        x = (rng.standard_normal(n) * rng.choice([1, 10, 1000], n)).astype(work)
        x[:min(n, len(special))] = special[:n]
        return rng.permutation(x).astype(dt)


def inputs_for(op, dt, shapes, rng):
    """Inputs of ``op`` over ``dt`` with the given shapes (None: ``op`` does not take ``dt``)."""
    types = loop_types(op, dt)
    if types is None:
        return None
    return [values(t, int(np.prod(s)), rng).reshape(s) for t, s in zip(types, shapes)]


# --- comparison -----------------------------------------------------------------------------------------

def _as_float(a):
    if a.dtype in (dtypes.bfloat16, np.dtype(np.float16)):
        return a.astype(np.float32)
    return a


def mismatch(got, want, rtol=0.0) -> str:
    """'' if ``got`` equals ``want`` (dtype, shape, values; NaN equals NaN), else a description."""
    got, want = np.asarray(got), np.asarray(want)
    if got.dtype != want.dtype or got.shape != want.shape:
        return f"dtype/shape {got.dtype}{got.shape} != {want.dtype}{want.shape}"
    if got.dtype.kind in "OSUV" and got.dtype != dtypes.bfloat16:
        ok = got == want
    elif got.dtype.kind == "c":
        ok = _eq(got.real, want.real, rtol) & _eq(got.imag, want.imag, rtol)
    else:
        ok = _eq(_as_float(got), _as_float(want), rtol, got.dtype)
    ok = np.asarray(ok)
    if ok.all():
        return ""
    bad = np.flatnonzero(~ok.ravel())[:4]
    return f"{(~ok).sum()} of {ok.size} differ, e.g. {got.ravel()[bad]} != {want.ravel()[bad]}"


def _eq(a, b, rtol, dtype=None):
    """Elementwise equal (NaN equal), or within ``rtol`` where given; ``dtype``: the results' own
    dtype where a and b are widened (float16, bfloat16: its subnormals set the floor)."""
    if a.dtype.kind != "f":
        return a == b
    with np.errstate(all="ignore"):
        close = (a == b) | (np.isnan(a) & np.isnan(b))
        if rtol:  # rtol = k * eps: within k ulps, also where the result is subnormal
            info = ml_dtypes.finfo(dtype if dtype is not None else a.dtype)
            close |= np.abs(a - b) <= np.maximum(rtol * np.abs(b), rtol / info.eps * info.smallest_subnormal)
    return close


def tolerance(op_name, dt) -> float:
    """NumPy computes float32/float64 ``power`` with SVML on AVX-512 machines (not the C library's
    correctly rounded ``pow``): a few ulps apart (8 ulps of the result, or of the smallest
    subnormal where the result is subnormal: seen 3 in 307200 elements of float32 ``power``
    around 4e-40, 1-2 subnormal ulps apart).  Everything else must match exactly."""
    if op_name == "power" and np.dtype(dt) in (np.dtype(np.float32), np.dtype(np.float64)):
        return 8 * np.finfo(dt).eps
    return ops.math_rtol(op_name, dt)  # math libraries: gpubcast.ops.MATH_ULPS


def run_both(op, inputs, **kw):
    """(numba result, reference result) of ``op`` over ``inputs``."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = apply(op, inputs, backend="numba", **kw)
        want = apply(op, [np.array(x) for x in inputs], backend="numpy", **kw)
    return got, want
