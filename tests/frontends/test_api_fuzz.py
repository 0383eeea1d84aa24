"""A Hypothesis fuzz of the public API: no internal exception ever reaches a user.

Random calls of the NumPy-style functions, ``gpubcast.onnx`` and ``gpubcast.openvino``, with
random dtypes, operands (arrays of small shapes incl. 0-d and zero-size, in several memory layouts;
NumPy scalars; Python scalars incl. huge ints), rule sets, ``axis``, ``axes_mapping``, target
shapes and ``out=`` of every wrong kind.  Properties:

- every exception is a ``BroadcastError`` / ``TypeError`` / ``ValueError``; the one other answer
  allowed is NumPy's own ``OverflowError`` for a Python int that does not fit the loop dtype;
- the default backend (Numba) and gpubcast's NumPy reference backend agree: both raise the same
  kind of exception, or both return equal arrays (same dtype, shape, values; ``out=`` and the
  inputs it may alias hold the same values afterwards), on the first call (the general path) and
  on the second and third calls of the same signature (the prepared runner, the compiled hot path);
- numpy-rule calls of the NumPy-style binary ops equal NumPy's ufunc wherever NumPy defines a value
  (NumPy raises for an integer to a negative power; gpubcast does not, see API.md).

Examples: 30 per test by default, half the suite's Hypothesis cap (derandomized: the same examples every
run; 16 tests: one per front end and, for the NumPy-style API, one per kind of ``out=``), and five
times as many drawn afresh in ``test_fuzz_deeper`` (``make test-all``);
``GPUBCAST_FUZZ_EXAMPLES=5000`` for a long local run (random examples above 200).
"""

from __future__ import annotations

import os
import warnings

import numpy as np
import pytest
from hypothesis import HealthCheck, event, given, settings, strategies as st
from hypothesis.extra import numpy as hnp

import gpubcast as gb
import gpubcast.onnx as gx
import gpubcast.openvino as gv
from gpubcast import BroadcastError, dtypes

from tests.support.layouts import LAYOUTS
from tests.support.numba_cases import values

EXAMPLES = int(os.environ.get("GPUBCAST_FUZZ_EXAMPLES", "30"))  # per test (there are 16)
FUZZ = settings(max_examples=EXAMPLES, deadline=None, derandomize=EXAMPLES <= 200,
                suppress_health_check=list(HealthCheck))

DTYPES = [np.dtype(t) for t in ("bool", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32",
                                "uint64", "float16", "float32", "float64", "complex64", "complex128")]
DTYPES.append(dtypes.bfloat16)
HUGE_INTS = [2**70, -(2**70), 2**63, 2**64 - 1, -(2**63) - 1, 300, -129]
ALLOWED = (BroadcastError, TypeError, ValueError)
BINARY = list(gb.api.NUMPY_STYLE_BINARY)


# --- operands: recipes built afresh for every run (out= may write into them) ----------------------

@st.composite
def shapes(draw, min_dims=0, max_dims=3):
    return tuple(draw(st.lists(st.integers(0, 4), min_size=min_dims, max_size=max_dims)))


@st.composite
def array_recipe(draw, dtype=None, shape=None):
    dtype = dtype if dtype is not None else draw(st.sampled_from(DTYPES))
    shape = shape if shape is not None else draw(shapes())
    layout = draw(st.sampled_from(sorted(LAYOUTS)))
    return ("array", dtype, shape, layout, draw(st.integers(0, 2**32 - 1)))


@st.composite
def scalar_recipe(draw, dtype=None):
    if draw(st.booleans()):  # a NumPy scalar
        dtype = dtype if dtype is not None else draw(st.sampled_from(DTYPES))
        return ("npscalar", dtype, draw(st.integers(0, 2**32 - 1)))
    value = draw(st.one_of(
        st.booleans(), st.integers(-10, 10), st.sampled_from(HUGE_INTS),
        st.floats(allow_nan=True, allow_infinity=True, width=64),
        st.sampled_from([0.0, -0.0, 0.5, 2.0, 1e-40]), st.complex_numbers(max_magnitude=1e6),
    ))
    return ("py", value)


JUNK = st.sampled_from([None, "a", b"x", [1, 2], [[1], [2, 3]], [1.5, 2j], object()])


