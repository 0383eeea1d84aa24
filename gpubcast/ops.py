"""The op registry: every op declared once.

An ``Op`` carries its name, kind and arity, its type rule, and its NumPy
reference (which defines the values every backend must reproduce).  Backends
look ops up here by name and only execute plans; the NumPy-style API, the
ONNX and OpenVINO front ends all read the same declarations.

Type rules, applied to the inputs' dtypes (or weak Python scalar types):
``ufunc``    NumPy 2's own resolution for ``op.ufunc`` (``resolve_dtypes``);
``same``     the inputs' common type (``np.result_type``), kept for the output;
``where``    condition -> bool, the two values -> their common type;
``any``      data movement (and ``cast``): whatever the input is; ``dtype=`` sets the output.
``params``   an activation's x and parameters: the arrays' common type, which Python scalars take.
``accepts`` limits ops to dtype kinds of their loop (bfloat16 counts as 'f').
"""

from __future__ import annotations

import functools
import math
from dataclasses import dataclass, field
from collections.abc import Callable

import ml_dtypes
import numpy as np

from . import dtypes as _dt


@dataclass(frozen=True)
class Op:
    name: str
    kind: str                  # unary | binary | ternary | quaternary | parametric | variadic | move
    arity: int | None          # None: variadic (1..N)
    reference: Callable        # NumPy reference over broadcast, loop-dtype inputs
    doc: str
    type_rule: str = "ufunc"
    ufunc: np.ufunc | None = None
    accepts: str = "biufc"
    out_bool: bool = False
    tags: frozenset = field(default_factory=frozenset)

    @property
    def functor(self) -> str:
        """The CUDA functor's name in kernels/*.cu (CamelCase of ``name``)."""
        return "".join(part.capitalize() for part in self.name.split("_"))

    def resolve(self, types) -> tuple[tuple[np.dtype, ...], np.dtype]:
        """(loop dtypes of the inputs, output dtype) for input dtypes / weak scalar types.

        Raises ``TypeError`` for a combination the op does not accept.
        """
        return _resolve(self, tuple(types))


@functools.lru_cache(maxsize=4096)
def _resolve(op: Op, types):
    if op.type_rule == "ufunc":
        try:
            resolved = op.ufunc.resolve_dtypes(types + (None,))
        except TypeError as e:
            raise TypeError(f"{op.name}: unsupported input types "
                            f"{', '.join(_type_name(t) for t in types)} ({e})") from None
        if any(_dt.kind(t) not in op.accepts + "O" for t in resolved[:-1]):  # objects: Python's rules
            raise TypeError(f"{op.name}: does not accept {', '.join(_type_name(t) for t in types)} inputs "
                            f"(accepted kinds: {op.accepts})")
        return tuple(resolved[:-1]), resolved[-1]
    if op.type_rule == "any":
        return types, types[0]
    if op.type_rule == "params":
        return _resolve_params(op, types)
    if op.type_rule == "where":
        common = _dt.result_type(types[1:])
        return (np.dtype(bool), common, common), common
    try:
        common = _dt.result_type(types)
    except TypeError as e:  # e.g. no common type between two dtypes
        raise TypeError(f"{op.name}: no common type for {', '.join(_type_name(t) for t in types)} ({e})") from None
    if _dt.kind(common) not in op.accepts:
        raise TypeError(f"{op.name}: does not accept {common} inputs (accepted kinds: {op.accepts})")
    return (common,) * len(types), np.dtype(bool) if op.out_bool else common


def _resolve_params(op: Op, types):
    """An activation's x and parameters: the arrays' common type, which Python scalar parameters take
    (bfloat16 included, which ``np.result_type`` would widen); integer arrays with a Python float
    compute in NumPy's float type for them (int32 -> float64)."""
    strong = [t for t in types if not isinstance(t, type)]
    common = _dt.result_type(strong) if strong else _dt.result_type(types)
    weak = [t for t in types if isinstance(t, type)]
    if weak and _dt.kind(common) in "biu":
        common = _dt.result_type((common, *weak))
    if _dt.kind(common) not in op.accepts:
        raise TypeError(f"{op.name}: does not accept {', '.join(_type_name(t) for t in types)} inputs "
                        f"(their common type {common} is not a float type)")
    return (common,) * len(types), common


