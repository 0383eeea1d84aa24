"""The math functions of #22 (the Array API elementwise set by NumPy's names, and the ufuncs paired
with them) against NumPy itself: types and values on every dtype NumPy takes, broadcasting under
every rule, out= and dtype=, 0-d and zero-size, the Array API aliases, complex sign and round,
fused chains, Dask.  (Every op x dtype x layout, reference vs Numba: test_numba_backend.py; the
accuracy bounds: test_math_accuracy.py; the CUDA kernels: test_kernels_emulate.py.)
"""

import warnings

import ml_dtypes
import numpy as np
import pytest

import gpubcast as gb
from gpubcast import ops

from tests.support.sampling import BACKEND_PARTS, dtypes_part

BACKENDS = ("numpy", "numba")
MATH = sorted(n for n, op in ops.REGISTRY.items() if "math" in op.tags)
UNARY = [n for n in MATH if ops.get(n).kind == "unary"]
BINARY = [n for n in MATH if ops.get(n).kind == "binary"]
#: the NumPy function of each (``real``/``imag`` are functions, not ufuncs)
NUMPY = {**{n: getattr(np, n) for n in MATH if n not in ("conj",)}, "conj": np.conjugate}
DTYPES = (np.bool_, np.int8, np.uint16, np.int32, np.int64, np.float16, np.float32, np.float64,
          np.complex64, np.complex128, ml_dtypes.bfloat16)


def _values(dt, shape, rng):
    dt = np.dtype(dt)
    x = rng.standard_normal(shape) * 3
    if dt.kind == "c":
        x = x + 1j * rng.standard_normal(shape)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return x.astype(dt) if dt.kind != "b" else x > 0


def _close(name, got, want):
    got, want = np.asarray(got), np.asarray(want)
    assert got.dtype == want.dtype and got.shape == want.shape, (name, got.dtype, want.dtype, got.shape, want.shape)
    rtol = ops.math_rtol(name, got.dtype if got.dtype.kind != "b" else np.float64)
    if got.dtype.kind in "biu" or not rtol:
        assert np.array_equal(got, want, equal_nan=got.dtype.kind in "fcV"), name
    else:
        wide = np.complex128 if got.dtype.kind == "c" else np.float64
        atol = rtol if name in ("logaddexp", "logaddexp2") else 0   # their bound: ulps of max(|result|, 1)
        np.testing.assert_allclose(got.astype(wide), want.astype(wide), rtol=rtol, atol=atol, equal_nan=True,
                                   err_msg=name)


def _numpy(name, *xs, **kw):
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        return np.asarray(NUMPY[name](*xs, **kw))


@pytest.mark.parametrize("backend, part", BACKEND_PARTS)
@pytest.mark.parametrize("name", UNARY)
def test_unary_equals_numpy_on_every_dtype(name, backend, part):
    """Values and types of NumPy's ufunc on each dtype it takes; a TypeError where NumPy has none."""
    rng = np.random.default_rng(len(name))
    for dt in dtypes_part(DTYPES, name, part):
        x = _values(dt, (3, 5), rng)
        try:
            want = _numpy(name, x)
        except TypeError:
            with pytest.raises(TypeError, match=name):
                getattr(gb, name)(x, backend=backend)
            continue
        if name == "positive" and x.dtype == bool:   # NumPy 2 deprecates +bool (a warning, not an error)
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got = getattr(gb, name)(x, backend=backend)
        _close(name, got, want)


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", BINARY)
def test_binary_equals_numpy_broadcast_and_mixed(name, backend):
    """Each dtype, broadcasting (row, column, 0-d, zero-size), mixed dtypes and Python scalars."""
    rng = np.random.default_rng(len(name) + 100)
    f = getattr(gb, name)
    for dt in DTYPES:
        a, b = _values(dt, (4, 1, 6), rng), _values(dt, (3, 1), rng)
        try:
            want = _numpy(name, a, b)
        except TypeError:
            with pytest.raises(TypeError, match=name):
                f(a, b, backend=backend)
            continue
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            _close(name, f(a, b, backend=backend), want)
            _close(name, f(a[0, 0, 0], b, backend=backend), _numpy(name, a[0, 0, 0], b))
            _close(name, f(a[:0], b, backend=backend), _numpy(name, a[:0], b))
    x, y = _values(np.float32, (5,), rng), _values(np.float64, (2, 1), rng)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        _close(name, f(x, y, backend=backend), _numpy(name, x, y))
        _close(name, f(x, 2.5, backend=backend), _numpy(name, x, 2.5))
        _close(name, f(-1.5, x, backend=backend), _numpy(name, -1.5, x))
        _close(name, f(np.int16(3), x, backend=backend), _numpy(name, np.int16(3), x))


