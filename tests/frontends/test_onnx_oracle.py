"""gpubcast.onnx against ONNX Runtime as the oracle, on seeded random cases of every operator.

Each case is a one-node model built in memory with onnx.helper; ONNX Runtime
runs it, and gpubcast computes it twice: through the ``gpubcast.onnx`` function
and through ``gpubcast.onnx.backend`` on the same model.  Shapes are random
multidirectional (Where, Max ... Sum: several operands), unidirectional (PRelu's
slope, Gemm's C) and bidirectional (Expand) broadcasts, rank 0..4, zero-size
dims included; the dtypes are those ONNX Runtime's CPU provider implements for
the operator.  Shapes that a rule rejects must raise in both.

Values stay where ONNX Runtime defines them (no integer division by zero, no
INT_MIN / -1: it raises or dies of SIGFPE there); those cases, and every other
place where it departs from the ONNX specification, are pinned at the end of
this file and listed in docs/guide/differences.md.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import zlib

import ml_dtypes
import numpy as np
import onnx
import onnxruntime as ort
import pytest
from onnx import helper
from onnxruntime.capi.onnxruntime_pybind11_state import Fail as OrtFail, InvalidArgument as OrtInvalidArgument

import gpubcast
import gpubcast.onnx as gx
from gpubcast.onnx.backend import GpubcastBackend

from tests.support.sampling import one_dtype_per_op, sampled

#: ONNX Runtime 1.31 runs opsets <= 26; 21 has the current version of every operator here except
#: Mod (28: float fmod=0) and BitShift (28: signed types), which ONNX Runtime does not implement
OPSET = 21

INTS = ("int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64")
FLOATS = ("float16", "float32", "float64")
#: ONNX Runtime's CPU kernels (probed: ort 1.31)
ORT_TYPES = {
    **dict.fromkeys(("Add", "Sub", "Mul", "Div", "Greater", "Less", "GreaterOrEqual", "LessOrEqual"), INTS + FLOATS),
    "Equal": INTS + FLOATS + ("bool",),
    **dict.fromkeys(("And", "Or", "Xor"), ("bool",)),
    **dict.fromkeys(("BitwiseAnd", "BitwiseOr", "BitwiseXor"), INTS),
    **dict.fromkeys(("Max", "Min"), ("int8", "int32", "int64", "uint8", "uint32", "uint64") + FLOATS),
    "Mean": ("float16", "float32"),
    "Sum": FLOATS,
    "Where": ("int8", "int32", "int64", "uint8", "uint32") + FLOATS,
    "Expand": INTS + FLOATS + ("bool",),
    "PRelu": ("float16", "float32"),
    "Gemm": FLOATS,
    "BitShift": ("uint8", "uint32", "uint64"),
}
RTOL = {"float16": 2e-3, "float32": 2e-6, "float64": 1e-12}

_SESSION = ort.SessionOptions()
_SESSION.intra_op_num_threads = _SESSION.inter_op_num_threads = 1
_SESSION.log_severity_level = 4


# --- models and the two runtimes -----------------------------------------------

def one_node_model(op, arrays, output=None, opset=OPSET, **attributes):
    """A model of one ``op`` node over inputs x0, x1, ... (``None``: an omitted optional input)."""
    names = [f"x{i}" if a is not None else "" for i, a in enumerate(arrays)]
    inputs = [helper.make_tensor_value_info(n, helper.np_dtype_to_tensor_dtype(a.dtype), a.shape)
              for n, a in zip(names, arrays) if a is not None]
    if output is None:  # ONNX Runtime infers it; onnx.checker (gpubcast's prepare) wants it spelled out
        out = onnx.ValueInfoProto(name="y")
    else:
        out = helper.make_tensor_value_info("y", helper.np_dtype_to_tensor_dtype(output.dtype), output.shape)
    graph = helper.make_graph([helper.make_node(op, names, ["y"], **attributes)], op, inputs, [out])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
    model.ir_version = 10
    return model


def feeds(arrays):
    return {f"x{i}": a for i, a in enumerate(arrays) if a is not None}


def ort_run(op, arrays, opset=OPSET, **attributes):
    model = one_node_model(op, arrays, opset=opset, **attributes)
    session = ort.InferenceSession(model.SerializeToString(), _SESSION, providers=["CPUExecutionProvider"])
    return session.run(None, feeds(arrays))[0]


def assert_same(actual, expected, what=""):
    assert isinstance(actual, np.ndarray), what
    assert actual.shape == expected.shape, what
    assert actual.dtype == expected.dtype, what
    if expected.dtype.kind == "f":
        rtol = RTOL[expected.dtype.name]
        np.testing.assert_allclose(actual, expected, rtol=rtol, atol=rtol, equal_nan=True, err_msg=what)
    else:
        np.testing.assert_array_equal(actual, expected, err_msg=what)


def check(op, arrays, call, **attributes):
    """ONNX Runtime, the gpubcast.onnx function ``call`` and gpubcast.onnx.backend agree on ``arrays``."""
    expected = ort_run(op, arrays, **attributes)
    what = f"{op}{attributes} on {[None if a is None else (a.dtype.name, a.shape) for a in arrays]}"
    assert_same(call(), expected, what)
    model = one_node_model(op, arrays, output=expected, **attributes)
    (through_backend,) = GpubcastBackend.run_model(model, [a for a in arrays if a is not None])
    assert_same(through_backend, expected, what + " (backend)")


def check_both_reject(op, arrays, call, **attributes):
    with pytest.raises((OrtFail, OrtInvalidArgument)):  # at shape inference, or at run time (Expand, Gemm)
        ort_run(op, arrays, **attributes)
    with pytest.raises(gpubcast.BroadcastError):
        call()


# --- seeded random cases ---------------------------------------------------------

def rng_for(*key):
    """A generator seeded by the test's parameters (stable across runs and processes)."""
    return np.random.default_rng(zlib.crc32(repr(key).encode()))


