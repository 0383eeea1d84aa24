"""Every way of calling, repeated: the same values on the first call (the general path) and on the
calls after it (the prepared runner, then the compiled hot path), equal to NumPy's; and an option the
general path rejects stays rejected however warm the paths of a valid one are."""

from __future__ import annotations

import numpy as np
import pytest

import gpubcast as gb
import gpubcast.onnx as gx
import gpubcast.openvino as gv

RNG = np.random.default_rng(7)
X = RNG.standard_normal((4, 8)).astype(np.float32)
Z = RNG.standard_normal((4, 8)).astype(np.float32)
B = RNG.standard_normal(8).astype(np.float32)
C = RNG.standard_normal(4).astype(np.float32)
M3 = RNG.standard_normal((2, 4, 8)).astype(np.float32)
XI = RNG.integers(-9, 9, (4, 8)).astype(np.int32)


def _out(dtype):
    return np.empty((4, 8), dtype)


#: (name, gpubcast call, NumPy's answer); a call taking ``o`` gets a fresh out= each time
FORMS = [
    ("dtype=float64", lambda: gb.add(X, Z, dtype=np.float64), lambda: np.add(X, Z, dtype=np.float64)),
    ("dtype='float64' scalar", lambda: gb.multiply(X, 2, dtype="float64"), lambda: np.multiply(X, 2, dtype="float64")),
    ("dtype=int64 unary", lambda: gb.negative(XI, dtype=np.int64), lambda: np.negative(XI, dtype=np.int64)),
    ("out= of float64", lambda: gb.add(X, Z, out=_out(np.float64)), lambda: np.add(X, Z).astype(np.float64)),
    ("out= of complex64", lambda: gb.multiply(X, B, out=_out(np.complex64)),
     lambda: np.multiply(X, B).astype(np.complex64)),
    ("backend='numba'", lambda: gb.add(X, Z, backend="numba"), lambda: np.add(X, Z)),
    ("broadcast='none'", lambda: gb.subtract(X, Z, broadcast="none"), lambda: np.subtract(X, Z)),
    ("broadcast='pdpd', axis=0", lambda: gb.add(X, C, broadcast="pdpd", axis=0), lambda: X + C[:, None]),
    ("where pdpd", lambda: gb.where(X > 0, X, C, broadcast="pdpd", axis=0), lambda: np.where(X > 0, X, C[:, None])),
    ("prelu", lambda: gb.prelu(X, B), lambda: np.where(X >= 0, X, X * B)),
    ("broadcast_to explicit (a list)", lambda: gb.broadcast_to(C, (4, 8), mode="explicit", axes_mapping=[0]),
     lambda: np.broadcast_to(C[:, None], (4, 8))),
    ("broadcast_to pdpd", lambda: gb.broadcast_to(C, (4, 8), mode="pdpd", axis=0),
     lambda: np.broadcast_to(C[:, None], (4, 8))),
    ("broadcast_to bidirectional", lambda: gb.broadcast_to(B, (4, 1), mode="bidirectional"),
     lambda: np.broadcast_to(B, (4, 8))),
    ("expand", lambda: gb.expand(B, [4, 8]), lambda: np.broadcast_to(B, (4, 8))),
    ("cast", lambda: gb.cast(X, "float16"), lambda: X.astype(np.float16)),
    ("leaky_relu", lambda: gb.leaky_relu(X, 0.1), lambda: np.where(X >= 0, X, np.float32(0.1) * X)),
    ("relu backend named", lambda: gb.relu(X, backend="numba"), lambda: np.maximum(X, 0)),
    ("onnx Sum of 3", lambda: gx.Sum(X, Z, X), lambda: X + Z + X),
    ("onnx Max of 4", lambda: gx.Max(X, Z, B, X), lambda: np.maximum(np.maximum(np.maximum(X, Z), B), X)),
    ("openvino pdpd", lambda: gv.Add(M3, X, auto_broadcast="pdpd", axis=1), lambda: M3 + X),
    ("openvino Broadcast explicit", lambda: gv.Broadcast(C, [4, 8], [0], mode="explicit"),
     lambda: np.broadcast_to(C[:, None], (4, 8))),
]


@pytest.mark.parametrize("call,want", [f[1:] for f in FORMS], ids=[f[0] for f in FORMS])
def test_every_calling_form_gives_numpys_values_on_every_call(call, want):
    expected = want()
    for _ in range(4):   # the general path, the prepared runner, then the compiled path where it serves
        got = call()
        assert got.dtype == expected.dtype and got.shape == expected.shape
        np.testing.assert_array_equal(got, expected)


def test_a_bool_axis_is_rejected_however_warm_the_int_axis_is():
    for _ in range(3):
        gb.add(X, C, broadcast="pdpd", axis=0)
        gb.add(X, B, broadcast="pdpd", axis=1)
    with pytest.raises(TypeError, match="axis must be an int, got bool"):
        gb.add(X, B, broadcast="pdpd", axis=True)
    with pytest.raises(TypeError, match="axis must be an int, got bool"):
        gb.add(X, C, broadcast="pdpd", axis=False)


def test_a_bool_in_axes_mapping_is_rejected_however_warm_the_int_one_is():
    for _ in range(3):
        gb.broadcast_to(C, (4, 8), mode="explicit", axes_mapping=(0,))
    with pytest.raises(TypeError, match="axes_mapping must be a sequence of ints"):
        gb.broadcast_to(C, (8, 4), mode="explicit", axes_mapping=(True,))


@pytest.fixture
def only_compiled(monkeypatch):
    """Once entered, a call that leaves the compiled hot path fails the test (every front door to the
    general path raises)."""
    import gpubcast.api
    import gpubcast.onnx.constraints

    def left(*args, **kwargs):
        raise AssertionError("this call left the compiled path")

    def enter():
        for module in (gpubcast.api, gpubcast.onnx.constraints, gx):
            monkeypatch.setattr(module, "apply", left)
    return enter


@pytest.mark.skipif(not gb.compiled_calls.load(), reason="no compiled hot path (no C++ compiler, not built)")
@pytest.mark.parametrize("call,want", [f[1:] for f in FORMS], ids=[f[0] for f in FORMS])
def test_every_calling_form_is_served_by_the_compiled_path_when_warm(call, want, only_compiled):
    expected = want()
    for _ in range(3):
        call()
    only_compiled()
    got = call()
    np.testing.assert_array_equal(got, expected)
