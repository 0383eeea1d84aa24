"""gpubcast.openvino against the OpenVINO runtime as the oracle, on seeded random cases.

Models are built in memory from OpenVINO's opset-1/opset-3 operators (static
shapes) and compiled for the CPU plugin with ``INFERENCE_PRECISION_HINT=f32``.
OpenVINO 2026 dropped ``openvino.runtime``; its opset builders live in
``openvino.opset1``/``openvino.opset3`` and are thin wrappers over
``NodeFactory(...).create(name, inputs, attributes)``, which is used here
directly because only it sets the PDPD axis (``auto_broadcast.auto_broadcast_axis``
and Broadcast-3's ``mode.mode.axis``; the builders leave it at 0).

Two kinds of check:
- shapes: on many random shape pairs (and PDPD axes, axes_mappings), OpenVINO's
  shape inference and gpubcast accept the same ones, with the same output shape;
  the one place they differ by design (OpenVINO's PDPD bound on b's untrimmed
  rank, its acceptance of repeated axes_mapping entries) is asserted exactly;
- values: on random accepted cases of numpy / pdpd / none (elementwise, Select,
  PRelu) and of Broadcast-1/3's modes, the compiled model and gpubcast agree.
Values stay where the CPU plugin follows the specification; where it does not
(integer division, overflow, int64, NaN, x % 0, ...), the tests at the end pin
its behaviour next to gpubcast's, as listed in docs/guide/differences.md.
"""

from __future__ import annotations

import subprocess
import sys
import textwrap
import zlib

import numpy as np
import pytest

ov = pytest.importorskip("openvino")   # a test dependency; a machine without it (the GPU box) skips

import openvino.opset1 as ops1  # noqa: E402 - below the importorskip of openvino
from openvino.utils.node_factory import NodeFactory  # noqa: E402 - below the importorskip of openvino

import gpubcast  # noqa: E402 - below the importorskip of openvino
import gpubcast.openvino as gv  # noqa: E402 - below the importorskip of openvino

CORE = ov.Core()
CONFIG = {"INFERENCE_PRECISION_HINT": "f32"}
OPSET1, OPSET3 = NodeFactory("opset1"), NodeFactory("opset3")

ARITHMETIC = ("Add", "Subtract", "Multiply", "Maximum", "Minimum", "FloorMod", "Mod")
COMPARISON = ("Equal", "NotEqual", "Greater", "GreaterEqual", "Less", "LessEqual")
LOGICAL = ("LogicalAnd", "LogicalOr", "LogicalXor")
DTYPES = ("float32", "float16", "int32", "int8", "uint8", "int64")
RTOL = {"float32": 2e-6, "float16": 2e-3}


# --- building and running OpenVINO models ---------------------------------------------------

def ov_type(dtype):
    return ov.Type.boolean if np.dtype(dtype) == bool else ov.Type(np.dtype(dtype))


def auto_broadcast(rule, axis=-1):
    attributes = {"auto_broadcast": rule}
    if rule == "pdpd":
        attributes["auto_broadcast.auto_broadcast_axis"] = axis
    return attributes


def node(op, inputs, opset=OPSET1, **attributes):
    """An OpenVINO node; raises RuntimeError where OpenVINO's shape inference rejects the inputs."""
    return opset.create(op, [x.output(0) for x in inputs], attributes)


def int64_constant(values):
    """A 1-D i64 constant (``openvino.opset1.constant`` refuses an empty one)."""
    return ov.op.Constant(ov.Type.i64, ov.Shape([len(values)]), [int(v) for v in values])


def broadcast_node(opset, data, target, mode, axes_mapping=None, axis=-1):
    """Broadcast-1 (``OPSET1``) or -3 of node ``data`` (or a f32 parameter of that shape) to ``target``."""
    if isinstance(data, tuple):
        data = ops1.parameter(list(data), ov.Type.f32)
    inputs = [data, int64_constant(target)] + ([] if axes_mapping is None else [int64_constant(axes_mapping)])
    attributes = {"mode": mode}
    if mode == "pdpd":
        attributes["mode.mode.axis"] = axis
    return node("Broadcast", inputs, opset, **attributes)


def run(arrays, make_outputs):
    """Compile a model over ``arrays`` (as parameters) with the nodes ``make_outputs(*params)`` returns; run it."""
    params = [ops1.parameter(list(a.shape), ov_type(a.dtype)) for a in arrays]
    outputs = make_outputs(*params)
    compiled = CORE.compile_model(ov.Model(outputs, params), "CPU", CONFIG)
    result = compiled(list(arrays))
    return [result[i] for i in range(len(outputs))]


def accepts(make):
    try:
        return make()
    except (RuntimeError, gpubcast.BroadcastError):
        return None


def assert_same(actual, expected, what):
    assert actual.shape == expected.shape, what
    assert actual.dtype == expected.dtype, what
    if expected.dtype.kind == "f":
        rtol = RTOL[expected.dtype.name]
        np.testing.assert_allclose(actual, expected, rtol=rtol, atol=rtol, err_msg=what)
    else:
        np.testing.assert_array_equal(actual, expected, err_msg=what)


