"""OpenVINO operators by their OpenVINO names, computed by gpubcast's broadcasting kernels.

Elementwise operators take their inputs positionally (``a, b``; Select's
``cond, then, else``) and ``auto_broadcast="numpy" | "pdpd" | "none"`` with
``axis=-1`` (PDPD's start axis; -1 means rank(a) - rank(b)), plus ``backend=``
('numpy' | 'numba' | 'cuda') passed through to ``gpubcast.dispatch.apply``.
``Broadcast`` covers Broadcast-1 (modes numpy, explicit) and Broadcast-3
(adds bidirectional and pdpd).  This module only translates: every value is
computed by a registry op through ``dispatch.apply``.

Type rules (OpenVINO opset 1 specifications):

- The inputs of one operator share one element type (``TypeError`` otherwise);
  Python scalars are weak and take the arrays' type.
- Arithmetic (Add ... Minimum, FloorMod, Mod, PRelu) takes numeric types, not
  boolean; comparisons take any type and return boolean; LogicalAnd/Or/Xor take
  boolean only; Select takes a boolean ``cond``.
- ``Divide`` on integers follows ``m_pythondiv`` (default True, as Divide-1):
  floor division, or truncation toward zero with ``m_pythondiv=False``; x / 0 -> 0.
  Floats divide.
- ``Mod`` is truncated (the dividend's sign), ``FloorMod`` floored (the divisor's
  sign); x % 0 -> 0 for integers.
- ``Maximum``/``Minimum`` propagate NaN; an integer ``Power`` with a negative
  exponent gives 1 for base 1, +-1 for base -1, 0 otherwise.
- ``PRelu``: a 1-D slope as long as data's channel dim (dim 1) applies per channel;
  any other slope broadcasts to data with the numpy rule, one-directionally.

- Activations (Elu, Gelu-7, HSigmoid, HSwish, Mish, SoftPlus, SoftSign, Swish, Selu, HardSigmoid)
  take floating-point data; their tensor parameters have data's type and apply to every element
  (Selu's are 1-D of one element, HardSigmoid's and Swish's 0-D).  ``Clamp`` takes any numeric type.
- ``Sin ... Atanh`` take floating-point data (the specification lists every numeric type but leaves
  integer results to each operator's rounding: a TypeError here).

Where OpenVINO's CPU plugin departs from these written rules, gpubcast follows
the rules; docs/guide/differences.md lists the differences, each pinned by a test.
"""

from __future__ import annotations

import math

from . import api, ops
from . import dtypes as _dt
from .attributes import float_attribute
from .dispatch import apply
from .onnx.constraints import BOOL, FLOATS, NUMERIC, constrain, hot_path

AUTO_BROADCASTS = ("numpy", "pdpd", "none")
BROADCAST_MODES = ("numpy", "explicit", "bidirectional", "pdpd")
_AB = ("a", "b")
_SPEC = "OpenVINO"


def _auto_broadcast(auto_broadcast: str) -> str:
    rule = str(auto_broadcast).lower()
    if rule not in AUTO_BROADCASTS:
        raise ValueError(f"auto_broadcast={auto_broadcast!r} is not an OpenVINO auto-broadcast type; choose one "
                         f"of {', '.join(map(repr, AUTO_BROADCASTS))}")
    return rule


#: OpenVINO name -> (registry op, allowed element types, what it computes)
_BINARY = {
    "Add": ("add", NUMERIC, "a + b"),
    "Subtract": ("subtract", NUMERIC, "a - b"),
    "Multiply": ("multiply", NUMERIC, "a * b"),
    "Power": ("power", NUMERIC, "a ** b"),
    "Maximum": ("maximum", NUMERIC, "max(a, b), NaN-propagating"),
    "Minimum": ("minimum", NUMERIC, "min(a, b), NaN-propagating"),
    "FloorMod": ("remainder", NUMERIC, "a mod b with the divisor's sign (floored; x % 0 -> 0 for integers)"),
    "Mod": ("fmod", NUMERIC, "a mod b with the dividend's sign (truncated; x % 0 -> 0 for integers)"),
    "Equal": ("equal", NUMERIC | BOOL, "a == b, as boolean"),
    "NotEqual": ("not_equal", NUMERIC | BOOL, "a != b, as boolean"),
    "Greater": ("greater", NUMERIC | BOOL, "a > b, as boolean"),
    "GreaterEqual": ("greater_equal", NUMERIC | BOOL, "a >= b, as boolean"),
    "Less": ("less", NUMERIC | BOOL, "a < b, as boolean"),
    "LessEqual": ("less_equal", NUMERIC | BOOL, "a <= b, as boolean"),
    "LogicalAnd": ("logical_and", BOOL, "a and b, on boolean tensors"),
    "LogicalOr": ("logical_or", BOOL, "a or b, on boolean tensors"),
    "LogicalXor": ("logical_xor", BOOL, "a xor b, on boolean tensors"),
}


