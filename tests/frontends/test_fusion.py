"""gpubcast.fuse: a fused call equals the unfused chain of gpubcast calls, exactly.

The oracle is the same Python function run without fusion (each op a gpubcast call on real
arrays, every intermediate stored in its dtype), on the Numba backend (the same scalar
functions: bit for bit) and on the NumPy reference (values; math-library ops within
``ops.MATH_ULPS``).
"""

import tracemalloc
import warnings

import ml_dtypes
import numpy as np
import pytest

import gpubcast as gb
from gpubcast import ops

from tests.support.fused_chains import chains, program


def _same(got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, (got.dtype, got.shape, want.dtype, want.shape)
    if got.dtype.kind in "fc" or got.dtype == ml_dtypes.bfloat16:
        assert np.array_equal(got.view(f"u{got.itemsize}") if got.dtype.kind != "c" else got, want.view(
            f"u{want.itemsize}") if want.dtype.kind != "c" else want) or np.array_equal(got, want, equal_nan=True)
    else:
        assert np.array_equal(got, want)


def _check(f, *args, **kw):
    """fuse(f) on the Numba backend equals f unfused on the Numba backend, and on the reference."""
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got = gb.fuse(f)(*args, **kw)
        want = f(*args)
    for g, w in zip(got if isinstance(got, tuple) else (got,), want if isinstance(want, tuple) else (want,)):
        _same(g, w)
    return got


RNG = np.random.default_rng(11)


def _v(shape, dtype=np.float32, scale=3.0):
    x = RNG.standard_normal(shape) * scale
    return (x + 1j * RNG.standard_normal(shape) if np.dtype(dtype).kind == "c" else x).astype(dtype)


def test_affine_nchw_per_channel():
    a, x, b = _v((1, 8, 1, 1)), _v((4, 8, 9, 11)), _v((1, 8, 1, 1))
    y = _check(lambda a, x, b: a * x + b, a, x, b)
    assert y.shape == (4, 8, 9, 11)


def test_channels_last_short_rows():
    """(N, k) leaves with per-channel (k,) rows, a scalar, and leaves of every layout class mixed, k from
    1 to 128 (``fused``'s flat run over short rows, and the row loop past it), into a new output and
    in place; float, bfloat16, complex and integer chains."""
    for dt in (np.float32, ml_dtypes.bfloat16, np.complex64, np.int32):
        for k in (1, 3, 127, 128):
            x, y, s, b = _v((700, k), dt), _v((700, k), dt), _v((k,), dt), _v((k,), dt)
            _check(lambda s, x, b: s * x + b, s, x, b)
            _check(lambda x, s, y, b: (x - s) * y + b * 2, x, s, y, b)
            _check(lambda x, b: b - x, x, b)
            want = s * x + b
            assert gb.fuse(lambda s, x, b: s * x + b)(s, x, b, out=x) is x
            _same(x, want)


def test_gelu_tanh_chain_and_bias():
    def gelu(x, bias):
        h = x + bias
        return 0.5 * h * (1 + gb.tanh(0.7978845608 * (h + 0.044715 * h * h * h)))
    for dt in (np.float32, np.float64, np.float16, ml_dtypes.bfloat16):
        _check(gelu, _v((33, 70), dt), _v((70,), dt))


def test_where_threshold_scale():
    x = _v((40, 50))
    _check(lambda x, t, s: gb.where(x > t, x * s, 0), x, 0.5, 2.0)
    _check(lambda x, t, s: gb.where(x > t, x * s, 0), x, np.float32(0.5), 3)   # NumPy scalar, Python int


def test_every_op_kind_and_dtype_promotion():
    i8, u8, f4, f2, c8, b = (_v((6, 7), np.int8), _v((7,), np.uint8), _v((6, 1), np.float32),
                             _v((6, 7), np.float16), _v((7,), np.complex64), _v((6, 7)) > 0)

    def f(i8, u8, f4, f2, c8, b):
        s = i8 + u8                    # int16
        t = s * f2                     # float32 (int16 with float16)
        u = gb.exp(t / 8) - gb.sqrt(gb.abs(f4))
        v = gb.where(b, u, -u) ** 2
        w = gb.cast(v, np.int32) // 3 % 5 << 1
        z = gb.abs(c8 * u) + gb.reciprocal(f2)
        return gb.maximum(v, 1.5), w & 6 | 1, z, ~b, gb.logical_not(w), gb.sign(-w), gb.relu(i8 - 3)
    _check(f, i8, u8, f4, f2, c8, b)


def test_unary_ops_every_float_dtype():
    for dt in (np.float16, np.float32, np.float64, ml_dtypes.bfloat16):
        x = _v((5, 9), dt)

        def f(x):
            return (gb.floor(x) + gb.ceil(x) - gb.round(x), gb.erf(x) * gb.sigmoid(x), gb.tanh(x),
                    gb.log(gb.abs(x) + 1), gb.clip(x, -1, 1))
        _check(f, x)


def test_integer_edge_cases_as_unfused():
    a = np.array([-128, 127, -7, 0, 5], np.int8)
    b = np.array([-1, 1, 2, 0, -3], np.int8)
    _check(lambda a, b: (a // b, a % b, a + 127, -a, gb.abs(a), a * b * b), a, b)
    big = np.array([2**62, -2**63], np.int64)
    _check(lambda x: (x * 4, x - 1, x > 2**64, x == -2**63), big)


def test_casts_between_every_pair():
    x = np.array([-2.5, 0.0, 1.5, 3e4, 7.25, -0.0], np.float64)
    for dt in (np.int32, np.uint16, np.float16, ml_dtypes.bfloat16, np.float32, np.complex64, bool):
        src = np.abs(x) if np.dtype(dt).kind == "u" else x
        _check(lambda v: gb.cast(v, dt) * 1, src)
        _check(lambda v: gb.cast(gb.cast(v, dt), np.float64), src)


def test_float64_to_float16_rounds_once():
    """Doubles near float16 ties: rounding through float32 first would give other halves."""
    h = np.arange(0, 65504, 7, dtype=np.float16).astype(np.float64)
    nxt = np.nextafter(h.astype(np.float16), np.float16(np.inf)).astype(np.float64)
    mid = (h + nxt) / 2
    x = np.concatenate([mid, mid + 2**-40, mid - 2**-40, np.nextafter(mid, 0), [1e-8, 6e-8, 7e-5, 65520.0, 7e4]])
    got = gb.fuse(lambda v: gb.cast(v, np.float16) + 0)(x)
    assert np.array_equal(got, x.astype(np.float16))


def test_rule_sets_inside():
    x, y = _v((2, 3, 4, 5)), _v((3, 4))
    _check(lambda x, y: gb.multiply(x, y, broadcast="pdpd", axis=1) + x, x, y)
    _check(lambda y: gb.broadcast_to(y, (2, 3, 4), mode="numpy") * 2, y)
    _check(lambda y: gb.broadcast_to(gb.exp(y[0] if False else y), (2, 3, 5, 4), mode="explicit",
                                     axes_mapping=[1, 3]) - 1, y)
    _check(lambda v: gb.expand(v, (2, 1, 4)) + v, _v((3, 1)))
    _check(lambda x, z: gb.add(x, z, broadcast="none") * z, x, _v((2, 3, 4, 5)))


def test_layouts_and_empty_and_rank0():
    base = _v((8, 12))
    for x in (base.T, base[::-1, ::3], np.broadcast_to(_v((12,)), (8, 12)), base[:, :0]):
        _check(lambda x: gb.sqrt(gb.abs(x)) * x + 1, x)
    _check(lambda x, y: x * y - 1, np.float32(2.5) * np.ones((), np.float32), np.array(3.0, np.float32))
    with pytest.raises(gb.BroadcastError):
        gb.fuse(lambda x, y: x + y)(_v((3, 4)), _v((5,)))


def test_empty_outputs_on_every_call():
    """An empty output on a fused function's second and later calls (its hot path) is empty, as on the
    first: no walk is planned for it (its plan once divided by the zero-length row)."""
    f = gb.fuse(lambda x, y: x * y + 1)
    for x, y in [(_v((0, 3)), _v((3,))), (_v((4, 0)), np.ones((4, 1), np.float64)), (_v((0,)), _v((0,)))]:
        for _ in range(3):
            got = f(x, y)
            assert got.shape == np.broadcast_shapes(x.shape, y.shape) and got.dtype == np.result_type(x, y)


def test_multiple_outputs_out_and_overlap():
    x, y = _v((30, 40)), _v((40,))
    f = gb.fuse(lambda x, y: (x + y, x * y))
    o1, o2 = np.empty((30, 40)), np.empty((30, 40), np.float32)
    r = f(x, y, out=(o1, o2))
    assert r[0] is o1 and r[1] is o2
    _same(o1, (x + y).astype(np.float64))
    _same(o2, x * y)
    x2 = x.copy()
    g = gb.fuse(lambda x, y: x * 2 + y)
    g(x2, y, out=x2)                       # out= is an input, element for element
    _same(x2, x * 2 + y)
    x3 = x.copy()
    g(x3[:, ::-1], y, out=x3)              # partial overlap: read before written
    _same(x3, x[:, ::-1] * 2 + y)
    with pytest.raises(TypeError, match="same_kind"):
        g(x, y, out=np.empty((30, 40), np.int32))
    with pytest.raises(ValueError, match="out= holds 1 array"):
        f(x, y, out=o1)


def test_errors():
    x = _v((3, 4))
    with pytest.raises(TypeError, match="pass this ndarray"):
        gb.fuse(lambda v: v + x)(x)
    with pytest.raises(TypeError, match="truth value"):
        gb.fuse(lambda v: v if v > 0 else -v)(x)
    with pytest.raises(TypeError, match="returns the arrays"):
        gb.fuse(lambda v: 3)(x)
    with pytest.raises(TypeError, match="out= inside"):
        gb.fuse(lambda v: gb.add(v, 1, np.empty((3, 4), np.float32)))(x)
    with pytest.raises(TypeError, match="bitwise_not"):
        gb.fuse(lambda v: ~v)(x)
    with pytest.raises(OverflowError):
        gb.fuse(lambda v: v + 300)(np.arange(3, dtype=np.int8))


def test_retraces_per_signature_and_scalar_value():
    calls = []

    @gb.fuse
    def f(x, s):
        calls.append(1)
        return x * s

    x = _v((4, 5))
    _same(f(x, 2.0), x * 2.0)
    _same(f(x, 2.0), x * 2.0)
    _same(f(x, 3.0), x * 3.0)
    _same(f(x.astype(np.float64), 3.0), x.astype(np.float64) * 3.0)
    assert len(calls) == 3


def test_reference_backend_and_dask():
    x, y = _v((6, 7)), _v((7,))

    def f(x, y):
        return gb.exp(x) * y       # no cancellation after exp: its ulps bound the product's (+1 ulp)
    want = f(x, y)
    got = gb.fuse(f)(x, y, backend="numpy")
    np.testing.assert_allclose(got, want, rtol=ops.math_rtol("exp", np.float32) + np.finfo(np.float32).eps)
    da = pytest.importorskip("dask.array")
    lazy = gb.fuse(f)(da.from_array(x, chunks=(3, 7)), y)
    assert isinstance(lazy, da.Array)
    _same(lazy.compute(), want)


def test_allocates_only_the_output():
    x = np.ones((1000, 1000), np.float32)   # 4 MB
    f = gb.fuse(lambda x: gb.exp(x) * 2 + x * x - 1)
    f(x)                                    # traced and compiled
    tracemalloc.start()
    y = f(x)
    peak = tracemalloc.get_traced_memory()[1]
    tracemalloc.stop()
    assert y.nbytes == 4_000_000
    assert peak < 1.2 * y.nbytes, peak      # unfused: 5 temporaries of 4 MB


def test_hot_path_calls_equal_the_first():
    """From the second call with one signature a prepared runner runs: same values, out= included,
    and misaligned or overlapping operands still go the general way."""
    f = gb.fuse(lambda x, y: x * y + 1)
    x, y = _v((20, 30)), _v((30,))
    want = x * y + 1
    for _ in range(4):
        _same(f(x, y), want)
    out = np.empty((20, 30), np.float32)
    for _ in range(3):
        assert f(x, y, out=out) is out
        _same(out, want)
    raw = np.zeros(20 * 30 * 4 + 1, np.uint8)
    mis = raw[1:].view(np.float32).reshape(20, 30)
    mis[...] = x
    for _ in range(3):
        _same(f(mis, y), want)
    z = x.copy()
    for _ in range(3):
        z[...] = x
        f(z, y, out=z)
        _same(z, want)
    big = _v((600, 300))
    for _ in range(3):  # the parallel runner
        _same(f(big, y[:1] * np.ones(300, np.float32)), big * (y[:1] * np.ones(300, np.float32)) + 1)


# --- random chains: fused == unfused, bit for bit ---------------------------------------------------

from hypothesis import given, settings  # noqa: E402 - this section's imports, kept with it


def test_random_chains_fused_equal_unfused():
    """30 random chains: where the unfused chain refuses (a type or overflow error) the fused call
    refuses with the same error type; otherwise equal results (dtype, shape, bits)."""
    compared = []

    @settings(max_examples=30, deadline=None)
    @given(chains())
    def check(chain):
        args, steps = chain
        f = program(steps)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                want = f(*args)
            except (TypeError, OverflowError) as e:
                with pytest.raises(type(e)):
                    gb.fuse(f)(*args)
                return
            got = gb.fuse(f)(*args)
            again = gb.fuse(f)(*args)
        if any(s[0] == "cast" and np.dtype(s[2]).kind == "i" for s in steps):
            return  # a float -> int cast of NaN or an out-of-range value is undefined (C): no exact answer
        _same(got, want)
        _same(again, want)
        compared.append(1)

    check()
    assert len(compared) >= 10, len(compared)  # most chains are computed, not refused


def test_hot_path_keeps_a_tuple_result():
    """A function returning a 1-tuple returns a 1-tuple on every call, the prepared runner's too."""
    f = gb.fuse(lambda x: (x * 2,))
    x = _v((3, 4))
    for _ in range(4):
        r = f(x)
        assert isinstance(r, tuple) and len(r) == 1
        _same(r[0], x * 2)
    out = np.empty((3, 4), np.float32)
    for _ in range(3):
        r = f(x, out=out)
        assert isinstance(r, tuple) and r[0] is out


@pytest.mark.gpu
def test_fused_call_on_cuda_arrays(cupy):
    """CuPy arrays (the virtual CUDA device without a GPU): the graph runs op by op on the CUDA
    backend (no fused CUDA kernel yet), equal to the fused CPU run for exact ops."""
    x, y = _v((5, 7)), _v((7,))
    f = gb.fuse(lambda x, y: gb.where(x > 0, x * y + 1, -x))
    got = f(cupy.asarray(x), cupy.asarray(y))
    assert np.array_equal(cupy.asnumpy(got), f(x, y))