# --- seeded random shapes ------------------------------------------------------------------

def rng_for(*key):
    return np.random.default_rng(zlib.crc32(repr(key).encode()))


def random_shape(rng, max_rank=4, low=1, high=4):
    return tuple(int(d) for d in rng.integers(low, high + 1, size=int(rng.integers(0, max_rank + 1))))


def with_ones(rng, dims, p=0.3):
    return tuple(1 if rng.random() < p else d for d in dims)


def numpy_pair(rng):
    out = random_shape(rng)
    a = with_ones(rng, out[len(out) - int(rng.integers(0, len(out) + 1)):])
    b = with_ones(rng, out[len(out) - int(rng.integers(0, len(out) + 1)):])
    return (a, b) if rng.random() < 0.5 else (b, a)


def pdpd_pair(rng, to_end=False):
    """(a, b, axis) that PDPD accepts, within OpenVINO's bound axis + rank(b) <= rank(a); mostly with b
    stopping short of a's end, where PDPD and numpy differ (``to_end``: b padded with 1s to reach a's last
    dim, as OpenVINO's Broadcast-3 PDPD needs)."""
    a = random_shape(rng, high=3) + (int(rng.integers(1, 4)),)
    length = int(rng.integers(0, len(a) + 1))
    if rng.random() < 0.2:
        return a, with_ones(rng, a[len(a) - length:]), -1
    start = int(rng.integers(0, len(a) - length + 1))
    core = with_ones(rng, a[start:start + length])
    room = len(a) - start - length
    trailing = room if to_end else int(rng.integers(0, room + 1)) if rng.random() < 0.4 else 0
    return a, core + (1,) * trailing, start


def values(rng, shape, dtype, low=-10, high=10, nonzero=False):
    dtype = np.dtype(dtype)
    if dtype.kind == "b":
        return np.asarray(rng.random(shape) < 0.5)
    if dtype.kind == "u":
        low = max(low, 0)
    if dtype.kind in "iu":
        x = np.asarray(rng.integers(low, high, size=shape, endpoint=True), dtype)
    else:  # multiples of 1/4: exact in f16 and f32, ties for the comparisons, exact remainders
        x = np.asarray(rng.integers(4 * low, 4 * high, size=shape, endpoint=True) / 4, dtype)
    if nonzero:
        x[x == 0] = 1
    return x


# --- shapes: OpenVINO's shape inference and gpubcast accept the same -----------------------------

@pytest.mark.parametrize("rule", ["numpy", "pdpd", "none"])
def test_auto_broadcast_accepts_the_same_shapes(rule):
    rng = rng_for("accept", rule)
    untrimmed = 0
    for _ in range(400):
        a, b = random_shape(rng, high=3), random_shape(rng, high=3)
        if rule == "none" and rng.random() < 0.3:
            b = a
        axis = int(rng.integers(-1, 4))
        params = [ops1.parameter(list(s), ov.Type.f32) for s in (a, b)]
        theirs = accepts(lambda: node("Add", params, **auto_broadcast(rule, axis)).get_output_partial_shape(0))
        ours = accepts(lambda: gpubcast.broadcast_shapes(a, b, rule=rule, axis=axis))
        if ours is not None and theirs is None:
            # the one difference: OpenVINO bounds b by its untrimmed rank, the rules by its trimmed one
            assert rule == "pdpd" and axis != -1 and axis + len(b) > len(a), (a, b, axis)
            untrimmed += 1
            continue
        assert (ours is None) == (theirs is None), (rule, a, b, axis, theirs)
        if ours is not None:
            assert ours == tuple(theirs.to_shape()), (rule, a, b, axis)
    assert rule != "pdpd" or untrimmed > 0


def openvino_broadcast3_pdpd(shape, target, axis):
    """OpenVINO's Broadcast-3 PDPD shape inference, written out (broadcast_shape_inference.hpp): data is
    compared with target from ``axis`` to target's last dim, and a 1 on either side takes the other's dim
    (a bidirectional window); data dims past target's end are not looked at; too few data dims throw.
    The PDPD rules instead place data (trailing 1s ignored) onto target and never grow it."""
    start = len(target) - len(shape) if axis == -1 else axis
    if start < 0:
        return None
    out = list(target)
    for i in range(start, len(target)):
        if i - start >= len(shape):
            return None
        d = shape[i - start]
        if d != 1 and target[i] == 1:
            out[i] = d
        elif d != 1 and d != target[i]:
            return None
    return tuple(out)


@pytest.mark.parametrize("opset,mode", [(OPSET1, "numpy"), (OPSET1, "explicit"), (OPSET3, "numpy"),
                                        (OPSET3, "explicit"), (OPSET3, "bidirectional"), (OPSET3, "pdpd")],
                         ids=["1-numpy", "1-explicit", "3-numpy", "3-explicit", "3-bidirectional", "3-pdpd"])
