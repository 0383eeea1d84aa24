"""The Numba backend's edge cases: integer division, shifts and powers on every integer dtype (the
API contract's values), exact float16/bfloat16 rounding, NaN and signed zeros, ``out=`` aliasing,
the parallel and tiled paths, and an output of more than 2**31 elements."""

from __future__ import annotations

import warnings

import ml_dtypes
import numpy as np
import pytest

import gpubcast as gb
from gpubcast import ops
from gpubcast.dispatch import apply
from gpubcast.hot_calls import HotCalls

from tests.support.layouts import LAYOUTS
from tests.support.numba_cases import INTS, mismatch, run_both

NUMBA = {"backend": "numba"}


@pytest.fixture
def parallel_from_1000(monkeypatch):
    """Outputs from 1000 elements run on every thread (a fresh backend, no cached runners)."""
    from gpubcast import dispatch
    from gpubcast.backends.numba import backend as numba_backend
    monkeypatch.setattr(numba_backend, "PARALLEL_MIN", 1000)
    monkeypatch.setattr(gb.backends, "_instances", {})
    monkeypatch.setattr(dispatch, "HOT", HotCalls(4096))


def _np(f, *args):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        with np.errstate(all="ignore"):
            return f(*args)


# --- integers ---------------------------------------------------------------------------------------

@pytest.mark.parametrize("dt", INTS, ids=str)
def test_integer_division_edges(dt):
    """x // 0 -> 0, x % 0 -> 0, INT_MIN // -1 -> INT_MIN (no trap), fmod and div_trunc likewise."""
    info = np.iinfo(dt)
    a = np.array([info.min, info.min, info.max, 7, -7, 7, -7, 0, 5, info.min + 1], dt) if info.min else \
        np.array([info.max, 7, 0, 5, 1, info.max], dt)
    b = np.array([-1, 0, -1, 2, 2, -2, -2, 0, 0, -1], dt) if info.min else np.array([0, 2, 0, 3, 0, 1], dt)
    fd, rm, fm = gb.floor_divide(a, b, **NUMBA), gb.remainder(a, b, **NUMBA), gb.fmod(a, b, **NUMBA)
    np.testing.assert_array_equal(fd, _np(np.floor_divide, a, b))
    np.testing.assert_array_equal(rm, _np(np.remainder, a, b))
    np.testing.assert_array_equal(fm, _np(np.fmod, a, b))
    assert (fd[b == 0] == 0).all() and (rm[b == 0] == 0).all() and (fm[b == 0] == 0).all()
    trunc = apply(ops.get("div_trunc"), (a, b), **NUMBA)
    def trunc_div(x, y):  # exact, in Python integers, wrapped to the dtype
        if y == 0:
            return 0
        q = abs(x) // abs(y)
        q = q if (x < 0) == (y < 0) else -q
        return info.min if q > info.max else q
    want = np.array([trunc_div(x, y) for x, y in zip(a.tolist(), b.tolist())], dt)
    np.testing.assert_array_equal(trunc, want)
    if info.min:
        assert fd[0] == info.min and trunc[0] == info.min and rm[0] == 0 and fm[0] == 0


@pytest.mark.parametrize("dt", INTS, ids=str)
def test_shift_edges(dt):
    """Shifts by >= the width, or by a negative count, as NumPy: 0, or -1 for a negative value
    shifted right."""
    bits = np.dtype(dt).itemsize * 8
    counts = [0, 1, bits - 1, bits, bits + 1, 2 * bits, 100]
    if np.dtype(dt).kind == "i":
        counts += [-1, -bits, np.iinfo(dt).min]
    counts = [c for c in counts if np.iinfo(dt).min <= c <= np.iinfo(dt).max]
    negatives = [-1, np.iinfo(dt).min, -5] if np.dtype(dt).kind == "i" else []
    x = np.array([1, 3, np.iinfo(dt).max] + negatives, dt)
    xs, cs = np.meshgrid(x, np.array(counts, dt))
    np.testing.assert_array_equal(gb.left_shift(xs, cs, **NUMBA), _np(np.left_shift, xs, cs))
    np.testing.assert_array_equal(gb.right_shift(xs, cs, **NUMBA), _np(np.right_shift, xs, cs))
    big = cs >= bits
    assert (gb.left_shift(xs, cs, **NUMBA)[big] == 0).all()
    assert (gb.right_shift(xs, cs, **NUMBA)[big] == np.where(xs[big] < 0, -1, 0)).all()


