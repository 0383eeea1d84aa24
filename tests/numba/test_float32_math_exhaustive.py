"""Every float32 input (all 2^32 bit patterns, NaNs and infinities included) of each float32-lane
function (backends/numba/float32_math.py, float32_trig.py, float32_inverse_hyperbolic.py,
float32_activations.py with default parameters; sin, cos and tan beyond their reduction's range
through the C library's) through gpubcast, against the C library's float64 function (within an ulp
of double: 2^-29 of a float32 ulp, so a result's error is measured to that, double rounding
included): within its stated bound (``ULPS``), NaN exactly where the true value is, zeros with the
true value's sign.  Marked slow: about a minute a function on two cores (``-m slow -k exhaustive -s``
prints the measured maxima)."""

from __future__ import annotations

import math

import numba
import numpy as np
import pytest
from numba import prange

from tests.support.float32_cases import SELU, ULPS, UNARY

pytestmark = pytest.mark.slow

_BIG = 1e30
_TWO128 = 2.0 ** 128
_CHUNK = 1 << 24


@numba.njit(inline="always")
def _softplus(x):
    return (x if x > 0.0 else 0.0) + math.log1p(math.exp(-abs(x)))


#: float64 references (the registry's formulas, the C library's functions)
REFERENCES = {
    "exp": lambda x: math.exp(x), "exp2": lambda x: np.exp2(x), "expm1": lambda x: math.expm1(x),
    "log": lambda x: math.log(x) if x > 0.0 else (-math.inf if x == 0.0 else math.nan),
    "log2": lambda x: math.log2(x) if x > 0.0 else (-math.inf if x == 0.0 else math.nan),
    "log10": lambda x: math.log10(x) if x > 0.0 else (-math.inf if x == 0.0 else math.nan),
    "log1p": lambda x: math.log1p(x) if x > -1.0 else (-math.inf if x == -1.0 else math.nan),
    "tanh": lambda x: math.tanh(x), "erf": lambda x: math.erf(x),
    "sin": lambda x: math.sin(x), "cos": lambda x: math.cos(x), "tan": lambda x: math.tan(x),
    "arcsin": lambda x: math.asin(x) if abs(x) <= 1.0 else math.nan,
    "arccos": lambda x: math.acos(x) if abs(x) <= 1.0 else math.nan, "arctan": lambda x: math.atan(x),
    "sinh": lambda x: math.sinh(x), "cosh": lambda x: math.cosh(x), "cbrt": lambda x: np.cbrt(x),
    "arcsinh": lambda x: math.asinh(x),
    "arccosh": lambda x: math.acosh(x) if x >= 1.0 else math.nan,
    "arctanh": lambda x: math.atanh(x) if abs(x) < 1.0 else (math.copysign(math.inf, x) if abs(x) == 1.0 else math.nan),
    "sigmoid": lambda x: 1.0 / (1.0 + math.exp(-x)),
    "gelu": lambda x: 0.5 * x * math.erfc(x * -0.7071067811865476),
    "gelu_tanh": lambda x: x / (1.0 + math.exp(-1.5957691216057308 * (x + 0.044715 * (x * x * x)))),
    "softplus": lambda x: _softplus(x) if x == x else x,
    "mish": lambda x: x * math.tanh(_softplus(x)) if x == x else x,
    "swish": lambda x: x / (1.0 + math.exp(-x)),
    "elu": lambda x: x if x > 0.0 else math.expm1(x),
    "celu": lambda x: (0.0 if x < 0.0 else x) + (0.0 if math.expm1(x) > 0.0 else math.expm1(x)),
    "selu": lambda x: (x if x > 0.0 else SELU[0] * math.expm1(x)) * SELU[1],
}


@numba.njit(inline="always")
def _ulp_error(got, want):
    """float32 ``got`` against float64 ``want``, in ulps of want's binade (tests/support/float32_cases.py)."""
    if want != want:
        return 0.0 if got != got else _BIG
    if got != got:
        return _BIG
    g = min(max(np.float64(got), -_TWO128), _TWO128)
    w = min(max(want, -_TWO128), _TWO128)
    if g == 0.0 and np.float32(w) == 0.0 and (np.signbit(got) != np.signbit(want)):
        return _BIG
    if g == w:
        return 0.0
    e = max(math.floor(math.log2(abs(w))) if w != 0.0 else -126.0, -126.0)
    return abs(g - w) / 2.0 ** (e - 23.0)


def _checker(reference):
    ref = numba.njit(inline="always")(reference)

    @numba.njit(parallel=True)
    def worst(x, got):
        parts = 64
        step = (x.size + parts - 1) // parts
        err, at = np.zeros(parts), np.zeros(parts, np.int64)
        for p in prange(parts):
            for i in range(p * step, min((p + 1) * step, x.size)):
                e = _ulp_error(got[i], ref(np.float64(x[i])))
                if e > err[p]:
                    err[p], at[p] = e, i
        k = np.argmax(err)
        return err[k], at[k]
    return worst


@pytest.mark.parametrize("name", sorted(UNARY))
def test_exhaustive_within_the_stated_bound(name):
    call = UNARY[name][0]
    worst = _checker(REFERENCES[name])
    max_err, max_at = 0.0, np.float32(0)
    for start in range(0, 2 ** 32, _CHUNK):
        x = np.arange(start, start + _CHUNK, dtype=np.uint64).astype(np.uint32).view(np.float32)
        with np.errstate(all="ignore"):
            e, i = worst(x, call(x))
        if e > max_err:
            max_err, max_at = e, x[i]
    print(f"\n{name}: max {max_err:.4f} ulps at {max_at!r} (bound {ULPS[name]})")
    assert max_err <= ULPS[name], f"{name}: {max_err} ulps at {max_at!r}"
