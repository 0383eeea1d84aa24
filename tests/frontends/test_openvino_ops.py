"""gpubcast.openvino: the specifications' own examples, OpenVINO's type rules, Divide/Mod/FloorMod on
integers, PRelu's per-channel slope, Select with PDPD, and the backend= passthrough.

The cross-checks against the OpenVINO runtime are in test_openvino_oracle.py.
"""

from __future__ import annotations

import numpy as np
import pytest

import gpubcast
import gpubcast.openvino as gv
from gpubcast import backends

f32 = np.float32
#: the activations (issue #22: tests/ops/test_activations.py), with example arguments
ACTIVATIONS = {"SoftPlus": (), "SoftSign": (), "Mish": (), "HSwish": (), "HSigmoid": (), "Gelu": (), "Swish": (),
               "Elu": (), "Clamp": (), "Selu": ("1-D", "1-D"), "HardSigmoid": ("0-D", "0-D"),
               **dict.fromkeys(("Sin", "Cos", "Tan", "Asin", "Acos", "Atan", "Sinh", "Cosh", "Asinh", "Acosh",
                                "Atanh"), ())}
ELEMENTWISE = sorted(set(gv.OPERATORS) - {"Select", "PRelu", "Broadcast"} - set(ACTIVATIONS))


# --- the examples of the specifications (/work/shared/spec) -------------------------------

BROADCAST_1 = [  # openvino-broadcast-1.txt: (data shape, target shape, mode, axes_mapping)
    ((16, 1, 1), (1, 16, 50, 50), "numpy", None),
    ((16,), (1, 16, 50, 50), "explicit", [1]),
    ((50, 50), (1, 50, 50, 16), "explicit", [1, 2]),
]


@pytest.mark.parametrize("shape,target,mode,axes", BROADCAST_1)
def test_broadcast_1_examples(shape, target, mode, axes):
    data = np.arange(np.prod(shape), dtype=f32).reshape(shape)
    result = gv.Broadcast(data, np.array(target, np.int64), None if axes is None else np.array(axes), mode)
    expanded = data
    if axes is not None:  # place data's dims on the mapped axes, 1 elsewhere
        expanded = data.reshape([shape[axes.index(d)] if d in axes else 1 for d in range(len(target))])
    np.testing.assert_array_equal(result, np.broadcast_to(expanded, target))


BIDIRECTIONAL = [((5,), (1,), (5,)), ((2, 3), (3,), (2, 3)), ((3, 1), (3, 4), (3, 4)), ((3, 4), (), (3, 4)),
                 ((3, 1), (2, 1, 6), (2, 3, 6))]


@pytest.mark.parametrize("shape,target,result", BIDIRECTIONAL)
def test_broadcast_3_bidirectional_examples(shape, target, result):
    data = np.arange(np.prod(shape), dtype=np.int32).reshape(shape)
    np.testing.assert_array_equal(gv.Broadcast(data, target, mode="bidirectional"), data * np.ones(target, np.int32))
    assert gv.Broadcast(data, target, mode="BIDIRECTIONAL").shape == result


NUMPY_EXAMPLES = [((), (), ()), ((2, 3), (1,), (2, 3)), ((3,), (2, 3), (2, 3)), ((2, 3, 5), (), (2, 3, 5)),
                  ((2, 1, 5), (1, 4, 5), (2, 4, 5)), ((6, 5), (2, 1, 5), (2, 6, 5)), ((2, 1, 5), (4, 1), (2, 4, 5)),
                  ((3, 2, 1, 4), (5, 4), (3, 2, 5, 4)), ((1, 5, 3), (5, 2, 1, 3), (5, 2, 5, 3))]


@pytest.mark.parametrize("a,b,result", NUMPY_EXAMPLES)
def test_numpy_examples(a, b, result):
    x, y = np.arange(np.prod(a), dtype=f32).reshape(a), np.arange(np.prod(b), dtype=f32).reshape(b)
    np.testing.assert_array_equal(gv.Add(x, y), x + y)
    np.testing.assert_array_equal(gv.Multiply(y, x), y * x)   # symmetric: reversed too
    assert gv.Add(x, y).shape == result


@pytest.mark.parametrize("a,b", [((3,), (2,)), ((3, 1, 5), (4, 4, 5))])
def test_numpy_examples_that_fail(a, b):
    with pytest.raises(gpubcast.BroadcastError, match=r"broadcast \(numpy\)"):
        gv.Add(np.ones(a, f32), np.ones(b, f32))


PDPD_EXAMPLES = [((2, 3, 4, 5), (3, 4), 1), ((2, 3, 4, 5), (3, 1), 1), ((2, 3, 4, 5), (4, 5), -1),
                 ((2, 3, 4, 5), (4, 5), 2), ((2, 3, 4, 5), (1, 3), 0), ((2, 3, 4, 5), (), -1),
                 ((2, 3, 4, 5), (5,), -1)]


