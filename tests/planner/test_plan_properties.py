"""Property tests of the planner against NumPy and the naive rules (tests/support/naive_rules.py)."""

import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

import gpubcast as gb
from gpubcast import BroadcastError
from gpubcast.plan import c_strides

from tests.support import naive_rules as naive
from tests.support.layouts import LAYOUTS

small_shapes = hnp.array_shapes(min_dims=0, max_dims=5, min_side=0, max_side=4)


@given(hnp.mutually_broadcastable_shapes(num_shapes=3, min_dims=0, max_dims=6, min_side=0, max_side=5))
def test_numpy_rule_equals_np_broadcast_shapes(shapes):
    assert gb.broadcast_shapes(*shapes.input_shapes) == shapes.result_shape
    assert gb.plan(*shapes.input_shapes).out_shape == shapes.result_shape


@given(st.lists(small_shapes, min_size=1, max_size=3))
def test_numpy_rule_raises_exactly_when_numpy_does(shapes):
    try:
        expected = np.broadcast_shapes(*shapes)
    except ValueError:
        with pytest.raises(BroadcastError):
            gb.broadcast_shapes(*shapes)
    else:
        assert gb.broadcast_shapes(*shapes) == expected


def _layouts(shape, data):
    """The same logical array as contiguous, transposed, sliced and flipped views (``LAYOUTS``)."""
    base = np.arange(int(np.prod(shape)) or 0, dtype=np.int32).reshape(shape)
    return LAYOUTS[data.draw(st.sampled_from(["contiguous", "transposed", "sliced", "flipped"]))](base)


@given(hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=5, min_side=1, max_side=4),
       st.data())
def test_plan_strides_equal_numpy_broadcast_to(shapes, data):
    arrays = [_layouts(s, data) for s in shapes.input_shapes]
    p = gb.plan(*arrays)
    for x, strides in zip(arrays, p.strides):
        expected = np.broadcast_to(x, p.out_shape).strides
        for d, n in enumerate(p.out_shape):
            if n > 1:
                assert strides[d] * x.itemsize == expected[d]


@given(hnp.mutually_broadcastable_shapes(num_shapes=3, min_dims=0, max_dims=6, min_side=1, max_side=4),
       st.data())
def test_coalesced_walk_visits_the_same_offsets(shapes, data):
    """Walking the coalesced dims gives, element for element, the offsets of the full dims."""
    arrays = [_layouts(s, data) for s in shapes.input_shapes]
    p = gb.plan(*arrays)
    idx = np.indices(p.out_shape).reshape(len(p.out_shape), -1) if p.out_shape else np.zeros((0, 1), int)
    cidx = np.indices(p.coalesced_shape).reshape(len(p.coalesced_shape), -1)
    for full, co in zip(p.strides, p.coalesced_strides):
        expected = (np.array(full, dtype=np.int64)[:, None] * idx).sum(0) if full else np.zeros(1, np.int64)
        got = (np.array(co, dtype=np.int64)[:, None] * cidx).sum(0)
        np.testing.assert_array_equal(got, expected)


def _naive(rule, shapes, axis, mapping):
    return {
        "numpy": lambda: naive.numpy_rule(*shapes),
        "unidirectional": lambda: naive.unidirectional(*shapes),
        "numpy_to": lambda: naive.numpy_to(*shapes),
        "bidirectional": lambda: naive.bidirectional(*shapes),
        "pdpd": lambda: naive.pdpd(*shapes, axis=axis),
        "explicit": lambda: naive.explicit(*shapes, mapping),
        "none": lambda: naive.none(*shapes),
    }[rule]()


@given(st.sampled_from(["numpy", "unidirectional", "numpy_to", "bidirectional", "pdpd", "explicit", "none"]),
       small_shapes, small_shapes, st.integers(-1, 5), st.lists(st.integers(-1, 5), max_size=5), st.data())
