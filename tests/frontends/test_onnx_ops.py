"""gpubcast.onnx's operators and gpubcast.onnx.backend: ONNX's type constraints, the integer edge
cases of the API contract, attributes, one pass per operator, and the backend's model handling.

Values are checked against NumPy written out by hand from the ONNX specification; the cross-checks
against ONNX Runtime are in test_onnx_oracle.py, the official node tests in test_onnx_node.py.
"""

from __future__ import annotations

import ml_dtypes
import numpy as np
import onnx
import pytest
from onnx import TensorProto, helper, numpy_helper

import gpubcast
import gpubcast.onnx as gx
from gpubcast import backends, dispatch
from gpubcast.onnx import backend as onnx_backend
from gpubcast.onnx.backend import GpubcastBackend
from gpubcast.testing.device import gpu_available

SIGNED = ("int8", "int16", "int32", "int64")
UNSIGNED = ("uint8", "uint16", "uint32", "uint64")
f32 = np.float32


@pytest.fixture
def applied(monkeypatch):
    """The registry ops every gpubcast.onnx call runs, with the ``backend=`` each one was given."""
    calls = []
    real = dispatch.apply

    def spy(op, inputs, **kwargs):
        calls.append((op.name, kwargs.get("backend")))
        return real(op, inputs, **kwargs)

    monkeypatch.setattr(gx, "apply", spy)
    monkeypatch.setattr(gpubcast.api, "apply", spy)
    monkeypatch.setattr(gpubcast.onnx.constraints, "apply", spy)   # the operators' hot path (hot_path)
    return calls


# --- type constraints -------------------------------------------------------------------

MIXED = {  # operator -> inputs whose types differ where ONNX binds one T
    "Add": (np.ones(2, np.int32), np.ones(2, f32)),
    "Div": (np.ones(2, np.int64), np.ones(2, np.int32)),
    "Equal": (np.ones(2, bool), np.ones(2, np.int8)),
    "And": (np.ones(2, bool), np.ones(2, np.uint8)),
    "BitwiseXor": (np.ones(2, np.uint8), np.ones(2, np.int8)),
    "Max": (np.ones(2, f32), np.ones(2, f32), np.ones(2, np.float64)),
    "Sum": (np.ones(2, np.float16), np.ones(2, f32)),
    "Where": (np.ones(2, bool), np.ones(2, f32), np.ones(2, np.float16)),
    "PRelu": (np.ones(2, f32), np.ones(2, np.float64)),
    "Gemm": (np.ones((2, 2), f32), np.ones((2, 2), f32), np.ones(2, np.float64)),
    "Mod": (np.ones(2, np.int16), np.ones(2, np.uint16)),
    "BitShift": (np.ones(2, np.uint8), np.ones(2, np.uint16)),
}


@pytest.mark.parametrize("op", sorted(MIXED))
def test_inputs_bound_to_one_type_must_share_it(op):
    kwargs = {"direction": "LEFT"} if op == "BitShift" else {}
    with pytest.raises(TypeError, match=rf"^{op}: type constraint T needs one element type .* is tensor\("):
        getattr(gx, op)(*MIXED[op], **kwargs)


DISALLOWED = [  # (operator, inputs of a type outside its constraint)
    ("Add", (np.ones(2, bool),) * 2), ("Add", (np.ones(2, np.complex64),) * 2),
    ("Sum", (np.ones(2, np.int32),) * 2), ("Mean", (np.ones(2, np.int64),)),
    ("And", (np.ones(2, np.int32),) * 2), ("Greater", (np.ones(2, bool),) * 2),
    ("BitwiseAnd", (np.ones(2, f32),) * 2), ("Max", (np.ones(2, bool),) * 2),
    ("PRelu", (np.ones(2, np.int8),) * 2), ("Gemm", (np.ones((2, 2), np.int16),) * 2),
    ("Pow", (np.ones(2, np.uint8), np.ones(2, np.uint8))), ("Where", (np.ones(2, np.int8),) * 3),
    ("Less", (np.array(["a", "b"]),) * 2),
]


@pytest.mark.parametrize("op,inputs", DISALLOWED, ids=[f"{op}-{x[0].dtype}" for op, x in DISALLOWED])
def test_types_outside_the_constraint_raise(op, inputs):
    with pytest.raises(TypeError, match=rf"^{op}: tensor\(.*\) input .* is not allowed by type constraint .*; "
                                        r"ONNX allows tensor\("):
        getattr(gx, op)(*inputs)


