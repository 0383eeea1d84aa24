"""Activations (issue #22): the NumPy-style functions, ``gpubcast.onnx`` and ``gpubcast.openvino``
against independent references -- the ONNX reference implementation (``onnx.reference``, its own
formulas, run in float64 and rounded once), ONNX Runtime and the OpenVINO runtime -- on random and
special values (+-0, +-inf, NaN, subnormals, large magnitudes); their parameters broadcast to x;
their type rules; ``gb.fuse`` chains of them.  (Every op x dtype x layout against the registry's
reference on the Numba backend: tests/numba/test_numba_backend.py.)"""

from __future__ import annotations

import warnings

import numpy as np
import onnx
import pytest
from onnx import helper
from onnx.reference import ReferenceEvaluator

import gpubcast as gb
import gpubcast.onnx as gx
import gpubcast.openvino as gv
from gpubcast import ops
from gpubcast.dtypes import bfloat16

BACKENDS = ("numpy", "numba")
SPECIAL = [0.0, -0.0, 0.5, -0.5, 1.0, -1.0, 2.5, -2.5, 3.0, -3.0, 6.0, -6.0, 10.0, -10.0, 30.0, -30.0, 100.0,
           -100.0, 1000.0, -1000.0, 1e-30, -1e-30, 1e-40, -1e-40, np.inf, -np.inf, np.nan]

#: ONNX operator -> (gpubcast function name, attributes of a non-default call)
ONNX_OPS = {
    "Softplus": ("softplus", {}), "Softsign": ("softsign", {}), "HardSwish": ("hard_swish", {}),
    "Mish": ("mish", {}), "LeakyRelu": ("leaky_relu", {"alpha": 0.25}), "Elu": ("elu", {"alpha": 0.5}),
    "Celu": ("celu", {"alpha": 2.0}), "ThresholdedRelu": ("thresholded_relu", {"alpha": 0.75}),
    "Selu": ("selu", {"alpha": 1.5, "gamma": 2.0}), "HardSigmoid": ("hard_sigmoid", {"alpha": 0.3, "beta": 0.25}),
    "Shrink": ("shrink", {"bias": 1.5, "lambd": 2.0}), "Gelu": ("gelu", {"approximate": "tanh"}),
}
#: operators whose ONNX reference is too coarse to be the oracle: Gelu's function body rounds its
#: constants to float32 and its Erf loses the tail (gelu(-6) comes out -0.0); see test_gelu_definition
COARSE_REFERENCE = ("Gelu",)


def _values(dtype, rng, n=300):
    x = np.concatenate([np.array(SPECIAL), rng.standard_normal(n) * rng.choice([1.0, 4.0, 40.0], n)])
    with np.errstate(all="ignore"):
        return x.astype(dtype)