def operand(dtype=None, shape=None):
    """An array (3 in 5), a scalar, or something else (1 in 10), with ``dtype`` / ``shape`` when
    given (the family of a call)."""
    return st.integers(0, 9).flatmap(lambda i: array_recipe(dtype, shape) if i < 6 else
                                     scalar_recipe(dtype) if i < 9 else JUNK.map(lambda v: ("py", v)))


def build(recipe):
    kind = recipe[0]
    if kind == "py":
        return recipe[1]
    rng = np.random.default_rng(recipe[-1])
    if kind == "npscalar":
        return values(recipe[1], 1, rng)[0]
    _, dtype, shape, layout, _ = recipe
    x = values(dtype, int(np.prod(shape)), rng).reshape(shape)
    return LAYOUTS[layout](x)


@st.composite
def family(draw, n, shape_pool=None):
    """``n`` operand recipes: often of one dtype (ONNX/OpenVINO need it) and broadcastable shapes."""
    dtype = draw(st.sampled_from(DTYPES)) if draw(st.integers(0, 9)) < 7 else None
    if draw(st.integers(0, 3)) < 3:
        mbs = draw(hnp.mutually_broadcastable_shapes(num_shapes=n, min_dims=0, max_dims=3, min_side=0,
                                                     max_side=4))
        shape_list = list(mbs.input_shapes)
    else:
        shape_list = [draw(shapes()) for _ in range(n)]
    return [draw(operand(dtype, s)) for s in shape_list]


def mostly(valid, junk):
    """``valid`` 4 times in 5, else ``junk`` (a wrong type or value)."""
    return st.integers(0, 4).flatmap(lambda i: junk if i == 4 else valid)  # Hypothesis favours 0


AXES = mostly(st.integers(-3, 4), st.sampled_from([1.5, "1", True, None, [1], np.int64(1), 2**70]))
RULES = mostly(st.sampled_from(["numpy", "numpy", "pdpd", "none"]),
               st.sampled_from(["NUMPY", "explicit", "unidirectional", "", None, 3, ["numpy"]]))


@st.composite
def target_shape(draw, x_shape):
    """A target for broadcast_to / Expand / Broadcast: often one x fits, sometimes nonsense."""
    kind = draw(st.integers(0, 9))
    if kind < 5:  # x's shape with leading dims added and 1s grown
        lead = draw(shapes(max_dims=2))
        grown = tuple(draw(st.integers(0, 3)) if n == 1 else n for n in x_shape)
        shape = lead + grown
    elif kind < 8:
        shape = draw(shapes(max_dims=4))
    else:
        return draw(st.sampled_from([(-1, 2), (2.0,), "ab", 3, np.int64(2), np.array(2), (2, None),
                                     np.array([2, 3], np.float64), [[2, 3]], (True, 2), None]))
    form = draw(st.sampled_from(["tuple", "list", "int64", "int32"]))
    if form == "tuple":
        return shape
    if form == "list":
        return list(shape)
    return np.array(shape, dtype=form)


@st.composite
def axes_mapping(draw, x_rank, target_rank):
    kind = draw(st.integers(0, 9))
    if kind < 5 and x_rank <= target_rank:
        return sorted(draw(st.lists(st.integers(0, max(target_rank - 1, 0)), min_size=x_rank,
                                    max_size=x_rank, unique=True))) if target_rank else []
    return draw(st.one_of(
        st.lists(st.integers(-2, 5), max_size=4),                    # repeated, out of range, wrong length
        st.sampled_from([None, 1, "a", [1.0], [None], (0, 0), [True], np.array([0, 1]), [[0]], [2**70]]),
    ))


# --- the calls -------------------------------------------------------------------------------------

class Call:
    """One drawn call: ``fn(*operands, **kwargs)``; ``out`` is set once the result shape is known."""

    def __init__(self, label, fn, recipes, kwargs, *, takes_out=False, ufunc=None, extra=()):
        self.label, self.fn, self.recipes, self.kwargs = label, fn, recipes, kwargs
        self.takes_out, self.ufunc, self.extra = takes_out, ufunc, tuple(extra)
        self.out = None

    def build(self):
        xs = [build(r) for r in self.recipes]
        return xs, build_out(self.out, xs)

    def __repr__(self):
        return (f"{self.label}(*{self.recipes!r}, *{self.extra!r}, **{self.kwargs!r}, "
                f"out={self.out!r})")