def test_python_scalars_take_the_arrays_type():
    assert gx.Add(np.array([250], np.uint8), 10).dtype == np.uint8
    np.testing.assert_array_equal(gx.Add(np.array([250], np.uint8), 10), [4])   # wraps, as uint8 does
    assert gx.Mul(np.ones(2, np.float16), 2.5).dtype == np.float16
    assert gx.Sum(np.ones(2, f32), 1.0, 2.0).dtype == f32
    assert gx.Equal(np.array(["a", "b"], dtype=object), "a").tolist() == [True, False]
    with pytest.raises(TypeError, match="Sum: tensor\\(int64\\)"):
        gx.Sum(1, 2)  # two Python ints are int64, which Sum does not take


def test_lists_are_tensors():
    np.testing.assert_array_equal(gx.Sub([[5, 6]], [1, 2]), [[4, 4]])


@pytest.mark.parametrize("op", ["Equal", "Greater", "Less", "GreaterOrEqual", "LessOrEqual"])
@pytest.mark.parametrize("dtype", ["int8", "uint64", "float16", "float64", "bfloat16"])
def test_comparisons_return_bool(op, dtype):
    dtype = np.dtype(ml_dtypes.bfloat16) if dtype == "bfloat16" else np.dtype(dtype)
    a, b = np.array([1, 2, 3], dtype), np.array([[2], [1]], dtype)
    reference = {"Equal": np.equal, "Greater": np.greater, "Less": np.less,
                 "GreaterOrEqual": np.greater_equal, "LessOrEqual": np.less_equal}[op]
    result = getattr(gx, op)(a, b)
    assert result.dtype == bool
    np.testing.assert_array_equal(result, reference(a.astype(f32), b.astype(f32)))


# --- integer edge cases (API.md: the ONNX namespace) --------------------------------------