def test_every_rule_agrees_with_the_naive_reference(rule, a, b, axis, mapping, data):
    if data.draw(st.booleans()):  # make fitting cases likely: derive b from a
        k = data.draw(st.integers(0, len(a)))
        start = data.draw(st.integers(0, len(a) - k))
        b = tuple(n if data.draw(st.booleans()) else 1 for n in a[start:start + k])
        if rule == "pdpd":
            axis = data.draw(st.sampled_from([-1, start]))
        if rule == "explicit":
            a, b = b, a
            mapping = list(range(start, start + k))
        if data.draw(st.booleans()):
            b = b + (1,) * data.draw(st.integers(0, 2))
    shapes = (a, b)
    try:
        expected = _naive(rule, shapes, axis, mapping)
    except ValueError:
        with pytest.raises(BroadcastError):
            gb.broadcast_shapes(*shapes, rule=rule, axis=axis, axes_mapping=mapping)
    else:
        assert gb.broadcast_shapes(*shapes, rule=rule, axis=axis, axes_mapping=mapping) == expected


def test_plan_is_cached_and_hashable():
    a, b = np.ones((3, 4)), np.ones(4)
    p = gb.plan(a, b)
    assert gb.plan(a, b) is p
    assert hash(p) == hash(gb.plan(np.zeros((3, 4)), np.zeros(4)))
    with pytest.raises(AttributeError):
        p.out_shape = (1,)


def test_classes_and_coalescing():
    a = np.ones((8, 4, 6), np.float32)
    p = gb.plan(a, np.ones((1, 4, 6), np.float32))
    assert p.coalesced_shape == (8, 24) and p.classes == ("contiguous", "strided")
    assert p.coalesced_strides == ((24, 1), (0, 1))
    assert gb.plan(a, a).coalesced_shape == (192,)
    assert gb.plan(a, np.float32(2)).classes == ("contiguous", "scalar")
    assert gb.plan(a.transpose(2, 1, 0), np.ones(8)).classes == ("strided", "strided")
    assert gb.plan((), ()).coalesced_shape == (1,)       # rank 0 -> one element
    z = gb.plan((0, 3), (1, 3))
    assert z.size == 0 and z.out_shape == (0, 3) and z.coalesced_shape == (0,)
    # a column broadcast: (M,K)+(M,1)
    assert gb.plan((5, 7), (5, 1)).coalesced_strides == ((7, 1), (1, 0))


def test_negative_strides_pass_through():
    x = np.arange(12.0).reshape(3, 4)[::-1, ::-2]
    p = gb.plan(x, np.ones((2, 3, 2)))
    assert p.strides[0] == (0, -4, -2)
    np.testing.assert_array_equal(gb.add(x, np.zeros((2, 3, 2)), backend="numpy"), x + np.zeros((2, 3, 2)))


def test_index_width():
    assert gb.plan((2**16, 2**14), (1,)).index_bits == 32
    assert gb.plan((2**16, 2**15), (1,)).index_bits == 64        # 2^31 elements
    assert gb.plan((2, 2**31 - 1), (2**31 - 1,)).index_bits == 64
    # an operand whose reach exceeds 2^31 even though the output is small
    big = np.lib.stride_tricks.as_strided(np.zeros(1, np.int8), (2, 2), (2**31, 1))
    assert gb.plan(big, (2, 2)).index_bits == 64


def test_rank_64_and_beyond():
    shape = (1, 2) * 32
    assert gb.broadcast_shapes(shape, (2,)) == shape
    assert gb.plan(shape, (2,)).coalesced_shape == (2**31, 2)   # operand 1 only walks the last dim
    assert gb.plan(shape, shape).coalesced_shape == (2**32,)
    with pytest.raises(ValueError, match="rank 65"):
        gb.broadcast_shapes((1,) * 65, (1,))