def onnx_reference(op, x, opset=None, **attributes):
    """The ONNX reference implementation of one ``op`` node on ``x`` computed in float64, rounded once
    to x's dtype (a function op, e.g. Gelu or Mish, runs its function body)."""
    schema_opset = opset or onnx.defs.onnx_opset_version()
    wide = np.asarray(x, np.float64)
    node = helper.make_node(op, ["x"], ["y"], **attributes)
    graph = helper.make_graph([node], op, [helper.make_tensor_value_info("x", onnx.TensorProto.DOUBLE, wide.shape)],
                              [helper.make_tensor_value_info("y", onnx.TensorProto.DOUBLE, wide.shape)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", schema_opset)])
    with np.errstate(all="ignore"), warnings.catch_warnings():
        warnings.simplefilter("ignore")
        (y,) = ReferenceEvaluator(model).run(None, {"x": wide})
        return np.asarray(y).astype(np.asarray(x).dtype)


def assert_close(got, want, dtype, what, ulps=4):
    """Within ``ulps`` ulps of the reference (NaN equals NaN, signed zeros apart only below ``tiny``),
    with an absolute slack of ~1e-20 (float32) where the reference itself cancels to 0."""
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, (what, got.dtype, want.dtype, got.shape, want.shape)
    g, w = got.astype(np.float64), want.astype(np.float64)
    eps = float(np.finfo(np.float32 if want.dtype == np.float32 else np.float64).eps)
    slack = 1e-20 if want.dtype == np.float32 else 1e-300
    with np.errstate(all="ignore"):
        ok = (g == w) | (np.isnan(g) & np.isnan(w)) | (np.abs(g - w) <= ulps * eps * np.abs(w) + slack)
    bad = np.flatnonzero(~ok)
    assert not bad.size, f"{what}: {bad.size} differ, e.g. {got.ravel()[bad[:4]]} != {want.ravel()[bad[:4]]}"


# --- values -----------------------------------------------------------------------------------------------

@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
@pytest.mark.parametrize("op", sorted(set(ONNX_OPS) - set(COARSE_REFERENCE)))
def test_against_the_onnx_reference(op, dtype, backend):
    """Defaults and another set of attributes, on special and random values."""
    name, attributes = ONNX_OPS[op]
    x = _values(dtype, np.random.default_rng(len(op)))
    for attrs in ({}, attributes):
        want = onnx_reference(op, x, **attrs)
        # an ONNX model carries float attributes as float32: call gpubcast with those values
        attrs = {k: float(np.float32(v)) if isinstance(v, float) else v for k, v in attrs.items()}
        # the API's defaults are the exact numbers, ONNX's their float32 roundings: pass ONNX's
        params = {k if k != "gamma" else "scale": v for k, v in dict(gx._ACTIVATIONS[op][3], **attrs).items()}
        # the exact ops (no exp/log/tanh/erf) agree to the last bit with a reference rounded once
        ulps = 0 if ops.math_rtol(name, dtype) == 0 else 4
        if op == "HardSwish":  # ONNX's function body rounds alpha = 1/6 to float32; the spec's 1/6 itself
            w = x.astype(np.float64)
            with np.errstate(invalid="ignore"):
                want = (w * np.clip(w / 6 + 0.5, 0, 1)).astype(dtype)
        assert_close(getattr(gb, name)(x, **params, backend=backend), want, dtype, f"{name}{params}", ulps)
        assert_close(getattr(gx, op)(x, **attrs, backend=backend), want, dtype, f"onnx {op}{attrs}", ulps)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_gelu_definition(dtype, backend):
    """x * Phi(x) with Phi(x) = erfc(-x / sqrt 2) / 2, and the tanh form as x / (1 + exp(-2u)), both by
    Python's math module per element (float64, rounded once)."""
    import math
    x = _values(dtype, np.random.default_rng(17))

    def tanh_form(v):
        u = math.sqrt(2 / math.pi) * (v + 0.044715 * v ** 3)
        return v / (1 + math.exp(min(-2 * u, 700.0))) if math.isfinite(v) else v * 0.5 * (1 + math.tanh(u))

    # float64: erfc's tail amplifies its argument's last bit (x / sqrt 2 vs x * (1 / sqrt 2)) ~2x^2 times
    ulps = 4 if dtype == np.float32 else 2 ** 12
    for mode, f in (("none", lambda v: 0.5 * v * math.erfc(-v / math.sqrt(2))), ("tanh", tanh_form)):
        want = np.array([f(float(v)) for v in x]).astype(dtype)
        assert_close(gb.gelu(x, mode, backend=backend), want, dtype, f"gelu {mode}", ulps)
        assert_close(gx.Gelu(x, approximate=mode, backend=backend), want, dtype, f"onnx Gelu {mode}", ulps)


@pytest.mark.parametrize("dtype", [np.float16, bfloat16])
@pytest.mark.parametrize("name", sorted(ops.ACTIVATIONS))
def test_half_types_round_once_from_float64(name, dtype):
    """float16 / bfloat16 give the float64 result of their values rounded once (the numba backend and the
    reference agree bit for bit where no math library is called, within 4 ulps elsewhere)."""
    op = ops.get(name)
    x = _values(dtype, np.random.default_rng(7), 200)
    args = [x] + [np.asarray(d, dtype) for _, d in ops.ACTIVATIONS[name][1]]
    wide = [a.astype(np.float64) for a in args]
    with np.errstate(all="ignore"):
        want = np.asarray(ops.ACTIVATIONS[name][0](*wide)).astype(dtype)   # the formula itself, in float64
    got = gb.dispatch.apply(op, args, backend="numba")
    g, w = got.astype(np.float64), want.astype(np.float64)
    eps = float(np.finfo(np.float16).eps) if dtype == np.float16 else 2.0 ** -7
    ulps = 0 if ops.math_rtol(name, np.float32) == 0 else 4
    with np.errstate(all="ignore"):
        ok = (g == w) | (np.isnan(g) & np.isnan(w)) | (np.abs(g - w) <= ulps * eps * np.abs(w))
    assert ok.all(), (name, x[~ok][:4], got[~ok][:4], want[~ok][:4])


def test_special_values_written_out():
    """Values fixed by hand, from the definitions (float64)."""
    x = np.array([-np.inf, -1000.0, -0.0, 0.0, 1000.0, np.inf, np.nan])
    for backend in BACKENDS:
        sp = gb.softplus(x, backend=backend)
        np.testing.assert_array_equal(sp, [0.0, 0.0, np.log(2), np.log(2), 1000.0, np.inf, np.nan])  # no overflow
        # inf / (1 + inf) and, below, -inf * (a factor that tends to 0) are NaN, as the ONNX reference
        # computes them from the written formulas
        np.testing.assert_array_equal(gb.softsign(x, backend=backend), [np.nan, -1000 / 1001, -0.0, 0.0, 1000 / 1001,
                                                                        np.nan, np.nan])
        np.testing.assert_array_equal(gb.leaky_relu(x, 0.5, backend=backend),
                                      [-np.inf, -500.0, -0.0, 0.0, 1000.0, np.inf, np.nan])
        np.testing.assert_array_equal(gb.thresholded_relu(x, 0.0, backend=backend),
                                      [0.0, 0.0, 0.0, 0.0, 1000.0, np.inf, 0.0])     # NaN > alpha is false
        np.testing.assert_array_equal(gb.shrink(x, 1.0, 2.0, backend=backend),
                                      [-np.inf, -999.0, 0.0, 0.0, 999.0, np.inf, 0.0])
        np.testing.assert_array_equal(gb.hard_sigmoid(x, backend=backend), [0.0, 0.0, 0.5, 0.5, 1.0, 1.0, np.nan])
        np.testing.assert_array_equal(gb.elu(x, backend=backend), [-1.0, -1.0, -0.0, 0.0, 1000.0, np.inf, np.nan])
        np.testing.assert_array_equal(gb.gelu(x, backend=backend)[[0, 5, 6]], [np.nan, np.inf, np.nan])
        np.testing.assert_array_equal(gb.hard_swish(x, backend=backend)[[1, 4]], [-0.0, 1000.0])
        # subnormal float32 inputs are not flushed to zero
        tiny = np.array([1e-40, -1e-40], np.float32)
        np.testing.assert_array_equal(gb.leaky_relu(tiny, 0.5, backend=backend), np.array([1e-40, -5e-41], np.float32))
        np.testing.assert_array_equal(gb.softsign(tiny, backend=backend), tiny)


# --- parameters: scalars or tensors broadcast to x -----------------------------------------------------

@pytest.mark.parametrize("backend", BACKENDS)
def test_tensor_parameters_broadcast_to_x(backend):
    rng = np.random.default_rng(3)
    x = rng.standard_normal((2, 3, 4)).astype(np.float32)
    alpha = rng.uniform(0.1, 2.0, (3, 1)).astype(np.float32)
    beta = rng.uniform(-1.0, 1.0, (4,)).astype(np.float32)
    x64, a64, b64 = (v.astype(np.float64) for v in (x, alpha, beta))
    np.testing.assert_array_equal(gb.leaky_relu(x, alpha, backend=backend),
                                  np.where(x64 < 0, x64 * a64, x64).astype(np.float32))
    np.testing.assert_array_equal(gb.hard_sigmoid(x, alpha, beta, backend=backend),
                                  np.clip(x64 * a64 + b64, 0, 1).astype(np.float32))
    np.testing.assert_array_equal(gb.shrink(x, beta, alpha, backend=backend),
                                  np.where(x64 < -a64, x64 + b64, np.where(x64 > a64, x64 - b64, 0)).astype(np.float32))
    np.testing.assert_allclose(gb.selu(x, alpha, beta, backend=backend),
                               (np.where(x64 > 0, x64, a64 * np.expm1(x64)) * b64).astype(np.float32), rtol=1e-6)
    # by name, and a per-element parameter of x's own shape
    np.testing.assert_array_equal(gb.thresholded_relu(x, alpha=x[::-1], backend=backend),
                                  np.where(x > x[::-1], x, 0).astype(np.float32))


def test_parameters_never_grow_x():
    x = np.ones((3, 1), np.float32)
    with pytest.raises(gb.BroadcastError, match=r"unidirectional.*arg 1 with shape \(3, 4\)"):
        gb.leaky_relu(x, np.ones((3, 4), np.float32))
    with pytest.raises(gb.BroadcastError, match=r"unidirectional.*arg 2 with shape \(2, 3, 1\)"):
        gb.hard_sigmoid(x, 0.5, np.ones((2, 3, 1), np.float32))
    with pytest.raises(TypeError, match="at most 2 parameter"):
        gb.shrink(x, 1.0, 2.0, 3.0)
    with pytest.raises(TypeError, match="multiple values for argument 'alpha'"):
        gb.elu(x, 1.0, alpha=2.0)
    with pytest.raises(TypeError, match="unexpected keyword argument 'gamma'"):
        gb.selu(x, gamma=2.0)
    with pytest.raises(ValueError, match="approximate"):
        gb.gelu(x, approximate="erf")


def test_type_rules():
    h = np.ones(3, np.float16)
    assert gb.leaky_relu(h, 0.1).dtype == np.float16                       # Python scalars take x's type
    assert gb.selu(np.ones(3, bfloat16), 1.5, 2.0).dtype == bfloat16      # bfloat16 too
    assert gb.elu(h, np.float32(1.0) * np.ones(1, np.float32)).dtype == np.float32  # a tensor's type counts
    assert gb.elu(np.arange(3, dtype=np.int32), 0.5).dtype == np.float64  # integers compute in float64
    assert gb.softplus(np.arange(3, dtype=np.int8)).dtype == np.float16   # as NumPy's exp: int8 -> float16
    with pytest.raises(TypeError, match="leaky_relu.*not a float type"):
        gb.leaky_relu(np.arange(3), 2)
    with pytest.raises(TypeError, match="softsign"):
        gb.softsign(np.ones(3, np.complex64))


def test_out_and_dtype():
    x = np.linspace(-3, 3, 12).astype(np.float32).reshape(3, 4)
    out = np.empty((3, 4), np.float64)
    assert gb.hard_sigmoid(x, 0.2, 0.5, out=out) is out
    np.testing.assert_array_equal(out, np.clip(x.astype(np.float64) * np.float32(0.2) + 0.5, 0, 1).astype(np.float32))


# --- fusion -------------------------------------------------------------------------------------------------

@pytest.mark.parametrize("backend", BACKENDS)
def test_fused_chains_take_activations(backend):
    """A chain of unary, binary (x, alpha) and parametric (x, alpha, beta) activations with a tensor
    parameter, as one pass, equals the calls one by one."""
    def chain_on(**on):   # the chain, its calls on one backend (``on``: backend=...)
        def chain(x, a):
            y = gb.hard_sigmoid(gb.leaky_relu(x, a, **on), 0.25, 0.5, **on)
            return gb.add(gb.mish(gb.selu(y, a, 1.5, **on), **on), gb.gelu(x, "tanh", **on), **on)
        return chain

    rng = np.random.default_rng(5)
    x = rng.standard_normal((64, 33)).astype(np.float32)
    a = rng.uniform(0.1, 1.0, (33,)).astype(np.float32)
    fused = gb.fuse(chain_on())
    np.testing.assert_array_equal(fused(x, a, backend=backend), chain_on(backend=backend)(x, a))
    np.testing.assert_allclose(fused(x, a, backend=backend), chain_on()(x.astype(np.float64), a.astype(np.float64)),
                               rtol=1e-5, atol=1e-6)


# --- gpubcast.onnx: type constraints, attributes, versions -----------------------------------------------

def test_onnx_type_constraints_and_integer_shrink():
    with pytest.raises(TypeError, match="Celu: tensor\\(int32\\)"):
        gx.Celu(np.arange(3, dtype=np.int32))
    with pytest.raises(TypeError, match="unknown attribute"):
        gx.Elu(np.ones(3, np.float32), beta=1.0)
    x = np.arange(-5, 6, dtype=np.int8)
    got = gx.Shrink(x, bias=1.5, lambd=1.5)
    assert got.dtype == np.int8
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = ReferenceEvaluator(helper.make_model(helper.make_graph(
            [helper.make_node("Shrink", ["x"], ["y"], bias=1.5, lambd=1.5)], "g",
            [helper.make_tensor_value_info("x", onnx.TensorProto.INT8, x.shape)],
            [helper.make_tensor_value_info("y", onnx.TensorProto.INT8, x.shape)]))).run(None, {"x": x})[0]
    np.testing.assert_array_equal(got, want)


def test_onnx_defaults_are_the_latest_schema_s():
    """Each function's attribute defaults are the latest schema's (the backend passes older versions')."""
    for op in ONNX_OPS:
        defaults = dict(gx._ACTIVATIONS[op][3]) if op in gx._ACTIVATIONS else {"approximate": "none"}
        schema = onnx.defs.get_schema(op, onnx.defs.onnx_opset_version())
        for name, attr in schema.attributes.items():
            value = helper.get_attribute_value(attr.default_value)
            assert defaults[name] == (value.decode() if isinstance(value, bytes) else value), (op, name)


def _version_1(node):
    graph = helper.make_graph([node], "g", [helper.make_tensor_value_info("x", onnx.TensorProto.DOUBLE, [5])],
                              [helper.make_tensor_value_info("y", onnx.TensorProto.DOUBLE, [5])])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 1)])
    model.ir_version = 3
    return model


