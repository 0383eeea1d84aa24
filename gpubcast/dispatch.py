"""One path from a call to a backend, shared by every front end.

    types -> op.resolve -> cast inputs -> plan (cached) -> out -> backend.execute

Front ends (the NumPy-style API, gpubcast.onnx, gpubcast.openvino) only
translate their arguments into ``apply``.

Deferred inputs: a module whose values stand for arrays computed elsewhere (Dask arrays:
``dask_arrays``; values traced by ``gpubcast.fuse``: ``fusion``) registers ``defer(claims,
handler)``; a call with such an input (or ``out=``) goes to ``handler(op, inputs, **options)``
instead.  Those modules import this one, never the other way round.

Hot path: a backend may offer ``prepare(op, plan, loop dtypes, out dtype)`` returning a runner
``f(inputs, out) -> out`` (or None from the runner: take the general path).  When a call on plain
NumPy arrays that needs no casts or copies is seen a second time, ``apply`` keeps that runner in
``HOT`` (``hot_calls``) under the call's signature (op, dtypes, shapes, strides, out, options);
later calls with the same signature go straight to it.
"""

from __future__ import annotations

import numpy as np

from . import backends, compiled_calls
from .compiled_calls import Cast
from . import dtypes as _dt
from .cuda import torch_tensors
from .hot_calls import HotCalls
from .ops import Op
from .plan import overlaps_itself as _overlaps_itself, plan as make_plan, take