@pytest.mark.parametrize("dt", INTS, ids=str)
def test_integer_power(dt):
    """Wrap-around powers; a negative exponent gives 1 for base 1, +-1 for base -1, else 0."""
    info = np.iinfo(dt)
    base = np.array([v for v in (0, 1, 2, 3, -1, -2, 7, info.max, info.min) if info.min <= v <= info.max], dt)
    exps = np.array([v for v in (0, 1, 2, 3, 7, 8, 31, 63, 64, 200, -1, -2, -3)
                     if info.min <= v <= info.max], dt)
    b, e = np.meshgrid(base, exps)
    got = gb.power(b, e, **NUMBA)
    pos = e >= 0
    np.testing.assert_array_equal(got[pos], _np(np.power, b[pos], e[pos]))
    neg = ~pos
    want = np.where(b[neg] == 1, 1, np.where(b[neg] == -1, np.where(e[neg] % 2 == 0, 1, -1), 0)).astype(dt)
    np.testing.assert_array_equal(got[neg], want)


def test_small_ints_wrap():
    a = np.array([127, -128, 100], np.int8)
    np.testing.assert_array_equal(gb.add(a, np.int8(1), **NUMBA), _np(np.add, a, np.int8(1)))
    np.testing.assert_array_equal(gb.multiply(a, a, **NUMBA), _np(np.multiply, a, a))
    u = np.array([0, 255, 3], np.uint8)
    np.testing.assert_array_equal(gb.subtract(u, np.uint8(4), **NUMBA), _np(np.subtract, u, np.uint8(4)))


# --- floats -----------------------------------------------------------------------------------------

def _bits_equal(got, want):
    """Same bits, except that NaNs only need to be NaNs."""
    gf, wf = got.astype(np.float32), want.astype(np.float32)
    nan = np.isnan(wf)
    assert (np.isnan(gf) == nan).all()
    np.testing.assert_array_equal(got.view(np.uint16)[~nan], want.view(np.uint16)[~nan])


@pytest.mark.parametrize("dt", [np.dtype(np.float16), np.dtype(ml_dtypes.bfloat16)], ids=str)
def test_half_types_bit_exact(dt):
    """Every float16/bfloat16 bit pattern through float32 and back, and sums, products and
    quotients of a million random pairs: the same bits as NumPy (float16) / ml_dtypes."""
    every = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16).view(dt)
    one = np.ones(1, dt)
    _bits_equal(gb.multiply(every, one, **NUMBA), _np(np.multiply, every, one))
    _bits_equal(gb.maximum(every, every[::-1], **NUMBA), _np(np.maximum, every, every[::-1]))
    rng = np.random.default_rng(7)
    x = rng.integers(0, 1 << 16, 1 << 20, dtype=np.uint32).astype(np.uint16).view(dt)
    y = rng.integers(0, 1 << 16, 1 << 20, dtype=np.uint32).astype(np.uint16).view(dt)
    for name in ("add", "subtract", "multiply", "divide", "floor_divide", "remainder"):
        f = getattr(gb, name)
        _bits_equal(f(x, y, **NUMBA), _np(getattr(np, name), x, y))
    # rounding ties of the float32 -> half conversion: exact midpoints between neighbours
    h = np.arange(0, 0x7BFF, dtype=np.uint16).view(dt).astype(np.float32)
    mid = (h[:-1].astype(np.float64) + h[1:].astype(np.float64)) / 2
    pairs = np.stack([h[:-1], (mid - h[:-1]).astype(np.float32)]).astype(dt)
    _bits_equal(gb.add(pairs[0], pairs[1], **NUMBA), _np(np.add, pairs[0], pairs[1]))


