"""float32 sin, cos and tan computed in float32 lanes: a Cody-Waite reduction with FMA, three
polynomials and selects.

Like ``float32_math``'s functions (whose module docstring says why: the C library's sinf/cosf are
calls LLVM cannot vectorise), these are float32 arithmetic, ``llvm.fma`` and selects, no branches and
no calls, so a row loop of one vectorises at the full width of the machine (16 float32 lanes with
AVX-512), twice the lanes of the float64 formulas (``float32_wide``) they replace.

Accuracy: each function is within ``ULPS[name]`` ulps of the true value for every float32 input
(measured by tests/numba/test_float32_math_exhaustive.py against the C library's float64 sin/cos/tan;
in ulps of the true value's binade, as ``float32_math.ULPS``), the zeros of sin, cos and tan and the
float32 values nearest tan's poles included: there the reduced argument is tiny and its relative
error is what counts (no float32 argument is near enough a pole for tan to overflow: |tan x| <
2^28 below 2^19).  float16 and bfloat16 compute
through these and round once more: within an ulp of their own.

Range: the reduction is accurate while ``|x| < SIN_COS_REDUCED`` (2^19; the derivation is
``reduce_quarter_turns``'s).  ``sin_cos_large`` flags the larger finite arguments (a block of them:
its largest ``codecs.f32_magnitude_key`` reaches ``SIN_COS_LARGE_KEY``), and the rows
(``rows.unary_row`` through ``scalars.UNARY_VECTOR``) compute a block holding one again by the C
library (sin, cos, tan: Payne-Hanek reduction).

Special values are NumPy's: NaN for NaN and +-inf; sin(-0) and tan(-0) are -0; sin(x) = tan(x) = x
for subnormal x.

Algorithm: x = k pi/2 + r with k = rint(x 2/pi) and r a double-float r_hi + r_lo, pi/2 in three
float32 parts with FMA (Cody and Waite's reduction, as SLEEF's float32 functions and NumPy's AVX-512
sin/cos reduce by pi in float32 parts; r carried as a double-float as SLEEF's ``xsinf_u1`` carries
it, there the error of r_hi alone would cost up to 0.9 ulp); sin r = r_hi + (r_lo cos r + r_hi^3
P(r_hi^2)) and cos r = 1 - r_hi^2/2 (rounded once, its error kept, as fdlibm's __kernel_cos keeps
it) + (r_hi^4 Q(r_hi^2) - r_hi r_lo), each rounded once at the end; the quadrant k mod 4 (the low
bits of k + 1.5 2^23) picks one of them and its sign.  tan r = r_hi + r_hi^3 T(r_hi^2) + (1 + tan^2
r) r_lo, with r_hi^2 and r_hi^3 carried as double-floats (FMA) and the rounding of r_hi + the tail
kept (Fast2Sum): a double-float, rounded once in the even quadrants; in the odd ones -1/tan r is
-1/tan rounded, corrected once by the division's exact residual (FMA) and tan's low part (a plain
division would add up to an ulp).  The polynomials are minimax fits of ``tools/minimax.py`` (float32
coefficients), with the interval and the relative error at their definition.
"""

from __future__ import annotations

import numpy as np

from .cache import register_jitable
from .codecs import f32_has_bits, fabs_, ffma
from .float32_math import inlined

F = np.float32
INF = F("inf")
_ONE, _HALF = F(1.0), F(0.5)

#: The most ulps sin, cos and tan are from the true value over every float32 input (as
#: ``float32_math.ULPS``): measured by tests/numba/test_float32_math_exhaustive.py, which holds them.
ULPS = {"sin": 1.0, "cos": 1.0, "tan": 1.5}
# measured maxima (exhaustive): sin 0.742 (at 517298.6), cos 0.739 (467138.34); below 100: 0.715 both;
# tan 1.476 at 2.9000997e+21 (the C library's tanf, beyond SIN_COS_REDUCED: glibc documents 1 ulp from
# the rounded value), tan_single below SIN_COS_REDUCED 0.712 (at 3.9269543; 0.701 at 0.7831375)

#: sin/cos reduce accurately (r to 2^-28 of itself, at the zeros too) below this; ``sin_cos_large``
#: flags the finite values from it on (``tan_single`` shares it)
SIN_COS_REDUCED = F(2.0 ** 19)
#: ``codecs.f32_magnitude_key`` of SIN_COS_REDUCED: a float32 value's key reaches it exactly where
#: ``sin_cos_large`` flags the value (the rows take the max of a block's keys)
SIN_COS_LARGE_KEY = int(SIN_COS_REDUCED.view(np.int32)) + 0x00800000

