"""float32 arcsinh, arccosh and arctanh computed in float32 lanes: odd polynomials near 0, else
``float32_math``'s log1p of a double-float argument, each result rounded once.

Like ``float32_math``'s functions (whose module docstring says why: the C library's asinhf/acoshf/
atanhf are calls LLVM cannot vectorise), these are float32 arithmetic, ``llvm.fma``, ``llvm.sqrt``
and selects, no branches and no calls, so a row loop of one vectorises at the full width of the
machine (16 float32 lanes with AVX-512), twice the lanes of the float64 formulas
they replaced.

Accuracy: each function is within ``ULPS[name]`` ulps of the true value for every float32 input
(measured by tests/numba/test_float32_math_exhaustive.py against the C library's float64 asinh/acosh/
atanh; in ulps of the true value's binade, as ``float32_math.ULPS``).  float16 and bfloat16 compute
through these and round once more: within an ulp of their own.

Special values are NumPy's: NaN for NaN and outside the domain (arccosh below 1, arctanh beyond
+-1); arcsinh(+-inf) = +-inf, arccosh(inf) = inf, arccosh(1) = +0, arctanh(+-1) = +-inf; arcsinh and
arctanh keep -0 and give x itself for a subnormal x.

Algorithms, with a = |x| (FreeBSD msun's s_asinhf.c/e_acoshf.c/e_atanhf.c formulas, the arguments
carried as double-floats where their rounding would count, as fdlibm's log1p carries its own):
arcsinh a = a + a^3 P(a^2) below 1/2; up to 2^12 log1p((a - 1) + sqrt(1 + a^2)): a^2 exact (FMA),
1 + a^2 by TwoSum, a - 1 exact, the sum by Fast2Sum, the square root's low part from its exact
residual h - s^2 (FMA), a fraction whose division joins log1p's correction's; beyond,
ln 2a = (k + 1) ln 2 + ln(1 + f) for a = 2^k (1 + f) (1 / (4a^2) is below 2^-26 of it).
arccosh x = log1p(t + sqrt(t (x + 1))), t = x - 1 exact up to 2^12, t (x + 1) a double-float, its
square root as arcsinh's; beyond, ln 2x.  arctanh a = a + a^3 Q(a^2) below 1/2; up to 1,
log1p(q) / 2, q = 2a / (1 - a) (1 - a exact: Sterbenz), its low part from the division's exact
residual (FMA), again a fraction for log1p's division.  P and Q are minimax fits of
``tools/minimax.py`` (float32 coefficients), with the interval and the relative error at their
definition; the log1p reduction and sum are ``float32_math``'s (``log1p_reduced``,
``log_assembled``, FreeBSD's s_log1pf.c).
"""

from __future__ import annotations

import numpy as np

from .cache import register_jitable
from .codecs import fabs_, fcopysign, ffma, fsqrt
from .float32_math import inlined, log1p_reduced, log_assembled, log_split, split_product, two_sum

F = np.float32
INF, NAN = F("inf"), F("nan")
_ONE, _HALF = F(1.0), F(0.5)

#: The most ulps arcsinh, arccosh and arctanh are from the true value over every float32 input (as
#: ``float32_math.ULPS``): measured by tests/numba/test_float32_math_exhaustive.py, which holds them.
ULPS = {"arcsinh": 1.0, "arccosh": 1.0, "arctanh": 1.0}
# measured maxima (exhaustive): arcsinh 0.832 (at 0.74999994), arccosh 0.861 (1.0291122), arctanh 0.714
# (0.69676715): log1p's own error (0.872 at most) where its argument is a double-float; the float64 lanes
# they replace were within 0.5 + 2^-24

#: the odd polynomials below this (arcsinh, arctanh); log1p of a double-float from it
POLYNOMIAL_BELOW = F(0.5)
#: ln 2a above this (arcsinh, arccosh): 1 / (4 a^2) is below 2^-26 of the result, a^2 far from overflow
LN_2A_ABOVE = F(4096.0)

