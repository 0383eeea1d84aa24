"""The NumPy/CuPy-style functions, generated from the op registry.

Every binary op of ``ops.BINARY`` becomes ``f(x1, x2, /, out=None, *,
broadcast="numpy", axis=-1, dtype=None, backend=None)``, every unary op of ``ops.UNARY``
``f(x, /, out=None, *, dtype=None, backend=None)``; ``cast``, ``clip``, ``where``, ``prelu``,
``broadcast_to`` and ``expand`` are written out.  Every activation of ``ops.ACTIVATIONS`` becomes
``f(x, /, *params, out=None, dtype=None, backend=None)`` with its parameters (defaults: ONNX's) as
operands broadcast to x (``unidirectional``); ``gelu`` takes ``approximate='none' | 'tanh'``.
"""

from __future__ import annotations

import functools
import math
import operator

import numpy as np

from . import backends, compiled_calls, ops
from . import dtypes as _dt
from .dtypes import is_python_scalar
from .dispatch import apply
from .hot_calls import OptionTables
from .rules import check_options, check_shape

#: ``broadcast=`` values of the elementwise functions; ``mode=`` values of ``broadcast_to``
BROADCASTS = ("numpy", "pdpd", "none")
MODES = {"numpy": "numpy_to", "bidirectional": "bidirectional", "explicit": "explicit", "pdpd": "pdpd"}


def _rule(broadcast: str) -> str:
    if broadcast not in BROADCASTS:
        raise ValueError(f"broadcast={broadcast!r} is not a rule for elementwise ops; choose one of "
                         f"{', '.join(map(repr, BROADCASTS))}")
    return broadcast


def _table(tables: OptionTables, options):
    """The compiled table of ``options`` (None for an unhashable option: the general path says what
    is wrong with it)."""
    try:
        return tables[options]
    except TypeError:
        return None


def _binary(op: ops.Op):
    tables = OptionTables(op.name)
    by_rule = {rule: tables[rule, -1, None, None] for rule in BROADCASTS}   # the default options of each rule

    def f(x1, x2, /, out=None, *, broadcast="numpy", axis=-1, dtype=None, backend=None):
        # the compiled hot path first, with the table of this option set (an int axis: a bool one is
        # the general path's error; backend= naming the default backend is the default)
        if type(axis) is int and axis == -1 and dtype is None and (backend is None or backend == backends.DEFAULT_CPU):
            table = by_rule.get(broadcast) if type(broadcast) is str else None
        else:
            table = _table(tables, (broadcast, axis, dtype, backend)) if type(axis) is int else None
        if table is not None:
            result = compiled_calls.call(table, out, x1, x2)
            if result is not None:
                return result
        return apply(op, (x1, x2), rule=_rule(broadcast), axis=axis, out=out, dtype=dtype, backend=backend,
                     table=table)

    f.__name__ = f.__qualname__ = op.name
    f.__doc__ = (f"{op.doc}, elementwise with broadcasting.\n\n"
                 "broadcast: 'numpy' (default; ONNX multidirectional), 'pdpd' (x2 placed onto x1 at `axis`,\n"
                 "    default -1 -> rank(x1) - rank(x2)) or 'none' (shapes must be equal).\n"
                 "out: array to write into (same_kind casting). dtype: the output (loop) dtype.\n"
                 "backend: 'numpy' | 'numba' | 'cuda' to force one; by default where the inputs live.\n"
                 "Raises BroadcastError (a ValueError) when the shapes do not fit the rule, TypeError\n"
                 "for a dtype combination NumPy 2 rejects.")
    def declined(out, x1, x2):   # the default call the compiled path did not answer: f's general path
        return apply(op, (x1, x2), rule="numpy", axis=-1, out=out, dtype=None, backend=None, table=by_rule["numpy"])

    # one keyword option C takes: the table f would pick for it
    options = {("broadcast", rule): table for rule, table in by_rule.items()}
    options["backend", backends.DEFAULT_CPU] = by_rule["numpy"]
    return compiled_calls.function(f, declined, by_rule["numpy"], 2, options=options)


