"""The unary ops of the NumPy-style API: NumPy's values and types, cast, clip, errors, out=, dtype=.

(Every unary op x dtype x layout against the reference: test_numba_backend.py; the CUDA kernels
under host emulation: test_kernels_emulate.py; ONNX's node tests: test_onnx_node.py.)
"""

import math
import warnings

import ml_dtypes
import numpy as np
import pytest

import gpubcast as gb
from gpubcast import ops

from tests.support.sampling import BACKEND_PARTS, dtypes_part

BACKENDS = ("numpy", "numba")

#: the NumPy function each unary op of the API equals (erf and sigmoid have none: math.erf below)
NUMPY = {"negative": np.negative, "abs": np.abs, "sqrt": np.sqrt, "exp": np.exp, "log": np.log,
         "tanh": np.tanh, "reciprocal": np.reciprocal, "floor": np.floor, "ceil": np.ceil, "round": np.round,
         "sign": np.sign, "logical_not": np.logical_not, "bitwise_not": np.invert,
         "relu": lambda x: np.maximum(x, 0)}


def _close(got, want, rtol):
    assert got.dtype == want.dtype and got.shape == want.shape
    if rtol == 0 or got.dtype.kind not in "fc":
        assert np.array_equal(got, want, equal_nan=True)
    else:
        np.testing.assert_allclose(got, want, rtol=rtol, atol=0, equal_nan=True)


@pytest.mark.parametrize("backend, part", BACKEND_PARTS)
@pytest.mark.parametrize("name", sorted(NUMPY))
def test_equals_numpy_on_every_accepted_dtype(name, backend, part):
    rng = np.random.default_rng(7)
    for dt in dtypes_part((np.int8, np.uint16, np.int64, np.float16, np.float32, np.float64, np.complex64, bool),
                          name, part):
        x = (rng.standard_normal((5, 7)) * 20).astype(dt) if dt is not np.complex64 else \
            (rng.standard_normal((5, 7)) + 1j * rng.standard_normal((5, 7))).astype(dt)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            try:
                want = NUMPY[name](x)
            except TypeError:
                with pytest.raises(TypeError):
                    getattr(gb, name)(x, backend=backend)
                continue
            if name == "round" and x.dtype.kind == "b" or name == "reciprocal" and x.dtype.kind in "iub" \
                    or name == "relu" and x.dtype.kind in "bc":
                with pytest.raises(TypeError, match=name):  # outside the op's accepted kinds (ONNX's)
                    getattr(gb, name)(x, backend=backend)
                continue
            got = getattr(gb, name)(x, backend=backend)
        _close(got, np.asarray(want), ops.math_rtol(name, x.dtype))


@pytest.mark.parametrize("backend", BACKENDS)
def test_erf_and_sigmoid_against_the_c_library(backend):
    x = np.linspace(-6, 6, 241)
    erf = np.array([math.erf(v) for v in x])
    sigmoid = np.array([1 / (1 + math.exp(-v)) for v in x])
    for dt in (np.float32, np.float64):
        _close(gb.erf(x.astype(dt), backend=backend), erf.astype(dt), ops.math_rtol("erf", dt))
        _close(gb.sigmoid(x.astype(dt), backend=backend), sigmoid.astype(dt), ops.math_rtol("sigmoid", dt))
    # float16: computed in float32 and rounded once; far tails are subnormal or 0, never NaN
    s16 = gb.sigmoid(np.array([-20.0, -12.0, 0.0, 12.0, 30.0], np.float16), backend=backend)
    assert s16.dtype == np.float16 and np.array_equal(s16, np.array([2.06e-09, 6.14e-06, 0.5, 1.0, 1.0],
                                                                     np.float32).astype(np.float16))


@pytest.mark.parametrize("backend", BACKENDS)
def test_bfloat16_through_ml_dtypes(backend):
    x = np.array([-2.5, -0.75, 0.0, 0.5, 3.25, np.nan], ml_dtypes.bfloat16)
    for name in ("negative", "abs", "sqrt", "exp", "floor", "ceil", "round", "sign", "relu", "tanh"):
        got = getattr(gb, name)(x, backend=backend)
        want = NUMPY[name](x)
        assert got.dtype == ml_dtypes.bfloat16
        _close(got.astype(np.float32), np.asarray(want).astype(np.float32), ops.math_rtol(name, np.float32))


@pytest.mark.parametrize("backend", BACKENDS)
def test_types_follow_numpy(backend):
    assert gb.exp(np.arange(3, dtype=np.int8), backend=backend).dtype == np.float16
    assert gb.sqrt(np.arange(3, dtype=np.int32), backend=backend).dtype == np.float64
    assert gb.abs(np.array([3 + 4j], np.complex64), backend=backend).dtype == np.float32
    assert gb.logical_not(np.array([0.0, 2.0]), backend=backend).tolist() == [True, False]
    assert gb.floor(np.array([-3, 4], np.int16), backend=backend).dtype == np.int16
    assert gb.exp(np.zeros(2, np.float32), dtype=np.float64, backend=backend).dtype == np.float64


@pytest.mark.parametrize("backend", BACKENDS)
def test_cast_is_astype(backend):
    rng = np.random.default_rng(3)
    x = (rng.standard_normal((4, 9)) * 100).astype(np.float32)
    for dt in (np.int8, np.int32, np.uint8, np.float16, ml_dtypes.bfloat16, np.float64, np.complex64, bool):
        src = np.clip(x, -100, 100) if np.dtype(dt).kind in "iu" else x
        if np.dtype(dt).kind == "u":
            src = np.abs(src)
        got = gb.cast(src, dt, backend=backend)
        assert got.dtype == np.dtype(dt) and np.array_equal(got, src.astype(dt), equal_nan=True)
    z = np.array([1.5 - 2j, -0.5 + 1j], np.complex128)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        assert np.array_equal(gb.cast(z, np.float32, backend=backend), z.astype(np.float32))
    assert gb.cast(z, bool, backend=backend).tolist() == [True, True]
    with pytest.raises(TypeError, match="dtype is required"):
        gb.cast(x, None)