@pytest.mark.parametrize("way", ["f16c", "bits"])
def test_half_conversions_both_ways_bit_exact(way):
    """Both implementations of the float16 codec's conversions (the F16C instructions' where the host
    has them, the bit algorithm's elsewhere) against NumPy's: every half to float32, signalling NaNs
    kept as they are; to half, the float32 of every half and its neighbours one ulp either side
    (ties and the rounding on each side of them), the subnormal range and the overflow edge, NaNs."""
    import numba

    from gpubcast.backends.numba import codecs
    if way == "f16c" and not codecs._F16C:
        pytest.skip("the host has no F16C: the code here converts halves by their bits")
    to_float = codecs._half_to_float_f16c if way == "f16c" else codecs._half_to_float_bits
    to_half = codecs._float_to_half_f16c if way == "f16c" else codecs._float_to_half_bits

    @numba.njit
    def decode_all(h, out):
        for i in range(h.size):
            out[i] = to_float(h[i])

    @numba.njit
    def encode_all(f, out):
        for i in range(f.size):
            out[i] = to_half(f[i])

    every = np.arange(1 << 16, dtype=np.uint32).astype(np.uint16)
    got = np.empty(every.size, np.float32)
    decode_all(every, got)
    want = every.view(np.float16).astype(np.float32)
    np.testing.assert_array_equal(got.view(np.uint32), want.view(np.uint32))
    bits = want.view(np.uint32)
    floats = np.concatenate([bits, bits + np.uint32(1), bits - np.uint32(1),
                             np.arange(0x33000000, 0x38800000, 61, dtype=np.uint32),            # half subnormals
                             np.arange(0x477FE000, 0x47800100, dtype=np.uint32),                # the overflow edge
                             np.array([0x7F800001, 0x7F801FFF, 0x7F802000, 0x7FC00000, 0xFFBFFFFF], np.uint32)])
    out = np.empty(floats.size, np.uint16)
    encode_all(floats.view(np.float32), out)
    with np.errstate(all="ignore"):
        np.testing.assert_array_equal(out, floats.view(np.float32).astype(np.float16).view(np.uint16))


def test_float_semantics():
    """Floor division and remainder edge cases, NaN propagation and signed zeros as NumPy."""
    for dt in (np.float32, np.float64):
        sp = np.array([0.0, -0.0, 1.0, -1.0, 2.5, -2.5, np.inf, -np.inf, np.nan, 1e-45, 3.0, -7.0], dt)
        a, b = np.meshgrid(sp, sp)
        for name in ("floor_divide", "remainder", "fmod", "maximum", "minimum", "divide", "power"):
            got, want = getattr(gb, name)(a, b, **NUMBA), _np(getattr(np, name), a, b)
            assert not mismatch(got, want, 8 * np.finfo(dt).eps if name == "power" else 0), name
            if name in ("floor_divide", "remainder", "maximum", "minimum"):  # signs of zeros too
                z = want == 0
                np.testing.assert_array_equal(np.signbit(got[z]), np.signbit(want[z]), err_msg=name)


def test_power_with_a_scalar_exponent_follows_numpy_fast_paths():
    """NumPy's float loop special-cases a stride-0 exponent (0.5 -> sqrt, 2 -> x*x, ...)."""
    x = np.array([-np.inf, -0.0, -1.0, 4.0, np.inf, np.nan, 2.0, 1e-3], np.float64)
    for e in (0.5, 2.0, -1.0, 1.0, 0.0, 3.0):
        y = np.array([e])
        got, want = gb.power(x, y, **NUMBA), _np(np.power, x, y)
        assert not mismatch(got, want), e
        np.testing.assert_array_equal(np.signbit(got), np.signbit(want))


def test_complex_semantics():
    rng = np.random.default_rng(3)
    for dt in (np.complex64, np.complex128):
        z = (rng.standard_normal(500) + 1j * rng.standard_normal(500)).astype(dt)
        w = (rng.standard_normal(500) + 1j * rng.standard_normal(500)).astype(dt)
        w[:5] = [0, 1j, np.nan, complex(np.inf, 0), complex(0, -np.inf)]
        for name in ("multiply", "divide", "power", "maximum", "minimum", "greater", "less_equal", "equal"):
            got, want = getattr(gb, name)(z, w, **NUMBA), _np(getattr(np, name), z, w)
            assert not mismatch(got, want), (dt, name, mismatch(got, want))
        ints = np.array([0, 1, 2, 3, -1, -2, 5, 99, -99, 100, 0.5], dt)
        got, want = gb.power(z[:11], ints, **NUMBA), _np(np.power, z[:11], ints)
        assert not mismatch(got, want), mismatch(got, want)


# --- out= aliasing --------------------------------------------------------------------------------

@pytest.mark.parametrize("layout", sorted(LAYOUTS))
def test_in_place(layout):
    rng = np.random.default_rng(5)
    a = LAYOUTS[layout](rng.random((6, 9)))
    b = rng.random(9)
    want = a + b
    assert gb.add(a, b, out=a) is a
    np.testing.assert_array_equal(a, want)
    want = np.maximum(b, a)
    gb.maximum(b, a, out=a)  # the aliased input second
    np.testing.assert_array_equal(a, want)