@pytest.mark.parametrize("dtype", SIGNED + UNSIGNED)
def test_div_truncates_and_never_crashes(dtype):
    info = np.iinfo(dtype)
    if dtype in SIGNED:
        a = np.array([7, -7, 7, -7, 5, -5, info.min, info.min, info.max], dtype)
        b = np.array([2, 2, -2, -2, 0, 0, -1, 1, 0], dtype)
        expected = [3, -3, -3, 3, 0, 0, info.min, info.min, 0]
    else:
        a = np.array([7, info.max, 0, 5], dtype)
        b = np.array([2, 2, 0, 0], dtype)
        expected = [3, info.max // 2, 0, 0]
    result = gx.Div(a, b)
    assert result.dtype == dtype
    np.testing.assert_array_equal(result, np.array(expected, dtype))


@pytest.mark.parametrize("dtype", SIGNED)
def test_mod_signs_and_zero_divisor(dtype):
    info = np.iinfo(dtype)
    a = np.array([7, -7, 7, -7, 5, -5, info.min], dtype)
    b = np.array([3, 3, -3, -3, 0, 0, -1], dtype)
    np.testing.assert_array_equal(gx.Mod(a, b), np.array([1, 2, -2, -1, 0, 0, 0], dtype))          # divisor's sign
    np.testing.assert_array_equal(gx.Mod(a, b, fmod=1), np.array([1, -1, 1, -1, 0, 0, 0], dtype))  # dividend's
    assert gx.Mod(a, b).dtype == dtype


def test_mod_fmod_0_on_floats_follows_mod_28():
    """Mod-28: fmod=0 on floats is A - floor(A / B) * B, with the special cases the spec lists."""
    inf, nan = np.inf, np.nan
    x = np.array([-0.0, 0.0, 5.0, inf, 5.0, 5.0, -5.0, 5.0, nan, -4.3], np.float64)
    y = np.array([3.0, -3.0, 0.0, 2.0, inf, -inf, inf, nan, 2.0, 2.1], np.float64)
    result = gx.Mod(x, y)
    expected = np.array([0.0, -0.0, nan, nan, 5.0, -inf, inf, nan, nan, np.mod(-4.3, 2.1)])
    np.testing.assert_array_equal(result, expected)
    np.testing.assert_array_equal(np.signbit(result[:2]), [False, True])     # +-0 takes the divisor's sign
    with np.errstate(invalid="ignore"):
        np.testing.assert_array_equal(gx.Mod(x[:3], y[:3], fmod=1), np.fmod(x[:3], y[:3]))


def test_mod_rejects_other_fmod_values():
    with pytest.raises(ValueError, match="Mod: fmod must be 0 or 1, got 2"):
        gx.Mod(np.ones(2, np.int32), np.ones(2, np.int32), fmod=2)


def test_pow_keeps_the_base_type():
    np.testing.assert_array_equal(gx.Pow(np.array([4, 2, 9], np.int32), np.array([0.5], f32)), [2, 1, 3])
    assert gx.Pow(np.array([4, 2, 9], np.int32), np.array([0.5], f32)).dtype == np.int32
    result = gx.Pow(np.array([2.0, 3.0], f32), np.array([3, -1], np.int64))
    assert result.dtype == f32
    np.testing.assert_allclose(result, [8.0, 1 / 3], rtol=1e-7)
    assert gx.Pow(np.array([2], np.int64), 3).dtype == np.int64
    x, y = np.array([1, -1, -1, 2, 0], np.int32), np.array([-3, -3, -2, -1, -1], np.int32)
    np.testing.assert_array_equal(gx.Pow(x, y), [1, -1, 1, 0, 0])


@pytest.mark.parametrize("dtype", SIGNED)
def test_bitshift_28_out_of_range_shifts(dtype):
    bits = np.iinfo(dtype).bits
    x = np.array([-8, 8, -8, 8, 1], dtype)
    y = np.array([-1, -1, bits, bits, bits - 1], dtype)
    np.testing.assert_array_equal(gx.BitShift(x, y, direction="RIGHT"), np.array([-1, 0, -1, 0, 0], dtype))
    np.testing.assert_array_equal(gx.BitShift(x, y, direction=b"LEFT"),
                                  np.array([0, 0, 0, 0, np.iinfo(dtype).min], dtype))


def test_bitshift_needs_a_direction():
    with pytest.raises(ValueError, match="BitShift: direction must be 'LEFT' or 'RIGHT', got 'left'"):
        gx.BitShift(np.ones(2, np.uint8), np.ones(2, np.uint8), direction="left")
    with pytest.raises(TypeError, match="direction"):
        gx.BitShift(np.ones(2, np.uint8), np.ones(2, np.uint8))


# --- variadic operators, Where, Expand, PRelu --------------------------------------------

@pytest.mark.parametrize("op,reference", [("Max", np.maximum), ("Min", np.minimum), ("Sum", np.add)])
def test_variadic_in_one_pass(op, reference, applied):
    xs = [np.array([[1.0], [np.nan], [3.0]], f32), np.array([2.0, -1.0], f32), np.array(0.5, f32),
          np.array([[[4.0, -4.0]]], f32)]
    result = getattr(gx, op)(*xs)
    expected = reference(reference(reference(xs[0], xs[1]), xs[2]), xs[3])
    np.testing.assert_array_equal(result, expected)
    assert applied == [(op.lower(), None)]   # one registry op over all four inputs


def test_mean_and_one_input():
    xs = [np.array([1.0, 2.0], np.float16), np.array([[3.0], [5.0]], np.float16), np.array(6.0, np.float16)]
    np.testing.assert_array_equal(gx.Mean(*xs), (xs[0] + xs[1] + xs[2]) / np.float16(3))
    one = np.array([1.5, -2.0], f32)
    result = gx.Max(one)
    np.testing.assert_array_equal(result, one)
    assert result is not one


def test_variadic_needs_an_input_and_broadcastable_shapes():
    with pytest.raises(TypeError, match="Sum takes 1 or more inputs"):
        gx.Sum()
    with pytest.raises(gpubcast.BroadcastError, match=r"arg 0 with shape \(2,\) and arg 2 with shape \(3,\)"):
        gx.Max(np.ones(2, f32), np.ones((4, 1), f32), np.ones(3, f32))


def test_where_strings_and_condition_type():
    c = np.array([[True], [False]])
    x, y = np.array(["a", "b"], dtype=object), np.array(["c", "d"], dtype=object)
    assert gx.Where(c, x, y).tolist() == [["a", "b"], ["c", "d"]]
    with pytest.raises(TypeError, match=r"Where: tensor\(int8\) input \(condition\) is not allowed by type "
                                        r"constraint B"):
        gx.Where(np.ones(2, np.int8), x, y)


@pytest.mark.parametrize("shape", [[2, 1, 6], (2, 1, 6), np.array([2, 1, 6], np.int64)])
def test_expand_shape_forms(shape):
    x = np.arange(3, dtype=f32).reshape(3, 1)
    np.testing.assert_array_equal(gx.Expand(x, shape), x * np.ones((2, 1, 6), f32))


def test_expand_shape_checks():
    x = np.ones((3, 1), f32)
    with pytest.raises(TypeError, match=r"Expand: shape must be a tensor\(int64\), got tensor\(int32\)"):
        gx.Expand(x, np.array([2, 3], np.int32))
    with pytest.raises(ValueError, match="Expand: shape must be 1-D"):
        gx.Expand(x, np.array([[2, 3]], np.int64))
    with pytest.raises(ValueError, match="negative dim -2"):
        gx.Expand(x, [-2, 3])
    with pytest.raises(gpubcast.BroadcastError, match="bidirectional"):
        gx.Expand(x, [2, 4, 5])


def test_prelu_slope_is_unidirectional():
    x = np.array([[-2.0, 3.0], [-4.0, 0.0]], f32)
    np.testing.assert_array_equal(gx.PRelu(x, np.array([0.5, 0.25], f32)), [[-1.0, 3.0], [-2.0, 0.0]])
    np.testing.assert_array_equal(gx.PRelu(np.array([-3, 3], np.int32), np.array(2, np.int32)), [-6, 3])
    with pytest.raises(gpubcast.BroadcastError, match=r"unidirectional.*arg 1 with shape \(2, 2, 2\)"):
        gx.PRelu(x, np.ones((2, 2, 2), f32))


# --- Gemm -------------------------------------------------------------------------------

def test_gemm_values_and_one_pass(applied):
    rng = np.random.default_rng(0)
    a, b = rng.standard_normal((3, 2)).astype(f32), rng.standard_normal((4, 3)).astype(f32)
    c = rng.standard_normal((1, 4)).astype(f32)
    result = gx.Gemm(a, b, c, alpha=0.5, beta=-2.0, transA=1, transB=1)
    np.testing.assert_allclose(result, 0.5 * (a.T @ b.T) - 2.0 * c, rtol=1e-6)
    assert result.dtype == f32 and result.shape == (2, 4)
    assert applied == [("axpby", gpubcast.backends.DEFAULT_CPU)]


def test_gemm_without_bias(applied):
    a, b = np.arange(6, dtype=np.int64).reshape(2, 3), np.arange(12, dtype=np.int64).reshape(3, 4)
    np.testing.assert_array_equal(gx.Gemm(a, b), a @ b)
    assert applied == []                                           # alpha == 1: the product itself
    np.testing.assert_array_equal(gx.Gemm(a, b, alpha=3.0), 3 * (a @ b))
    assert applied == [("multiply", gpubcast.backends.DEFAULT_CPU)]
    assert gx.Gemm(a, b, alpha=3.0).dtype == np.int64


def test_gemm_integer_with_fractional_scale_truncates_like_the_reference():
    a, b, c = np.ones((2, 3), np.int32), np.ones((3, 2), np.int32), np.array([1, 2], np.int32)
    result = gx.Gemm(a, b, c, alpha=0.5, beta=0.75)
    assert result.dtype == np.int32
    np.testing.assert_array_equal(result, (0.5 * 3 + 0.75 * np.array([[1, 2], [1, 2]])).astype(np.int32))


def test_gemm_beta_zero_does_not_read_c():
    a, b = np.ones((2, 3), f32), np.ones((3, 4), f32)
    np.testing.assert_array_equal(gx.Gemm(a, b, np.full((2, 1), np.nan, f32), beta=0.0), np.full((2, 4), 3, f32))
    with pytest.raises(gpubcast.BroadcastError, match="unidirectional"):
        gx.Gemm(a, b, np.ones((3, 4), f32), beta=0.0)


def test_gemm_shape_errors():
    a = np.ones((2, 3), f32)
    with pytest.raises(ValueError, match=r"Gemm: inner dimensions differ: A' is \(M, K\) = \(2, 3\) but B' is "
                                         r"\(K, N\) = \(4, 3\)"):
        gx.Gemm(a, np.ones((4, 3), f32))
    with pytest.raises(ValueError, match=r"Gemm: B must be 2-D, got shape \(3,\)"):
        gx.Gemm(a, np.ones(3, f32))
    with pytest.raises(gpubcast.BroadcastError, match=r"arg 1 with shape \(2, 4\) does not fit arg 0 with shape "
                                                      r"\(2, 5\)"):
        gx.Gemm(a, np.ones((3, 5), f32), np.ones((2, 4), f32))


# --- backend= passthrough -------------------------------------------------------------------

def _example_inputs(name):
    i, f, b = np.array([6, -3], np.int32), np.array([1.5, -2.0], f32), np.array([True, False])
    return {"And": (b, b), "Or": (b, b), "Xor": (b, b), "Where": (b, f, f), "Expand": (f, [2, 2]),
            "Gemm": (np.ones((2, 2), f32), np.ones((2, 2), f32), f), "BitShift": (i, i[::-1] * 0 + 1),
            "BitwiseAnd": (i, i), "BitwiseOr": (i, i), "BitwiseXor": (i, i), "Mod": (i, i),
            "Mean": (f, f), "Sum": (f, f), "Not": (b,), "BitwiseNot": (i,), "Clip": (f, f[1], f[0]),
            "CastLike": (f, i)}.get(name, (f,) if name in gx._UNARY or name in gx._ACTIVATIONS
                                    or name in ("Cast", "Identity", "Gelu", "IsNaN", "IsInf") else (f, f))


@pytest.mark.parametrize("name", sorted(set(gx.OPERATORS) - {"Constant"}))  # Constant has no inputs
def test_every_operator_passes_backend_through(name, monkeypatch):
    requested = []
    real = backends.select

    def spy(inputs, out=None, requested_backend=None):
        requested.append(requested_backend)
        return real(inputs, out, requested_backend)

    monkeypatch.setattr(backends, "select", spy)
    kwargs = {"BitShift": {"direction": "LEFT"}, "Cast": {"to": 11}}.get(name, {})
    gx.OPERATORS[name](*_example_inputs(name), backend="numpy", **kwargs)
    assert requested and set(requested) == {"numpy"}
    with pytest.raises(TypeError, match="backend='cuda' needs CUDA arrays"):
        gx.OPERATORS[name](*_example_inputs(name), backend="cuda", **kwargs)


# --- the backend: models ------------------------------------------------------------------

def _info(name, dtype, shape):
    return helper.make_tensor_value_info(name, helper.np_dtype_to_tensor_dtype(np.dtype(dtype)), shape)


def _model(nodes, inputs, outputs, initializers=(), opset=21):
    graph = helper.make_graph(nodes, "g", inputs, outputs, initializer=list(initializers))
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)], ir_version=10)


