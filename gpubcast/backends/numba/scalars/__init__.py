"""Per-op scalar semantics for the Numba backend: the one place that declares them.

``SCALAR`` maps each op name of the registry (``gpubcast/ops.py``) that the Numba kernels compute
to a scalar function ``f(codec, x, y)``: ``x`` and ``y`` are *raw* stored values (what a load from
the array gives), the result is the raw value to store.  ``VARIADIC`` maps each variadic op to
``(step, finish)``: the output is ``finish(codec, step(...step(x1, x2)..., xn), n)``, left to
right, exactly like the registry's ``functools.reduce`` references.

A ``Codec`` (``codecs``) says how raw values relate to the values NumPy computes with.

This package holds the tables, and one module per kind of op declares their semantics (each
imports only those above it in this list):

``values``          helpers over computed values: constants and complexes of a value's type,
                    complex arithmetic and ordering as NumPy's
``declare``         how a scalar function is declared: a stub overloaded per raw type, an
                    implementation per value family, the lifts from value functions to raw ones
``arithmetic``      arithmetic, comparison, logical and bitwise binary ops (and power's variant)
``math_functions``  the math functions, unary and binary (#22)
``unary``           the other unary ops, and data movement's ``move``
``variadic``        the finishes of sum, mean, max and min
``activations``     the activations, unary, binary and parametric (#22)

The stubs are made here, named ``op_<name>``, ``unary_<name>``, ``unary_vector_<name>`` and
``parametric_<name>`` in this module's namespace: compiled code that closes over one pickles it by
reference (``gpubcast.backends.numba.scalars.op_add``), the same name in every process.

Values follow the registry's NumPy references (NumPy 2 on this machine, ml_dtypes for bfloat16):
floor division and remainder of floats use NumPy's ``npy_divmod``; integer division guards x / 0
and INT_MIN / -1 (which traps on x86); shifts by >= the width (or by a negative count) give 0, or
-1 for a right shift of a negative value; complex multiply rounds like NumPy's FMA loops; complex
division is NumPy's Smith algorithm; float maximum/minimum propagate NaN and return the second
operand on ties (the first for float16, as NumPy's half loops do).

Assumption: ``power`` of float32/float64 uses the C library's ``pow``/``powf`` (NumPy uses SVML on
AVX-512 machines for contiguous data, which may differ in the last bit).  Complex power with a
non-integer exponent calls the C library's ``cpow``/``cpowf`` like NumPy on x86-64 Linux, elsewhere
``exp(b * log(a))``, equal to NumPy within a few ulps.
"""

from __future__ import annotations

from .. import float32_activations as A32
from .. import float32_inverse_hyperbolic as F32H
from .. import float32_math as F32
from .. import float32_trig as F32T
from . import activations, arithmetic, math_functions, unary
from .activations import FLOAT32_ACTIVATIONS, narrow
from .declare import declare_binary, declare_parametric, declare_unary
from .math_functions import FLOAT32_BINARY, FLOAT32_FUNCTIONS, bfloat16_value, sin_cos_key
from .unary import move
from .values import cpack, like
from .variadic import count_finish, mean_finish

__all__ = ["FLOAT32_ACTIVATIONS", "FLOAT32_BINARY", "FLOAT32_FUNCTIONS", "FLOAT32_ULPS", "HEAVY_UNARY", "PARAMETRIC",
           "SCALAR", "SCALAR_SECOND_CONSTANT", "SIGN_AGNOSTIC", "UNARY", "UNARY_VECTOR", "VARIADIC", "bfloat16_value",
           "count_finish", "cpack", "like", "mean_finish", "move", "narrow", "row_functions", "sin_cos_key"]


def _make_stubs(table, prefix):
    """Binary scalar functions by name, each a stub of this module named ``prefix + name``."""
    out = {}
    for name, families in table.items():
        stub = declare_binary(families, F32.INLINE if name in FLOAT32_BINARY else None)
        stub.__name__ = stub.__qualname__ = f"{prefix}{name}"
        stub.__module__ = __name__
        globals()[stub.__name__] = stub  # importable by name: closures over it pickle by reference
        out[name] = stub
    return out


