"""The float32 trigonometric functions and their inverses computed in float32 lanes: sin, cos and
tan (a Cody-Waite reduction with FMA), arctan, arcsin, arccos and arctan2 (a reduction to [0, 1] or
[0, 1/2]); polynomials and selects.

Like ``float32_math``'s functions (whose module docstring says why: the C library's sinf/cosf are
calls LLVM cannot vectorise), these are float32 arithmetic, ``llvm.fma`` and selects, no branches and
no calls, so a row loop of one vectorises at the full width of the machine (16 float32 lanes with
AVX-512), twice the lanes of the float64 formulas they replaced.

Accuracy: each unary function is within ``ULPS[name]`` ulps of the true value for every float32 input
(measured by tests/numba/test_float32_math_exhaustive.py against the C library's float64 function;
in ulps of the true value's binade, as ``float32_math.ULPS``), the zeros of sin, cos and tan and the
float32 values nearest tan's poles included: there the reduced argument is tiny and its relative
error is what counts (no float32 argument is near enough a pole for tan to overflow: |tan x| <
2^28 below 2^19).  arctan2, binary, is within its bound on 2^24 sampled pairs (every bit pattern,
ratios near 1, subnormal and huge pairs, the special values: tests/numba/test_float32_math.py).
float16 and bfloat16 compute through these and round once more: within an ulp of their own.

Range: the reduction is accurate while ``|x| < SIN_COS_REDUCED`` (2^19; the derivation is
``reduce_quarter_turns``'s).  ``sin_cos_large`` flags the larger finite arguments (a block of them:
its largest ``codecs.f32_magnitude_key`` reaches ``SIN_COS_LARGE_KEY``), and the rows
(``rows.unary_row`` through ``scalars.UNARY_VECTOR``) compute a block holding one again by the C
library (sin, cos, tan: Payne-Hanek reduction).  The inverse functions need no such range.

Special values are NumPy's: NaN for NaN and +-inf; sin(-0) and tan(-0) are -0; sin(x) = tan(x) = x
for subnormal x.  arcsin and arctan keep -0 and are x for subnormal x (no flush to zero), arctan
is +-pi/2 at +-inf; arcsin and arccos are NaN outside [-1, 1], arccos(1) = +0; arctan2 has C99's
(+-0 or +-pi for a zero y by the sign of x, +-pi/2 for a zero x, odd multiples of pi/4 for two
infinities).

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
division would add up to an ulp).

The inverses (the reductions of SLEEF's ``xatanf_u1``/``xasinf_u1``/``xacosf_u1`` and FreeBSD msun's
atanf/asinf/acosf, without their double-float or float64 arithmetic): atan x by t = min(|x|, 1/|x|)
in [0, 1], 1/|x| a double-float (the division's exact residual by FMA), atan t = t + t^3 P(t^2) (one
polynomial on all of [0, 1]; t^2, t^3 and P's last step carried as double-floats: the tail is up to
21 % of t, and its roundings alone cost 0.2 ulp), and pi/2 - atan t beyond 1, pi/2 in two parts.
asin x = x + x^3 P(x^2) for |x| <= 1/2, else pi/2 - 2 asin s, s = sqrt((1 - |x|) / 2) (exact
before the square root) a double-float (the square root's exact residual: its rounding alone would
cost up to an ulp); acos x = pi/2 - asin x for |x| <= 1/2, 2 asin s for x > 1/2, pi - 2 asin s for
x < -1/2.  atan2(y, x) = atan of min/max of |y| and |x| (a double-float by the quotient's residual),
then pi/2 - that, pi - that or pi/2 + that by the quadrant.  Each result is c + m v rounded once
(``_sum_rounded``: c = 0, pi/2 or pi in two parts, m = +-1 or +-2, v the polynomial's argument, its
tail and the low parts; two Fast2Sums).  The polynomials are minimax fits of ``tools/minimax.py``
(float32 coefficients), with the interval and the relative error at their definition.
"""

from __future__ import annotations

import numpy as np

from .cache import register_jitable
from .codecs import f32_has_bits, fabs_, fcopysign, ffma, fsqrt
from .float32_math import ROUNDER, inlined, split_product

F = np.float32
INF = F("inf")
_ONE, _HALF = F(1.0), F(0.5)