@pytest.mark.parametrize("backend", BACKENDS)
def test_clip_is_numpy_clip(backend):
    x = np.array([[-5.0, 0.5, np.nan, 9.0]], np.float32)
    assert np.array_equal(gb.clip(x, 0.0, 1.0, backend=backend), np.clip(x, 0.0, 1.0), equal_nan=True)
    assert np.array_equal(gb.clip(x, None, 1.0, backend=backend), np.clip(x, None, 1.0), equal_nan=True)
    assert np.array_equal(gb.clip(x, 0.0, None, backend=backend), np.clip(x, 0.0, None), equal_nan=True)
    assert np.array_equal(gb.clip(x, 3.0, 2.0, backend=backend), np.clip(x, 3.0, 2.0), equal_nan=True)
    lo, hi = np.array([[-1.0], [0.0]], np.float32), np.array([0.0, 1.0, 2.0, 3.0], np.float32)
    assert np.array_equal(gb.clip(x, lo, hi, backend=backend), np.clip(x, lo, hi), equal_nan=True)
    i8 = np.array([1, -5, 100], np.int8)
    got = gb.clip(i8, 0, 300, backend=backend)  # a bound beyond int8 clips nothing, as NumPy's
    assert got.dtype == np.int8 and np.array_equal(got, np.clip(i8, 0, 300))
    out = np.empty((1, 4), np.float64)
    assert gb.clip(x, 0.0, 1.0, out, backend=backend) is out
    assert np.array_equal(out, np.clip(x, 0.0, 1.0).astype(np.float64), equal_nan=True)
    with pytest.raises(gb.BroadcastError):
        gb.clip(x, np.zeros(3, np.float32), None, backend=backend)
    # min and max by name, as NumPy 2's and the Array API's clip (the Array API suite calls it so)
    for kw in ({"min": 0.0, "max": 1.0}, {"max": 1.0}, {"min": lo}, {"min": 3.0, "max": 2.0}):
        assert np.array_equal(gb.clip(x, **kw, backend=backend), np.clip(x, **kw), equal_nan=True), kw


@pytest.mark.parametrize("backend", BACKENDS)
def test_out_and_strided_views(backend):
    x = np.arange(24, dtype=np.float64).reshape(4, 6)[:, ::-2]
    out = np.empty((3, 4))
    assert gb.sqrt(x, out.T, backend=backend) is not None
    assert np.array_equal(out.T, np.sqrt(x))
    y = x.copy()
    gb.negative(y, y, backend=backend)  # in place
    assert np.array_equal(y, -x)
    assert gb.exp(np.float32(0.0), backend=backend) == 1.0
    assert gb.exp(np.empty((0, 3)), backend=backend).shape == (0, 3)


def test_errors_are_clear():
    with pytest.raises(TypeError, match="negative"):
        gb.negative(np.array([True]))
    with pytest.raises(TypeError, match="reciprocal"):
        gb.reciprocal(np.array([2], np.int32))
    with pytest.raises(TypeError, match="erf"):
        gb.erf(np.array([1j]))
    with pytest.raises(TypeError, match="bitwise_not"):
        gb.bitwise_not(np.array([1.5]))
    with pytest.raises(TypeError, match="same_kind"):
        gb.sqrt(np.ones(3), np.empty(3, np.int32))


def test_dask_chunk_by_chunk():
    da = pytest.importorskip("dask.array")
    x = da.from_array(np.linspace(-3, 3, 40).reshape(4, 10), chunks=(2, 5))
    got = gb.tanh(x)
    assert isinstance(got, da.Array)
    np.testing.assert_allclose(got.compute(), np.tanh(x.compute()), rtol=ops.math_rtol("tanh", np.float64))
    assert np.array_equal(gb.cast(x, np.float32).compute(), x.compute().astype(np.float32))
    assert np.array_equal(gb.clip(x, -1.0, 1.0).compute(), np.clip(x.compute(), -1.0, 1.0))


@pytest.mark.parametrize("backend", BACKENDS)
def test_float32_tanh_within_its_bound(backend):
    """The Numba backend's float32 tanh (float32 lanes, backends/numba/float32_math.py): within its
    stated bound of the true value on a dense sweep, within 1 ulp of NumPy's own; signed zeros,
    infinities, NaN."""
    from tests.support.float32_cases import ULPS, ulp_error
    x = np.concatenate([np.linspace(-12, 12, 200_001, dtype=np.float32),
                        np.float32([1e-45, -1e-38, 2 ** -12, -2 ** -12, 9.99, 10, 10.01, 88, 3.4e38])])
    got = gb.tanh(x, backend=backend)
    np.testing.assert_allclose(got, np.tanh(x), rtol=1.01 * np.finfo(np.float32).eps, atol=0)
    if backend == "numba":
        assert ulp_error(got, np.tanh(x.astype(np.float64))).max() <= ULPS["tanh"]
    edge = gb.tanh(np.float32([-0.0, 0.0, np.inf, -np.inf, np.nan]), backend=backend)
    assert np.array_equal(np.signbit(edge[:4]), [True, False, False, True]) and np.isnan(edge[4])
    assert np.array_equal(edge[2:4], [1.0, -1.0])