def test_onnx_version_1_runs_with_its_own_defaults():
    """Elu-1 with its legacy consumed_inputs; Selu-1 without attributes takes Selu-1's defaults
    (alpha 1.6732, gamma 1.0507 as float32), not Selu-6's."""
    x = np.linspace(-2, 2, 5)
    (y,) = gx.backend.run_model(_version_1(helper.make_node("Elu", ["x"], ["y"], alpha=0.5, consumed_inputs=[0])), [x])
    np.testing.assert_allclose(y, np.where(x > 0, x, 0.5 * np.expm1(x)), rtol=1e-15)
    (y,) = gx.backend.run_model(_version_1(helper.make_node("Selu", ["x"], ["y"])), [x])
    alpha, gamma = float(np.float32(1.6732)), float(np.float32(1.0507))
    np.testing.assert_allclose(y, gamma * np.where(x > 0, x, alpha * np.expm1(x)), rtol=1e-15)


#: the types beyond float32 for which ONNX Runtime 1.31 runs these operators on the CPU (probed)
ORT_MORE_TYPES = {**dict.fromkeys(set(ONNX_OPS) - {"Celu"}, ("float16",)), "Shrink": ("float64", "float16")}
ORT_RTOL = {"float32": 2e-6, "float64": 1e-12, "float16": 2e-3}


