"""ONNX operators by their ONNX names, computed by gpubcast's broadcasting kernels.

Each function takes the operator's inputs positionally in ONNX's order and its
attributes as keywords with ONNX's names and defaults, plus ``backend=``
('numpy' | 'numba' | 'cuda'), passed through to ``gpubcast.dispatch.apply``.
Inputs are NumPy arrays (CPU) or CuPy arrays (GPU); Python scalars mix with
either and take the arrays' type.  This module only translates: every value
is computed by a registry op through ``dispatch.apply`` (Gemm's matrix
product alone is ``matmul`` of the inputs' array module).

ONNX semantics, where they differ from the NumPy-style API:

- Type constraints are enforced: inputs bound to one type parameter must share
  one element type, of the operator's list (``TypeError`` otherwise; see
  ``gpubcast.onnx.constraints``).  Comparisons return bool.
- ``Div`` on integers truncates toward zero; ``x / 0 -> 0``, ``INT_MIN / -1 -> INT_MIN``.
- ``Mod``: ``fmod=0`` takes the divisor's sign (floats too, as Mod-28 defines it),
  ``fmod=1`` the dividend's; ``x % 0 -> 0`` for integers.
- ``Pow``: the result has the base's type (an integer base with a float
  exponent computes in floating point and truncates, as the ONNX reference does).
- ``BitShift``: a shift by a negative amount or by >= the bit width gives 0
  (-1 for a right shift of a negative value), as BitShift-28 defines it.
- ``PRelu``'s slope and ``Gemm``'s C broadcast unidirectionally (never grow the result).
- ``Max Min Mean Sum`` take 1..N inputs, multidirectional broadcast, one pass.
- Unary operators keep their input's type (``Exp`` of float16 is float16).  ``Clip``'s
  optional ``min`` / ``max`` (inputs, or Clip-6's attributes) broadcast with the input.
  ``Cast``/``CastLike`` convert between the numeric and bool types gpubcast computes in
  (not float8/int4/string: ``TypeError``); a float out of an integer type's range converts to
  an undefined value, as the ONNX spec says.

``gpubcast.onnx.backend`` runs ONNX models made of these operators.
"""

from __future__ import annotations

import importlib
import math

import numpy as np

from .. import api, backends, compiled_calls, ops
from .. import dtypes as _dt
from ..attributes import float_attribute, int_attribute
from ..dtypes import bfloat16
from ..dispatch import apply
from ..rules import broadcast_shapes
from .constraints import (ANY, BOOL, FLOATS, INTS, NUMERIC, POW_BASE, PRELU_GEMM, SIGNED, STRING, constrain, hot_path,
                          type_name)

_AB = ("A", "B")

#: ONNX name -> (registry op, type constraint T, what it computes); all take (A, B)
_BINARY = {
    "Add": ("add", NUMERIC, "A + B"),
    "Sub": ("subtract", NUMERIC, "A - B"),
    "Mul": ("multiply", NUMERIC, "A * B"),
    "Div": ("div_trunc", NUMERIC,
            "A / B; integers truncate toward zero (x / 0 -> 0, INT_MIN / -1 -> INT_MIN)"),
    "And": ("logical_and", BOOL, "A and B, on bool tensors"),
    "Or": ("logical_or", BOOL, "A or B, on bool tensors"),
    "Xor": ("logical_xor", BOOL, "A xor B, on bool tensors"),
    "Equal": ("equal", NUMERIC | BOOL | STRING, "A == B, as bool"),
    "Greater": ("greater", NUMERIC, "A > B, as bool"),
    "Less": ("less", NUMERIC, "A < B, as bool"),
    "GreaterOrEqual": ("greater_equal", NUMERIC, "A >= B, as bool"),
    "LessOrEqual": ("less_equal", NUMERIC, "A <= B, as bool"),
    "BitwiseAnd": ("bitwise_and", INTS, "A & B, on integer tensors"),
    "BitwiseOr": ("bitwise_or", INTS, "A | B, on integer tensors"),
    "BitwiseXor": ("bitwise_xor", INTS, "A ^ B, on integer tensors"),
}

