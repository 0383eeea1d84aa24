"""float32 math functions computed in float32 lanes: polynomials, fused multiply-adds and selects.

The C library's float functions are calls LLVM cannot vectorise (PyPI's llvmlite has no SVML); these
functions are float32 arithmetic, ``llvm.fma`` and selects, no branches and no calls, so a row loop of
one vectorises at the full width of the machine (16 float32 lanes a zmm register with AVX-512, 8 a ymm
register with AVX2), and twice as many lanes as the float64 formulas they replaced.
``llvm.fma`` rounds once on every machine, so the values do not depend on the CPU (a machine without
FMA gets the C library's ``fmaf`` for it: the same values, not vectorised).

Accuracy: each function is within ``ULPS[name]`` ulps of the true value (max over every float32
input, measured by tests/numba/test_float32_math_exhaustive.py against the C library's float64 function;
an ulp of the true value's binade, 2^-149 below 2^-126, infinity counted as 2^128).  float16 and
bfloat16 compute through these and round once more: within an ulp of their own.

Special values are NumPy's: NaN in, NaN out; +-inf and +-0 as the C library gives them; the
results overflow to inf and underflow through the subnormals (gradually, rounded once: no flush to
zero) where the true value does.

Algorithms and their sources, cited at each: Cody-Waite reduction x = n ln2 + r (|r| <= ln2/2,
ln 2 in two parts with FMA, as SLEEF's ``expf``); FreeBSD msun's ``logf``/``log2f``/``log10f``/
``log1pf`` for the logarithms' reduction and assembly (k ln2 in two parts, the hi/lo split before
the 1/ln 2 and 1/ln 10 products, log1p's correction term), with a polynomial of this module's in
place of their s = f / (2 + f) kernel (no division: half the time).  cbrt: the inverse cube root's
magic-constant estimate (the bit trick of the fast inverse square root, its constant fitted here) and
Newton steps without a division, then one step on y^3 = a with an exact residual (Markstein's
correction).  The rational tanh of Eigen
and XLA (13/6, "a couple of ulps") and XNNPACK (9/6: 8 ulps, measured here) is faster but not
used.  The polynomials are this module's own minimax fits (``tools/minimax.py`` makes
them: discrete minimax by linear programming, coefficients rounded to float32 one at a time, the
rest refitted), with the interval and the relative error of each at its definition.
"""

from __future__ import annotations

import numpy as np

from .cache import register_jitable
from .codecs import f32_bits, f32_from_bits, f32_split_sqrt2, fabs_, fcopysign, ffma, frint, fsqrt

F = np.float32
I32 = np.int32
INF, NAN = F("inf"), F("nan")
_ONE, _TWO, _HALF = F(1.0), F(2.0), F(0.5)
_TWO_M64 = F(2.0 ** -64)

#: The most ulps each function is from the true value, over every float32 input (in ulps of the true
#: value's binade, 2^-149 below 2^-126; inf counted as 2^128): measured by
#: tests/numba/test_float32_math_exhaustive.py (all 2^32 inputs), which holds them (the sampled test in
#: tests/numba/test_float32_math.py too).  ``logaddexp``/``logaddexp2`` are in ulps of max(|result|, 1)
#: (NumPy's own float32 formula cancels near a 0 result), sampled.
ULPS = {"exp": 1.0, "exp2": 1.25, "expm1": 1.5, "log": 1.0, "log2": 1.0, "log10": 1.0, "log1p": 1.0,
        "tanh": 1.25, "sigmoid": 1.25, "erf": 1.0, "sinh": 1.0, "cosh": 1.0, "cbrt": 1.0,
        "logaddexp": 2.0, "logaddexp2": 2.0}
# measured maxima (exhaustive): exp 0.775 (at -87.7355), exp2 1.044 (-0.4984), expm1 1.455 (16.9829),
# log 0.852 (1.3990), log2 0.890 (0.7001), log10 0.880 (0.6272), log1p 0.872 (0.3991), tanh 1.198
# (0.6261), sigmoid 1.066 (-5.8557), erf 0.989 (0.9620), sinh and cosh 0.674 (27.407316), cbrt 0.514
# (0.1126979)

#: the functions' compile options: LLVM inlines each body where it is called (``alwaysinline``),
#: so a row loop over one vectorises however large the body; what they call inherits the option.
#: (Numba-level inlining, ``inline="always"``, vectorised them too but multiplied compile time
#: 10-40x, measured: Numba re-types the body at every call site.)
INLINE = {"forceinline": True}


def inlined(fn):
    return register_jitable(**INLINE)(fn)  # a fresh decorator each time: Numba's pops its options


# --- shared pieces -----------------------------------------------------------------------------------