def dtype_of(name):
    return np.dtype(ml_dtypes.bfloat16) if name == "bfloat16" else np.dtype(name)


def values(rng, shape, dtype, low=-6, high=7, nonzero=False):
    dtype = dtype_of(dtype)
    if dtype.kind == "b":
        return np.asarray(rng.random(shape) < 0.5)
    if dtype.kind in "iu":
        info = np.iinfo(dtype)
        x = np.asarray(rng.integers(max(low, info.min), min(high, info.max), size=shape, endpoint=True), dtype)
    else:  # multiples of 1/4: exact in every float type, with ties for the comparisons
        x = np.asarray(rng.integers(4 * low, 4 * high, size=shape, endpoint=True) / 4, dtype)
    if nonzero:
        x[x == 0] = 1
    return x


def multidirectional(rng, n, max_rank=4, max_dim=4):
    """``n`` shapes that broadcast together (each a random suffix of one shape, with random 1s)."""
    rank = int(rng.integers(0, max_rank + 1))
    out = [int(d) for d in rng.integers(1, max_dim + 1, size=rank)]
    if rank and rng.random() < 0.1:
        out[int(rng.integers(rank))] = 0
    shapes = []
    for _ in range(n):
        r = int(rng.integers(0, rank + 1))
        shapes.append(tuple(d if rng.random() < 0.6 else 1 for d in out[rank - r:]))
    rng.shuffle(shapes)
    return shapes


def unidirectional(rng, max_rank=4):
    """(target, other): ``other`` broadcasts to ``target`` and never grows it."""
    target = multidirectional(rng, 1, max_rank)[0]
    target = tuple(d if d else 2 for d in target)
    r = int(rng.integers(0, len(target) + 1))
    return target, tuple(d if rng.random() < 0.6 else 1 for d in target[len(target) - r:])


