"""NumPy array subclasses in, NumPy's convention out: ``numpy.ma.MaskedArray`` keeps its mask,
``numpy.matrix`` and other subclasses come back as their class, overrides are honoured.

A call with an ndarray subclass among its inputs (or ``out=``) comes here through
``dispatch.defer``.  It computes on the base arrays (the same values as for plain arrays) and
then, as NumPy's ufuncs do, hands the result to ``__array_wrap__`` of the subclass input with the
highest ``__array_priority__``, with the op's NumPy ufunc as the context:

- ``MaskedArray``: the result's mask is NumPy's -- the inputs' masks or-ed (broadcast under the
  ``numpy`` rule, or equal under ``none``), plus where NumPy's masked ufunc masks a domain error
  (``log`` of a negative, a division by zero).  Unary ops without a NumPy ufunc (``relu``,
  ``round``, ``cast``) carry the input's mask; data movement (``broadcast_to``, ``expand``)
  moves the mask with the data.  Anything whose mask NumPy does not define -- ``where``, variadic
  ops, the ``pdpd`` and ``unidirectional`` rules, ``out=`` -- is a ``TypeError`` that says what
  to do instead, never a silently dropped mask.
- Other subclasses without an ``__array_ufunc__`` override (``numpy.matrix``, a plain
  ``class A(np.ndarray)``): the result is wrapped in the class, as NumPy wraps its own.
- A subclass that overrides ``__array_ufunc__`` decides for itself (NEP 13): the call is the
  op's NumPy ufunc on the original inputs (``numpy`` rule only), or a ``TypeError`` where the
  op has none or the override is ``None``.
"""

from __future__ import annotations

import numpy as np

from . import dispatch

_ndarray = np.ndarray


def is_subclass(x) -> bool:
    """An instance of a proper subclass of ``numpy.ndarray``."""
    return type(x) is not _ndarray and isinstance(x, _ndarray)


def _masked(x) -> bool:
    return isinstance(x, np.ma.MaskedArray)


def _overrides(x) -> bool:
    return is_subclass(x) and type(x).__array_ufunc__ is not _ndarray.__array_ufunc__


def compute(op, inputs, *, rule, axis, axes_mapping, out, dtype, backend, target, shape):
    """``dispatch.apply`` for a call with ndarray subclasses (see the module docstring)."""
    options = dict(rule=rule, axis=axis, axes_mapping=axes_mapping, dtype=dtype, backend=backend,
                   target=target, shape=shape)
    subclassed = [x for x in (*inputs, out) if is_subclass(x)]
    if any(_overrides(x) for x in subclassed):
        return _deferred_to_override(op, inputs, out, rule, dtype, subclassed)
    if any(_masked(x) for x in subclassed):
        return _masked_call(op, inputs, out, options)
    data = [np.asarray(x) if is_subclass(x) else x for x in inputs]
    result = dispatch.apply(op, data, out=None if out is None else np.asarray(out), **options)
    if out is not None:
        return out
    wrapper = max(subclassed, key=lambda x: getattr(x, "__array_priority__", 0.0))
    context = None if op.ufunc is None else (op.ufunc, tuple(inputs), 0)
    return wrapper.__array_wrap__(result, context, False)


def _deferred_to_override(op, inputs, out, rule, dtype, subclassed):
    who = next(type(x).__name__ for x in subclassed if _overrides(x))
    if op.ufunc is None or op.ufunc.__name__ not in (op.name, _UFUNC_NAMES.get(op.name)) or rule != "numpy":
        raise TypeError(f"{op.name}: an input of type {who} overrides __array_ufunc__, and this call has no "
                        f"NumPy ufunc to hand it to; pass numpy.asarray(x) to compute on its data")
    kwargs = {} if out is None else {"out": out}
    if dtype is not None:
        kwargs["dtype"] = dtype
    return op.ufunc(*inputs, **kwargs)


#: ops whose NumPy ufunc has another name
_UFUNC_NAMES = {"abs": "absolute", "bitwise_not": "invert"}


def _masked_call(op, inputs, out, options):
    """A call with MaskedArrays: the data computed as plain arrays, the mask as NumPy's."""
    rule = options["rule"]
    if out is not None:
        raise TypeError(f"{op.name}: out= with masked arrays is not supported (the mask would not be written); "
                        f"assign the result instead: out[...] = gpubcast.{op.name}(...)")
    data = [np.ma.getdata(x) if _masked(x) else np.asarray(x) if is_subclass(x) else x for x in inputs]
    if op.kind == "move":
        (x,) = inputs
        result = dispatch.apply(op, data, **options)
        mask = dispatch.apply(op, (np.ma.getmaskarray(x),), **{**options, "dtype": None})
        return np.ma.MaskedArray(result, mask=mask)
    if op.kind == "unary" and (op.ufunc is None or op.ufunc.__name__ not in (op.name, _UFUNC_NAMES.get(op.name))):
        (x,) = inputs  # no NumPy ufunc of its own (relu, erf, sigmoid, round, cast): no domain, the mask carried
        return np.ma.MaskedArray(dispatch.apply(op, data, **options), mask=np.ma.getmaskarray(x).copy())
    if op.ufunc is None or op.kind not in ("unary", "binary") or rule not in ("numpy", "none"):
        how = f"broadcast={rule!r}" if op.kind in ("unary", "binary") and op.ufunc is not None else "this op"
        raise TypeError(f"{op.name}: NumPy defines no mask for masked arrays under {how}; compute on the data "
                        f"and mask yourself (numpy.ma.getdata(x), numpy.ma.getmaskarray(x)), or use numpy.ma")
    result = dispatch.apply(op, data, **options)
    wrapper = max((x for x in inputs if _masked(x)), key=lambda x: getattr(x, "__array_priority__", 0.0))
    with np.errstate(all="ignore"):  # NumPy's masked domains evaluate the inputs quietly, as np.ma does
        return wrapper.__array_wrap__(result, (op.ufunc, tuple(inputs), 0), False)


dispatch.defer(lambda x: is_subclass(x), compute)