#: ONNX name -> (registry op, type constraint T, what it computes); all take data_0, data_1, ...
_VARIADIC = {
    "Max": ("max", NUMERIC, "elementwise maximum (NaN-propagating)"),
    "Min": ("min", NUMERIC, "elementwise minimum (NaN-propagating)"),
    "Mean": ("mean", FLOATS, "elementwise mean"),
    "Sum": ("sum", FLOATS, "elementwise sum"),
}

#: ONNX name -> (registry op, type constraint T, what it computes); all take one input X
_UNARY = {
    "Neg": ("negative", SIGNED | FLOATS, "-X (integers wrap)"),
    "Abs": ("abs", NUMERIC, "|X|"),
    "Sqrt": ("sqrt", FLOATS, "the square root of X (nan for negatives)"),
    "Exp": ("exp", FLOATS, "e ** X"),
    "Log": ("log", FLOATS, "the natural logarithm of X"),
    "Tanh": ("tanh", FLOATS, "the hyperbolic tangent of X"),
    "Erf": ("erf", FLOATS, "the error function of X"),
    "Sigmoid": ("sigmoid", FLOATS, "1 / (1 + exp(-X))"),
    "Reciprocal": ("reciprocal", FLOATS, "1 / X"),
    "Floor": ("floor", FLOATS, "the largest integer <= X"),
    "Ceil": ("ceil", FLOATS, "the smallest integer >= X"),
    "Round": ("round", FLOATS, "X rounded to the nearest integer, halves to even"),
    "Sign": ("sign", NUMERIC, "-1, 0 or 1 by the sign of X"),
    "Relu": ("relu", SIGNED | FLOATS, "max(X, 0)"),
    "Not": ("logical_not", BOOL, "not X, on bool tensors"),
    "BitwiseNot": ("bitwise_not", INTS, "~X, on integer tensors"),
    # the math functions of #22
    "Sin": ("sin", FLOATS, "the sine of X (radians)"),
    "Cos": ("cos", FLOATS, "the cosine of X (radians)"),
    "Tan": ("tan", FLOATS, "the tangent of X (radians)"),
    "Asin": ("arcsin", FLOATS, "the inverse sine of X (NaN outside [-1, 1])"),
    "Acos": ("arccos", FLOATS, "the inverse cosine of X (NaN outside [-1, 1])"),
    "Atan": ("arctan", FLOATS, "the inverse tangent of X"),
    "Sinh": ("sinh", FLOATS, "the hyperbolic sine of X"),
    "Cosh": ("cosh", FLOATS, "the hyperbolic cosine of X"),
    "Asinh": ("arcsinh", FLOATS, "the inverse hyperbolic sine of X"),
    "Acosh": ("arccosh", FLOATS, "the inverse hyperbolic cosine of X (NaN below 1)"),
    "Atanh": ("arctanh", FLOATS, "the inverse hyperbolic tangent of X (+-inf at +-1, NaN beyond)"),
}

_TYPES_DOC = "Type constraint T: {}."


def _allowed(allowed) -> str:
    return ", ".join(f"tensor({t})" for t in sorted(allowed))


def _binary(name: str, op_name: str, allowed, what: str):
    op = ops.get(op_name)

    fast = hot_path(f"onnx {name}", op, allowed)

    def f(A, B, /, *, backend=None):
        if backend is None and (result := fast(A, B)) is not None:
            return result
        A, B = constrain(name, (A, B), allowed, _AB)
        return apply(op, (A, B), backend=backend)

    f.__name__ = f.__qualname__ = name
    f.__doc__ = (f"ONNX {name}(A, B): {what}, with multidirectional (NumPy) broadcasting.\n\n"
                 f"A and B must share one element type. {_TYPES_DOC.format(_allowed(allowed))}\n"
                 "Raises BroadcastError when the shapes do not broadcast, TypeError for the types.")
    # a call C declines is f's (which asks the table once more: the slow path anyway)
    return compiled_calls.function(f, lambda out, A, B: f(A, B), fast.default, 2, out=None)


def _variadic(name: str, op_name: str, allowed, what: str):
    op = ops.get(op_name)

    fast = hot_path(f"onnx {name}", op, allowed)

    def f(*data, backend=None):
        if backend is None and data and (result := fast(*data)) is not None:
            return result
        if not data:
            raise TypeError(f"{name} takes 1 or more inputs (data_0, data_1, ...), got none")
        data = constrain(name, data, allowed, tuple(f"data_{i}" for i in range(len(data))))
        return apply(op, data, backend=backend)

    f.__name__ = f.__qualname__ = name
    f.__doc__ = (f"ONNX {name}(data_0, ..., data_n): {what} of 1..N inputs, multidirectional\n"
                 f"broadcasting, computed in one pass. {_TYPES_DOC.format(_allowed(allowed))}")
    return f