#: the binary ops with a NumPy-style function (div_trunc is ONNX/OpenVINO's; prelu is written out)
NUMPY_STYLE_BINARY = tuple(n for n in ops.BINARY if n not in ("div_trunc", "prelu")
                           and "activation" not in ops.get(n).tags)

for _name in NUMPY_STYLE_BINARY:
    globals()[_name] = _binary(ops.get(_name))


def _unary(op: ops.Op):
    tables = OptionTables(op.name)
    default = tables[None, None]

    def f(x, /, out=None, *, dtype=None, backend=None):
        if dtype is None and (backend is None or backend == backends.DEFAULT_CPU):
            table = default
        else:
            table = _table(tables, (dtype, backend))
        if table is not None:  # the compiled hot path first
            result = compiled_calls.call(table, out, x)
            if result is not None:
                return result
        return apply(op, (x,), out=out, dtype=dtype, backend=backend, table=table)

    f.__name__ = f.__qualname__ = op.name
    f.__doc__ = (f"{op.doc}, elementwise.\n\n"
                 "out: array to write into (same_kind casting). dtype: the output (loop) dtype.\n"
                 "backend: 'numpy' | 'numba' | 'cuda' to force one; by default where the input lives.\n"
                 "Raises TypeError for a dtype the op does not accept (as NumPy 2's ufunc).")
    def declined(out, x):   # the default call the compiled path did not answer: f's general path
        return apply(op, (x,), out=out, dtype=None, backend=None, table=default)

    return compiled_calls.function(f, declined, default, 1, options={("backend", backends.DEFAULT_CPU): default})


#: the unary ops with a NumPy-style function of that name (cast is written out)
NUMPY_STYLE_UNARY = tuple(n for n in ops.UNARY if n != "cast" and "activation" not in ops.get(n).tags)

for _name in NUMPY_STYLE_UNARY:
    globals()[_name] = _unary(ops.get(_name))


_ISINF = globals()["isinf"]  # the generated function: every infinity


def isinf(x, /, out=None, *, detect_positive=True, detect_negative=True, dtype=None, backend=None):
    """Whether each element of ``x`` is an infinity it detects (a bool array): +inf with
    ``detect_positive``, -inf with ``detect_negative`` (both by default: NumPy's ``isinf``; one:
    ``np.isposinf`` / ``np.isneginf``; ONNX IsInf's attributes).  Complex: either part infinite,
    with both flags only (one sign alone is ambiguous there: TypeError, as NumPy's).

    out / dtype / backend: as every function.  Raises TypeError for a flag that is not a bool."""
    if detect_positive is True and detect_negative is True:   # the default, first: NumPy's isinf
        return _ISINF(x, out, dtype=dtype, backend=backend)
    positive, negative = _flag("detect_positive", detect_positive), _flag("detect_negative", detect_negative)
    if positive and negative:
        return _ISINF(x, out, dtype=dtype, backend=backend)
    if not (positive or negative):   # detects nothing: false everywhere, x's shape and checks
        return _LOGICAL_AND(_ISINF(x, dtype=dtype, backend=backend), False, out, backend=backend)
    if _dt.kind(_dt.dtype_of(x)) == "c":
        raise TypeError(f"isinf: detect_{'positive' if positive else 'negative'} alone is not defined for complex "
                        f"input ({_dt.dtype_of(x)}): which part's sign counts is ambiguous, as in np.isposinf")
    # x == +inf / x == -inf: one comparison, exact in every type (integers and bools: never)
    return _EQUAL(x, math.inf if positive else -math.inf, out, dtype=dtype, backend=backend)


_EQUAL, _LOGICAL_AND = globals()["equal"], globals()["logical_and"]


def _flag(name: str, value) -> bool:
    """``value`` of a bool flag: a Python or NumPy bool (an int or None is a TypeError, as NumPy's)."""
    if type(value) is bool or type(value) is np.bool_:
        return bool(value)
    raise TypeError(f"isinf: {name} must be a bool, got {type(value).__name__} {value!r}")


# The Array API's spellings (acos, atan2, pow, bitwise_invert, ...): the same function objects (#22)
for _alias, _name in ops.ARRAY_API_ALIASES.items():
    globals()[_alias] = globals()[_name]