def test_broadcast_accepts_the_same_shapes(opset, mode):
    rng = rng_for("accept", "Broadcast", opset is OPSET3, mode)
    differences = 0
    for _ in range(300):
        shape, target = random_shape(rng, high=3), random_shape(rng, high=3)
        axes, axis = None, int(rng.integers(-1, 3))
        if mode == "explicit":
            axes = [int(x) for x in rng.integers(0, len(target) + 1, size=len(shape))]
            if rng.random() < 0.6:
                axes.sort()
        theirs = accepts(lambda: broadcast_node(opset, shape, target, mode, axes, axis).get_output_partial_shape(0))
        theirs = None if theirs is None else tuple(theirs.to_shape())
        ours = accepts(lambda: gv.Broadcast(np.zeros(shape, np.float32), target, axes, mode, axis=axis).shape)
        if mode == "pdpd":
            # OpenVINO follows its own rule (above); gpubcast the written one: same result wherever data
            # reaches exactly to target's end and never meets a 1 of target with a larger dim
            assert theirs == openvino_broadcast3_pdpd(shape, target, axis), (shape, target, axis)
            differences += ours != theirs
            continue
        if ours is None and theirs is not None:
            # OpenVINO takes a non-decreasing axes_mapping; the specification asks for a sorted one, which
            # gpubcast reads as strictly increasing (a data dim maps to one output axis of its own)
            assert mode == "explicit" and axes == sorted(axes) and len(set(axes)) < len(axes), (shape, target, axes)
            differences += 1
            continue
        assert ours == theirs, (mode, shape, target, axes, axis)
    assert (differences > 0) == (mode in ("explicit", "pdpd"))


# --- values ----------------------------------------------------------------------------------

def tensor(a):
    """An OpenVINO tensor holding ``a`` with ``a``'s own shape (``ov.Tensor(array)`` makes 0-d arrays 1-D)."""
    t = ov.Tensor(ov_type(a.dtype), ov.Shape(list(a.shape)))
    t.data.reshape(-1)[:] = np.asarray(a).reshape(-1)
    return t


def evaluate(op, arrays, opset=OPSET1, constants=(), **attributes):
    """OpenVINO's reference evaluation of one node (``Node.evaluate``, what its constant folding runs), or
    None where OpenVINO has none for these element types."""
    params = [ops1.parameter(list(a.shape), ov_type(a.dtype)) for a in arrays]
    n = node(op, params + [int64_constant(c) for c in constants], opset, **attributes)
    shape = n.get_output_partial_shape(0).to_shape()
    out = ov.Tensor(n.get_output_element_type(0), shape)
    tensors = [tensor(a) for a in arrays] + [tensor(np.array(c, np.int64).reshape(len(c))) for c in constants]
    if not n.evaluate([out], tensors):
        return None
    return out.data.reshape(tuple(shape)).copy()


#: the elementwise ops, written out in NumPy as the OpenVINO specifications define them
WRITTEN = {"Add": np.add, "Subtract": np.subtract, "Multiply": np.multiply, "Maximum": np.maximum,
           "Minimum": np.minimum, "FloorMod": np.mod, "Mod": np.fmod, "Power": np.power, "Equal": np.equal,
           "NotEqual": np.not_equal, "Greater": np.greater, "GreaterEqual": np.greater_equal, "Less": np.less,
           "LessEqual": np.less_equal, "LogicalAnd": np.logical_and, "LogicalOr": np.logical_or,
           "LogicalXor": np.logical_xor,
           "Divide": lambda a, b: np.floor_divide(a, b) if a.dtype.kind in "iu" else np.divide(a, b)}
#: ops whose reference evaluation OpenVINO gets wrong under PDPD (see test_difference_pdpd_reference_evaluation)
PDPD_REFERENCE_WRONG = {"Greater", "GreaterEqual"}


def pdpd_aligned(b, rank, axis):
    """``b`` laid onto ``rank`` dims by the PDPD rules: trailing 1s dropped, the rest placed from ``axis``
    (-1: rank - rank(b)), 1s elsewhere; NumPy broadcasting then does the rest."""
    b = np.asarray(b)
    start = rank - b.ndim if axis == -1 else axis
    kept = b.shape
    while kept and kept[-1] == 1:
        kept = kept[:-1]
    return b.reshape((1,) * start + kept + (1,) * (rank - start - len(kept)))


def check_outputs(arrays, outputs, rule, what):
    """``outputs``: (op, input indices, attributes, ours, ours as the CPU plugin computes it (a tuple: any
    of them), the written rule's result) each.

    gpubcast must equal the written rule (NumPy over the operands laid out by the rule); OpenVINO's
    reference evaluation, where it has one, must equal gpubcast (under PDPD it has known faults: see the
    differences); the CPU plugin runs all outputs as one compiled model, always for numpy and none, and
    for pdpd where it compiles (its PDPD support is partial, see the differences).
    """
    for op, inputs, attributes, ours, _, written in outputs:
        assert_same(ours, np.asarray(written), f"{op} (written rule) {what}")
        if rule == "pdpd" and op in PDPD_REFERENCE_WRONG:
            continue
        expected = evaluate(op, [arrays[i] for i in inputs], **attributes)
        if expected is not None:
            assert_same(ours, expected, f"{op} (reference evaluation) {what}")
    try:
        theirs = run(arrays, lambda *p: [node(op, [p[i] for i in inputs], **attributes)
                                         for op, inputs, attributes, *_ in outputs])
    except RuntimeError:
        if rule != "pdpd":
            raise
        return
    for (op, _, _, _, ours, _), expected in zip(outputs, theirs):
        if isinstance(ours, tuple):  # the CPU plugin's answer depends on its internal path: any of these
            assert any(np.array_equal(o, expected) for o in ours), f"{op} (CPU plugin) {what}: {expected}"
        else:
            assert_same(ours, expected, f"{op} (CPU plugin) {what}")