@pytest.mark.parametrize("dtype", ["float32", "float64", "float16"])
@pytest.mark.parametrize("op", sorted(ONNX_OPS))
def test_onnx_against_onnxruntime(op, dtype):
    """ONNX Runtime as the oracle (opset 21 for all but Gelu's 20 and Celu's 12), on the types its CPU
    provider implements for the operator."""
    ort = pytest.importorskip("onnxruntime")
    if dtype != "float32" and dtype not in ORT_MORE_TYPES.get(op, ()):
        pytest.skip(f"ONNX Runtime has no CPU kernel of {op} for {dtype}")
    _, attributes = ONNX_OPS[op]
    x = (np.random.default_rng(11).standard_normal((4, 5)) * 4).astype(dtype)
    opset = {"Gelu": 20, "Celu": 12}.get(op, 21)
    elem = helper.np_dtype_to_tensor_dtype(x.dtype)
    for attrs in ({}, attributes):
        graph = helper.make_graph([helper.make_node(op, ["x"], ["y"], **attrs)], op,
                                  [helper.make_tensor_value_info("x", elem, x.shape)],
                                  [helper.make_tensor_value_info("y", elem, x.shape)])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", opset)])
        model.ir_version = 10
        options = ort.SessionOptions()
        options.intra_op_num_threads = 1
        want = ort.InferenceSession(model.SerializeToString(), options).run(None, {"x": x})[0]
        got = gx.backend.run_model(model, [x])[0]
        assert got.dtype == want.dtype
        rtol = ORT_RTOL[dtype]
        if (op, dtype) == ("Shrink", "float64"):   # ONNX Runtime's double Shrink rounds through float32
            np.testing.assert_array_equal(want, want.astype(np.float32))
            rtol = 2e-7
        np.testing.assert_allclose(got.astype(np.float64), want.astype(np.float64), rtol=rtol, atol=rtol * 0.05,
                                   err_msg=f"{op}{attrs}")