@st.composite
def numpy_style_call(draw):
    name = draw(st.sampled_from(BINARY + ["where", "prelu", "broadcast_to", "expand"]))
    if name in BINARY:
        recipes = draw(family(2))
        kwargs = {"broadcast": draw(RULES), "axis": draw(AXES),
                  "dtype": draw(mostly(st.one_of(st.none(), st.none(), st.sampled_from(DTYPES)),
                                       st.sampled_from(["foo", 3, object, "U3", [1]]))),
                  }
        return Call(name, getattr(gb, name), recipes, kwargs, takes_out=True, ufunc=getattr(np, name))
    if name == "where":
        recipes = draw(family(3))
        if draw(st.booleans()):
            recipes[0] = draw(operand(np.dtype(bool), _shape_of(recipes[0])))
        return Call(name, gb.where, recipes, {"broadcast": draw(RULES), "axis": draw(AXES)}, takes_out=True)
    if name == "prelu":
        return Call(name, gb.prelu, draw(family(2)), {}, takes_out=True)
    x = draw(operand())
    shape = draw(target_shape(_shape_of(x)))
    if name == "expand":
        return Call(name, gb.expand, [x], {}, takes_out=True, extra=(shape,))
    kwargs = {"mode": draw(mostly(st.sampled_from(["numpy", "bidirectional", "explicit", "pdpd"]),
                                  st.sampled_from(["none", "NUMPY", None, ["numpy"]]))),
              "axis": draw(AXES)}
    if kwargs["mode"] == "explicit" or draw(st.integers(0, 9)) == 0:
        kwargs["axes_mapping"] = draw(axes_mapping(len(_shape_of(x)), len(_rank_of(shape))))
    return Call(name, gb.broadcast_to, [x], kwargs, takes_out=True, extra=(shape,))


ONNX_BINARY = ["Add", "Sub", "Mul", "Div", "And", "Or", "Xor", "Equal", "Greater", "Less", "GreaterOrEqual",
               "LessOrEqual", "BitwiseAnd", "BitwiseOr", "BitwiseXor", "Pow", "PRelu"]


@st.composite
def onnx_call(draw):
    name = draw(st.sampled_from(ONNX_BINARY + ["Mod", "BitShift", "Where", "Expand", "Gemm",
                                               "Max", "Min", "Mean", "Sum"]))
    fn = getattr(gx, name)
    if name in ONNX_BINARY:
        return Call(f"onnx.{name}", fn, draw(family(2)), {})
    if name == "Mod":
        return Call(f"onnx.{name}", fn, draw(family(2)),
                    {"fmod": draw(mostly(st.sampled_from([0, 1]), st.sampled_from([2, True, "1"])))})
    if name == "BitShift":
        return Call(f"onnx.{name}", fn, draw(family(2)),
                    {"direction": draw(mostly(st.sampled_from(["LEFT", "RIGHT"]),
                                              st.sampled_from([b"LEFT", "left", None])))})
    if name == "Where":
        recipes = draw(family(3))
        recipes[0] = draw(operand(np.dtype(bool), _shape_of(recipes[0])))
        return Call(f"onnx.{name}", fn, recipes, {})
    if name == "Expand":
        x = draw(operand())
        return Call(f"onnx.{name}", fn, [x], {}, extra=(draw(target_shape(_shape_of(x))),))
    if name == "Gemm":
        m, k, n = (draw(st.integers(0, 3)) for _ in range(3))
        dtype = draw(st.sampled_from(DTYPES))
        trans_a, trans_b = draw(st.sampled_from([0, 1])), draw(st.sampled_from([0, 1]))
        a = draw(array_recipe(dtype, (k, m) if trans_a else (m, k)))
        b = draw(array_recipe(dtype, (n, k) if trans_b else (k, n)))
        recipes = [a, b]
        if draw(st.booleans()):
            recipes.append(draw(operand(dtype, draw(st.sampled_from([(m, n), (n,), (1, n), (m, 1), (), (3, 3)])))))
        kwargs = {"alpha": draw(st.sampled_from([1.0, 0.5, 2.0, 0.0])), "beta": draw(st.sampled_from([1.0, 0.0, 3.0])),
                  "transA": trans_a, "transB": trans_b}
        return Call(f"onnx.{name}", fn, recipes, kwargs)
    return Call(f"onnx.{name}", fn, draw(family(draw(st.integers(1, 4)))), {})