def elementwise_case(rng, rule):
    if rule == "numpy":
        a, b = numpy_pair(rng)
        return a, b, -1
    if rule == "pdpd":
        return pdpd_pair(rng)
    a = random_shape(rng)
    return a, a, -1


def laid_out(b, a, rule, axis):
    return pdpd_aligned(b, np.ndim(a), axis) if rule == "pdpd" else b


@pytest.mark.parametrize("dtype", DTYPES)
@pytest.mark.parametrize("rule", ["numpy", "pdpd", "none"])
def test_arithmetic_and_comparisons(rule, dtype):
    rng = rng_for("values", rule, dtype)
    integer = np.dtype(dtype).kind in "iu"
    low = 6 if np.dtype(dtype).kind == "u" else -10    # unsigned: a >= b, so a - b does not wrap
    for _ in range(3):
        a_shape, b_shape, axis = elementwise_case(rng, rule)
        a, b = values(rng, a_shape, dtype, low, 10), values(rng, b_shape, dtype, -5, 5, nonzero=True)
        base = values(rng, a_shape, dtype, -3, 3) if integer else np.abs(values(rng, a_shape, dtype)) + 0.5
        base = np.asarray(base, dtype)
        exponent = values(rng, b_shape, dtype, 0, 3) if integer else values(rng, b_shape, dtype, -2, 2)
        spec = dict(auto_broadcast=rule, axis=axis)
        attributes = auto_broadcast(rule, axis)
        b_laid, exponent_laid = laid_out(b, a, rule, axis), laid_out(exponent, a, rule, axis)
        outputs = [(op, (0, 1), attributes, *[getattr(gv, op)(a, b, **spec)] * 2, WRITTEN[op](a, b_laid))
                   for op in ARITHMETIC + COMPARISON]
        power = gv.Power(base, exponent, **spec)
        outputs.append(("Power", (2, 3), attributes, power, power, np.power(base, exponent_laid)))
        # Divide-1 floors integers (m_pythondiv), as the reference evaluation does; the CPU plugin's own kernel
        # truncates them, and where PDPD makes it fall back to the reference it floors (see the differences)
        floor, trunc = gv.Divide(a, b, **spec), gv.Divide(a, b, m_pythondiv=False, **spec)
        cpu = floor if not integer else trunc if rule != "pdpd" else (floor, trunc)
        outputs.append(("Divide", (0, 1), {**attributes, "m_pythondiv": True}, floor, cpu,
                        WRITTEN["Divide"](a, b_laid)))
        check_outputs([a, b, base, exponent], outputs, rule, f"{rule} axis={axis} {dtype} {a_shape} {b_shape}")


@pytest.mark.parametrize("rule", ["numpy", "pdpd", "none"])
def test_logical(rule):
    rng = rng_for("logical", rule)
    for _ in range(4):
        a_shape, b_shape, axis = elementwise_case(rng, rule)
        a, b = values(rng, a_shape, bool), values(rng, b_shape, bool)
        outputs = [(op, (0, 1), auto_broadcast(rule, axis),
                    *[getattr(gv, op)(a, b, auto_broadcast=rule, axis=axis)] * 2,
                    WRITTEN[op](a, laid_out(b, a, rule, axis))) for op in LOGICAL]
        check_outputs([a, b], outputs, rule, f"{rule} axis={axis} {a_shape} {b_shape}")


@pytest.mark.parametrize("dtype", ["float32", "int32"])
@pytest.mark.parametrize("rule", ["numpy", "pdpd", "none"])
def test_select(rule, dtype):
    rng = rng_for("select", rule, dtype)
    for _ in range(4):
        if rule == "pdpd":   # cond and else placed onto then at one axis
            then_shape, cond_shape, axis = pdpd_pair(rng)
            start = len(then_shape) - len(cond_shape) if axis == -1 else axis
            else_shape = with_ones(rng, then_shape[start:start + len(cond_shape)]) if axis != -1 else \
                with_ones(rng, then_shape[len(then_shape) - int(rng.integers(0, len(then_shape) + 1)):])
        elif rule == "numpy":
            cond_shape, then_shape = numpy_pair(rng)
            else_shape, axis = numpy_pair(rng)[0], -1
            if accepts(lambda: gpubcast.broadcast_shapes(cond_shape, then_shape, else_shape)) is None:
                continue
        else:
            cond_shape = then_shape = else_shape = random_shape(rng)
            axis = -1
        c, t, e = values(rng, cond_shape, bool), values(rng, then_shape, dtype), values(rng, else_shape, dtype)
        ours = gv.Select(c, t, e, auto_broadcast=rule, axis=axis)
        written = np.where(laid_out(c, t, rule, axis), t, laid_out(e, t, rule, axis))
        check_outputs([c, t, e], [("Select", (0, 1, 2), auto_broadcast(rule, axis), ours, ours, written)], rule,
                      f"{rule} axis={axis} {cond_shape} {then_shape} {else_shape}")