# --- gpubcast.openvino ------------------------------------------------------------------------------------

@pytest.mark.filterwarnings("ignore::RuntimeWarning")   # the formulas written out at +-inf and NaN
def test_openvino_spec_formulas():
    x = np.concatenate([np.linspace(-8, 8, 65), [np.nan, np.inf, -np.inf]]).astype(np.float32)
    w = x.astype(np.float64)
    relu6 = np.minimum(np.maximum(w + 3, 0), 6)
    np.testing.assert_array_equal(gv.HSigmoid(x), (relu6 / 6).astype(np.float32))
    np.testing.assert_allclose(gv.HSwish(x), (w * relu6 / 6).astype(np.float32), rtol=1e-7)
    np.testing.assert_allclose(gv.Swish(x, np.float32(0.5))[:-3], (w / (1 + np.exp(-0.5 * w)))[:-3], rtol=1e-6)
    np.testing.assert_allclose(gv.Selu(x, np.float32([1.5]), np.float32([2.0]))[:-1],
                               (2.0 * np.where(w > 0, w, 1.5 * np.expm1(w)))[:-1], rtol=1e-6)
    np.testing.assert_array_equal(gv.Clamp(np.arange(-4, 5, dtype=np.int32), min=-2.5, max=2.5),
                                  np.clip(np.arange(-4, 5), -2, 2))    # ceil(min), floor(max)
    np.testing.assert_array_equal(gv.Clamp(x, min=-1.0, max=1.0)[-3:], [np.nan, 1.0, -1.0])
    with pytest.raises(ValueError, match="'alpha' must be a 1-D tensor with one element"):
        gv.Selu(x, np.float32([1.5, 2.0]), np.float32([1.0]))
    with pytest.raises(ValueError, match="'beta' must be a 0-D tensor"):
        gv.HardSigmoid(x, np.float32(0.2), np.float32([0.5]))
    with pytest.raises(TypeError, match="Selu"):
        gv.Selu(x, np.float64([1.5]), np.float32([1.0]))
    with pytest.raises(ValueError, match="approximation_mode"):
        gv.Gelu(x, approximation_mode="none")
    # the one-element parameters apply to a rank-0 data too
    assert gv.Selu(np.float32(2.0), np.float32([1.5]), np.float32([2.0])) == np.float32(4.0)