def _unary(name: str, op_name: str, allowed, what: str):
    op = ops.get(op_name)

    fast = hot_path(f"onnx {name}", op, allowed)

    def f(X, /, *, backend=None):
        if backend is None and (result := fast(X)) is not None:
            return result
        (X,) = constrain(name, (X,), allowed, ("X",))
        return apply(op, (X,), backend=backend)

    f.__name__ = f.__qualname__ = name
    f.__doc__ = (f"ONNX {name}(X): {what}, elementwise; the result has X's type and shape.\n\n"
                 f"{_TYPES_DOC.format(_allowed(allowed))}")
    return compiled_calls.function(f, lambda out, X: f(X), fast.default, 1, out=None)


for _name, _spec in _UNARY.items():
    globals()[_name] = _unary(_name, *_spec)
for _name, _spec in _BINARY.items():
    globals()[_name] = _binary(_name, *_spec)
for _name, _spec in _VARIADIC.items():
    globals()[_name] = _variadic(_name, *_spec)


def _cast(x, dtype, be):
    """``x`` converted to ``dtype`` by backend ``be`` (as dispatch converts inputs): the output type
    ONNX defines where it differs from the computing type (Pow's and Gemm's T)."""
    if x.dtype == dtype:
        return x
    with np.errstate(invalid="ignore", over="ignore"):
        return be.asarray(x, dtype=dtype)


def Pow(X, Y, /, *, backend=None):
    """ONNX Pow(X, Y): X ** Y with multidirectional broadcasting; the result has X's type.

    X may be tensor(int32/int64/float16/float/double/bfloat16) (constraint T), Y any
    numeric type (T1).  When Y's type differs, the power is computed in the two
    types' common NumPy type and converted to X's (an integer base with a float
    exponent truncates: Pow([4, 2], 0.5) on int32 gives [2, 1]).  An integer to a
    negative integer power gives 1 for base 1, +-1 for base -1, 0 otherwise.
    """
    (X,) = constrain("Pow", (X,), POW_BASE, ("X",))
    (Y,) = constrain("Pow", (Y,), NUMERIC, ("Y",), param="T1")
    result = apply(ops.get("power"), (X, Y), backend=backend)
    if hasattr(X, "dtype"):
        result = _cast(result, X.dtype, backends.select((result,), None, backend))
    return result


def Mod(A, B, /, *, fmod=0, backend=None):
    """ONNX Mod(A, B, fmod=0): the remainder of A / B with multidirectional broadcasting.

    fmod=0: A - floor(A / B) * B, with the divisor's sign (Python's %); floats are
    allowed, as Mod-28 defines them (Mod-10..13 required fmod=1 for floats).
    fmod=1: A - trunc(A / B) * B, with the dividend's sign (C's fmod).
    Integers: x % 0 -> 0.
    """
    if fmod not in (0, 1):
        raise ValueError(f"Mod: fmod must be 0 or 1, got {fmod!r}")
    A, B = constrain("Mod", (A, B), NUMERIC, _AB)
    return apply(ops.get("fmod" if fmod else "remainder"), (A, B), backend=backend)


def BitShift(X, Y, /, *, direction, backend=None):
    """ONNX BitShift(X, Y, direction='LEFT' | 'RIGHT'): X shifted by Y bits, integers of one type.

    Right shifts of signed values are arithmetic.  A shift by a negative amount or
    by >= the bit width gives 0, or -1 for a right shift of a negative X (BitShift-28).
    """
    if isinstance(direction, bytes):
        direction = direction.decode()
    if direction not in ("LEFT", "RIGHT"):
        raise ValueError(f"BitShift: direction must be 'LEFT' or 'RIGHT', got {direction!r}")
    X, Y = constrain("BitShift", (X, Y), INTS, ("X", "Y"))
    return apply(ops.get("left_shift" if direction == "LEFT" else "right_shift"), (X, Y), backend=backend)


