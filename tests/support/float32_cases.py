"""Shared pieces of the float32-lane tests (backends/numba/float32_math.py, float32_trig.py,
float32_inverse_hyperbolic.py, float32_activations.py): which gpubcast call computes each function,
its float64 reference, and the error in ulps of the true value that the bounds (``ULPS``: the modules'
own, merged as ``scalars.FLOAT32_ULPS``) are stated in."""

from __future__ import annotations

import math

import numpy as np

import gpubcast as gb
from gpubcast.backends.numba.scalars import FLOAT32_ULPS

#: default parameters of the activations that take some (ONNX's, the registry's)
SELU = (1.67326319217681884765625, 1.05070102214813232421875)
_ERFC = np.vectorize(math.erfc, otypes=[np.float64])
_ERF = np.vectorize(math.erf, otypes=[np.float64])


def _softplus(x):
    return np.logaddexp(0.0, x)


#: unary function -> (gpubcast call of a float array, float64 reference of a float64 array)
UNARY = {
    "exp": (gb.exp, np.exp), "exp2": (gb.exp2, np.exp2), "expm1": (gb.expm1, np.expm1),
    "log": (gb.log, np.log), "log2": (gb.log2, np.log2), "log10": (gb.log10, np.log10),
    "log1p": (gb.log1p, np.log1p), "tanh": (gb.tanh, np.tanh), "sin": (gb.sin, np.sin), "cos": (gb.cos, np.cos),
    "tan": (gb.tan, np.tan), "arcsin": (gb.arcsin, np.arcsin), "arccos": (gb.arccos, np.arccos),
    "arctan": (gb.arctan, np.arctan), "sinh": (gb.sinh, np.sinh), "cosh": (gb.cosh, np.cosh),
    "cbrt": (gb.cbrt, np.cbrt),
    "arcsinh": (gb.arcsinh, np.arcsinh), "arccosh": (gb.arccosh, np.arccosh), "arctanh": (gb.arctanh, np.arctanh),
    "sigmoid": (gb.sigmoid, lambda x: 1.0 / (1.0 + np.exp(-x))), "erf": (gb.erf, _ERF),
    "gelu": (gb.gelu, lambda x: 0.5 * x * _ERFC(x * -0.7071067811865476)),
    "gelu_tanh": (lambda x: gb.gelu(x, "tanh"),
                  lambda x: x / (1.0 + np.exp(-1.5957691216057308 * (x + 0.044715 * (x * x * x))))),
    "softplus": (gb.softplus, _softplus),
    "mish": (gb.mish, lambda x: x * np.tanh(_softplus(x))),
    "swish": (gb.swish, lambda x: x / (1.0 + np.exp(-x))),
    "elu": (gb.elu, lambda x: np.where(x > 0, x, np.expm1(x))),
    "celu": (gb.celu, lambda x: np.maximum(0.0, x) + np.minimum(0.0, np.expm1(x))),
    "selu": (gb.selu, lambda x: np.where(x > 0, x, SELU[0] * np.expm1(x)) * SELU[1]),
}
#: the registry op and parameters of each (``ops.get(op).reference(x, *params)``: the float64 formula
#: rounded once to x's dtype, parameters in it)
OP = {name: (name, ()) for name in UNARY}
OP.update({"gelu_tanh": ("gelu_tanh", ()), "swish": ("swish", (1.0,)), "elu": ("elu", (1.0,)),
           "celu": ("celu", (1.0,)), "selu": ("selu", SELU)})
#: every stated bound, by function name
ULPS = FLOAT32_ULPS

_TWO128 = 2.0 ** 128


