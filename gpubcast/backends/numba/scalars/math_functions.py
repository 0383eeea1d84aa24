"""The math functions (issue #22): the Array API set and the NumPy ufuncs paired with them, unary
(sin .. arctanh, exp2, expm1, log1p, log2, log10, cbrt, deg2rad, rad2deg, square, trunc, positive,
conj, real, imag, isnan, isinf, isfinite, signbit) and binary (arctan2, hypot, logaddexp,
logaddexp2, copysign, nextafter, fmax, fmin), by value family.

NumPy's values: the C library's real functions (float16 and bfloat16 computed in float32 and rounded
once, as NumPy's half loops and ml_dtypes do), the C library's complex functions where NumPy calls
them, and NumPy's own formulas (funcs.inc.src, npy_math) for the rest.  float32 values come from the
vectorising kernels of ``float32_math``, ``float32_trig`` and ``float32_inverse_hyperbolic``
(``FLOAT32_FUNCTIONS``, ``FLOAT32_BINARY``); sin, cos and tan of a float32 beyond
their reductions' range (``float32_trig``'s ``SIN_COS_REDUCED``) from the C library
(``sin_cos_large``, ``sin_cos_key``).
"""

from __future__ import annotations

import cmath
import math

import numpy as np
from numba.core import types

from .. import float32_inverse_hyperbolic as IH32
from .. import float32_math as F32
from .. import float32_trig as T32
from ..cache import overload, register_jitable
from ..codecs import (BFLOAT16, SYSTEM_COMPLEX, SYSTEM_CPOW, decode, f32_magnitude_key, fabs_, fcopysign, fexp2,
                      ftrunc, libm_cbrt, libm_hypot, libm_nextafter, system_cexp, system_clog)
from .declare import builder, complex_function, float32_fast, jitable, lift, lift1, raw1, select
from .values import cge, cle, cmul, cnan, cpack, isnan, like


_LN2 = math.log(2.0)


_LOG2E, _LOG10E = 1.0 / math.log(2.0), 1.0 / math.log(10.0)


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
    return lambda x: decode(BFLOAT16, x)


@builder
def _nextafter_make(codec, x):
    if codec.codec == "float16":
        return lambda codec, x, y: _half_nextafter(x, y)
    if codec.codec == "bfloat16":
        return lambda codec, x, y: _bfloat16_nextafter(x, y)
    return lambda codec, x, y: libm_nextafter(x, y)


def _fmax_fmin(greater: bool):
    """NumPy's fmax / fmin: NaN ignored unless both are; ties as ``maximum`` (the second operand,
    the first for float16)."""
    @builder
    def make(codec, x):
        if codec.codec == "float16":
            if greater:
                return select(lambda a, b: a >= b or isnan(b))
            return select(lambda a, b: a <= b or isnan(b))
        if greater:
            return select(lambda a, b: a > b or isnan(b))
        return select(lambda a, b: a < b or isnan(b))
    return make


def _complex_math(name, portable):
    return complex_function(SYSTEM_COMPLEX[name], portable)


#: math functions whose float32 values come from ``float32_trig`` (sin, cos, tan, arcsin, arccos, arctan),
#: ``float32_math`` (sinh, cosh) or ``float32_inverse_hyperbolic`` (arcsinh, arccosh, arctanh), in float32
#: lanes: all vectorise; the C library elsewhere
FLOAT32_FUNCTIONS = {"sin": T32.sin_single, "cos": T32.cos_single, "tan": T32.tan_single,
                     "arcsin": T32.arcsin_single, "arccos": T32.arccos_single, "arctan": T32.arctan_single,
                     "sinh": F32.sinh_single, "cosh": F32.cosh_single, "arcsinh": IH32.arcsinh_single,
                     "arccosh": IH32.arccosh_single, "arctanh": IH32.arctanh_single}


#: binary ops whose float32 values come from ``float32_trig`` (arctan2), ``float32_math`` (hypot, in
#: float64 lanes; logaddexp, logaddexp2) or ``float32_activations``
#: (their scalar functions are inlined: the activations with one parameter among them)
FLOAT32_BINARY = frozenset({"arctan2", "hypot", "logaddexp", "logaddexp2", "elu", "celu", "swish"})


@register_jitable
def _sin_exact(v):
    """sin of any value: float32's vectorised polynomial where it reduces exactly, else the C library."""
    return math.sin(v) if T32.sin_cos_large(v) else _sin_vector(v)


@register_jitable
def _cos_exact(v):
    return math.cos(v) if T32.sin_cos_large(v) else _cos_vector(v)


@register_jitable
def _tan_exact(v):
    return math.tan(v) if T32.sin_cos_large(v) else _tan_vector(v)


_sin_vector = float32_fast(T32.sin_single, math.sin)


_cos_vector = float32_fast(T32.cos_single, math.cos)


_tan_vector = float32_fast(T32.tan_single, math.tan)


def sin_cos_key(codec, x):
    """``codecs.f32_magnitude_key`` of a raw float's float32 value (float64: 0, never large): a
    block whose largest key reaches ``float32_trig.SIN_COS_LARGE_KEY`` holds a finite value beyond
    the float32 sin/cos/tan reductions (``float32_trig.SIN_COS_REDUCED``)."""
    raise NotImplementedError


