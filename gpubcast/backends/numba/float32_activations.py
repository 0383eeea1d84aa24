"""The activations that call a math function (issue #22: softplus, mish, gelu, gelu_tanh, elu, celu,
swish, selu) in float32 lanes, for float32, float16 and bfloat16 (``float32_math``'s kernels: the row
loops vectorise at full width).

Each follows the registry's formula (``gpubcast.ops.ACTIVATIONS``) with its special values (NaN,
+-inf, +-0 as the float64 formula gives them, rounded), and is within ``ULPS[name]`` ulps of the
true value (tests/numba/test_float32_math_exhaustive.py: every float32 x, default parameters).  Where a
formula's argument would lose its low bits in float32 (gelu's x^2 / 2, gelu_tanh's cubic, swish's
beta x), the argument is carried as a double-float (FMA gives a product's error).
"""

from __future__ import annotations

from .cache import register_jitable
from .codecs import fabs_, ffma
from .float32_math import (F, INF, NAN, erf_small, erfc_times_wide, exp_parts, expm1_single, half_square,
                           inlined, ldexp, ldexp_scaled, ldexp_wide, log1p_exp_minus, sigmoid_scaled, sigmoid_times,
                           split_product, two_sum)

#: The most ulps each activation is from the true value (default parameters, every float32 x; as
#: ``float32_math.ULPS``, measured and held by tests/numba/test_float32_math_exhaustive.py)
ULPS = {"softplus": 1.5, "mish": 1.0, "gelu": 1.25, "gelu_tanh": 1.5, "swish": 1.25, "elu": 1.25, "selu": 1.75,
        "celu": 1.25}
# measured maxima (exhaustive): softplus 1.282 (at 8.9e-08), mish 0.793 (-91.93), gelu 1.201 (-3.0150),
# gelu_tanh 1.336 (-2.7510), swish 1.093 (-38.442), elu 1.011 (-0.6931), selu 1.554 (-0.3174), celu 1.011
# (-0.6931).  Other parameters add the rounding of their product: elu's and celu's alpha * expm1, swish's
# none (beta x is exact)

_ZERO, _ONE, _TWO, _HALF = F(0.0), F(1.0), F(2.0), F(0.5)
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
    """x tanh(softplus(x)) = x P / (P + Q), e = e^-|x|: x <= 0: P = e (e + 2), Q = 2; x > 0: P = 1 + 2e,
    Q = 2 e^2 (tanh(ln(1 + e^x)) written out); e, P, P + Q and x P as double-floats, the quotient
    rounded once after its residual's correction.  Below -24 x e^x (softplus = e^x within 2^-35, tanh
    of it = it), rounded once; inf at inf, NaN at -inf (-inf times 0, as the formula)."""
    a = fabs_(x)
    m, m_lo, n = exp_parts(-(a if a < F(24.0) else F(24.0)))
    e, e_lo = ldexp(m, n), ldexp(m_lo, n)                # exact scalings: e >= 2^-35
    t = e + _TWO
    t_lo = ((_TWO - t) + e) + e_lo
    n_hi, n_lo = split_product(e, t)                      # x <= 0: P = e (e + 2)
    n_lo = n_lo + ffma(e, t_lo, e_lo * t)
    d_hi = n_hi + _TWO
    d_lo = ((_TWO - d_hi) + n_hi) + n_lo
    p_hi = ffma(e, _TWO, _ONE)                            # x > 0: P = 1 + 2e
    p_lo = ((_ONE - p_hi) + (e + e)) + (e_lo + e_lo)
    q_hi, q_lo = split_product(e + e, e)                  # Q = 2 e^2
    q_lo = ffma(F(4.0) * e, e_lo, q_lo)
    s_hi = p_hi + q_hi
    s_lo = (((p_hi - s_hi) + q_hi) + p_lo) + q_lo
    neg = x <= _ZERO
    num, num_lo = split_product(x, n_hi if neg else p_hi)
    num_lo = ffma(x, n_lo if neg else p_lo, num_lo)
    den, den_lo = (d_hi, d_lo) if neg else (s_hi, s_lo)
    q0 = num / den
    q = ffma(ffma(-q0, den_lo, ffma(-q0, den, num) + num_lo), _ONE / den, q0)
    q = q if q0 != _ZERO else q0                          # a zero keeps its sign
    tm, tm_lo, k = exp_parts(x if x > F(-110.0) else F(-110.0))
    tail = ldexp(ffma(x, tm, x * tm_lo), k) if x > F(-110.0) else x * _ZERO     # below -110: |x| e^x < 2^-150
    y = tail if x < F(-24.0) else q
    return x if x == INF else y


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