def test_prelu_per_channel_and_numpy():
    rng = rng_for("prelu")
    for _ in range(8):
        data_shape = random_shape(rng, max_rank=4) or (3,)
        if len(data_shape) >= 2 and rng.random() < 0.5:
            slope_shape = (data_shape[1],)                                         # per channel
        else:
            slope_shape = with_ones(rng, data_shape[len(data_shape) - int(rng.integers(0, len(data_shape) + 1)):])
            slope_shape = slope_shape or (1,)
        data, slope = values(rng, data_shape, np.float32), values(rng, slope_shape, np.float32)
        per_channel = len(data_shape) >= 2 and slope_shape == (data_shape[1],)
        laid = pdpd_aligned(slope, data.ndim, 1) if per_channel else slope
        ours = gv.PRelu(data, slope)
        check_outputs([data, slope], [("PRelu", (0, 1), {}, ours, ours, np.where(data < 0, data * laid, data))],
                      "numpy", f"{data_shape} {slope_shape}")


@pytest.mark.parametrize("opset,mode", [(OPSET1, "numpy"), (OPSET1, "explicit"), (OPSET3, "bidirectional"),
                                        (OPSET3, "pdpd"), (OPSET3, "explicit")],
                         ids=["1-numpy", "1-explicit", "3-bidirectional", "3-pdpd", "3-explicit"])
def test_broadcast_values(opset, mode):
    rng = rng_for("broadcast", opset is OPSET3, mode)
    for _ in range(4):
        axes, axis = None, -1
        if mode == "explicit":
            target = random_shape(rng)
            axes = sorted(int(x) for x in rng.choice(len(target), size=int(rng.integers(0, len(target) + 1)),
                                                     replace=False))
            shape = with_ones(rng, tuple(target[k] for k in axes))
        elif mode == "pdpd":
            target, shape, axis = pdpd_pair(rng, to_end=True)
        elif mode == "numpy":                   # one-directional: data fits a suffix of target
            target = random_shape(rng)
            shape = with_ones(rng, target[len(target) - int(rng.integers(0, len(target) + 1)):])
        else:
            shape, target = numpy_pair(rng)
        data = values(rng, shape, np.float32)
        ours = gv.Broadcast(data, np.array(target, np.int64), axes, mode, axis=axis)
        if mode == "explicit":
            written = np.broadcast_to(data.reshape([shape[axes.index(d)] if d in axes else 1
                                                    for d in range(len(target))]), target)
        elif mode == "pdpd":
            written = np.broadcast_to(pdpd_aligned(data, len(target), axis), target)
        else:
            written = data * np.ones(target, np.float32)
        what = f"Broadcast {mode} {shape} -> {target} axes={axes} axis={axis}"
        assert_same(ours, written, what + " (written rule)")
        attributes = {"mode": mode, **({"mode.mode.axis": axis} if mode == "pdpd" else {})}
        reference = evaluate("Broadcast", [data], opset, [target] + ([] if axes is None else [axes]), **attributes)
        assert_same(ours, reference, what + " (reference evaluation)")
        if shape or target:  # the CPU plugin dies of SIGSEGV on 0-d data with an empty target (see the differences)
            (expected,) = run([data], lambda x: [broadcast_node(opset, x, target, mode, axes, axis)])
            assert_same(ours, expected, what + " (CPU plugin)")


# --- where the OpenVINO CPU plugin departs from the written rules (each in docs/guide/differences.md) -

#: Clamp's (min, max) attributes: fractional, infinite and out-of-range bounds of integer data
CLAMP_BOUNDS = [(-np.inf, 2.0), (-2.5, 2.5), (-2.4, 2.6), (-2.6, 2.4), (-np.inf, np.inf), (1e30, 2e30),
                (-2e30, -1e30), (2.0**31, 2.0**32), (2147483647.0, 3e9), (-3e9, -2147483648.0), (0.0, 0.0),
                (3.0, 3.0), (100.2, 300.5), (-1e19, 1e19), (2.0**63, np.inf), (-0.5, 200.0)]


@pytest.mark.filterwarnings("ignore::RuntimeWarning")   # NumPy's float16 cast of the bounds 1e30 in the oracle's data
@pytest.mark.parametrize("dtype", ["int8", "uint8", "int16", "uint16", "int32", "uint32", "int64", "uint64",
                                   "float16", "float32"])