def Where(condition, X, Y, /, *, backend=None):
    """ONNX Where(condition, X, Y): X where condition is true, else Y; multidirectional broadcasting
    of all three.  condition is tensor(bool); X and Y share one type (any, strings included on the CPU)."""
    (condition,) = constrain("Where", (condition,), BOOL, ("condition",), param="B")
    X, Y = constrain("Where", (X, Y), ANY, ("X", "Y"))
    return api.where(condition, X, Y, backend=backend)


def Expand(input, shape, /, *, backend=None):  # noqa: A002 - ONNX's name
    """ONNX Expand(input, shape): input broadcast bidirectionally with ``shape`` (numpy rule of the
    two: the result may be larger than ``shape`` where it holds 1s or is shorter than input's rank).

    ``shape`` is a 1-D tensor(int64) or a sequence of ints.
    """
    (x,) = constrain("Expand", (input,), ANY, ("input",))
    if hasattr(shape, "dtype"):
        if type_name(shape.dtype) != "int64":
            raise TypeError(f"Expand: shape must be a tensor(int64), got tensor({type_name(shape.dtype)})")
        if shape.ndim != 1:
            raise ValueError(f"Expand: shape must be 1-D, got an array of shape {tuple(shape.shape)}")
    return api.expand(x, shape, backend=backend)


def PRelu(X, slope, /, *, backend=None):
    """ONNX PRelu(X, slope): X where X >= 0, else slope * X.

    ``slope`` broadcasts unidirectionally to X: the result always has X's shape, and
    a slope that would grow it raises BroadcastError (ONNX Runtime does not enforce
    this; gpubcast does).  X and slope share one type.
    """
    X, slope = constrain("PRelu", (X, slope), PRELU_GEMM, ("X", "slope"))
    return api.prelu(X, slope, backend=backend)


def _coefficient(name: str, v):
    """Gemm's scale ``name`` as a weak Python scalar; integral values as int, so integer tensors stay integer."""
    v = float_attribute("Gemm", name, v)
    return int(v) if v.is_integer() else v


def Gemm(A, B, C=None, /, *, alpha=1.0, beta=1.0, transA=0, transB=0, backend=None):
    """ONNX Gemm: Y = alpha * A' @ B' + beta * C, with A' = A.T if transA else A (M, K) and
    B' = B.T if transB else B (K, N).

    C (optional) broadcasts unidirectionally to (M, N).  The product is the array
    module's ``matmul``; the scaling and the bias are one pass of gpubcast's ``axpby``
    (``multiply`` without C; nothing when alpha == 1).  With beta == 0, C is checked
    but not read.  A, B and C share one type; an integer Gemm with a non-integral
    alpha or beta computes in float64 and truncates back, as the ONNX reference does.
    """
    alpha, beta = _coefficient("alpha", alpha), _coefficient("beta", beta)
    transA, transB = int_attribute("Gemm", "transA", transA), int_attribute("Gemm", "transB", transB)
    names = _AB + (("C",) if C is not None else ())
    inputs = constrain("Gemm", (A, B) + ((C,) if C is not None else ()), PRELU_GEMM, names)
    be = backends.select(inputs, None, backend)
    A, B = (x if be.owns(x) else be.asarray(x) for x in inputs[:2])
    for name, x in zip(_AB, (A, B)):
        if x.ndim != 2:
            raise ValueError(f"Gemm: {name} must be 2-D, got shape {tuple(x.shape)}")
    A = A.T if transA else A
    B = B.T if transB else B
    if A.shape[1] != B.shape[0]:
        raise ValueError(f"Gemm: inner dimensions differ: A' is (M, K) = {tuple(A.shape)} but B' is "
                         f"(K, N) = {tuple(B.shape)}")
    product = be.xp.matmul(A, B)
    if C is not None:
        C = inputs[2]
        broadcast_shapes(product.shape, tuple(getattr(C, "shape", ())), rule="unidirectional")
    if C is not None and beta != 0:
        result = apply(ops.get("axpby"), (alpha, product, beta, C), backend=be.name)
    elif alpha != 1:
        result = apply(ops.get("multiply"), (product, alpha), backend=be.name)
    else:
        return product
    return _cast(result, product.dtype, be)