OV_BINARY = ["Add", "Subtract", "Multiply", "Power", "Maximum", "Minimum", "FloorMod", "Mod", "Equal",
             "NotEqual", "Greater", "GreaterEqual", "Less", "LessEqual", "LogicalAnd", "LogicalOr", "LogicalXor"]


@st.composite
def openvino_call(draw):
    name = draw(st.sampled_from(OV_BINARY + ["Divide", "Select", "PRelu", "Broadcast"]))
    fn = getattr(gv, name)
    label = f"openvino.{name}"
    if name in OV_BINARY or name == "Divide":
        kwargs = {"auto_broadcast": draw(RULES), "axis": draw(AXES)}
        if name == "Divide":
            kwargs["m_pythondiv"] = draw(st.booleans())
        return Call(label, fn, draw(family(2)), kwargs)
    if name == "Select":
        recipes = draw(family(3))
        recipes[0] = draw(operand(np.dtype(bool), _shape_of(recipes[0])))
        return Call(label, fn, recipes, {"auto_broadcast": draw(RULES), "axis": draw(AXES)})
    if name == "PRelu":
        return Call(label, fn, draw(family(2)), {})
    x = draw(operand())
    shape = draw(target_shape(_shape_of(x)))
    mode = draw(mostly(st.sampled_from(["numpy", "explicit", "bidirectional", "pdpd"]),
                       st.sampled_from(["PDPD", "none", None])))
    mapping = draw(axes_mapping(len(_shape_of(x)), len(_rank_of(shape)))) if mode == "explicit" else None
    return Call(label, fn, [x], {"mode": mode, "axis": draw(AXES)}, extra=(shape, mapping))


def _shape_of(recipe):
    return recipe[2] if recipe[0] == "array" else ()


def _rank_of(shape):
    try:
        return tuple(np.asarray(shape).reshape(-1))
    except (TypeError, ValueError):
        return ()


# --- out= ------------------------------------------------------------------------------------------

OUT_KINDS = ["none", "right", "castable", "uncastable", "wrong_shape", "readonly", "noncontiguous", "zero_d",
             "numpy_scalar", "list", "tuple1", "tuple2", "input", "overlap"]


def build_out(spec, inputs):
    if spec is None:
        return None
    kind, dtype, shape = spec
    if kind == "input" or kind == "overlap":
        x = inputs[dtype]  # the index of the input it aliases
        return x if kind == "input" else x[tuple(slice(None, None, -1) for _ in x.shape)]
    if kind == "numpy_scalar":
        return dtype.type(2)
    if kind == "list":
        return np.zeros(shape, dtype).tolist()
    if kind == "noncontiguous" and shape:
        return np.full(tuple(2 * n for n in shape), 7, dtype)[tuple(slice(None, None, 2) for _ in shape)]
    out = np.full(shape, 7, dtype)
    if kind == "readonly":
        out.flags.writeable = False
    if kind == "tuple1":
        return (out,)
    if kind == "tuple2":
        return (out, out.copy())
    return out


def draw_out(data, kind, result, inputs):
    """An out= spec of ``kind`` for a call whose reference result (or None) is ``result``."""
    if kind == "none":
        return None
    shape = result.shape if result is not None else data.draw(shapes(), label="out shape")
    dtype = result.dtype if result is not None else data.draw(st.sampled_from(DTYPES), label="out dtype")
    if kind in ("input", "overlap"):
        fits = [i for i, x in enumerate(inputs) if isinstance(x, np.ndarray) and x.shape == shape]
        if not fits:
            return ("right", dtype, shape)
        return (kind, data.draw(st.sampled_from(fits), label="aliased input"), shape)
    if kind == "castable":
        options = [d for d in DTYPES if np.can_cast(dtype, d, "same_kind")]
        dtype = data.draw(st.sampled_from(options or DTYPES), label="castable dtype")
    elif kind == "uncastable":
        options = [d for d in DTYPES if not np.can_cast(dtype, d, "same_kind")]
        dtype = data.draw(st.sampled_from(options or DTYPES), label="uncastable dtype")
    elif kind == "wrong_shape":
        shape = data.draw(shapes().filter(lambda s: s != shape), label="wrong shape")
    elif kind == "zero_d":
        shape = ()
    return (kind, dtype, shape)