@overload(sin_cos_key)
def _sin_cos_key_ov(codec, x):
    if codec.codec == "native" and x != types.float32:  # float64: the C library throughout
        return lambda codec, x: np.int32(0)
    return lambda codec, x: f32_magnitude_key(decode(codec, x))


def unary_families():
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
        real = float32_fast(single, real) if single else _real_function(real)
        table[name] = {"f": lift1(real), "c": _complex_math(system, portable)}
    table["sin"]["f"], table["cos"]["f"], table["tan"]["f"] = (lift1(_sin_exact), lift1(_cos_exact),
                                                               lift1(_tan_exact))
    table.update({
        "exp2": {"f": lift1(float32_fast(F32.exp2_single, fexp2)), "c": lift1(lambda v: _cexp2(v))},
        "expm1": {"f": lift1(float32_fast(F32.expm1_single, math.expm1)), "c": lift1(lambda v: _cexpm1(v))},
        "log1p": {"f": lift1(float32_fast(F32.log1p_single, math.log1p)), "c": lift1(lambda v: _clog1p(v))},
        "log2": {"f": lift1(float32_fast(F32.log2_single, math.log2)),
                 "c": lift1(lambda v: _clog_scaled(v, _LOG2E))},
        "log10": {"f": lift1(float32_fast(F32.log10_single, math.log10)),
                  "c": lift1(lambda v: _clog_scaled(v, _LOG10E))},
        "cbrt": {"f": lift1(float32_fast(F32.cbrt_single, libm_cbrt))},
        "deg2rad": {"f": lift1(lambda v: _deg2rad(v))},
        "rad2deg": {"f": lift1(lambda v: _rad2deg(v))},
        "square": {"i": raw1(lambda codec, x: x * x), "u": raw1(lambda codec, x: x * x),
                   "f": lift1(lambda v: v * v), "c": lift1(lambda v: cmul(v, v))},
        "trunc": {"b": ident, "i": ident, "u": ident, "f": lift1(lambda v: ftrunc(v))},
        "positive": {"i": ident, "u": ident, "f": ident, "c": ident},
        "conj": {"i": ident, "u": ident, "f": ident, "c": lambda codec, x: cpack(x, x.real, -x.imag)},
        "real": {"b": ident, "i": ident, "u": ident, "f": ident, "c": lambda codec, x: x.real},
        "imag": {"b": zero, "i": zero, "u": zero, "f": zero, "c": lambda codec, x: x.imag},
        "isnan": {"b": false, "i": false, "u": false, "f": lambda codec, x: isnan(decode(codec, x)),
                  "c": lambda codec, x: cnan(x)},
        "isinf": {"b": false, "i": false, "u": false, "f": lambda codec, x: _isinf(decode(codec, x)),
                  "c": lambda codec, x: _isinf(x.real) or _isinf(x.imag)},
        "isfinite": {"b": true, "i": true, "u": true, "f": lambda codec, x: _isfinite(decode(codec, x)),
                     "c": lambda codec, x: _isfinite(x.real) and _isfinite(x.imag)},
        "signbit": {"f": lambda codec, x: fcopysign(like(decode(codec, x), 1), decode(codec, x)) < 0},
    })
    return table


def _real_function(fn):
    """``fn`` of the math module (a C library call in Numba) as a jitable function of one value."""
    return jitable(lambda v: fn(v))


def binary_families():
    f_max, f_min = _fmax_fmin(True), _fmax_fmin(False)
    int_max, int_min = select(lambda a, b: a > b), select(lambda a, b: a < b)
    return {
        "arctan2": {"f": lift(float32_fast(T32.arctan2_single, math.atan2, 2))},
        "hypot": {"f": lift(float32_fast(F32.hypot_single, libm_hypot, 2))},
        "logaddexp": {"f": lift(float32_fast(F32.logaddexp_single, _logaddexp, 2))},
        "logaddexp2": {"f": lift(float32_fast(F32.logaddexp2_single, _logaddexp2, 2))},
        "copysign": {"f": lift(lambda a, b: fcopysign(a, b))},
        "nextafter": {"f": _nextafter_make},
        "fmax": {"b": lift(lambda a, b: a or b), "i": int_max, "u": int_max, "f": f_max,
                 "c": select(lambda a, b: cnan(b) or cge(a, b))},
        "fmin": {"b": lift(lambda a, b: a and b), "i": int_min, "u": int_min, "f": f_min,
                 "c": select(lambda a, b: cnan(b) or cle(a, b))},
    }


def vector_families():
    """sin, cos and tan by their vectorising float32 functions (``rows.unary_row`` keeps their values
    in blocks without an element ``sin_cos_key`` marks large), complex by the C library's."""
    return {"sin": {"f": lift1(_sin_vector), "c": _complex_math("csin", cmath.sin)},
            "cos": {"f": lift1(_cos_vector), "c": _complex_math("ccos", cmath.cos)},
            "tan": {"f": lift1(_tan_vector), "c": _complex_math("ctan", cmath.tan)}}