def _binary(name: str, op_name: str, allowed, what: str):
    op = ops.get(op_name)

    fast = hot_path(f"openvino {name}", op, allowed)

    def f(a, b, /, *, auto_broadcast="numpy", axis=-1, backend=None):
        if backend is None and type(auto_broadcast) is str and auto_broadcast in AUTO_BROADCASTS and \
                (result := fast(a, b, rule=auto_broadcast, axis=axis)) is not None:
            return result
        a, b = constrain(name, (a, b), allowed, _AB, spec=_SPEC)
        return apply(op, (a, b), rule=_auto_broadcast(auto_broadcast), axis=axis, backend=backend)

    f.__name__ = f.__qualname__ = name
    f.__doc__ = (f"OpenVINO {name}(a, b): {what}.\n\n"
                 "auto_broadcast: 'numpy' (default), 'pdpd' (b placed onto a at `axis`; -1 -> rank(a) - rank(b))\n"
                 "or 'none' (equal shapes).  a and b share one element type.\n"
                 "Raises BroadcastError when the shapes do not fit, TypeError for the types.")
    return f


for _name, _spec in _BINARY.items():
    globals()[_name] = _binary(_name, *_spec)


def Divide(a, b, /, *, auto_broadcast="numpy", axis=-1, m_pythondiv=True, backend=None):
    """OpenVINO Divide(a, b): a / b; integers floor (``m_pythondiv=True``, Divide-1's default) or
    truncate toward zero (``m_pythondiv=False``), and x / 0 -> 0; floats divide.

    auto_broadcast and axis as for Add; a and b share one element type.
    """
    a, b = constrain("Divide", (a, b), NUMERIC, _AB, spec=_SPEC)
    integer = _dt.kind(_dt.result_type((_dt.weak_type(a), _dt.weak_type(b)))) in "iu"
    op = "floor_divide" if integer and m_pythondiv else "div_trunc"
    return apply(ops.get(op), (a, b), rule=_auto_broadcast(auto_broadcast), axis=axis, backend=backend)


def Select(cond, then, else_, /, *, auto_broadcast="numpy", axis=-1, backend=None):
    """OpenVINO Select(cond, then, else): then where cond is true, else ``else_``.

    auto_broadcast 'numpy' broadcasts all three; 'pdpd' places cond and else onto
    then (at ``axis``), so the result has then's shape; 'none' needs equal shapes.
    cond is boolean; then and else share one element type.
    """
    (cond,) = constrain("Select", (cond,), BOOL, ("cond",), spec=_SPEC)
    then, else_ = constrain("Select", (then, else_), NUMERIC | BOOL, ("then", "else"), spec=_SPEC)
    return api.where(cond, then, else_, broadcast=_auto_broadcast(auto_broadcast), axis=axis, backend=backend)


def PRelu(data, slope, /, *, backend=None):
    """OpenVINO PRelu(data, slope): data where data >= 0, else slope * data; the result has data's shape.

    A 1-D slope whose length equals data's channel dim (dim 1) applies per channel;
    any other slope broadcasts to data with the numpy rule, one-directionally (a
    slope that would grow data raises BroadcastError; OpenVINO's CPU plugin
    computes something instead).
    """
    data, slope = constrain("PRelu", (data, slope), NUMERIC, ("data", "slope"), spec=_SPEC)
    op = ops.get("prelu")
    data_shape, slope_shape = tuple(getattr(data, "shape", ())), tuple(getattr(slope, "shape", ()))
    if len(slope_shape) == 1 and len(data_shape) >= 2 and slope_shape[0] == data_shape[1]:
        return apply(op, (data, slope), rule="pdpd", axis=1, backend=backend)
    return apply(op, (data, slope), rule="unidirectional", backend=backend)