# --- running and comparing ---------------------------------------------------------------------------

def run(call, backend):
    """(result or None, exception or None, inputs, out) of ``call`` on ``backend``."""
    xs, out = call.build()
    kwargs = dict(call.kwargs, backend=backend)
    if call.out is not None:
        kwargs["out"] = out
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            result = call.fn(*xs, *call.extra, **kwargs)
    except Exception as e:  # noqa: BLE001 - the property is about which exceptions come out
        check_exception(call, backend, e)
        return None, e, xs, out
    return result, None, xs, out


def check_exception(call, backend, e):
    if isinstance(e, ALLOWED):
        return
    if isinstance(e, OverflowError) and "out of bounds for" in str(e):  # NumPy's answer (a huge Python int)
        return
    pytest.fail(f"{call!r} on backend={backend!r} raised an internal exception: {e!r}")


def _comparable(a):
    """bfloat16 as float32 (assert_array_equal's NaN handling needs a NumPy float)."""
    a = np.asarray(a)
    return a.astype(np.float32) if a.dtype == dtypes.bfloat16 else a


def assert_same(got, want, what):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype, f"{what}: dtype {got.dtype} != {want.dtype}"
    assert got.shape == want.shape, f"{what}: shape {got.shape} != {want.shape}"
    if got.dtype == object:  # Python objects (NaN included) compare by repr
        assert list(map(repr, got.flat)) == list(map(repr, want.flat)), what
        return
    np.testing.assert_array_equal(_comparable(got), _comparable(want), err_msg=what)


def assert_outcomes_agree(call, got, want, what):
    (r1, e1, xs1, out1), (r2, e2, xs2, out2) = got, want
    if e1 is not None or e2 is not None:
        if type(e1) is not type(e2) and not (isinstance(e1, ALLOWED) and isinstance(e2, ALLOWED)
                                              and isinstance(e1, ValueError) == isinstance(e2, ValueError)):
            pytest.fail(f"{call!r}: {what} disagree: {e1!r} vs {e2!r}")
        return
    assert_same(r1, r2, f"{call!r}: result, {what}")
    if isinstance(out1, np.ndarray):
        assert r1 is out1, f"{call!r}: returned a new array, not out="
        assert_same(out1, out2, f"{call!r}: out, {what}")
    for a, b in zip(xs1, xs2):
        if isinstance(a, np.ndarray):
            assert_same(a, b, f"{call!r}: an input aliased by out=, {what}")


def numpy_ufunc_outcome(call):
    """NumPy's own answer to a numpy-rule NumPy-style binary call, or None where it has none."""
    if call.ufunc is None or call.kwargs["broadcast"] != "numpy" or any(
            r[0] == "py" and not dtypes.is_python_scalar(r[1]) for r in call.recipes):
        return None  # not comparable, or object operands (NumPy's object loops: out of gpubcast's scope)
    xs, out = call.build()
    kwargs = {} if call.kwargs["dtype"] is None else {"dtype": call.kwargs["dtype"]}
    if call.out is not None:
        kwargs["out"] = out
    try:
        with np.errstate(all="ignore"), warnings.catch_warnings():
            warnings.simplefilter("ignore")
            return call.ufunc(*xs, **kwargs), None, xs, out
    except Exception as e:  # noqa: BLE001 - NumPy's exception, whatever it is, is the outcome compared
        return None, e, xs, out


def negative_int_power(call, xs):
    if call.label != "power":
        return False
    arrays = [np.asarray(x) for x in xs]
    return all(a.dtype.kind in "iub" for a in arrays) and bool(np.any(arrays[1] < 0))


@pytest.mark.parametrize("out_kind", OUT_KINDS)
@FUZZ
@given(data=st.data())
def test_fuzz_numpy_style(out_kind, data):
    check_call(data, numpy_style_call(), out_kind)


