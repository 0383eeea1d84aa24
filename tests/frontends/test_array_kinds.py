"""Arrays NumPy computes on that compiled rows do not: long double, ndarray subclasses (masked
arrays, matrices, overrides).  Each computes NumPy's result or is refused with a clear error."""

import warnings

import numpy as np
import pytest

import gpubcast as gb

LONG = [np.longdouble, np.clongdouble]


@pytest.mark.parametrize("dtype", LONG)
@pytest.mark.parametrize("backend", [None, "numba", "numpy"])
def test_long_double_computes_numpys_values_on_every_cpu_backend(dtype, backend):
    x = (np.linspace(-2, 2, 12).reshape(3, 4) * (1 + 1j if dtype is np.clongdouble else 1)).astype(dtype)
    y = x[:1] + dtype(1) / 3
    for _ in range(3):              # the first call, the second (a runner prepared) and the third
        for got, want in [(gb.add(x, y, backend=backend), x + y), (gb.multiply(x, 2, backend=backend), x * 2),
                          (gb.exp(x, backend=backend), np.exp(x)), (gb.negative(y, backend=backend), -y),
                          (gb.where(x.real > 0, x, y, backend=backend), np.where(x.real > 0, x, y)),
                          (gb.broadcast_to(y, (2, 3, 4), backend=backend), np.broadcast_to(y, (2, 3, 4))),
                          (gb.cast(x, np.float32 if dtype is np.longdouble else np.complex64, backend=backend),
                           x.astype(np.float32 if dtype is np.longdouble else np.complex64))]:
            assert got.dtype == want.dtype
            np.testing.assert_array_equal(got, want)


@pytest.mark.parametrize("dtype", LONG)
def test_long_double_in_a_fused_function(dtype):
    f = gb.fuse(lambda a, b: gb.exp(a * b + 1) - a)
    x = np.linspace(-1, 1, 10).astype(dtype)
    for _ in range(3):
        got = f(x, x[::-1])
        assert got.dtype == dtype
        np.testing.assert_array_equal(got, np.exp(x * x[::-1] + 1) - x)


def _same_masked(got, want):
    assert type(got) is type(want) is np.ma.MaskedArray
    assert got.dtype == want.dtype and got.shape == want.shape
    np.testing.assert_array_equal(np.ma.getmaskarray(got), np.ma.getmaskarray(want))
    np.testing.assert_array_equal(got.filled(0), want.filled(0))


M = np.ma.array([1.0, -1.0, 3.0, 0.0], mask=[0, 0, 1, 0])
K = np.ma.array([[2.0], [0.0]], mask=[[0], [1]])


@pytest.mark.parametrize("name, args", [
    ("add", (M, 1.0)), ("add", (M, K)), ("subtract", (2, M)), ("multiply", (M, np.arange(4.0))),
    ("divide", (M, K)), ("divide", (M, 0.0)), ("floor_divide", (M, K)), ("remainder", (M, K)), ("power", (M, 0.5)),
    ("maximum", (M, K)), ("greater", (M, 0)), ("equal", (M, K)), ("logical_and", (M, K)),
    ("log", (M,)), ("sqrt", (M,)), ("exp", (M,)), ("negative", (M,)), ("abs", (M,)), ("reciprocal", (M,)),
    ("floor", (M,)), ("sign", (M,)), ("tanh", (M,)),
])
def test_a_masked_array_gives_a_masked_array_with_numpys_mask(name, args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        want = getattr(np, name)(*args)
        got = getattr(gb, name)(*args)
    _same_masked(got, want)


@pytest.mark.parametrize("name", ["relu", "round", "erf", "sigmoid"])
def test_unary_ops_without_a_numpy_ufunc_carry_the_mask(name):
    got = getattr(gb, name)(M)
    assert type(got) is np.ma.MaskedArray
    np.testing.assert_array_equal(got.mask, M.mask)
    np.testing.assert_array_equal(got.data, getattr(gb, name)(M.data))


def test_data_movement_moves_the_mask_with_the_data():
    for got, shape in [(gb.broadcast_to(M, (2, 4)), (2, 4)), (gb.expand(K, (2, 3)), (2, 3))]:
        src = M if shape == (2, 4) else K
        _same_masked(got, np.ma.array(np.broadcast_to(src.data, shape), mask=np.broadcast_to(src.mask, shape)))
    assert type(gb.cast(M, np.float32)) is np.ma.MaskedArray and gb.cast(M, np.float32).dtype == np.float32


@pytest.mark.parametrize("call", [
    lambda: gb.where(M > 0, M, 0.0),
    lambda: gb.add(M, np.ones((2, 4)), broadcast="pdpd"),
    lambda: gb.prelu(M, np.float64(0.1)),
    lambda: gb.add(M, 1.0, out=np.ma.zeros(4)),
], ids=["where", "pdpd", "unidirectional", "out"])
def test_a_mask_numpy_does_not_define_is_a_clear_type_error(call):
    with pytest.raises(TypeError, match="mask|masked"):
        call()


@pytest.mark.filterwarnings("ignore:the matrix subclass:PendingDeprecationWarning")
def test_matrices_and_plain_subclasses_come_back_as_their_class():
    m = np.matrix([[1, 2], [3, 4]])
    got = gb.add(m, 1)
    assert type(got) is np.matrix
    np.testing.assert_array_equal(got, m + 1)
    assert type(gb.exp(m)) is np.matrix

    class Tagged(np.ndarray):
        pass
    t = np.arange(6.0).reshape(2, 3).view(Tagged)
    got = gb.multiply(t, np.arange(3.0))
    assert type(got) is Tagged
    np.testing.assert_array_equal(np.asarray(got), np.arange(6.0).reshape(2, 3) * np.arange(3.0))
    out = np.empty((2, 3))
    assert gb.add(t, 1, out=out) is out and (out == np.asarray(t) + 1).all()


def test_an_array_ufunc_override_decides_for_itself():
    class Logged(np.ndarray):
        calls = []

        def __array_ufunc__(self, ufunc, method, *inputs, **kwargs):
            Logged.calls.append(ufunc.__name__)
            inputs = [np.asarray(x) if isinstance(x, Logged) else x for x in inputs]
            return getattr(ufunc, method)(*inputs, **kwargs)

    x = np.arange(4.0).view(Logged)
    np.testing.assert_array_equal(gb.add(x, 1), np.arange(4.0) + 1)
    assert Logged.calls == ["add"]
    with pytest.raises(TypeError, match="overrides __array_ufunc__"):
        gb.relu(x)

    class OptedOut(np.ndarray):
        __array_ufunc__ = None
    with pytest.raises(TypeError):
        gb.add(np.arange(3.0).view(OptedOut), 1)


@pytest.mark.filterwarnings("ignore:the matrix subclass:PendingDeprecationWarning")
def test_a_fused_function_of_subclasses_is_the_unfused_chain_numpy_would_give():
    f = gb.fuse(lambda x, k: gb.log(x) * k + 1)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        _same_masked(f(M, K), np.log(M) * K + 1)
    got = f(np.matrix([[1.0, 2.0]]), 2.0)
    assert type(got) is np.matrix
    np.testing.assert_array_equal(got, np.log([[1.0, 2.0]]) * 2 + 1)
