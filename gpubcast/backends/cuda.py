"""The CUDA backend: executes plans with gpubcast's own kernels (``kernels/*.cu``) on CuPy arrays.

Inputs arrive cast to the op's loop dtypes (``dispatch.apply``): CuPy arrays live on the
device; Python scalars and 0-d NumPy arrays stay on the host and reach the kernel as
arguments (no host-to-device copy).  ``gpubcast.cuda.launch`` picks the kernel from the
plan's operand classes and packs its argument; kernels compile with NVRTC on first use per
(kernel, architecture), are kept in ``gpubcast.cache``, loaded with ``cupy.cuda.function.Module``
and kept per device; launches go to CuPy's current stream.  Objects exposing
``__cuda_array_interface__`` or a CUDA DLPack capsule (a torch CUDA tensor, ...) are
wrapped as CuPy arrays without a copy.

Repeated calls: ``prepare`` / ``prepare_fused`` give the hot path a Python runner, described to the
compiled launch path too (``cuda.compiled_launch``: its ``Program`` as the runner's ``native``), which
then answers the call in C through the backend's ``launcher`` (default: the CUDA driver's).
"""

from __future__ import annotations

import functools

import numpy as np

from .. import dtypes as _dt
from .. import ops as _ops
from ..cuda import compiled_launch, compiler, launch
from ..cuda.sources import FAMILIES
from ..plan import plan as make_plan
from . import DEVICE_ARRAY_TYPES

#: the op every dtype conversion runs (``convert``)
_CAST = _ops.get("cast")

#: loaded kernels kept (per device and name); past it they are loaded again from the disk cache
MAX_FUNCTIONS = 4096


def _cupy():
    try:
        import cupy
    except Exception as e:  # noqa: BLE001 - any import failure means no CUDA backend
        raise RuntimeError(f"the CUDA backend needs CuPy ({type(e).__name__}: {e}); install gpubcast[cuda12] "
                           f"or gpubcast[cuda13]") from None
    return cupy


@functools.lru_cache(maxsize=256)
def _by_value(nbytes: int) -> np.dtype:
    """The dtype of a kernel's one by-value argument: CuPy passes a size-1 NumPy array's bytes (the
    C struct).  Made once per size (``np.dtype((np.void, n))`` costs more than the rest of a pack)."""
    return np.dtype((np.void, nbytes))


def _is_host_scalar(x) -> bool:
    return _dt.is_python_scalar(x) or (isinstance(x, (np.ndarray, np.generic)) and np.ndim(x) == 0)