def _type_name(t) -> str:
    return t.__name__ if isinstance(t, type) else str(t)


REGISTRY: dict[str, Op] = {}


def declare(op: Op) -> Op:
    if op.name in REGISTRY:
        raise RuntimeError(f"op {op.name!r} declared twice")
    REGISTRY[op.name] = op
    return op


def get(name: str) -> Op:
    try:
        return REGISTRY[name]
    except KeyError:
        raise ValueError(f"unknown op {name!r}; known ops: {', '.join(sorted(REGISTRY))}") from None


# --- references -----------------------------------------------------------

def _quiet(f):
    @functools.wraps(f)
    def g(*args):
        with np.errstate(all="ignore"):
            return f(*args)
    return g


def _int_power(a, b):
    """NumPy's power, plus the contract for negative integer exponents (NumPy raises):
    1 for base 1, +-1 for base -1 (by the exponent's parity), 0 otherwise."""
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype.kind not in "iu" or b.dtype.kind not in "iu":
        return np.power(a, b)
    neg = b < 0
    if not neg.any():
        return np.power(a, b)
    result = np.power(a, np.where(neg, 0, b).astype(b.dtype))
    special = np.where(a == 1, 1, np.where(a == -1, np.where(b % 2 == 0, 1, -1), 0)).astype(result.dtype)
    return np.where(neg, special, result)


def _div_trunc(a, b):
    """Integer division toward zero (x / 0 -> 0, INT_MIN / -1 -> INT_MIN); true division for floats."""
    a, b = np.asarray(a), np.asarray(b)
    if a.dtype.kind not in "iu":
        return np.divide(a, b).astype(np.result_type(a, b), copy=False)
    q = np.floor_divide(a, b)
    if a.dtype.kind == "i":
        fix = (np.remainder(a, b) != 0) & ((a < 0) != (b < 0))
        q = np.where(fix, q + 1, q).astype(q.dtype, copy=False)
    return np.where(b == 0, 0, q).astype(q.dtype, copy=False)


def _prelu(x, slope):
    return np.where(x < 0, x * slope, x).astype(np.result_type(x, slope), copy=False)


def _where(cond, x, y):
    return np.where(cond, x, y)


def _sum(*xs):
    return functools.reduce(np.add, xs)


def _mean(*xs):
    total = np.asarray(_sum(*xs))
    return np.divide(total, total.dtype.type(len(xs))).astype(total.dtype, copy=False)


def _max(*xs):
    return functools.reduce(np.maximum, xs)


def _min(*xs):
    return functools.reduce(np.minimum, xs)


def _axpby(alpha, x, beta, y):
    return alpha * x + beta * y


def _copy(x):
    return np.array(x, copy=True)


def _in_float64(fn):
    """A reference computed in float64 and rounded once to the input's dtype (for functions NumPy
    lacks: ``math.erf``, the C library's, is the reference)."""
    vec = np.vectorize(fn, otypes=[np.float64])

    def f(x):
        x = np.asarray(x)
        return vec(x.astype(np.float64)).astype(x.dtype, copy=False)
    f.__name__ = fn.__name__
    return f


def _sigmoid(x):
    """1 / (1 + exp(-x)); float16 and bfloat16 computed in float32 and rounded once (as their
    NumPy / ml_dtypes loops compute exp)."""
    x = np.asarray(x)
    v = x.astype(np.float32) if x.dtype.itemsize < 4 else x
    one = v.dtype.type(1)
    return (one / (one + np.exp(-v))).astype(x.dtype, copy=False)


def _relu(x):
    x = np.asarray(x)
    return np.maximum(x, x.dtype.type(0))


def _round(x):
    x = np.asarray(x)
    return np.rint(x) if _dt.kind(x.dtype) in "fc" else np.array(x, copy=True)


