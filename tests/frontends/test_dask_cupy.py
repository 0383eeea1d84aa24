"""gpubcast on CuPy-chunked Dask arrays: chunks stay on the GPU, run on the CUDA backend.

Marked ``gpu``: skipped where ``cupy.cuda.is_available()`` is false.  Values are compared with NumPy.
"""

import numpy as np
import pytest

da = pytest.importorskip("dask.array")

import gpubcast as gb  # noqa: E402 - below the importorskip of Dask

pytestmark = pytest.mark.gpu


def on_gpu(a, chunks):
    import cupy
    return da.from_array(cupy.asarray(a), chunks=chunks, asarray=False)


def assert_cupy_result(result, expected):
    import cupy
    assert isinstance(result, da.Array)
    assert isinstance(result._meta, cupy.ndarray), type(result._meta)
    assert result.dtype == expected.dtype and result.shape == expected.shape
    computed = result.compute(scheduler="threads")
    assert isinstance(computed, cupy.ndarray)
    np.testing.assert_array_equal(cupy.asnumpy(computed), expected)


def test_binary_ops_numpy_and_pdpd_rules():
    rng = np.random.default_rng(0)
    a, b = rng.normal(size=(9, 5, 7)).astype(np.float32), rng.normal(size=(5, 1)).astype(np.float32)
    x, y = on_gpu(a, (4, 3, 5)), on_gpu(b, (2, 1))
    assert_cupy_result(gb.add(x, y), a + b)
    assert_cupy_result(gb.multiply(x, y, broadcast="pdpd", axis=1), a * b.reshape(1, 5, 1))
    assert_cupy_result(gb.maximum(x, 0.5), np.maximum(a, np.float32(0.5)))


def test_where_prelu_and_zero_d_host_scalar():
    rng = np.random.default_rng(1)
    a, s = rng.normal(size=(6, 8)), rng.uniform(0.1, 0.3, size=(8,))
    x = on_gpu(a, (4, 5))
    assert_cupy_result(gb.prelu(x, on_gpu(s, 3)), np.where(a < 0, a * s, a))
    assert_cupy_result(gb.where(gb.greater(x, 0.0), x, np.float64(-1.0)), np.where(a > 0, a, -1.0))


def test_broadcast_to_and_expand():
    a = np.arange(12, dtype=np.int32).reshape(3, 4)
    x = on_gpu(a, (2, 3))
    assert_cupy_result(gb.broadcast_to(x, (5, 3, 4)), np.broadcast_to(a, (5, 3, 4)))
    assert_cupy_result(gb.broadcast_to(x, (3, 2, 4), mode="explicit", axes_mapping=[0, 2]),
                       np.broadcast_to(a.reshape(3, 1, 4), (3, 2, 4)))
    assert_cupy_result(gb.expand(on_gpu(a[:, :1], (2, 1)), (2, 1, 6)), np.broadcast_to(a[:, :1], (2, 3, 6)))


def test_host_array_mixed_with_cupy_chunks_is_an_eager_type_error():
    x = on_gpu(np.ones((4, 5)), 2)
    with pytest.raises(TypeError, match="cannot mix host data"):
        gb.add(x, np.ones(5))
    with pytest.raises(TypeError, match="cannot mix host data"):
        gb.add(x, da.ones(5, chunks=2))


def test_elementwise_kernel_on_cupy_chunks():
    rng = np.random.default_rng(2)
    a, b = rng.normal(size=(9, 5, 7)).astype(np.float32), rng.normal(size=(5, 1)).astype(np.float32)
    axpb = gb.ElementwiseKernel("T x, T a, T b", "T z", "z = a * x + b", "axpb")
    x, y = on_gpu(a, (4, 3, 5)), on_gpu(b, (2, 1))
    assert_cupy_result(axpb(x, y, y, broadcast="pdpd", axis=1), b.reshape(1, 5, 1) * a + b.reshape(1, 5, 1))