@pytest.mark.parametrize("a,b,axis", PDPD_EXAMPLES)
def test_pdpd_examples(a, b, axis):
    x, y = np.arange(np.prod(a), dtype=f32).reshape(a), np.arange(1, np.prod(b) + 1, dtype=f32).reshape(b)
    start = len(a) - len(b) if axis == -1 else axis
    aligned = y.reshape(b + (1,) * (len(a) - start - len(b)))     # b's dims from `start`, 1s after
    np.testing.assert_array_equal(gv.Subtract(x, y, auto_broadcast="pdpd", axis=axis), x - aligned)
    np.testing.assert_array_equal(gv.Broadcast(y, a, mode="pdpd", axis=axis), np.broadcast_to(aligned, a))
    with pytest.raises(gpubcast.BroadcastError, match="pdpd"):    # one-directional: b never takes a's place
        gv.Subtract(y, x, auto_broadcast="pdpd", axis=axis)


def test_none_needs_equal_shapes():
    x = np.ones((2, 3), f32)
    np.testing.assert_array_equal(gv.Add(x, x, auto_broadcast="none"), x + x)
    with pytest.raises(gpubcast.BroadcastError, match=r"broadcast \(none\): shapes must be equal"):
        gv.Add(x, np.ones(3, f32), auto_broadcast="NONE")
    with pytest.raises(ValueError, match="auto_broadcast='explicit' is not an OpenVINO auto-broadcast type"):
        gv.Add(x, x, auto_broadcast="explicit")


# --- type rules ------------------------------------------------------------------------------

@pytest.mark.parametrize("name", ELEMENTWISE)
def test_inputs_share_one_element_type(name):
    a, b = (np.ones(2, bool), np.ones(2, np.int8)) if name.startswith("Logical") else \
        (np.ones(2, f32), np.ones(2, np.float64))
    with pytest.raises(TypeError, match=rf"^{name}: type constraint T needs one element type for a, b"):
        getattr(gv, name)(a, b)


@pytest.mark.parametrize("name", ["Add", "Subtract", "Multiply", "Divide", "Power", "Maximum", "Minimum",
                                  "FloorMod", "Mod"])
def test_arithmetic_rejects_boolean(name):
    with pytest.raises(TypeError, match=rf"^{name}: tensor\(bool\) input \(a, b\) is not allowed .*OpenVINO allows"):
        getattr(gv, name)(np.ones(2, bool), np.ones(2, bool))


@pytest.mark.parametrize("name", ["LogicalAnd", "LogicalOr", "LogicalXor"])
def test_logical_ops_take_boolean_only(name):
    a, b = np.array([True, True, False, False]), np.array([True, False, True, False])
    reference = {"LogicalAnd": np.logical_and, "LogicalOr": np.logical_or, "LogicalXor": np.logical_xor}[name]
    np.testing.assert_array_equal(getattr(gv, name)(a, b), reference(a, b))
    with pytest.raises(TypeError, match=rf"{name}: tensor\(int32\) input"):
        getattr(gv, name)(np.ones(2, np.int32), np.ones(2, np.int32))


@pytest.mark.parametrize("name,reference", [("Equal", np.equal), ("NotEqual", np.not_equal),
                                            ("Greater", np.greater), ("GreaterEqual", np.greater_equal),
                                            ("Less", np.less), ("LessEqual", np.less_equal)])
@pytest.mark.parametrize("dtype", [bool, np.int8, np.uint32, np.float16])
def test_comparisons_return_boolean(name, reference, dtype):
    a, b = np.array([0, 1, 1], dtype), np.array([[1], [0]], dtype)
    result = getattr(gv, name)(a, b)
    assert result.dtype == bool
    np.testing.assert_array_equal(result, reference(a, b))


# --- Divide, Mod, FloorMod, Power on integers ---------------------------------------------------

@pytest.mark.parametrize("dtype", [np.int8, np.int32, np.int64])
def test_divide_integers_floor_by_default(dtype):
    info = np.iinfo(dtype)
    a = np.array([7, -7, 7, -7, 5, info.min, info.min], dtype)
    b = np.array([2, 2, -2, -2, 0, -1, 1], dtype)
    np.testing.assert_array_equal(gv.Divide(a, b), np.array([3, -4, -4, 3, 0, info.min, info.min], dtype))
    np.testing.assert_array_equal(gv.Divide(a, b, m_pythondiv=False),
                                  np.array([3, -3, -3, 3, 0, info.min, info.min], dtype))
    assert gv.Divide(a, b).dtype == dtype


def test_divide_floats_divide():
    a, b = np.array([-7.0, 1.0], np.float16), np.array([2.0, 0.0], np.float16)
    result = gv.Divide(a, b)
    assert result.dtype == np.float16
    np.testing.assert_array_equal(result, [-3.5, np.inf])
    np.testing.assert_array_equal(gv.Divide(a, b, m_pythondiv=False), [-3.5, np.inf])


@pytest.mark.parametrize("dtype", [np.int16, np.int64])
def test_mod_truncates_and_floormod_floors(dtype):
    a, b = np.array([7, -7, 7, -7, 5], dtype), np.array([3, 3, -3, -3, 0], dtype)
    np.testing.assert_array_equal(gv.Mod(a, b), np.array([1, -1, 1, -1, 0], dtype))
    np.testing.assert_array_equal(gv.FloorMod(a, b), np.array([1, 2, -2, -1, 0], dtype))


