"""float32 math functions computed in float64 by arithmetic only, rounded once to float32: the
inverse hyperbolic ones, cbrt, hypot (exp, log, tanh, sinh, cosh, erf and the activations:
``float32_math``; sin, cos, tan, their inverses and arctan2: ``float32_trig``, in float32 lanes).

The C library's float functions are calls LLVM cannot vectorise (Numba has no vector math library
here: NumPy's own SIMD loops are the peer to beat); these functions are float64 polynomials and
selects, no branches and no calls, so the row loops of them vectorise (at half the lanes of float32
arithmetic).  Each result is the float64 value (relative error below 3e-9, a tenth of a float32 ulp)
rounded once: within an ulp of the true value, as NumPy's float64 result rounded once is
(``ops.MATH_FUNCTION_ULPS``).  float16 and bfloat16 compute in float32 and so through these too.

Every function takes and returns a float32 value and gives NumPy's special values (NaN, +-inf,
+-0, the domain edges).

Coefficients: Taylor series (1/k! and 1/(2k+1)), truncated where the next term is below 3e-9
relative (a tenth of a float32 ulp).
"""

from __future__ import annotations

import numpy as np

from .cache import register_jitable
from .codecs import f64_bits, f64_from_bits, fabs_, fcopysign, ffloor, fsqrt
from .float32_math import inlined

INF, NAN = float("inf"), float("nan")
LN2_HI, LN2_LO = 6.93147180369123816490e-01, 1.90821492927058770002e-10  # ln 2 = HI + LO, HI * n exact
LN2, INV_LN2 = 0.6931471805599453, 1.4426950408889634
SQRT2 = 1.4142135623730951


# --- float64 cores -----------------------------------------------------------------------------------

@register_jitable
def _atanh2(s):
    """2 atanh(s) = ln((1 + s) / (1 - s)) for |s| <= 0.1716 (3 - 2 sqrt 2): odd series to s ** 15."""
    z = s * s
    p = 1.0 / 9.0 + z * (1.0 / 11.0 + z * (1.0 / 13.0 + z * (1.0 / 15.0)))
    return 2.0 * s * (1.0 + z * (1.0 / 3.0 + z * (1.0 / 5.0 + z * (1.0 / 7.0 + z * p))))


@register_jitable
def _log_reduced(u):
    """(k, s) with u = 2 ** k (1 + s) / (1 - s), |s| <= 0.1716, for positive finite normal u."""
    k, m = _exponent_split(u)                                      # m in [1, 2)
    high = m > SQRT2
    m = 0.5 * m if high else m                                     # [sqrt(1/2), sqrt(2))
    k = k + 1.0 if high else k
    return k, (m - 1.0) / (m + 1.0)


@register_jitable
def _log_specials(u, r):
    """``r`` where u is positive and finite; else ln(u)'s special value (-inf at 0, inf, NaN)."""
    if u > 0.0 and u < INF:
        return r
    if u == 0.0:
        return -INF
    return u if u == INF else NAN


@inlined
def log1p64(x):
    """ln(1 + x): near 0 (1 + x in [sqrt(1/2), sqrt(2))) 2 atanh(x / (2 + x)), without rounding 1 + x."""
    u = 1.0 + x
    k, s = _log_reduced(u)
    near = (x > -0.2928932188134524) & (x < 0.41421356237309515)
    r = _atanh2(x / (2.0 + x)) if near else k * LN2 + _atanh2(s)
    return _log_specials(u, r) if x == x else x


@register_jitable
def _nan_kept(v, r):
    """float32 ``r``, or v itself where v is NaN."""
    return np.float32(r) if v == v else v


# --- float32 functions -------------------------------------------------------------------------------

@inlined
def arcsinh_single(v):
    x = np.float64(v)
    a = fabs_(x)
    z = a * a
    r = log1p64(a + z / (1.0 + fsqrt(1.0 + z)))  # ln(a + sqrt(1 + a^2)) without cancellation near 0
    return _nan_kept(v, fcopysign(r if a < INF else a, x))


@inlined
def arccosh_single(v):
    x = np.float64(v)
    t = x - 1.0                                   # exact: x is a float32
    r = log1p64(t + fsqrt(fabs_(t * (x + 1.0))))
    return np.float32(r if x >= 1.0 else NAN)     # x < 1 (and NaN): NaN


@inlined
def arctanh_single(v):
    x = np.float64(v)
    a = fabs_(x)
    return np.float32(fcopysign(0.5 * log1p64(2.0 * a / (1.0 - a)), x))  # a > 1: log1p(< -1) is NaN


@inlined
def hypot_single(y, x):
    """hypot: exact squares in float64 (no overflow for float32), one rounding; inf wins over NaN (C99)."""
    a, b = np.float64(y), np.float64(x)
    r = fsqrt(a * a + b * b)
    return np.float32(INF) if (fabs_(a) == INF) | (fabs_(b) == INF) else np.float32(r)


@inlined
def cbrt_single(v):
    """cbrt: an estimate from the exponent's third, then Newton steps in float64 (each squares the error)."""
    x = np.float64(v)
    a = fabs_(x)
    k, m = _exponent_split(a)                    # a = m * 2^k, m in [1, 2)
    q = ffloor(k / 3.0)
    m = m * (1.0 if k - 3.0 * q == 0.0 else (2.0 if k - 3.0 * q == 1.0 else 4.0))  # a = m 2^(3q), m in [1, 8)
    y = 0.6 + m * (0.3 - m * 0.0125)             # cbrt m within 12 % on [1, 8)
    for _ in range(4):
        y = y - (y - m / (y * y)) / 3.0          # Newton on y^3 = m: 12 % -> 1e-2 -> 1e-4 -> 1e-8 -> 1e-16
    r = fcopysign(y * f64_from_bits((np.int64(q) + np.int64(1023)) << np.int64(52)), x)
    return v if (a == 0.0) | (a == INF) | (x != x) else np.float32(r)


@register_jitable
def _exponent_split(a):
    """(k, m): a = m * 2 ** k, m in [1, 2), for positive finite normal float64 a."""
    bits = np.int64(f64_bits(a))
    k = ((bits >> np.int64(52)) & np.int64(0x7FF)) - np.int64(1023)
    return np.float64(k), f64_from_bits((bits & np.int64(0x000FFFFFFFFFFFFF)) | np.int64(0x3FF0000000000000))