def _make_unary_stubs(table, declare=None, prefix="unary_"):
    """Unary scalar functions by name (``declare``/``prefix``: those of another arity, e.g. ``declare_parametric``)."""
    out = {}
    for name, families in table.items():
        stub = (declare or declare_unary)(families)
        stub.__name__ = stub.__qualname__ = f"{prefix}{name}"
        stub.__module__ = __name__
        globals()[stub.__name__] = stub
        out[name] = stub
    return out


_TABLE, _VARIANTS = arithmetic.families()
_TABLE.update(math_functions.binary_families())
#: op name -> scalar function ``f(codec, raw x, raw y) -> raw result``
SCALAR = _make_stubs(_TABLE, "op_")
#: op name -> its scalar function where the second operand is one value over the whole call (NumPy's
#: loop takes a fast path then: measured, a broadcast operand that varies along any dim does not get
#: it), for the ops where NumPy's values differ there
SCALAR_SECOND_CONSTANT = _make_stubs(_VARIANTS, "op_second_constant_")


def row_functions(name: str):
    """(scalar function, its variant for a second operand constant along the row) of op ``name``."""
    f = SCALAR[name]
    return f, SCALAR_SECOND_CONSTANT.get(name, f)


#: unary op name -> scalar function ``f(codec, raw x) -> raw result`` (``cast`` runs NumPy's astype)
UNARY = _make_unary_stubs({**unary.families(SCALAR["maximum"]), **math_functions.unary_families()})

#: every float32-lane function's bound in ulps of the true value (the modules' ``ULPS``, held by
#: tests/numba/test_float32_math_exhaustive.py): what the README's and the docs' accuracy tables state
FLOAT32_ULPS = {**F32.ULPS, **F32T.ULPS, **F32H.ULPS, **A32.ULPS}

#: unary ops whose float32 body is long (``float32_math``, ``float32_inverse_hyperbolic``,
#: ``float32_activations``, ``float32_trig``'s inverses): ``rows.unary_row`` keeps their contiguous loop
#: a function of its own
HEAVY_UNARY = frozenset({"exp", "exp2", "expm1", "log", "log2", "log10", "log1p", "tanh", "sinh", "cosh", "cbrt",
                         "arcsinh", "arccosh", "arctanh", "arcsin", "arccos", "arctan", "sigmoid", "erf", "softplus",
                         "mish", "gelu", "gelu_tanh"})

#: unary op name -> (``vector``, ``key``, ``large_key``): ``vector(codec, x)`` is the op's value
#: where ``key(codec, x)`` (an int32) is below ``large_key``, and vectorises; ``unary_row`` keeps its
#: values in blocks whose largest key is below ``large_key``
UNARY_VECTOR = {name: (stub, sin_cos_key, F32T.SIN_COS_LARGE_KEY) for name, stub in _make_unary_stubs(
    math_functions.vector_families(), prefix="unary_vector_").items()}

#: variadic op name -> (step scalar function, finish function)
VARIADIC = {
    "sum": (SCALAR["add"], count_finish),
    "mean": (SCALAR["add"], mean_finish),
    "max": (SCALAR["maximum"], count_finish),
    "min": (SCALAR["minimum"], count_finish),
}

#: ops whose integer results do not depend on signedness (two's complement): the kernels compute
#: signed integers as unsigned of the same width, sharing one compiled specialisation
SIGN_AGNOSTIC = frozenset({"add", "subtract", "multiply", "bitwise_and", "bitwise_or", "bitwise_xor",
                           "equal", "not_equal", "left_shift", "logical_and", "logical_or",
                           "logical_xor", "sum"})


def _make_activation_stubs():
    one, two, parametric = activations.families()
    UNARY.update(_make_unary_stubs(one))
    SCALAR.update(_make_stubs(two, "op_"))
    return _make_unary_stubs(parametric, declare_parametric, "parametric_")


#: parametric op name (x and two parameters) -> scalar function ``f(codec, raw x, raw p, raw q)``
PARAMETRIC = _make_activation_stubs()
