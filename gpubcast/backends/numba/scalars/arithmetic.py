"""The binary ops of arithmetic, comparison, logic and bits, by value family: add .. divide,
floor division, remainder and fmod (NumPy's ``npy_divmod`` for floats; integer x / 0 and INT_MIN / -1
guarded), power (integers by squaring, floats by the C library with NumPy's fast path for an exponent
one value over the whole call, complex as NumPy's ``npy_cpow``), shifts (a count >= the width gives 0,
or -1 for a right shift of a negative value), maximum / minimum (NaN-propagating, ties as NumPy's),
prelu, the comparisons, logical and bitwise ops.

``families()`` gives (op name -> families, op name -> families of the variant for a second operand
one value over the whole call).
"""

from __future__ import annotations

import math

import numpy as np
from numba.core import types

from ..cache import register_jitable
from ..codecs import SYSTEM_CPOW, ctruth, decode, encode, ffloor, ffmod, fcopysign, fpow, system_cpow
from .declare import builder, jitable, lift, predicate, select
from .values import cdiv, cge, cgt, cle, clt, cmul, cmul_plain, cnan, cpack, isnan, like, truth


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


def _arith(op):
    """The same value formula for every numeric family, lifted through the codec."""
    f = lift(op)
    return {"i": f, "u": f, "f": f, "c": f}


def _integer(build):
    """A family builder from ``build(t, signed) -> impl`` (``t``: the Numba integer type)."""
    @builder
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
    @builder
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


@builder
def _float_power(codec, x):
    return lift(lambda a, b: fpow(a, b))


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


@builder
def _float_power_scalar_exponent(codec, x):
    if codec.codec != "native":  # float16 (NumPy's half loop) and bfloat16 (ml_dtypes): plain pow
        return lift(lambda a, b: fpow(a, b))
    return lift(lambda a, b: _power_fast_path(a, b))


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
                return cmul_plain(a, a)
            if n == 3:
                return cmul_plain(a, cmul_plain(a, a))
            m = -n if n < 0 else n
            aa = one
            p = a
            mask = 1
            while True:
                if m & mask:
                    aa = cmul_plain(aa, p)
                mask <<= 1
                if m < mask:
                    break
                p = cmul_plain(p, p)
            if b.real < 0:
                return cdiv(one, aa)
            return aa
    if SYSTEM_CPOW:
        return system_cpow(a, b)
    return cpack(a, 0.0, 0.0) + np.exp(b * np.log(a))


def _float_maximum():
    """NaN-propagating maximum: second operand on ties (first for float16, like NumPy's half loop)."""
    @builder
    def make(codec, x):
        if codec.codec == "float16":
            return select(lambda a, b: a >= b or isnan(a))
        return select(lambda a, b: a > b or isnan(a))
    return make


def _float_minimum():
    @builder
    def make(codec, x):
        if codec.codec == "float16":
            return select(lambda a, b: a <= b or isnan(a))
        return select(lambda a, b: a < b or isnan(a))
    return make


@builder
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
    "greater": lambda a, b: cgt(a, b), "greater_equal": lambda a, b: cge(a, b),
    "less": lambda a, b: clt(a, b), "less_equal": lambda a, b: cle(a, b),
}


_logical = {
    "logical_and": lambda p, q: p and q,
    "logical_or": lambda p, q: p or q,
    "logical_xor": lambda p, q: p != q,
}


def _logical_families(combine):
    combine = jitable(combine)
    real = predicate(lambda a, b: combine(truth(a), truth(b)))
    return {"b": predicate(combine), "i": real, "u": real, "f": real,
            "c": predicate(lambda a, b: combine(ctruth(a), ctruth(b)))}


def _compare_families(name):
    real = predicate(_compare_real[name])
    return {"b": real, "i": real, "u": real, "f": real, "c": predicate(_compare_complex[name])}


_bitwise = {"bitwise_and": lambda a, b: a & b, "bitwise_or": lambda a, b: a | b,
            "bitwise_xor": lambda a, b: a ^ b}


def families():
    add = _arith(lambda a, b: a + b)
    add["b"] = lift(lambda a, b: a or b)
    sub = _arith(lambda a, b: a - b)
    mul = _arith(lambda a, b: a * b)
    mul["b"] = lift(lambda a, b: a and b)
    mul["c"] = lift(lambda a, b: cmul(a, b))
    div = {"f": lift(lambda a, b: a / b), "c": lift(lambda a, b: cdiv(a, b))}
    int_max = select(lambda a, b: a > b)
    int_min = select(lambda a, b: a < b)
    table = {
        "add": add,
        "subtract": sub,
        "multiply": mul,
        "divide": div,
        "floor_divide": {"i": _integer(_floor_divide_int), "u": _integer(_floor_divide_int),
                         "f": lift(lambda a, b: _float_floor_divide(a, b))},
        "remainder": {"i": _integer(_remainder_int), "u": _integer(_remainder_int),
                      "f": lift(lambda a, b: _float_remainder(a, b))},
        "fmod": {"i": _integer(_fmod_int), "u": _integer(_fmod_int), "f": lift(lambda a, b: ffmod(a, b))},
        "power": {"i": _integer(_power_int), "u": _integer(_power_int), "f": _float_power,
                  "c": lift(lambda a, b: _complex_power(a, b))},
        "maximum": {"b": lift(lambda a, b: a or b), "i": int_max, "u": int_max, "f": _float_maximum(),
                    "c": select(lambda a, b: cnan(a) or cge(a, b))},
        "minimum": {"b": lift(lambda a, b: a and b), "i": int_min, "u": int_min, "f": _float_minimum(),
                    "c": select(lambda a, b: cnan(a) or cle(a, b))},
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
        f = lift(fn)
        table[name] = {"b": f, "i": f, "u": f}
    return table, variants