def _graph_model():
    """y = Where(x > limit, Gemm(x, w, bias, alpha=2), Sum(x, x, limit)); limit, w and bias are
    initializers (limit is also an overridable graph input)."""
    limit = numpy_helper.from_array(np.array(0.5, f32), "limit")
    w = numpy_helper.from_array(np.eye(3, dtype=f32)[::-1].copy(), "w")
    bias = numpy_helper.from_array(np.array([1.0, 2.0, 3.0], f32), "bias")
    nodes = [
        helper.make_node("Gemm", ["x", "w", "bias"], ["scaled"], alpha=2.0, name="gemm"),
        helper.make_node("Greater", ["x", "limit"], ["mask"], name="mask"),
        helper.make_node("Sum", ["x", "x", "limit"], ["total"], name="sum"),
        helper.make_node("Where", ["mask", "scaled", "total"], ["y"], name="pick"),
    ]
    return _model(nodes, [_info("x", f32, [2, 3]), _info("limit", f32, [])], [_info("y", f32, [2, 3])],
                  [limit, w, bias])


def _graph_expected(x, limit=0.5):
    limit = f32(limit)  # the graph's limit is a float32 scalar
    scaled = 2 * x @ np.eye(3, dtype=f32)[::-1] + np.array([1.0, 2.0, 3.0], f32)
    return np.where(x > limit, scaled, x + x + limit)