# --- the declarations -----------------------------------------------------

_BINARY_UFUNCS = {
    "add": "x1 + x2",
    "subtract": "x1 - x2",
    "multiply": "x1 * x2",
    "divide": "true division x1 / x2 (integers promote to float64, as NumPy)",
    "floor_divide": "x1 // x2 (x // 0 -> 0, INT_MIN // -1 -> INT_MIN for integers)",
    "remainder": "x1 % x2 with the divisor's sign (x % 0 -> 0 for integers)",
    "fmod": "C fmod: remainder with the dividend's sign (x % 0 -> 0 for integers)",
    "maximum": "elementwise maximum, NaN-propagating",
    "minimum": "elementwise minimum, NaN-propagating",
    "equal": "x1 == x2",
    "not_equal": "x1 != x2",
    "greater": "x1 > x2",
    "greater_equal": "x1 >= x2",
    "less": "x1 < x2",
    "less_equal": "x1 <= x2",
    "logical_and": "truth of x1 and x2",
    "logical_or": "truth of x1 or x2",
    "logical_xor": "truth of x1 xor x2",
    "bitwise_and": "x1 & x2",
    "bitwise_or": "x1 | x2",
    "bitwise_xor": "x1 ^ x2",
    "left_shift": "x1 << x2 (a shift by >= the bit width gives 0)",
    "right_shift": "x1 >> x2, arithmetic for signed (a shift by >= the width gives 0, or -1 for negatives)",
}

#: ops tagged "comparison": NumPy 2 compares an integer array with a Python int of any size exactly
COMPARISONS = ("equal", "not_equal", "greater", "greater_equal", "less", "less_equal")

for _name, _doc in _BINARY_UFUNCS.items():
    _u = getattr(np, _name)
    declare(Op(_name, "binary", 2, _quiet(_u), _doc, ufunc=_u,
               tags=frozenset({"comparison"}) if _name in COMPARISONS else frozenset()))

declare(Op("power", "binary", 2, _quiet(_int_power),
           "x1 ** x2; an integer to a negative integer power gives 1 for base 1, +-1 for base -1, else 0",
           ufunc=np.power))
declare(Op("div_trunc", "binary", 2, _quiet(_div_trunc),
           "ONNX/OpenVINO division in the inputs' common type: integers truncate toward zero "
           "(x / 0 -> 0, INT_MIN / -1 -> INT_MIN), floats divide", type_rule="same", accepts="iufc"))
declare(Op("prelu", "binary", 2, _quiet(_prelu), "x if x >= 0 else slope * x (slope broadcasts to x)",
           type_rule="same", accepts="iuf"))
declare(Op("where", "ternary", 3, _where, "x where condition is true, else y", type_rule="where"))
declare(Op("sum", "variadic", None, _quiet(_sum), "x1 + x2 + ... in one pass, left to right",
           type_rule="same", accepts="iufc"))
declare(Op("mean", "variadic", None, _quiet(_mean), "(x1 + x2 + ... + xn) / n in the inputs' type",
           type_rule="same", accepts="fc"))
declare(Op("max", "variadic", None, _quiet(_max), "elementwise maximum of all inputs, NaN-propagating",
           type_rule="same", accepts="biuf"))
declare(Op("min", "variadic", None, _quiet(_min), "elementwise minimum of all inputs, NaN-propagating",
           type_rule="same", accepts="biuf"))
declare(Op("axpby", "quaternary", 4, _quiet(_axpby),
           "alpha * x + beta * y over operands (alpha, x, beta, y) in their common type; alpha and beta "
           "are usually 0-d (ONNX Gemm's epilogue: alpha * A'B' + beta * C in one pass)",
           type_rule="same", accepts="iufc"))
declare(Op("copy", "move", 1, _copy, "the input, broadcast (data movement: any dtype)", type_rule="any",
           accepts="biufcSUOV"))