# v = x (A + B x^2), A = 2 sqrt(2 / pi), B = 0.044715 A: each constant as two float32 parts (hi + lo)
_GELU_A, _GELU_B = 1.5957691216057308, 1.5957691216057308 * 0.044715
_A_HI, _B_HI = F(_GELU_A), F(_GELU_B)
_A_LO, _B_LO = F(_GELU_A - float(_A_HI)), F(_GELU_B - float(_B_HI))
_GELU_TANH_X = F(13.5)             # |x| beyond: |v| > 197, x sigmoid(v) is x, or 0 of x's sign
_GELU_TANH_V = F(131.0)            # |v| bound of ``sigmoid_scaled``: beyond, |x| sigmoid(v) < 2^-150; n >= -190


@register_jitable
def gelu_tanh_argument(x):
    """(vh, vl): v = x (A + B x^2) = vh + vl to about 2^-44 relative, in float32, for |x| <= 13.5: x^2
    and each product exactly by FMA, A + B x^2 by TwoSum; the roundings left are of terms 2^-24 of
    the result or smaller (its rounding in float32 would be |v| 2^-24 of the result where sigmoid(v)
    is e^v)."""
    s, s_lo = split_product(x, x)
    u = _B_HI * s
    u_lo = ffma(_B_HI, s_lo, ffma(_B_LO, s, ffma(_B_HI, s, -u)))      # B x^2 - u
    p, p_err = two_sum(_A_HI, u)
    p_lo = (p_err + u_lo) + _A_LO                                      # TwoSum's error, then the small terms
    vh = x * p
    return vh, ffma(x, p_lo, ffma(x, p, -vh))


@inlined
def gelu_tanh_single(x):
    """x sigmoid(v), v = 2 sqrt(2/pi) (x + 0.044715 x^3) as a double-float (``gelu_tanh_argument``) of x
    clamped to +-13.5: x above it (inf too), 0 of x's sign below -11.6; NaN at -inf (the formula's
    -inf times 0)."""
    xc = x if x > -_GELU_TANH_X else -_GELU_TANH_X             # NaN -> -13.5: y = x * 0 below
    xc = xc if xc < _GELU_TANH_X else _GELU_TANH_X
    vh, vl = gelu_tanh_argument(xc)
    q, n = sigmoid_scaled(xc, vh, vl, _GELU_TANH_V)
    y = ldexp_scaled(q, n)                      # |q| >= 0.1 where n < 0: q 2^(n + 64) is exact
    y = y if vh > -_GELU_TANH_V else x * _ZERO
    y = x if x > _GELU_TANH_X else y
    return NAN if x == -INF else y


@inlined
def swish_single(x, beta):
    """x sigmoid(beta x), beta x a double-float; for non-finite x or beta the formula itself,
    x / (1 + e^-(beta x)), in float32 (its infinities and NaNs are the float64 formula's)."""
    vh, vl = split_product(beta, x)
    finite = fabs_(vh) < F(348.0)
    vl = vl if finite else _ZERO
    q, n = sigmoid_times(x, vh, vl, F(348.0))
    y = ldexp_wide(q, n)
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
    exact = (hi != _ZERO) & (fabs_(hi) < INF) & (fabs_(scale) < INF)   # else the product itself: zeros, infs
    neg = ffma(hi, scale, lo * scale) if exact else hi * scale
    return x * scale if x > _ZERO else neg