@pytest.mark.parametrize("backend", BACKENDS)
def test_binary_rules_out_and_dtype(backend):
    """broadcast='pdpd' and 'none', out= (same_kind casting), dtype= picking the loop."""
    rng = np.random.default_rng(5)
    x, y = _values(np.float32, (2, 3, 4), rng), _values(np.float32, (3,), rng)
    got = gb.atan2(x, y, broadcast="pdpd", axis=1, backend=backend)
    _close("arctan2", got, np.arctan2(x, y[None, :, None]))
    with pytest.raises(gb.BroadcastError):
        gb.hypot(x, y, broadcast="none", backend=backend)
    _close("hypot", gb.hypot(x, x, broadcast="none", backend=backend), np.hypot(x, x))
    out = np.empty((2, 3, 4), np.float64)
    assert gb.logaddexp(x, y[None, :, None], out, backend=backend) is out
    _close("logaddexp", out.astype(np.float32), np.logaddexp(x, y[None, :, None]))   # the float32 loop's values
    _close("copysign", gb.copysign(x, -1.0, dtype=np.float64, backend=backend),
           np.copysign(x, -1.0, dtype=np.float64))
    _close("sin", gb.sin(x, dtype=np.float64, backend=backend), np.sin(x, dtype=np.float64))
    with pytest.raises(TypeError, match="same_kind"):
        gb.sin(x, np.empty(x.shape, np.int32), backend=backend)


@pytest.mark.parametrize("backend", BACKENDS)
def test_zero_size_rank0_and_views(backend):
    x = np.linspace(-2, 2, 24).reshape(4, 6)[:, ::-2]
    _close("arcsinh", gb.arcsinh(x, backend=backend), np.arcsinh(x))
    _close("expm1", gb.expm1(x.T, backend=backend), np.expm1(x.T))
    assert gb.cos(np.empty((0, 3), np.float32), backend=backend).shape == (0, 3)
    r = gb.log1p(np.float32(0.5), backend=backend)
    _close("log1p", r, np.log1p(np.float32(0.5)))
    assert gb.isnan(np.array(np.nan), backend=backend).tolist() is True
    y = x.copy()
    gb.square(y, y, backend=backend)   # in place
    _close("square", y, np.square(x))


def test_array_api_aliases_are_the_same_functions():
    pairs = {"acos": "arccos", "asin": "arcsin", "atan": "arctan", "acosh": "arccosh", "asinh": "arcsinh",
             "atanh": "arctanh", "atan2": "arctan2", "pow": "power", "bitwise_invert": "bitwise_not",
             "bitwise_left_shift": "left_shift", "bitwise_right_shift": "right_shift"}
    for alias, name in pairs.items():
        assert getattr(gb, alias) is getattr(gb, name), alias
        assert alias in gb.__all__ and alias in dir(gb)
    assert gb.pow(np.array([2, 3]), 3).tolist() == [8, 27]
    assert gb.bitwise_invert(np.array([0], np.uint8)).tolist() == [255]
    assert gb.bitwise_left_shift(np.array([1], np.int8), 3).tolist() == [8]


@pytest.mark.parametrize("backend", BACKENDS)
def test_sign_and_round_of_complex_follow_numpy2(backend):
    z = np.array([3 + 4j, -0.0 + 0j, 0j, 1e-300 + 1e-300j, np.inf + 1j, 1 - np.inf * 1j, np.inf + np.inf * 1j,
                  np.nan + 1j, 2.5 - 1.5j, -0.5 + 3.5j, 1e308 + 1e308j], np.complex128)
    for dt in (np.complex64, np.complex128):
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            x = z.astype(dt)
            s, r = gb.sign(x, backend=backend), gb.round(x, backend=backend)
        assert s.dtype == dt and r.dtype == dt
        assert np.array_equal(s, np.sign(x), equal_nan=True), (s, np.sign(x))
        assert np.array_equal(r, np.round(x), equal_nan=True)
    assert gb.sign(np.array([3 + 4j]), backend=backend).tolist() == [0.6 + 0.8j]   # z / |z|, by hand
    assert gb.round(np.array([2.5 - 1.5j]), backend=backend).tolist() == [2 - 2j]  # halves to even