def test_clamp_against_the_reference_evaluation(dtype):
    """Integer data: min rounded up, max down, each saturated to the type's range (-inf: its lowest value);
    float data: the bounds in its type, NaN kept -- as OpenVINO's reference evaluation of Clamp-1."""
    dt = np.dtype(dtype)
    if dt.kind == "f":
        x = np.array([-5, -2.5, 0, 1, 3, 300, 1e4, np.inf, -np.inf, np.nan], dt)
    else:
        info = np.iinfo(dt)
        values = [int(info.min), -5, -3, -2, 0, 1, 2, 3, 100, 200, 2**31, 2**40, int(info.max)]
        x = np.array([v for v in values if info.min <= v <= info.max], dt)
    for lo, hi in CLAMP_BOUNDS:
        expected = evaluate("Clamp", [x], min=lo, max=hi)
        got = gv.Clamp(x, min=lo, max=hi)
        assert got.dtype == expected.dtype, (dtype, lo, hi)
        np.testing.assert_array_equal(got, expected, err_msg=f"Clamp({dtype}, min={lo}, max={hi})")


def test_clamp_refuses_nan_and_min_above_max():
    x = np.arange(-3, 4, dtype=np.int32)
    p = ops1.parameter([7], ov.Type.i32)
    for lo, hi in ((3.0, 1.0), (1.5, 1.2), (np.nan, 2.0), (-1.0, np.nan)):
        with pytest.raises(RuntimeError, match="m_min <= m_max"):
            node("Clamp", [p], min=lo, max=hi)
        with pytest.raises(ValueError, match=r"Clamp: attributes 'min' and 'max' must be numbers with min <= max"):
            gv.Clamp(x, min=lo, max=hi)


def test_difference_clamp_bounds_within_one_unit():
    """min <= max with ceil(min) > floor(max) on integer data: the written formula min(max(x, 2), 1) gives
    1 everywhere, as gpubcast and the CPU plugin (i32) do; the reference evaluation (x < 2 ? 2 : x > 1 ? 1 :
    x) gives 2 below 2."""
    x = np.array([-5, 0, 1, 2, 3], np.int32)
    (theirs,) = run([x], lambda p: [node("Clamp", [p], min=1.5, max=1.7)])
    np.testing.assert_array_equal(theirs, [1, 1, 1, 1, 1])
    np.testing.assert_array_equal(gv.Clamp(x, min=1.5, max=1.7), [1, 1, 1, 1, 1])
    np.testing.assert_array_equal(evaluate("Clamp", [x], min=1.5, max=1.7), [2, 2, 2, 1, 1])


@pytest.mark.parametrize("alpha", [np.nan, np.inf, -np.inf, -1.0])
def test_elu_non_finite_alpha(alpha):
    """Elu-1 takes any float alpha; at x = 0 it is alpha * (exp(0) - 1), NaN for an infinite or NaN alpha."""
    x = np.array([-3, -1, -0.25, 0, 0.25, 1, 3, np.nan, np.inf, -np.inf], np.float32)
    (theirs,) = run([x], lambda p: [node("Elu", [p], alpha=alpha)])
    np.testing.assert_allclose(gv.Elu(x, alpha=alpha), theirs, rtol=2e-6, equal_nan=True)


def f32(*v):
    return np.array(v, np.float32)


def test_difference_pdpd_bound_on_untrimmed_rank():
    """PDPD ignores b's trailing 1s for the match (rule 5); OpenVINO still bounds axis + rank(b) <= rank(a)."""
    a, b = np.arange(24, dtype=np.float32).reshape(2, 3, 4), f32(10, 20, 30, 40).reshape(4, 1)
    params = [ops1.parameter([2, 3, 4], ov.Type.f32), ops1.parameter([4, 1], ov.Type.f32)]
    with pytest.raises(RuntimeError, match="broadcast_merge_into"):
        node("Add", params, **auto_broadcast("pdpd", 2))
    np.testing.assert_array_equal(gv.Add(a, b, auto_broadcast="pdpd", axis=2), a + b[:, 0])


def test_difference_pdpd_float_divide_does_not_compile():
    """The CPU plugin's ConvertDivide pass (a / b -> a * b ** -1) loses the PDPD axis: a float Divide whose
    b stops short of a's last dim fails to compile; gpubcast divides."""
    a, b = np.ones((2, 3, 4), np.float32), f32(1, 2, 4)
    with pytest.raises(RuntimeError, match="ConvertDivide"):
        run([a, b], lambda x, y: [node("Divide", [x, y], **auto_broadcast("pdpd", 1))])
    np.testing.assert_array_equal(gv.Divide(a, b, auto_broadcast="pdpd", axis=1), a / b[:, None])


def test_difference_broadcast_3_pdpd():
    """OpenVINO's Broadcast-3 PDPD reads data against target from axis to target's last dim, both ways
    (see openvino_broadcast3_pdpd); the PDPD rules place data onto target_shape, never growing it."""
    grows = broadcast_node(OPSET3, (3, 1, 3, 3), (3, 2, 3, 1), "pdpd")
    assert tuple(grows.get_output_partial_shape(0).to_shape()) == (3, 2, 3, 3)         # beyond target_shape
    with pytest.raises(gpubcast.BroadcastError, match="pdpd"):
        gv.Broadcast(np.ones((3, 1, 3, 3), np.float32), [3, 2, 3, 1], mode="pdpd")
    with pytest.raises(RuntimeError):                                                 # stops short of the end
        broadcast_node(OPSET3, (3,), (2, 3, 4), "pdpd", axis=1)
    data = f32(1, 2, 3)
    np.testing.assert_array_equal(gv.Broadcast(data, [2, 3, 4], mode="pdpd", axis=1),
                                  np.broadcast_to(data[:, None], (2, 3, 4)))


