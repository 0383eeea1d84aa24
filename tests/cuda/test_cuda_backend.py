"""The CUDA backend's glue that needs no GPU: where arrays go, host scalars as kernel arguments,
architecture choice; mixing host and CUDA arrays is a TypeError that says so."""

import numpy as np
import pytest

import gpubcast as gb
from gpubcast import backends
from gpubcast.cuda import compiler, launch

cupy = pytest.importorskip("cupy")


class FakeCudaArray:
    """Looks like CUDA memory to backends.select (never reaches a kernel in these tests)."""

    def __init__(self, shape=(3,)):
        self.shape, self.ndim, self.dtype = shape, len(shape), np.dtype(np.float32)
        self.__cuda_array_interface__ = {"shape": shape, "typestr": "<f4", "data": (0, False), "version": 3}


class FakeDLPack:
    def __init__(self, device_type):
        self.device_type, self.shape, self.ndim = device_type, (2,), 1

    def __dlpack_device__(self):
        return (self.device_type, 0)


def test_numpy_array_mixed_with_cuda_array_is_a_type_error():
    with pytest.raises(TypeError, match=r"cannot mix a host array of type ndarray \(shape \(3,\)\) with CUDA "
                                        r"arrays; move it to the GPU first \(cupy.asarray\(x\)\)"):
        gb.add(np.ones(3, np.float32), FakeCudaArray())
    with pytest.raises(TypeError, match="cannot mix a host array"):
        gb.where(FakeCudaArray(), np.ones(3), 1.0)
    with pytest.raises(TypeError, match="cannot mix a host array"):       # host out= with CUDA inputs
        backends.select([FakeCudaArray()], np.empty(3))


def test_zero_d_host_arrays_and_scalars_go_with_cuda_arrays():
    assert backends.select([FakeCudaArray(), np.float32(2.0)]).name == "cuda"
    assert backends.select([FakeCudaArray(), np.array(2.0), 3]).name == "cuda"


def test_dlpack_device_decides_where_an_array_lives():
    assert backends.is_cuda_array(FakeDLPack(2)) and backends.is_cuda_array(FakeDLPack(13))
    assert not backends.is_cuda_array(FakeDLPack(1))                      # kDLCPU
    assert backends.select([FakeDLPack(2)]).name == "cuda"


def test_cuda_backend_on_host_arrays_is_a_type_error():
    with pytest.raises(TypeError, match="backend='cuda' needs CUDA arrays"):
        gb.add(np.ones(3), np.ones(3), backend="cuda")
    with pytest.raises(TypeError, match="computes on the CPU but the inputs are CUDA arrays"):
        gb.add(FakeCudaArray(), 1.0, backend="numpy")


def test_host_scalars_stay_on_the_host_as_kernel_arguments():
    be = backends.get("cuda")
    x = be.asarray(2.5, dtype=np.float32)
    assert isinstance(x, np.ndarray) and x.shape == () and x.dtype == np.float32
    op = be.operand(x)
    assert op.value == np.float32(2.5).tobytes() and op.ptr == 0
    assert be.operand(be.asarray(np.int8(-3))).value == np.int8(-3).tobytes()
    assert not be.may_share_memory(x, x)                   # host values share nothing with device memory
    with pytest.raises(TypeError, match="only CuPy arrays and host scalars"):
        be.operand(np.ones(3))
    with pytest.raises(TypeError, match="takes CuPy arrays"):
        be.asarray("text")


def test_architecture_choice():
    archs = compiler.supported_archs()
    assert 80 in archs and 90 in archs
    assert compiler.arch_for("90") == "sm_90" and compiler.arch_for("80") == "sm_80"
    assert compiler.arch_for("999") == f"compute_{max(archs)}"   # newer than NVRTC knows: PTX for the driver


def test_launch_argument_is_a_size_one_numpy_array_of_the_struct_bytes():
    # the CUDA backend passes launch.params as one by-value argument: a size-1 void array
    a = np.ones((4, 5), np.float32)
    p = gb.plan(a, a)
    ins = [launch.Operand(a.dtype, 0x1000), launch.Operand(a.dtype, 0, np.float32(3).tobytes())]
    [lc] = launch.plan_launches(gb.ops.get("add"), p, ins, launch.Operand(a.dtype, 0x2000))
    arg = np.frombuffer(lc.params, np.dtype((np.void, len(lc.params))))
    assert arg.size == 1 and arg.tobytes() == lc.params and len(lc.params) == launch.head_size(2)
    assert lc.params[:24] == (0x2000).to_bytes(8, "little") + (0x1000).to_bytes(8, "little") + bytes(8)


def test_a_kernel_arguments_dtype_is_made_once_per_size_in_a_bounded_cache():
    from gpubcast.backends import cuda as cuda_backend
    assert cuda_backend._by_value.cache_info().maxsize == 256
    assert cuda_backend._by_value(72) is cuda_backend._by_value(72)
    assert cuda_backend._by_value(72) == np.dtype((np.void, 72))