def Clip(input, min=None, max=None, *, backend=None):  # noqa: A002 - ONNX's names
    """ONNX Clip(input, min, max): input limited to [min, max], as ONNX Runtime computes it.

    ``min`` / ``max`` are optional, as inputs (Clip-11+, 0-d tensors) or as Clip-6's attributes
    (floats), and broadcast with input.  All share one type T (numeric).  A missing bound is T's
    lowest / highest finite value (the spec's ``numeric_limits``: a float input's -inf / +inf become
    them); a NaN bound bounds nothing (ONNX Runtime's max / min keep x); min > max gives max
    everywhere; NaN in input stays NaN.  A Python int bound must fit T (``OverflowError``)."""
    names = ("input", "min", "max")
    given = [(n, x) for n, x in zip(names, (input, min, max)) if x is not None]
    checked = dict(zip((n for n, _ in given), constrain("Clip", [x for _, x in given], NUMERIC,
                                                         tuple(n for n, _ in given))))
    x = checked["input"]
    dt = _dt.dtype_of(x)
    lo, hi = (_clip_bound(dt, name, checked.get(name), backend) for name in ("min", "max"))
    return api.clip(x, lo, hi, backend=backend)


def _clip_bound(dt: np.dtype, name: str, bound, backend):
    """A Clip bound as ONNX Runtime reads it, for an input of ``dt`` (see ``Clip``); None: no bound."""
    low = name == "min"
    if _dt.kind(dt) != "f":   # integers: a missing bound clips nothing, a Python int must fit
        if type(bound) is int and not _dt.fits(bound, dt):
            raise OverflowError(f"Clip: {name}={bound} is out of range of tensor({type_name(dt)}); ONNX's "
                                f"bounds have the input's type")
        return bound
    if bound is None:         # numeric_limits<T>::lowest() / max()
        return -_dt.finite_max(dt) if low else _dt.finite_max(dt)
    nothing = -math.inf if low else math.inf
    if _dt.is_python_scalar(bound):  # (Clip-6's default +-FLT_MAX: float16's +-inf)
        return nothing if bound != bound else _dt.in_float_type(bound, dt)
    if isinstance(bound, np.generic):
        return nothing if bound != bound else bound
    if isinstance(bound, np.ndarray):  # read on the host: NaN-free bounds (the usual) pass unchanged
        nan = np.isnan(bound)
        return np.where(nan, nothing, bound).astype(bound.dtype) if nan.any() else bound
    return api.where(api.isnan(bound, backend=backend), nothing, bound, backend=backend)  # on the device, traced


#: ONNX TensorProto element types -> the dtypes gpubcast computes in (onnx.helper's mapping)
_ELEMENT_TYPES = {1: "float32", 2: "uint8", 3: "int8", 4: "uint16", 5: "int16", 6: "int32", 7: "int64",
                  9: "bool", 10: "float16", 11: "float64", 12: "uint32", 13: "uint64", 14: "complex64",
                  15: "complex128", 16: bfloat16}


def _target_dtype(op: str, to) -> np.dtype:
    if isinstance(to, (int, np.integer)) and not isinstance(to, bool):
        if int(to) not in _ELEMENT_TYPES:
            raise TypeError(f"{op}: element type {int(to)} (TensorProto) is not one gpubcast computes in; "
                            f"supported: {', '.join(type_name(np.dtype(t)) for t in _ELEMENT_TYPES.values())}")
        return np.dtype(_ELEMENT_TYPES[int(to)])
    dt = np.dtype(to)
    if type_name(dt) not in ANY - STRING:
        raise TypeError(f"{op}: cannot convert to tensor({type_name(dt)}); gpubcast converts between "
                        f"numeric and bool types")
    return dt


def Cast(input, /, *, to, saturate=1, round_mode="up", backend=None):  # noqa: A002 - ONNX's name
    """ONNX Cast(input, to=...): input converted to element type ``to`` (a TensorProto enum, or any
    NumPy dtype); NumPy's astype (casting='unsafe') for numeric and bool types.  ``saturate`` and
    ``round_mode`` only concern float8 / float4 targets, which gpubcast does not compute in."""
    (x,) = constrain("Cast", (input,), ANY - STRING, ("input",), param="T1")
    return api.cast(x, _target_dtype("Cast", to), backend=backend)