_TWO_OVER_PI = F(0.6366197466850281)
# 1.5 * 2^23: x 2/pi + _ROUNDER rounds x 2/pi to an integer (|x 2/pi| < 2^22), k mod 4 its low bits
_ROUNDER = F(12582912.0)
_ODD, _TWO = np.uint32(1), np.uint32(2)
# pi/2 = _PIO2_1 + _PIO2_2 + _PIO2_3 + 1.06e-23: each part float32 pi/2 - (the parts before) rounded
_PIO2_1, _PIO2_2, _PIO2_3 = F(1.5707963705062866), F(-4.371138828673793e-08), F(-1.7151245100058819e-15)
# sin r - r = r^3 (S1 + S2 r^2 + S3 r^4 + S4 r^6) for |r| <= 0.835: minimax, relative error 2^-32.3 of sin r
_S1, _S2 = F(-0.1666666716337204), F(0.008333372883498669)
_S3, _S4 = F(-0.00019849730597343296), F(2.79358778243477e-06)
# cos r - 1 + r^2/2 = r^4 (C1 + C2 r^2 + C3 r^4) for |r| <= 0.835: minimax, relative error 2^-32.0 of cos r
_C1, _C2, _C3 = F(0.04166663438081741), F(-0.001388679607771337), F(2.43769318331033e-05)
# tan r - r = r^3 (T1 + T2 r^2 + ... + T8 r^14) for |r| <= 0.835: minimax, relative error 2^-31.4 of tan r
_T1, _T2, _T3 = F(0.333333283662796), F(0.13333560526371002), F(0.053933028131723404)
_T4, _T5, _T6 = F(0.02213094010949135), F(0.007805358152836561), F(0.006026655435562134)
_T7, _T8 = F(-0.0016443021595478058), F(0.002470196457579732)


@register_jitable
def reduce_quarter_turns(x):
    """(t, r_hi, r_lo): x = k pi/2 + r_hi + r_lo, k = rint(x 2/pi) (an integral float32; the low two
    bits of t = k + _ROUNDER are k mod 4), for
    |x| < SIN_COS_REDUCED: |r| <= 0.831 (k's error from the roundings of x 2/pi takes r past pi/4 by
    0.046 at most), r to k 2^-70.6 absolutely, below 2^-28 of |r| for every float32 x (the worst,
    2^-28.4, at x = 267058.94, r = -2^-24.8; the least |r|, 2^-27.8, at x = 252.89821, k = 161).
    NaN r for NaN and +-inf.

    Why, for |x| < 2^19 (k < 2^18.35): x - k _PIO2_1 is exact (x >= 1/2 where k != 0: both are
    multiples of 2^-24, and the difference is below 1); hi + lo = k _PIO2_2 exactly; a - hi is a
    Fast2Sum, exact: |hi| < 2^-6, so a (a multiple of 2^-24) is a multiple of ulp(hi) with fewer than
    2^24 of them where |a| < |hi|, and |a| >= |hi| elsewhere; lo (2^-24 |hi|) and k _PIO2_3 (k 2^-49)
    are added with two roundings of 2^-24 of their sum, and the parts stop at k 2^-76.3."""
    t = ffma(x, _TWO_OVER_PI, _ROUNDER)               # rounded once: x 2/pi to the nearest integer
    k = t - _ROUNDER
    a = ffma(-k, _PIO2_1, x)                          # exact
    hi = k * _PIO2_2
    lo = ffma(k, _PIO2_2, -hi)                        # k _PIO2_2 = hi + lo exactly
    r_hi = a - hi
    r_lo = ((a - r_hi) - hi) - ffma(k, _PIO2_3, lo)   # Fast2Sum's exact error, then the low parts
    return t, r_hi, r_lo


@register_jitable
def sin_cos_reduced(r_hi, r_lo):
    """(sin r, cos r) for r = r_hi + r_lo, |r| <= 0.835, |r_lo| <= 2^-24 |r_hi| + 2^-29.3: each the
    rounding of a main term (r_hi; 1 - r_hi^2/2 rounded, its error in the tail) plus a tail of at
    most 12 % of it, whose own errors are about 0.2 ulp."""
    z = r_hi * r_hi
    h = -_HALF * r_hi
    w = ffma(h, r_hi, _ONE)                            # 1 - r_hi^2/2 rounded once
    e = ffma(h, r_hi, _ONE - w)                        # its rounding error (1 - w exact: w in [0.65, 1])
    s = ffma(ffma(ffma(_S4, z, _S3), z, _S2), z, _S1)
    c = ffma(ffma(_C3, z, _C2), z, _C1)
    sin = r_hi + ffma(r_hi * z, s, r_lo * w)           # r_lo's share: r_lo cos r, cos r ~ w
    cos = w + ffma(z * z, c, ffma(-r_hi, r_lo, e))     # -r_hi r_lo: r_lo's share
    return sin, cos


