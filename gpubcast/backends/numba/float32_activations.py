"""The activations that call a math function (issue #22: softplus, mish, gelu, gelu_tanh, elu, celu,
swish, selu) in float32 lanes, for float32, float16 and bfloat16 (``float32_math``'s kernels: the row
loops vectorise at full width).

Each follows the registry's formula (``gpubcast.ops.ACTIVATIONS``) with its special values (NaN,
+-inf, +-0 as the float64 formula gives them, rounded), and is within ``ULPS[name]`` ulps of the
true value (tests/test_float32_math_exhaustive.py: every float32 x, default parameters).  Where a
formula's argument would lose its low bits in float32 (gelu's x^2 / 2, gelu_tanh's cubic, swish's
beta x), the argument is carried as a double-float (FMA gives a product's error) or, for
gelu_tanh's cubic, computed in float64 and split.
"""

from __future__ import annotations

import numpy as np

from .codecs import fabs_, ffma
from .float32_math import (F, INF, NAN, erf_small, erfc_times_wide, exp_reduce, expm1_single, half_square, inlined,
                           ldexp, ldexp_wide, log1p_exp_minus, sigmoid_parts, split_product, tanh_single)

#: The most ulps each activation is from the true value (default parameters, every float32 x; as
#: ``float32_math.ULPS``, measured and held by tests/test_float32_math_exhaustive.py)
ULPS = {"softplus": 1.5, "mish": 3.0, "gelu": 1.25, "gelu_tanh": 2.0, "swish": 2.0, "elu": 1.5, "selu": 2.0,
        "celu": 1.5}

_ZERO, _ONE, _HALF = F(0.0), F(1.0), F(0.5)
# 1 / sqrt 2 = _INV_SQRT2 + _INV_SQRT2_LO
_INV_SQRT2 = F(0.7071067811865476)
_INV_SQRT2_LO = F(0.7071067811865476 - float(_INV_SQRT2))


@inlined
def softplus_single(x):
    """ln(1 + e^x) as logaddexp(0, x): max(x, 0) + log1p(e^-|x|); inf at inf, 0 at -inf."""
    r = log1p_exp_minus(fabs_(x))
    r = x + r if x > _ZERO else r
    return r if x == x else x


@inlined
def mish_single(x):
    """x tanh(softplus(x)); below -24 (softplus = e^x within 2^-35, tanh of it = it) x e^x rounded
    once: the product of a subnormal e^x would lose its bits."""
    xc = x if x > F(-110.0) else F(-110.0)
    n, p = exp_reduce(xc)
    tail = ldexp(x * (_ONE + p), n) if x > F(-110.0) else x * _ZERO     # below -110: |x| e^x < 2^-150
    return tail if x < F(-24.0) else x * tanh_single(softplus_single(x))


@inlined
def gelu_single(x):
    """x / 2 erfc(-x / sqrt 2): a = |x| / sqrt 2 below 1/2 (x > 0) or 1/4 (x < 0): h + h erf(x / sqrt 2),
    h = x / 2; else x - h erfc(a) (x > 0) or h erfc(a) (x < 0), a^2 = x^2 / 2 exact (``half_square``)
    and erfc's u P(u) in float64 (``erfc_times_wide``).
    NaN at -inf (-inf times 0, as the formula), inf at inf, -0 at -0."""
    h = _HALF * x
    t = x * _INV_SQRT2
    a = fabs_(t)
    b = a if a < F(10.5) else F(10.5)
    a_lo = ffma(fabs_(x), _INV_SQRT2, -a) + fabs_(x) * _INV_SQRT2_LO     # |x| / sqrt 2 - a
    hi, lo = half_square(x)
    e = erfc_times_wide(h, b, a_lo if a < F(10.5) else _ZERO, hi, lo)        # h erfc(a): negative for x < 0
    e = e if a < F(10.5) else h * _ZERO          # erfc(10.5) |h| < 2^-150 for every |h| up to 7.5; beyond, 0
    big = x - e if x > _ZERO else e
    small = a < (_HALF if x > _ZERO else F(0.25))      # x < 0: 1 + erf(t) >= 0.72 there, no cancellation
    y = ffma(h, erf_small(t), h) if small | (x != x) else big
    y = h if h == _ZERO else y                    # +-0, and the two smallest subnormals: h rounds to +-0
    y = x if x == INF else y
    return NAN if x == -INF else y


_GELU_C, _GELU_K = 1.5957691216057308, 0.044715   # 2 sqrt(2 / pi), and the cubic's coefficient (float64)
_SIGMOID_LIMIT = F(174.0)          # sigmoid_parts' |v| bound for ``ldexp`` (n >= -252)


@inlined
def gelu_tanh_single(x):
    """x sigmoid(v), v = 2 sqrt(2/pi) (x + 0.044715 x^3) in float64 (its rounding in float32 would be
    |v| 2^-24 of the result where sigmoid(v) is e^v), split into two float32 parts."""
    w = np.float64(x)
    v = _GELU_C * (w + _GELU_K * (w * w * w))
    v = v if v > -348.0 else -348.0
    v = v if v < 348.0 else 348.0
    vh = F(v)
    q, n = sigmoid_parts(vh, F(v - np.float64(vh)), _SIGMOID_LIMIT)
    y = ldexp(x * q, n)
    y = y if vh > -_SIGMOID_LIMIT else x * _ZERO  # x <= -12.9: |x| sigmoid(v) < 2^-150
    return NAN if x == -INF else y


@inlined
def swish_single(x, beta):
    """x sigmoid(beta x), beta x a double-float; for non-finite x or beta the formula itself,
    x / (1 + e^-(beta x)), in float32 (its infinities and NaNs are the float64 formula's)."""
    vh, vl = split_product(beta, x)
    finite = fabs_(vh) < F(348.0)
    vl = vl if finite else _ZERO
    q, n = sigmoid_parts(vh, vl, F(348.0))
    y = ldexp_wide(x * q, n)
    edge = (fabs_(x) < INF) & (fabs_(beta) < INF)
    from_formula = x / (_ONE + _exp_or_inf(-(beta * x)))
    return y if edge else from_formula


@inlined
def _exp_or_inf(v):
    """e ** v for the non-finite cases of swish (v is +-inf, NaN, or anything when an operand is inf)."""
    return INF if v > _ZERO else (_ZERO if v < _ZERO else (_ONE if v == _ZERO else v))


@inlined
def elu_single(x, alpha):
    """x if x > 0 else alpha (e^x - 1): alpha times expm1 rounded once."""
    return x if x > _ZERO else alpha * expm1_single(x)


@inlined
def celu_single(x, alpha):
    """max(0, x) + min(0, alpha expm1(x / alpha)), NumPy's maximum and minimum: NaN-propagating, the
    second operand on ties (celu(-0) is -0)."""
    t = alpha * expm1_single(x / alpha)
    return (_ZERO if x < _ZERO else x) + (_ZERO if t > _ZERO else t)


@inlined
def selu_single(x, alpha, scale):
    """(x if x > 0 else alpha expm1(x)) scale: alpha expm1(x) an exact double-float, times scale
    rounded once."""
    hi, lo = split_product(alpha, expm1_single(x))
    neg = ffma(hi, scale, lo * scale) if hi != _ZERO else hi * scale     # a zero keeps its sign
    return x * scale if x > _ZERO else neg