def cast(x, dtype, /, out=None, *, backend=None):
    """``x`` converted to ``dtype`` elementwise (``x.astype(dtype)``, casting='unsafe'; ONNX Cast).

    A float that is nan or out of the integer dtype's range converts to an undefined value, as
    in C, NumPy (which warns) and ONNX."""
    if dtype is None:
        raise TypeError("cast: dtype is required, e.g. cast(x, numpy.float32)")
    try:   # one table per target dtype as given (a type, a dtype, a str)
        table = _CAST_BY_DTYPE[dtype] if backend is None else _CAST_TABLES[dtype, backend]
    except TypeError:  # an unhashable dtype= (the general path says what is wrong with it)
        table = None
    if table is not None:  # the compiled hot path first
        result = compiled_calls.call(table, out, x)
        if result is not None:
            return result
    return _cast_general(out, x, dtype, backend, table)


def _cast_general(out, x, dtype, backend=None, table=None):
    if is_python_scalar(x):   # as NumPy holds it, then converted: np.asarray(x).astype(dtype)
        x = np.asarray(x)
    return apply(_CAST, (x,), out=out, dtype=dtype, backend=backend, table=table)


_CAST = ops.get("cast")
_CAST_TABLES = OptionTables("cast")      # by (dtype, backend)
_CAST_BY_DTYPE = OptionTables("cast")    # backend=None's, by dtype: C picks from it (``keyed``)
# the default call, cast(x, dtype[, out]), runs from C with the table of its dtype once the general
# path has made one (made on first use: every spelling of a dtype, a type, a str, has its own)
cast = compiled_calls.function(
    cast, lambda out, x, dtype: _cast_general(out, x, dtype, None, _CAST_BY_DTYPE[dtype]),
    _CAST_BY_DTYPE, 1, keyed=_CAST_BY_DTYPE)


def clip(x, /, min=None, max=None, out=None, *, broadcast="numpy", backend=None):  # noqa: A002 - NumPy's names
    """``minimum(maximum(x, min), max)``: NumPy 2's ``clip`` (nan in x stays nan, a NaN bound gives
    NaN, min > max gives max); a bound None is no bound, otherwise it broadcasts with ``x`` under
    ``broadcast``.  As NumPy's: on an integer ``x``, a Python int bound at or beyond the end of x's
    dtype on its own side (``min <= iinfo.min``, ``max >= iinfo.max``) clips nothing, one beyond the
    other end is an ``OverflowError``; with two bounds the dtype is that of all three together.
    ``min`` and ``max`` may be passed by name (NumPy 2 and the Array API's ``clip(x, /, min, max)``)."""
    rule = _rule(broadcast)
    dt = getattr(x, "dtype", None)
    if dt is None:            # NumPy clips np.asarray(x)
        x = np.asarray(x)
        dt = x.dtype
    kept = _kept_by(dt)
    lo, hi = (min, max) if type(min) in kept and type(max) in kept else _clip_bounds(dt, min, max)
    if lo is None and hi is None:
        return cast(x, dt, out=out, backend=backend)
    if hi is None:
        return _MAXIMUM(x, lo, out, broadcast=rule, backend=backend)
    y = x if lo is None else _MAXIMUM(x, lo, broadcast=rule, backend=backend)
    return _MINIMUM(y, hi, out, broadcast=rule, backend=backend)


_MAXIMUM, _MINIMUM = globals()["maximum"], globals()["minimum"]


