"""The NumPy-style API end to end on the NumPy reference backend, against NumPy itself."""

import numpy as np
import pytest

import gpubcast as gb
from gpubcast import ops
from gpubcast.dispatch import apply

NUMPY_STYLE = list(gb.api.NUMPY_STYLE_BINARY)
rng = np.random.default_rng(0)


def _operands(name, dtype):
    a = rng.integers(-20, 20, size=(3, 4, 5)).astype(dtype)
    b = rng.integers(-5, 5, size=(4, 1)).astype(dtype)
    if name in ("left_shift", "right_shift", "power") and np.dtype(dtype).kind in "iu":
        b = np.abs(b) % 7
    return a, b


@pytest.mark.parametrize("name", NUMPY_STYLE)
@pytest.mark.parametrize("dtype", ["int32", "float64", "bool", "uint8", "complex64"])
def test_every_op_matches_numpy(name, dtype):
    a, b = _operands(name, dtype)
    ufunc = getattr(np, name)
    with np.errstate(all="ignore"):
        try:
            expected = ufunc(a, b)
        except TypeError:
            with pytest.raises(TypeError, match=name):
                getattr(gb, name)(a, b, backend="numpy")
            return
    got = getattr(gb, name)(a, b, backend="numpy")
    assert got.dtype == expected.dtype and got.shape == expected.shape
    np.testing.assert_array_equal(got, expected)


@pytest.mark.parametrize("name", ["add", "multiply", "divide", "maximum", "less", "power"])
def test_promotion_with_python_scalars_and_mixed_dtypes(name):
    f, u = getattr(gb, name), getattr(np, name)
    i8 = np.arange(-3, 3, dtype=np.int8)
    f32 = np.linspace(-1, 1, 6, dtype=np.float32)
    for x, y in [(i8, 2), (i8, 2.5), (f32, 3), (i8, f32), (f32, np.float64(2)), (i8, np.uint8(3)),
                 (f32.astype(gb.bfloat16), f32.astype(gb.bfloat16))]:
        with np.errstate(all="ignore"):
            expected = u(x, y)
        got = f(x, y, backend="numpy")
        assert got.dtype == expected.dtype, (x.dtype, y)
        np.testing.assert_array_equal(got.astype(np.complex128), expected.astype(np.complex128))


def test_python_int_out_of_range_is_an_error_like_numpy():
    with pytest.raises(OverflowError):
        gb.add(np.ones(3, np.int8), 300, backend="numpy")


def test_integer_edge_cases():
    for dt in ["int8", "int16", "int32", "int64"]:
        info = np.iinfo(dt)
        a = np.array([info.min, 7, -7, 0, info.max], dt)
        z = np.zeros_like(a)
        m1 = np.full_like(a, -1)
        np.testing.assert_array_equal(gb.floor_divide(a, z, backend="numpy"), z)
        np.testing.assert_array_equal(gb.remainder(a, z, backend="numpy"), z)
        np.testing.assert_array_equal(gb.floor_divide(a, m1, backend="numpy")[0], info.min)  # INT_MIN // -1
        np.testing.assert_array_equal(gb.fmod(a, z, backend="numpy"), z)
        bits = np.dtype(dt).itemsize * 8
        np.testing.assert_array_equal(gb.left_shift(a, np.full_like(a, bits), backend="numpy"), z)
        np.testing.assert_array_equal(gb.right_shift(a, np.full_like(a, bits + 3), backend="numpy"),
                                      np.where(a < 0, -1, 0).astype(dt))
    base = np.array([1, -1, -1, 2, -2, 0, 5], np.int32)
    exp = np.array([-3, -3, -2, -1, -2, -1, -7], np.int32)
    np.testing.assert_array_equal(gb.power(base, exp, backend="numpy"), [1, -1, 1, 0, 0, 0, 0])
    np.testing.assert_array_equal(gb.power(np.int64(3), np.arange(3), backend="numpy"), [1, 3, 9])


def test_div_trunc_and_fmod():
    a = np.array([7, -7, 7, -7, -128, 5], np.int8)
    b = np.array([2, 2, -2, -2, -1, 0], np.int8)
    np.testing.assert_array_equal(apply(ops.get("div_trunc"), (a, b), backend="numpy"), [3, -3, -3, 3, -128, 0])
    np.testing.assert_array_equal(gb.fmod(a, b, backend="numpy"), [1, -1, 1, -1, 0, 0])
    np.testing.assert_allclose(apply(ops.get("div_trunc"), (np.float32([1, -3]), np.float32([2, 2])),
                                     backend="numpy"), [0.5, -1.5])


