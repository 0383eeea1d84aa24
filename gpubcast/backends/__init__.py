"""Backends execute plans; this module finds the one that owns the inputs.

A backend is an object with
    name            "numpy" | "numba" | "cuda"
    xp              its array module (numpy or cupy)
    owns(x)         whether ``x`` lives where this backend computes
    asarray(x, dtype=None), empty(shape, dtype), copy(x), copyto(dst, src)
    write_in_order(dst, src)   copyto into a ``dst`` whose elements share memory (an out= over itself)
    may_share_memory(a, b), data_ptr(x)
    execute(op, plan, inputs, out)
``execute`` gets inputs already cast to the op's loop dtypes (0-d arrays for
scalars), in the order of ``plan``'s operands, and writes ``plan.out_shape``
elements into ``out`` (whose strides are the plan's ``out_strides``).
"""

from __future__ import annotations

import contextlib
import importlib
import warnings
import weakref

from .. import hot_calls
from . import threading_layer

threading_layer.preload()  # TBB's library, before Numba picks a threading layer (see that module)

_WHERE = {
    "numpy": "gpubcast.backends.reference:NumpyBackend",
    "numba": "gpubcast.backends.numba.backend:NumbaBackend",
    "cuda": "gpubcast.backends.cuda:CudaBackend",
}
#: the backend NumPy inputs run on unless ``backend=`` says otherwise
DEFAULT_CPU = "numba"
#: the array types of the CUDA backends made so far (CuPy's ndarray; a virtual device's): the hot path
#: keys such arrays by type, dtype, shape and strides, as NumPy arrays
DEVICE_ARRAY_TYPES: weakref.WeakSet = weakref.WeakSet()

_instances: dict = {}


def get(name: str):
    """The backend called ``name`` (imported on first use)."""
    be = _instances.get(name)
    if be is None:
        if name not in _WHERE:
            raise ValueError(f"unknown backend {name!r}; choose one of {', '.join(map(repr, _WHERE))}")
        module, cls = _WHERE[name].split(":")
        be = _instances[name] = getattr(importlib.import_module(module), cls)()
    return be


@contextlib.contextmanager
def registered(name: str, backend):
    """``backend`` as ``get(name)`` -- ``backend=name`` in every gpubcast call -- for the block; the
    backend that was there (or none) is back after it."""
    previous = _instances.get(name)
    _instances[name] = backend
    hot_calls.forget_all()  # runners and compiled entries prepared by the backend that was there
    try:
        yield backend
    finally:
        if previous is None:
            _instances.pop(name, None)
        else:
            _instances[name] = previous
        hot_calls.forget_all()


def default_cpu():
    """The backend NumPy inputs run on: ``DEFAULT_CPU``, or where it cannot load (a broken Numba
    install), the NumPy reference -- the same values -- after one ``RuntimeWarning`` saying why."""
    global _DEFAULT_UNAVAILABLE
    if _DEFAULT_UNAVAILABLE is None:
        try:
            return get(DEFAULT_CPU)
        except Exception as e:  # noqa: BLE001 - any import failure: say it once, compute anyway
            _DEFAULT_UNAVAILABLE = f"{type(e).__name__}: {e}"
            warnings.warn(f"gpubcast: the {DEFAULT_CPU} CPU backend cannot load ({_DEFAULT_UNAVAILABLE}); NumPy "
                          f"arrays compute on the NumPy reference (backend='numpy') instead", RuntimeWarning,
                          stacklevel=3)
    return get("numpy")


def default_cpu_unavailable() -> str | None:
    """Why ``DEFAULT_CPU`` cannot load (None: it loads), trying it if no call has yet."""
    if _DEFAULT_UNAVAILABLE is None:
        try:
            get(DEFAULT_CPU)
        except Exception as e:  # noqa: BLE001 - reported, never raised
            return f"{type(e).__name__}: {e}"
    return _DEFAULT_UNAVAILABLE


#: why the default CPU backend cannot load, once a call found out (then calls take the reference)
_DEFAULT_UNAVAILABLE: str | None = None


def is_cuda_array(x) -> bool:
    """A CuPy array, or any object exposing CUDA memory (``__cuda_array_interface__`` or DLPack)."""
    try:
        if hasattr(x, "__cuda_array_interface__"):
            return True
    except Exception:  # noqa: BLE001 - a foreign object may raise anything here; then DLPack decides
        pass  # e.g. torch raises RuntimeError for a CUDA tensor that requires grad
    dev = getattr(x, "__dlpack_device__", None)
    if dev is None or not callable(dev):
        return False
    try:
        return dev()[0] in (2, 13)  # kDLCUDA, kDLCUDAManaged
    except Exception:  # noqa: BLE001 - a foreign __dlpack_device__ that fails says no CUDA memory
        return False


def is_dask_array(x) -> bool:
    return type(x).__module__.startswith("dask.") and hasattr(x, "chunks")


def select(inputs, out=None, requested: str | None = None):
    """The backend for ``inputs`` (and ``out``): by where the arrays live, or ``requested``."""
    on_gpu = [is_cuda_array(x) for x in inputs]
    if out is not None:
        on_gpu.append(is_cuda_array(out))
    gpu = any(on_gpu)
    if gpu:
        for x, g in zip(list(inputs) + [out], on_gpu):
            if not g and x is not None and getattr(x, "ndim", 0) != 0:
                raise TypeError(
                    f"cannot mix a host array of type {type(x).__name__} (shape {getattr(x, 'shape', '?')}) "
                    f"with CUDA arrays; move it to the GPU first (cupy.asarray(x))")
    if requested is None and not gpu:
        return default_cpu()
    name = requested or ("cuda" if gpu else DEFAULT_CPU)
    if gpu and name != "cuda":
        raise TypeError(f"backend={name!r} computes on the CPU but the inputs are CUDA arrays; "
                        f"use backend='cuda' or move them with cupy.asnumpy")
    if not gpu and name == "cuda" and any(getattr(x, "ndim", 0) for x in inputs):
        raise TypeError("backend='cuda' needs CUDA arrays (e.g. cupy.asarray(x)); got host arrays")
    return get(name)