_LOG2E = F(1.4426950408889634)
# ln 2 = _LN2_HI + _LN2_LO (SLEEF's L2Uf/L2Lf): _LN2_HI has 16 bits, so n * _LN2_HI is exact for |n| < 2^8
# and x - n * _LN2_HI is exact where |x - n ln 2| <= ln2/2
_LN2_HI, _LN2_LO = F(0.693145751953125), F(1.428606765330187e-06)
_LN2 = F(0.6931471805599453)
# e^r - 1 - r = r^2 (E2 + E3 r + ... + E6 r^4) for |r| <= ln2/2: minimax, relative error 2^-28.2 of e^r
_E2, _E3, _E4 = F(0.4999999403953552), F(0.1666652262210846), F(0.04166829213500023)
_E5, _E6 = F(0.008368532173335552), F(0.0013818301958963275)
#: exp's argument range: below, e^x < 2^-150 (rounds to 0); above, e^x > 2^128 (overflows)
EXP_LOW, EXP_HIGH = F(-104.0), F(89.0)


@register_jitable
def _pow2(n):
    """2 ** n for an int32 n in [-126, 127] (a normal float32, built from its bits)."""
    return f32_from_bits((n + I32(127)) << I32(23))


@register_jitable
def ldexp_scaled(v, nf):
    """v * 2 ** n rounded once, for an integral float32 n in [-190, 63] and a v whose product by
    2 ** (n + 64) is exact (normal, or the result below 2^-150 anyway): that product, then 2 ** -64
    (one power where ``ldexp`` has two)."""
    return v * _pow2(I32(nf) + I32(64)) * _TWO_M64


@register_jitable
def pow2_scaled(nf):
    """2 ** n for an integral float32 n in [-150, 63], rounded once (subnormal below -126, 0 at -150)."""
    return ldexp_scaled(_ONE, nf)


@register_jitable
def ldexp(v, nf):
    """v * 2 ** nf, rounded once, for an integral float32 nf in [-252, 252] and a v whose product by
    2 ** (nf // 2) stays normal: two exact powers, the first product exact, the second rounding once
    (to a subnormal, or to inf, where the result is one)."""
    n = I32(nf)
    h = n >> I32(1)
    return v * _pow2(h) * _pow2(n - h)


@register_jitable
def exp_poly(r):
    """e ** r - 1 for |r| <= ln2/2 (a little beyond: |r| <= 0.36)."""
    p = ffma(ffma(ffma(ffma(_E6, r, _E5), r, _E4), r, _E3), r, _E2)
    return ffma(r * r, p, r)


@register_jitable
def exp_reduce(x):
    """(n, p): e ** x = 2 ** n * (1 + p), for x in [EXP_LOW, EXP_HIGH]: n integral (a float32),
    r = x - n ln2 with x - n * _LN2_HI exact, |r| <= ln2/2, p = e ** r - 1 (|p| <= 0.42)."""
    nf = frint(x * _LOG2E)
    r = ffma(nf, -_LN2_HI, x)
    return nf, exp_poly(ffma(nf, -_LN2_LO, r))


@register_jitable
def exp_reduce_dd(x, lo):
    """``exp_reduce`` of the double-float x + lo (|lo| <= 2^-23 |x|): lo joins r."""
    nf = frint(x * _LOG2E)
    r = ffma(nf, -_LN2_HI, x)
    return nf, exp_poly(ffma(nf, -_LN2_LO, r) + lo)


#: 1.5 * 2^23: t = y + ROUNDER rounds y (|y| < 2^22) to the integer t - ROUNDER, which t's low bits hold
ROUNDER = F(1.5 * 2 ** 23)
# t's bits minus this, shifted to the exponent field: 2 ** (n + 64) (``pow2_shifted``)
_ROUNDER_TO_POW2 = np.uint32(0x4B400000 - 127 - 64)   # 0x4B400000: ROUNDER's bits


@register_jitable
def exp_reduce_shifted(x):
    """``exp_reduce`` with n held in t = x log2(e) + 1.5 * 2^23 (rounded once, by the FMA): (t, p),
    n = t - ROUNDER, e ** x = 2 ** n (1 + p) (``pow2_shifted(t)`` is 2 ** n).  No float-to-int
    conversion: a NaN x gives a NaN p (and an arbitrary 2 ** n) with no select to keep it out."""
    t = ffma(x, _LOG2E, ROUNDER)
    nf = t - ROUNDER
    r = ffma(nf, -_LN2_HI, x)
    return t, exp_poly(ffma(nf, -_LN2_LO, r))


@register_jitable
def pow2_shifted(t):
    """2 ** n for n = t - ROUNDER in [-150, 63] (``exp_reduce_shifted``), rounded once as
    ``pow2_scaled``: 2 ** (n + 64) from t's bits, times 2 ** -64."""
    return f32_from_bits((f32_bits(t) - _ROUNDER_TO_POW2) << np.uint32(23)) * _TWO_M64


@register_jitable
def clamp_exp(x):
    """x within [EXP_LOW, EXP_HIGH] (NaN -> EXP_HIGH: callers select NaN)."""
    x = x if x > EXP_LOW else EXP_LOW
    return x if x < EXP_HIGH else EXP_HIGH