class CudaBackend:
    name = "cuda"

    def __init__(self, xp=None, launcher: compiled_launch.Launcher | None = None, compiled: bool = True):
        """``xp``: the CuPy module it computes with (default: ``import cupy``; the virtual CUDA device
        passes its stand-in).  ``launcher``: how the compiled launch path launches (default: the
        CUDA driver's ``cuLaunchKernel``; the virtual device passes its own).  ``compiled=False``:
        repeated calls take the Python runner only (the benchmark's comparison)."""
        self.xp = _cupy() if xp is None else xp
        self.launcher = launcher
        self._functions: dict = {}        # (device id, name expression) -> cupy kernel
        self._context = None if compiled else False   # the compiled path's (context, launcher); False: none
        DEVICE_ARRAY_TYPES.add(self.xp.ndarray)

    # ---- arrays --------------------------------------------------------------------------
    def owns(self, x) -> bool:
        return isinstance(x, self.xp.ndarray)

    def asarray(self, x, dtype=None):
        cp = self.xp
        if isinstance(x, cp.ndarray):
            return x if dtype is None or x.dtype == np.dtype(dtype) else self.convert(x, dtype)
        if _is_host_scalar(x):              # stays on the host: a kernel argument
            return np.asarray(x, dtype=dtype)
        if hasattr(x, "__dlpack__"):        # first: DLPack knows bfloat16 (the array interface says V2)
            a = cp.from_dlpack(x)
        elif hasattr(x, "__cuda_array_interface__"):
            a = cp.asarray(x)
        else:
            a = None
        if a is not None:
            return a if dtype is None or a.dtype == np.dtype(dtype) else self.convert(a, dtype)
        raise TypeError(f"the CUDA backend takes CuPy arrays, CUDA array-interface or DLPack objects and "
                        f"scalars, not {type(x).__name__} (shape {getattr(x, 'shape', '?')}); move it "
                        f"with cupy.asarray(x)")

    def empty(self, shape, dtype):
        return self.xp.empty(shape, dtype=dtype)

    def copy(self, x):
        if isinstance(x, np.ndarray):
            return np.array(x, copy=True)
        return self.xp.array(x, copy=True, order="C")

    def copyto(self, dst, src):
        if dst.dtype == src.dtype:          # bits moved, no arithmetic
            self.xp.copyto(dst, src)
        else:
            self.convert(src, dst.dtype, out=dst)

    def write_in_order(self, dst, src):
        """``copyto`` into a ``dst`` whose elements share memory: the threads of one launch write in no
        set order, so where the values written to one location differ, one of them stays."""
        self.copyto(dst, src)

    def convert(self, x, dtype, out=None):
        """``x`` converted to ``dtype`` (into ``out``, of ``x``'s shape) by gpubcast's cast kernels, as
        NumPy converts.  Not CuPy's ``astype``/``copyto``: CuPy compiles its kernels with -ftz=true, and
        they flush float32 subnormals (an H100, 2026-11-27: ``astype(float64)`` of 1e-40 gave 0.0,
        ``x != 0`` gave False), where NumPy keeps them."""
        out = self.xp.empty(x.shape, dtype=dtype) if out is None else out
        if x.size:
            self.execute(_CAST, make_plan(x, out=out), [x], out)
        return out

    def may_share_memory(self, a, b) -> bool:
        cp = self.xp
        if not (isinstance(a, cp.ndarray) and isinstance(b, cp.ndarray)):
            return False                    # a host scalar shares nothing with device memory
        return bool(cp.may_share_memory(a, b))

    def data_ptr(self, x) -> int:
        if isinstance(x, np.ndarray):
            return x.__array_interface__["data"][0]
        return x.data.ptr

    # ---- execution -----------------------------------------------------------------------
    def operand(self, x, output: bool = False, device: int | None = None) -> launch.Operand:
        if isinstance(x, self.xp.ndarray):
            ptr = x.data.ptr
            if device is not None and x.data.device_id != device:
                raise ValueError(f"a CuPy array on device {x.data.device_id} with the current device {device}: "
                                 f"compute on its device (with cupy.cuda.Device({x.data.device_id}): ...) "
                                 f"or move it there (cupy.asarray inside that block)")
            if x.dtype.itemsize and ptr % min(x.dtype.itemsize, 16):
                raise ValueError(f"CUDA array of {x.dtype} at address {ptr:#x} is not aligned to its "
                                 f"{x.dtype.itemsize}-byte elements; copy it first (cupy.ascontiguousarray "
                                 f"of an aligned view)")
            return launch.Operand(x.dtype, ptr)
        if not output and _is_host_scalar(x):
            return launch.Operand.host_value(x, np.asarray(x).dtype)
        raise TypeError(f"cannot run a CUDA kernel on {type(x).__name__} (shape {getattr(x, 'shape', '?')}): "
                        f"only CuPy arrays and host scalars")

    def execute(self, op, p, inputs, out):
        dev = self.xp.cuda.Device().id
        launches = launch.plan_launches(op, p, [self.operand(x, device=dev) for x in inputs],
                                        self.operand(out, True, dev))
        for lc in launches:
            self._launch(lc, dev)

    def prepare(self, op, p, in_dtypes, out_dtype):
        """A runner ``f(inputs, out) -> out`` for repeated calls with plan ``p`` and these dtypes (the
        hot path, ``dispatch``): the launch templates are chosen once per pattern of host values,
        then each call only packs its addresses and values and launches on the current device and
        stream.  It returns None (the general path runs) for an ``out=`` sharing memory with an input."""
        if not p.size or p.out_overlaps_itself:   # an out= overlapping itself: the general path's
            return None
        shape, templates = p.out_shape, {}      # templates: per pattern of host values

        def templates_of(host):
            found = templates.get(host)
            if found is None:
                found = templates[host] = launch.templates_for(op.name, p, in_dtypes, np.dtype(out_dtype), host)
            return found

        def runner(inputs, out):
            called = self._call_operands(inputs, out, shape, out_dtype)
            if called is None:
                return None
            out, dev, operands = called
            for t in templates_of(tuple(o.value is not None for o in operands[1:])):
                self._launch(launch.Launch(t.family, t.name, launch.pack(t, operands, FAMILIES[t.family].nin),
                                           t.grid, t.ept), dev)
            return out
        runner.native = compiled_launch.Program(self, lambda host: [
            compiled_launch.describe(t, host, FAMILIES[t.family].nin) for t in templates_of(host[1:])])
        return runner

    def _call_operands(self, inputs, out, shape, out_dtype):
        """(out, device, operands with the output's first) of a prepared call (``out`` allocated where
        None), or None where ``out`` shares memory with an input (the general path copies first)."""
        if out is None:
            out = self.xp.empty(shape, dtype=out_dtype)
        elif any(self.may_share_memory(x, out) for x in inputs):
            return None
        dev = self.xp.cuda.Device().id
        return out, dev, (self.operand(out, True, dev), *(self.operand(x, device=dev) for x in inputs))

    def prepare_fused(self, program, p, in_dtypes, out_dtype):
        """A runner ``f(inputs, out) -> out`` of fused ``program`` over plan ``p`` for repeated calls (the
        hot path of ``gpubcast.fuse``), or None where the program runs op by op.  Each call checks its
        operands and packs the launch as ``execute_fused`` does; it returns None (the general path runs)
        for an ``out=`` sharing memory with an input."""
        from ..cuda import fused
        if not p.size or p.out_overlaps_itself or not fused.fits(program):
            return None
        shape = p.out_shape

        def runner(inputs, out):
            called = self._call_operands(inputs, out, shape, out_dtype)
            if called is None:
                return None
            out, dev, operands = called
            for lc in fused.launches(program, p, list(operands[1:]), operands[0]):
                self._launch(lc, dev)
            return out
        constants, nin = program.constant_block.tobytes(), len(program.leaves)
        runner.native = compiled_launch.Program(self, lambda host: [
            compiled_launch.describe(t, host, nin, constants)
            for t in fused.templates(program, p, host[1:], np.dtype(out_dtype))])
        return runner

    def execute_fused(self, program, p, inputs, out) -> bool:
        """Run fused ``program`` (``gpubcast.fusion``) over plan ``p`` of its leaves ``inputs`` into ``out``
        with one generated kernel (``gpubcast.cuda.fused``); False where its argument would not fit a
        launch (the chain then runs op by op)."""
        from ..cuda import fused
        if not fused.fits(program):
            return False
        dev = self.xp.cuda.Device().id
        operands = [self.operand(x, device=dev) for x in inputs]
        for lc in fused.launches(program, p, operands, self.operand(out, True, dev)):
            self._launch(lc, dev)
        return True

    # ---- the compiled launch path --------------------------------------------------------
    def compiled_context(self):
        """(C context, launcher) of the compiled launch path for this backend, made on first use; None
        where it cannot be (no compiled path, no launcher): calls then take the Python runner."""
        if self._context is None:
            cp = self.xp
            launcher = self.launcher if self.launcher is not None else compiled_launch.driver()
            found = compiled_launch.context(launcher, cp.cuda.runtime.getDevice)
            registered = found is not None and compiled_launch.register_library(
                cp.ndarray, compiled_launch.READ_ATTRS, cp.cuda.get_current_stream, "ptr", cp.ndarray)
            self._context = found if registered else False
        return self._context or None

    def current_device(self) -> int:
        return self.xp.cuda.Device().id

    def _launch(self, lc: launch.Launch, dev: int) -> None:
        kernel = self.function(lc.family, lc.name, dev)
        kernel((lc.grid,), (launch.BLOCK,), (np.frombuffer(lc.params, _by_value(len(lc.params))),))

    def function(self, family: str, name: str, device: int | None = None):
        """The kernel ``name`` on ``device`` (default: the current one): compiled (or read from
        the disk cache) on first use, loaded once per device."""
        if device is not None:   # a launch's: found without making a Device object
            fn = self._functions.get((device, name))
            if fn is not None:
                return fn
        dev = self.xp.cuda.Device(device)
        key = (dev.id, name)
        fn = self._functions.get(key)
        if fn is None:
            arch = compiler.arch_for(dev.compute_capability)
            binary, lowered = compiler.cached_kernel(family, name, arch)
            if not arch.startswith("sm_"):
                binary += b"\0"  # the driver reads PTX as a NUL-terminated string
            with dev:
                module = self.xp.cuda.function.Module()
                module.load(binary)
                if len(self._functions) >= MAX_FUNCTIONS:   # each holds its module: bounded device memory
                    self._functions.clear()
                fn = self._functions[key] = module.get_function(lowered)  # it holds the module
        return fn