def apply(op: Op, inputs, *, rule: str = "numpy", axis: int = -1, axes_mapping=None, out=None,
          dtype=None, backend: str | None = None, target: int = 0, shape=None, table=None):
    """Run ``op`` over ``inputs`` broadcast under ``rule``; return the output array.

    ``target`` is the operand PDPD places the others onto (operand order of
    ``inputs`` is kept for the op).  ``shape`` is the target shape of a data
    movement op (``copy``), planned as the last operand (the first for PDPD).
    ``table``: the caller's ``compiled_calls`` table (it tried it first), which gets this call's
    entry once it has a runner C can run.
    """
    runner = None
    if type(axis) is not int:   # a bool axis is equal to an int one as a key, but the general path rejects it
        key = None
    elif len(inputs) == 2 and type(inputs[0]) is _ndarray and type(inputs[1]) is _ndarray:
        a, b = inputs  # the hot path's key for two arrays, inline (see _fast_key)
        if out is None:
            key = (op.name, a.dtype, a.shape, a.strides, b.dtype, b.shape, b.strides, rule, axis,
                   backend or backends.DEFAULT_CPU, axes_mapping, dtype, target, shape)
        elif type(out) is _ndarray:
            key = (op.name, a.dtype, a.shape, a.strides, b.dtype, b.shape, b.strides, out.dtype,
                   out.shape, out.strides, rule, axis, backend or backends.DEFAULT_CPU, axes_mapping,
                   dtype, target, shape)
        else:
            key = None
    else:
        key = _fast_key(op, inputs, out, rule, axis, axes_mapping, dtype, backend, target, shape)
    if key is not None:
        try:
            runner = HOT.runners.get(key)
        except TypeError:  # unhashable options (e.g. a list for axes_mapping or shape)
            key = None
        if runner is not None:
            if table is not None and hasattr(runner, "compiled"):
                compiled_calls.register(table, out, inputs, *runner.compiled)
            result = runner(inputs, out)
            if result is not None:
                return result
    for claims, handler in _DEFERRED:
        if any(claims(x) for x in inputs) or out is not None and claims(out):
            return handler(op, inputs, rule=rule, axis=axis, axes_mapping=axes_mapping, out=out, dtype=dtype,
                           backend=backend, target=target, shape=shape)
    if out is not None:
        out = checked_out(op, out)
    be = backends.select(inputs, out, backend)
    if be.name == "cuda" and (torch := torch_tensors.torch_of((*inputs, out))) is not None:
        return torch_tensors.through_torch(   # on torch's stream, torch tensors back (cuda.torch_tensors)
            torch, be, lambda xs, o: apply(op, xs, rule=rule, axis=axis, axes_mapping=axes_mapping, out=o, dtype=dtype,
                                           backend=backend, target=target, shape=shape, table=table), inputs, out)
    arrays = [x if _dt.is_python_scalar(x) or be.owns(x) else be.asarray(x) for x in inputs]
    types = tuple(_dt.weak_type(x) for x in arrays)
    loop, out_dtype = resolve_types(op, types, dtype)
    widened = False
    if "comparison" in op.tags and int in types:
        before = arrays
        arrays, loop = compare_out_of_range(arrays, types, loop)
        widened = arrays is not before   # an int beyond the loop: this value's own loop, no runner
    try:
        arrays = [x if not _dt.is_python_scalar(x) and x.dtype == dt else be.asarray(x, dtype=dt)
                  for x, dt in zip(arrays, loop)]
    except OverflowError:  # a Python int that does not fit: NumPy's error, with NumPy 2's wording throughout
        misfit = next(((x, dt) for x, dt in zip(arrays, loop) if type(x) is int and not _dt.fits(x, dt)), None)
        if misfit is None:
            raise
        raise OverflowError(f"{op.name}: Python integer {misfit[0]} out of bounds for {misfit[1]}") from None

    if out is not None and out.dtype != out_dtype:
        if not np.can_cast(out_dtype, out.dtype, casting="same_kind"):
            raise TypeError(f"{op.name}: cannot write {out_dtype} results into an out= array of "
                            f"{out.dtype} (casting rule 'same_kind')")
        result = apply(op, arrays, rule=rule, axis=axis, axes_mapping=axes_mapping, backend=be.name,
                       target=target, shape=shape)
        if tuple(out.shape) != tuple(result.shape):
            raise ValueError(f"{op.name}: out= has shape {tuple(out.shape)}, but the result has shape "
                             f"{tuple(result.shape)}")
        if overlaps_itself(out):
            be.write_in_order(out, result)
            return out
        be.copyto(out, result)
        slots = None if key is None or widened or not hasattr(be, "prepare") else _input_slots(inputs, arrays, loop)
        if slots is not None and result.size:  # a runner computing into a new array, then NumPy's cast into out=
            p = plan_for(arrays, rule, axis, axes_mapping, None, target, shape)
            runner = HOT.note(key, lambda: _prepared(be, op, p, arrays, out_dtype, slots, cast_out=True))
            if runner is not None and table is not None and hasattr(runner, "compiled"):
                compiled_calls.register(table, out, inputs, *runner.compiled)
        return out

    p = plan_for(arrays, rule, axis, axes_mapping, out, target, shape)
    if p.out_overlaps_itself and p.size:   # NumPy's values: the inputs read before out is written, in order
        be.write_in_order(out, apply(op, arrays, rule=rule, axis=axis, axes_mapping=axes_mapping, backend=be.name,
                             target=target, shape=shape))
        return out
    slots = None if key is None or widened or not hasattr(be, "prepare") else _input_slots(inputs, arrays, loop)
    if slots is not None:
        runner = HOT.note(key, lambda: _converting_in_pass(be, op, inputs, out, slots, dict(
            rule=rule, axis=axis, axes_mapping=axes_mapping, dtype=dtype, target=target, shape=shape))
            or _prepared(be, op, p, arrays, out_dtype, slots))
        if runner is not None:  # the second sighting: prepared now
            if table is not None and hasattr(runner, "compiled"):
                compiled_calls.register(table, out, inputs, *runner.compiled)
            result = runner(inputs, out)
            if result is not None:
                return result
    if out is None:
        out = be.empty(p.out_shape, out_dtype)
    elif p.size and any(partial_overlap(be, x, i, p, out) for i, x in enumerate(arrays)):
        arrays = [be.copy(x) if partial_overlap(be, x, i, p, out) else x for i, x in enumerate(arrays)]
        p = plan_for(arrays, rule, axis, axes_mapping, out, target, shape)
    if not p.size:
        return out
    if op.kind != "move" and any(dt.kind == "O" for dt in loop):
        _execute_objects(be, op, p, arrays, out)
    else:
        be.execute(op, p, arrays, out)
    return out


#: (claims(x) -> bool, handler(op, inputs, **options)) of the modules that take calls over (docstring)
_DEFERRED: list = []


def defer(claims, handler) -> None:
    """Have ``handler`` compute every call with an input (or ``out=``) that ``claims`` (see the module
    docstring)."""
    _DEFERRED.append((claims, handler))


def _execute_objects(be, op, p, arrays, out):
    """An object loop calls each element's Python operator (as NumPy's does); whatever that raises
    (ZeroDivisionError, AttributeError, ...) comes out as a TypeError naming the op."""
    try:
        be.execute(op, p, arrays, out)
    except Exception as e:  # the elements are arbitrary Python objects: any error is theirs
        raise TypeError(f"{op.name}: computing on object elements failed with {type(e).__name__}: {e}") from e


#: call signature -> runner from ``backend.prepare`` (module docstring; ``hot_calls``)
HOT = HotCalls(4096)
_ndarray = np.ndarray


