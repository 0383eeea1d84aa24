"""gpubcast on Dask arrays (threaded scheduler): every op and rule set on unevenly chunked arrays.

Oracles: NumPy itself (ufuncs over an explicit NumPy reshape for the mapped rules, np.broadcast_to
for data movement) and the same gpubcast call on NumPy arrays (the reference backend, unchunked).
"""

import numpy as np
import pytest
from hypothesis import given, strategies as st
from hypothesis.extra import numpy as hnp

da = pytest.importorskip("dask.array")

import gpubcast as gb  # noqa: E402 - below the importorskip of Dask
from gpubcast import BroadcastError, dispatch, ops  # noqa: E402 - below the importorskip of Dask

API_BINARY = gb.api.NUMPY_STYLE_BINARY
INTEGER_ONLY = {"bitwise_and", "bitwise_or", "bitwise_xor", "left_shift", "right_shift"}
SHIFTS = {"left_shift", "right_shift"}


def uneven(a, seed=0):
    """``a`` as a Dask array with two uneven chunks per dim (7 -> (5, 2), or (4, 3) with an odd
    ``seed``); dims of size <= 1 stay one chunk.  Chunks larger than 1 make a misplaced operand fail."""
    chunks = []
    for n in a.shape:
        first = n - n // 3 - (seed % 2 if n > 3 else 0)
        chunks.append((first, n - first) if n > 1 else (n,))
    return da.from_array(a, chunks=tuple(chunks))


def poisoned(a):
    """A lazy Dask array of ``a``'s shape, dtype and chunks whose computation raises."""
    def boom(block):
        raise RuntimeError("computed a poisoned input")
    return uneven(a).map_blocks(boom, dtype=a.dtype)


def operands(name, shapes, seed=0):
    rng = np.random.default_rng(seed)
    if name in INTEGER_ONLY or name == "power":
        arrays = [rng.integers(-6, 7, size=s).astype(np.int32) for s in shapes]
        if name in SHIFTS or name == "power":
            arrays[1] = np.abs(arrays[1]) % 5   # shift counts / exponents >= 0: NumPy's defined range
        return arrays
    return [np.round(rng.normal(size=s) * 4, 1) for s in shapes]


def check(result, expected, rtol=0.0):
    """``result`` a Dask array of ``expected``'s type and values (``rtol``: the math functions'
    tolerance, ``ops.math_rtol``; else exact)."""
    assert isinstance(result, da.Array), type(result)
    assert result.dtype == expected.dtype
    assert result.shape == expected.shape
    assert type(result._meta) is np.ndarray and result._meta.ndim == result.ndim
    assert result._meta.dtype == expected.dtype
    computed = result.compute(scheduler="threads")
    assert isinstance(computed, np.ndarray)
    assert computed.dtype == expected.dtype
    if rtol:
        np.testing.assert_allclose(computed, expected, rtol=rtol, atol=0)
    else:
        np.testing.assert_array_equal(computed, expected)


# --- every NumPy-style binary op --------------------------------------------------------------

@pytest.mark.parametrize("name", API_BINARY)
def test_binary_op_numpy_rule_matches_numpy(name):
    a, b = operands(name, [(7, 1, 6), (5, 1)])
    x, y = uneven(a), uneven(b, seed=1)
    with np.errstate(all="ignore"):
        expected = getattr(np, name)(a, b)
    result = getattr(gb, name)(x, y)
    check(result, expected, ops.math_rtol(name, expected.dtype))
    assert result.chunks == (x.chunks[0], y.chunks[0], x.chunks[2])


@pytest.mark.parametrize("name", API_BINARY)
def test_binary_op_pdpd_matches_reference_backend(name):
    a, b = operands(name, [(2, 5, 4, 3), (5, 4)], seed=2)
    x, y = uneven(a), uneven(b, seed=3)
    expected = getattr(gb, name)(a, b, broadcast="pdpd", axis=1)
    rtol = ops.math_rtol(name, expected.dtype)
    with np.errstate(all="ignore"):   # independent: b placed at axis 1
        np.testing.assert_allclose(expected, getattr(np, name)(a, b.reshape(1, 5, 4, 1)), rtol=rtol, atol=0)
    check(getattr(gb, name)(x, y, broadcast="pdpd", axis=1), expected, rtol)


@pytest.mark.parametrize("name", ["subtract", "less", "floor_divide", "right_shift"])
def test_binary_op_rule_none(name):
    a, b = operands(name, [(6, 7), (6, 7)], seed=4)
    check(getattr(gb, name)(uneven(a), uneven(b, seed=5), broadcast="none"),
          getattr(gb, name)(a, b, broadcast="none"))