#: Ops computed with a math library (exp, log, tanh, erf, sigmoid; complex abs)
#: agree with the reference within ``MATH_ULPS`` ulps of the result (or of the smallest subnormal
#: where the result is subnormal), not exactly: NumPy's SIMD loops (AVX-512 exp, log, tanh,
#: hypot), the C library (Numba) and CUDA's libdevice each round their own way (measured on
#: this machine: Numba vs NumPy at most 2 ulps; CUDA documents exp/log/tanh/erf at 1-2 ulps).
MATH_ULPS = 4
_MATH = ("exp", "log", "tanh", "erf", "sigmoid")

#: unary ops: name -> (NumPy ufunc giving the type rule, reference or None (the ufunc), accepted
#: kinds, doc).  NumPy's own loops decide the output dtype (``exp(int8) -> float16``, ...).
_UNARY = {
    "negative": (np.negative, None, "iufc", "-x (integers wrap: -INT_MIN is INT_MIN)"),
    "abs": (np.absolute, None, "biufc", "|x| (complex: the modulus, a real; -INT_MIN is INT_MIN)"),
    "sqrt": (np.sqrt, None, "fc", "square root (integers compute in NumPy's float dtype for them)"),
    "exp": (np.exp, None, "fc", "e ** x"),
    "log": (np.log, None, "fc", "natural logarithm (log 0 -> -inf, log of a negative -> nan)"),
    "tanh": (np.tanh, None, "fc", "hyperbolic tangent"),
    "erf": (np.exp, _in_float64(math.erf), "f", "the error function (reference: the C library's erf "
            "in float64, rounded once)"),
    "sigmoid": (np.exp, _sigmoid, "f", "1 / (1 + exp(-x)) in x's dtype"),
    "reciprocal": (np.reciprocal, None, "fc", "1 / x"),
    "floor": (np.floor, None, "biuf", "largest integer <= x (integers unchanged)"),
    "ceil": (np.ceil, None, "biuf", "smallest integer >= x (integers unchanged)"),
    "sign": (np.sign, None, "iufc", "-1, 0 or 1 by the sign of x (nan for nan; sign(-0.0) is 0.0; complex: "
             "x / |x|, 0 for 0, as NumPy 2)"),
    "logical_not": (np.logical_not, None, "biufc", "truth of not x (a bool)"),
    "bitwise_not": (np.invert, None, "biu", "~x (for bools: not x)"),
}
for _name, (_u, _ref, _accepts, _doc) in _UNARY.items():
    declare(Op(_name, "unary", 1, _quiet(_ref or _u), _doc, ufunc=_u, accepts=_accepts))
declare(Op("relu", "unary", 1, _quiet(_relu), "max(x, 0), NaN-propagating (ONNX Relu)", type_rule="same",
           accepts="iuf"))
declare(Op("round", "unary", 1, _quiet(_round), "x rounded to the nearest integer, halves to even "
           "(np.round, ONNX Round; integers unchanged; complex: both parts)", type_rule="same", accepts="iufc"))
declare(Op("cast", "unary", 1, _copy, "x converted to dtype= (NumPy's astype, casting='unsafe'; "
           "float -> int out of range or nan is undefined, as in C, NumPy and ONNX)", type_rule="any",
           accepts="biufc"))


# --- activations (issue #22): ONNX / OpenVINO activation functions ----------------------------------
#
# An activation's parameters (alpha, beta, ...) are operands, not attributes: each is a Python
# scalar (weak: it takes x's type) or a tensor that broadcasts to x (the API plans them with the
# ``unidirectional`` rule: x is the target, a parameter never grows the result), so that one op
# serves ONNX's attributes and OpenVINO's tensor inputs alike and every backend and ``gb.fuse``
# see one op.  Ops without parameters are ``unary``, with one parameter ``binary`` (x, alpha),
# with two ``parametric`` (x, p, q): all operands computed in their arrays' common float type
# (``type_rule="params"``; the unary ones take NumPy's float type for integers, as ``sigmoid``).
#
# Values (the references below): the ONNX operator definitions, computed in float64 and rounded
# once to the result's dtype (float64 inputs: in float64); the backends compute the functions
# without a math library call (softsign, leaky_relu, hard_sigmoid, hard_swish, thresholded_relu,
# shrink) the same way for float16, bfloat16 and float32 (in float64, rounded once): they agree
# exactly; the others within ``MATH_ULPS`` (the Numba backend computes them in float32 lanes, within
# the bounds of ``backends/numba/float32_activations.py``'s ``ULPS``, 1.5 to 3 ulps).