@FUZZ
@given(data=st.data())
def test_fuzz_onnx(data):
    check_call(data, onnx_call())


@FUZZ
@given(data=st.data())
def test_fuzz_openvino(data):
    check_call(data, openvino_call())


DEEPER = settings(FUZZ, max_examples=5 * EXAMPLES, derandomize=False)


@pytest.mark.slow
@pytest.mark.parametrize("front", ["numpy_style", "onnx", "openvino"])
@DEEPER
@given(data=st.data())
def test_fuzz_deeper(front, data):
    """``make test-all``: random (not derandomized) examples, five times as many, every front end."""
    calls = {"numpy_style": numpy_style_call, "onnx": onnx_call, "openvino": openvino_call}[front]()
    kind = data.draw(st.sampled_from(OUT_KINDS), label="out kind") if front == "numpy_style" else "none"
    check_call(data, calls, kind)


def check_call(data, calls, out_kind="none"):
    call = data.draw(calls, label="call")
    reference = run(call, "numpy")
    if call.takes_out and out_kind != "none":
        call.out = draw_out(data, out_kind, reference[0], reference[2])
        reference = run(call, "numpy")
    default = run(call, None)
    event(f"{call.label.split('.')[0]}: {type(default[1]).__name__ if default[1] else 'value'}")
    assert_outcomes_agree(call, default, reference, "default backend vs backend='numpy'")
    for path in ("prepared runner", "compiled hot path"):   # the same signature seen again: its hot paths
        assert_outcomes_agree(call, run(call, None), reference, f"default backend's {path} vs backend='numpy'")
    if default[1] is not None:
        return
    numpy = numpy_ufunc_outcome(call)
    if numpy is None or negative_int_power(call, numpy[2]):
        return
    if numpy[1] is not None:
        if isinstance(numpy[1], OverflowError) and any(type(x) is int and not -2**63 <= x < 2**63 for x in numpy[2]):
            return  # NumPy may convert a Python int through int64 first; gpubcast to the loop dtype
        pytest.fail(f"{call!r}: gpubcast returned a value where NumPy raises {numpy[1]!r}")
    assert_outcomes_agree(call, default, numpy, "gpubcast vs NumPy's ufunc")


# --- regressions: one per bug the fuzz found ------------------------------------------------------