def test_partial_overlap(parallel_from_1000):
    """An input overlapping the output other than element for element reads the old values."""
    for n in (10, 5000):  # serial and parallel
        base = np.arange(n, dtype=np.float64)
        x = base.copy()
        gb.add(x[:-1], 1.0, out=x[1:])
        np.testing.assert_array_equal(x[1:], base[:-1] + 1)
        x = base.copy()
        gb.multiply(x[::-1], x, out=x)  # reversed view of the output
        np.testing.assert_array_equal(x, base[::-1] * base)
        x = base.copy()
        gb.add(x[1:], x[:-1], out=x[:-1])
        np.testing.assert_array_equal(x[:-1], base[1:] + base[:-1])
        x = base.copy()  # twice: the second call runs the cached hot path
        gb.add(x[1:], x[:-1], out=x[:-1])
        np.testing.assert_array_equal(x[:-1], base[1:] + base[:-1])


def test_output_viewing_an_input_with_another_item_size():
    """bool output written over the bytes of its float64 input (same element strides)."""
    x = np.array([0.5, 2.0, -1.0, 3.0] * 4)
    want = x > 1.0
    out = x.view(np.bool_)[: x.size]
    gb.greater(x, 1.0, out=out)
    np.testing.assert_array_equal(out, want)


# --- parallel, tiled, variadic at scale -------------------------------------------------------------

@pytest.mark.parametrize("name", ["add", "where", "sum", "copy"])
def test_parallel_and_tiled_paths(name, parallel_from_1000):
    """Outputs large enough for every thread, including a transposed operand (the tiled order)."""
    op = ops.get(name)
    rng = np.random.default_rng(11)
    a = rng.random((300, 400), dtype=np.float32)
    cases = {
        "binary": [(a, a.T.copy().T), (a.T, rng.random((400, 300), dtype=np.float32)), (a, a[:, :1]),
                   (a[::-1, ::2], a[0, ::2])],
        "ternary": [(a > 0.5, a, a.T.copy().T), (a.T > 0.5, a.T, np.float32(0) + a[:1, :1])],
        "variadic": [(a, a.T.copy().T, a[:1]), (a.T, a.T[:, :1], a.T[:1], a.T)],
        "move": [(a[:, :1],), (a.T,), (a[::-1],)],
    }[op.kind]
    kw = {"shape": (2,) + cases[0][0].shape} if op.kind == "move" else {}
    for inputs in cases:
        if op.kind == "move":
            kw = {"shape": (2,) + inputs[0].shape}
        got, want = run_both(op, list(inputs), **kw)
        assert not mismatch(got, want), mismatch(got, want)
    # a transposed output
    if op.kind == "binary":
        out = np.empty((400, 300), np.float32).T
        apply(op, (a, a[:1]), out=out, **NUMBA)
        np.testing.assert_array_equal(out, a + a[:1])


def test_rank_six_and_many_dims():
    rng = np.random.default_rng(2)
    a = rng.random((3, 1, 4, 1, 5, 6))
    b = rng.random((1, 2, 1, 3, 5, 1))
    np.testing.assert_array_equal(gb.add(a, b, **NUMBA), a + b)
    c = rng.random((2,) * 20)
    np.testing.assert_array_equal(gb.subtract(c, c.transpose()[..., :1], **NUMBA), c - c.transpose()[..., :1])


