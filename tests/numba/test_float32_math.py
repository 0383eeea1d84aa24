"""The Numba backend's float32 math.  float32_math.py, float32_trig.py, float32_inverse_hyperbolic.py
and float32_activations.py (float32 lanes): within their stated bounds (``ULPS``, in ulps of the true
value) on 2^16 inputs spread over the whole range and the special values, which are NumPy's (NaN,
+-inf, the sign of a zero, overflow and underflow where the true value does); sin, cos and tan at the
float32 values nearest every multiple of pi/2 below their reduction's bound, where the reduced argument
is smallest; float16 and bfloat16 through them within an ulp of their own on every one of their 65536
values; the binary logaddexp/logaddexp2 on NumPy's float32 formula, arctan2 on dense pairs (its bound's
measure).  The trigonometric, hyperbolic and inverse functions, cbrt and hypot, against NumPy's float64
result rounded once: within one float32 ulp on random bit patterns, dense ranges and the special
values; sin/cos/tan of a row holding a large argument (beyond the polynomial reduction) take the C
library for it and give every other element the same value as without it.  (Every float32 input:
test_float32_math_exhaustive.py.)"""

import math
import re
import warnings

import numpy as np
import pytest

import gpubcast as gb
from gpubcast import ops

from tests.support.float32_cases import OP, SPECIAL as EDGES, ULPS, UNARY, spread, ulp_error
from tests.support.math_cases import ulps

FUNCTIONS = ("sin", "cos", "tan", "arcsin", "arccos", "arctan", "cbrt", "sinh", "cosh", "arcsinh", "arccosh",
             "arctanh")
FLOAT64 = {}
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


@pytest.mark.parametrize("name", ["sin", "cos", "tan"])
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
    # in place (out= is x): the large elements' blocks still read their inputs, the others' values too
    inplace = mixed.copy()
    f(inplace, out=inplace)
    assert np.array_equal(inplace, together)
    small_inplace = small.copy()
    f(small_inplace, out=small_inplace)
    assert np.array_equal(small_inplace, alone)


@pytest.mark.parametrize("dtype", ["float16", "bfloat16", "float64"])
@pytest.mark.parametrize("name", ["sin", "cos", "tan"])
def test_the_vector_rows_of_other_floats_in_and_out_of_place(name, dtype):
    """float16/bfloat16 (through float32, their large values too) and float64 (the C library: never
    large) in the blocked rows: the per-element function's values, in place as well."""
    import ml_dtypes
    dt = np.dtype(ml_dtypes.bfloat16) if dtype == "bfloat16" else np.dtype(dtype)
    rng = np.random.default_rng(3)
    x = rng.uniform(-60000, 60000, 3000).astype(dt)
    x[[5, 1500]] = [1e30 if dtype != "float16" else 65504, -np.inf]
    f = getattr(gb, name)
    got = f(x)
    assert np.array_equal(got[::1][1:], f(x[1:][::1].copy()), equal_nan=True)      # another block split
    assert np.array_equal(np.array([f(x[i:i + 1])[0] for i in range(0, 3000, 97)]).astype(dt), got[::97],
                          equal_nan=True)                                          # element by element
    y = x.copy()
    f(y, out=y)
    assert np.array_equal(y, got, equal_nan=True)


@pytest.mark.parametrize("name", ["sin", "arcsin", "expm1", "arctan", "tanh", "sinh", "log1p", "arcsinh", "arctanh",
                                  "erf"])
def test_in_place_and_negative_zero(name):
    x = np.array([-0.0, 0.0, 0.25, -0.25], np.float32)
    want64 = UNARY[name][1](x.astype(np.float64)) if name in UNARY else getattr(np, name)(x.astype(np.float64))
    want = want64.astype(np.float32)
    getattr(gb, name)(x, out=x)
    assert np.array_equal(np.signbit(x), np.signbit(want))
    if name in ULPS:
        assert ulp_error(x, want64).max() <= ULPS[name]
    else:
        assert np.array_equal(x, want)


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