@register_jitable
def split_product(a, b):
    """(hi, lo): a * b = hi + lo exactly (hi the rounded product; FMA gives its error)."""
    hi = a * b
    return hi, ffma(a, b, -hi)


@register_jitable
def two_sum(a, b):
    """(s, e): a + b = s + e exactly (s the rounded sum; Knuth's TwoSum: a and b of any magnitudes)."""
    s = a + b
    b_part = s - a
    return s, (a - (s - b_part)) + (b - b_part)


# --- exponentials --------------------------------------------------------------------------------------

@inlined
def exp_single(x):
    """e ** x: inf above 88.7228394, 0 below -103.972, subnormals between (``exp_parts``)."""
    m, m_lo, nf = exp_parts(clamp_exp(x))
    return ldexp(m, nf) if x == x else x


@register_jitable
def exp_parts(xc):
    """(m, m_lo, n): e ** xc = 2 ** n (m + m_lo) for xc in [EXP_LOW, EXP_HIGH], m = 1 + r + r^2 P(r)
    summed as a double-float (r's own rounding error included) and rounded once, m_lo its rounding
    error (to about 2^-30 m)."""
    nf = frint(xc * _LOG2E)
    r1 = ffma(nf, -_LN2_HI, xc)                       # exact
    r = ffma(nf, -_LN2_LO, r1)
    rl = ffma(nf, -_LN2_LO, r1 - r)                   # r1 - n _LN2_LO = r + rl (r1 - r exact)
    t = _ONE + r
    lo = ((_ONE - t) + r) + rl                        # 1 + r = t + (1 - t) + r exactly (|r| < 1)
    p = ffma(ffma(ffma(ffma(_E6, r, _E5), r, _E4), r, _E3), r, _E2)
    tail = ffma(r * r, p, lo)
    m = t + tail
    return m, (t - m) + tail, nf                      # Fast2Sum: |t| >= |tail|


# 2^f - 1 = f (X1 + X2 f + ... + X6 f^5) for |f| <= 1/2: minimax, relative error 2^-28.3 of 2^f
_X1, _X2, _X3 = F(0.6931471824645996), F(0.24022647738456726), F(0.05550359934568405)
_X4, _X5, _X6 = F(0.009618505835533142), F(0.0013390806270763278), F(0.00015326471475418657)


@inlined
def exp2_single(x):
    """2 ** x: x = n + f, n = rint(x), f exact (|f| <= 1/2), 2 ** f by its polynomial."""
    xc = x if x > F(-151.0) else F(-151.0)
    xc = xc if xc < F(129.0) else F(129.0)
    n = frint(xc)
    f = xc - n
    p = f * ffma(ffma(ffma(ffma(ffma(_X6, f, _X5), f, _X4), f, _X3), f, _X2), f, _X1)
    return ldexp(_ONE + p, n) if x == x else x


# e^x - 1 - x = x^2 (M2 + M3 x + ... + M9 x^7) for |x| <= ln 2: minimax, relative error 2^-32.8 of e^x - 1
_M2, _M3, _M4, _M5 = F(0.5), F(0.1666666716337204), F(0.0416666716337204), F(0.00833327416330576)
_M6, _M7, _M8, _M9 = F(0.0013888239627704024), F(0.0001986096758628264), F(2.504617441445589e-05), \
    F(2.5684460069896886e-06)


@register_jitable
def expm1_core(x):
    """e ** x - 1 for x in [-18, 89] (callers clamp; below -17.33 it rounds to -1): |x| < ln 2 by its
    own polynomial (no cancellation), else 2 ** n (1 + p) - 1 = fma(2^n, p, 2^n - 1) with n >= 1 or
    n <= -1 and r of the sign that keeps the result away from 0; n > 0 halved first (no overflow
    of 2 ** 128 before the end)."""
    z = x * x
    q = ffma(ffma(ffma(ffma(ffma(ffma(ffma(_M9, x, _M8), x, _M7), x, _M6), x, _M5), x, _M4), x, _M3), x, _M2)
    near = ffma(z, q, x)
    n, p = exp_reduce(x)
    up = n > F(0.0)
    s = _pow2(I32(n) - (I32(1) if up else I32(0)))
    far = ffma(s, p, s - (_HALF if up else _ONE))
    far = far * _TWO if up else far
    return near if fabs_(x) < _LN2 else far


@inlined
def expm1_single(x):
    """e ** x - 1: -1 below -17.33, inf above 88.7228; -0 stays -0."""
    xc = x if x > F(-18.0) else F(-18.0)
    xc = xc if xc < EXP_HIGH else EXP_HIGH
    r = expm1_core(xc)
    return r if (x != F(0.0)) & (x == x) else x


# 1 / d within 1/17 for d in [1, 2] (the line of least relative error): the factor of sigmoid's correction
_RECIP_A, _RECIP_B = F(24.0 / 17.0), F(-8.0 / 17.0)