# --- every rule set through dispatch.apply ----------------------------------------------------

# (rule, shapes, axis, target, the NumPy-broadcastable reshape of each operand)
RULE_CASES = [
    ("numpy", [(4, 1, 6), (3, 6)], -1, 0, [(4, 1, 6), (1, 3, 6)]),
    ("numpy", [(5,), (3, 1), (2, 1, 1)], -1, 0, [(1, 1, 5), (1, 3, 1), (2, 1, 1)]),
    ("numpy", [(0, 3), (1, 3)], -1, 0, [(0, 3), (1, 3)]),
    ("pdpd", [(2, 3, 4, 5), (3, 4)], 1, 0, [(2, 3, 4, 5), (1, 3, 4, 1)]),
    ("pdpd", [(2, 3, 4, 5), (3, 1)], 1, 0, [(2, 3, 4, 5), (1, 3, 1, 1)]),
    ("pdpd", [(2, 3, 4, 5), (1, 4, 1)], 1, 0, [(2, 3, 4, 5), (1, 1, 4, 1)]),
    ("pdpd", [(2, 3, 4, 5), (4, 5)], -1, 0, [(2, 3, 4, 5), (1, 1, 4, 5)]),
    ("pdpd", [(2, 3, 4, 5), (3,), (3, 4)], 1, 0, [(2, 3, 4, 5), (1, 3, 1, 1), (1, 3, 4, 1)]),
    ("none", [(3, 4), (3, 4), (3, 4)], -1, 0, [(3, 4)] * 3),
    ("unidirectional", [(2, 3, 4), (3, 1)], -1, 0, [(2, 3, 4), (1, 3, 1)]),
]



@pytest.mark.parametrize("rule,shapes,axis,target,aligned", RULE_CASES)
def test_variadic_sum_every_rule(rule, shapes, axis, target, aligned):
    rng = np.random.default_rng(len(shapes))
    arrays = [rng.integers(-50, 50, size=s).astype(np.int64) for s in shapes]
    dasks = [uneven(a, seed=i) for i, a in enumerate(arrays)]
    expected = sum(a.reshape(s) for a, s in zip(arrays, aligned))   # NumPy's own broadcasting
    np.testing.assert_array_equal(dispatch.apply(ops.get("sum"), arrays, rule=rule, axis=axis), expected)
    check(dispatch.apply(ops.get("sum"), dasks, rule=rule, axis=axis), expected)


def test_where_numpy_rule_three_way():
    rng = np.random.default_rng(6)
    c, a, b = rng.random((4, 1, 6)) > 0.5, rng.normal(size=(5, 1)), rng.normal(size=(6,)).astype(np.float32)
    expected = np.where(c, a, b)
    check(gb.where(uneven(c), uneven(a, 1), uneven(b, 2)), expected)
    check(gb.where(uneven(c), a, 0.5), np.where(c, a, 0.5))      # mixed with NumPy and a scalar


def test_where_pdpd_targets_x():
    """OpenVINO Select: x is the target, condition and y are placed onto it at axis."""
    rng = np.random.default_rng(7)
    c, x, y = rng.random((3, 4)) > 0.5, rng.normal(size=(2, 3, 4, 5)), rng.normal(size=(3,))
    expected = np.where(c.reshape(1, 3, 4, 1), x, y.reshape(1, 3, 1, 1))
    np.testing.assert_array_equal(gb.where(c, x, y, broadcast="pdpd", axis=1), expected)
    check(gb.where(uneven(c), uneven(x, 1), uneven(y, 2), broadcast="pdpd", axis=1), expected)


@pytest.mark.parametrize("xs,ss", [((2, 3, 4), (3, 1)), ((2, 3, 4), (4,)), ((5, 7), ()), ((6,), (6,))])
def test_prelu_unidirectional(xs, ss):
    rng = np.random.default_rng(8)
    x, s = rng.normal(size=xs).astype(np.float32), rng.uniform(0.1, 0.5, size=ss).astype(np.float32)
    expected = np.where(x < 0, x * s, x)
    check(gb.prelu(uneven(x), uneven(s, 1) if ss else s), expected)
    check(gb.prelu(uneven(x), s), expected)


def test_prelu_slope_may_not_widen_x():
    x, s = np.ones((3, 1), np.float32), np.ones((3, 4), np.float32)
    with pytest.raises(BroadcastError) as from_numpy:
        gb.prelu(x, s)
    with pytest.raises(BroadcastError) as from_dask:
        gb.prelu(poisoned(x), poisoned(s))
    assert str(from_dask.value) == str(from_numpy.value)