def mismatched(rng, n):
    """``n`` shapes that do not broadcast together."""
    while True:
        shapes = [tuple(int(d) for d in rng.integers(1, 4, size=int(rng.integers(1, 4)))) for _ in range(n)]
        try:
            np.broadcast_shapes(*shapes)
        except ValueError:
            return shapes


CASES = 10  # random cases per (operator, dtype)

BINARY = ("Add", "Sub", "Mul", "Div", "Equal", "Greater", "Less", "GreaterOrEqual", "LessOrEqual",
          "And", "Or", "Xor", "BitwiseAnd", "BitwiseOr", "BitwiseXor")


BINARY_CASES = [(op, t) for op in BINARY for t in ORT_TYPES[op]]


#: by default each operator with one of its types (rotating) and Add with every type; the rest slow
@pytest.mark.parametrize("op,dtype", sampled(BINARY_CASES, one_dtype_per_op(BINARY_CASES, every_dtype=("Add",)),
                                             [f"{o}-{t}" for o, t in BINARY_CASES]))
def test_binary(op, dtype):
    rng = rng_for(op, dtype)
    for _ in range(CASES):
        a_shape, b_shape = multidirectional(rng, 2)
        a = values(rng, a_shape, dtype, low=-3, high=3)
        b = values(rng, b_shape, dtype, low=-3, high=3, nonzero=(op == "Div"))
        check(op, [a, b], lambda: getattr(gx, op)(a, b))
    for a_shape, b_shape in (mismatched(rng, 2) for _ in range(2)):
        a, b = values(rng, a_shape, dtype), values(rng, b_shape, dtype, nonzero=True)
        check_both_reject(op, [a, b], lambda: getattr(gx, op)(a, b))


# fmod=0 on floats: ONNX Runtime implements only Mod-13, which rejects it (see the differences below)
@pytest.mark.parametrize("dtype,fmod", [(t, 0) for t in INTS] + [(t, 1) for t in INTS + FLOATS])
def test_mod(dtype, fmod):
    rng = rng_for("Mod", dtype, fmod)
    for _ in range(CASES):
        a_shape, b_shape = multidirectional(rng, 2)
        a, b = values(rng, a_shape, dtype, -20, 20), values(rng, b_shape, dtype, -6, 6, nonzero=True)
        check("Mod", [a, b], lambda: gx.Mod(a, b, fmod=fmod), fmod=fmod)


POW_TYPES = [(t, t) for t in ("int32", "int64") + FLOATS] + [
    ("float32", "int32"), ("float32", "int64"), ("float64", "int32"), ("int32", "float32"),
    ("int64", "float32"), ("int64", "float64"), ("float32", "float64"), ("int32", "int64")]


@pytest.mark.parametrize("base,exponent", POW_TYPES)
def test_pow(base, exponent):
    rng = rng_for(base, exponent)
    for _ in range(CASES):
        a_shape, b_shape = multidirectional(rng, 2)
        x = values(rng, a_shape, base, -4, 4)
        if dtype_of(base).kind == "f":
            x = np.asarray(np.abs(x) + dtype_of(base).type(0.5))  # no NaN from a negative base to a fractional power
        y = values(rng, b_shape, exponent, 0 if dtype_of(exponent).kind in "iu" else -2, 4)
        check("Pow", [x, y], lambda: gx.Pow(x, y))


VARIADIC_CASES = [(op, t) for op in ("Max", "Min", "Mean", "Sum") for t in ORT_TYPES[op]]


@pytest.mark.parametrize("op,dtype", sampled(VARIADIC_CASES, one_dtype_per_op(VARIADIC_CASES, every_dtype=("Sum",)),
                                             [f"{o}-{t}" for o, t in VARIADIC_CASES]))
