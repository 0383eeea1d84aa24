"""The ONNX and OpenVINO front ends on Dask arrays: they go through ``dispatch.apply``, so they are
lazy on Dask inputs and equal to the same call on NumPy arrays (each front end's own semantics)."""

import numpy as np
import pytest

da = pytest.importorskip("dask.array")


def same_as_numpy(f, *args, shape_args=0, **kwargs):
    """``f`` on Dask versions of the array ``args`` (uneven chunks) equals ``f`` on the NumPy arrays;
    the last ``shape_args`` arguments (target shapes, axes) stay NumPy."""
    def lazy(a):
        if not isinstance(a, np.ndarray) or a.ndim == 0:
            return a
        return da.from_array(a, chunks=tuple(max(1, n - n // 3) for n in a.shape))
    expected = f(*args, **kwargs)
    n = len(args) - shape_args
    result = f(*(lazy(a) for a in args[:n]), *args[n:], **kwargs)
    assert isinstance(result, da.Array), f"{f.__name__} computed eagerly: {type(result).__name__}"
    assert result.dtype == expected.dtype and result.shape == expected.shape
    np.testing.assert_array_equal(result.compute(scheduler="threads"), expected)


A = np.arange(-12, 12, dtype=np.int32).reshape(2, 3, 4)
B = np.array([3, -2, 5, 7], dtype=np.int32)
F = np.linspace(-2, 2, 24, dtype=np.float32).reshape(2, 3, 4)


def test_onnx_ops_on_dask():
    onnx = pytest.importorskip("gpubcast.onnx")
    same_as_numpy(onnx.Add, A, B)
    same_as_numpy(onnx.Div, A, B)                       # integer Div truncates
    same_as_numpy(onnx.Mod, A, B, fmod=0)
    same_as_numpy(onnx.Sum, F, F[0], np.ones(4, np.float32))
    same_as_numpy(onnx.Max, F, F[:, :1], np.float32(0.5) * np.ones(4, np.float32))
    same_as_numpy(onnx.Where, A > 0, F, np.zeros((3, 1), np.float32))
    same_as_numpy(onnx.PRelu, F, np.array([0.1, 0.2, 0.3], np.float32).reshape(3, 1))
    same_as_numpy(onnx.BitShift, A.astype(np.uint8), np.uint8(2) * np.ones(4, np.uint8), direction="LEFT")
    same_as_numpy(onnx.Expand, F[:, :, :1], np.array([2, 1, 1, 5]), shape_args=1)


def test_openvino_ops_on_dask():
    ov = pytest.importorskip("gpubcast.openvino")
    same_as_numpy(ov.Add, A, B[:3], auto_broadcast="pdpd", axis=1)
    same_as_numpy(ov.Subtract, A, B, auto_broadcast="numpy")
    same_as_numpy(ov.FloorMod, A, B)
    same_as_numpy(ov.PRelu, F, np.array([0.1, 0.2, 0.3], np.float32))           # per channel (dim 1)
    same_as_numpy(ov.Select, A[0] > 0, F, np.zeros((3,), np.float32), auto_broadcast="pdpd", axis=1)
    same_as_numpy(ov.Broadcast, B[:3], np.array([2, 3, 4]), np.array([1]), mode="explicit", shape_args=2)
    same_as_numpy(ov.Broadcast, F[0], np.array([5, 3, 4]), mode="numpy", shape_args=1)