def _activation(formula):
    """A reference computing ``formula`` over float64 operands, rounded once to the first operand's
    dtype (the loop dtype of every operand)."""
    def f(x, *params):
        x = np.asarray(x)
        wide = [np.asarray(v, dtype=np.float64) for v in (x, *params)]
        with np.errstate(all="ignore"):
            return np.asarray(formula(*wide)).astype(x.dtype, copy=False)
    f.__name__ = formula.__name__
    return f


_ERFC64 = np.vectorize(math.erfc, otypes=[np.float64])


def _softplus(x):
    return np.logaddexp(0.0, x)


def _softsign(x):
    return x / (1.0 + np.abs(x))


def _mish(x):
    return x * np.tanh(np.logaddexp(0.0, x))


def _hard_swish(x):
    return x * np.maximum(0.0, np.minimum(1.0, x / 6.0 + 0.5))


def _gelu(x):
    """x / 2 * (1 + erf(x / sqrt 2)), as x / 2 * erfc(-x / sqrt 2): no cancellation for x < 0."""
    return 0.5 * x * _ERFC64(x * -0.7071067811865476)


def _gelu_tanh(x):
    """x / 2 * (1 + tanh(u)), as x / (1 + exp(-2u)): no cancellation for x < 0."""
    return x / (1.0 + np.exp(-1.5957691216057308 * (x + 0.044715 * (x * x * x))))


def _hsigmoid(x):
    return np.minimum(np.maximum(x + 3.0, 0.0), 6.0) / 6.0


def _leaky_relu(x, alpha):
    return np.where(x < 0, x * alpha, x)


def _elu(x, alpha):
    return np.where(x > 0, x, alpha * np.expm1(x))


def _celu(x, alpha):
    return np.maximum(0.0, x) + np.minimum(0.0, alpha * np.expm1(x / alpha))


def _swish(x, beta):
    return x / (1.0 + np.exp(-(beta * x)))


def _thresholded_relu(x, alpha):
    return np.where(x > alpha, x, 0.0)


def _selu(x, alpha, scale):
    return np.where(x > 0, x, alpha * np.expm1(x)) * scale


def _hard_sigmoid(x, alpha, beta):
    return np.maximum(0.0, np.minimum(1.0, x * alpha + beta))


def _shrink(x, bias, lambd):
    return np.where(x < -lambd, x + bias, np.where(x > lambd, x - bias, 0.0))