def test_zero_size_rules():
    assert gb.broadcast_shapes((0,), (1,)) == (0,)
    assert gb.broadcast_shapes((0, 3), (3,)) == (0, 3)
    with pytest.raises(BroadcastError, match="0 vs 2|2 vs 0"):
        gb.broadcast_shapes((0,), (2,))
    assert gb.broadcast_shapes((2, 0, 5), (0, 1), rule="pdpd", axis=1) == (2, 0, 5)
    out = gb.add(np.ones((0, 3)), np.ones(3), backend="numpy")
    assert out.shape == (0, 3)


def test_pdpd_edge_cases():
    # trailing 1s of b ignored for the match, a 1 inside b broadcasts, default axis uses b's full rank
    assert gb.broadcast_shapes((2, 3, 4, 5), (3, 1), rule="pdpd", axis=1) == (2, 3, 4, 5)
    assert gb.broadcast_shapes((2, 3, 4, 5), (1, 4, 5), rule="pdpd") == (2, 3, 4, 5)
    assert gb.broadcast_shapes((2, 3, 4, 5), (4, 5, 1), rule="pdpd", axis=2) == (2, 3, 4, 5)
    assert gb.broadcast_shapes((2, 3, 4, 5), (4, 1), rule="pdpd") == (2, 3, 4, 5)  # axis 2, dim 3 is 1
    with pytest.raises(BroadcastError):
        gb.broadcast_shapes((2, 3, 4, 5), (4, 1), rule="pdpd", axis=3)   # 4 lands on 5
    with pytest.raises(BroadcastError):
        gb.broadcast_shapes((2, 1, 4, 5), (3, 4), rule="pdpd", axis=1)   # b never widens a
    a = np.arange(120.0).reshape(2, 3, 4, 5)
    b = np.arange(3.0).reshape(3, 1)
    np.testing.assert_array_equal(gb.add(a, b, broadcast="pdpd", axis=1, backend="numpy"),
                                  a + b.reshape(1, 3, 1, 1))


def test_expand_shorter_target_and_ones():
    assert gb.broadcast_shapes((2, 3, 4), (4,), rule="bidirectional") == (2, 3, 4)
    assert gb.broadcast_shapes((2, 3, 4), (1, 1), rule="bidirectional") == (2, 3, 4)
    assert gb.expand(np.ones((2, 1)), (1, 5), backend="numpy").shape == (2, 5)


def test_out_strides_enter_the_plan():
    out = np.empty((6, 4)).T
    p = gb.plan(np.ones((4, 6)), np.ones(6), out=out)
    assert p.out_strides == (1, 4) and not p.out_contiguous
    assert c_strides((4, 6)) == (6, 1)


@given(hnp.mutually_broadcastable_shapes(num_shapes=3, min_dims=0, max_dims=5, min_side=0, max_side=4))
def test_dim_maps_say_which_output_dim_each_operand_dim_walks(shapes):
    # right-aligned (numpy rule): dim k of a rank-r operand lies on output dim R - r + k, and walks it
    # unless it is broadcast (1 against a larger dim); a dim that walks is exactly one with a stride
    p = gb.plan(*shapes.input_shapes)
    out = shapes.result_shape
    for s, walks, strides in zip(shapes.input_shapes, p.dim_maps, p.strides):
        lead = len(out) - len(s)
        assert walks == tuple(lead + k if n == out[lead + k] and n != 1 else None for k, n in enumerate(s))
        assert {d for d in walks if d is not None} == {d for d, x in enumerate(strides) if x}


def test_dim_maps_follow_every_rule():
    assert gb.plan((2, 3, 4, 5), (3, 1), rule="pdpd", axis=1).dim_maps == ((0, 1, 2, 3), (1, None))
    assert gb.plan((3,), (2, 3, 4), rule="explicit", axes_mapping=[1]).dim_maps == ((1,), (0, 1, 2))
    assert gb.plan((3, 1), (2, 1, 6), rule="bidirectional").dim_maps == ((1, None), (0, None, 2))