def test_backend_runs_a_graph_with_initializers():
    x = np.array([[0.0, 1.0, 2.0], [3.0, -1.0, 0.5]], f32)
    rep = GpubcastBackend.prepare(_graph_model())
    assert rep.input_names == ["x"]
    (y,) = rep.run([x])
    np.testing.assert_allclose(y, _graph_expected(x), rtol=1e-6)
    np.testing.assert_allclose(rep.run({"x": x})[0], _graph_expected(x), rtol=1e-6)
    np.testing.assert_allclose(rep.run(x)[0], _graph_expected(x), rtol=1e-6)
    # an initializer that is also a graph input can be fed
    np.testing.assert_allclose(rep.run({"x": x, "limit": np.array(1.5, f32)})[0],
                               _graph_expected(x, np.float32(1.5)), rtol=1e-6)


def test_backend_model_from_bytes_and_path(tmp_path):
    x = np.ones((2, 3), f32)
    model = _graph_model()
    path = tmp_path / "m.onnx"
    onnx.save(model, path)
    for source in (model.SerializeToString(), str(path), path):
        np.testing.assert_allclose(onnx_backend.run_model(source, [x])[0], _graph_expected(x), rtol=1e-6)


def test_backend_checks_feeds():
    rep = GpubcastBackend.prepare(_graph_model())
    with pytest.raises(TypeError, match=r"input 'x' must be tensor\(float\), got tensor\(double\)"):
        rep.run([np.ones((2, 3))])
    with pytest.raises(ValueError, match=r"the model takes 1 input\(s\) \['x'\], got 2"):
        rep.run([np.ones((2, 3), f32)] * 2)
    with pytest.raises(ValueError, match=r"unknown input name\(s\) \['z'\]"):
        rep.run({"z": np.ones((2, 3), f32)})
    with pytest.raises(ValueError, match=r"missing input\(s\) \['x'\]"):
        rep.run({"limit": np.ones((), f32)})


