"""The unary ops of the registry other than the math functions, by value family: negative, abs,
sqrt, exp, log, tanh, erf, sigmoid, reciprocal (NumPy's complex loop), floor, ceil, round, sign
(NumPy 2's complex sign), relu (``maximum``'s NaN and tie rules), logical_not, bitwise_not; and
``move``, data movement's scalar function (the raw value itself).
"""

from __future__ import annotations

import cmath
import math

from .. import float32_math as F32
from ..cache import overload, register_jitable
from ..codecs import (ctruth, decode, fabs_, fceil, ffloor, frint, fsqrt, libm_hypot, system_cexp, system_clog,
                      system_csqrt, system_ctanh)
from .declare import builder, complex_function, float32_fast, lift1, raw1
from .values import cpack, like, truth


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


_tanh = float32_fast(F32.tanh_single, math.tanh)


@register_jitable
def _sigmoid(v):
    one = like(v, 1)
    return one / (one + math.exp(-v))


def _relu(maximum):
    """max(x, 0) with ``maximum``'s own NaN and tie rules (the raw zero is +0 in every codec)."""
    @builder
    def make(codec, x):
        return lambda codec, x: maximum(codec, x, like(x, 0))
    return make


def families(maximum):
    """Op name -> families; ``maximum``: the scalar function of ``maximum`` (relu's)."""
    relu = _relu(maximum)
    ident = lambda codec, x: x  # integers and bools unchanged (floor, ceil, round)
    neg = raw1(lambda codec, x: -x)
    return {
        "negative": {"i": neg, "u": neg, "f": lift1(lambda v: -v), "c": lift1(lambda v: -v)},
        "abs": {"b": ident, "i": raw1(lambda codec, x: -x if x < 0 else x), "u": ident,
                "f": lift1(lambda v: fabs_(v)), "c": lambda codec, x: abs(x)},
        "sqrt": {"f": lift1(lambda v: fsqrt(v)), "c": complex_function(system_csqrt, cmath.sqrt)},
        "exp": {"f": lift1(float32_fast(F32.exp_single, math.exp)), "c": complex_function(system_cexp, cmath.exp)},
        "log": {"f": lift1(float32_fast(F32.log_single, math.log)), "c": complex_function(system_clog, cmath.log)},
        "tanh": {"f": lift1(lambda v: _tanh(v)), "c": complex_function(system_ctanh, cmath.tanh)},
        "erf": {"f": lift1(float32_fast(F32.erf_single, math.erf))},
        "sigmoid": {"f": lift1(float32_fast(F32.sigmoid_single, _sigmoid))},
        "reciprocal": {"f": lift1(lambda v: like(v, 1) / v), "c": lift1(lambda v: _creciprocal(v))},
        "floor": {"b": ident, "i": ident, "u": ident, "f": lift1(lambda v: ffloor(v))},
        "ceil": {"b": ident, "i": ident, "u": ident, "f": lift1(lambda v: fceil(v))},
        "round": {"i": ident, "u": ident, "f": lift1(lambda v: frint(v)),
                  "c": lift1(lambda v: cpack(v, frint(v.real), frint(v.imag)))},
        "sign": {"i": raw1(lambda codec, x: (x > 0) - (x < 0)), "u": raw1(lambda codec, x: x > 0),
                 "f": lift1(lambda v: _sign_float(v)), "c": lift1(lambda v: _sign_complex(v))},
        "relu": {"i": relu, "u": relu, "f": relu},
        "logical_not": {"b": lambda codec, x: x == 0, "i": lambda codec, x: x == 0, "u": lambda codec, x: x == 0,
                        "f": lambda codec, x: not truth(decode(codec, x)),
                        "c": lambda codec, x: not ctruth(x)},
        "bitwise_not": {"b": lambda codec, x: x == 0, "i": raw1(lambda codec, x: ~x),
                        "u": raw1(lambda codec, x: ~x)},
    }


def move(codec, x):
    """Data movement's scalar function: the raw value itself (``unary_row`` of it copies elements)."""
    raise NotImplementedError


@overload(move)
def _move(codec, x):
    return lambda codec, x: x