def _clip_bounds(dt: np.dtype, lo, hi) -> tuple:
    """``clip``'s bounds as NumPy 2 reads them (``numpy/_core/_methods.py: _clip``), for ``x`` of ``dt``.

    A Python int at or beyond the end of an integer dtype on its own side is no bound.  With two
    bounds NumPy calls one ufunc over all three, so a Python scalar bound that ``dt`` does not hold
    (a float bound of integer data, next to a strong bound of a wider type) is converted to the
    three's common dtype first: ``minimum(maximum(...))`` then computes what that ufunc computes.
    A Python int must fit the dtype it computes in (NumPy's ``OverflowError``).
    """
    if dt.kind in "iu" and (type(lo) is int or type(hi) is int):
        low, high = _dt.int_range(dt)
        lo = None if type(lo) is int and lo <= low else lo
        hi = None if type(hi) is int and hi >= high else hi
    held = _held_by(dt)
    if type(lo) in held and type(hi) in held:   # computed in x's dtype
        return _fitting(dt, lo, "min"), _fitting(dt, hi, "max")
    if lo is None or hi is None or not (is_python_scalar(lo) or is_python_scalar(hi)):
        return lo, hi                     # one operand of x's, or strong bounds: as NumPy's one ufunc
    lo, hi = (b if is_python_scalar(b) or hasattr(b, "dtype") else np.asarray(b) for b in (lo, hi))
    common = _dt.result_type((dt, _dt.weak_type(lo), _dt.weak_type(hi)))
    return tuple(_clip_scalar(dt, common, b, name) if is_python_scalar(b) else b
                 for b, name in ((lo, "min"), (hi, "max")))


@functools.cache
def _kept_by(dt: np.dtype) -> tuple:
    """The bound types ``clip`` passes on as they are for ``x`` of ``dt``: those it holds, but a Python
    int for integer ``x`` (its range decides)."""
    return tuple(t for t in _held_by(dt) if not (t is int and dt.kind in "iu"))


@functools.cache
def _held_by(dt: np.dtype) -> tuple:
    """The Python scalar types whose weak values an array of ``dt`` computes in ``dt`` (NEP 50), and
    None's type (no bound)."""
    kinds = {"b": (bool,), "i": (bool, int), "u": (bool, int), "f": (bool, int, float),
             "c": (bool, int, float, complex)}
    return (type(None), *kinds.get(_dt.kind(dt), ()))


def _fitting(dt: np.dtype, bound, name: str):
    """``bound``, checked: a Python int computed in integer dtype ``dt`` must fit it."""
    if type(bound) is int and dt.kind in "iu" and not _dt.fits(bound, dt):
        raise OverflowError(f"clip: {name}={_shown(bound)} is out of bounds for {dt} (NumPy 2 raises here too); "
                            f"convert x to a wider dtype first")
    return bound


def _shown(n: int) -> str:
    """A Python int for a message: written out, or its size when it is long."""
    digits = str(n).lstrip("-")   # (abs here is gpubcast's)
    return str(n) if len(digits) <= 30 else f"<a Python int of {len(digits)} digits>"


def _clip_scalar(dt: np.dtype, common: np.dtype, bound, name: str):
    """Python scalar ``bound`` of a clip of ``x`` of ``dt``, in the bounds' ``common`` dtype: as it is where
    ``minimum`` / ``maximum`` with x compute in ``common`` anyway, else a 0-d array of ``common``."""
    bound = _fitting(common, bound, name)
    if _dt.result_type((dt, type(bound))) == common:
        return bound
    try:
        return np.asarray(bound, dtype=common)
    except OverflowError as e:    # a Python int no float holds
        raise OverflowError(f"clip: {name}={_shown(bound)}: {e}") from None


def where(condition, x, y, /, out=None, *, broadcast="numpy", axis=-1, backend=None):
    """``x`` where ``condition`` is true, else ``y``, with broadcasting.

    With broadcast='pdpd' (OpenVINO Select), ``x`` is the target: ``condition``
    and ``y`` are each placed onto it at ``axis``.
    """
    if broadcast == "numpy" and backend is None:  # the compiled hot path first
        table = _WHERE_TABLE
    else:
        table = _table(_WHERE_TABLES, (broadcast, axis, backend)) if type(axis) is int else None
    if table is not None:
        result = compiled_calls.call(table, out, condition, x, y)
        if result is not None:
            return result
    return apply(_WHERE, (condition, x, y), rule=_rule(broadcast), axis=axis, out=out, backend=backend, target=1,
                 table=table)


_WHERE = ops.get("where")
_WHERE_TABLE, _WHERE_TABLES = compiled_calls.table_for("where"), OptionTables("where")