@pytest.mark.parametrize("backend", BACKENDS)
def test_exact_functions_by_hand(backend):
    """Values computed by hand, not by NumPy: signed zeros, NaN rules, the neighbours of a float."""
    f = np.array([-0.0, 0.0, np.nan, -np.inf, 2.5, -2.5], np.float32)
    assert gb.signbit(f, backend=backend).tolist() == [True, False, False, True, False, True]
    assert gb.isinf(f, backend=backend).tolist() == [False, False, False, True, False, False]
    assert gb.isfinite(f, backend=backend).tolist() == [True, True, False, False, True, True]
    assert gb.trunc(f, backend=backend)[4:].tolist() == [2.0, -2.0]
    assert np.signbit(gb.copysign(np.float32([1, 1]), np.float32([-0.0, 0.0]), backend=backend)).tolist() == [
        True, False]
    one = np.ones(3, np.float32)
    assert gb.nextafter(one, np.float32([2, 0, 1]), backend=backend).tolist() == [1 + 2 ** -23, 1 - 2 ** -24, 1]
    h = gb.nextafter(np.zeros(2, np.float16), np.float16([1, -1]), backend=backend)
    assert h.view(np.uint16).tolist() == [0x0001, 0x8001]                      # the smallest subnormals
    b = gb.nextafter(np.ones(1, ml_dtypes.bfloat16), np.zeros(1, ml_dtypes.bfloat16), backend=backend)
    assert b.view(np.uint16).tolist() == [0x3F7F]                              # 1 - 2**-8
    assert gb.fmax(np.float32([np.nan, 1, np.nan]), np.float32([2, np.nan, np.nan]), backend=backend)[:2].tolist() \
        == [2, 1]
    assert gb.fmin(np.int8([-128, 5]), np.int8([3, 7]), backend=backend).tolist() == [-128, 5]
    assert gb.square(np.int8([16, -12]), backend=backend).tolist() == [0, -112]   # wraps: 256, 144
    assert gb.square(np.array([True, False]), backend=backend).dtype == np.int8
    z = np.array([1 - 2j], np.complex64)
    assert gb.conj(z, backend=backend).tolist() == [1 + 2j]
    assert gb.real(z, backend=backend).dtype == np.float32 and gb.imag(z, backend=backend).tolist() == [-2.0]
    assert gb.imag(np.float16([3.0]), backend=backend).tolist() == [0.0]
    assert gb.deg2rad(np.float64(180.0), backend=backend) == np.pi
    assert abs(gb.cbrt(np.float64(-27.0), backend=backend) + 3.0) <= 3 * ops.math_ulps("cbrt", np.float64) * 2 ** -52
    assert gb.hypot(np.float64(np.inf), np.float64(np.nan), backend=backend) == np.inf   # C's hypot


def test_type_errors_are_clear():
    with pytest.raises(TypeError, match="cbrt"):
        gb.cbrt(np.array([1j]))
    with pytest.raises(TypeError, match="positive"):
        gb.positive(np.array([True]))
    with pytest.raises(TypeError, match="signbit"):
        gb.signbit(np.array([1j]))
    with pytest.raises(TypeError, match="hypot"):
        gb.hypot(np.array([1j]), 1.0)
    with pytest.raises(TypeError, match="trunc"):
        gb.trunc(np.array([1j]))


def test_fused_chains_take_the_math_functions():
    """gb.fuse of a chain of the new functions equals the unfused chain on the Numba backend, bit for bit."""
    rng = np.random.default_rng(9)
    for dt in (np.float16, np.float32, np.float64, ml_dtypes.bfloat16):
        x, y = _values(dt, (5, 7), rng), _values(dt, (7,), rng)

        def f(x, y):
            s = gb.sin(x) * gb.cos(y) + gb.arctan2(x, y) - gb.hypot(x, 1.5)
            t = gb.where(gb.isnan(gb.log1p(x)), gb.expm1(y), gb.cbrt(x))
            return gb.fmax(gb.logaddexp(s, t), gb.copysign(gb.square(x), y)), gb.signbit(gb.trunc(s))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got, want = gb.fuse(f)(x, y), f(x, y)
        for g, w in zip(got, want):
            assert g.dtype == w.dtype and np.array_equal(g, w, equal_nan=g.dtype != bool)
    z = _values(np.complex64, (4, 3), rng)

    def c(z):
        return gb.real(gb.exp2(z)) + gb.imag(gb.arcsinh(gb.conj(z))), gb.isfinite(gb.tan(z))
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        got, want = gb.fuse(c)(z), c(z)
    for g, w in zip(got, want):
        assert g.dtype == w.dtype and np.array_equal(g, w, equal_nan=g.dtype != bool)


