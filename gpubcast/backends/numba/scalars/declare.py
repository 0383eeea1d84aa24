"""How a scalar function is declared: a stub that Numba overloads per raw type, its implementation
chosen by the value family (b/i/u/f/c) of that type under the codec (``codecs.family``), and the
lifts that turn a function of computed values into a raw-in, raw-out scalar function
(``decode`` the raw inputs, compute, ``encode`` the result).

A family maps to an implementation directly, or to a *builder* (``builder``) called with the codec
and the raw type at typing time, for implementations that depend on them.
"""

from __future__ import annotations

from numba.core import types

from .. import float32_math as F32
from ..cache import overload, register_jitable
from ..codecs import SYSTEM_CPOW, decode, encode, family


def jitable(fn):
    """``fn`` callable from jitted code (registered once)."""
    if not getattr(fn, "_gpubcast_jitable", False):
        register_jitable(fn)
        fn._gpubcast_jitable = True
    return fn


def lift(fn):
    """``fn(value, value) -> value`` as a raw-in, raw-out scalar function."""
    fn = jitable(fn)
    return lambda codec, x, y: encode(codec, fn(decode(codec, x), decode(codec, y)))


def predicate(fn):
    """``fn(value, value) -> bool`` on raw inputs."""
    fn = jitable(fn)
    return lambda codec, x, y: fn(decode(codec, x), decode(codec, y))


def select(first):
    """``first(value, value) -> bool``: keep the raw first operand if true, else the second."""
    first = jitable(first)
    return lambda codec, x, y: x if first(decode(codec, x), decode(codec, y)) else y


def declare_binary(families, jit_options=None):
    """Declare a scalar function: ``families`` maps a value family (b/i/u/f/c) to the raw impl
    builder ``(codec type, raw type) -> impl``, or to an impl directly; ``jit_options`` its compile
    options (``float32_math.INLINE`` for the ops computed by it)."""
    def stub(codec, x, y):
        raise NotImplementedError

    @overload(stub, jit_options=dict(jit_options or {}))
    def _ov(codec, x, y):
        return implementation(families, codec, x)
    return stub


def implementation(families, codec, x):
    """The implementation ``families`` holds for the value family of raw type ``x`` under ``codec``
    (a builder's, built for them)."""
    fam = family(codec, x)
    make = families.get(fam)
    if make is None:
        raise TypeError(f"no scalar implementation for family {fam!r} ({x} under {codec})")
    return make(codec, x) if getattr(make, "_builder", False) else make


def builder(fn):
    """Mark ``fn`` a family builder: ``implementation`` calls it with (codec, raw type) for the impl."""
    fn._builder = True
    return fn


def declare_unary(families):
    """Declare a unary scalar function ``f(codec, raw x) -> raw result`` (as ``declare_binary``)."""
    def stub(codec, x):
        raise NotImplementedError

    @overload(stub, jit_options=dict(F32.INLINE))  # a float32_math body inlined into the row's loop
    def _ov(codec, x):
        return implementation(families, codec, x)
    return stub


def declare_parametric(families):
    """Declare a scalar function ``f(codec, raw x, raw p, raw q) -> raw result`` (as ``declare_binary``)."""
    def stub(codec, x, y, z):
        raise NotImplementedError

    @overload(stub, jit_options=dict(F32.INLINE))  # as the unary stubs: an activation's body inlined into its loop
    def _ov(codec, x, y, z):
        return implementation(families, codec, x)
    return stub


def lift1(fn):
    """``fn(value) -> value`` as a raw-in, raw-out unary scalar function."""
    fn = jitable(fn)
    return lambda codec, x: encode(codec, fn(decode(codec, x)))


def raw1(fn):
    """``fn(raw) -> raw``: the raw value is the value (integers, bools kept as raw 0/1)."""
    return jitable(fn)


def complex_function(system, portable):
    """The C library's complex function where it can be called (NumPy's values), else Numba's cmath."""
    if SYSTEM_CPOW:
        return lift1(lambda v: system(v))
    return lift1(lambda v: portable(v))


def float32_fast(single, general, nargs=1):
    """A jitable function of ``nargs`` values: ``single`` (``float32_math``: vectorises) on float32
    values, ``general`` (a C library function, NumPy's float64 loop) on others."""
    if nargs == 1:
        def stub(v):
            raise NotImplementedError

        @overload(stub, jit_options=dict(F32.INLINE))
        def _ov(v):
            if v == types.float32:
                return lambda v: single(v)
            return lambda v: general(v)
    else:
        def stub(v, w):
            raise NotImplementedError

        @overload(stub, jit_options=dict(F32.INLINE))
        def _ov2(v, w):
            if v == types.float32:
                return lambda v, w: single(v, w)
            return lambda v, w: general(v, w)
    stub.__name__ = stub.__qualname__ = f"fast_{single.__name__}"
    stub._gpubcast_jitable = True  # its own overload: ``jitable`` must not register the stub's body
    return stub