def test_variadic(op, dtype):
    rng = rng_for(op, dtype)
    for _ in range(CASES):
        arrays = [values(rng, s, dtype) for s in multidirectional(rng, int(rng.integers(1, 5)))]
        check(op, arrays, lambda: getattr(gx, op)(*arrays))
    arrays = [values(rng, s, dtype) for s in mismatched(rng, 3)]
    check_both_reject(op, arrays, lambda: getattr(gx, op)(*arrays))


@pytest.mark.parametrize("dtype", ORT_TYPES["Where"])
def test_where(dtype):
    rng = rng_for("Where", dtype)
    for _ in range(CASES):
        c_shape, x_shape, y_shape = multidirectional(rng, 3)
        c, x, y = values(rng, c_shape, "bool"), values(rng, x_shape, dtype), values(rng, y_shape, dtype)
        check("Where", [c, x, y], lambda: gx.Where(c, x, y))
    c_shape, x_shape, y_shape = mismatched(rng, 3)
    c, x, y = values(rng, c_shape, "bool"), values(rng, x_shape, dtype), values(rng, y_shape, dtype)
    check_both_reject("Where", [c, x, y], lambda: gx.Where(c, x, y))


@pytest.mark.parametrize("dtype", ORT_TYPES["Expand"])
def test_expand(dtype):
    rng = rng_for("Expand", dtype)
    for _ in range(CASES):
        in_shape, target = multidirectional(rng, 2)
        x, shape = values(rng, in_shape, dtype), np.array(target, dtype=np.int64)
        check("Expand", [x, shape], lambda: gx.Expand(x, shape))
    in_shape, target = mismatched(rng, 2)
    x, shape = values(rng, in_shape, dtype), np.array(target, dtype=np.int64)
    check_both_reject("Expand", [x, shape], lambda: gx.Expand(x, shape))


@pytest.mark.parametrize("dtype", ORT_TYPES["PRelu"])
def test_prelu(dtype):
    rng = rng_for("PRelu", dtype)
    for _ in range(CASES):
        x_shape, slope_shape = unidirectional(rng)
        x, slope = values(rng, x_shape, dtype), values(rng, slope_shape, dtype)
        check("PRelu", [x, slope], lambda: gx.PRelu(x, slope))


@pytest.mark.parametrize("dtype", ORT_TYPES["Gemm"])
def test_gemm(dtype):
    rng = rng_for("Gemm", dtype)
    for _ in range(4 * CASES):
        m, k, n = (int(d) for d in rng.integers(1, 5, size=3))
        trans_a, trans_b = (int(t) for t in rng.integers(0, 2, size=2))
        alpha, beta = (float(v) for v in rng.choice([1.0, 0.5, -2.0, 0.0], size=2))
        a = values(rng, (k, m) if trans_a else (m, k), dtype, -3, 3)
        b = values(rng, (n, k) if trans_b else (k, n), dtype, -3, 3)
        c_shape = [None, (), (n,), (1, n), (m, 1), (m, n), (1, 1)][int(rng.integers(7))]
        c = None if c_shape is None else values(rng, c_shape, dtype, -3, 3)
        attributes = dict(alpha=alpha, beta=beta, transA=trans_a, transB=trans_b)
        check("Gemm", [a, b, c], lambda: gx.Gemm(a, b, c, **attributes), **attributes)
    a, b, c = values(rng, (2, 3), dtype), values(rng, (3, 4), dtype), values(rng, (2, 4, 1), dtype)
    check_both_reject("Gemm", [a, b, c], lambda: gx.Gemm(a, b, c))


@pytest.mark.parametrize("dtype", ORT_TYPES["BitShift"])
@pytest.mark.parametrize("direction", ["LEFT", "RIGHT"])
def test_bitshift(dtype, direction):
    rng = rng_for("BitShift", dtype, direction)
    bits = np.iinfo(dtype).bits
    for _ in range(CASES):
        x_shape, y_shape = multidirectional(rng, 2)
        x = np.asarray(rng.integers(0, np.iinfo(dtype).max, size=x_shape, dtype=dtype, endpoint=True))
        y = np.asarray(rng.integers(0, bits - 1, size=y_shape, endpoint=True), dtype)
        check("BitShift", [x, y], lambda: gx.BitShift(x, y, direction=direction), direction=direction)


