"""Per-op scalar semantics for the Numba backend: the one place that declares them.

``SCALAR`` maps each op name of the registry (``gpubcast/ops.py``) that the Numba kernels compute
to a scalar function ``f(codec, x, y)``: ``x`` and ``y`` are *raw* stored values (what a load from
the array gives), the result is the raw value to store.  ``VARIADIC`` maps each variadic op to
``(step, finish)``: the output is ``finish(codec, step(...step(x1, x2)..., xn), n)``, left to
right, exactly like the registry's ``functools.reduce`` references.

A ``Codec`` (``codecs``) says how raw values relate to the values NumPy computes with.

Values follow the registry's NumPy references (NumPy 2 on this machine, ml_dtypes for bfloat16):
floor division and remainder of floats use NumPy's ``npy_divmod``; integer division guards x / 0
and INT_MIN / -1 (which traps on x86); shifts by >= the width (or by a negative count) give 0, or
-1 for a right shift of a negative value; complex multiply rounds like NumPy's FMA loops; complex
division is NumPy's Smith algorithm; float maximum/minimum propagate NaN and return the second
operand on ties (the first for float16, as NumPy's half loops do).

Assumption: ``power`` of float32/float64 uses the C library's ``pow``/``powf`` (NumPy uses SVML on
AVX-512 machines for contiguous data, which may differ in the last bit).  Complex power with a
non-integer exponent calls the C library's ``cpow``/``cpowf`` like NumPy on x86-64 Linux, elsewhere
``exp(b * log(a))``, equal to NumPy within a few ulps.
"""

from __future__ import annotations

import cmath
import math

import numpy as np
from numba.core import types

from . import float32_activations as A32
from . import float32_math as F32
from . import float32_wide as W32
from .cache import overload, register_jitable
from .codecs import (SYSTEM_COMPLEX, SYSTEM_CPOW, ctruth, decode, double_to_half, encode, fabs_,
                     family, fceil, fcopysign, fexp2, ffloor, ffma, ffmod, float_to_bfloat16, fpow, frint, fsqrt,
                     ftrunc, libm_cbrt, libm_hypot, libm_nextafter, system_cexp, system_clog, system_cpow,
                     system_csqrt, system_ctanh)


# --- helpers over computed values -----------------------------------------------------------------

def _jitable(fn):
    """``fn`` callable from jitted code (registered once)."""
    if not getattr(fn, "_gpubcast_jitable", False):
        register_jitable(fn)
        fn._gpubcast_jitable = True
    return fn


def _lift(fn):
    """``fn(value, value) -> value`` as a raw-in, raw-out scalar function."""
    fn = _jitable(fn)
    return lambda codec, x, y: encode(codec, fn(decode(codec, x), decode(codec, y)))


def _predicate(fn):
    """``fn(value, value) -> bool`` on raw inputs."""
    fn = _jitable(fn)
    return lambda codec, x, y: fn(decode(codec, x), decode(codec, y))


def _select(first):
    """``first(value, value) -> bool``: keep the raw first operand if true, else the second."""
    first = _jitable(first)
    return lambda codec, x, y: x if first(decode(codec, x), decode(codec, y)) else y


def like(x, v):
    """``v`` converted to the type of ``x`` (keeps float32 math in float32)."""
    raise NotImplementedError


@overload(like)
def _like(x, v):
    t = x
    if isinstance(x, types.Complex):
        return lambda x, v: t(complex(v))
    return lambda x, v: t(v)


def cpack(x, re, im):
    """The complex ``re + im*j`` in the complex type of ``x``."""
    raise NotImplementedError


@overload(cpack)
def _cpack(x, re, im):
    t = x
    return lambda x, re, im: t(complex(re, im))


@register_jitable
def _isnan(v):
    return v != v


@register_jitable
def _truth(v):
    return v != 0


@register_jitable
def _cmul(a, b):
    """Complex multiply rounded like NumPy's SIMD loops: fma(ar, br, -(ai*bi)), fma(ar, bi, ai*br)."""
    return cpack(a, ffma(a.real, b.real, -(a.imag * b.imag)), ffma(a.real, b.imag, a.imag * b.real))


@register_jitable
def _cmul_plain(a, b):
    """Complex multiply without FMA, as NumPy's npy_cpow computes integer powers."""
    return cpack(a, a.real * b.real - a.imag * b.imag, a.real * b.imag + a.imag * b.real)


@register_jitable
def _cdiv(a, b):
    """Complex division by NumPy's Smith algorithm (loops_arithm_fp)."""
    ar, ai, br, bi = a.real, a.imag, b.real, b.imag
    abr, abi = abs(br), abs(bi)
    one = like(br, 1)
    if abr >= abi:
        if abr == 0 and abi == 0:
            return cpack(a, ar / abr, ai / abi)
        rat = bi / br
        scl = one / (br + bi * rat)
        return cpack(a, (ar + ai * rat) * scl, (ai - ar * rat) * scl)
    rat = br / bi
    scl = one / (bi + br * rat)
    return cpack(a, (ar * rat + ai) * scl, (ai * rat - ar) * scl)


@register_jitable
def _cge(a, b):
    return ((a.real > b.real and not _isnan(a.imag) and not _isnan(b.imag))
            or (a.real == b.real and a.imag >= b.imag))


@register_jitable
def _cgt(a, b):
    return ((a.real > b.real and not _isnan(a.imag) and not _isnan(b.imag))
            or (a.real == b.real and a.imag > b.imag))


@register_jitable
def _cle(a, b):
    return ((a.real < b.real and not _isnan(a.imag) and not _isnan(b.imag))
            or (a.real == b.real and a.imag <= b.imag))


@register_jitable
def _clt(a, b):
    return ((a.real < b.real and not _isnan(a.imag) and not _isnan(b.imag))
            or (a.real == b.real and a.imag < b.imag))


@register_jitable
def _cnan(a):
    return _isnan(a.real) or _isnan(a.imag)