#: activation name -> (reference formula, parameters with their defaults (ONNX's), doc)
ACTIVATIONS = {
    "softplus": (_softplus, (), "log(1 + exp(x)), computed as logaddexp(0, x) (ONNX Softplus)"),
    "softsign": (_softsign, (), "x / (1 + |x|) (ONNX Softsign)"),
    "mish": (_mish, (), "x * tanh(softplus(x)) (ONNX Mish)"),
    "hard_swish": (_hard_swish, (), "x * max(0, min(1, x / 6 + 1 / 2)) (ONNX HardSwish, OpenVINO HSwish)"),
    "hsigmoid": (_hsigmoid, (), "min(max(x + 3, 0), 6) / 6 (OpenVINO HSigmoid; ONNX HardSigmoid's alpha = 1/6, "
                 "beta = 1/2 without rounding them)"),
    "gelu": (_gelu, (), "x / 2 * (1 + erf(x / sqrt(2))) (ONNX Gelu, approximate='none')"),
    "gelu_tanh": (_gelu_tanh, (), "x / 2 * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 x^3))) "
                  "(ONNX Gelu, approximate='tanh')"),
    "leaky_relu": (_leaky_relu, (("alpha", 0.01),), "x if x >= 0 else alpha * x (ONNX LeakyRelu)"),
    "elu": (_elu, (("alpha", 1.0),), "x if x > 0 else alpha * (exp(x) - 1) (ONNX Elu)"),
    "celu": (_celu, (("alpha", 1.0),), "max(0, x) + min(0, alpha * (exp(x / alpha) - 1)) (ONNX Celu)"),
    "swish": (_swish, (("beta", 1.0),), "x * sigmoid(beta * x) (OpenVINO Swish)"),
    "thresholded_relu": (_thresholded_relu, (("alpha", 1.0),), "x if x > alpha else 0 (ONNX ThresholdedRelu)"),
    "selu": (_selu, (("alpha", 1.67326319217681884765625), ("scale", 1.05070102214813232421875)),
             "scale * (x if x > 0 else alpha * (exp(x) - 1)) (ONNX Selu: scale is its gamma)"),
    "hard_sigmoid": (_hard_sigmoid, (("alpha", 0.2), ("beta", 0.5)),
                     "max(0, min(1, alpha * x + beta)) (ONNX HardSigmoid)"),
    "shrink": (_shrink, (("bias", 0.0), ("lambd", 0.5)),
               "x + bias if x < -lambd, x - bias if x > lambd, else 0 (ONNX Shrink)"),
}
#: the activations that call a math library (exp, log, tanh, erf): within ``MATH_ULPS``
_MATH_ACTIVATIONS = ("softplus", "mish", "gelu", "gelu_tanh", "elu", "celu", "swish", "selu")

for _name, (_formula, _params, _doc) in ACTIVATIONS.items():
    if not _params:
        declare(Op(_name, "unary", 1, _activation(_formula), _doc, ufunc=np.exp, accepts="f",
                   tags=frozenset({"activation"})))
    else:
        declare(Op(_name, ("binary", "parametric")[len(_params) - 1], 1 + len(_params), _activation(_formula),
                   _doc, type_rule="params", accepts="f", tags=frozenset({"activation"})))
_MATH += _MATH_ACTIVATIONS

# --- math functions: the Array API elementwise set and the NumPy ufuncs paired with them (#22) ---------

def _real(x):
    return np.array(np.real(x), copy=True)


def _imag(x):
    return np.array(np.imag(x), copy=True)


#: name -> (NumPy ufunc giving the type rule, reference or None (the ufunc), accepted kinds, doc).
#: ``real``/``imag`` are no ufuncs: ``absolute``'s loops give their types (complex -> its real type,
#: anything else kept).
_MATH_UNARY = {
    "sin": (np.sin, None, "fc", "sine (radians)"),
    "cos": (np.cos, None, "fc", "cosine (radians)"),
    "tan": (np.tan, None, "fc", "tangent (radians)"),
    "arcsin": (np.arcsin, None, "fc", "inverse sine (nan outside [-1, 1] for reals)"),
    "arccos": (np.arccos, None, "fc", "inverse cosine (nan outside [-1, 1] for reals)"),
    "arctan": (np.arctan, None, "fc", "inverse tangent"),
    "sinh": (np.sinh, None, "fc", "hyperbolic sine"),
    "cosh": (np.cosh, None, "fc", "hyperbolic cosine"),
    "arcsinh": (np.arcsinh, None, "fc", "inverse hyperbolic sine"),
    "arccosh": (np.arccosh, None, "fc", "inverse hyperbolic cosine (nan below 1 for reals)"),
    "arctanh": (np.arctanh, None, "fc", "inverse hyperbolic tangent (+-inf at +-1, nan beyond)"),
    "exp2": (np.exp2, None, "fc", "2 ** x"),
    "expm1": (np.expm1, None, "fc", "e ** x - 1, accurate near 0"),
    "log1p": (np.log1p, None, "fc", "log(1 + x), accurate near 0"),
    "log2": (np.log2, None, "fc", "base-2 logarithm"),
    "log10": (np.log10, None, "fc", "base-10 logarithm"),
    "cbrt": (np.cbrt, None, "f", "cube root (real, negative for negative x)"),
    "deg2rad": (np.deg2rad, None, "f", "x * (pi / 180)"),
    "rad2deg": (np.rad2deg, None, "f", "x * (180 / pi)"),
    "square": (np.square, None, "iufc", "x * x (integers wrap; bools compute in int8, as NumPy)"),
    "trunc": (np.trunc, None, "biuf", "x rounded toward zero (integers unchanged)"),
    "positive": (np.positive, None, "iufc", "+x (a copy)"),
    "conj": (np.conjugate, None, "iufc", "complex conjugate (reals unchanged; bools compute in int8)"),
    "real": (np.absolute, _real, "biufc", "the real part (reals unchanged)"),
    "imag": (np.absolute, _imag, "biufc", "the imaginary part (0 for reals)"),
    "isnan": (np.isnan, None, "biufc", "whether x is NaN (complex: either part)"),
    "isinf": (np.isinf, None, "biufc", "whether x is +-inf (complex: either part)"),
    "isfinite": (np.isfinite, None, "biufc", "whether x is neither inf nor NaN (complex: both parts)"),
    "signbit": (np.signbit, None, "f", "whether x's sign bit is set (-0.0 and NaNs with the bit included)"),
}
for _name, (_u, _ref, _accepts, _doc) in _MATH_UNARY.items():
    declare(Op(_name, "unary", 1, _quiet(_ref or _u), _doc, ufunc=_u, accepts=_accepts, tags=frozenset({"math"})))