@inlined
def sigmoid_single(x):
    """1 / (1 + e ** -x): e = e ** -|x| = 2 ** n (1 + p) and 1 + e as double-floats (FMA, then Fast2Sum);
    x >= 0: 1 / (1 + e), x < 0: e / (1 + e) (no 1 - small).  The quotient q0 of the rounded numerator
    and 1 + e is corrected once: by the division's exact residual and the low parts, times 1 / (1 + e)
    within 6 % (the correction is about an ulp: its error is a sixteenth of one).
    0 below about -103.6 (subnormals above it), 1 above 16.64; NaN stays NaN through every step."""
    a = fabs_(x)
    a = F(104.0) if a > F(104.0) else a         # NaN passes (exp_reduce_shifted converts no NaN to int)
    t, p = exp_reduce_shifted(-a)
    s = pow2_shifted(t)                         # 2 ** n: subnormal from n = -127, 0 at n = -150
    e = ffma(s, p, s)
    e_lo = ffma(s, p, s - e)                    # s - e exact (Sterbenz: e in [s/2, 2s])
    den = _ONE + e
    den_lo = ((_ONE - den) + e) + e_lo          # Fast2Sum: 1 >= e
    neg = x < F(0.0)
    num = e if neg else _ONE
    q0 = num / den
    rho = ffma(-q0, den, num)                   # num - q0 den, exact
    c = ffma(-q0, den_lo, rho + (e_lo if neg else F(0.0)))
    return ffma(c, ffma(_RECIP_B, den, _RECIP_A), q0)


# --- logarithms: FreeBSD msun's float kernels (e_logf.c, e_log2f.c, e_log10f.c, s_log1pf.c) ---------------

# log(1 + f) = f - f^2/2 + f^3 (L0 + L1 f + ... + L7 f^7) for f in [sqrt(2)/2 - 1, sqrt(2) - 1]: minimax,
# relative error 2^-27.4 of log(1 + f) (no division: FreeBSD's s = f / (2 + f) form cost twice the time)
_L0, _L1, _L2, _L3 = F(0.3333333134651184), F(-0.2500081956386566), F(0.2000124156475067), F(-0.1662341058254242)
_L4, _L5, _L6, _L7 = F(0.14201585948467255), F(-0.13159598410129547), F(0.12762142717838287), \
    F(-0.07636362314224243)
_LOG_LN2_HI, _LOG_LN2_LO = F(6.9313812256e-01), F(9.0580006145e-06)     # 0x3f317180, 0x3717f7d1
_SMALLEST_NORMAL = F(1.1754943508222875e-38)


@register_jitable
def log_split(x):
    """(k, f): x = 2 ** k (1 + f), f in [sqrt(2)/2 - 1, sqrt(2) - 1), for a positive finite x
    (subnormals scaled by 2^25 first)."""
    tiny = x < _SMALLEST_NORMAL
    k, m = f32_split_sqrt2(x * F(33554432.0) if tiny else x)
    return (k - F(25.0) if tiny else k), m - _ONE


@register_jitable
def log_kernel(f):
    """(r, hfsq): log(1 + f) = f - hfsq + r, hfsq = f^2 / 2, r = f^3 P(f) (at most 7 % of the result)."""
    hfsq = _HALF * f * f
    p = ffma(ffma(ffma(ffma(ffma(ffma(ffma(_L7, f, _L6), f, _L5), f, _L4), f, _L3), f, _L2), f, _L1), f, _L0)
    return f * f * f * p, hfsq


@register_jitable
def log_special(x, y):
    """y where x is positive and finite; else log's special value: -inf at +-0, inf at inf, NaN."""
    y = y if (x > F(0.0)) & (x < INF) else NAN
    y = -INF if x == F(0.0) else y
    return INF if x == INF else y


@inlined
def log_single(x):
    """ln x (e_logf.c): k ln2_hi - ((hfsq - (r + k ln2_lo)) - f)."""
    k, f = log_split(x)
    r, hfsq = log_kernel(f)
    return log_special(x, k * _LOG_LN2_HI - ((hfsq - (r + k * _LOG_LN2_LO)) - f))


_IVLN2_HI, _IVLN2_LO = F(1.4428710938e+00), F(-1.7605285393e-04)          # 0x3fb8b000, 0xb9389ad4
_IVLN10_HI, _IVLN10_LO = F(4.3432617188e-01), F(-3.1689971365e-05)        # 0x3ede6000, 0xb804ead9
_LOG10_2_HI, _LOG10_2_LO = F(3.0102920532e-01), F(7.9034151668e-07)        # 0x3e9a2080, 0x355427db


@register_jitable
def _log_hi_lo(f):
    """(hi, lo): log(1 + f) = hi + lo, hi = f - f^2/2 with its low 12 bits cleared (e_log2f.c), so
    that hi times a 12-bit constant is exact."""
    r, hfsq = log_kernel(f)
    hi = f32_from_bits(f32_bits(f - hfsq) & np.uint32(0xFFFFF000))
    return hi, (f - hi) - hfsq + r