def _single(op, opset=21, domain="", **attributes):
    node = helper.make_node(op, ["a", "b"], ["y"], domain=domain, **attributes)
    return _model([node], [_info("a", f32, [2]), _info("b", f32, [2])], [_info("y", f32, [2])], opset=opset)


@pytest.mark.parametrize("model,message", [
    (_single("Max", opset=6), r"a Max node is from opset 6; gpubcast runs opset >= 7"),
    (_model([helper.make_node("Softmax", ["a"], ["y"], name="act")], [_info("a", f32, [2])], [_info("y", f32, [2])]),
     r"does not support the operator 'Softmax' \(node 'act' \(Softmax\)\); supported operators: Abs, Acos, "),
])
def test_backend_names_what_it_cannot_run(model, message):
    with pytest.raises(NotImplementedError, match=message):
        GpubcastBackend.prepare(model)
    assert not GpubcastBackend.is_compatible(model)


def test_backend_rejects_other_domains_and_unknown_attributes():
    node = helper.make_node("Add", ["a", "b"], ["y"], domain="com.example")
    with pytest.raises(NotImplementedError, match="is in domain 'com.example'"):
        onnx_backend.compile_node(node, 21)
    with pytest.raises(NotImplementedError, match="has attribute\\(s\\) broadcast that gpubcast does not"):
        onnx_backend.compile_node(helper.make_node("Add", ["a", "b"], ["y"], broadcast=1), 21)
    with pytest.raises(NotImplementedError, match="ONNX opset 7 has no Expand"):
        onnx_backend.compile_node(helper.make_node("Expand", ["a", "s"], ["y"]), 7)
    assert GpubcastBackend.is_compatible(_single("Add"))


def test_rep_sorts_nodes_and_reports_a_missing_producer():
    # onnx.checker (in prepare) insists on sorted graphs; the rep itself sorts them
    model = _graph_model()
    nodes = list(model.graph.node)
    del model.graph.node[:]
    model.graph.node.extend(nodes[::-1])
    x = np.array([[0.0, 1.0, 2.0], [3.0, -1.0, 0.5]], f32)
    np.testing.assert_allclose(onnx_backend.GpubcastRep(model).run([x])[0], _graph_expected(x), rtol=1e-6)
    node = helper.make_node("Add", ["a", "nowhere"], ["y"], name="add")
    with pytest.raises(ValueError, match="node 'add' \\(Add\\) reads 'nowhere', which no graph input"):
        onnx_backend.GpubcastRep(_model([node], [_info("a", f32, [2])], [_info("y", f32, [2])]))


def test_backend_parses_attributes_and_opset_7():
    a, b = np.array([5.0, -5.0], f32), np.array([3.0, 3.0], f32)
    np.testing.assert_array_equal(onnx_backend.run_model(_single("Mod", opset=13, fmod=1), [a, b])[0], [2.0, -2.0])
    np.testing.assert_array_equal(onnx_backend.run_model(_single("Add", opset=7), [a, b])[0], a + b)


def test_run_node():
    a, b = np.ones((2, 3), f32), np.ones((3, 4), f32)
    (y,) = onnx_backend.run_node(helper.make_node("Gemm", ["a", "b"], ["y"], alpha=2.0), [a, b])
    np.testing.assert_array_equal(y, np.full((2, 4), 6.0, f32))
    (y,) = onnx_backend.run_node(helper.make_node("Gemm", ["a", "b", ""], ["y"]), [a, b, None], opset_version=11)
    np.testing.assert_array_equal(y, np.full((2, 4), 3.0, f32))
    (y,) = onnx_backend.run_node(helper.make_node("BitShift", ["x", "s"], ["y"], direction="RIGHT"),
                                 [np.array([16], np.uint8), np.array([2], np.uint8)])
    np.testing.assert_array_equal(y, [4])


def test_backend_passes_gpubcast_backend_through(monkeypatch):
    requested = []
    real = backends.select
    monkeypatch.setattr(backends, "select", lambda inputs, out=None, wanted=None: (
        requested.append(wanted), real(inputs, out, wanted))[1])
    x = np.ones((2, 3), f32)
    rep = GpubcastBackend.prepare(_graph_model(), gpubcast_backend="numpy")
    np.testing.assert_allclose(rep.run([x])[0], _graph_expected(x), rtol=1e-6)
    assert requested and set(requested) == {"numpy"}
    with pytest.raises(ValueError, match="device 'CUDA' computes with gpubcast_backend='cuda', not 'numpy'"):
        onnx_backend.run_node(helper.make_node("Add", ["a", "b"], ["y"]), [x, x], device="CUDA",
                              gpubcast_backend="numpy")