#: The most ulps each function is from the true value over every float32 input (as
#: ``float32_math.ULPS``): measured by tests/numba/test_float32_math_exhaustive.py, which holds them;
#: arctan2's over 2^24.6 sampled pairs (tests/numba/test_float32_math.py's dense pairs, slow).
ULPS = {"sin": 1.0, "cos": 1.0, "tan": 1.5, "arcsin": 1.0, "arccos": 1.0, "arctan": 1.0, "arctan2": 1.0}
# measured maxima (exhaustive): sin 0.742 (at 517298.6), cos 0.739 (467138.34); below 100: 0.715 both;
# tan 1.476 at 2.9000997e+21 (the C library's tanf, beyond SIN_COS_REDUCED: glibc documents 1 ulp from
# the rounded value), tan_single below SIN_COS_REDUCED 0.712 (at 3.9269543; 0.701 at 0.7831375);
# arcsin 0.604 (at 0.4648971), arccos 0.600 (0.55210996), arctan 0.725 (0.9990349); arctan2 sampled
# 0.699 (at 6.093787, 6.018774: the ratio near 1, where atan's tail is largest)

#: sin/cos reduce accurately (r to 2^-28 of itself, at the zeros too) below this; ``sin_cos_large``
#: flags the finite values from it on (``tan_single`` shares it)
SIN_COS_REDUCED = F(2.0 ** 19)
#: ``codecs.f32_magnitude_key`` of SIN_COS_REDUCED: a float32 value's key reaches it exactly where
#: ``sin_cos_large`` flags the value (the rows take the max of a block's keys)
SIN_COS_LARGE_KEY = int(SIN_COS_REDUCED.view(np.int32)) + 0x00800000

_TWO_OVER_PI = F(0.6366197466850281)
# x 2/pi + ROUNDER (float32_math's) rounds x 2/pi to an integer (|x 2/pi| < 2^22), k mod 4 its low bits
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
    bits of t = k + ROUNDER are k mod 4), for
    |x| < SIN_COS_REDUCED: |r| <= 0.831 (k's error from the roundings of x 2/pi takes r past pi/4 by
    0.046 at most), r to k 2^-70.6 absolutely, below 2^-28 of |r| for every float32 x (the worst,
    2^-28.4, at x = 267058.94, r = -2^-24.8; the least |r|, 2^-27.8, at x = 252.89821, k = 161).
    NaN r for NaN and +-inf.

    Why, for |x| < 2^19 (k < 2^18.35): x - k _PIO2_1 is exact (x >= 1/2 where k != 0: both are
    multiples of 2^-24, and the difference is below 1); hi + lo = k _PIO2_2 exactly; a - hi is a
    Fast2Sum, exact: |hi| < 2^-6, so a (a multiple of 2^-24) is a multiple of ulp(hi) with fewer than
    2^24 of them where |a| < |hi|, and |a| >= |hi| elsewhere; lo (2^-24 |hi|) and k _PIO2_3 (k 2^-49)
    are added with two roundings of 2^-24 of their sum, and the parts stop at k 2^-76.3."""
    t = ffma(x, _TWO_OVER_PI, ROUNDER)               # rounded once: x 2/pi to the nearest integer
    k = t - ROUNDER
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
    """sin of x = k pi/2 + r from s = sin r, c = cos r and t = k + ROUNDER (k mod 4 in its low bits):
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
def square_cube(r):
    """(z, z_lo, c, c_lo): r^2 = z + z_lo exactly, r^3 = c + c_lo to 2^-48 of it (FMA: r^2's rounding
    error kept)."""
    z, z_lo = split_product(r, r)
    c = r * z
    return z, z_lo, c, ffma(r, z, -c) + r * z_lo


@register_jitable
def tan_reduced(r_hi, r_lo):
    """(t_hi, t_lo): tan r = t_hi + t_lo for r = r_hi + r_lo, |r| <= 0.835, |r_lo| <= 2^-24 |r_hi| +
    2^-29.3; t_hi is r_hi + the polynomial tail rounded once, t_lo what that rounding dropped (a
    Fast2Sum, exact) plus r_lo's share (1 + tan^2 r) r_lo."""
    z, _, c3, c3_lo = square_cube(r_hi)
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


# --- the inverse functions: arctan, arcsin, arccos, arctan2 ----------------------------------------