def _fast_key(op, inputs, out, rule, axis, axes_mapping, dtype, backend, target, shape):
    """The hot-path cache key of a call on plain NumPy arrays and scalars, or None.  A scalar is keyed
    by its type, never its value (NEP 50: the type decides the loop; a Python int that does not fit
    it is the general path's, see ``_with_scalars``).  A CUDA array is keyed by its type too.  (Two
    NumPy arrays: built inline in ``apply``, 14 or 17 items, starting with the op's name and its
    first dtype; here the name and the number of inputs.)"""
    nd = _ndarray
    if out is None:
        okey = None
    elif type(out) is nd:
        okey = (out.dtype, out.shape, out.strides)
    elif type(out) in backends.DEVICE_ARRAY_TYPES:
        okey = (type(out), out.dtype, out.shape, out.strides)
    else:
        return None
    key = [op.name, len(inputs), okey, rule, axis, backend or backends.DEFAULT_CPU, axes_mapping, dtype, target,
           shape]
    for x in inputs:
        t = type(x)
        if t is nd:
            key += (x.dtype, x.shape, x.strides)
        elif t in _PYTHON_SCALARS or isinstance(x, np.generic):
            key += (t, None, None)
        elif t in backends.DEVICE_ARRAY_TYPES:   # a CUDA array: its type says which device library
            key += (t, x.dtype, x.shape, x.strides)
        else:
            return None
    return tuple(key)


_PYTHON_SCALARS = frozenset({bool, int, float, complex})


def _input_slots(inputs, arrays, loop):
    """Per input of a call that may get a runner: None for an array passed as it is, the loop dtype
    of a scalar (converted at call time), ``Cast(loop dtype)`` for an array the general path converted
    (``be.asarray(x, dtype)``, again at call time); None overall for anything else."""
    slots = []
    for x, a, dt in zip(inputs, arrays, loop):
        if a is x:
            slots.append(None)
        elif type(x) in _PYTHON_SCALARS or isinstance(x, np.generic):
            slots.append(dt)
        elif type(x) is _ndarray or type(x) in backends.DEVICE_ARRAY_TYPES:
            slots.append(Cast(dt))
        else:
            return None
    return tuple(slots)


def _converting_in_pass(be, op, inputs, out, slots, options):
    """For a call on NumPy arrays some of which the general path converts to their loop dtype (a
    float32 and a float64 array added), the registered maker's runner (``convert_in_pass``) that
    converts them as the pass reads them, or None.  A converted copy is a pass over memory of its own,
    and, written by one thread, the walk's other threads read it from another core's cache (float32 +
    float64, 64 K elements, 2 threads: 42-44 us through a copy, NumPy 28, converted in the pass 8-16)."""
    if not _IN_PASS or not hasattr(be, "prepare_fused") or not all(type(x) is _ndarray for x in inputs) \
            or {type(s) for s in slots if s is not None} != {Cast}:   # arrays only, some converted
        return None
    return _IN_PASS[0](be, op, inputs, out, options)


#: the maker of runners that convert their inputs inside the pass (``fusion`` registers it)
_IN_PASS: list = []


def convert_in_pass(make) -> None:
    """Have ``make(be, op, inputs, out, options)`` (None if it cannot) prepare the calls whose input
    arrays need converting to their loop dtypes (``_converting_in_pass``)."""
    _IN_PASS[:] = [make]


def _prepared(be, op, p, arrays, out_dtype, slots, cast_out: bool = False):
    """The backend's runner for this signature, taking its scalars by value and converting its arrays
    as the general path does (``_with_conversions``); with ``cast_out``, it computes into a new array
    and converts that into the ``out=`` it is given (NumPy's cast, as the general path).  With
    ``compiled`` (``compiled_calls.register``'s arguments after the call's own) where the backend
    described it to C as ``native`` (a ``compiled_calls.Native``)."""
    inner = be.prepare(op, p, tuple(x.dtype for x in arrays), out_dtype)
    runner = _with_conversions(be, inner, slots)
    if runner is not None and cast_out:
        runner = _into_out(be, runner)
    native = getattr(inner, "native", None)
    if native is not None:  # runner: a function made for this signature (its attribute is this call's)
        runner.compiled = (native, slots, out_dtype, p.out_shape, inner, cast_out)
    return runner


def _into_out(be, runner):
    """``runner`` computing into a new array, then converted into ``out`` (never None here)."""
    copyto = be.copyto

    def into_out(inputs, out):
        result = runner(inputs, None)
        if result is None:
            return None
        copyto(out, result)
        return out
    return into_out


def _with_conversions(be, runner, slots):
    """``runner`` for calls whose scalars change value and whose arrays need converting: each scalar
    converted to its loop dtype as the general path converts it (NumPy's conversion), each ``Cast``
    array by ``be.asarray``; a Python int beyond its loop dtype goes to the general path (NumPy's
    OverflowError there)."""
    if runner is None or not any(dt is not None for dt in slots):
        return runner
    fits, asarray, convert = _dt.fits, np.asarray, be.asarray

    def with_conversions(inputs, out):
        converted = []
        for x, dt in zip(inputs, slots):
            if dt is None:
                converted.append(x)
            elif type(dt) is Cast:
                converted.append(convert(x, dtype=dt.dtype))
            elif type(x) is int and not fits(x, dt):
                return None
            else:
                converted.append(asarray(x, dt))
        return runner(converted, out)
    return with_conversions


