"""Jitable helpers over computed values that several kinds of op share: a constant in the type of
a value (``like``), a complex of a value's type (``cpack``), NaN and truth, and complex arithmetic
and ordering as NumPy computes them (multiply with and without FMA, Smith's division, the
lexicographic order with NaN parts).
"""

from __future__ import annotations

from numba.core import types

from ..cache import overload, register_jitable
from ..codecs import ffma


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
def isnan(v):
    return v != v


@register_jitable
def truth(v):
    return v != 0


@register_jitable
def cmul(a, b):
    """Complex multiply rounded like NumPy's SIMD loops: fma(ar, br, -(ai*bi)), fma(ar, bi, ai*br)."""
    return cpack(a, ffma(a.real, b.real, -(a.imag * b.imag)), ffma(a.real, b.imag, a.imag * b.real))


@register_jitable
def cmul_plain(a, b):
    """Complex multiply without FMA, as NumPy's npy_cpow computes integer powers."""
    return cpack(a, a.real * b.real - a.imag * b.imag, a.real * b.imag + a.imag * b.real)


@register_jitable
def cdiv(a, b):
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
def cge(a, b):
    return ((a.real > b.real and not isnan(a.imag) and not isnan(b.imag))
            or (a.real == b.real and a.imag >= b.imag))


@register_jitable
def cgt(a, b):
    return ((a.real > b.real and not isnan(a.imag) and not isnan(b.imag))
            or (a.real == b.real and a.imag > b.imag))


@register_jitable
def cle(a, b):
    return ((a.real < b.real and not isnan(a.imag) and not isnan(b.imag))
            or (a.real == b.real and a.imag <= b.imag))


@register_jitable
def clt(a, b):
    return ((a.real < b.real and not isnan(a.imag) and not isnan(b.imag))
            or (a.real == b.real and a.imag < b.imag))


@register_jitable
def cnan(a):
    return isnan(a.real) or isnan(a.imag)