@register_jitable
def _float_divmod(a, b):
    """NumPy's npy_divmod for a nonzero divisor: (floor quotient, remainder with b's sign)."""
    zero = like(a, 0)
    one = like(a, 1)
    mod = ffmod(a, b)
    div = (a - mod) / b
    if mod != 0:
        if (b < 0) != (mod < 0):
            mod = mod + b
            div = div - one
    else:
        mod = fcopysign(zero, b)
    if div != 0:
        floordiv = ffloor(div)
        if div - floordiv > 0.5:
            floordiv = floordiv + one
    else:
        floordiv = fcopysign(zero, a / b)
    return floordiv, mod


@register_jitable
def _float_floor_divide(a, b):
    if b == 0:
        return a / b
    return _float_divmod(a, b)[0]


@register_jitable
def _float_remainder(a, b):
    if b == 0:
        return ffmod(a, b)
    return _float_divmod(a, b)[1]


# --- the scalar functions, one per op ---------------------------------------------------------------

def _binary(families, jit_options=None):
    """Declare a scalar function: ``families`` maps a value family (b/i/u/f/c) to the raw impl
    builder ``(codec type, raw type) -> impl``, or to an impl directly; ``jit_options`` its compile
    options (``float32_math.INLINE`` for the ops computed by it)."""
    def stub(codec, x, y):
        raise NotImplementedError

    @overload(stub, jit_options=dict(jit_options or {}))
    def _ov(codec, x, y):
        return _implementation(families, codec, x)
    return stub


def _implementation(families, codec, x):
    """The implementation ``families`` holds for the value family of raw type ``x`` under ``codec``
    (a builder's, built for them)."""
    fam = family(codec, x)
    make = families.get(fam)
    if make is None:
        raise TypeError(f"no scalar implementation for family {fam!r} ({x} under {codec})")
    return make(codec, x) if getattr(make, "_builder", False) else make


def _builder(fn):
    fn._builder = True
    return fn


def _arith(op):
    """The same value formula for every numeric family, lifted through the codec."""
    f = _lift(op)
    return {"i": f, "u": f, "f": f, "c": f}


def _integer(build):
    """A family builder from ``build(t, signed) -> impl`` (``t``: the Numba integer type)."""
    @_builder
    def make(codec, xt):
        return build(xt, xt.signed)
    return make


