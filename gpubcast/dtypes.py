"""Dtype helpers: bfloat16 through ml_dtypes, kinds, Python scalars as weak types."""

from __future__ import annotations

import functools

import ml_dtypes
import numpy as np

bfloat16 = np.dtype(ml_dtypes.bfloat16)

#: every dtype the elementwise ops compute in
NUMERIC = tuple(np.dtype(t) for t in (
    "bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64",
    "float16", "float32", "float64", "complex64", "complex128")) + (bfloat16,)


def kind(dt: np.dtype) -> str:
    """NumPy's kind letter, with ml_dtypes' floats (kind 'V') reported as 'f'."""
    return "f" if dt == bfloat16 else dt.kind


def is_python_scalar(x) -> bool:
    """A plain Python number (not a NumPy scalar, though np.float64 subclasses float)."""
    return type(x) in (bool, int, float, complex)


def weak_type(x):
    """What NumPy 2 type resolution sees for ``x``: a dtype, or int/float/complex for a weak Python scalar."""
    t = type(x)
    if t is bool:
        return np.dtype(bool)
    if t in (int, float, complex):
        return t
    return x.dtype


def dtype_of(x) -> np.dtype:
    """``x``'s dtype; a Python scalar's (or a list's) as NumPy holds it (``np.asarray(x).dtype``)."""
    return np.dtype(x.dtype) if hasattr(x, "dtype") else np.asarray(x).dtype


@functools.cache
def int_range(dt: np.dtype) -> tuple[int, int]:
    """Integer type ``dt``'s lowest and highest values, as Python ints."""
    info = np.iinfo(dt)
    return int(info.min), int(info.max)


@functools.cache
def finite_max(dt: np.dtype) -> float:
    """The largest finite value of float type ``dt`` (C++'s ``numeric_limits<T>::max()``)."""
    return float(ml_dtypes.finfo(dt).max)


def in_float_type(value: float, dt: np.dtype) -> float:
    """Python float ``value`` as float type ``dt`` holds it, as a Python float: beyond dt's range, its
    +-inf (or its largest value, as rounding gives), without NumPy's overflow warning; NaN stays NaN."""
    if abs(value) <= finite_max(dt) or value != value:
        return value
    with np.errstate(over="ignore"):
        return float(np.asarray(value, dtype=dt))


def fits(value: int, dt: np.dtype) -> bool:
    """Whether the Python int ``value`` converts to ``dt`` without overflow (floats: always, maybe inf)."""
    if dt.kind in "iu":
        info = np.iinfo(dt)
        return info.min <= value <= info.max
    return True


_WEAK_VALUE = {int: 0, float: 0.0, complex: 0j}


def result_type(types) -> np.dtype:
    """``np.result_type`` over dtypes and weak Python scalar types (NEP 50)."""
    return np.result_type(*(_WEAK_VALUE.get(t, t) for t in types))