# pi = _PI_HI + _PI_LO to 2^-47 (twice pi/2's first two parts: exact)
_PI_HI, _PI_LO = _PIO2_1 + _PIO2_1, _PIO2_2 + _PIO2_2
# atan t - t = t^3 (A0 + A1 t^2 + ... + A8 t^16) for t in [0, 1]: minimax, relative error 2^-28.5 of atan t
_A0, _A1, _A2 = F(-0.33333298563957214), F(0.1999852955341339), F(-0.14264015853405)
_A3, _A4, _A5 = F(0.10950881242752075), F(-0.08399314433336258), F(0.05788171663880348)
_A6, _A7, _A8 = F(-0.031097600236535072), F(0.010869232937693596), F(-0.001783007406629622)
# 1 / (1 + z) within 1 % for z in [0, 1] (W0 + W1 z + W2 z^2, minimax): enough for a low part's share
_W0, _W1, _W2 = F(0.9898989796638489), F(-0.8080808520317078), F(0.32323238253593445)
# asin v - v = v^3 (B0 + B1 v^2 + ... + B5 v^10) for |v| <= 0.5: minimax, relative error 2^-31.7 of asin v
_B0, _B1, _B2 = F(0.16666659712791443), F(0.07500521838665009), F(0.04451338201761246)
_B3, _B4, _B5 = F(0.03183884546160698), F(0.014316900633275509), F(0.037691906094551086)
_TWO_P64, _TWO_M60, _TWO_M40 = F(2.0 ** 64), F(2.0 ** -60), F(2.0 ** -40)


@register_jitable
def atan_reduced(t, t_lo):
    """(tail, tail_lo): atan(t + t_lo) = t + tail + tail_lo for t in [0, 1] (NaN: NaN) and |t_lo| <=
    2^-23 t: tail is t^3 P(t^2) rounded (at most 21.5 % of t); t^2, t^3 and P's last step (A0 + the
    rest) carried as double-floats (FMA, Fast2Sum), tail_lo what they and the product's rounding dropped
    plus t_lo's share t_lo / (1 + t^2)."""
    z, z_lo, c3, c3_lo = square_cube(t)
    rest = ffma(ffma(ffma(ffma(ffma(ffma(ffma(_A8, z, _A7), z, _A6), z, _A5), z, _A4), z, _A3), z, _A2), z, _A1)
    u = z * rest
    u_lo = ffma(z, rest, -u) + z_lo * rest
    p = _A0 + u
    p_lo = ((_A0 - p) + u) + u_lo                     # Fast2Sum: |u| <= 0.12 < |A0|
    tail = c3 * p
    tail_lo = ffma(c3, p, -tail) + ffma(c3, p_lo, ffma(c3_lo, p, t_lo * ffma(ffma(_W2, z, _W1), z, _W0)))
    return tail, tail_lo


@register_jitable
def _sum_rounded(c_hi, c_lo, m, v, tail, tail_lo):
    """c_hi + c_lo + m (v + tail + tail_lo), rounded once (up to the low parts' own small errors), for
    m = +-1 or +-2, c_hi = 0 or |c_hi| >= |m v|, |tail| <= 0.22 |v|, and |c_hi + m v| >= |m tail|
    (every caller's): c_hi + m v and then + m tail by Fast2Sum (exact), the low parts added to their errors."""
    mv = m * v                                        # exact: a power of two
    h = c_hi + mv
    mt = m * tail
    h2 = h + mt
    return h2 + ((((c_hi - h) + mv) + ((h - h2) + mt)) + ffma(m, tail_lo, c_lo))


@inlined
def arctan_single(x):
    """atan x: t = min(|x|, 1/|x|), atan t = t + t^3 P(t^2); |x| > 1: pi/2 - atan t, 1/|x| as a
    double-float (the division's exact residual: its rounding alone would cost up to 0.5 ulp), pi/2
    in two parts; the sign of x (-0 kept); +-pi/2 at +-inf."""
    a = fabs_(x)
    inverted = a > _ONE
    q = _ONE / a
    t = q if inverted else a
    t_lo = q * ffma(-q, a, _ONE) if inverted else F(0.0)   # 1/a - q (1 - q a exact; NaN at a = inf: selected away)
    tail, tail_lo = atan_reduced(t, t_lo)
    r = _sum_rounded(_PIO2_1 if inverted else F(0.0), _PIO2_2 if inverted else F(0.0),
                     -_ONE if inverted else _ONE, t, tail, tail_lo)
    return fcopysign(_PIO2_1 if a == INF else r, x)


