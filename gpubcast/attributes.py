"""Attribute values of the ONNX and OpenVINO front ends, checked where an operator reads them.

A float attribute (``alpha``, ``beta``, ``gamma``, ``lambd``, ``bias``, Clamp's ``min`` / ``max``,
Gemm's scales) is one real number: a Python int or float, a NumPy integer or floating scalar
(bfloat16 included), or an array of exactly one such element.  An int attribute (a flag such as
IsInf's ``detect_negative`` or Gemm's ``transA``) is a Python int or bool or a NumPy integer.
Anything else -- a bool where a float is meant, a str or bytes (never parsed), a complex number,
None, an array of another size -- is refused with an error that names the operator and the
attribute and says what was given and what is expected: ``TypeError`` for a wrong kind of value,
``ValueError`` for a wrong size or a number no float holds.  NaN and the infinities pass: ONNX
Runtime and OpenVINO accept them in these attributes; an operator whose runtime refuses them (as
OpenVINO's Clamp refuses a NaN bound) checks that itself.
"""

from __future__ import annotations

import numbers

import numpy as np

from . import dtypes as _dt

_FLOAT_EXPECTED = "a real number (a Python int or float, or a NumPy integer or floating scalar)"
_INT_EXPECTED = "an integer (a Python int or bool, or a NumPy integer scalar)"


def float_attribute(op: str, name: str, value) -> float:
    """Float attribute ``name`` of operator ``op`` as a Python float (see the module docstring)."""
    if hasattr(value, "dtype") and not isinstance(value, np.generic):
        value = _one_element(op, name, value, _FLOAT_EXPECTED)
    if isinstance(value, (bool, np.bool_)) or not (isinstance(value, numbers.Real) or _is_float_scalar(value)):
        raise TypeError(f"{op}: attribute {name!r} must be {_FLOAT_EXPECTED}, got {_given(value)}")
    try:
        return float(value)
    except OverflowError:
        raise ValueError(f"{op}: attribute {name!r} must be a number a float holds, got {_given(value)}") from None


def int_attribute(op: str, name: str, value) -> int:
    """Int attribute ``name`` of operator ``op`` as a Python int (see the module docstring)."""
    if hasattr(value, "dtype") and not isinstance(value, np.generic):
        value = _one_element(op, name, value, _INT_EXPECTED)
    if not isinstance(value, (numbers.Integral, np.bool_)):
        raise TypeError(f"{op}: attribute {name!r} must be {_INT_EXPECTED}, got {_given(value)}")
    return int(value)


def _one_element(op: str, name: str, value, expected: str):
    """The one element of array ``value`` (NumPy, CuPy, ...) as a NumPy scalar."""
    size = getattr(value, "size", None)
    if size != 1:
        raise ValueError(f"{op}: attribute {name!r} must be {expected}, got an array of shape "
                         f"{tuple(getattr(value, 'shape', ()))} (an array must hold exactly one element)")
    host = value.get() if hasattr(value, "get") and not isinstance(value, np.ndarray) else value  # CuPy: to host
    return np.asarray(host).reshape(())[()]


def _is_float_scalar(value) -> bool:
    """A NumPy scalar of a float type that ``numbers.Real`` does not know (ml_dtypes' bfloat16)."""
    return isinstance(value, np.generic) and _dt.kind(value.dtype) == "f"


def _given(value) -> str:
    """What was given, for an error message: its type and a short repr."""
    shown = repr(value)
    shown = f"{type(value).__name__} {shown[:60] + '...' if len(shown) > 60 else shown}"
    return shown + " (a string is not parsed: pass the number)" if isinstance(value, (str, bytes)) else shown