@inlined
def log2_single(x):
    """log2 x (e_log2f.c): (lo + hi) ivln2lo + lo ivln2hi + hi ivln2hi + k; powers of two exact."""
    k, f = log_split(x)
    hi, lo = _log_hi_lo(f)
    return log_special(x, (lo + hi) * _IVLN2_LO + lo * _IVLN2_HI + hi * _IVLN2_HI + k)


@inlined
def log10_single(x):
    """log10 x (e_log10f.c)."""
    k, f = log_split(x)
    hi, lo = _log_hi_lo(f)
    y = (lo + hi) * _IVLN10_LO + lo * _IVLN10_HI + hi * _IVLN10_HI + k * _LOG10_2_LO + k * _LOG10_2_HI
    return log_special(x, y)


@register_jitable
def log1p_reduced(x, lo_num, lo_den):
    """(k, f, c): 1 + x + lo = 2 ** k (1 + f) (1 + c) to the first order in c, for x > -1 finite and a
    tiny lo = lo_num / lo_den (the low part of a double-float, as a fraction whose division is c's:
    0 / 1 for a float32 x) (s_log1pf.c): -0.2929 < x < 0.4142: k = 0, f = x itself; else 1 + x
    rounded to u = 2 ** k (1 + f); c = (1 + x - u (exactly; 0 for the former) + lo) / u."""
    u = _ONE + x
    k, f = log_split(u)
    c = (_ONE - (u - x)) if u >= _TWO else (x - (u - _ONE))     # exact (Sterbenz)
    near = (x > F(-0.29289323)) & (x < F(0.41421354))
    k = F(0.0) if near else k
    f = x if near else f
    return k, f, ffma(F(0.0) if near else c, lo_den, lo_num) / (u * lo_den)


@register_jitable
def log_assembled(k, f, c):
    """k ln2 + ln(1 + f) + c for f in [sqrt(2)/2 - 1, sqrt(2) - 1] and a small c (s_log1pf.c's sum)."""
    r, hfsq = log_kernel(f)
    return k * _LOG_LN2_HI - ((hfsq - (r + (k * _LOG_LN2_LO + c))) - f)


@register_jitable
def log1p_core(x, x_lo):
    """ln(1 + x + x_lo) for x > -1 finite and a tiny x_lo (``log1p_reduced``, ``log_assembled``)."""
    k, f, c = log1p_reduced(x, x_lo, _ONE)
    return log_assembled(k, f, c)


@inlined
def log1p_single(x):
    """ln(1 + x): -inf at -1, NaN below, inf at inf; -0 stays -0."""
    y = log1p_core(x, F(0.0))
    y = y if (x > F(-1.0)) & (x < INF) else NAN
    y = -INF if x == F(-1.0) else y
    y = INF if x == INF else y
    return x if x == F(0.0) else y


# --- cbrt ---------------------------------------------------------------------------------------------

#: a^(-1/3) within 3.5 % for every positive normal a: the bits of M - bits(a) / 3, in float32 arithmetic
#: (the magic constant of the inverse cube root, fitted here; float32's rounding of the bits moves the
#: estimate by 2^-16 at most)
_CBRT_MAGIC, _THIRD = F(0x54A232A8), F(1.0 / 3.0)
#: below, a is scaled by 2^75 (cbrt by 2^25), so that y^3's low part stays a normal float32
_CBRT_TINY, _CBRT_UP, _CBRT_DOWN = F(2.0 ** -100), F(2.0 ** 75), F(2.0 ** -25)


@inlined
def cbrt_single(x):
    """cbrt x: t = a^(-1/3) from the magic constant and two Newton steps (3.5 % -> 2e-3 -> 1e-5),
    y = a t^2, then one Newton step on y^3 = a with the residual a - y^3 exact (y^3 a double-float,
    a - hi by Sterbenz): rounded once, within 0.5 ulp and a little.  +-0, +-inf and NaN are themselves."""
    a0 = fabs_(x)
    tiny = a0 < _CBRT_TINY
    a = a0 * _CBRT_UP if tiny else a0
    t = f32_from_bits(I32(_CBRT_MAGIC - F(f32_bits(a)) * _THIRD))
    t = ffma(t * ffma(-(a * t) * t, t, _ONE), _THIRD, t)       # Newton on t^-3 = a: error e -> 2 e^2
    t = ffma(t * ffma(-(a * t) * t, t, _ONE), _THIRD, t)
    y = (a * t) * t
    s, s_lo = split_product(y, y)
    c, c_lo = split_product(s, y)
    residual = (a - c) - ffma(s_lo, y, c_lo)                   # a - y^3, to 2^-24 of itself
    y = ffma(residual * (t * t), _THIRD, y)                    # + (a - y^3) / (3 y^2)
    r = fcopysign(y * _CBRT_DOWN if tiny else y, x)
    return x if (a0 == F(0.0)) | (a0 == INF) | (x != x) else r


# --- tanh ---------------------------------------------------------------------------------------------