def CastLike(input, target_type, /, *, saturate=1, round_mode="up", backend=None):  # noqa: A002 - ONNX's name
    """ONNX CastLike(input, target_type): input converted to target_type's element type."""
    (x,) = constrain("CastLike", (input,), ANY - STRING, ("input",), param="T1")
    (target_type,) = constrain("CastLike", (target_type,), ANY - STRING, ("target_type",), param="T2")
    return api.cast(x, _target_dtype("CastLike", target_type.dtype), backend=backend)


def Identity(input, /, *, backend=None):  # noqa: A002 - ONNX's name
    """ONNX Identity(input): input itself (any tensor type; sequences and optionals are not supported)."""
    (x,) = constrain("Identity", (input,), ANY, ("input",))
    backends.select((x,), None, backend)  # the device check every operator makes
    return x


def Constant(*, value=None, value_float=None, value_floats=None, value_int=None, value_ints=None,
             value_string=None, value_strings=None, backend=None):
    """ONNX Constant: the tensor of exactly one of its attributes (``value`` an array; ``value_float``
    and ``value_int`` 0-d float32 / int64; ``value_floats`` / ``value_ints`` 1-D), on ``backend``'s
    device ('cuda': a CuPy array; strings stay NumPy)."""
    given = {k: v for k, v in dict(value=value, value_float=value_float, value_floats=value_floats,
                                   value_int=value_int, value_ints=value_ints, value_string=value_string,
                                   value_strings=value_strings).items() if v is not None}
    if len(given) != 1:
        raise ValueError(f"Constant: exactly one value attribute must be set, got {sorted(given) or 'none'}")
    (kind, v), = given.items()
    dtype = {"value_float": np.float32, "value_floats": np.float32, "value_int": np.int64,
             "value_ints": np.int64, "value_string": object, "value_strings": object}.get(kind)
    x = np.asarray(v, dtype=dtype)
    if backend == "cuda" and x.dtype.kind not in "OUS":
        return backends.get("cuda").xp.asarray(x)
    return x


# --- activations (issue #22) ---------------------------------------------------------------------------

def _f32(v: float) -> float:
    """An ONNX float attribute's default as the float32 it is stored as."""
    return float(np.float32(v))


#: ONNX name -> (registry op, type constraint T, the input's name, attributes with their defaults in the
#: registry op's parameter order, what it computes).  Older versions differ only by Elu-1, LeakyRelu-1,
#: Selu-1 and HardSigmoid-1's ``consumed_inputs`` (a legacy in-place hint: accepted, ignored).
_ACTIVATIONS = {
    "Softplus": ("softplus", FLOATS, "X", (), "log(1 + exp(X))"),
    "Softsign": ("softsign", FLOATS, "X", (), "X / (1 + |X|)"),
    "HardSwish": ("hard_swish", FLOATS, "X", (), "X * max(0, min(1, X / 6 + 1 / 2))"),
    "Mish": ("mish", FLOATS, "X", (), "X * tanh(softplus(X))"),
    "LeakyRelu": ("leaky_relu", FLOATS, "X", (("alpha", _f32(0.01)),), "X if X >= 0 else alpha * X"),
    "Elu": ("elu", FLOATS, "X", (("alpha", 1.0),), "X if X >= 0 else alpha * (exp(X) - 1)"),
    "Celu": ("celu", FLOATS, "X", (("alpha", 1.0),), "max(0, X) + min(0, alpha * (exp(X / alpha) - 1))"),
    "ThresholdedRelu": ("thresholded_relu", FLOATS, "X", (("alpha", 1.0),), "X if X > alpha else 0"),
    "Selu": ("selu", FLOATS, "X", (("alpha", _f32(1.67326319217681884765625)),
                                   ("gamma", _f32(1.05070102214813232421875))),
             "gamma * (X if X > 0 else alpha * (exp(X) - 1))"),
    "HardSigmoid": ("hard_sigmoid", FLOATS, "X", (("alpha", _f32(0.2)), ("beta", 0.5)),
                    "max(0, min(1, alpha * X + beta))"),
    "Shrink": ("shrink", NUMERIC, "input", (("bias", 0.0), ("lambd", 0.5)),
               "input + bias if input < -lambd, input - bias if input > lambd, else 0 (integers: computed in "
               "float64, converted back to the input's type)"),
}
#: the operators above whose version 1 takes the attribute ``consumed_inputs``
CONSUMED_INPUTS = ("LeakyRelu", "Elu", "Selu", "HardSigmoid")