_MATH_BINARY = {
    "arctan2": (np.arctan2, "f", "the angle of the point (x2, x1): atan2(x1, x2), in [-pi, pi]"),
    "hypot": (np.hypot, "f", "sqrt(x1 ** 2 + x2 ** 2) without overflow (inf if either is inf)"),
    "logaddexp": (np.logaddexp, "f", "log(exp(x1) + exp(x2)) without overflow"),
    "logaddexp2": (np.logaddexp2, "f", "log2(2 ** x1 + 2 ** x2) without overflow"),
    "copysign": (np.copysign, "f", "|x1| with the sign of x2"),
    "nextafter": (np.nextafter, "f", "the next value of x1's dtype after x1 toward x2"),
    "fmax": (np.fmax, "biufc", "elementwise maximum ignoring NaN (NaN only where both are)"),
    "fmin": (np.fmin, "biufc", "elementwise minimum ignoring NaN (NaN only where both are)"),
}
for _name, (_u, _accepts, _doc) in _MATH_BINARY.items():
    declare(Op(_name, "binary", 2, _quiet(_u), _doc, ufunc=_u, accepts=_accepts, tags=frozenset({"math"})))

#: The Array API's spellings of ops declared above under NumPy's names (the same functions in
#: ``gpubcast``: ``gpubcast.acos is gpubcast.arccos``)
ARRAY_API_ALIASES = {
    "acos": "arccos", "asin": "arcsin", "atan": "arctan", "acosh": "arccosh", "asinh": "arcsinh",
    "atanh": "arctanh", "atan2": "arctan2", "pow": "power", "bitwise_invert": "bitwise_not",
    "bitwise_left_shift": "left_shift", "bitwise_right_shift": "right_shift",
}

