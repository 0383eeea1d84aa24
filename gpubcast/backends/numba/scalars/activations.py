"""The activations (issue #22; registry: ``ops.ACTIVATIONS``), unary (softplus, softsign, mish,
hard_swish, hsigmoid, gelu, gelu_tanh), binary (an activation and one parameter: leaky_relu, elu, celu,
swish, thresholded_relu) and parametric (two parameters: selu, hard_sigmoid, shrink).

Each computes in float64 and rounds once to its dtype, as the registry's references: float16 by
NumPy's double -> half conversion, bfloat16 through float32 (ml_dtypes' astype from float64).  Those
that call a math function compute float32, float16 and bfloat16 in float32 lanes instead
(``FLOAT32_ACTIVATIONS``, ``float32_activations``).
"""

from __future__ import annotations

import math

import numpy as np
from numba.core import types

from .. import float32_activations as A32
from .. import float32_math as F32
from ..cache import overload, register_jitable
from ..codecs import decode, double_to_half, encode, fabs_, float_to_bfloat16
from .declare import builder, jitable


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
    fn = F32.inlined(fn) if inline else jitable(fn)
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


def families():
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
    @builder
    def make(codec, x):
        return wide if codec.codec == "native" and x == types.float64 else narrow_
    return make