def _activation(name: str, op_name: str, allowed, input_name: str, attributes, what: str):
    op = ops.get(op_name)
    names = [a for a, _ in attributes]
    defaults = dict(attributes)

    def f(X, /, *, backend=None, **attrs):
        if name in CONSUMED_INPUTS:
            attrs.pop("consumed_inputs", None)
        unknown = sorted(set(attrs) - set(names))
        if unknown:
            raise TypeError(f"{name}: unknown attribute(s) {', '.join(unknown)}; {name} takes "
                            f"{', '.join(names) or 'none'}")
        (X,) = constrain(name, (X,), allowed, (input_name,))
        params = [float_attribute(name, a, attrs.get(a, defaults[a])) for a in names]
        result = apply(op, (X, *params), rule="unidirectional" if params else "numpy", backend=backend)
        if name == "Elu" and not 0 <= params[0] < math.inf:  # ONNX: X itself at X >= 0 (alpha * 0 is not 0)
            result = api.where(api.greater_equal(X, 0, backend=backend), X, result, backend=backend)
        if hasattr(X, "dtype") and np.dtype(X.dtype).kind in "iu":  # Shrink on integers: back to X's type
            result = api.cast(result, X.dtype, backend=backend)
        return result

    f.__name__ = f.__qualname__ = name
    shown = ", ".join(f"{a}={d!r}" for a, d in attributes)
    f.__doc__ = (f"ONNX {name}({input_name}{', ' + shown if shown else ''}): {what}, elementwise; the result "
                 f"has {input_name}'s type and shape.\n\nAttributes are floats (their defaults: ONNX's, as "
                 f"float32).  {_TYPES_DOC.format(_allowed(allowed))}")
    return f


for _name, _spec in _ACTIVATIONS.items():
    globals()[_name] = _activation(_name, *_spec)


def Gelu(X, /, *, approximate="none", backend=None):
    """ONNX Gelu(X, approximate='none'): X / 2 * (1 + erf(X / sqrt(2))); approximate='tanh':
    X / 2 * (1 + tanh(sqrt(2 / pi) * (X + 0.044715 X^3))).  Type constraint T: tensor(bfloat16),
    tensor(double), tensor(float), tensor(float16)."""
    (X,) = constrain("Gelu", (X,), FLOATS, ("X",))
    return api.gelu(X, approximate, backend=backend)


def IsNaN(X, /, *, backend=None):
    """ONNX IsNaN(X): whether each element of X is NaN, as tensor(bool).  Type constraint T1:
    tensor(bfloat16), tensor(double), tensor(float), tensor(float16) (not the float8 types)."""
    (X,) = constrain("IsNaN", (X,), FLOATS, ("X",), param="T1")
    return apply(ops.get("isnan"), (X,), backend=backend)


def IsInf(X, /, *, detect_negative=1, detect_positive=1, backend=None):
    """ONNX IsInf(X, detect_negative=1, detect_positive=1): whether each element of X is an infinity
    it detects (-inf with detect_negative, +inf with detect_positive), as tensor(bool).  Type
    constraint T1: tensor(bfloat16), tensor(double), tensor(float), tensor(float16)."""
    (X,) = constrain("IsInf", (X,), FLOATS, ("X",), param="T1")
    positive, negative = (bool(int_attribute("IsInf", name, v)) for name, v in (("detect_positive", detect_positive),
                                                                                ("detect_negative", detect_negative)))
    return api.isinf(X, detect_positive=positive, detect_negative=negative, backend=backend)


#: every operator this module implements, by ONNX name
OPERATORS = {name: globals()[name] for name in (
    *_UNARY, *_BINARY, "Pow", "Mod", *_VARIADIC, "Where", "BitShift", "Expand", "PRelu", "Gemm", "Clip",
    "Cast", "CastLike", "Identity", "Constant", *_ACTIVATIONS, "Gelu", "IsNaN", "IsInf")}

__all__ = sorted(OPERATORS) + ["OPERATORS"]


def __getattr__(name):
    if name == "backend":  # the ONNX backend imports onnx; load it on first use only
        return importlib.import_module(f"{__name__}.backend")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    """The public API only: the operators, ``OPERATORS`` and the ``backend`` submodule."""
    return sorted([*__all__, "backend"])