@register_jitable
def _by_quadrant(t, s, c):
    """sin of x = k pi/2 + r from s = sin r, c = cos r and t = k + _ROUNDER (k mod 4 in its low bits):
    s, c, -s, -c for k mod 4 = 0, 1, 2, 3."""
    v = c if f32_has_bits(t, _ODD) else s
    return -v if f32_has_bits(t, _TWO) else v


@inlined
def sin_single(x):
    """sin x for |x| < SIN_COS_REDUCED, NaN for NaN and +-inf (beyond: a value, not sin x); -0 kept."""
    t, r_hi, r_lo = reduce_quarter_turns(x)
    s, c = sin_cos_reduced(r_hi, r_lo)
    v = _by_quadrant(t, s, c)
    return x if x == F(0.0) else v


@inlined
def cos_single(x):
    """cos x = sin(x + pi/2) for |x| < SIN_COS_REDUCED (k + 1 quarter turns: t + 1, exact), NaN for
    NaN and +-inf (beyond: a value, not cos x)."""
    t, r_hi, r_lo = reduce_quarter_turns(x)
    s, c = sin_cos_reduced(r_hi, r_lo)
    return _by_quadrant(t + _ONE, s, c)


@register_jitable
def sin_cos_large(v):
    """1 where ``sin_single``/``cos_single`` cannot reduce v (finite, |v| >= SIN_COS_REDUCED), else 0."""
    a = fabs_(v)
    return np.int32((a >= SIN_COS_REDUCED) & (a < INF))  # no short circuit: a branch would stop vectorising


@register_jitable
def tan_reduced(r_hi, r_lo):
    """(t_hi, t_lo): tan r = t_hi + t_lo for r = r_hi + r_lo, |r| <= 0.835, |r_lo| <= 2^-24 |r_hi| +
    2^-29.3; t_hi is r_hi + the polynomial tail rounded once, t_lo what that rounding dropped (a
    Fast2Sum, exact) plus r_lo's share (1 + tan^2 r) r_lo."""
    z = r_hi * r_hi
    z_lo = ffma(r_hi, r_hi, -z)                       # r_hi^2 = z + z_lo exactly
    c3 = r_hi * z
    c3_lo = ffma(r_hi, z, -c3) + r_hi * z_lo          # r_hi^3 = c3 + c3_lo to 2^-48
    p = ffma(ffma(ffma(ffma(ffma(ffma(ffma(_T8, z, _T7), z, _T6), z, _T5), z, _T4), z, _T3), z, _T2), z, _T1)
    tail = c3 * p
    tail_lo = ffma(c3, p, -tail) + c3_lo * p          # c3 p - tail exactly, then c3_lo's share
    t_hi = r_hi + tail
    t_lo = ((r_hi - t_hi) + tail) + (tail_lo + ffma(r_lo * t_hi, t_hi, r_lo))  # Fast2Sum's error, r_lo (1 + t^2)
    return t_hi, t_lo


@inlined
def tan_single(x):
    """tan x for |x| < SIN_COS_REDUCED, NaN for NaN and +-inf (beyond: a value, not tan x); -0 kept:
    tan r in the even quadrants, -1/tan r in the odd ones (the quotient corrected once by its exact
    residual and t_lo)."""
    t, r_hi, r_lo = reduce_quarter_turns(x)
    t_hi, t_lo = tan_reduced(r_hi, r_lo)
    tan = t_hi + t_lo                                 # rounded once: the even quadrants' value
    tan_lo = (t_hi - tan) + t_lo                      # Fast2Sum: |tan_lo| <= ulp(tan)/2 (t_lo is not, near 0)
    q = _ONE / tan
    e = ffma(-q, tan, _ONE)                           # 1 - q tan exactly
    cot = ffma(q, ffma(-q, tan_lo, e), q)             # 1/(tan + tan_lo) = q (1 + e - q tan_lo) to 2^-46
    v = -cot if f32_has_bits(t, _ODD) else tan
    return x if x == F(0.0) else v