# tanh a = a + a^3 (T0 + T1 a^2 + ... + T4 a^8) for |a| <= 0.625: minimax, relative error 2^-27.7
_T0, _T1, _T2 = F(-0.3333328068256378), F(0.13331405818462372), F(-0.05373651534318924)
_T3, _T4 = F(0.02062816731631756), F(-0.005692296661436558)
#: tanh's polynomial below, 1 - 2 / (e^2a + 1) from; tanh rounds to 1 above TANH_ONE
TANH_SMALL, TANH_ONE = F(0.625), F(9.1)


@inlined
def tanh_single(x):
    """tanh: |x| < 0.625 the odd polynomial (its term beyond a is 13 % of it at most); else
    1 - 2 / (e^2a + 1) with e^2a + 1 = fma(2^n, p, 2^n + 1) (one rounding): the error of 2 / (...)
    shrinks with it.  -0 stays -0; +-1 beyond 9.1; NaN kept (it takes the polynomial's side)."""
    a = fabs_(x)
    z = a * a
    small = ffma(a * z, ffma(ffma(ffma(ffma(_T4, z, _T3), z, _T2), z, _T1), z, _T0), a)
    b = a if a < TANH_ONE else TANH_ONE
    n, p = exp_reduce(b + b)
    s = _pow2(I32(n))                                        # n in [2, 27]
    big = _ONE - _TWO / ffma(s, p, s + _ONE)
    return fcopysign(big if a >= TANH_SMALL else small, x)


# --- sinh and cosh --------------------------------------------------------------------------------

# sinh a = a + a^3 (1/3! + a^2/5! + a^4/7! + a^6/9!) for |a| <= 0.625: Taylor, the next term 2^-32 of a
_SH1, _SH2, _SH3, _SH4 = F(1.0 / 6.0), F(1.0 / 120.0), F(1.0 / 5040.0), F(1.0 / 362880.0)
#: sinh's polynomial below, (e^a - e^-a) / 2 from; cosh's and sinh's argument bound (both overflow from 89.42)
SINH_SMALL, HYPERBOLIC_HIGH = F(0.625), F(90.0)


@register_jitable
def exp_halves(a):
    """(m, m_lo, r, r_lo, s, n): e^a / 2 = 2^(n - 1) (m + m_lo) and e^-a / 2 = 2^(n - 1) s (r + r_lo) for a
    in [0, 90] (``exp_parts``; n <= 130), 1 / (m + m_lo) = r + r_lo to about 2^-46 (the division's exact
    residual), s = 2^-2n (2^-120 from n = 60: below every rounding of m)."""
    m, m_lo, n = exp_parts(a)
    r = _ONE / m
    r_lo = r * ffma(-r, m_lo, ffma(-r, m, _ONE))      # (1 - r (m + m_lo)) r: 1 - r m exact first
    s = _pow2(I32(-n - n if n < F(60.0) else F(-120.0)))
    return m, m_lo, r, r_lo, s, n


@register_jitable
def sum_rounded(m, m_lo, q, q_lo):
    """m + q + m_lo + q_lo rounded once (up to the low parts' own small errors): TwoSum of m + q."""
    d, e = two_sum(m, q)
    return d + ((e + m_lo) + q_lo)


@inlined
def cosh_single(x):
    """cosh: (e^a + e^-a) / 2 = 2^(n - 1) (m + m_lo + s (r + r_lo)), rounded once; inf from |x| =
    89.4159, NaN kept."""
    a = fabs_(x)
    m, m_lo, r, r_lo, s, n = exp_halves(a if a < HYPERBOLIC_HIGH else HYPERBOLIC_HIGH)
    y = ldexp(sum_rounded(m, m_lo, s * r, s * r_lo), n - _ONE)   # s r exact: a power of 2 times r
    return y if x == x else x


@inlined
def sinh_single(x):
    """sinh: |x| < 0.625 the odd Taylor polynomial (its terms beyond a are 7 % of it at most); else
    (e^a - e^-a) / 2 = 2^(n - 1) (m + m_lo - s (r + r_lo)), rounded once; inf from |x| = 89.4159; -0
    stays -0, NaN kept (the polynomial's side)."""
    a = fabs_(x)
    z = a * a
    small = ffma(a * z, ffma(ffma(ffma(_SH4, z, _SH3), z, _SH2), z, _SH1), a)
    m, m_lo, r, r_lo, s, n = exp_halves(a if a < HYPERBOLIC_HIGH else HYPERBOLIC_HIGH)
    big = ldexp(sum_rounded(m, m_lo, -(s * r), -(s * r_lo)), n - _ONE)
    return fcopysign(big if a >= SINH_SMALL else small, x)


# --- erf and erfc ------------------------------------------------------------------------------------

# erf x = x + x (R0 + R1 x^2 + ... + R6 x^12) for |x| <= 0.921875: minimax, relative error 2^-30.1
_R0, _R1, _R2, _R3 = F(0.12837916612625122), F(-0.3761262893676758), F(0.11283625662326813), \
    F(-0.026855729520320892)