# --- data movement -----------------------------------------------------------------------------

# (input shape, target shape, mode, axes_mapping, axis, NumPy reshape of the input, output shape)
MOVE_CASES = [
    ((3, 1), (2, 3, 4), "numpy", None, -1, (1, 3, 1), (2, 3, 4)),
    ((7,), (5, 7), "numpy", None, -1, (1, 7), (5, 7)),
    ((3, 1), (2, 1, 6), "bidirectional", None, -1, (1, 3, 1), (2, 3, 6)),
    ((2, 3, 4), (3, 1), "bidirectional", None, -1, (2, 3, 4), (2, 3, 4)),
    ((3,), (2, 3, 4), "explicit", [1], -1, (1, 3, 1), (2, 3, 4)),
    ((2, 4), (2, 3, 4), "explicit", [0, 2], -1, (2, 1, 4), (2, 3, 4)),
    ((1, 4), (2, 3, 4), "explicit", [1, 2], -1, (1, 1, 4), (2, 3, 4)),
    ((3, 4), (2, 3, 4, 5), "pdpd", None, 1, (1, 3, 4, 1), (2, 3, 4, 5)),
    ((3, 1), (2, 3, 4, 5), "pdpd", None, 1, (1, 3, 1, 1), (2, 3, 4, 5)),
    ((5, 6), (0, 5, 6), "numpy", None, -1, (1, 5, 6), (0, 5, 6)),
    ((), (4, 3), "numpy", None, -1, (1, 1), (4, 3)),
]


@pytest.mark.parametrize("xs,target,mode,mapping,axis,aligned,out_shape", MOVE_CASES)
def test_broadcast_to_every_mode(xs, target, mode, mapping, axis, aligned, out_shape):
    a = np.arange(int(np.prod(xs)), dtype=np.int16).reshape(xs)
    x = uneven(a)
    expected = np.broadcast_to(a.reshape(aligned), out_shape)
    result = gb.broadcast_to(x, target, mode=mode, axes_mapping=mapping, axis=axis)
    check(result, expected)
    # the input's chunks are kept on the dims it spans
    for d, n in enumerate(aligned):
        if n == out_shape[d] and n != 1:
            spanned = [k for k, m in enumerate(xs) if m != 1]
            assert result.chunks[d] == x.chunks[spanned[[e for e, m in enumerate(aligned) if m != 1].index(d)]]
    assert all(sum(c) == n for c, n in zip(result.chunks, out_shape))


def test_expand_matches_numpy_and_returns_new_writable_chunks():
    a = np.arange(3.0).reshape(3, 1)
    result = gb.expand(uneven(a), (2, 1, 6))
    check(result, np.broadcast_to(a, (2, 3, 6)))
    block = result.blocks[0, 0, 0].compute()
    assert block.flags.writeable and block.flags.c_contiguous and block.base is None
    assert gb.expand(uneven(a), np.array([2, 1, 6])).shape == (2, 3, 6)


def test_broadcast_to_large_new_dims_are_chunked():
    """Broadcast dims get Dask's auto chunks, not one chunk of the whole output."""
    x = da.ones((1, 1000), chunks=(1, 300), dtype=np.float64)
    result = gb.broadcast_to(x, (200_000, 1000))
    assert result.chunks[1] == (300, 300, 300, 100)
    assert len(result.chunks[0]) > 1
    assert result[-3:, -5:].compute().sum() == 15.0


@pytest.mark.parametrize("dtype", ["U3", object, "datetime64[s]"])
def test_broadcast_to_any_dtype(dtype):
    a = np.array(["ab", "c", "def"], dtype=object).astype(dtype) if dtype != "datetime64[s]" \
        else np.array([0, 10, 20], dtype="datetime64[s]")
    result = gb.broadcast_to(da.from_array(a, chunks=2), (4, 3))
    assert result.dtype == a.dtype
    np.testing.assert_array_equal(result.compute(), np.broadcast_to(a, (4, 3)))


# --- mixes with NumPy arrays, scalars, 0-d arrays ----------------------------------------------

def test_mix_numpy_first_dask_second():
    a, b = np.arange(12.0).reshape(3, 4), np.arange(4.0)
    y = uneven(b)
    result = gb.subtract(a, y)
    check(result, a - b)
    assert result.chunks[1] == y.chunks[0]       # the NumPy operand is chunked like the Dask one