def test_difference_cpu_plugin_pdpd_support():
    """The CPU plugin compiles only some PDPD elementwise nodes (Add, FloorMod, Maximum here; not Mod,
    Equal, Select); gpubcast computes them all."""
    a, b = np.arange(1, 25, dtype=np.float32).reshape(2, 3, 4), f32(2, 3, 5)
    laid = b[:, None]
    for op in ("Add", "FloorMod", "Maximum"):
        (theirs,) = run([a, b], lambda x, y: [node(op, [x, y], **auto_broadcast("pdpd", 1))])
        np.testing.assert_array_equal(theirs, WRITTEN[op](a, laid))
    for op in ("Mod", "Equal"):
        with pytest.raises(RuntimeError):
            run([a, b], lambda x, y: [node(op, [x, y], **auto_broadcast("pdpd", 1))])
        np.testing.assert_array_equal(getattr(gv, op)(a, b, auto_broadcast="pdpd", axis=1), WRITTEN[op](a, laid))
    c = np.array([True, False, True])
    with pytest.raises(RuntimeError):
        run([c, a, b], lambda x, y, z: [node("Select", [x, y, z], **auto_broadcast("pdpd", 1))])
    np.testing.assert_array_equal(gv.Select(c, a, b, auto_broadcast="pdpd", axis=1), np.where(c[:, None], a, laid))


def test_difference_pdpd_reference_evaluation():
    """OpenVINO's reference evaluation (what its constant folding runs) of Greater and GreaterEqual under
    PDPD is wrong where b has fewer elements than a along a matched dim; Less is right."""
    a, b = np.arange(16, dtype=np.float32).reshape(4, 4) % 5, f32(1, 2, 3, 4).reshape(1, 4)
    for op in ("Greater", "GreaterEqual"):
        assert not np.array_equal(evaluate(op, [a, b], **auto_broadcast("pdpd")), WRITTEN[op](a, b))
        np.testing.assert_array_equal(getattr(gv, op)(a, b, auto_broadcast="pdpd"), WRITTEN[op](a, b))
    np.testing.assert_array_equal(evaluate("Less", [a, b], **auto_broadcast("pdpd")), a < b)


def test_difference_broadcast_of_a_scalar_to_an_empty_shape():
    """The CPU plugin dies of SIGSEGV compiling Broadcast of 0-d data to target_shape [] (a valid
    broadcast: the result is 0-d); gpubcast returns the 0-d copy."""
    script = textwrap.dedent("""
        import numpy as np, openvino as ov, openvino.opset1 as ops
        from openvino.utils.node_factory import NodeFactory
        data = ops.parameter([], ov.Type.f32)
        target = ov.op.Constant(ov.Type.i64, ov.Shape([0]), [])
        out = NodeFactory("opset3").create("Broadcast", [data.output(0), target.output(0)], {"mode": "bidirectional"})
        model = ov.Model([out], [data])
        print(ov.Core().compile_model(model, "CPU")([np.array(2.0, np.float32)])[0])
    """)
    child = subprocess.run([sys.executable, "-c", script], capture_output=True, timeout=120)
    assert child.returncode != 0, "the CPU plugin now compiles it: update docs/guide/differences.md"
    result = gv.Broadcast(np.array(2.0, np.float32), np.array([], np.int64), mode="bidirectional")
    assert result.shape == () and result == 2.0


def test_difference_repeated_axes_mapping():
    """Broadcast's axes_mapping must be sorted; OpenVINO takes repeated entries, gpubcast wants them increasing."""
    n = broadcast_node(OPSET3, (1, 3), (2, 3), "explicit", [1, 1])
    assert tuple(n.get_output_partial_shape(0).to_shape()) == (2, 3)
    with pytest.raises(gpubcast.BroadcastError, match="strictly increasing"):
        gv.Broadcast(np.ones((1, 3), np.float32), [2, 3], [1, 1], "explicit")


def test_difference_python_builders_pdpd_axis_defaults_to_0():
    """openvino.opset1's builders give PDPD axis 0; the rules' default is -1 (rank(a) - rank(b)), as gpubcast's."""
    built = ops1.add(ops1.parameter([2, 3], ov.Type.f32), ops1.parameter([1, 3], ov.Type.f32), auto_broadcast="pdpd")
    assert built.get_attributes()["auto_broadcast.auto_broadcast_axis"] == 0
    a, b = np.ones((2, 3, 4), np.float32), f32(1, 2, 3, 4)
    np.testing.assert_array_equal(gv.Add(a, b, auto_broadcast="pdpd"), a + b)              # axis -1: last dim
    with pytest.raises(gpubcast.BroadcastError):
        gv.Add(a, b, auto_broadcast="pdpd", axis=0)                                      # OpenVINO's default