_R4, _R5, _R6 = F(0.005192392505705357), F(-0.0008049514726735651), F(7.99504850874655e-05)
# erfc(a) e^(a^2) = u (C0 + C1 u + ... + C10 u^10), u = 1 / (1 + a / 2), for a in [0.25, 10.5]: minimax,
# relative error 2^-30.1
_C0, _C1, _C2, _C3 = F(0.2820945382118225), F(0.28209325671195984), F(0.24699349701404572), F(0.17384763062000275)
_C4, _C5, _C6, _C7 = F(0.10276870429515839), F(-0.09326207637786865), F(0.20924320816993713), \
    F(-0.5645889043807983)
_C8, _C9, _C10 = F(0.5891167521476746), F(-0.28119340538978577), F(0.05288786441087723)
# d ln(u P(u)) / d ln u = G0 + G1 u within 0.023 (1.2 to 2.1): least squares, enough for a correction
_G0, _G1 = F(0.9385279417037964), F(1.4572787284851074)
#: erf's polynomial below ERF_SMALL, 1 - erfc from (erfc <= 0.19 there: its error shrinks 4x)
ERF_SMALL = F(0.921875)


@register_jitable
def erf_small(x):
    """erf x for |x| <= ERF_SMALL (-0 kept)."""
    z = x * x
    p = ffma(ffma(ffma(ffma(ffma(ffma(_R6, z, _R5), z, _R4), z, _R3), z, _R2), z, _R1), z, _R0)
    return ffma(x, p, x)


@register_jitable
def erfc_times(c, a, a_lo, hi, lo):
    """c erfc(a + a_lo), rounded once at the end (up to the product's 1/2 ulp), for a in [0.5, 10.5]
    (beyond: a value below 2^-150 |c|) with |a_lo| <= 2^-23 a and (a + a_lo)^2 = hi + lo (hi <= 104):
    c u P(u) (1 + p) 2 ** n, e^-(hi + lo) = 2 ** n (1 + p) (a in [0.25, 10.5] for the polynomial; the
    callers' from 0.5 or 0.921875).  u = 1 / (1 + a / 2) is rounded twice (1 +
    a/2, the division) and u P(u) moves by G(u) = d ln(u P) / d ln u (1.2 to 2.1) times u's relative
    error: that error, known exactly (the division's residual, the a that 1 + a/2 stands for), is
    taken back through G into p."""
    d = ffma(a, _HALF, _ONE)
    u = _ONE / d
    rho = ffma(-u, d, _ONE)                               # 1 - u d, exact
    da = (a - _TWO * (d - _ONE)) + a_lo                   # the true a minus the a d stands for
    dlnu = ffma(-_HALF * da, u, rho)                      # ln(1 / (1 + (a + a_lo)/2) / u), to first order
    pu = ffma(ffma(ffma(ffma(ffma(ffma(_C10, u, _C9), u, _C8), u, _C7), u, _C6), u, _C5), u, _C4)
    pu = ffma(ffma(ffma(ffma(pu, u, _C3), u, _C2), u, _C1), u, _C0)
    n, p = exp_reduce_dd(-hi, -lo)
    p = ffma(ffma(_G1, u, _G0) * dlnu, _ONE + p, p)      # (1 + p)(1 + G dlnu) - 1
    cu, cu_lo = split_product(c, u)
    w = ffma(cu, pu, cu_lo * pu)                          # c u P(u), rounded once
    return ldexp(ffma(w, p, w), n)


@register_jitable
def erfc_times_wide(c, a, a_lo, hi, lo):
    """``erfc_times`` with u P(u) in float64 (one float32 rounding of c u P(u) (1 + p) instead of four,
    the Horner error of P and u's rounding gone): gelu's erfc, where the result is erfc itself."""
    a64 = np.float64(a) + np.float64(a_lo)
    d = 1.0 + 0.5 * a64
    u = np.float64(_ONE / F(d))
    u = u * (2.0 - d * u)                                  # Newton: 2^-48 from float32's 2^-24
    pu = ffma(ffma(ffma(ffma(ffma(ffma(np.float64(_C10), u, np.float64(_C9)), u, np.float64(_C8)), u,
                                  np.float64(_C7)), u, np.float64(_C6)), u, np.float64(_C5)), u, np.float64(_C4))
    pu = ffma(ffma(ffma(ffma(pu, u, np.float64(_C3)), u, np.float64(_C2)), u, np.float64(_C1)), u, np.float64(_C0))
    n, p = exp_reduce_dd(-hi, -lo)
    return ldexp(F(np.float64(c) * (u * pu) * (1.0 + np.float64(p))), n)


@register_jitable
def half_square(x):
    """(hi, lo): x^2 / 2 = hi + lo exactly, hi <= 104 (clamped: beyond, e^-hi rounds to 0 in every use)."""
    hi, lo = split_product(x, x)
    big = hi > F(208.0)
    return (F(104.0) if big else _HALF * hi), (F(0.0) if big else _HALF * lo)


