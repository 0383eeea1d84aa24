"""Shared helpers of the math-function tests (#22): dense sweeps with the special values, and the
distance in ulps from NumPy's float64 result rounded once (the accuracy contract of ``ops.math_ulps``)."""

from __future__ import annotations

import warnings

import ml_dtypes
import numpy as np

from gpubcast import dtypes, ops

#: the real floating dtypes the bounds are stated for
FLOATS = (np.dtype(np.float16), dtypes.bfloat16, np.dtype(np.float32), np.dtype(np.float64))
#: ±0, ±inf, NaN, the smallest subnormals, the poles and the branch points of the functions
SPECIAL = (0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 0.5, -0.5, 2.0, -2.0, np.pi / 2, -np.pi / 2, np.pi,
           -np.pi, 1e-45, -1e-45, 5e-324, -5e-324, 1e-310, 6e-8, -6e-8, 1e-40, 1e-30, 88.7, -88.7, 89.5, 709.0,
           710.0, 11.1, 65504.0, 3.4e38, -3.4e38, 1.7e308, 0.9999999, 1.0000001, 1 - 2 ** -53, 1 + 2 ** -52)


def sweep(dt, n: int = 4001) -> np.ndarray:
    """The special values, a dense linear sweep of [-12, 12] and a log sweep of each sign over the
    dtype's range (subnormals included), in ``dt``."""
    dt = np.dtype(dt)
    info = ml_dtypes.finfo(dt)
    lo, hi = np.log10(float(info.smallest_subnormal)), np.log10(float(info.max))
    mag = np.logspace(lo, hi, n)
    x = np.concatenate([np.array(SPECIAL), np.linspace(-12, 12, n), mag, -mag])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return x.astype(dt)


def _ordered(a: np.ndarray) -> np.ndarray:
    """The bits of floats as integers in the floats' order (-0 and +0 both 0)."""
    a = np.ascontiguousarray(a)
    i = a.view(f"i{a.dtype.itemsize}").astype(np.int64)
    top = np.int64(1) << (8 * a.dtype.itemsize - 1)
    return np.where(i < 0, -(i + top), i)


def ulps(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """Distance in ulps of ``got`` from ``want`` (same dtype): 0 where both are NaN, a huge number
    where one is; the sign of a zero result counts (a +0 for -0 is 1 ulp)."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, (got.dtype, want.dtype)
    if got.dtype == bool:
        return np.where(got == want, 0, 1 << 40)
    d = np.abs(_ordered(got) - _ordered(want))
    zero_sign = (got == 0) & (want == 0) & (np.signbit(got.astype(np.float64)) != np.signbit(want.astype(np.float64)))
    d = np.where(zero_sign, 1, d)
    gn, wn = np.isnan(got.astype(np.float64)), np.isnan(want.astype(np.float64))
    return np.where(gn & wn, 0, np.where(gn | wn, 1 << 40, d))


def truth(name: str, *xs) -> np.ndarray:
    """NumPy's float64 result of op ``name`` rounded once to the inputs' dtype (float16 from float64
    directly: NumPy's conversion rounds once)."""
    op = ops.get(name)
    out = op.resolve(tuple(np.asarray(x).dtype for x in xs))[1]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        wide = op.reference(*(np.asarray(x).astype(np.float64) for x in xs))
        return np.asarray(wide).astype(out)
