"""An Array API namespace for the Array API test suite (data-apis/array-api-tests): the standard's
elementwise functions and ``where`` are gpubcast's, every other name is NumPy 2's (itself Array API
compatible).

    ARRAY_API_TESTS_MODULE=gpubcast.testing.array_api_namespace pytest array_api_tests/...

(``ci/array-api-tests`` runs the elementwise and special-case tests against this and against
NumPy, and compares.)  Arrays are NumPy arrays throughout, so the operators of an array
(``x1 + x2``) remain NumPy's: only the functions are gpubcast's.
"""

from __future__ import annotations

import numpy as np

import gpubcast as gb

#: the Array API (2024.12) elementwise functions, each served by gpubcast's function of that name
ELEMENTWISE = tuple((
    "abs acos acosh add asin asinh atan atan2 atanh bitwise_and bitwise_left_shift bitwise_invert bitwise_or "
    "bitwise_right_shift bitwise_xor ceil clip conj copysign cos cosh divide equal exp expm1 floor floor_divide "
    "greater greater_equal hypot imag isfinite isinf isnan less less_equal log log1p log2 log10 logaddexp "
    "logical_and logical_not logical_or logical_xor maximum minimum multiply negative nextafter not_equal "
    "positive pow real reciprocal remainder round sign signbit sin sinh square sqrt subtract tan tanh trunc"
).split())

#: the other functions of the standard that gpubcast has (``where``: a searching function there)
OTHERS = ("where",)

globals().update({name: getattr(gb, name) for name in ELEMENTWISE + OTHERS})


def __getattr__(name):
    """Every other name (dtypes, creation functions, constants, ``__array_api_version__``): NumPy's."""
    try:
        return getattr(np, name)
    except AttributeError:
        raise AttributeError(f"module {__name__!r} has no attribute {name!r}") from None