@inlined
def erf_single(x):
    """erf: the odd polynomial below 0.921875, 1 - erfc above; +-1 beyond 3.92; -0 kept."""
    a = fabs_(x)
    b = a if a < F(4.0) else F(4.0)
    hi, lo = split_product(b, b)
    big = _ONE - erfc_times(_ONE, b, F(0.0), hi, lo)
    return fcopysign(big, x) if a >= ERF_SMALL else erf_small(x)   # NaN: the polynomial's NaN


# --- sigmoid of a double-float, and the pieces the activations share -----------------------------------

@register_jitable
def ldexp_wide(v, nf):
    """v * 2 ** nf for an integral float32 nf in [-504, 504]: ``ldexp`` twice, the larger half first."""
    n = I32(nf)
    h = n >> I32(1)
    return ldexp(ldexp(v, F(n - h)), F(h))


@register_jitable
def sigmoid_scaled(c, vh, vl, limit):
    """(q, n): c sigmoid(v) = q * 2 ** n for the double-float v = vh + vl (|vl| <= 2^-23 |vh|, |vh| <=
    ``limit`` <= 348: callers clamp) and a float32 c, |c| <= 2^125 (c (1 + p) cannot overflow); q
    rounded once, n <= 0 (0 for v >= 0).  e = e ** -|v| = 2 ** n (1 + p); v >= 0: q = c / (1 + e), v < 0:
    q = c (1 + p) / (1 + e); numerator and 1 + e as double-floats, their quotient corrected once as
    in ``sigmoid_single``."""
    a = fabs_(vh)
    a = a if a < limit else limit
    neg = vh < F(0.0)
    n, p = exp_reduce_dd(-a, vl if neg else -vl)
    s = _pow2(I32(n if n > F(-60.0) else F(-60.0)))      # 2 ** n where it counts: below 2^-60, 1 + e rounds to 1
    s1 = s + _ONE
    den = ffma(s, p, s1)
    e_den = ffma(s, p, (s1 - den) + ((_ONE - s1) + s))
    m = _ONE + p if neg else _ONE
    e_m = ((_ONE - m) + p) if neg else F(0.0)          # 1 + p - m exactly
    num, e_num = split_product(c, m)
    e_num = ffma(c, e_m, e_num)                        # c (1 + p) - num
    q0 = num / den
    rho = ffma(-q0, den, num)
    e = s * m
    inv = ffma(ffma(F(0.3274689), e, F(-0.80418816)), e, F(0.98608724))   # 1 / (1 + e) within 2 %
    q = ffma(ffma(-q0, e_den, rho + e_num), inv, q0)
    return (q if q0 != F(0.0) else q0), (n if neg else F(0.0))   # a zero c keeps its sign


@register_jitable
def sigmoid_times(c, vh, vl, limit):
    """``sigmoid_scaled`` for any float32 c: one above 2^125 divided by 4 first, and n 2 more."""
    big = fabs_(c) > F(2.0 ** 125)
    q, n = sigmoid_scaled(c * F(0.25) if big else c, vh, vl, limit)
    return q, n + (F(2.0) if big else F(0.0))


@register_jitable
def log1p_exp_minus(a):
    """ln(1 + e ** -a) for a >= 0 (NaN: anything; softplus, logaddexp): ``log1p_core`` of the
    exponential as a double-float (its rounding error would count once more)."""
    m, m_lo, n = exp_parts(-(a if a < F(104.0) else F(104.0)))
    e = ldexp(m, n)
    return log1p_core(e, ldexp(m_lo, n) if e > F(1e-30) else F(0.0))


@inlined
def logaddexp_single(x, y):
    """ln(e^x + e^y), NumPy's npy_logaddexpf: x == y: x + ln 2 (infinities too); d = x - y rounded
    in float32 as NumPy's loop does; max + log1p(e^-|d|); NaN for NaN."""
    d = x - y
    m = x if d > F(0.0) else y
    r = m + log1p_exp_minus(fabs_(d))
    r = r if (d > F(0.0)) | (d <= F(0.0)) else d
    return x + _LN2 if x == y else r


_LOG2E_LN2 = F(1.4426950408889634)


@inlined
def logaddexp2_single(x, y):
    """log2(2^x + 2^y), NumPy's npy_logaddexp2f: max + log2(1 + 2^-|d|) (as LOG2E log1p)."""
    d = x - y
    m = x if d > F(0.0) else y
    r = m + _LOG2E_LN2 * log1p_core(exp2_single(-fabs_(d)), F(0.0))
    r = r if (d > F(0.0)) | (d <= F(0.0)) else d
    return x + _ONE if x == y else r


# --- hypot ----------------------------------------------------------------------------------------------

@inlined
def hypot_single(y, x):
    """hypot: the squares exact in float64 (no overflow for float32), their sum's and the square
    root's roundings far below a float32 ulp, rounded once: within 0.5 ulp and a little, in float64
    lanes (half the width; four operations); inf wins over NaN (C99)."""
    a, b = np.float64(y), np.float64(x)
    r = fsqrt(a * a + b * b)
    return INF if (fabs_(a) == np.float64(INF)) | (fabs_(b) == np.float64(INF)) else F(r)