def compare_out_of_range(arrays, types, loop):
    """A comparison of an integer array with a Python int outside its loop dtype, as NumPy 2 computes
    it (exactly): the int compares as +-inf would, so the two compare in float64 with that infinity."""
    ints = [type(x) is int and not _dt.fits(x, dt) for x, dt in zip(arrays, loop)]
    if not any(ints) or all(ints) or not all(isinstance(t, np.dtype) and t.kind in "iu" or t is int
                                               for t in types):
        return arrays, loop
    arrays = [(np.inf if x > 0 else -np.inf) if big else x for x, big in zip(arrays, ints)]
    return arrays, (np.dtype(np.float64),) * len(arrays)


def checked_out(op: Op, out):
    """``out=`` as given, checked at the front door (as NumPy's ufuncs check it): an array, writable;
    a tuple of one array is that array."""
    if type(out) is tuple:
        if len(out) != 1:
            raise ValueError(f"{op.name}: the out= tuple must hold exactly one array (the op has one "
                             f"output), got {len(out)} entries")
        (out,) = out
    if not (isinstance(out, np.ndarray) or backends.is_cuda_array(out)):
        raise TypeError(f"{op.name}: out= must be an array (numpy.ndarray, or a CUDA array for CUDA inputs), "
                        f"got {type(out).__name__} {out!r:.40}; pass e.g. numpy.empty(shape, dtype), or "
                        f"leave out= unset")
    if isinstance(out, np.ndarray) and not out.flags.writeable:
        raise ValueError(f"{op.name}: output array is read-only")
    return out


def plan_for(arrays, rule, axis, axes_mapping, out, target, shape):
    n = len(arrays)
    if shape is not None:  # data movement: the target shape is an operand of the rule only
        shape = tuple(shape)
        if rule == "pdpd":
            return take(make_plan(shape, *arrays, rule=rule, axis=axis, out=out), tuple(range(1, n + 1)))
        return take(make_plan(*arrays, shape, rule=rule, axis=axis, axes_mapping=axes_mapping, out=out),
                    tuple(range(n)))
    order = planning_order(rule, n, target)
    if order is not None:
        p = make_plan(*(arrays[i] for i in order), rule=rule, axis=axis, out=out)
        return take(p, tuple(order.index(i) for i in range(n)))
    return make_plan(*arrays, rule=rule, axis=axis, axes_mapping=axes_mapping, out=out)


def planning_order(rule: str, n: int, target: int) -> tuple[int, ...] | None:
    """The order ``n`` operands are planned in when it is not the call order: PDPD puts ``target`` first."""
    if rule == "pdpd" and target:
        return (target,) + tuple(i for i in range(n) if i != target)
    return None


def overlaps_itself(x) -> bool:
    """Whether elements of array ``x`` share memory (an out= over itself)."""
    return _overlaps_itself(x.shape, x.strides, x.itemsize)


def partial_overlap(be, x, i, p, out) -> bool:
    """Whether input ``x`` shares memory with ``out`` other than element for element: the exception
    is NumPy's (same address, same strides, same item size, and ``out`` without internal overlap),
    where each element is read before the same element is written."""
    if not be.may_share_memory(x, out):
        return False
    return not (be.data_ptr(x) == be.data_ptr(out) and p.strides[i] == p.out_strides
                and x.dtype.itemsize == out.dtype.itemsize and not p.out_overlaps_itself)


def resolve_types(op: Op, types, dtype=None):
    """(loop dtypes, output dtype) for input dtypes / weak scalar types; ``dtype`` as NumPy's ``dtype=``
    (for ufunc ops it picks the loop, as ``signature=(None, ..., dtype)``; otherwise it casts the result)."""
    if dtype is None:
        return op.resolve(types)
    dtype = np.dtype(dtype)
    if _dt.kind(dtype) not in "biufc":  # NumPy's object loop would raise Python's errors (1 // 0, ...)
        raise TypeError(f"{op.name}: dtype={dtype} is not a type gpubcast computes in; choose a bool, "
                        f"integer, floating or complex dtype")
    if op.ufunc is None:
        return op.resolve(types)[0], dtype
    try:
        resolved = op.ufunc.resolve_dtypes(types + (None,), signature=(None,) * len(types) + (dtype,))
    except TypeError as e:
        raise TypeError(f"{op.name}: cannot compute {', '.join(map(str, types))} into dtype={dtype} ({e})") from None
    return tuple(resolved[:-1]), resolved[-1]