def test_openvino_against_the_runtime():
    """The OpenVINO CPU plugin (f32 inference precision) as the oracle."""
    ov = pytest.importorskip("openvino")
    from openvino.utils.node_factory import NodeFactory

    x = np.random.default_rng(13).standard_normal((3, 8)).astype(np.float32) * 4
    core = ov.Core()

    def run(opset, op, consts=(), **attributes):
        p = ov.opset1.parameter(list(x.shape), ov.Type.f32)
        inputs = [p.output(0)] + [ov.op.Constant(np.asarray(c, np.float32)).output(0) for c in consts]
        n = NodeFactory(opset).create(op, inputs, attributes)
        model = ov.Model([n], [p])
        compiled = core.compile_model(model, "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
        return compiled([x])[0]

    cases = [
        ("opset4", "SoftPlus", (), {}, gv.SoftPlus(x)), ("opset9", "SoftSign", (), {}, gv.SoftSign(x)),
        ("opset4", "Mish", (), {}, gv.Mish(x)), ("opset4", "HSwish", (), {}, gv.HSwish(x)),
        ("opset5", "HSigmoid", (), {}, gv.HSigmoid(x)), ("opset1", "Elu", (), {"alpha": 0.5}, gv.Elu(x, alpha=0.5)),
        ("opset7", "Gelu", (), {"approximation_mode": "tanh"}, gv.Gelu(x, approximation_mode="tanh")),
        ("opset7", "Gelu", (), {"approximation_mode": "erf"}, gv.Gelu(x)),
        ("opset4", "Swish", (np.float32(0.75),), {}, gv.Swish(x, np.float32(0.75))),
        ("opset1", "Selu", (np.float32([1.5]), np.float32([2.0])), {},
         gv.Selu(x, np.float32([1.5]), np.float32([2.0]))),
        ("opset1", "HardSigmoid", (np.float32(0.3), np.float32(0.4)), {},
         gv.HardSigmoid(x, np.float32(0.3), np.float32(0.4))),
        ("opset1", "Clamp", (), {"min": -1.5, "max": 2.0}, gv.Clamp(x, min=-1.5, max=2.0)),
    ]
    for opset, op, consts, attributes, got in cases:
        np.testing.assert_allclose(got, run(opset, op, consts, **attributes), rtol=1e-5, atol=1e-6, err_msg=op)


def test_dask_arrays_chunk_by_chunk():
    """Dask arrays (x and a tensor parameter chunked differently) compute chunk by chunk, equal to NumPy's call."""
    da = pytest.importorskip("dask.array")
    rng = np.random.default_rng(19)
    x, a = rng.standard_normal((6, 8)).astype(np.float32), rng.uniform(0.1, 1.0, 8).astype(np.float32)
    dx, dal = da.from_array(x, chunks=(3, 4)), da.from_array(a, chunks=2)
    for f, dargs, args in ((gb.selu, (dal, 1.5), (a, 1.5)), (gb.leaky_relu, (dal,), (a,)), (gb.softplus, (), ()),
                           (gb.hard_sigmoid, (0.3, dal), (0.3, a))):
        got = f(dx, *dargs)
        assert isinstance(got, da.Array)
        np.testing.assert_array_equal(got.compute(), f(x, *args))


# --- the math operators of the front ends (the registry's math functions: tests/ops/test_math*.py) ----------

MATH_ONNX = {"Sin": "sin", "Cos": "cos", "Tan": "tan", "Asin": "arcsin", "Acos": "arccos", "Atan": "arctan",
             "Sinh": "sinh", "Cosh": "cosh", "Asinh": "arcsinh", "Acosh": "arccosh", "Atanh": "arctanh"}


def test_onnx_math_operators_against_onnxruntime():
    ort = pytest.importorskip("onnxruntime")
    rng = np.random.default_rng(23)
    for op, name in MATH_ONNX.items():
        x = (rng.uniform(1.0, 3.0, (3, 4)) if op == "Acosh" else rng.uniform(-0.99, 0.99, (3, 4))).astype(np.float32)
        graph = helper.make_graph([helper.make_node(op, ["x"], ["y"])], op,
                                  [helper.make_tensor_value_info("x", onnx.TensorProto.FLOAT, x.shape)],
                                  [helper.make_tensor_value_info("y", onnx.TensorProto.FLOAT, x.shape)])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)])
        model.ir_version = 10
        want = ort.InferenceSession(model.SerializeToString()).run(None, {"x": x})[0]
        np.testing.assert_allclose(gx.backend.run_model(model, [x])[0], want, rtol=4e-6, atol=1e-7, err_msg=op)
        np.testing.assert_array_equal(getattr(gx, op)(x), getattr(gb, name)(x))
    with pytest.raises(TypeError, match="Sin: tensor\\(int32\\)"):
        gx.Sin(np.arange(3, dtype=np.int32))