def test_dask_chunk_by_chunk():
    da = pytest.importorskip("dask.array")
    x = da.from_array(np.linspace(-3, 3, 40).reshape(4, 10), chunks=(2, 5))
    got = gb.atan2(x, 0.5)
    assert isinstance(got, da.Array)
    _close("arctan2", got.compute(), np.arctan2(x.compute(), 0.5))
    assert np.array_equal(gb.isfinite(gb.arctanh(x)).compute(), np.isfinite(np.arctanh(x.compute())))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("dtype", [np.float16, ml_dtypes.bfloat16, np.float32, np.float64])
def test_isinf_detect_flags_equal_numpy_isposinf_isneginf(dtype, backend):
    """gb.isinf(x, detect_positive=, detect_negative=) (#22 item 2; ONNX IsInf's attributes) is NumPy's
    isinf / isposinf / isneginf / nothing, on every float dtype, with out= and under gb.fuse."""
    info = ml_dtypes.finfo(dtype)
    special = [-np.inf, -1.0, -0.0, 0.0, 2.0, np.inf, np.nan, -np.nan, float(info.max), -float(info.max),
               float(info.smallest_subnormal)]
    x = np.array(special * 3, dtype).reshape(3, len(special))[:, ::-1]   # a strided view
    wide = x.astype(np.float64)   # infinities, NaNs and signs survive the widening exactly
    cases = {(True, True): np.isinf(wide), (True, False): np.isposinf(wide), (False, True): np.isneginf(wide),
             (False, False): np.zeros(x.shape, bool)}
    assert cases[(True, False)].sum() == 3 and cases[(False, True)].sum() == 3   # the cases are not vacuous
    for (pos, neg), want in cases.items():
        got = gb.isinf(x, detect_positive=pos, detect_negative=neg, backend=backend)
        assert got.dtype == bool and got.shape == x.shape and np.array_equal(got, want), (pos, neg)
        out = np.ones(x.shape, bool)   # every False of want is written
        assert gb.isinf(x, out, detect_positive=np.bool_(pos), detect_negative=np.bool_(neg), backend=backend) is out
        assert np.array_equal(out, want), (pos, neg)
        fused = gb.fuse(lambda v, p=pos, n=neg: gb.isinf(v, detect_positive=p, detect_negative=n))
        assert np.array_equal(fused(x, backend=backend), want), (pos, neg)


def test_isinf_flags_on_other_types_and_their_errors():
    """Integers and bools have no infinity (np.isposinf says False); complex with one sign is NumPy's
    TypeError; a flag that is not a bool is a TypeError, not its truth value."""
    for x in (np.array([-128, 0, 127], np.int8), np.array([True, False])):
        for pos, neg in ((True, False), (False, True), (False, False)):
            assert np.array_equal(gb.isinf(x, detect_positive=pos, detect_negative=neg), np.isposinf(x))
    z = np.array([complex(np.inf, 0), complex(0, -np.inf), 1j])
    assert np.array_equal(gb.isinf(z, detect_positive=True, detect_negative=True), np.isinf(z))
    assert not gb.isinf(z, detect_positive=False, detect_negative=False).any()
    with pytest.raises(TypeError):
        np.isposinf(z)
    for pos, neg in ((True, False), (False, True)):
        with pytest.raises(TypeError, match="complex"):
            gb.isinf(z, detect_positive=pos, detect_negative=neg)
    x = np.array([np.inf, -np.inf], np.float32)
    for bad in (1, 0, None, "yes", np.float32(1)):
        with pytest.raises(TypeError, match="detect_positive must be a bool"):
            gb.isinf(x, detect_positive=bad)
        with pytest.raises(TypeError, match="detect_negative must be a bool"):
            gb.isinf(x, detect_negative=bad)