BACKENDS = [None, "numpy"]


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("out", [np.float64(2.0), [0.0], "abc", 2.0])
@pytest.mark.parametrize("x", [np.float64(1.0), np.array(1.0), np.ones(3)])
def test_out_that_is_not_an_array_is_a_type_error(x, out, backend):
    # was: Numba TypingError (0-d inputs: "Unknown attribute 'ctypes' of type float64"), AttributeError
    with pytest.raises(TypeError, match=r"^multiply: out= must be an array .*got (float64|list|str|float) "):
        gb.multiply(x, np.float64(3.0), out=out, backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_out_tuple_as_numpy(backend):
    out = np.empty(3)
    assert gb.add(np.ones(3), 2.0, out=(out,), backend=backend) is out  # NumPy takes a tuple of one
    np.testing.assert_array_equal(out, np.full(3, 3.0))
    with pytest.raises(ValueError, match=r"^add: the out= tuple must hold exactly one array .* got 2 entries$"):
        gb.add(np.ones(3), 2.0, out=(out, out), backend=backend)  # was: AttributeError


@pytest.mark.parametrize("backend", BACKENDS)
def test_read_only_out_is_numpys_value_error(backend):
    out = np.empty(3)
    out.flags.writeable = False
    with pytest.raises(ValueError, match=r"^add: output array is read-only$"):
        gb.add(np.ones(3), 1.0, out=out, backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("call,pattern", [
    (lambda be: gb.add(np.ones(3, np.int8), 2**70, backend=be),
     r"Python integer 1180591620717411303424 out of bounds for int8"),
    (lambda be: gb.add(np.ones(3, np.uint64), -1, backend=be), r"Python integer -1 out of bounds for uint64"),
    (lambda be: gv.Add(False, 2**70, backend=be), r"Python integer 1180591620717411303424 out of bounds for int64"),
])
def test_python_int_out_of_bounds_is_numpys_overflow_error(call, pattern, backend):
    # was: "Python int too large to convert to C long" (NumPy's wording for 300: "out of bounds for int8")
    with pytest.raises(OverflowError, match=pattern):
        call(backend)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", ["equal", "not_equal", "less", "less_equal", "greater", "greater_equal"])
@pytest.mark.parametrize("x,y", [(np.array([1, -1, 127], np.int8), 300), (np.arange(3, dtype=np.uint8), -1),
                                 (np.arange(3), 2**70), (-(2**64), np.arange(3, dtype=np.uint64))])
def test_comparison_with_an_out_of_range_python_int_as_numpy(name, x, y, backend):
    # was: OverflowError; NumPy 2 compares exactly
    got = getattr(gb, name)(x, y, backend=backend)
    assert_same(got, getattr(np, name)(x, y), name)


def test_comparison_out_of_range_stays_an_error_where_numpy_raises():
    with pytest.raises(OverflowError, match="out of bounds for int64"):  # a bool array: NumPy's int64 loop
        gb.equal(np.array([True]), 2**70)


@pytest.mark.parametrize("call", [lambda: gb.broadcast_to(2**70, (2,)), lambda: gb.expand(2**70, [2]),
                                  lambda: gv.Broadcast(2**70, [2])])
def test_broadcast_of_a_huge_python_int_as_numpy(call):
    # was: OverflowError "Python int too large to convert to C long"
    assert_same(call(), np.broadcast_to(2**70, (2,)), "huge int")


X = np.ones(3)


@pytest.mark.parametrize("call,error,pattern", [
    (lambda: gb.add(X, X, axis=[1]), TypeError, r"^broadcast \(numpy\): axis must be an int, got list \[1\]$"),
    (lambda: gb.add(X, X, broadcast="pdpd", axis="1"),
     TypeError, r"^broadcast \(pdpd, axis='1'\): axis must be an int, got str '1'$"),
    (lambda: gb.broadcast_to(X, (2, 3), mode="explicit", axes_mapping=1),
     TypeError, r"^broadcast \(explicit, axes_mapping=1\): axes_mapping must be a sequence of ints, got int$"),
    (lambda: gv.Broadcast(X, [2, 3], axes_mapping=[[1]], mode="explicit"),
     TypeError, r"^broadcast \(explicit, axes_mapping=\[\[1\]\]\): axes_mapping must be a sequence of ints"),
    (lambda: gb.broadcast_to(X, (2, 3), mode="explicit", axes_mapping=[True]),
     TypeError, r"axes_mapping must be a sequence of ints, got \[True\]$"),
    (lambda: gb.broadcast_to(X, (2, 3), mode=["numpy"]), ValueError, r"^mode=\['numpy'\] is not a broadcast_to mode"),
    (lambda: gb.broadcast_shapes((3,), (2, 3), rule=["numpy"]), ValueError, r"^unknown broadcast rule \['numpy'\]"),
    (lambda: gb.plan((3,), (2, 3), rule="explicit", axes_mapping=5),
     TypeError, r"^broadcast \(explicit, axes_mapping=5\): axes_mapping must be a sequence of ints"),
    (lambda: gb.add(X, X, dtype=object), TypeError, r"^add: dtype=object is not a type gpubcast computes in"),
    (lambda: gb.divide(np.zeros(2, np.int8), 0, dtype=object, backend="numpy"),
     TypeError, r"^divide: dtype=object is not a type"),
])
def test_option_errors_say_what_is_wrong(call, error, pattern):
    # was: "unhashable type: 'list'", "'int' object is not iterable", ZeroDivisionError / AttributeError
    # from NumPy's object loop
    with pytest.raises(error, match=pattern):
        call()


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("call,pattern", [
    (lambda be: gb.logical_xor(np.array(True), None, backend=be),
     r"^logical_xor: computing on object elements failed with AttributeError: "),
    (lambda be: gb.floor_divide(np.array([1], object), 0, backend=be),
     r"^floor_divide: computing on object elements failed with ZeroDivisionError: "),
])
def test_object_loop_errors_are_type_errors(call, pattern, backend):
    # was: NumPy's object loop's own AttributeError / ZeroDivisionError
    with pytest.raises(TypeError, match=pattern):
        call(backend)