# --- float32 lanes (float32_math, float32_activations) ------------------------------------------------

SPREAD = np.concatenate([EDGES, spread(), X[:100_000]])


@pytest.mark.parametrize("name", sorted(UNARY))
def test_lanes_within_their_bound_and_numpy_special_values(name):
    call, reference = UNARY[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        got = call(SPREAD)
        want = reference(SPREAD.astype(np.float64))
    assert got.dtype == np.float32
    err = ulp_error(got, want)
    worst = int(np.argmax(err))
    assert err.max() <= ULPS[name], f"{name}({SPREAD[worst]!r}) = {got[worst]!r}, true {want[worst]!r}: {err.max()}"
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        rounded = want.astype(np.float32)
    # NaN, the infinities (overflow exactly where the true value rounds to inf) and the zeros' signs: NumPy's
    assert np.array_equal(np.isnan(got), np.isnan(rounded))
    assert np.array_equal(got[np.isinf(rounded)], rounded[np.isinf(rounded)])
    assert not np.isinf(got[np.isfinite(rounded)]).any(), SPREAD[np.isinf(got) & np.isfinite(rounded)][:5]
    zeros = want == 0
    assert np.array_equal(got[zeros], rounded[zeros])
    assert np.array_equal(np.signbit(got[zeros]), np.signbit(rounded[zeros]))


@pytest.mark.parametrize("dtype", ["float16", "bfloat16"])
@pytest.mark.parametrize("name", sorted(UNARY))
def test_half_types_through_the_lanes_within_an_ulp_on_every_value(name, dtype):
    """Every one of the 65536 values: the float32 lanes' result rounded once more is within an ulp of
    the true value rounded once (NaN where it is NaN)."""
    import ml_dtypes
    dt = np.dtype(ml_dtypes.bfloat16) if dtype == "bfloat16" else np.dtype(dtype)
    x = np.arange(2 ** 16, dtype=np.uint32).astype(np.uint16).view(dt)
    op, params = OP[name]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        got = UNARY[name][0](x)
        if "activation" in ops.get(op).tags:   # the float64 formula, its parameters rounded to dt as gpubcast's
            want = ops.get(op).reference(x, *(np.asarray(p, dt) for p in params))
        else:                                   # sigmoid's reference computes in dt: the float64 truth instead
            want = UNARY[name][1](x.astype(np.float64)).astype(dt)
    assert got.dtype == dt
    d = ulps(got, want)
    worst = int(np.argmax(d))
    assert d.max() <= 1, f"{name}({x[worst]!r}) = {got[worst]!r}, true rounded {want[worst]!r}"


def _near_quarter_turns():
    """The float32 values nearest k pi/2 for every k whose multiple is below the reduction's bound,
    and their neighbours two ulps either side, both signs: where sin or cos is nearest 0 (and +-1),
    tan nearest 0 or its poles."""
    from gpubcast.backends.numba.float32_trig import SIN_COS_REDUCED
    k = np.arange(1, int(SIN_COS_REDUCED / (np.pi / 2)) + 1, dtype=np.float64)
    bits = (k * (np.pi / 2)).astype(np.float32).view(np.int32)
    x = np.concatenate([bits + d for d in (-2, -1, 0, 1, 2)]).view(np.float32)
    x = x[x < SIN_COS_REDUCED]
    return np.concatenate([x, -x])


@pytest.mark.parametrize("name", ["sin", "cos", "tan"])
def test_sin_cos_tan_at_their_zeros_and_poles_within_the_bound(name):
    """sin near k pi (and cos near (k + 1/2) pi) is as small as the reduced argument r = x - k pi/2,
    down to 2^-27.8 (x = 252.89821): its relative error is what the bound holds there; tan is as
    small there, and as large (-1/r, up to 2.4e8, finite) near (k + 1/2) pi."""
    x = _near_quarter_turns()
    got = getattr(gb, name)(x)
    want = getattr(np, name)(x.astype(np.float64))
    assert np.isfinite(got).all()
    err = ulp_error(got, want)
    worst = int(np.argmax(err))
    assert err.max() <= ULPS[name], f"{name}({x[worst]!r}) = {got[worst]!r}, true {want[worst]!r}: {err.max()}"


@pytest.mark.parametrize("name", ["logaddexp", "logaddexp2"])
def test_logaddexp_on_numpys_float32_formula(name):
    """max + log1p(exp(-|x - y|)) with x - y rounded in float32 (NumPy's float32 loop): within the
    bound in ulps of max(|result|, 1); x == y gives x + ln 2 (or + 1), infinities included; NaN."""
    rng = np.random.default_rng(5)
    x = np.concatenate([rng.uniform(-30, 30, 200_000), rng.standard_normal(50_000) * 1e4, EDGES]).astype(np.float32)
    y = np.concatenate([rng.uniform(-30, 30, 200_000), rng.standard_normal(50_000) * 1e4,
                        rng.permutation(EDGES)]).astype(np.float32)
    x[:1000] = y[:1000]
    got = getattr(gb, name)(x, y)
    with np.errstate(all="ignore"):
        d = (x - y).astype(np.float64)                           # NumPy's float32 difference
        m = np.where(d > 0, x, y).astype(np.float64)
        tail = np.log1p(np.exp(-np.abs(d))) if name == "logaddexp" else np.log2(1 + np.exp2(-np.abs(d)))
        want = np.where(x == y, x.astype(np.float64) + (math.log(2) if name == "logaddexp" else 1.0), m + tail)
        want = np.where(np.isnan(d) & (x != y), np.nan, want)
        err = np.abs(got - want) / (np.finfo(np.float32).eps * np.maximum(np.abs(want), 1.0))
    err = np.where((got == want) | (np.isnan(got) & np.isnan(want)), 0.0, err)
    assert np.array_equal(np.isnan(got), np.isnan(want))
    assert err.max() <= ULPS[name], (x[np.argmax(err)], y[np.argmax(err)])
    same = x == y
    with np.errstate(all="ignore"):
        assert np.array_equal(got[same], getattr(np, name)(x[same], y[same]))


def _arctan2_pairs(n, seed):
    """(y, x): n pairs of each kind: any bit patterns; ratios near 1 (y's bits within 64 of x's: atan's
    tail is largest, and |y| > |x| flips there); ratios in [1/8, 8]; both tiny (subnormal included);
    both huge; both in [-10, 10]; and every pair of the special values."""
    rng = np.random.default_rng(seed)

    def bits(lo=0, hi=2 ** 32):
        return rng.integers(lo, hi, n, dtype=np.uint64).astype(np.int64)

    def signed(b):
        return (b | (bits() & 0x80000000)).astype(np.uint32)

    near_one, within_8 = bits(0, 0x7F800000), bits(0x00800000, 0x7F000000)
    kinds = [(bits(), bits()),
             (np.clip(near_one + rng.integers(-64, 65, n), 0, 0x7F7FFFFF), near_one),
             (np.clip(within_8 + rng.integers(-2 ** 25, 2 ** 25, n), 0, 0x7F7FFFFF), within_8),
             (bits(0, 0x0C000000), bits(0, 0x0C000000)), (bits(0x74000000, 0x7F800000), bits(0x74000000, 0x7F800000))]
    y = np.concatenate([signed(a) for a, _ in kinds]).view(np.float32)
    x = np.concatenate([signed(b) for _, b in kinds]).view(np.float32)
    small = rng.uniform(-10, 10, (2, n)).astype(np.float32)
    edge = np.array([0.0, -0.0, np.inf, -np.inf, np.nan, 1.0, -1.0, 1e-45, -1e-45, 1e-40, 1.1754944e-38, 8.67e-19,
                     3.4028235e38, -3.4028235e38, 2.5, -2.5, 0.5, 1.0000001, 0.99999994], np.float32)
    return (np.concatenate([y, small[0], np.repeat(edge, edge.size)]),
            np.concatenate([x, small[1], np.tile(edge, edge.size)]))


@pytest.mark.parametrize("n", [1 << 16, pytest.param(1 << 22, marks=pytest.mark.slow)])
def test_arctan2_within_its_bound_on_dense_pairs(n):
    """float32_trig.arctan2_single (float32 lanes) within ``ULPS["arctan2"]`` of the true value on 7 n
    pairs (the slow case: 2^24.8), the C99 special values and zeros' signs included (``ulp_error``)."""
    y, x = _arctan2_pairs(n, seed=n)
    got = gb.arctan2(y, x)
    with np.errstate(all="ignore"):
        want = np.arctan2(y.astype(np.float64), x.astype(np.float64))
    err = ulp_error(got, want)
    worst = int(np.argmax(err))
    print(f"\narctan2 on {y.size} pairs: max {err.max():.4f} ulps at ({y[worst]!r}, {x[worst]!r})")
    assert err.max() <= ULPS["arctan2"], f"arctan2({y[worst]!r}, {x[worst]!r}) = {got[worst]!r}, true {want[worst]!r}"


#: the float32-lane ops by kind (loop dtypes float32): one per kernel family in the default suite
VECTOR_OPS = {"exp": 1, "log1p": 1, "tanh": 1, "sigmoid": 1, "erf": 1, "gelu": 1, "logaddexp": 2, "selu": 3,
              "sin": 1, "tan": 1, "cbrt": 1, "arcsinh": 1, "arctan": 1, "arcsin": 1}
VECTOR_OPS_MORE = {"exp2": 1, "expm1": 1, "log": 1, "log2": 1, "log10": 1, "gelu_tanh": 1, "softplus": 1,
                   "mish": 1, "logaddexp2": 2, "elu": 2, "celu": 2, "swish": 2, "cos": 1, "arccosh": 1, "arctanh": 1,
                   "arccos": 1, "arctan2": 2}


def _vector_widths(name, arity, tmp_path, monkeypatch):
    """The float32 vector widths of llvm.fma calls in the float32 row function of op ``name``, freshly
    compiled (a cached one has no IR to read)."""
    import llvmlite.binding as ll
    features = ll.get_host_cpu_features()
    if not (features.get("fma") and features.get("avx2")):
        pytest.skip("the full-width check is for x86-64 with AVX2 and FMA")
    from gpubcast.backends.numba import backend
    monkeypatch.setenv("GPUBCAST_CACHE_DIR", str(tmp_path))
    f32 = np.dtype(np.float32)
    ir = backend.make_spec(ops.get(name), (f32,) * arity, f32).make_row().inspect_llvm()
    return {int(w) for w in re.findall(r"@llvm\.fma\.v(\d+)f32", ir)}


@pytest.mark.parametrize("name", sorted(VECTOR_OPS))
def test_float32_lanes_vectorise_at_full_width(name, tmp_path, monkeypatch):
    """The contiguous row loop computes in float32 vectors of 8 (AVX2) or 16 (AVX-512) lanes, FMA
    included: no float64 halving of the lanes, no scalar C library call in it."""
    widths = _vector_widths(name, VECTOR_OPS[name], tmp_path, monkeypatch)
    assert widths and max(widths) >= 8, (name, widths)   # the main loop; its epilogue may be narrower


@pytest.mark.slow
@pytest.mark.parametrize("name", sorted(VECTOR_OPS_MORE))
def test_float32_lanes_vectorise_at_full_width_every_op(name, tmp_path, monkeypatch):
    widths = _vector_widths(name, VECTOR_OPS_MORE[name], tmp_path, monkeypatch)
    assert widths and max(widths) >= 8, (name, widths)   # the main loop; its epilogue may be narrower