def test_difference_integer_divide():
    """Divide-1's m_pythondiv=True (default) floors integers, as OpenVINO's reference evaluation does; the
    CPU plugin's kernel truncates (it divides in f32, and x / 0 gives garbage), but floors where it falls
    back to the reference (PDPD): one model, two answers.  gpubcast floors, truncates with
    m_pythondiv=False, and gives 0 for x / 0."""
    a, b = np.array([-7, 7, 5, 16777217], np.int32), np.array([2, -2, 0, 1], np.int32)
    (theirs,) = run([a, b], lambda x, y: [node("Divide", [x, y], m_pythondiv=True, auto_broadcast="numpy")])
    np.testing.assert_array_equal(theirs[:2], [-3, -3])                         # truncated, not floored
    assert theirs[3] != 16777217                                                # rounded through f32
    np.testing.assert_array_equal(evaluate("Divide", [a[:2], b[:2]], m_pythondiv=True), [-4, -4])
    row, two = np.array([[-7, 7]], np.int32), np.array([2], np.int32)
    pdpd, numpy = run([row, two], lambda x, y: [node("Divide", [x, y], m_pythondiv=True, **auto_broadcast("pdpd")),
                                                node("Divide", [x, y], m_pythondiv=True, auto_broadcast="numpy")])
    np.testing.assert_array_equal(pdpd, [[-4, 3]])
    np.testing.assert_array_equal(numpy, [[-3, 3]])
    np.testing.assert_array_equal(gv.Divide(a, b), [-4, -4, 0, 16777217])
    np.testing.assert_array_equal(gv.Divide(a, b, m_pythondiv=False), [-3, -3, 0, 16777217])


def test_difference_integer_modulo_by_zero():
    a, b = np.array([5, -5], np.int32), np.array([0, 0], np.int32)
    theirs = run([a, b], lambda x, y: [node("Mod", [x, y]), node("FloorMod", [x, y])])
    assert all((t != 0).any() for t in theirs)                                  # INT_MIN on this plugin
    np.testing.assert_array_equal(gv.Mod(a, b), [0, 0])
    np.testing.assert_array_equal(gv.FloorMod(a, b), [0, 0])


def test_difference_modulo_by_infinity():
    """Mod (C fmod) and FloorMod (Python %) of a finite x by +-inf are x (or the divisor for FloorMod of
    opposite signs); the CPU plugin gives NaN."""
    a, b = f32(5, -5, 5), f32(np.inf, np.inf, -np.inf)
    theirs = run([a, b], lambda x, y: [node("Mod", [x, y]), node("FloorMod", [x, y])])
    assert all(np.isnan(t).all() for t in theirs)
    np.testing.assert_array_equal(gv.Mod(a, b), [5, -5, 5])
    np.testing.assert_array_equal(gv.FloorMod(a, b), [5, np.inf, -np.inf])


def test_difference_maximum_minimum_nan():
    """The CPU plugin's Maximum/Minimum drop a NaN in the first input; gpubcast propagates NaN either way."""
    a, b = f32(np.nan, 1), f32(0, np.nan)
    theirs = run([a, b], lambda x, y: [node("Maximum", [x, y]), node("Minimum", [x, y])])
    for t in theirs:
        np.testing.assert_array_equal(t, [0, np.nan])
    np.testing.assert_array_equal(gv.Maximum(a, b), [np.nan, np.nan])
    np.testing.assert_array_equal(gv.Minimum(a, b), [np.nan, np.nan])


def test_difference_integer_overflow_and_int64():
    """The CPU plugin saturates 8-bit arithmetic and computes i64 in 32 bits; gpubcast wraps (NumPy) in the
    inputs' own width."""
    u, v = np.array([1, 200], np.uint8), np.array([2, 100], np.uint8)
    (theirs,) = run([u, v], lambda x, y: [node("Subtract", [x, y])])
    np.testing.assert_array_equal(theirs, [0, 100])
    np.testing.assert_array_equal(gv.Subtract(u, v), [255, 100])
    big = np.array([2**40], np.int64)
    (theirs,) = run([big, np.array([1], np.int64)], lambda x, y: [node("Add", [x, y])])
    assert theirs[0] != 2**40 + 1
    np.testing.assert_array_equal(gv.Add(big, np.array([1], np.int64)), [2**40 + 1])


def test_difference_integer_zero_to_a_negative_power():
    x, y = np.array([0, 2, 1, -1], np.int32), np.array([-1, -1, -3, -3], np.int32)
    (theirs,) = run([x, y], lambda p, q: [node("Power", [p, q])])
    np.testing.assert_array_equal(theirs, [np.iinfo(np.int32).min, 0, 1, -1])
    np.testing.assert_array_equal(gv.Power(x, y), [0, 0, 1, -1])


def test_difference_prelu_slope_that_does_not_fit():
    """A slope that does not broadcast to data is invalid; the CPU plugin computes a result anyway."""
    data, slope = -np.ones((3, 1), np.float32), np.arange(12, dtype=np.float32).reshape(3, 4)
    (theirs,) = run([data, slope], lambda x, s: [node("PRelu", [x, s])])
    assert theirs.shape == (3, 1)
    with pytest.raises(gpubcast.BroadcastError, match="unidirectional"):
        gv.PRelu(data, slope)