@pytest.mark.parametrize("dtype", [np.float16, bfloat16, np.float32, np.float64])
def test_onnx_isinf_isnan_every_flag(dtype):
    x = np.array([-np.inf, -1.0, -0.0, 0.0, 2.0, np.inf, np.nan], dtype)
    cases = {(1, 1): [1, 0, 0, 0, 0, 1, 0], (1, 0): [1, 0, 0, 0, 0, 0, 0], (0, 1): [0, 0, 0, 0, 0, 1, 0],
             (0, 0): [0] * 7}
    for backend in BACKENDS:
        for (neg, pos), want in cases.items():
            got = gx.IsInf(x, detect_negative=neg, detect_positive=pos, backend=backend)
            assert got.dtype == bool and got.tolist() == [bool(v) for v in want], (neg, pos, backend)
        assert gx.IsNaN(x, backend=backend).tolist() == [False] * 6 + [True]
    with pytest.raises(TypeError, match="IsNaN.*T1"):
        gx.IsNaN(np.arange(3))


def test_openvino_math_operators():
    x = np.linspace(-0.9, 0.9, 11).astype(np.float32)
    for op, name in MATH_ONNX.items():
        arg = x + 2.0 if op == "Acosh" else x
        np.testing.assert_array_equal(getattr(gv, op)(arg), getattr(gb, name)(arg))
    with pytest.raises(TypeError, match="Sin: tensor\\(int32\\).*OpenVINO"):
        gv.Sin(np.arange(3, dtype=np.int32))
    ov = pytest.importorskip("openvino")
    from openvino.utils.node_factory import NodeFactory
    core = ov.Core()
    for op in MATH_ONNX:
        arg = x + 2.0 if op == "Acosh" else x
        p = ov.opset1.parameter(list(arg.shape), ov.Type.f32)
        n = NodeFactory("opset4").create(op, [p.output(0)], {})
        compiled = core.compile_model(ov.Model([n], [p]), "CPU", {"INFERENCE_PRECISION_HINT": "f32"})
        np.testing.assert_allclose(getattr(gv, op)(arg), compiled([arg])[0], rtol=4e-6, atol=1e-7, err_msg=op)