def test_supports_device():
    assert onnx_backend.supports_device("CPU")
    assert onnx_backend.supports_device("CUDA") == gpu_available()
    assert not onnx_backend.supports_device("TPU")


@pytest.mark.gpu
def test_backend_on_cuda_returns_numpy():
    x = np.array([[0.0, 1.0, 2.0], [3.0, -1.0, 0.5]], f32)
    (y,) = onnx_backend.prepare(_graph_model(), device="CUDA").run([x])
    assert isinstance(y, np.ndarray)
    np.testing.assert_allclose(y, _graph_expected(x), rtol=1e-6)
    # strings stay on the host: Equal on strings computes on the CPU, Where on the GPU
    nodes = [helper.make_node("Equal", ["s", "t"], ["m"]), helper.make_node("Where", ["m", "a", "b"], ["y"])]
    model = _model(nodes, [helper.make_tensor_value_info(n, TensorProto.STRING, [2]) for n in "st"]
                   + [_info("a", f32, [2]), _info("b", f32, [2])], [_info("y", f32, [2])])
    s, t = np.array(["x", "y"], dtype=object), np.array(["x", "z"], dtype=object)
    (y,) = onnx_backend.run_model(model, [s, t, np.ones(2, f32), np.zeros(2, f32)], device="CUDA")
    np.testing.assert_array_equal(y, [1.0, 0.0])


@pytest.mark.gpu
def test_functions_on_cupy_arrays():
    import cupy
    a, b = cupy.arange(6, dtype=cupy.float32).reshape(2, 3), cupy.ones((3, 4), cupy.float32)
    result = gx.Gemm(a, b, cupy.arange(4, dtype=cupy.float32), alpha=0.5)
    assert isinstance(result, cupy.ndarray)
    np.testing.assert_allclose(result.get(), 0.5 * (a.get() @ b.get()) + np.arange(4), rtol=1e-6)
    np.testing.assert_array_equal(gx.Div(cupy.array([-7, 7], cupy.int32), cupy.array([2, 0], cupy.int32)).get(),
                                  [-3, 0])


# --- unary operators, Clip, Cast, CastLike, Identity, Constant ------------------------------

def test_unary_operators_keep_type_and_enforce_constraints():
    x = np.array([-1.5, 0.25, 4.0], np.float16)
    assert gx.Exp(x).dtype == np.float16 and gx.Sqrt(x).dtype == np.float16
    assert np.array_equal(gx.Relu(np.array([-3, 2], np.int8)), np.array([0, 2], np.int8))
    assert gx.Not(np.array([True, False])).tolist() == [False, True]
    with pytest.raises(TypeError, match=r"Exp: tensor\(int32\) input \(X\) is not allowed"):
        gx.Exp(np.array([1, 2], np.int32))
    with pytest.raises(TypeError, match="Neg"):
        gx.Neg(np.array([1], np.uint8))
    with pytest.raises(TypeError, match="Not"):
        gx.Not(np.array([1.0]))


def test_clip_inputs_and_attributes():
    x = np.array([-2.0, 0.5, 7.0, np.nan], f32)
    assert np.array_equal(gx.Clip(x, f32(0), f32(1)), np.clip(x, 0, 1), equal_nan=True)
    assert np.array_equal(gx.Clip(x, None, f32(1)), np.clip(x, None, 1), equal_nan=True)
    assert np.array_equal(gx.Clip(x, min=-1.0, max=1.0), np.clip(x, -1, 1), equal_nan=True)  # Clip-6
    assert np.array_equal(gx.Clip(x), x, equal_nan=True)
    with pytest.raises(TypeError, match="type constraint T"):
        gx.Clip(x, np.float64(0), None)


def test_cast_and_castlike():
    x = np.array([1.7, -2.2, 0.0], f32)
    assert np.array_equal(gx.Cast(x, to=6), np.array([1, -2, 0], np.int32))        # TensorProto.INT32
    assert gx.Cast(x, to=16).dtype == ml_dtypes.bfloat16                                   # BFLOAT16
    assert gx.Cast(x, to=np.float16).dtype == np.float16
    assert gx.Cast(x, to=9).tolist() == [True, True, False]
    assert gx.CastLike(x, np.zeros(1, np.int8)).dtype == np.int8
    with pytest.raises(TypeError, match="element type 17"):                           # FLOAT8E4M3FN
        gx.Cast(x, to=17)
    with pytest.raises(TypeError, match="string"):
        gx.Cast(x, to=np.str_)


def test_identity_and_constant():
    x = np.arange(3)
    assert gx.Identity(x) is x
    assert gx.Constant(value=np.eye(2, dtype=f32)).dtype == f32
    assert gx.Constant(value_float=2.5).dtype == f32 and gx.Constant(value_ints=[1, 2]).dtype == np.int64
    with pytest.raises(ValueError, match="exactly one"):
        gx.Constant(value_float=1.0, value_int=2)