def prelu(x, slope, /, out=None, *, backend=None):
    """``x`` where ``x >= 0``, else ``slope * x``; ``slope`` broadcasts unidirectionally to ``x``
    (ONNX PRelu: the result always has ``x``'s shape)."""
    table = _table(_PRELU_TABLES, backend)
    if table is not None:
        result = compiled_calls.call(table, out, x, slope)
        if result is not None:
            return result
    return apply(_PRELU, (x, slope), rule="unidirectional", out=out, backend=backend, table=table)


_PRELU, _PRELU_TABLES = ops.get("prelu"), OptionTables("prelu")


def _target_shape(shape) -> tuple[int, ...]:
    if hasattr(shape, "tolist"):
        shape = shape.tolist()
    if isinstance(shape, int) or hasattr(shape, "__index__"):
        shape = (operator.index(shape),)
    return check_shape(shape, "target shape")


def _data(x):
    """The data operand of a data movement: a Python scalar as NumPy holds it (np.broadcast_to's
    answer: an int beyond int64/uint64 is an object array)."""
    return np.asarray(x) if is_python_scalar(x) else x


def broadcast_to(x, shape, *, mode="numpy", axes_mapping=None, axis=-1, out=None, backend=None):
    """A new array: ``x`` broadcast to ``shape`` (any dtype; strings and objects on the CPU).

    mode: 'numpy' (OpenVINO Broadcast-1 NUMPY: x broadcasts one-directionally to
    ``shape``), 'bidirectional' (ONNX Expand / Broadcast-3: the result may be
    larger than ``shape``), 'explicit' (``axes_mapping``: the output axis of each
    dim of x, strictly increasing) or 'pdpd' (x placed onto ``shape`` at ``axis``).
    """
    if not isinstance(mode, str) or mode not in MODES:
        raise ValueError(f"mode={mode!r} is not a broadcast_to mode; choose one of {', '.join(map(repr, MODES))}")
    if mode != "explicit" and axes_mapping is not None:
        raise ValueError(f"axes_mapping is only used with mode='explicit', not mode={mode!r}")
    rule, shape = MODES[mode], _target_shape(shape)
    if axes_mapping is not None or type(axis) is not int:   # as the planner holds them (a tuple of ints)
        rule, axis, axes_mapping = check_options(rule, axis, axes_mapping)
    return _move(x, shape, rule, axis, axes_mapping, out, backend)


def expand(x, shape, *, out=None, backend=None):
    """ONNX Expand: ``x`` broadcast bidirectionally with ``shape`` (numpy rule of the two;
    the result may differ from ``shape`` when it holds 1s or is shorter than x's rank)."""
    return _move(x, _target_shape(shape), "bidirectional", -1, None, out, backend)


def _move(x, shape, rule, axis, axes_mapping, out, backend):
    """``copy`` of ``x`` onto target ``shape`` under ``rule`` (options validated), the compiled hot path
    first: one table per (rule, shape, axis, axes_mapping, backend)."""
    table = _table(_MOVE_TABLES, (rule, shape, axis, axes_mapping, backend))
    if table is not None:
        result = compiled_calls.call(table, out, x)
        if result is not None:
            return result
    return apply(_COPY, (_data(x),), rule=rule, axis=axis, axes_mapping=axes_mapping, out=out, backend=backend,
                 shape=shape, table=table)


_COPY, _MOVE_TABLES = ops.get("copy"), OptionTables("broadcast_to")


# --- activations (issue #22): x and its parameters, each a Python scalar or a tensor broadcast to x ---