# asinh a - a = a^3 (A0 + A1 a^2 + ... + A4 a^8) for |a| <= 0.5: minimax, relative error 2^-29.6 of asinh a
_A0, _A1, _A2 = F(-0.1666664332151413), F(0.07498640567064285), F(-0.044382959604263306)
_A3, _A4 = F(0.028161080554127693), F(-0.013223540969192982)
# atanh a - a = a^3 (B0 + B1 a^2 + ... + B5 a^10) for |a| <= 0.5: minimax, relative error 2^-29.4 of atanh a
_B0, _B1, _B2 = F(0.33333301544189453), F(0.2000245451927185), F(0.14223742485046387)
_B3, _B4, _B5 = F(0.11816822737455368), F(0.0515858493745327), F(0.1764066070318222)


@register_jitable
def _log1p_sqrt_sum(v, h, h_lo):
    """``log1p_reduced``'s (k, f, c) of v + sqrt(h + h_lo) for |v| <= sqrt(h), h > 0, |h_lo| <=
    2^-23 h: s = sqrt(h) rounded, h - s^2 exact (FMA: the residual of a correctly rounded square
    root), its share (h - s^2 + h_lo) / 2s a fraction for c's division; v + s by Fast2Sum.  NaN c
    for h = 0."""
    s = fsqrt(h)
    w = s + v
    two_s = s + s
    lo = ffma((s - w) + v, two_s, ffma(-s, s, h) + h_lo)     # (w's rounding error + s's share) 2s
    return log1p_reduced(w, lo, two_s)


@register_jitable
def _ln_2a_or(a, k, f, c):
    """``log_assembled``'s (k, f, c) where a <= LN_2A_ABOVE; beyond, ln 2a's: a = 2 ** (k - 1) (1 + f), c = 0."""
    big = a > LN_2A_ABOVE
    ka, fa = log_split(a)
    return log_assembled(ka + _ONE if big else k, fa if big else f, F(0.0) if big else c)


@inlined
def arcsinh_single(x):
    """asinh x: the odd polynomial below 1/2, log1p(a + sqrt(1 + a^2) - 1) to 2^12, ln 2a beyond;
    -0 kept, +-inf, NaN (the polynomial's side)."""
    a = fabs_(x)
    z = a * a
    small = ffma(a * z, ffma(ffma(ffma(ffma(_A4, z, _A3), z, _A2), z, _A1), z, _A0), a)
    b = a if a < LN_2A_ABOVE else LN_2A_ABOVE
    zh, zl = split_product(b, b)
    h, hl = two_sum(_ONE, zh)
    k, f, c = _log1p_sqrt_sum(b - _ONE, h, hl + zl)   # b - 1 + sqrt(1 + b^2): b - 1 exact for b >= 1/2
    y = _ln_2a_or(a, k, f, c)
    y = a if a == INF else y
    return fcopysign(y if a >= POLYNOMIAL_BELOW else small, x)


@inlined
def arccosh_single(x):
    """acosh x: log1p(t + sqrt(t (x + 1))), t = x - 1, to 2^12, ln 2x beyond; +0 at 1, inf at inf,
    NaN below 1 and for NaN."""
    b = x if x < LN_2A_ABOVE else LN_2A_ABOVE
    t = b - _ONE                                      # exact: b in [1, 2^12] (below 1 not used)
    u = b + _ONE
    ul = (b - u) + _ONE                               # Fast2Sum: b + 1 = u + ul exactly
    p, pl = split_product(t, u)
    k, f, c = _log1p_sqrt_sum(t, p, ffma(t, ul, pl))  # t + sqrt(t (b + 1)); NaN c at x = 1
    y = _ln_2a_or(x, k, f, c)
    y = F(0.0) if x == _ONE else y
    y = INF if x == INF else y
    return y if x >= _ONE else NAN


@inlined
def arctanh_single(x):
    """atanh x: the odd polynomial below 1/2, log1p(2a / (1 - a)) / 2 from; +-inf at +-1, NaN beyond
    and for NaN, -0 kept."""
    a = fabs_(x)
    z = a * a
    p = ffma(ffma(ffma(ffma(ffma(_B5, z, _B4), z, _B3), z, _B2), z, _B1), z, _B0)
    small = ffma(a * z, p, a)
    d = _ONE - a                                      # exact for a >= 1/2 (Sterbenz)
    n = a + a
    q = n / d
    k, f, c = log1p_reduced(q, ffma(-q, d, n), d)     # n - q d exact: q's low part times d
    y = _HALF * log_assembled(k, f, c)
    y = y if a >= POLYNOMIAL_BELOW else small         # NaN: the polynomial's
    y = INF if a == _ONE else y
    return fcopysign(NAN if a > _ONE else y, x)