def test_mix_numpy_array_placed_by_pdpd():
    a, b = np.arange(24.0).reshape(2, 3, 4), np.arange(3.0)
    check(gb.multiply(uneven(a), b, broadcast="pdpd", axis=1), a * b.reshape(1, 3, 1))
    # NumPy target, Dask operand placed onto it
    check(gb.multiply(a, uneven(b), broadcast="pdpd", axis=1), a * b.reshape(1, 3, 1))


@pytest.mark.parametrize("scalar,dtype,expected_dtype", [
    (2, np.int8, np.int8), (2.5, np.float32, np.float32), (2.5, np.int32, np.float64),
    (True, np.uint8, np.uint8), (1j, np.float32, np.complex64)])
def test_python_scalars_are_weak(scalar, dtype, expected_dtype):
    a = np.arange(10, dtype=dtype).reshape(2, 5)
    result = gb.add(uneven(a), scalar)
    assert result.dtype == expected_dtype
    check(result, np.add(a, scalar))
    check(gb.subtract(scalar, uneven(a)), np.subtract(scalar, a))


def test_zero_d_arrays_numpy_and_dask():
    a = np.arange(6, dtype=np.int16).reshape(2, 3)
    check(gb.multiply(uneven(a), np.int64(3)), a * np.int64(3))
    check(gb.multiply(uneven(a), np.array(3, np.int8)), a * np.array(3, np.int8))
    zero_d = da.from_array(np.array(4, np.int32))
    check(gb.multiply(uneven(a), zero_d), a * np.array(4, np.int32))
    check(gb.maximum(zero_d, np.array(7, np.int32)), np.array(7, np.int32))   # all rank 0


def test_list_input_mixed_with_dask():
    a = np.arange(6.0).reshape(2, 3)
    check(gb.add(uneven(a), [1.0, 2.0, 3.0]), a + [1.0, 2.0, 3.0])


def test_dtype_argument_and_non_ufunc_ops():
    a, b = np.arange(6, dtype=np.int32).reshape(2, 3), np.arange(3, dtype=np.int32)
    for dtype in (np.float32, np.int64):
        check(gb.add(uneven(a), uneven(b), dtype=dtype), gb.add(a, b, dtype=dtype))   # as the NumPy path
    trunc = dispatch.apply(ops.get("div_trunc"), (uneven(-a), uneven(b + 1)), rule="numpy")
    check(trunc, np.trunc(-a / (b + 1)).astype(np.int32))


def test_zero_size_chunks_and_outputs():
    a, b = np.ones((0, 3)), np.arange(3.0)
    check(gb.add(uneven(a), uneven(b)), a + b)
    x = da.from_array(np.arange(7.0), chunks=((3, 0, 4),))
    check(gb.add(x, 1.0), np.arange(7.0) + 1)


def test_result_is_lazy_and_reproducible():
    a = np.ones((4, 5))
    lazy = gb.add(poisoned(a), 1.0)      # nothing computed at call time
    assert isinstance(lazy, da.Array)
    with pytest.raises(RuntimeError, match="poisoned"):
        lazy.compute(scheduler="threads")
    x, y = uneven(a), uneven(a[0])
    assert gb.add(x, y).name == gb.add(x, y).name       # deterministic graph names
    assert gb.add(x, y).name != gb.subtract(x, y).name


def test_chained_ops_stay_lazy_and_correct():
    a, b = np.arange(20.0).reshape(4, 5), np.arange(5.0)
    x = uneven(a)
    result = gb.where(gb.greater(x, 7.0), gb.multiply(x, uneven(b)), gb.broadcast_to(uneven(b), (4, 5)))
    check(result, np.where(a > 7, a * b, np.broadcast_to(b, (4, 5))))


# --- errors at call time ------------------------------------------------------------------------

@pytest.mark.parametrize("call", [
    lambda x, y: gb.add(x, y),
    lambda x, y: gb.add(x, y, broadcast="none"),
    lambda x, y: gb.multiply(x, y, broadcast="pdpd", axis=2),
    lambda x, y: gb.where(x > 0 if isinstance(x, np.ndarray) else gb.greater(x, 0), x, y),
    lambda x, y: gb.broadcast_to(x, (5,)),
    lambda x, y: gb.broadcast_to(y, (3, 4), mode="explicit", axes_mapping=[0]),
    lambda x, y: gb.expand(x, (4, 1)),
])
def test_shape_errors_are_eager_and_identical_to_numpy(call):
    a, b = np.ones((3, 4)), np.ones((3, 5))
    with pytest.raises(BroadcastError) as from_numpy:
        call(a, b)
    with pytest.raises(BroadcastError) as from_dask:
        call(poisoned(a), poisoned(b))      # a computation would raise RuntimeError instead
    assert str(from_dask.value) == str(from_numpy.value)