@pytest.mark.parametrize("op", ["Add", "Div", "Equal", "Max", "Where", "PRelu", "Gemm"])
def test_mixed_types_raise_in_both(op):
    a, b = np.ones((2, 2), np.float32), np.ones((2, 2), np.float64)
    arrays = [np.ones((2, 2), bool), a, b] if op == "Where" else [a, b]
    with pytest.raises(Exception, match="(?i)type"):
        ort_run(op, arrays)
    with pytest.raises(TypeError, match=f"{op}: type constraint T needs one element type"):
        getattr(gx, op)(*arrays)


#: Clip's bounds (None: omitted), the float ones with NaN and infinities; the ints on every integer type
CLIP_BOUNDS = [(None, None), (None, 1), (0, None), (0, 1), (3, 1), (-1, -1)]
CLIP_FLOAT_BOUNDS = [(np.nan, 1), (-1, np.nan), (np.nan, np.nan), (-np.inf, 1), (1, np.inf), (np.inf, -np.inf),
                     (None, -np.inf), (-0.0, 0.0)]
CLIP_TYPES = ("int8", "int32", "int64", "uint8", "uint64") + FLOATS


@pytest.mark.parametrize("dtype", CLIP_TYPES)
def test_clip(dtype):
    """Clip-13 with its bounds as inputs: an omitted bound is T's lowest / highest value (so +-inf become
    finite), a NaN bound bounds nothing, min > max gives max; by the function (0-d arrays and Python
    scalars) and the backend."""
    dt = np.dtype(dtype)
    if dt.kind == "f":
        x = np.array([-5, -1.5, -0.0, 0, 1, 2.5, np.nan, np.inf, -np.inf, np.finfo(dt).max], dt)
        cases = CLIP_BOUNDS + CLIP_FLOAT_BOUNDS
    else:
        info = np.iinfo(dt)
        x = np.array([info.min, 0, 1, 3, 100, info.max], dt)
        cases = CLIP_BOUNDS if info.min else [(lo, hi) for lo, hi in CLIP_BOUNDS if (lo or 0) >= 0 <= (hi or 0)]
    for lo, hi in cases:
        bounds = [None if b is None else np.array(b, dt) for b in (lo, hi)]
        while bounds and bounds[-1] is None:
            bounds.pop()
        arrays = [x, *bounds]
        expected = ort_run("Clip", arrays, opset=13)
        check("Clip", arrays, lambda: gx.Clip(*arrays))
        scalars = [None if b is None else (float(b) if dt.kind == "f" else int(b)) for b in bounds]
        assert_same(gx.Clip(x, *scalars), expected, f"Clip({dtype}, {scalars}) with Python scalar bounds")


