"""ONNX type constraints: which tensor types an operator accepts, and the check that enforces them.

ONNX binds each type parameter (``T``) once per node: every input it constrains
must have the same element type, and that type must be in the parameter's list.
``constrain`` checks the arrays' dtypes and raises ``TypeError`` otherwise.
Python scalars are weak (NumPy 2): they take the arrays' type and never count
as a second type.  String tensors may be object, ``str_`` or ``StringDType``
arrays; all of them are ONNX's ``string``.

The lists are those of the latest operator versions (ONNX 1.23, opset 28);
each includes every type the operator's earlier versions (opset >= 7) allow.
``gpubcast.openvino`` enforces OpenVINO's same-type rule with the same check
(``spec="OpenVINO"``).
"""

from __future__ import annotations

import functools

import numpy as np

from .. import backends, compiled_calls
from ..hot_calls import OptionTables
from ..dispatch import apply
from ..dtypes import bfloat16, is_python_scalar, result_type, weak_type

INTS = frozenset({"int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64"})
FLOATS = frozenset({"float16", "float", "double", "bfloat16"})
NUMERIC = INTS | FLOATS
SIGNED = frozenset({"int8", "int16", "int32", "int64"})
BOOL = frozenset({"bool"})
STRING = frozenset({"string"})
ANY = NUMERIC | BOOL | STRING | frozenset({"complex64", "complex128"})
#: Pow's base, PRelu, Gemm: the numeric types without 8/16-bit integers (Pow: without unsigned too)
POW_BASE = frozenset({"int32", "int64"}) | FLOATS
PRELU_GEMM = frozenset({"int32", "int64", "uint32", "uint64"}) | FLOATS

_ONNX_NAMES = {"float32": "float", "float64": "double"}


def type_name(dtype) -> str:
    """ONNX's name for a dtype: float32 -> 'float', float64 -> 'double', any string dtype -> 'string'."""
    if type(dtype) in _DTYPE_CLASSES:   # a dtype instance (the per-call case): its name, cached
        try:
            return _type_name(dtype)
        except TypeError:  # an unhashable dtype (structured with unhashable metadata): named afresh
            pass
    return _type_name.__wrapped__(dtype)


_DTYPE_CLASSES = frozenset(type(np.dtype(t)) for t in "?bhilqBHILQefdgFDGSUOV")


@functools.lru_cache(maxsize=256)
def _type_name(dtype) -> str:
    dt = np.dtype(dtype)
    if dt.kind in "OUST":
        return "string"
    if dt == bfloat16:
        return "bfloat16"
    return _ONNX_NAMES.get(dt.name, dt.name)


def operand(x):
    """``x`` as an operand: Python scalars and arrays (NumPy, CuPy, ...) as they are, anything else
    (a list, a str) as a NumPy array."""
    if is_python_scalar(x) or hasattr(x, "dtype"):
        return x
    return np.asarray(x)


def constrain(op: str, inputs, allowed: frozenset, names, param: str = "T", spec: str = "ONNX") -> tuple:
    """Enforce type constraint ``param`` of ``spec``'s operator ``op`` on ``inputs`` (named ``names``).

    Returns the inputs as operands (see ``operand``).  Raises ``TypeError`` when
    two arrays differ in type or their type is not in ``allowed``.
    """
    inputs = tuple(operand(x) for x in inputs)
    arrays = [(name, x) for name, x in zip(names, inputs) if not is_python_scalar(x)]
    if arrays:
        types = [type_name(x.dtype) for _, x in arrays]
        if len(set(types)) > 1:
            bound = ", ".join(f"{name} is tensor({t})" for (name, _), t in zip(arrays, types))
            raise TypeError(f"{op}: type constraint {param} needs one element type for "
                            f"{', '.join(name for name, _ in arrays)}, but {bound}; cast one of them first")
        found = types[0]
    else:
        found = type_name(result_type(tuple(weak_type(x) for x in inputs)))
    if found not in allowed:
        raise TypeError(f"{op}: tensor({found}) input ({', '.join(names)}) is not allowed by type "
                        f"constraint {param}; {spec} allows {', '.join(f'tensor({t})' for t in sorted(allowed))}")
    return inputs


#: the dtypes a front end's hot path may see (``hot_path``)
_DTYPES = (*(np.dtype(t) for t in "?bhilqBHILQefdFD"), bfloat16)


def hot_path(label: str, op, allowed: frozenset):
    """A front-end function's hot path: ``run(*arrays, rule="numpy", axis=-1)`` computes ``op`` over
    exact NumPy arrays (or arrays of a CUDA backend: the ONNX backend on "CUDA") of one type and one
    dtype that type constraint ``allowed`` names (broadcast under ``rule``, a rule name as the planner
    spells it, on the default backend for that array type) through the compiled hot path
    (``gpubcast.compiled_calls``: a table per rule and axis), or ``apply`` keeping its entry; None for
    any other operands or options (the function then checks them and takes its general path)."""
    tables = OptionTables(label)
    default = tables["numpy", -1]
    accepted = frozenset(dt for dt in _DTYPES if type_name(dt) in allowed)
    nd, devices = np.ndarray, backends.DEVICE_ARRAY_TYPES

    def run(*xs, rule="numpy", axis=-1):
        if rule == "numpy" and axis == -1 and type(axis) is int:
            table = default
        elif type(axis) is int and type(rule) is str:   # (a bool axis: the general path's error)
            table = tables[rule, axis]
        else:
            return None
        # an entry exists only for the dtypes of a call that passed the checks below: C first
        result = compiled_calls.call(table, None, *xs)
        if result is not None:
            return result
        first = xs[0]
        kind = type(first)
        if kind is not nd and kind not in devices or first.dtype not in accepted:
            return None
        for x in xs[1:]:
            if type(x) is not kind or x.dtype != first.dtype:
                return None
        return apply(op, xs, rule=rule, axis=axis, table=table)
    run.default = default   # the table of the default options (compiled_calls.function's)
    return run