def ulp_error(got: np.ndarray, want: np.ndarray) -> np.ndarray:
    """|got - want| in ulps of want's float32 binade (2^-149 below 2^-126; inf counted as 2^128), for a
    float32 ``got`` and a float64 ``want`` (the true value to ~2^-50): 0 where both are NaN or equal,
    1e30 where one is NaN or a zero's sign differs from the true value's."""
    g = np.clip(got.astype(np.float64), -_TWO128, _TWO128)
    w = np.clip(want, -_TWO128, _TWO128)
    with np.errstate(invalid="ignore", divide="ignore"):
        e = np.floor(np.log2(np.maximum(np.abs(w), 2.0 ** -126)))
        err = np.abs(g - w) / np.exp2(e - 23)
    err = np.where((g == w) | (np.isnan(g) & np.isnan(w)), 0.0, err)
    err = np.where(np.isnan(g) != np.isnan(w), 1e30, err)
    with np.errstate(over="ignore"):
        wrong_zero = (g == 0) & (want.astype(np.float32) == 0) & (np.signbit(got) != np.signbit(want))
    return np.where(wrong_zero, 1e30, err)


def spread(n_bits: int = 16, seed: int = 43) -> np.ndarray:
    """2 ** n_bits float32 inputs over the whole range: every top-``n_bits`` bit pattern (sign,
    exponent, leading mantissa bits) with random low bits; NaNs and infinities among them."""
    rng = np.random.default_rng(seed)
    top = np.arange(2 ** n_bits, dtype=np.uint64) << np.uint64(32 - n_bits)
    low = rng.integers(0, 2 ** (32 - n_bits), top.size, dtype=np.uint64)
    return (top | low).astype(np.uint32).view(np.float32)


#: the values each function treats specially, and the edges of its branches
SPECIAL = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1e-45, -1e-45, 3e-45, -3e-45, 1e-40, -1e-40,
                    1.1754942e-38, 1.1754944e-38, -1.1754944e-38, 3.4028235e38, -3.4028235e38, 1.0, -1.0, 0.5, -0.5,
                    2.0, 0.25, -0.25, 0.625, -0.625, 0.62500006, 0.921875, -0.921875, 0.6931472, -0.6931472,
                    0.41421354, -0.29289323, 88.72283, 88.72284, 88.7229, -87.33655, -87.3366, -103.27893,
                    -103.97208, -103.9721, -104.0, 127.99999, 128.0, -149.0, -149.5, -150.0, -151.0, 9.01, 9.1,
                    3.9, 3.92, 16.64, 17.0, -17.33, -18.0, -24.0, -24.1, -12.9, -14.85, 10.5, -10.5, 174.0, -174.0,
                    -110.0, -110.1,
                    # sin/cos/tan: the quadrants' edges, zeros of sin and cos and poles of tan (the float32
                    # nearest k pi/2; the smallest reduced arguments below the bound: 252.89821, where tan is
                    # 2.4e8, and 267058.94), the bound 2^19; tan just below 1 (its worst ulps) and 3 pi/4
                    0.7853981, 0.78539819, 0.7853982, 1.5707963, 1.5707964, 3.1415925, 3.1415927, 4.712389,
                    -4.712389, 6.2831855, 252.89821, -252.89821, 52516.434, 267058.94, -267058.94, 517298.6,
                    524287.97, -524287.97, 524288.0, -524288.0, 524288.03, 1e5, 1e10, -1e30, 0.7831375, -0.7831375,
                    0.8308, -0.8308, 2.3561945, -2.3561945, 2.3606927, 3.9269543, 7.0590377,
                    # sinh/cosh: the polynomial's edge, the last finite results and the first infinities
                    0.62499994, -0.62499994, 89.41, 89.4159, -89.4159, 89.416, 89.42, -89.42, 90.0, 1e10,
                    # arcsinh/arccosh/arctanh: the polynomials' edge, ln 2a's, the domain's edges;
                    # arcsin/arccos: their branches' edge 0.5, the ends +-1 and beyond; arctan: 1 (the
                    # reciprocal from above it), its worst ulps, 1/|x| subnormal (2^126 on) and the largest
                    0.49999997, -0.49999997, 0.50000006, -0.50000006, 0.99999994, -0.99999994, 1.0000001,
                    -1.0000001, 0.9990349, -0.9990349, 1.0009661, 8.507059e37, 9e37, -1e38, 4096.0, 4096.0005,
                    -4096.0005, 1.7e38, 2.5e38],
                   np.float32)