def test_backend_runs_a_unary_chain_with_constants_and_omitted_inputs():
    """y = Clip(Sigmoid(Cast(x, float)) * 2, "", Constant(1.5)): Constant, an omitted middle input."""
    nodes = [
        helper.make_node("Cast", ["x"], ["xf"], to=onnx.TensorProto.FLOAT),
        helper.make_node("Sigmoid", ["xf"], ["s"]),
        helper.make_node("Constant", [], ["two"], value=numpy_helper.from_array(np.array(2.0, f32))),
        helper.make_node("Mul", ["s", "two"], ["s2"]),
        helper.make_node("Constant", [], ["hi"], value_float=1.5),
        helper.make_node("Clip", ["s2", "", "hi"], ["y"]),
    ]
    model = _model(nodes, [_info("x", np.int32, [4])], [_info("y", f32, [4])])
    x = np.array([-3, 0, 1, 5], np.int32)
    s = (1 / (1 + np.exp(-x.astype(f32)))) * f32(2)
    (y,) = onnx_backend.prepare(model).run([x])
    np.testing.assert_allclose(y, np.minimum(s, f32(1.5)), rtol=4 * np.finfo(f32).eps)


def test_backend_fuses_elementwise_chains_with_the_same_values():
    """y = Relu(Gemm(Sigmoid(x) * w0 + 1, w) - b) with Neg(u) also an output: the chains before and
    after the Gemm are fused steps (Constant computed in prepare); fuse=False gives the same bits."""
    w = numpy_helper.from_array(np.eye(3, dtype=f32)[::-1].copy() * 2, "w")
    b = numpy_helper.from_array(np.array([0.5, -1.0, 2.0], f32), "b")
    nodes = [
        helper.make_node("Sigmoid", ["x"], ["s"]),
        helper.make_node("Constant", [], ["w0"], value_float=3.0),
        helper.make_node("Mul", ["s", "w0"], ["sw"]),
        helper.make_node("Constant", [], ["one"], value=numpy_helper.from_array(np.array(1.0, f32))),
        helper.make_node("Add", ["sw", "one"], ["u"]),
        helper.make_node("Gemm", ["u", "w"], ["g"]),
        helper.make_node("Sub", ["g", "b"], ["d"]),
        helper.make_node("Relu", ["d"], ["y"]),
        helper.make_node("Neg", ["u"], ["nu"]),
    ]
    model = _model(nodes, [_info("x", f32, [4, 3])], [_info("y", f32, [4, 3]), _info("nu", f32, [4, 3])],
                   initializers=[w, b])
    x = np.random.default_rng(5).standard_normal((4, 3)).astype(f32)
    fused = onnx_backend.prepare(model)
    kinds = [s.op_type for s in fused._steps]
    assert kinds.count("fused") == 2 and "Gemm" in kinds and "Constant" not in kinds, kinds
    y, nu = fused.run([x])
    y0, nu0 = onnx_backend.prepare(model, fuse=False).run([x])
    assert np.array_equal(y, y0) and np.array_equal(nu, nu0)
    u = (1 / (1 + np.exp(-x))) * f32(3) + f32(1)
    np.testing.assert_allclose(nu, -u, rtol=4 * np.finfo(f32).eps)
    want = np.maximum(u @ (np.eye(3, dtype=f32)[::-1] * 2) - np.array([0.5, -1.0, 2.0], f32), 0)
    np.testing.assert_allclose(y, want, rtol=8 * np.finfo(f32).eps)


def test_chains_wait_for_inputs_made_after_they_start():
    """a = Abs(x); g = Gemm(x, w); z = a + g: the Add cannot join Abs's chain (g is made after it)."""
    w = numpy_helper.from_array(np.eye(2, dtype=f32), "w")
    nodes = [helper.make_node("Abs", ["x"], ["a"]), helper.make_node("Exp", ["a"], ["e"]),
             helper.make_node("Gemm", ["x", "w"], ["g"]), helper.make_node("Add", ["e", "g"], ["z"])]
    model = _model(nodes, [_info("x", f32, [2, 2])], [_info("z", f32, [2, 2])], initializers=[w])
    x = np.array([[-1.0, 2.0], [0.5, -3.0]], f32)
    rep = onnx_backend.prepare(model)
    assert [s.op_type for s in rep._steps] == ["fused", "Gemm", "Add"]
    (z,) = rep.run([x])
    assert np.array_equal(z, onnx_backend.prepare(model, fuse=False).run([x])[0])