def _activation(op: ops.Op, params):
    """``f(x, p1=default1, ..., /, out=None, *, dtype=None, backend=None)`` over ``op``'s operands
    (x, p1, ...): the parameters broadcast to x under the ``unidirectional`` rule (the result has
    x's shape; a parameter that would grow it is a BroadcastError)."""
    names = [name for name, _ in params]
    defaults = [default for _, default in params]

    def f(x, /, *args, out=None, dtype=None, backend=None, **kwargs):
        if len(args) > len(names):
            raise TypeError(f"{op.name}() takes x and at most {len(names)} parameter(s) "
                            f"({', '.join(names) or 'none'}), got {1 + len(args)} positional arguments")
        values = list(args) + defaults[len(args):]
        for k, name in enumerate(names):
            if name in kwargs:
                if k < len(args):
                    raise TypeError(f"{op.name}() got multiple values for argument {name!r}")
                values[k] = kwargs.pop(name)
        if kwargs:
            raise TypeError(f"{op.name}() got an unexpected keyword argument {next(iter(kwargs))!r}")
        table = _table(tables, (dtype, backend))
        if table is not None and len(values) <= 2:   # the compiled hot path first (up to 3 operands)
            result = compiled_calls.call(table, out, x, *values)
            if result is not None:
                return result
        return apply(op, (x, *values), rule=rule, out=out, dtype=dtype, backend=backend, table=table)

    rule, tables = "unidirectional" if names else "numpy", OptionTables(op.name)

    signature = ", ".join(["x", *(f"{n}={d!r}" for n, d in params), "/"]) if params else "x, /"
    f.__name__ = f.__qualname__ = op.name
    f.__doc__ = (f"{op.name}({signature}, out=None, *, dtype=None, backend=None): {op.doc}, elementwise.\n\n"
                 + ("Each parameter is a Python scalar (it takes x's type) or a tensor broadcast to x\n"
                    "(unidirectional: the result has x's shape); the parameters may also be passed by name.\n"
                    if params else "")
                 + "Float types compute in float64 and round once.  out / dtype / backend: as every function.\n"
                 "Raises TypeError for non-float inputs of one common type (e.g. integer x with integer\n"
                 "parameters), BroadcastError for a parameter that does not fit x.")
    if len(defaults) > 2:   # more operands than the compiled hot path takes
        return f

    default = tables[None, None]

    def declined(out, x, *values):   # the default call the compiled path did not answer: f's general path
        return apply(op, (x, *values), rule=rule, out=out, dtype=None, backend=None, table=default)

    return compiled_calls.function(f, declined, default, 1, extra=tuple(defaults), out="keyword",
                                   options={("backend", backends.DEFAULT_CPU): default})


#: the activations with a NumPy-style function (``gelu`` is written out: its ``approximate=``)
ACTIVATIONS = tuple(n for n in ops.ACTIVATIONS if n != "gelu_tanh")

for _name in ACTIVATIONS:
    if _name != "gelu":
        globals()[_name] = _activation(ops.get(_name), ops.ACTIVATIONS[_name][1])


def gelu(x, /, approximate="none", out=None, *, dtype=None, backend=None):
    """The Gaussian error linear unit: ``x / 2 * (1 + erf(x / sqrt(2)))`` (``approximate='none'``)
    or ``x / 2 * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 x^3)))`` (``'tanh'``), as ONNX Gelu and
    OpenVINO Gelu-7 (``approximation_mode`` ERF / TANH); float types compute in float64 and
    round once."""
    if isinstance(approximate, bytes):
        approximate = approximate.decode()
    if approximate not in ("none", "tanh"):
        raise ValueError(f"gelu: approximate must be 'none' or 'tanh', got {approximate!r}")
    op = ops.get("gelu" if approximate == "none" else "gelu_tanh")
    table = _table(_GELU_TABLES, (op.name, dtype, backend))
    if table is not None:  # the compiled hot path first
        result = compiled_calls.call(table, out, x)
        if result is not None:
            return result
    return apply(op, (x,), out=out, dtype=dtype, backend=backend, table=table)


_GELU_TABLES = OptionTables("gelu")
_GELU_DEFAULT = _GELU_TABLES["gelu", None, None]
gelu = compiled_calls.function(
    gelu, lambda out, x: apply(ops.get("gelu"), (x,), out=out, dtype=None, backend=None, table=_GELU_DEFAULT),
    _GELU_DEFAULT, 1, out="keyword")


#: the functions this module defines (``from gpubcast.api import *``: these and nothing else)
__all__ = ["broadcast_to", "cast", "clip", "expand", "prelu", "where", *NUMPY_STYLE_BINARY, *NUMPY_STYLE_UNARY,
           *ACTIVATIONS, *ops.ARRAY_API_ALIASES]