def Broadcast(data, target_shape, axes_mapping=None, mode="numpy", *, axis=-1, backend=None):
    """OpenVINO Broadcast: a new tensor, ``data`` replicated to ``target_shape`` (any element type).

    mode 'numpy' (Broadcast-1/3: data broadcasts one-directionally to target_shape),
    'explicit' (Broadcast-1/3: ``axes_mapping`` gives the output axis of each data
    dim, strictly increasing), 'bidirectional' (Broadcast-3: the numpy rule of the
    two, so the result may be larger than target_shape) or 'pdpd' (Broadcast-3:
    data placed onto target_shape at ``axis``; -1 -> rank(target) - rank(data)).
    ``target_shape`` and ``axes_mapping`` are 1-D integer tensors or sequences.
    """
    mode = str(mode).lower()
    if mode not in BROADCAST_MODES:
        raise ValueError(f"mode={mode!r} is not a Broadcast mode; choose one of "
                         f"{', '.join(map(repr, BROADCAST_MODES))}")
    if hasattr(axes_mapping, "tolist"):
        axes_mapping = axes_mapping.tolist()
    return api.broadcast_to(data, target_shape, mode=mode, axes_mapping=axes_mapping, axis=axis, backend=backend)


# --- activations (issue #22) -----------------------------------------------------------------------------
#
# Tensor parameters (Selu's alpha and lambda: 1-D tensors of one element; HardSigmoid's alpha and beta,
# Swish's beta: 0-D tensors) have data's type and apply to every element, whatever data's rank: each
# is checked for its written shape (a Python number also does) and passed as one value (0-d).

#: OpenVINO name -> (registry op, what it computes); all take one tensor ``data`` of a float type
_UNARY_ACTIVATIONS = {
    "SoftPlus": ("softplus", "log(exp(x) + 1) (SoftPlus-4; its linear tail past the threshold is the "
                             "rounded value itself for float16/float32)"),
    "SoftSign": ("softsign", "x / (1 + |x|) (SoftSign-9)"),
    "Mish": ("mish", "x * tanh(log(exp(x) + 1)) (Mish-4)"),
    "HSwish": ("hard_swish", "x * min(max(x + 3, 0), 6) / 6 (HSwish-4)"),
    "HSigmoid": ("hsigmoid", "min(max(x + 3, 0), 6) / 6 (HSigmoid-5)"),
}


def _unary_activation(name: str, op_name: str, what: str):
    op = ops.get(op_name)

    fast = hot_path(f"openvino {name}", op, FLOATS)

    def f(data, /, *, backend=None):
        if backend is None and (result := fast(data)) is not None:
            return result
        (data,) = constrain(name, (data,), FLOATS, ("data",), spec=_SPEC)
        return apply(op, (data,), backend=backend)

    f.__name__ = f.__qualname__ = name
    f.__doc__ = f"OpenVINO {name}(data): {what}, elementwise; data of a floating-point type."
    return f


for _name, _spec in _UNARY_ACTIVATIONS.items():
    globals()[_name] = _unary_activation(_name, *_spec)


#: OpenVINO name -> registry op of the math functions of #22 (Sin-1 ... Cosh-1, Asinh-3 ... Atanh-3), on
#: floating-point data (the specification's integer types, whose results it leaves to each operator's
#: own rounding, are a TypeError)
_MATH = {"Sin": "sin", "Cos": "cos", "Tan": "tan", "Asin": "arcsin", "Acos": "arccos", "Atan": "arctan",
         "Sinh": "sinh", "Cosh": "cosh", "Asinh": "arcsinh", "Acosh": "arccosh", "Atanh": "arctanh"}

for _name, _op_name in _MATH.items():
    globals()[_name] = _unary_activation(_name, _op_name, ops.get(_op_name).doc)


def _scalar_input(op: str, name: str, value, shape: tuple):
    """A parameter input of written ``shape`` (() or (1,)) as one value (a 0-d array or the number)."""
    got = tuple(getattr(value, "shape", ()))
    if got != shape and not (_dt.is_python_scalar(value) and shape == (1,)):
        what = "a 0-D tensor (scalar)" if shape == () else "a 1-D tensor with one element"
        raise ValueError(f"{op}: input {name!r} must be {what}, got shape {got}")
    return value.reshape(()) if got else value


def Elu(data, /, *, alpha, backend=None):
    """OpenVINO Elu-1(data, alpha): x if x > 0 else alpha * (exp(x) - 1); ``alpha`` a float attribute."""
    (data,) = constrain("Elu", (data,), FLOATS, ("data",), spec=_SPEC)
    return api.elu(data, float_attribute("Elu", "alpha", alpha), backend=backend)