def test_power_and_maximum():
    x, y = np.array([2, 1, -1, -1, 0, 3], np.int32), np.array([3, -2, -3, -2, -1, 0], np.int32)
    np.testing.assert_array_equal(gv.Power(x, y), [8, 1, -1, 1, 0, 1])
    a, b = np.array([np.nan, 1.0, 2.0], f32), np.array([0.0, np.nan, 1.0], f32)
    np.testing.assert_array_equal(gv.Maximum(a, b), [np.nan, np.nan, 2.0])
    np.testing.assert_array_equal(gv.Minimum(a, b), [np.nan, np.nan, 1.0])


# --- Select, PRelu, Broadcast ----------------------------------------------------------------

def test_select_numpy_and_pdpd():
    cond = np.array([True, False, True])
    then, else_ = np.arange(6, dtype=f32).reshape(2, 3), np.array([-1.0, -2.0, -3.0], f32)
    np.testing.assert_array_equal(gv.Select(cond, then, else_), np.where(cond, then, else_))
    np.testing.assert_array_equal(gv.Select(cond, then, else_, auto_broadcast="pdpd"), np.where(cond, then, else_))
    # PDPD places cond and else onto then at `axis`
    c, e = np.array([[True], [False]]), np.array([[7.0], [8.0]], f32)
    np.testing.assert_array_equal(gv.Select(c, then, e, auto_broadcast="pdpd", axis=0), np.where(c, then, e))
    with pytest.raises(gpubcast.BroadcastError, match=r"pdpd"):      # else may not grow then
        gv.Select(cond, else_, then, auto_broadcast="pdpd")
    with pytest.raises(TypeError, match=r"Select: tensor\(int32\) input \(cond\)"):
        gv.Select(np.ones(3, np.int32), then, else_)
    with pytest.raises(TypeError, match="Select: type constraint T needs one element type for then, else"):
        gv.Select(cond, then, else_.astype(np.float64))


def test_prelu_per_channel_and_numpy():
    data = -np.ones((2, 3, 3), f32)
    slope = np.array([1.0, 2.0, 3.0], f32)
    # slope's length equals data's channel dim (dim 1): per channel, although dim 2 matches too
    np.testing.assert_array_equal(gv.PRelu(data, slope), data * slope[:, None])
    # otherwise the numpy rule, towards data
    data = np.array([[-2.0, 3.0, -4.0, 5.0]], f32).repeat(3, axis=0)
    slope = np.array([0.5, 0.5, 0.25, 0.25], f32)
    np.testing.assert_array_equal(gv.PRelu(data, slope), np.where(data < 0, data * slope, data))
    np.testing.assert_array_equal(gv.PRelu(np.array([-4, 4], np.int32), np.array([3], np.int32)), [-12, 4])
    with pytest.raises(gpubcast.BroadcastError, match="unidirectional"):
        gv.PRelu(-np.ones((3, 1), f32), np.ones((3, 4), f32))


def test_broadcast_checks():
    x = np.ones((1, 3), f32)
    with pytest.raises(gpubcast.BroadcastError, match="axes_mapping must be strictly increasing"):
        gv.Broadcast(x, [2, 3], [1, 1], "explicit")
    with pytest.raises(gpubcast.BroadcastError, match="rule 'explicit' needs axes_mapping"):
        gv.Broadcast(x, [2, 3], mode="explicit")
    with pytest.raises(ValueError, match="axes_mapping is only used with mode='explicit'"):
        gv.Broadcast(x, [2, 3], [0, 1])
    with pytest.raises(ValueError, match="mode='none' is not a Broadcast mode"):
        gv.Broadcast(x, [2, 3], mode="none")
    with pytest.raises(gpubcast.BroadcastError, match="numpy_to"):     # numpy: data -> target only
        gv.Broadcast(np.ones((2, 3), f32), [3])
    words = np.array(["a", "b", "c"], dtype=object)                   # any element type moves
    assert gv.Broadcast(words, [2, 3]).tolist() == [["a", "b", "c"]] * 2


@pytest.mark.parametrize("name", sorted(gv.OPERATORS))
def test_every_operator_passes_backend_through(name, monkeypatch):
    requested = []
    real = backends.select
    monkeypatch.setattr(backends, "select", lambda inputs, out=None, wanted=None: (
        requested.append(wanted), real(inputs, out, wanted))[1])
    f, b = np.array([1.5, -2.0], f32), np.array([True, False])
    args = {"Select": (b, f, f), "Broadcast": (f, [2, 2]), "LogicalAnd": (b, b), "LogicalOr": (b, b),
            "LogicalXor": (b, b)}.get(name, (f, f))
    if name in ACTIVATIONS:
        args = (f, *(f[:1] if p == "1-D" else f[0] for p in ACTIVATIONS[name]))
    kwargs = {"Elu": {"alpha": 1.0}, "Clamp": {"min": -1.0, "max": 1.0}}.get(name, {})
    gv.OPERATORS[name](*args, backend="numpy", **kwargs)
    assert requested and set(requested) == {"numpy"}