def test_where_prelu_and_variadic():
    c = rng.random((4, 1)) > 0.5
    x, y = rng.standard_normal((3, 4, 5)), rng.standard_normal(5)
    np.testing.assert_array_equal(gb.where(c, x, y, backend="numpy"), np.where(c, x, y))
    slope = rng.random((4, 5))
    np.testing.assert_array_equal(gb.prelu(x, slope, backend="numpy"), np.where(x < 0, x * slope, x))
    xs = [rng.standard_normal(s).astype(np.float32) for s in [(3, 1, 5), (4, 1), (5,), (1,)]]
    np.testing.assert_array_equal(apply(ops.get("sum"), xs, backend="numpy"), xs[0] + xs[1] + xs[2] + xs[3])
    np.testing.assert_array_equal(apply(ops.get("max"), xs, backend="numpy"),
                                  np.maximum(np.maximum(np.maximum(xs[0], xs[1]), xs[2]), xs[3]))
    np.testing.assert_allclose(apply(ops.get("mean"), xs, backend="numpy"),
                               (xs[0] + xs[1] + xs[2] + xs[3]) / np.float32(4), rtol=1e-6)


def test_where_pdpd_places_cond_and_else_onto_then():
    x = rng.standard_normal((2, 3, 4))
    cond = rng.random((3,)) > 0.5
    y = rng.standard_normal((3, 4))
    got = gb.where(cond, x, y, broadcast="pdpd", axis=1, backend="numpy")
    np.testing.assert_array_equal(got, np.where(cond[None, :, None], x, y[None]))


def test_maximum_propagates_nan():
    a = np.array([np.nan, 1.0, 2.0])
    b = np.array([0.0, np.nan, 1.0])
    np.testing.assert_array_equal(gb.maximum(a, b, backend="numpy"), [np.nan, np.nan, 2.0])
    np.testing.assert_array_equal(gb.minimum(a, b, backend="numpy"), [np.nan, np.nan, 1.0])


def test_out_in_place_and_partial_overlap():
    a = np.arange(10.0)
    expected = a + a[::-1]
    gb.add(a, a[::-1], out=a, backend="numpy")  # out overlaps an input in reverse
    np.testing.assert_array_equal(a, expected)
    b = np.arange(10.0)
    gb.add(b[:-1], b[1:], out=b[1:], backend="numpy")  # shifted overlap
    np.testing.assert_array_equal(b, np.r_[0.0, np.arange(9.0) + np.arange(1.0, 10.0)])
    c = np.ones((3, 4))
    out = np.empty((4, 3)).T                         # a strided out=
    r = gb.multiply(c, np.arange(4.0), out=out, backend="numpy")
    assert r is out
    np.testing.assert_array_equal(out, c * np.arange(4.0))
    i = np.zeros(3, np.int64)
    gb.add(np.ones(3, np.int32), np.ones(3, np.int32), out=i, backend="numpy")  # cast on write
    np.testing.assert_array_equal(i, [2, 2, 2])


def test_dtype_argument():
    got = gb.add(np.arange(3, dtype=np.int8), np.int8(1), dtype=np.float32, backend="numpy")
    expected = np.add(np.arange(3, dtype=np.int8), np.int8(1), dtype=np.float32)
    assert got.dtype == expected.dtype
    np.testing.assert_array_equal(got, expected)


def test_rank_zero_and_zero_size():
    got = gb.add(np.float64(2.0), np.array(3.0), backend="numpy")
    assert got.shape == () and float(got) == 5.0
    assert gb.multiply(np.ones((0, 4)), np.ones((1, 4)), backend="numpy").shape == (0, 4)
    assert gb.broadcast_to(np.ones((1, 0)), (3, 0), backend="numpy").shape == (3, 0)


def test_broadcast_to_modes_and_strings():
    x = np.array(["ab", "c", "def"])
    np.testing.assert_array_equal(gb.broadcast_to(x, (2, 3), backend="numpy"), np.broadcast_to(x, (2, 3)))
    obj = np.array([{"a": 1}, None], dtype=object)
    assert gb.broadcast_to(obj, (3, 2), backend="numpy")[2, 0] == {"a": 1}
    v = np.arange(3.0)
    np.testing.assert_array_equal(gb.broadcast_to(v, (2, 3, 4), mode="explicit", axes_mapping=[1], backend="numpy"),
                                  np.broadcast_to(v[None, :, None], (2, 3, 4)))
    np.testing.assert_array_equal(gb.broadcast_to(v.reshape(3, 1), (2, 3, 4), mode="pdpd", axis=1, backend="numpy"),
                                  np.broadcast_to(v[None, :, None], (2, 3, 4)))
    np.testing.assert_array_equal(gb.broadcast_to(v, np.array([2, 3]), mode="bidirectional", backend="numpy"),
                                  np.broadcast_to(v, (2, 3)))
    out = gb.expand(v, (1,), backend="numpy")
    assert out.shape == (3,) and not np.shares_memory(out, v)


def test_function_metadata():
    assert gb.add.__name__ == "add" and "broadcast" in gb.add.__doc__
    for name in NUMPY_STYLE + ["where", "prelu", "broadcast_to", "expand", "broadcast_shapes", "plan"]:
        assert callable(getattr(gb, name)) and getattr(gb, name).__doc__