#: Accuracy of the math functions (#22): the most ulps a result may be from NumPy's float64 result
#: rounded once to the loop dtype, per function, for (float16, bfloat16, float32, float64) inputs;
#: held by tests (tests/ops/test_math_accuracy.py) on the NumPy reference (NumPy's own loops: SIMD, SVML
#: or the C library) and the Numba backend over dense sweeps and the special values.  float16 and
#: bfloat16 compute in float32 and round once: 1 ulp.  float32 / float64: what was measured here
#: (at most 2 ulps; 3 for float64 cbrt, the C library's against NumPy's SVML), or what CUDA's
#: libdevice documents for the function, whichever is more, plus 1 (the rounding of the truth).
#: 0: exact (the same value as NumPy's own loop for the dtype: nextafter, copysign, fmax, ... and
#: the float64 results of deg2rad / rad2deg, whose reference is NumPy's float64 loop itself).
#: ``logaddexp`` and ``logaddexp2`` cancel where the result is near 0 (NumPy's own formula, in the
#: loop dtype): their bound is in ulps of max(|result|, 1).  Complex results (CPU backends) agree
#: with NumPy's own complex loops (the C library's csin, ..., NumPy's formulas for exp2, expm1,
#: log1p, log2, log10) within ``MATH_COMPLEX_ULPS`` ulps of each part.
MATH_FUNCTION_ULPS = {
    "sin": (1, 1, 3, 3), "cos": (1, 1, 3, 3), "tan": (1, 1, 5, 3),
    "arcsin": (1, 1, 3, 3), "arccos": (1, 1, 3, 3), "arctan": (1, 1, 3, 3),
    "sinh": (1, 1, 4, 3), "cosh": (1, 1, 3, 2), "arcsinh": (1, 1, 4, 4), "arccosh": (1, 1, 5, 4),
    "arctanh": (1, 1, 4, 3), "exp2": (1, 1, 3, 2), "expm1": (1, 1, 3, 2), "log1p": (1, 1, 3, 2),
    "log2": (1, 1, 2, 2), "log10": (1, 1, 3, 2), "cbrt": (1, 1, 3, 4),
    "deg2rad": (1, 1, 1, 0), "rad2deg": (1, 1, 1, 0),
    "arctan2": (1, 1, 4, 3), "hypot": (1, 1, 4, 3), "logaddexp": (1, 1, 4, 2), "logaddexp2": (1, 1, 4, 2),
}
MATH_COMPLEX_ULPS = 4
_BOUND_COLUMN = {"float16": 0, "bfloat16": 1, "float32": 2, "float64": 3}


def math_ulps(name: str, dtype) -> int:
    """The accuracy bound of math function ``name`` on (loop) dtype ``dtype``: ulps from NumPy's
    float64 result rounded once (``MATH_FUNCTION_ULPS``; complex: ``MATH_COMPLEX_ULPS`` per part
    from NumPy's own); 0 for exact functions."""
    dt = np.dtype(dtype)
    if _dt.kind(dt) == "c":
        return MATH_COMPLEX_ULPS if name in MATH_FUNCTION_ULPS else 0
    bounds = MATH_FUNCTION_ULPS.get(name)
    if bounds is None or _dt.kind(dt) != "f":
        return 0
    return bounds[_BOUND_COLUMN.get(str(dt), 3)]


def math_rtol(name: str, dtype) -> float:
    """The relative tolerance of op ``name`` on inputs of ``dtype`` against its reference:
    ``MATH_ULPS`` ulps of the float result for the math-library ops, twice ``math_ulps`` for the
    math functions of #22 (float64 and complex: once, the reference being the truth), else 0.0."""
    op = get(name)
    if "math" in op.tags:
        try:
            loop = op.resolve((np.dtype(dtype),) * op.arity)[0][0]
        except TypeError:
            return 0.0
        k = math_ulps(name, loop)  # each backend within k ulps of the truth: 2k of each other
        if not k:
            return 0.0
        k = k if _dt.kind(loop) == "c" or loop == np.float64 else 2 * k
        return k * float(ml_dtypes.finfo(np.empty(0, loop).real.dtype).eps)
    if op.kind != "unary" and name not in _MATH_ACTIVATIONS:
        return 0.0
    try:
        loop = op.resolve((np.dtype(dtype),) * op.arity)[0][0]
    except TypeError:
        return 0.0
    if name in _MATH or name == "abs" and loop.kind == "c":
        return MATH_ULPS * float(ml_dtypes.finfo(np.empty(0, loop).real.dtype).eps)
    return 0.0


UNARY = tuple(n for n, op in REGISTRY.items() if op.kind == "unary")
BINARY = tuple(n for n, op in REGISTRY.items() if op.kind == "binary")
PARAMETRIC = tuple(n for n, op in REGISTRY.items() if op.kind == "parametric")
