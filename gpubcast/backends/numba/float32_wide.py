"""float32 math functions computed in float64 by arithmetic only, rounded once to float32: the
inverse trigonometric ones, hypot, arctan2 (exp, log, tanh, sinh, cosh, cbrt, erf and the
activations: ``float32_math``; sin, cos and tan: ``float32_trig``; arcsinh, arccosh and arctanh:
``float32_inverse_hyperbolic``, in float32 lanes).

The C library's float functions are calls LLVM cannot vectorise (Numba has no vector math library
here: NumPy's own SIMD loops are the peer to beat); these functions are float64 polynomials and
selects, no branches and no calls, so the row loops of them vectorise (at half the lanes of float32
arithmetic).  Each result is the float64 value (relative error below 3e-9, a tenth of a float32 ulp)
rounded once: within an ulp of the true value, as NumPy's float64 result rounded once is
(``ops.MATH_FUNCTION_ULPS``).  float16 and bfloat16 compute in float32 and so through these too.

Every function takes and returns a float32 value and gives NumPy's special values (NaN, +-inf,
+-0, the domain edges).

Coefficients: fdlibm's minimax atan polynomial; cbrt by Newton steps from an estimate.
"""

from __future__ import annotations

import numpy as np

from .cache import register_jitable
from .codecs import f64_bits, f64_from_bits, fabs_, fcopysign, fsqrt
from .float32_math import inlined

INF, NAN = float("inf"), float("nan")


@register_jitable
def _nan_kept(v, r):
    """float32 ``r``, or v itself where v is NaN."""
    return np.float32(r) if v == v else v


@register_jitable
def atan64(x):
    """atan x to 1e-15 for any x (NaN: callers select): t = min(|x|, 1/|x|) <= 1; beyond 7/16 and
    11/16 atan t = atan c + atan((t - c) / (1 + t c)) for c = 1/2, 1; fdlibm's minimax polynomial."""
    a = fabs_(x)
    inverted = a > 1.0
    t = 1.0 / a if inverted else a
    c = 0.0 if t < 0.4375 else (0.5 if t < 0.6875 else 1.0)
    base = 0.0 if t < 0.4375 else (4.63647609000806093515e-01 if t < 0.6875 else 7.85398163397448278999e-01)
    u = (t - c) / (1.0 + t * c)
    z = u * u
    w = z * z
    s1 = z * (3.33333333333329318027e-01 + w * (1.42857142725034663711e-01 + w * (9.09088713343650656196e-02 + w * (
        6.66107313738753120669e-02 + w * (4.97687799461593236017e-02 + w * 1.62858201153657823623e-02)))))
    s2 = w * (-1.99999999998764832476e-01 + w * (-1.11111104054623557880e-01 + w * (-7.69187620504482999495e-02 + w * (
        -5.83357013379057348645e-02 + w * -3.65315727442169155270e-02))))
    r = base + (u - u * (s1 + s2))
    r = 1.5707963267948966 - r if inverted else r
    return fcopysign(r, x)


@inlined
def arctan_single(v):
    return _nan_kept(v, atan64(np.float64(v)))


@inlined
def arcsin_single(v):
    x = np.float64(v)
    r = atan64(x / fsqrt(fabs_((1.0 - x) * (1.0 + x))))  # |x| = 1: x / 0 = +-inf, atan -> +-pi/2
    return np.float32(r if fabs_(x) <= 1.0 else NAN)


@inlined
def arccos_single(v):
    x = np.float64(v)
    r = 2.0 * atan64(fsqrt(fabs_((1.0 - x) / (1.0 + x))))  # x = -1: sqrt(inf), atan -> pi/2
    return np.float32(r if fabs_(x) <= 1.0 else NAN)


@inlined
def arctan2_single(y, x):
    """atan2 with C99's special values (NumPy's): the quadrant from the signs, inf/inf as odd multiples of pi/4."""
    yy, xx = np.float64(y), np.float64(x)
    ay, ax = fabs_(yy), fabs_(xx)
    both_inf = (ay == INF) & (ax == INF)
    t = atan64(ay / ax)                          # ay/ax: inf for ax = 0 (pi/2)
    t = 0.0 if ay == 0.0 else t                  # 0/0 too: +-0 or +-pi by x's sign, as C99
    t = 0.7853981633974483 if both_inf else t
    t = (3.141592653589793 - t) if fcopysign(1.0, xx) < 0 else t   # x < 0 or x = -0
    t = 1.5707963267948966 if (ax == 0.0) & (ay != 0.0) else t
    r = fcopysign(t, yy)
    return np.float32(r) if (yy == yy) & (xx == xx) else np.float32(NAN)


@inlined
def hypot_single(y, x):
    """hypot: exact squares in float64 (no overflow for float32), one rounding; inf wins over NaN (C99)."""
    a, b = np.float64(y), np.float64(x)
    r = fsqrt(a * a + b * b)
    return np.float32(INF) if (fabs_(a) == INF) | (fabs_(b) == INF) else np.float32(r)


@register_jitable
def _exponent_split(a):
    """(k, m): a = m * 2 ** k, m in [1, 2), for positive finite normal float64 a."""
    bits = np.int64(f64_bits(a))
    k = ((bits >> np.int64(52)) & np.int64(0x7FF)) - np.int64(1023)
    return np.float64(k), f64_from_bits((bits & np.int64(0x000FFFFFFFFFFFFF)) | np.int64(0x3FF0000000000000))
