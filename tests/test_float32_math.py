"""The Numba backend's float32 math (backends/numba/float32_math.py: float64 arithmetic, rounded once,
so the row loops vectorise) against NumPy's float64 result rounded once: within one float32 ulp on
random bit patterns, dense ranges and the special values; sin/cos of a row holding a large argument
(beyond the polynomial reduction) take the C library for it and give every other element the same
value as without it."""

import math
import warnings

import numpy as np
import pytest

import gpubcast as gb

FUNCTIONS = ("sin", "cos", "tan", "arcsin", "arccos", "arctan", "cbrt", "exp", "exp2", "expm1", "log", "log2",
             "log10", "log1p", "sinh", "cosh", "tanh", "arcsinh", "arccosh", "arctanh", "sigmoid", "gelu")
#: NumPy's float64 function of each (its ufunc of the name, else this)
FLOAT64 = {"sigmoid": lambda x: 1.0 / (1.0 + np.exp(-x)),
           "gelu": lambda x: 0.5 * x * np.vectorize(math.erfc, otypes=[np.float64])(x * -0.7071067811865476)}
SPECIAL = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 1e-45, -1e-45, 1.1754944e-38,
                    3.4028235e38, -3.4028235e38, 2.0 ** 19, 2.0 ** 19 - 0.03125, -(2.0 ** 19), 88.72, 88.73,
                    -103.9, -104.0, 127.99, 128.0, -149.0, -150.0, 0.5, -0.5, 0.49999997, 1e-8, -1e-8,
                    0.99999994, -0.99999994, 1.0000001, 0.41421354, -0.29289323, 3.1415927, 1.5707964,
                    -2.0 ** 19 + 0.03125, 20.0, 10.0, 1e4, -1e4], np.float32)


def _inputs():
    rng = np.random.default_rng(2026)
    bits = rng.integers(0, 2 ** 32, 400_000, dtype=np.uint64).astype(np.uint32)
    return np.concatenate([SPECIAL, bits.view(np.float32), rng.uniform(-12, 12, 200_000).astype(np.float32),
                           rng.uniform(-1, 1, 100_000).astype(np.float32),
                           rng.uniform(-2.0 ** 19, 2.0 ** 19, 100_000).astype(np.float32)])


X = _inputs()


def _ordered(a):
    """float32 values as integers in the order of the reals (adjacent floats differ by one)."""
    i = a.view(np.int32).astype(np.int64)
    return np.where(i < 0, -(i & 0x7FFFFFFF), i)


def _ulps(got, want):
    both_nan = np.isnan(got) & np.isnan(want)
    return np.where((got == want) | both_nan, 0, np.abs(_ordered(got) - _ordered(want)))


@pytest.mark.parametrize("name", FUNCTIONS)
def test_within_one_ulp_of_numpy_float64_rounded_once(name):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        got = getattr(gb, name)(X)
        want = FLOAT64.get(name, getattr(np, name, None))(X.astype(np.float64)).astype(np.float32)
    assert got.dtype == np.float32
    d = _ulps(got, want)
    worst = int(np.argmax(d))
    assert d.max() <= 1, f"{name}({X[worst]!r}) = {got[worst]!r}, NumPy in float64: {want[worst]!r}"
    assert np.array_equal(np.isnan(got), np.isnan(want))
    zeros = (got == 0) & (want == 0)
    assert np.array_equal(np.signbit(got[zeros]), np.signbit(want[zeros])), f"{name}: the sign of a zero"


@pytest.mark.parametrize("name", ["sin", "cos"])
def test_a_large_argument_takes_the_c_library_and_leaves_its_row_alone(name):
    rng = np.random.default_rng(7)
    small = rng.uniform(-100, 100, 4099).astype(np.float32)
    mixed = small.copy()
    mixed[[0, 1000, 4098]] = [3.0e7, -1.0e30, 2.0 ** 19]   # beyond float32_math's reduction
    f = getattr(gb, name)
    alone, together = f(small), f(mixed)
    keep = np.ones(small.size, bool)
    keep[[0, 1000, 4098]] = False
    assert np.array_equal(alone[keep], together[keep])
    want = getattr(np, name)(mixed.astype(np.float64)).astype(np.float32)
    assert _ulps(together, want).max() <= 1
    # strided and broadcast rows take the per-element function: the same values
    assert np.array_equal(f(mixed[::2]), together[::2])
    assert np.array_equal(f(np.broadcast_to(mixed[1000], (3, 5)))[0], np.full(5, together[1000]))


@pytest.mark.parametrize("name", ["sin", "arcsin", "expm1", "arctan", "tanh", "sinh", "log1p", "arcsinh", "arctanh"])
def test_in_place_and_negative_zero(name):
    x = np.array([-0.0, 0.0, 0.25, -0.25], np.float32)
    want = getattr(np, name)(x.astype(np.float64)).astype(np.float32)
    f = getattr(gb, name)
    f(x, out=x)
    assert np.array_equal(x, want) and np.array_equal(np.signbit(x), np.signbit(want))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("name", ["sin", "exp", "log10", "sinh", "log1p", "arcsinh"])
def test_half_precision_computes_through_float32(name, dtype):
    import ml_dtypes
    dt = np.dtype(getattr(ml_dtypes, dtype)) if dtype == "bfloat16" else np.dtype(dtype)
    x = np.linspace(-4, 4, 2001).astype(dt)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        got = getattr(gb, name)(x).astype(np.float64)
        want = getattr(np, name)(x.astype(np.float64)).astype(dt).astype(np.float64)
    eps = float(ml_dtypes.finfo(dt).eps)
    ok = np.isclose(got, want, rtol=eps, atol=0, equal_nan=True)
    assert ok.all(), (x[~ok][:5], got[~ok][:5], want[~ok][:5])


@pytest.mark.parametrize("name", ["hypot", "arctan2"])
def test_binary_within_one_ulp_with_c99_special_values(name):
    rng = np.random.default_rng(11)
    edge = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 1e-45, 3.4e38, -2.5], np.float32)
    y = np.concatenate([np.repeat(edge, edge.size), rng.uniform(-50, 50, 100_000).astype(np.float32),
                        rng.integers(0, 2 ** 32, 100_000, dtype=np.uint64).astype(np.uint32).view(np.float32)])
    x = np.concatenate([np.tile(edge, edge.size), rng.uniform(-50, 50, 100_000).astype(np.float32),
                        rng.integers(0, 2 ** 32, 100_000, dtype=np.uint64).astype(np.uint32).view(np.float32)])
    got = getattr(gb, name)(y, x)
    with np.errstate(all="ignore"):
        want = getattr(np, name)(y.astype(np.float64), x.astype(np.float64)).astype(np.float32)
    d = _ulps(got, want)
    worst = int(np.argmax(d))
    assert d.max() <= 1, f"{name}({y[worst]!r}, {x[worst]!r}) = {got[worst]!r}, NumPy: {want[worst]!r}"
    zeros = (got == 0) & (want == 0)
    assert np.array_equal(np.signbit(got[zeros]), np.signbit(want[zeros]))
    # broadcast (M, 1) with (1, K): the same values
    col, row = y[:300, None], x[None, :200]
    assert np.array_equal(getattr(gb, name)(col, row), getattr(gb, name)(*np.broadcast_arrays(col, row)),
                          equal_nan=True)