def test_output_over_2_to_31_elements():
    """An int8 output of 2**31 + 2**16 elements from broadcast inputs: 64-bit offsets throughout."""
    rows, cols = 1 << 16, (1 << 15) + 1
    a = (np.arange(rows) % 251).astype(np.int8).reshape(rows, 1)
    b = (np.arange(cols) % 13).astype(np.int8).reshape(1, cols)
    p = gb.plan(a, b)
    assert p.size > 2**31 and p.index_bits == 64
    out = gb.add(a, b, **NUMBA)
    assert out.shape == (rows, cols)
    for r in (0, 1, rows // 2, rows - 1):
        np.testing.assert_array_equal(out[r], (a[r] + b[0]).astype(np.int8))
    np.testing.assert_array_equal(out[:, -1], (a[:, 0] + b[0, -1]).astype(np.int8))
    idx = np.random.default_rng(0).integers(0, rows * cols, 1000)
    flat = out.reshape(-1)
    np.testing.assert_array_equal(flat[idx], (a[idx // cols, 0] + b[0, idx % cols]).astype(np.int8))
    del out, flat


def test_a_plan_gets_the_chunk_walk_with_the_paths_it_needs(monkeypatch):
    """The plain chunk runner (neither staging nor streaming compiled in) for a plan that needs
    neither; the full one for a transposed input or a streamed output."""
    from gpubcast.backends.numba import drivers
    from gpubcast.backends.numba import meta as numba_meta
    backend, add = gb.backends.get("numba"), ops.get("add")
    a = np.ones((64, 48), np.float32)

    def walk(x, y):
        spec = backend.spec(add, (x.dtype, y.dtype), np.dtype(np.float32))
        m = numba_meta.iteration_meta(gb.plan(x, y), spec, parallel=False)
        return (numba_meta.full_walk(m), m[numba_meta.H_TRANSPOSED] > 0,
                m[numba_meta.H_FLAGS] & numba_meta.NON_TEMPORAL != 0)
    assert drivers.chunk_address(full=True) != drivers.chunk_address(full=False)
    spec = backend.spec(add, (a.dtype, a.dtype), np.dtype(np.float32))
    for x, y in ((a, a[:1]), (a, a.T.copy().T)):   # the backend writes the runner full_walk asks for
        m = backend.meta(gb.plan(x, y), spec)
        assert m[numba_meta.H_CHUNK] == drivers.chunk_address(full=numba_meta.full_walk(m))
    assert walk(a, a[:1]) == (False, False, False)
    assert walk(a, a.T.copy().T) == (True, True, False)
    monkeypatch.setattr(numba_meta, "NON_TEMPORAL_MIN", 0)
    assert walk(a, a[:1].copy()) == (True, False, True)


def test_threads_asking_for_a_new_chunk_runner_at_once_all_get_the_one_kept(monkeypatch):
    """A runner's address goes into metas that outlive the call: threads that compile one at the same
    time must all get the one the module keeps (a runner dropped later would leave a dangling address)."""
    import threading

    from gpubcast.backends.numba import drivers
    monkeypatch.setattr(drivers, "_CHUNK", {})      # the kept runners stay referenced by the real dict
    barrier, got = threading.Barrier(6), []

    def ask(full):
        barrier.wait()
        got.append((full, drivers.chunk_address(full=full)))
    threads = [threading.Thread(target=ask, args=(k % 2 == 0,)) for k in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert sorted(drivers._CHUNK) == [False, True]
    assert all(address == drivers._CHUNK[full].address for full, address in got), got


@pytest.mark.parametrize("name", ["add", "where", "sum", "copy"])
def test_non_temporal_stores(monkeypatch, name):
    """The streaming-store path (normally only for outputs larger than the cache), forced on for
    small outputs: every alignment of the output rows, broadcast and strided inputs."""
    from gpubcast.backends.numba import meta as numba_meta
    monkeypatch.setattr(numba_meta, "NON_TEMPORAL_MIN", 0)
    monkeypatch.setattr(gb.backends, "_instances", {})  # a fresh backend: no cached metas
    monkeypatch.setattr(gb.dispatch, "HOT", HotCalls(4096))
    op = ops.get(name)
    rng = np.random.default_rng(13)
    for start in range(0, 9):  # output rows starting at every alignment
        buf = np.zeros(start + 5 * 700 + 64, np.float32)
        out = buf[start:start + 5 * 700].reshape(5, 700)
        a = rng.random((5, 700), dtype=np.float32)
        inputs = {"binary": [a, a[:1]], "ternary": [a > 0.5, a, a[:, :1]], "variadic": [a, a[:1], a[::-1]],
                  "move": [a[:, ::-1]]}[op.kind]
        kw = {"shape": (5, 700)} if op.kind == "move" else {}
        apply(op, inputs, out=out, **NUMBA, **kw)
        want = run_both(op, inputs, **kw)[1]
        assert not mismatch(out, want), (start, mismatch(out, want))
        assert not buf[:start].any() and not buf[start + 5 * 700:].any()
    # short rows whose outputs follow each other: streamed a block of rows at a time
    a = rng.random((40, 30), dtype=np.float32)
    inputs = {"binary": [a, a[:, :1]], "ternary": [a > 0.5, a, a[:, :1]], "variadic": [a, a[:, :1], a[:1]],
              "move": [a[:, :1]]}[op.kind]
    kw = {"shape": (40, 30)} if op.kind == "move" else {}
    got, want = run_both(op, inputs, **kw)
    assert not mismatch(got, want), mismatch(got, want)