def Gelu(data, /, *, approximation_mode="erf", backend=None):
    """OpenVINO Gelu-7(data, approximation_mode='erf' | 'tanh'): x * Phi(x) by erf, or its tanh
    approximation x / 2 * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 x^3)))."""
    mode = str(approximation_mode).lower()
    if mode not in ("erf", "tanh"):
        raise ValueError(f"Gelu: approximation_mode must be 'erf' or 'tanh', got {approximation_mode!r}")
    (data,) = constrain("Gelu", (data,), FLOATS, ("data",), spec=_SPEC)
    return api.gelu(data, "none" if mode == "erf" else "tanh", backend=backend)


def Swish(data, beta=None, /, *, backend=None):
    """OpenVINO Swish-4(data, beta): x / (1 + exp(-beta * x)); ``beta`` an optional 0-D tensor of
    data's type (1.0 when not given)."""
    data, beta = constrain("Swish", (data, 1.0 if beta is None else beta), FLOATS, ("data", "beta"), spec=_SPEC)
    return api.swish(data, _scalar_input("Swish", "beta", beta, ()), backend=backend)


def Selu(data, alpha, lambda_, /, *, backend=None):
    """OpenVINO Selu-1(data, alpha, lambda): lambda * (x if x > 0 else alpha * (exp(x) - 1)); alpha and
    lambda are 1-D tensors of one element, of data's type."""
    data, alpha, lambda_ = constrain("Selu", (data, alpha, lambda_), FLOATS, ("data", "alpha", "lambda"),
                                     spec=_SPEC)
    return api.selu(data, _scalar_input("Selu", "alpha", alpha, (1,)),
                    _scalar_input("Selu", "lambda", lambda_, (1,)), backend=backend)


def HardSigmoid(data, alpha, beta, /, *, backend=None):
    """OpenVINO HardSigmoid-1(data, alpha, beta): max(0, min(1, alpha * x + beta)); alpha and beta are
    0-D tensors of data's type."""
    data, alpha, beta = constrain("HardSigmoid", (data, alpha, beta), FLOATS, ("data", "alpha", "beta"),
                                  spec=_SPEC)
    return api.hard_sigmoid(data, _scalar_input("HardSigmoid", "alpha", alpha, ()),
                            _scalar_input("HardSigmoid", "beta", beta, ()), backend=backend)


def Clamp(data, /, *, min, max, backend=None):  # noqa: A002 - OpenVINO's attribute names
    """OpenVINO Clamp-1(data, min, max): min(max(x, min), max), any numeric type.

    ``min`` and ``max`` are float attributes with min <= max (a NaN bound, or min > max, is a
    ``ValueError``, as OpenVINO refuses such a node); +-inf are allowed.  Floats keep NaN.  For integer
    data ``min`` is rounded up and ``max`` down (the spec's ceil / floor), each then saturated to the
    data type's range, as OpenVINO's reference evaluation does (-inf: the type's lowest value)."""
    lo, hi = float_attribute("Clamp", "min", min), float_attribute("Clamp", "max", max)
    if not lo <= hi:
        raise ValueError(f"Clamp: attributes 'min' and 'max' must be numbers with min <= max (OpenVINO refuses "
                         f"other bounds), got min={lo!r}, max={hi!r}")
    (data,) = constrain("Clamp", (data,), NUMERIC, ("data",), spec=_SPEC)
    dt = _dt.dtype_of(data)
    if _dt.kind(dt) in "iu":
        lo, hi = _integer_bound(dt, lo, math.ceil), _integer_bound(dt, hi, math.floor)
    elif _dt.kind(dt) == "f":
        lo, hi = _dt.in_float_type(lo, dt), _dt.in_float_type(hi, dt)
    return api.clip(data, lo, hi, backend=backend)


def _integer_bound(dt, bound: float, rounded) -> int:
    """A Clamp bound for integer data of ``dt``: ``rounded`` (ceil / floor), within dt's range."""
    low, high = _dt.int_range(dt)
    if math.isinf(bound):
        return low if bound < 0 else high
    return min(max(rounded(bound), low), high)


#: every operator this module implements, by OpenVINO name
OPERATORS = {name: globals()[name] for name in (*_BINARY, "Divide", "Select", "PRelu", "Broadcast",
                                                 *_UNARY_ACTIVATIONS, "Elu", "Gelu", "Swish", "Selu", "HardSigmoid",
                                                 "Clamp", *_MATH)}

__all__ = sorted(OPERATORS) + ["OPERATORS", "AUTO_BROADCASTS", "BROADCAST_MODES"]


def __dir__():
    """The public API only: the operators and the tables of their options."""
    return sorted(__all__)