@register_jitable
def asin_parts(a):
    """(v, v_lo, big): |a| <= 0.5: (a, 0, False); 0.5 < |a| <= 1: (s, s_lo, True), s + s_lo =
    sqrt((1 - |a|) / 2) to 2^-46 (sqrt's rounding corrected by its exact residual), with asin |a| =
    pi/2 - 2 asin s; NaN beyond 1."""
    b = fabs_(a)
    big = b > _HALF
    w = (_ONE - b) * _HALF                            # exact for b in [0.5, 1]
    s = fsqrt(w)
    d = s + s
    s_lo = ffma(-s, s, w) / d if d > F(0.0) else F(0.0)  # (w - s^2) / 2s; 0 at |a| = 1 (not 0/0)
    return (s if big else a), (s_lo if big else F(0.0)), big


@register_jitable
def asin_tail(v, v_lo):
    """asin(v + v_lo) - v for |v| <= 0.5, |v_lo| <= 2^-23 |v|: v^3 P(v^2) plus v_lo's share v_lo /
    sqrt(1 - v^2) ~ v_lo (1 + v^2 / 2) (within 3 %)."""
    z = v * v
    p = ffma(ffma(ffma(ffma(ffma(_B5, z, _B4), z, _B3), z, _B2), z, _B1), z, _B0)
    return ffma(v * z, p, ffma(v_lo, _HALF * z, v_lo))


@inlined
def arcsin_single(x):
    """asin x: |x| <= 0.5: x + x^3 P(x^2); beyond: pi/2 - 2 asin s, s = sqrt((1 - |x|) / 2) a
    double-float, pi/2 in two parts; the sign of x (-0 kept); NaN outside [-1, 1]."""
    v, v_lo, big = asin_parts(x)
    v = fabs_(v)
    r = _sum_rounded(_PIO2_1 if big else F(0.0), _PIO2_2 if big else F(0.0), F(-2.0) if big else _ONE, v,
                     asin_tail(v, v_lo), F(0.0))
    return fcopysign(r, x)


@inlined
def arccos_single(x):
    """acos x: |x| <= 0.5: pi/2 - asin x; x > 0.5: 2 asin s, x < -0.5: pi - 2 asin s, s = sqrt((1 - |x|)
    / 2) a double-float; pi/2 and pi in two parts; +0 at 1, NaN outside [-1, 1]."""
    v, v_lo, big = asin_parts(x)
    neg = x < F(0.0)
    c_hi = (_PI_HI if neg else F(0.0)) if big else _PIO2_1
    c_lo = (_PI_LO if neg else F(0.0)) if big else _PIO2_2
    m = (F(-2.0) if neg else F(2.0)) if big else -_ONE
    return _sum_rounded(c_hi, c_lo, m, v, asin_tail(v, v_lo), F(0.0))


@inlined
def arctan2_single(y, x):
    """atan2(y, x) with C99's special values (NumPy's): t = min/max of |y| and |x| as a double-float
    (the quotient's exact residual; both scaled by 2^64 below 2^-60, where it would not be exact),
    atan t as arctan's; |y| > |x|: pi/2 - atan t; x < 0 or -0: pi - that; the sign of y.  inf/inf
    counts as t = 1 (odd multiples of pi/4), 0/0 as t = 0 (+-0 or +-pi by x's sign); NaN for NaN."""
    ay, ax = fabs_(y), fabs_(x)
    swap = ay > ax
    num, den = (ax, ay) if swap else (ay, ax)
    tiny = den < _TWO_M60
    num, den = (num * _TWO_P64, den * _TWO_P64) if tiny else (num, den)   # exact
    den = _ONE if den == F(0.0) else den              # 0 / 0 as 0 / 1: t = 0
    q = _ONE if num == den else num / den             # inf / inf as 1
    # t_lo where it counts (below 2^-40, atan t = t rounded): there num >= 2^-100 and the residual is exact
    t_lo = ffma(-q, den, num) / den if (q >= _TWO_M40) & (den < INF) else F(0.0)
    tail, tail_lo = atan_reduced(q, t_lo)
    left = fcopysign(_ONE, x) < F(0.0)
    c_hi = _PIO2_1 if swap else (_PI_HI if left else F(0.0))
    c_lo = _PIO2_2 if swap else (_PI_LO if left else F(0.0))
    m = -_ONE if swap != left else _ONE
    return fcopysign(_sum_rounded(c_hi, c_lo, m, q, tail, tail_lo), y)