def test_clip_with_bounds_computed_in_a_fused_chain():
    """Clip after Relu, its bounds graph inputs (traced values in the fused chain): a NaN bound still bounds
    nothing, an omitted one is float's lowest."""
    x = np.array([-3, -0.5, 0, 0.5, 2, np.inf, np.nan], np.float32)
    f32 = onnx.TensorProto.FLOAT
    graph = helper.make_graph(
        [helper.make_node("Relu", ["x"], ["r"]), helper.make_node("Neg", ["r"], ["n"]),
         helper.make_node("Clip", ["n", "lo"], ["y"])], "chain",
        [helper.make_tensor_value_info(n, f32, s) for n, s in (("x", x.shape), ("lo", ()))],
        [helper.make_tensor_value_info("y", f32, x.shape)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    model.ir_version = 10
    session = ort.InferenceSession(model.SerializeToString(), _SESSION, providers=["CPUExecutionProvider"])
    rep = GpubcastBackend.prepare(model)
    for lo in (np.nan, -1.0, -np.inf):
        feed = {"x": x, "lo": np.array(lo, np.float32)}
        expected = session.run(None, feed)[0]
        assert_same(rep.run([x, feed["lo"]])[0], expected, f"lo={lo}")


def test_clip_on_the_cuda_device(cupy):
    x = np.array([-5, 0, 2.5, np.nan, np.inf, -np.inf], np.float32)
    for lo, hi in ((np.nan, 1), (0, np.nan), (None, 1), (3, 1)):
        bounds = [None if b is None else np.array(b, np.float32) for b in (lo, hi)]
        expected = gx.Clip(x, *bounds)
        got = gx.Clip(cupy.asarray(x), *(None if b is None else cupy.asarray(b) for b in bounds))
        assert_same(cupy.asnumpy(got), expected, f"cuda Clip({lo}, {hi})")


def test_clip_python_int_bounds_must_fit_the_type():
    x = np.arange(-2, 3, dtype=np.int8)
    for bounds in ((1000, None), (None, 1000), (-1000, 0), (0, -1000)):
        with pytest.raises(OverflowError, match=r"Clip: (min|max)=-?1000 is out of range of tensor\(int8\)"):
            gx.Clip(x, *bounds)


@pytest.mark.parametrize("dtype", ["float16", "float32"])
def test_clip_6_attributes(dtype):
    """Clip-6 (opset 6..10) takes its bounds as float attributes, +-FLT_MAX when omitted (float16's +-inf);
    ONNX Runtime refuses a node with min > max or a NaN bound, so does the backend."""
    x = np.array([6e4, -np.inf, np.inf, 0.5, np.nan, -2.0], dtype)
    for attributes in ({}, {"min": 0.0}, {"max": 1.0}, {"min": -1.0, "max": 1.0}, {"min": -np.inf}):
        expected = ort_run("Clip", [x], opset=10, **attributes)
        model = one_node_model("Clip", [x], output=expected, opset=10, **attributes)
        assert_same(GpubcastBackend.run_model(model, [x])[0], expected, f"Clip-6 {attributes}")
    for attributes in ({"min": 3.0, "max": 1.0}, {"min": np.nan}, {"max": np.nan}):
        with pytest.raises(OrtFail):
            ort_run("Clip", [x], opset=10, **attributes)
        model = one_node_model("Clip", [x], output=x, opset=10, **attributes)
        with pytest.raises(ValueError, match=r"Clip-6's attributes need min <= max"):
            GpubcastBackend.prepare(model)


# --- where ONNX Runtime departs from the ONNX specification (each in docs/guide/differences.md) ----

def test_difference_prelu_slope_is_unidirectional():
    """ONNX Runtime broadcasts PRelu's slope both ways; the spec (and gpubcast) only towards X."""
    x = -np.ones((3, 1), np.float32)
    slope = np.arange(12, dtype=np.float32).reshape(3, 4)
    assert ort_run("PRelu", [x, slope]).shape == (3, 4)          # the result grew beyond X
    with pytest.raises(gpubcast.BroadcastError, match="unidirectional"):
        gx.PRelu(x, slope)


def test_difference_mod_fmod_0_on_floats():
    """Mod-28 defines fmod=0 on floats (the divisor's sign); ONNX Runtime (Mod-13) rejects it."""
    a, b = np.array([-4.3, 7.2, 5.0], np.float32), np.array([2.1, -3.4, 8.0], np.float32)
    with pytest.raises(Exception, match="fmod attribute must be true"):
        ort_run("Mod", [a, b], fmod=0)
    np.testing.assert_array_equal(gx.Mod(a, b), np.mod(a, b))


def test_difference_integer_division_and_modulo_by_zero():
    """ONNX Runtime raises on integer x / 0 and x % 0; gpubcast gives 0 (API contract)."""
    a, b = np.array([7, -7], np.int32), np.array([0, 0], np.int32)
    for op in ("Div", "Mod"):
        with pytest.raises(Exception, match="by zero"):
            ort_run(op, [a, b])
        np.testing.assert_array_equal(getattr(gx, op)(a, b), [0, 0])


@pytest.mark.parametrize("op", ["Div", "Mod"])
def test_difference_int_min_divided_by_minus_one(op):
    """ONNX Runtime dies of SIGFPE on INT_MIN / -1 and INT_MIN % -1 (int32); gpubcast gives INT_MIN and 0."""
    script = textwrap.dedent(f"""
        import numpy as np, onnxruntime as ort
        from onnx import TensorProto, helper
        x = [helper.make_tensor_value_info(n, TensorProto.INT32, [1]) for n in "ab"]
        y = helper.make_tensor_value_info("y", TensorProto.INT32, [1])
        graph = helper.make_graph([helper.make_node("{op}", ["a", "b"], ["y"])], "g", x, [y])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", {OPSET})], ir_version=10)
        session = ort.InferenceSession(model.SerializeToString(), providers=["CPUExecutionProvider"])
        print(session.run(None, {{"a": np.array([-2**31], np.int32), "b": np.array([-1], np.int32)}}))
    """)
    child = subprocess.run([sys.executable, "-c", script], capture_output=True, timeout=120)
    assert child.returncode != 0, f"ONNX Runtime now survives INT_MIN {op} -1: update docs/guide/differences.md"
    expected = [-2**31] if op == "Div" else [0]
    np.testing.assert_array_equal(getattr(gx, op)(np.array([-2**31], np.int32), np.array([-1], np.int32)), expected)


def test_difference_integer_zero_to_a_negative_power():
    """ONNX Runtime computes 0 ** -1 in floating point and casts inf to INT_MIN; gpubcast gives 0."""
    x, y = np.array([0, 2, 1, -1], np.int32), np.array([-1, -1, -3, -3], np.int32)
    np.testing.assert_array_equal(ort_run("Pow", [x, y]), [np.iinfo(np.int32).min, 0, 1, -1])
    np.testing.assert_array_equal(gx.Pow(x, y), [0, 0, 1, -1])


def test_feeds_are_checked_against_the_declared_rank_and_static_dims_like_onnx_runtime():
    # x: float [2, N, 4] (N symbolic), y: float [K]; ONNX Runtime decides which
    # feeds run, gpubcast must agree, and name the input, the declared and the given shape.
    graph = helper.make_graph(
        [helper.make_node("Add", ["x", "y"], ["z"])], "feeds",
        [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, [2, "N", 4]),
         helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, ["K"])],
        [helper.make_tensor_value_info("z", onnx.TensorProto.FLOAT, [2, "N", 4])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", OPSET)])
    model.ir_version = 10
    session = ort.InferenceSession(model.SerializeToString(), _SESSION, providers=["CPUExecutionProvider"])
    rep = GpubcastBackend.prepare(model)
    for shape, y in [((2, 5, 4), (4,)), ((2, 0, 4), (1,)), ((2, 1, 4), (4,)),          # accepted
                     ((3, 5, 4), (4,)), ((2, 5, 3), (4,)), ((2, 4), (4,)), ((1, 2, 5, 4), (4,))]:  # refused
        x = np.ones(shape, np.float32)
        yv = np.full(y, 2.0, np.float32)
        try:
            want = session.run(None, {"x": x, "y": yv})[0]
        except Exception as e:  # noqa: BLE001 - ONNX Runtime's own error types
            assert "dimension" in str(e) or "rank" in str(e), e
            with pytest.raises(ValueError, match=rf"input 'x' has shape \({shape[0]}, .*declares"):
                rep.run({"x": x, "y": yv})
            continue
        assert_same(rep.run({"x": x, "y": yv})[0], want)