def test_type_errors_are_eager():
    f = np.ones((3, 4))
    with pytest.raises(TypeError, match="bitwise_and") as from_numpy:
        gb.bitwise_and(f, f)
    with pytest.raises(TypeError, match="bitwise_and") as from_dask:
        gb.bitwise_and(poisoned(f), f)
    assert str(from_dask.value) == str(from_numpy.value)
    with pytest.raises(TypeError, match="prelu"):
        gb.prelu(poisoned(np.ones(3, np.complex64)), 1.0)
    with pytest.raises(TypeError, match="dtype"):
        gb.add(poisoned(f), 1.0, dtype=np.int8)
    with pytest.raises(OverflowError):
        gb.add(poisoned(np.ones(3, np.int8)), 1000)


def test_out_is_a_type_error():
    x = uneven(np.ones((3, 4)))
    with pytest.raises(TypeError, match="out= is not supported with Dask arrays"):
        gb.add(x, 1.0, out=np.empty((3, 4)))
    with pytest.raises(TypeError, match="out= is not supported"):
        gb.broadcast_to(x, (2, 3, 4), out=np.empty((2, 3, 4)))


def test_unknown_chunk_sizes_are_a_clear_value_error():
    x = da.arange(10, chunks=4)
    unknown = x[x > 3]
    with pytest.raises(ValueError, match=r"compute_chunk_sizes\(\)"):
        gb.add(unknown, 1)
    with pytest.raises(ValueError, match=r"compute_chunk_sizes\(\)"):
        gb.expand(unknown, (2, 1))
    known = unknown.compute_chunk_sizes()
    check(gb.add(known, 1), np.arange(4, 10) + 1)


def test_unknown_rule_and_mode_errors():
    x = uneven(np.ones(3))
    with pytest.raises(ValueError, match="broadcast="):
        gb.add(x, x, broadcast="bogus")
    with pytest.raises(ValueError, match="unknown broadcast rule"):
        dispatch.apply(ops.get("add"), (x, x), rule="bogus")


# --- properties: random shapes, random uneven chunks --------------------------------------------

@st.composite
def chunked_operands(draw, shapes):
    """NumPy arrays of ``shapes`` and Dask copies with random (often uneven, size-1 and 0 too) chunks."""
    arrays, dasks = [], []
    for i, shape in enumerate(shapes):
        a = np.arange(int(np.prod(shape)), dtype=np.int64).reshape(shape) * (i + 2) - 7
        chunks = []
        for n in shape:
            cuts = draw(st.lists(st.integers(0, n), max_size=3)) if n else []
            bounds = sorted(set([0, n] + cuts))
            chunks.append(tuple(np.diff(bounds).tolist()) or (0,))
        arrays.append(a)
        dasks.append(da.from_array(a, chunks=tuple(chunks)))
    return arrays, dasks


@given(data=st.data(), shapes=hnp.mutually_broadcastable_shapes(num_shapes=3, min_side=0, max_side=5))
def test_property_numpy_rule_sum_equals_numpy(data, shapes):
    arrays, dasks = data.draw(chunked_operands(shapes.input_shapes))
    result = dispatch.apply(ops.get("sum"), dasks, rule="numpy")
    assert result.shape == shapes.result_shape
    np.testing.assert_array_equal(result.compute(scheduler="sync"), arrays[0] + arrays[1] + arrays[2])


@st.composite
def pdpd_case(draw):
    target = draw(st.lists(st.integers(1, 4), min_size=1, max_size=4)).copy()
    axis = draw(st.integers(0, len(target) - 1))
    length = draw(st.integers(1, len(target) - axis))
    placed = [n if draw(st.booleans()) else 1 for n in target[axis:axis + length]]
    trailing = draw(st.integers(0, len(target) - len(placed)))   # rank(b) <= rank(a)
    return tuple(target), tuple(placed) + (1,) * trailing, axis


@given(data=st.data(), case=pdpd_case())
def test_property_pdpd_subtract_equals_reshaped_numpy(data, case):
    target, b_shape, axis = case
    arrays, dasks = data.draw(chunked_operands([target, b_shape]))
    core = b_shape
    while core and core[-1] == 1:
        core = core[:-1]    # PDPD ignores b's trailing 1s, then places b at axis
    aligned = (1,) * axis + tuple(core) + (1,) * (len(target) - axis - len(core))
    expected = arrays[0] - arrays[1].reshape(aligned)
    result = gb.subtract(dasks[0], dasks[1], broadcast="pdpd", axis=axis)
    np.testing.assert_array_equal(result.compute(scheduler="sync"), expected)
