"""Every example in ../shared/spec/ as a table test: valid and invalid cases, symmetric ones re-run
reversed, one-directional ones with the reversed form that must fail."""

import pytest

import gpubcast as gb
from gpubcast import BroadcastError

# (a, b, result) -- ONNX multidirectional (onnx-broadcasting.md) and OpenVINO NUMPY examples
MULTIDIRECTIONAL = [
    ((2, 3, 4, 5), (), (2, 3, 4, 5)),
    ((2, 3, 4, 5), (5,), (2, 3, 4, 5)),
    ((4, 5), (2, 3, 4, 5), (2, 3, 4, 5)),
    ((1, 4, 5), (2, 3, 1, 1), (2, 3, 4, 5)),
    ((3, 4, 5), (2, 1, 1, 1), (2, 3, 4, 5)),
    # openvino-broadcast-rules.rst, Numpy examples
    ((), (), ()),
    ((2, 3), (1,), (2, 3)),
    ((3,), (2, 3), (2, 3)),
    ((2, 3, 5), (), (2, 3, 5)),
    ((2, 1, 5), (1, 4, 5), (2, 4, 5)),
    ((6, 5), (2, 1, 5), (2, 6, 5)),
    ((2, 1, 5), (4, 1), (2, 4, 5)),
    ((3, 2, 1, 4), (5, 4), (3, 2, 5, 4)),
    ((1, 5, 3), (5, 2, 1, 3), (5, 2, 5, 3)),
]
MULTIDIRECTIONAL_INVALID = [
    ((3,), (2,), 0),          # "broadcast won't happen due to dimensions mismatch"
    ((3, 1, 5), (4, 4, 5), 0),  # "... mismatch on the leftmost axis"
]

# ONNX unidirectional (target A, other B)
UNIDIRECTIONAL = [
    ((2, 3, 4, 5), (), (2, 3, 4, 5)),
    ((2, 3, 4, 5), (5,), (2, 3, 4, 5)),
    ((2, 3, 4, 5), (2, 1, 1, 5), (2, 3, 4, 5)),
    ((2, 3, 4, 5), (1, 3, 1, 5), (2, 3, 4, 5)),
]

# OpenVINO PDPD: (A, B, axis)
PDPD = [
    ((2, 3, 4, 5), (3, 4), 1),
    ((2, 3, 4, 5), (3, 1), 1),
    ((2, 3, 4, 5), (4, 5), -1),
    ((2, 3, 4, 5), (4, 5), 2),
    ((2, 3, 4, 5), (1, 3), 0),
    ((2, 3, 4, 5), (), -1),
    ((2, 3, 4, 5), (5,), -1),
]

# Bidirectional (ONNX Expand, OpenVINO Broadcast-3): (input, target, result)
BIDIRECTIONAL = [
    ((5,), (1,), (5,)),
    ((2, 3), (3,), (2, 3)),
    ((3, 1), (3, 4), (3, 4)),
    ((3, 4), (), (3, 4)),
    ((3, 1), (2, 1, 6), (2, 3, 6)),   # also ONNX test_expand_dim_changed
]

# OpenVINO Broadcast-1 explicit examples: (input, target, axes_mapping)
EXPLICIT = [
    ((16,), (1, 16, 50, 50), [1]),
    ((50, 50), (1, 50, 50, 16), [1, 2]),
    ((3,), (2, 3, 4, 5), [1]),          # "[C] to [N,C,H,W] with axes_mapping = [1]"
    ((4, 5), (2, 4, 5, 3), [1, 2]),     # "[H,W] to [N,H,W,C] with axes_mapping = [1, 2]"
]
# OpenVINO Broadcast-1 numpy example: data (16, 1, 1) to [1, 16, 50, 50]
NUMPY_TO = [((16, 1, 1), (1, 16, 50, 50)), ((1, 16, 50, 50), (1, 16, 50, 50))]


@pytest.mark.parametrize("a,b,result", MULTIDIRECTIONAL)
def test_multidirectional(a, b, result):
    assert gb.broadcast_shapes(a, b) == result
    assert gb.broadcast_shapes(b, a) == result  # symmetric: reversed too
    assert gb.plan(a, b).out_shape == result


@pytest.mark.parametrize("a,b,dim", MULTIDIRECTIONAL_INVALID)
def test_multidirectional_invalid(a, b, dim):
    for x, y in ((a, b), (b, a)):
        with pytest.raises(BroadcastError, match=rf"broadcast \(numpy\).*at output dim {dim}"):
            gb.broadcast_shapes(x, y)


@pytest.mark.parametrize("a,b,result", UNIDIRECTIONAL)
def test_unidirectional(a, b, result):
    assert gb.broadcast_shapes(a, b, rule="unidirectional") == result
    if a != b:
        with pytest.raises(BroadcastError, match=r"broadcast \(unidirectional\)"):
            gb.broadcast_shapes(b, a, rule="unidirectional")  # never the reverse


@pytest.mark.parametrize("a,b,axis", PDPD)
def test_pdpd(a, b, axis):
    assert gb.broadcast_shapes(a, b, rule="pdpd", axis=axis) == a
    if a != b and b != ():
        with pytest.raises(BroadcastError, match=r"broadcast \(pdpd"):
            gb.broadcast_shapes(b, a, rule="pdpd", axis=axis)  # b never widens a


@pytest.mark.parametrize("inp,target,result", BIDIRECTIONAL)
def test_bidirectional(inp, target, result):
    assert gb.broadcast_shapes(inp, target, rule="bidirectional") == result
    assert gb.broadcast_shapes(target, inp, rule="bidirectional") == result


def test_expand_examples_values():
    # onnx-expand.txt: dim_changed and dim_unchanged, with the spec's own values
    data = __import__("numpy").arange(1, 4, dtype="float32").reshape(3, 1)
    np = __import__("numpy")
    np.testing.assert_array_equal(gb.expand(data, np.array([2, 1, 6], np.int64), backend="numpy"),
                                  data * np.ones((2, 1, 6), np.float32))
    np.testing.assert_array_equal(gb.expand(data, [3, 4], backend="numpy"), np.tile(data, 4))


@pytest.mark.parametrize("inp,target,mapping", EXPLICIT)
def test_explicit(inp, target, mapping):
    assert gb.broadcast_shapes(inp, target, rule="explicit", axes_mapping=mapping) == target
    with pytest.raises(BroadcastError, match=r"broadcast \(explicit"):
        gb.broadcast_shapes(target, inp, rule="explicit", axes_mapping=mapping)


@pytest.mark.parametrize("inp,target", NUMPY_TO)
def test_numpy_to(inp, target):
    assert gb.broadcast_shapes(inp, target, rule="numpy_to") == target
    if inp != target:
        with pytest.raises(BroadcastError, match=r"broadcast \(numpy_to\)"):
            gb.broadcast_shapes(target, inp, rule="numpy_to")


def test_none():
    assert gb.broadcast_shapes((2, 3), (2, 3), (2, 3), rule="none") == (2, 3)
    with pytest.raises(BroadcastError, match=r"broadcast \(none\)"):
        gb.broadcast_shapes((2, 3), (1, 3), rule="none")