def _floor_divide_int(t, signed):
    def impl(codec, x, y):
        a, b = x, y
        if b == 0:
            return t(0)
        if signed and b == -1:
            return t(-a)  # INT_MIN // -1 wraps to INT_MIN, and never traps
        return t(a // b)
    return impl


def _remainder_int(t, signed):
    def impl(codec, x, y):
        a, b = x, y
        if b == 0 or (signed and b == -1):
            return t(0)
        return t(a % b)
    return impl


def _fmod_int(t, signed):
    def impl(codec, x, y):
        a, b = x, y
        if b == 0 or (signed and b == -1):
            return t(0)
        r = t(a % b)
        if r != 0 and (a < 0) != (b < 0):
            r = t(r - b)
        return r
    return impl


def _div_trunc_int(t, signed):
    def impl(codec, x, y):
        a, b = x, y
        if b == 0:
            return t(0)
        if signed and b == -1:
            return t(-a)
        q = t(a // b)
        if (a < 0) != (b < 0) and t(a % b) != 0:
            q = t(q + 1)
        return q
    return impl


def _power_int(t, signed):
    def impl(codec, x, y):
        a, b = x, y
        one = t(1)
        if signed and b < 0:
            if a == 1:
                return one
            if a == -1:
                return t(-1) if b & 1 else one
            return t(0)
        result = one
        base = a
        e = b
        while e > 0:
            if e & 1:
                result = t(result * base)
            e = t(e >> 1)
            if e > 0:
                base = t(base * base)
        return result
    return impl


def _shift(left: bool):
    @_builder
    def make(codec, xt):
        t, signed = xt, xt.signed
        width = xt.bitwidth
        ut = types.Integer.from_bitwidth(width, signed=False)

        if left:
            def impl(codec, x, y):
                a, b = x, y
                if ut(b) < width:
                    return t(a << b)
                return t(0)
        else:
            def impl(codec, x, y):
                a, b = x, y
                if ut(b) < width:
                    return t(a >> b)
                if signed and a < 0:
                    return t(-1)
                return t(0)
        return impl
    return make


@_builder
def _float_power(codec, x):
    return _lift(lambda a, b: fpow(a, b))


@register_jitable
def _power_fast_path(a, b):
    if b == -1:
        return like(a, 1) / a
    if b == 0:
        return like(a, 1)
    if b == 0.5:
        return np.sqrt(a)
    if b == 1:
        return a
    if b == 2:
        return a * a
    return fpow(a, b)


@_builder
def _float_power_scalar_exponent(codec, x):
    if codec.codec != "native":  # float16 (NumPy's half loop) and bfloat16 (ml_dtypes): plain pow
        return _lift(lambda a, b: fpow(a, b))
    return _lift(lambda a, b: _power_fast_path(a, b))


@register_jitable
def _complex_power(a, b):
    """NumPy's npy_cpow: exact special cases and repeated multiplication for small integer
    exponents; otherwise exp(b * log(a))."""
    one = cpack(a, 1.0, 0.0)
    if b.real == 0 and b.imag == 0:
        return one
    if a.real == 0 and a.imag == 0:
        if b.real > 0:
            return cpack(a, 0.0, 0.0)
        return cpack(a, math.nan, math.nan)
    if b.imag == 0 and b.real > -100 and b.real < 100:
        n = int(b.real)
        if n == b.real:
            if n == 1:
                return a
            if n == 2:
                return _cmul_plain(a, a)
            if n == 3:
                return _cmul_plain(a, _cmul_plain(a, a))
            m = -n if n < 0 else n
            aa = one
            p = a
            mask = 1
            while True:
                if m & mask:
                    aa = _cmul_plain(aa, p)
                mask <<= 1
                if m < mask:
                    break
                p = _cmul_plain(p, p)
            if b.real < 0:
                return _cdiv(one, aa)
            return aa
    if SYSTEM_CPOW:
        return system_cpow(a, b)
    return cpack(a, 0.0, 0.0) + np.exp(b * np.log(a))


def _float_maximum():
    """NaN-propagating maximum: second operand on ties (first for float16, like NumPy's half loop)."""
    @_builder
    def make(codec, x):
        if codec.codec == "float16":
            return _select(lambda a, b: a >= b or _isnan(a))
        return _select(lambda a, b: a > b or _isnan(a))
    return make


def _float_minimum():
    @_builder
    def make(codec, x):
        if codec.codec == "float16":
            return _select(lambda a, b: a <= b or _isnan(a))
        return _select(lambda a, b: a < b or _isnan(a))
    return make


@_builder
def _prelu_make(codec, x):
    if codec.codec in ("float16", "bfloat16"):
        def impl(codec, x, y):
            a, s = x, y
            v = decode(codec, a)
            return encode(codec, v * decode(codec, s)) if v < 0 else a
        return impl

    def impl(codec, x, y):
        a, s = x, y
        return a * s if a < 0 else a
    return impl


_compare_real = {
    "equal": lambda a, b: a == b, "not_equal": lambda a, b: a != b,
    "greater": lambda a, b: a > b, "greater_equal": lambda a, b: a >= b,
    "less": lambda a, b: a < b, "less_equal": lambda a, b: a <= b,
}
_compare_complex = {
    "equal": lambda a, b: a.real == b.real and a.imag == b.imag,
    "not_equal": lambda a, b: a.real != b.real or a.imag != b.imag,
    "greater": lambda a, b: _cgt(a, b), "greater_equal": lambda a, b: _cge(a, b),
    "less": lambda a, b: _clt(a, b), "less_equal": lambda a, b: _cle(a, b),
}
_logical = {
    "logical_and": lambda p, q: p and q,
    "logical_or": lambda p, q: p or q,
    "logical_xor": lambda p, q: p != q,
}


def _logical_families(combine):
    combine = _jitable(combine)
    real = _predicate(lambda a, b: combine(_truth(a), _truth(b)))
    return {"b": _predicate(combine), "i": real, "u": real, "f": real,
            "c": _predicate(lambda a, b: combine(ctruth(a), ctruth(b)))}


def _compare_families(name):
    real = _predicate(_compare_real[name])
    return {"b": real, "i": real, "u": real, "f": real, "c": _predicate(_compare_complex[name])}


_bitwise = {"bitwise_and": lambda a, b: a & b, "bitwise_or": lambda a, b: a | b,
            "bitwise_xor": lambda a, b: a ^ b}


# --- math functions (#22): the Array API set and the NumPy ufuncs paired with them ---------------------
# NumPy's values: the C library's real functions (float16 and bfloat16 computed in float32 and rounded
# once, as NumPy's half loops and ml_dtypes do), the C library's complex functions where NumPy calls
# them, and NumPy's own formulas (funcs.inc.src, npy_math) for the rest.

_LN2 = math.log(2.0)
_LOG2E, _LOG10E = 1.0 / math.log(2.0), 1.0 / math.log(10.0)


@register_jitable
def _sign_complex(v):
    """NumPy 2's complex sign: v / |v| (0 for 0, nan for nan; an infinite part gives +-1 on its axis)."""
    m = libm_hypot(v.real, v.imag)
    zero, one = like(m, 0), like(m, 1)
    if m != m:
        return cpack(v, math.nan, math.nan)
    if m == like(m, math.inf):
        if fabs_(v.real) == m:
            if fabs_(v.imag) == m:
                return cpack(v, math.nan, math.nan)
            return cpack(v, one if v.real > 0 else -one, zero)
        return cpack(v, zero, one if v.imag > 0 else -one)
    if m == 0:
        return cpack(v, zero, zero)
    return cpack(v, v.real / m, v.imag / m)


@register_jitable
def _cexp2(v):
    """NumPy's nc_exp2: exp(v * ln 2), each part multiplied in v's precision."""
    ln2 = like(v.real, _LN2)
    return _cexp(cpack(v, v.real * ln2, v.imag * ln2))


@register_jitable
def _cexp(v):
    if SYSTEM_CPOW:
        return system_cexp(v)
    return cmath.exp(v)


@register_jitable
def _clog(v):
    if SYSTEM_CPOW:
        return system_clog(v)
    return cmath.log(v)


@register_jitable
def _cexpm1(v):
    """NumPy's nc_expm1."""
    x, y = v.real, v.imag
    a = math.sin(y / like(y, 2))
    return cpack(v, math.expm1(x) * math.cos(y) - like(y, 2) * a * a, math.exp(x) * math.sin(y))


@register_jitable
def _clog1p(v):
    """NumPy's nc_log1p: log(|1 + v|) + i atan2(Im v, 1 + Re v)."""
    re = v.real + like(v.real, 1)
    return cpack(v, math.log(libm_hypot(re, v.imag)), math.atan2(v.imag, re))


@register_jitable
def _clog_scaled(v, k):
    """NumPy's nc_log2 / nc_log10: clog(v), each part times ``k`` in v's precision."""
    r = _clog(v)
    c = like(v.real, k)
    return cpack(v, r.real * c, r.imag * c)


@register_jitable
def _logaddexp(x, y):
    """npy_logaddexp."""
    if x == y:
        return x + like(x, _LN2)
    d = x - y
    if d > 0:
        return x + math.log1p(math.exp(-d))
    if d <= 0:
        return y + math.log1p(math.exp(d))
    return d  # nan


@register_jitable
def _logaddexp2(x, y):
    """npy_logaddexp2 (log2(1 + t) as LOG2E * log1p(t))."""
    if x == y:
        return x + like(x, 1)
    d = x - y
    if d > 0:
        return x + like(x, _LOG2E) * math.log1p(fexp2(-d))
    if d <= 0:
        return y + like(x, _LOG2E) * math.log1p(fexp2(d))
    return d


@register_jitable
def _deg2rad(v):
    return v * (like(v, math.pi) / like(v, 180.0))   # NumPy: x * (NPY_PI / 180), in x's precision


@register_jitable
def _rad2deg(v):
    return v * (like(v, 180.0) / like(v, math.pi))


@register_jitable
def _isinf(v):
    return fabs_(v) == like(v, math.inf)


@register_jitable
def _isfinite(v):
    return fabs_(v) < like(v, math.inf)


@register_jitable
def _half_nextafter(x, y):
    """NumPy's npy_half_nextafter on raw float16 bits (equal values give x)."""
    if (x & 0x7FFF) > 0x7C00 or (y & 0x7FFF) > 0x7C00:
        return np.uint16(0x7E00)
    if x == y or (x & 0x7FFF) == 0 and (y & 0x7FFF) == 0:
        return x
    if (x & 0x7FFF) == 0:
        return np.uint16((y & 0x8000) + 1)
    if not x & 0x8000:
        return np.uint16(x - 1) if np.int16(x) > np.int16(y) else np.uint16(x + 1)
    if not y & 0x8000 or (x & 0x7FFF) > (y & 0x7FFF):
        return np.uint16(x - 1)
    return np.uint16(x + 1)


@register_jitable
def _bfloat16_nextafter(x, y):
    """ml_dtypes' nextafter on raw bfloat16 bits (equal bits, or two zeros, give y)."""
    if (x & 0x7FFF) > 0x7F80 or (y & 0x7FFF) > 0x7F80:
        return np.uint16(0x7FC0)
    if x == y:
        return y
    if (x & 0x7FFF) == 0:
        if (y & 0x7FFF) == 0:
            return y
        return np.uint16((y & 0x8000) | 1)
    fx, fy = bfloat16_value(x), bfloat16_value(y)
    if (fx < fy) == (not x & 0x8000):   # away from zero: magnitude up
        return np.uint16(x + 1)
    return np.uint16(x - 1)


def bfloat16_value(x):
    raise NotImplementedError


@overload(bfloat16_value)
def _bfloat16_value(x):
    from .codecs import BFLOAT16
    return lambda x: decode(BFLOAT16, x)


@_builder
def _nextafter_make(codec, x):
    if codec.codec == "float16":
        return lambda codec, x, y: _half_nextafter(x, y)
    if codec.codec == "bfloat16":
        return lambda codec, x, y: _bfloat16_nextafter(x, y)
    return lambda codec, x, y: libm_nextafter(x, y)


def _fmax_fmin(greater: bool):
    """NumPy's fmax / fmin: NaN ignored unless both are; ties as ``maximum`` (the second operand,
    the first for float16)."""
    @_builder
    def make(codec, x):
        if codec.codec == "float16":
            if greater:
                return _select(lambda a, b: a >= b or _isnan(b))
            return _select(lambda a, b: a <= b or _isnan(b))
        if greater:
            return _select(lambda a, b: a > b or _isnan(b))
        return _select(lambda a, b: a < b or _isnan(b))
    return make


def _complex_math(name, portable):
    return _complex_function(SYSTEM_COMPLEX[name], portable)


def _float32_fast(single, general, nargs=1):
    """A jitable function of ``nargs`` values: ``single`` (``float32_math``: vectorises) on float32
    values, ``general`` (a C library function, NumPy's float64 loop) on others."""
    if nargs == 1:
        def stub(v):
            raise NotImplementedError

        @overload(stub, jit_options=dict(F32.INLINE))
        def _ov(v):
            if v == types.float32:
                return lambda v: single(v)
            return lambda v: general(v)
    else:
        def stub(v, w):
            raise NotImplementedError

        @overload(stub, jit_options=dict(F32.INLINE))
        def _ov2(v, w):
            if v == types.float32:
                return lambda v, w: single(v, w)
            return lambda v, w: general(v, w)
    stub.__name__ = stub.__qualname__ = f"fast_{single.__name__}"
    stub._gpubcast_jitable = True  # its own overload: ``_jitable`` must not register the stub's body
    return stub


#: math functions whose float32 values come from ``float32_wide`` (float64 formulas that vectorise; the C
#: library elsewhere)
FLOAT32_FUNCTIONS = {"sin": W32.sin_single, "cos": W32.cos_single, "tan": W32.tan_single,
                     "arcsin": W32.arcsin_single, "arccos": W32.arccos_single, "arctan": W32.arctan_single,
                     "sinh": W32.sinh_single, "cosh": W32.cosh_single, "arcsinh": W32.arcsinh_single,
                     "arccosh": W32.arccosh_single, "arctanh": W32.arctanh_single}
#: binary ops whose float32 values come from ``float32_wide``, ``float32_math`` or ``float32_activations``
#: (their scalar functions are inlined: the activations with one parameter among them)
FLOAT32_BINARY = frozenset({"arctan2", "hypot", "logaddexp", "logaddexp2", "elu", "celu", "swish"})


@register_jitable
def _sin_exact(v):
    """sin of any value: float32's vectorised polynomial where it reduces exactly, else the C library."""
    return math.sin(v) if W32.sin_cos_large(v) else _sin_vector(v)


@register_jitable
def _cos_exact(v):
    return math.cos(v) if W32.sin_cos_large(v) else _cos_vector(v)


@register_jitable
def _tan_exact(v):
    return math.tan(v) if W32.sin_cos_large(v) else _tan_vector(v)


_sin_vector = _float32_fast(W32.sin_single, math.sin)
_cos_vector = _float32_fast(W32.cos_single, math.cos)
_tan_vector = _float32_fast(W32.tan_single, math.tan)


def sin_cos_large(codec, x):
    """1 where a raw float is beyond ``float32_wide``'s sin/cos reduction, else 0 (always 0 for float64)."""
    raise NotImplementedError


@overload(sin_cos_large)
def _sin_cos_large_ov(codec, x):
    if codec.codec == "native" and x != types.float32:  # float64: the C library throughout
        return lambda codec, x: np.int32(0)
    return lambda codec, x: W32.sin_cos_large(decode(codec, x))


def _declare_math_unary():
    ident = lambda codec, x: x
    zero = lambda codec, x: like(x, 0)  # the raw zero is +0 in every codec
    false, true = (lambda codec, x: False), (lambda codec, x: True)
    table = {}
    for name, real, system, portable in (
            ("sin", math.sin, "csin", cmath.sin), ("cos", math.cos, "ccos", cmath.cos),
            ("tan", math.tan, "ctan", cmath.tan), ("arcsin", math.asin, "casin", cmath.asin),
            ("arccos", math.acos, "cacos", cmath.acos), ("arctan", math.atan, "catan", cmath.atan),
            ("sinh", math.sinh, "csinh", cmath.sinh), ("cosh", math.cosh, "ccosh", cmath.cosh),
            ("arcsinh", math.asinh, "casinh", cmath.asinh), ("arccosh", math.acosh, "cacosh", cmath.acosh),
            ("arctanh", math.atanh, "catanh", cmath.atanh)):
        single = FLOAT32_FUNCTIONS.get(name)
        real = _float32_fast(single, real) if single else _real_function(real)
        table[name] = {"f": _lift1(real), "c": _complex_math(system, portable)}
    table["sin"]["f"], table["cos"]["f"], table["tan"]["f"] = (_lift1(_sin_exact), _lift1(_cos_exact),
                                                               _lift1(_tan_exact))
    table.update({
        "exp2": {"f": _lift1(_float32_fast(F32.exp2_single, fexp2)), "c": _lift1(lambda v: _cexp2(v))},
        "expm1": {"f": _lift1(_float32_fast(F32.expm1_single, math.expm1)), "c": _lift1(lambda v: _cexpm1(v))},
        "log1p": {"f": _lift1(_float32_fast(F32.log1p_single, math.log1p)), "c": _lift1(lambda v: _clog1p(v))},
        "log2": {"f": _lift1(_float32_fast(F32.log2_single, math.log2)),
                 "c": _lift1(lambda v: _clog_scaled(v, _LOG2E))},
        "log10": {"f": _lift1(_float32_fast(F32.log10_single, math.log10)),
                  "c": _lift1(lambda v: _clog_scaled(v, _LOG10E))},
        "cbrt": {"f": _lift1(_float32_fast(W32.cbrt_single, libm_cbrt))},
        "deg2rad": {"f": _lift1(lambda v: _deg2rad(v))},
        "rad2deg": {"f": _lift1(lambda v: _rad2deg(v))},
        "square": {"i": _raw1(lambda codec, x: x * x), "u": _raw1(lambda codec, x: x * x),
                   "f": _lift1(lambda v: v * v), "c": _lift1(lambda v: _cmul(v, v))},
        "trunc": {"b": ident, "i": ident, "u": ident, "f": _lift1(lambda v: ftrunc(v))},
        "positive": {"i": ident, "u": ident, "f": ident, "c": ident},
        "conj": {"i": ident, "u": ident, "f": ident, "c": lambda codec, x: cpack(x, x.real, -x.imag)},
        "real": {"b": ident, "i": ident, "u": ident, "f": ident, "c": lambda codec, x: x.real},
        "imag": {"b": zero, "i": zero, "u": zero, "f": zero, "c": lambda codec, x: x.imag},
        "isnan": {"b": false, "i": false, "u": false, "f": lambda codec, x: _isnan(decode(codec, x)),
                  "c": lambda codec, x: _cnan(x)},
        "isinf": {"b": false, "i": false, "u": false, "f": lambda codec, x: _isinf(decode(codec, x)),
                  "c": lambda codec, x: _isinf(x.real) or _isinf(x.imag)},
        "isfinite": {"b": true, "i": true, "u": true, "f": lambda codec, x: _isfinite(decode(codec, x)),
                     "c": lambda codec, x: _isfinite(x.real) and _isfinite(x.imag)},
        "signbit": {"f": lambda codec, x: fcopysign(like(decode(codec, x), 1), decode(codec, x)) < 0},
    })
    return table


def _real_function(fn):
    """``fn`` of the math module (a C library call in Numba) as a jitable function of one value."""
    return _jitable(lambda v: fn(v))


def _declare_math_binary():
    f_max, f_min = _fmax_fmin(True), _fmax_fmin(False)
    int_max, int_min = _select(lambda a, b: a > b), _select(lambda a, b: a < b)
    return {
        "arctan2": {"f": _lift(_float32_fast(W32.arctan2_single, math.atan2, 2))},
        "hypot": {"f": _lift(_float32_fast(W32.hypot_single, libm_hypot, 2))},
        "logaddexp": {"f": _lift(_float32_fast(F32.logaddexp_single, _logaddexp, 2))},
        "logaddexp2": {"f": _lift(_float32_fast(F32.logaddexp2_single, _logaddexp2, 2))},
        "copysign": {"f": _lift(lambda a, b: fcopysign(a, b))},
        "nextafter": {"f": _nextafter_make},
        "fmax": {"b": _lift(lambda a, b: a or b), "i": int_max, "u": int_max, "f": f_max,
                 "c": _select(lambda a, b: _cnan(b) or _cge(a, b))},
        "fmin": {"b": _lift(lambda a, b: a and b), "i": int_min, "u": int_min, "f": f_min,
                 "c": _select(lambda a, b: _cnan(b) or _cle(a, b))},
    }


def _declare():
    add = _arith(lambda a, b: a + b)
    add["b"] = _lift(lambda a, b: a or b)
    sub = _arith(lambda a, b: a - b)
    mul = _arith(lambda a, b: a * b)
    mul["b"] = _lift(lambda a, b: a and b)
    mul["c"] = _lift(lambda a, b: _cmul(a, b))
    div = {"f": _lift(lambda a, b: a / b), "c": _lift(lambda a, b: _cdiv(a, b))}
    int_max = _select(lambda a, b: a > b)
    int_min = _select(lambda a, b: a < b)
    table = {
        "add": add,
        "subtract": sub,
        "multiply": mul,
        "divide": div,
        "floor_divide": {"i": _integer(_floor_divide_int), "u": _integer(_floor_divide_int),
                         "f": _lift(lambda a, b: _float_floor_divide(a, b))},
        "remainder": {"i": _integer(_remainder_int), "u": _integer(_remainder_int),
                      "f": _lift(lambda a, b: _float_remainder(a, b))},
        "fmod": {"i": _integer(_fmod_int), "u": _integer(_fmod_int), "f": _lift(lambda a, b: ffmod(a, b))},
        "power": {"i": _integer(_power_int), "u": _integer(_power_int), "f": _float_power,
                  "c": _lift(lambda a, b: _complex_power(a, b))},
        "maximum": {"b": _lift(lambda a, b: a or b), "i": int_max, "u": int_max, "f": _float_maximum(),
                    "c": _select(lambda a, b: _cnan(a) or _cge(a, b))},
        "minimum": {"b": _lift(lambda a, b: a and b), "i": int_min, "u": int_min, "f": _float_minimum(),
                    "c": _select(lambda a, b: _cnan(a) or _cle(a, b))},
        "left_shift": {"i": _shift(True), "u": _shift(True)},
        "right_shift": {"i": _shift(False), "u": _shift(False)},
        "div_trunc": {"i": _integer(_div_trunc_int), "u": _integer(_div_trunc_int),
                      "f": div["f"], "c": div["c"]},
        "prelu": {"i": _prelu_make, "u": _prelu_make, "f": _prelu_make},
    }
    for name in _compare_real:
        table[name] = _compare_families(name)
    # NumPy's float32/float64 power loop takes a fast path when the exponent is one value for the
    # whole call (measured on NumPy 2.4: a scalar, a (1, 1) array or an all-0-stride view; not an
    # exponent broadcast along a row but varying along another dim): -1 -> 1/x, 0 -> 1,
    # 0.5 -> sqrt(x), 1 -> x, 2 -> x*x
    variants = {"power": dict(table["power"], f=_float_power_scalar_exponent)}
    for name, combine in _logical.items():
        table[name] = _logical_families(combine)
    for name, fn in _bitwise.items():
        f = _lift(fn)
        table[name] = {"b": f, "i": f, "u": f}
    table.update(_declare_math_binary())
    return table, variants


def _make_stubs(table, prefix):
    out = {}
    for name, families in table.items():
        stub = _binary(families, F32.INLINE if name in FLOAT32_BINARY else None)
        stub.__name__ = stub.__qualname__ = f"{prefix}{name}"
        stub.__module__ = __name__
        globals()[stub.__name__] = stub  # importable by name: closures over it pickle by reference
        out[name] = stub
    return out


_TABLE, _VARIANTS = _declare()
#: op name -> scalar function ``f(codec, raw x, raw y) -> raw result``
SCALAR = _make_stubs(_TABLE, "op_")
#: op name -> its scalar function where the second operand is one value over the whole call (NumPy's
#: loop takes a fast path then: measured, a broadcast operand that varies along any dim does not get
#: it), for the ops where NumPy's values differ there
SCALAR_SECOND_CONSTANT = _make_stubs(_VARIANTS, "op_second_constant_")


def row_functions(name: str):
    """(scalar function, its variant for a second operand constant along the row) of op ``name``."""
    f = SCALAR[name]
    return f, SCALAR_SECOND_CONSTANT.get(name, f)


# --- unary scalar functions ---------------------------------------------------------------------------

def _unary(families):
    """Declare a unary scalar function ``f(codec, raw x) -> raw result`` (as ``_binary``)."""
    def stub(codec, x):
        raise NotImplementedError

    @overload(stub, jit_options=dict(F32.INLINE))  # a float32_math body inlined into the row's loop
    def _ov(codec, x):
        return _implementation(families, codec, x)
    return stub


def _lift1(fn):
    """``fn(value) -> value`` as a raw-in, raw-out unary scalar function."""
    fn = _jitable(fn)
    return lambda codec, x: encode(codec, fn(decode(codec, x)))


def _raw1(fn):
    """``fn(raw) -> raw``: the raw value is the value (integers, bools kept as raw 0/1)."""
    return _jitable(fn)


def _complex_function(system, portable):
    """The C library's complex function where it can be called (NumPy's values), else Numba's cmath."""
    if SYSTEM_CPOW:
        return _lift1(lambda v: system(v))
    return _lift1(lambda v: portable(v))


@register_jitable
def _creciprocal(v):
    """NumPy's complex reciprocal loop (a Smith division of 1 by v, without Smith's zero case)."""
    one = like(v.real, 1)
    if abs(v.imag) <= abs(v.real):
        r = v.imag / v.real
        d = v.real + v.imag * r
        return cpack(v, one / d, -r / d)
    r = v.real / v.imag
    d = v.real * r + v.imag
    return cpack(v, r / d, -one / d)


@register_jitable
def _sign_float(v):
    if v > 0:
        return like(v, 1)
    if v < 0:
        return like(v, -1)
    if v == 0:
        return like(v, 0)
    return v  # nan


_tanh = _float32_fast(F32.tanh_single, math.tanh)


@register_jitable
def _sigmoid(v):
    one = like(v, 1)
    return one / (one + math.exp(-v))


def _relu(codec, x):
    """max(x, 0) with ``maximum``'s own NaN and tie rules (the raw zero is +0 in every codec)."""
    return lambda codec, x: op_maximum(codec, x, like(x, 0))  # noqa: F821 - a stub _make_stubs defines below


_relu._builder = True


def _declare_unary():
    ident = lambda codec, x: x  # integers and bools unchanged (floor, ceil, round)
    neg = _raw1(lambda codec, x: -x)
    return {
        "negative": {"i": neg, "u": neg, "f": _lift1(lambda v: -v), "c": _lift1(lambda v: -v)},
        "abs": {"b": ident, "i": _raw1(lambda codec, x: -x if x < 0 else x), "u": ident,
                "f": _lift1(lambda v: fabs_(v)), "c": lambda codec, x: abs(x)},
        "sqrt": {"f": _lift1(lambda v: fsqrt(v)), "c": _complex_function(system_csqrt, cmath.sqrt)},
        "exp": {"f": _lift1(_float32_fast(F32.exp_single, math.exp)), "c": _complex_function(system_cexp, cmath.exp)},
        "log": {"f": _lift1(_float32_fast(F32.log_single, math.log)), "c": _complex_function(system_clog, cmath.log)},
        "tanh": {"f": _lift1(lambda v: _tanh(v)), "c": _complex_function(system_ctanh, cmath.tanh)},
        "erf": {"f": _lift1(_float32_fast(F32.erf_single, math.erf))},
        "sigmoid": {"f": _lift1(_float32_fast(F32.sigmoid_single, _sigmoid))},
        "reciprocal": {"f": _lift1(lambda v: like(v, 1) / v), "c": _lift1(lambda v: _creciprocal(v))},
        "floor": {"b": ident, "i": ident, "u": ident, "f": _lift1(lambda v: ffloor(v))},
        "ceil": {"b": ident, "i": ident, "u": ident, "f": _lift1(lambda v: fceil(v))},
        "round": {"i": ident, "u": ident, "f": _lift1(lambda v: frint(v)),
                  "c": _lift1(lambda v: cpack(v, frint(v.real), frint(v.imag)))},
        "sign": {"i": _raw1(lambda codec, x: (x > 0) - (x < 0)), "u": _raw1(lambda codec, x: x > 0),
                 "f": _lift1(lambda v: _sign_float(v)), "c": _lift1(lambda v: _sign_complex(v))},
        "relu": {"i": _relu, "u": _relu, "f": _relu},
        "logical_not": {"b": lambda codec, x: x == 0, "i": lambda codec, x: x == 0, "u": lambda codec, x: x == 0,
                        "f": lambda codec, x: not _truth(decode(codec, x)),
                        "c": lambda codec, x: not ctruth(x)},
        "bitwise_not": {"b": lambda codec, x: x == 0, "i": _raw1(lambda codec, x: ~x),
                        "u": _raw1(lambda codec, x: ~x)},
    }


def _make_unary_stubs(table, declare=None, prefix="unary_"):
    """Unary scalar functions by name (``declare``/``prefix``: those of another arity, e.g. ``_parametric``)."""
    out = {}
    for name, families in table.items():
        stub = (declare or _unary)(families)
        stub.__name__ = stub.__qualname__ = f"{prefix}{name}"
        stub.__module__ = __name__
        globals()[stub.__name__] = stub
        out[name] = stub
    return out


#: unary op name -> scalar function ``f(codec, raw x) -> raw result`` (``cast`` runs NumPy's astype)
UNARY = _make_unary_stubs({**_declare_unary(), **_declare_math_unary()})

#: unary ops whose float32 body is long (``float32_math``, ``float32_activations``): ``rows.unary_row``
#: keeps their contiguous loop a function of its own
HEAVY_UNARY = frozenset({"exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "tanh", "sigmoid", "erf",
                         "softplus", "mish", "gelu", "gelu_tanh"})

#: unary op name -> (``vector``, ``large``): ``vector(codec, x)`` is the op's value where
#: ``large(codec, x)`` is 0 and vectorises; ``unary_row`` runs it on rows without a large element
UNARY_VECTOR = {name: (stub, sin_cos_large) for name, stub in _make_unary_stubs(
    {"sin": {"f": _lift1(_sin_vector), "c": _complex_math("csin", cmath.sin)},
     "cos": {"f": _lift1(_cos_vector), "c": _complex_math("ccos", cmath.cos)},
     "tan": {"f": _lift1(_tan_vector), "c": _complex_math("ctan", cmath.tan)}}, prefix="unary_vector_").items()}


def move(codec, x):
    """Data movement's scalar function: the raw value itself (``unary_row`` of it copies elements)."""
    raise NotImplementedError


@overload(move)
def _move(codec, x):
    return lambda codec, x: x


def count_finish(codec, acc, n):
    """Finish of ``sum``/``max``/``min``: the accumulated value itself."""
    raise NotImplementedError


@overload(count_finish)
def _count_finish(codec, acc, n):
    return lambda codec, acc, n: acc


def mean_finish(codec, acc, n):
    """Finish of ``mean``: the sum divided by n converted to the inputs' type (NumPy's
    ``total / dtype(n)``), complex by NumPy's Smith division."""
    raise NotImplementedError


@overload(mean_finish)
def _mean_finish(codec, acc, n):
    fam = family(codec, acc)
    if fam == "c":
        return lambda codec, acc, n: _cdiv(acc, cpack(acc, n, 0))
    if codec.codec in ("float16", "bfloat16"):
        def impl(codec, acc, n):
            count = decode(codec, encode(codec, np.float32(n)))  # n in the inputs' type
            return encode(codec, decode(codec, acc) / count)
        return impl
    return lambda codec, acc, n: acc / like(acc, n)


#: variadic op name -> (step scalar function, finish function)
VARIADIC = {
    "sum": (SCALAR["add"], count_finish),
    "mean": (SCALAR["add"], mean_finish),
    "max": (SCALAR["maximum"], count_finish),
    "min": (SCALAR["minimum"], count_finish),
}

#: ops whose integer results do not depend on signedness (two's complement): the kernels compute
#: signed integers as unsigned of the same width, sharing one compiled specialisation
SIGN_AGNOSTIC = frozenset({"add", "subtract", "multiply", "bitwise_and", "bitwise_or", "bitwise_xor",
                           "equal", "not_equal", "left_shift", "logical_and", "logical_or",
                           "logical_xor", "sum"})


# --- activations (issue #22; registry: ``ops.ACTIVATIONS``) ---------------------------------------------
#
# Each computes in float64 and rounds once to its dtype, as the registry's references: float16 by
# NumPy's double -> half conversion, bfloat16 through float32 (ml_dtypes' astype from float64).

def narrow(codec, x, r):
    """float64 ``r`` as the raw value of ``x``'s type under ``codec``, rounded once."""
    raise NotImplementedError


@overload(narrow)
def _narrow(codec, x, r):
    name = codec.codec
    if name == "float16":
        return lambda codec, x, r: double_to_half(r)
    if name == "bfloat16":
        return lambda codec, x, r: float_to_bfloat16(np.float32(r))
    t = x
    return lambda codec, x, r: t(r)


@register_jitable
def _wide(codec, x):
    return np.float64(decode(codec, x))


def _act(fn, inline=False):
    """``fn(float64 x, float64 params...) -> float64`` as a raw-in, raw-out scalar function of 1-3
    operands (``inline``: into its caller's IR, so that a row loop of it vectorises)."""
    fn = F32.inlined(fn) if inline else _jitable(fn)
    nargs = fn.__code__.co_argcount
    if nargs == 1:
        return lambda codec, x: narrow(codec, x, fn(_wide(codec, x)))
    if nargs == 2:
        return lambda codec, x, y: narrow(codec, x, fn(_wide(codec, x), _wide(codec, y)))
    return lambda codec, x, y, z: narrow(codec, x, fn(_wide(codec, x), _wide(codec, y), _wide(codec, z)))


@register_jitable
def _clip01(t):
    """min(1, max(0, t)), NaN-propagating (NumPy's maximum / minimum)."""
    if t < 0.0:
        return 0.0
    if t > 1.0:
        return 1.0
    return t


@register_jitable
def _clip06(t):
    """min(max(t, 0), 6), NaN-propagating."""
    if t < 0.0:
        return 0.0
    if t > 6.0:
        return 6.0
    return t


@register_jitable
def _max0(t):
    """NumPy's maximum(0, t): NaN-propagating, +0 for a zero t."""
    return t if t > 0.0 or t != t else 0.0


@register_jitable
def _min0(t):
    """NumPy's minimum(0, t): NaN-propagating, +0 for a zero t."""
    return t if t < 0.0 or t != t else 0.0


#: the activations that call a math function: float32, float16 and bfloat16 compute them in float32
#: lanes (``float32_activations``); float64 by its formula over the C library's functions
FLOAT32_ACTIVATIONS = {"softplus": A32.softplus_single, "mish": A32.mish_single, "gelu": A32.gelu_single,
                       "gelu_tanh": A32.gelu_tanh_single, "elu": A32.elu_single, "celu": A32.celu_single,
                       "swish": A32.swish_single, "selu": A32.selu_single}


def _act32(fn):
    """A ``float32_activations`` function of 1-3 float32 values as a raw-in, raw-out scalar function
    (float16 and bfloat16 decoded to float32, the result rounded once to them)."""
    nargs = fn.__code__.co_argcount
    if nargs == 1:
        return lambda codec, x: encode(codec, fn(decode(codec, x)))
    if nargs == 2:
        return lambda codec, x, y: encode(codec, fn(decode(codec, x), decode(codec, y)))
    return lambda codec, x, y, z: encode(codec, fn(decode(codec, x), decode(codec, y), decode(codec, z)))


def _declare_activations():
    """Each activation as a float64 formula over ``exp``, ``expm1``, ``log1p``, ``tanh`` and ``erfc``
    (the C library's) for float64 inputs; for float32, float16 and bfloat16 the same formula in float64
    rounded once where it calls no math function (exact), else ``FLOAT32_ACTIVATIONS``."""
    def formulas(exp, expm1, log1p, tanh, erfc):
        def softplus(v):  # NumPy's logaddexp(0, v): max(v, 0) + log1p(exp(-|v|)); NaN stays NaN
            r = log1p(exp(-fabs_(v)))
            return v if v != v else (v + r if v > 0.0 else r)
        softplus = F32.inlined(softplus)
        one = {
            "softplus": lambda v: softplus(v),
            "softsign": lambda v: v / (1.0 + abs(v)),
            "mish": lambda v: v * tanh(softplus(v)),
            "hard_swish": lambda v: v * _clip01(v / 6.0 + 0.5),
            "hsigmoid": lambda v: _clip06(v + 3.0) / 6.0,
            "gelu": lambda v: 0.5 * v * erfc(v * -0.7071067811865476),
            "gelu_tanh": lambda v: v / (1.0 + exp(-1.5957691216057308 * (v + 0.044715 * (v * v * v)))),
        }
        two = {
            "leaky_relu": lambda v, a: v * a if v < 0.0 else v,
            "elu": lambda v, a: v if v > 0.0 else a * expm1(v),
            "celu": lambda v, a: _max0(v) + _min0(a * expm1(v / a)),
            "swish": lambda v, b: v / (1.0 + exp(-(b * v))),
            "thresholded_relu": lambda v, a: v if v > a else 0.0,
        }
        three = {
            "selu": lambda v, a, g: (v if v > 0.0 else a * expm1(v)) * g,
            "hard_sigmoid": lambda v, a, b: _clip01(v * a + b),
            "shrink": lambda v, b, lam: v + b if v < -lam else (v - b if v > lam else 0.0),
        }
        return one, two, three

    general = formulas(math.exp, math.expm1, math.log1p, math.tanh, math.erfc)

    def narrow_one(name, formula):
        single = FLOAT32_ACTIVATIONS.get(name)
        return _act32(single) if single else _act(formula, inline=True)
    return tuple({n: {"f": _by_width(_act(f), narrow_one(n, f))} for n, f in g.items()} for g in general)


def _by_width(wide, narrow_):
    """A family builder: ``wide`` for float64 raw values, ``narrow_`` for float32, float16, bfloat16."""
    @_builder
    def make(codec, x):
        return wide if codec.codec == "native" and x == types.float64 else narrow_
    return make


def _parametric(families):
    """Declare a scalar function ``f(codec, raw x, raw p, raw q) -> raw result`` (as ``_binary``)."""
    def stub(codec, x, y, z):
        raise NotImplementedError

    @overload(stub, jit_options=dict(F32.INLINE))  # as the unary stubs: an activation's body inlined into its loop
    def _ov(codec, x, y, z):
        return _implementation(families, codec, x)
    return stub


def _make_activation_stubs():
    unary, binary, parametric = _declare_activations()
    UNARY.update(_make_unary_stubs(unary))
    SCALAR.update(_make_stubs(binary, "op_"))
    return _make_unary_stubs(parametric, _parametric, "parametric_")


#: parametric op name (x and two parameters) -> scalar function ``f(codec, raw x, raw p, raw q)``
PARAMETRIC = _make_activation_stubs()
