"""Operator attributes of the ONNX and OpenVINO front ends (``gpubcast.attributes``): every float and
int attribute of every operator that reads one refuses what is not one number, with an error naming
the operator and the attribute; numbers of every accepted kind give what their float gives; NaN and
+-inf compute what ONNX Runtime computes."""

from __future__ import annotations

import math

import ml_dtypes
import numpy as np
import pytest

import gpubcast.onnx as gx
import gpubcast.openvino as gv

X = np.array([-3, -1, -0.25, -0.0, 0, 0.25, 1, 3, np.nan, np.inf, -np.inf], np.float32)
M = np.arange(4, dtype=np.float32).reshape(2, 2)

#: (front end's operator, a call with one attribute set) per float attribute
FLOAT_ATTRIBUTES = {
    **{("onnx", op, a): (lambda op=op, a=a: lambda v: getattr(gx, op)(X, **{a: v}))()
       for op, names in {"LeakyRelu": ("alpha",), "Elu": ("alpha",), "Celu": ("alpha",),
                         "ThresholdedRelu": ("alpha",), "Selu": ("alpha", "gamma"),
                         "HardSigmoid": ("alpha", "beta"), "Shrink": ("bias", "lambd")}.items() for a in names},
    ("onnx", "Gemm", "alpha"): lambda v: gx.Gemm(M, M, M, alpha=v),
    ("onnx", "Gemm", "beta"): lambda v: gx.Gemm(M, M, M, beta=v),
    ("openvino", "Elu", "alpha"): lambda v: gv.Elu(X, alpha=v),
    ("openvino", "Clamp", "min"): lambda v: gv.Clamp(X, min=v, max=5.0),
    ("openvino", "Clamp", "max"): lambda v: gv.Clamp(X, min=-5.0, max=v),
}
INT_ATTRIBUTES = {
    ("onnx", "IsInf", "detect_negative"): lambda v: gx.IsInf(X, detect_negative=v),
    ("onnx", "IsInf", "detect_positive"): lambda v: gx.IsInf(X, detect_positive=v),
    ("onnx", "Gemm", "transA"): lambda v: gx.Gemm(M, M, transA=v),
    ("onnx", "Gemm", "transB"): lambda v: gx.Gemm(M, M, transB=v),
}
#: what is not a float attribute: the value and the error it gives
NOT_FLOATS = [("abc", TypeError), ("1.5", TypeError), (b"2", TypeError), (True, TypeError),
              (np.bool_(False), TypeError), (1j, TypeError), (np.complex64(1), TypeError), (None, TypeError),
              ([0.5], TypeError), (np.array(["1.5"]), TypeError), (np.array([1.0, 2.0]), ValueError),
              (np.zeros(0), ValueError), (10**400, ValueError)]
NOT_INTS = [("1", TypeError), (b"0", TypeError), (1.0, TypeError), (np.float32(0), TypeError), (None, TypeError),
            (np.array([1, 0]), ValueError)]


def _ids(cases):
    return [f"{front}-{op}-{a}" for front, op, a in cases]


#: (front end, operator, attribute, what is refused, its error, what the message says is expected)
REFUSED = [(*key, value, error, "(a real number|a number a float holds)") for key in FLOAT_ATTRIBUTES
           for value, error in NOT_FLOATS] + [(*key, value, error, "an integer") for key in INT_ATTRIBUTES
                                              for value, error in NOT_INTS]


@pytest.mark.parametrize("front, op, name, value, error, expected", REFUSED,
                         ids=[f"{f}-{o}-{a}-{v!r:.20}" for f, o, a, v, _, _ in REFUSED])
def test_an_attribute_that_is_not_one_number(front, op, name, value, error, expected):
    call = {**FLOAT_ATTRIBUTES, **INT_ATTRIBUTES}[front, op, name]
    with pytest.raises(error, match=rf"^{op}: attribute '{name}' must be {expected}"):
        call(value)


def test_messages_say_what_was_given():
    with pytest.raises(TypeError, match=r"got str 'abc' \(a string is not parsed: pass the number\)"):
        gx.LeakyRelu(X, alpha="abc")
    with pytest.raises(ValueError, match=r"got an array of shape \(2,\) \(an array must hold exactly one element\)"):
        gv.Clamp(X, min=np.array([1.0, 2.0]), max=3.0)
    with pytest.raises(ValueError, match=r"'gamma' must be a number a float holds, got int 10{50,}\.\.\.$"):
        gx.Selu(X, gamma=10**400)


@pytest.mark.parametrize("key", list(FLOAT_ATTRIBUTES), ids=_ids(FLOAT_ATTRIBUTES))
def test_every_kind_of_number_gives_what_its_float_gives(key):
    call = FLOAT_ATTRIBUTES[key]
    for value, as_float in ((2, 2.0), (np.int64(-1), -1.0), (np.float32(0.5), 0.5), (np.float16(0.25), 0.25),
                            (ml_dtypes.bfloat16(1.5), 1.5), (np.array(0.75), 0.75),
                            (np.array([1.25], np.float32), 1.25), (np.uint8(3), 3.0)):
        np.testing.assert_array_equal(call(value), call(as_float), err_msg=f"{key} = {value!r}")


@pytest.mark.parametrize("key", list(INT_ATTRIBUTES), ids=_ids(INT_ATTRIBUTES))
def test_every_kind_of_integer_gives_what_its_int_gives(key):
    call = INT_ATTRIBUTES[key]
    for value, as_int in ((True, 1), (False, 0), (np.int8(1), 1), (np.array(0), 0), (np.array([1]), 1)):
        np.testing.assert_array_equal(call(value), call(as_int), err_msg=f"{key} = {value!r}")


ONNX_ACTIVATIONS = {"LeakyRelu": ("alpha",), "Elu": ("alpha",), "Celu": ("alpha",), "ThresholdedRelu": ("alpha",),
                    "Selu": ("alpha", "gamma"), "HardSigmoid": ("alpha", "beta"), "Shrink": ("bias", "lambd")}


@pytest.mark.filterwarnings("ignore::RuntimeWarning")   # the formulas at NaN / inf parameters
@pytest.mark.parametrize("value", [math.nan, math.inf, -math.inf, -1.0], ids=["nan", "inf", "-inf", "-1"])
@pytest.mark.parametrize("op", sorted(ONNX_ACTIVATIONS))
def test_non_finite_attributes_against_onnxruntime(op, value):
    """ONNX Runtime takes NaN and +-inf attributes and computes with them; so does gpubcast.onnx (Elu is
    x itself at x >= 0, whatever alpha: the spec's x >= 0 branch)."""
    ort = pytest.importorskip("onnxruntime")
    from onnx import TensorProto, helper

    for name in ONNX_ACTIVATIONS[op]:
        graph = helper.make_graph([helper.make_node(op, ["x"], ["y"], **{name: value})], op,
                                  [helper.make_tensor_value_info("x", TensorProto.FLOAT, X.shape)],
                                  [helper.make_tensor_value_info("y", TensorProto.FLOAT, X.shape)])
        model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 12 if op == "Celu" else 21)])
        model.ir_version = 10
        want = ort.InferenceSession(model.SerializeToString()).run(None, {"x": X})[0]
        got = getattr(gx, op)(X, **{name: value})
        np.testing.assert_allclose(got, want, rtol=2e-6, equal_nan=True, err_msg=f"{op}({name}={value})")
        if op == "Elu":   # x itself at +-0 (the other ops' signs of 0 at a negative parameter are their formulas')
            assert np.array_equal(np.signbit(got[3:5]), [True, False]), f"{op}({name}={value}): sign of 0"
