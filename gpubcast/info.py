"""``python -m gpubcast info``: the backends found, the GPU (or why there is none), versions."""

from __future__ import annotations

import importlib
import platform


def configure(parser) -> None:
    pass


def _version(module: str) -> str | None:
    try:
        return importlib.import_module(module).__version__
    except Exception:
        return None


def gpu_info() -> tuple[dict | None, str]:
    """(device facts, '') for the current CUDA device, or (None, why there is none)."""
    try:
        import cupy
    except Exception as e:  # noqa: BLE001 - any import failure means no GPU backend
        return None, f"CuPy is not importable ({type(e).__name__}: {e}); install gpubcast[cuda12] or [cuda13]"
    try:
        if not cupy.cuda.is_available():
            return None, "CuPy found no CUDA device (cupy.cuda.is_available() is false)"
        dev = cupy.cuda.Device()
        props = cupy.cuda.runtime.getDeviceProperties(dev.id)
        return {
            "name": props["name"].decode() if isinstance(props["name"], bytes) else props["name"],
            "memory_gib": round(props["totalGlobalMem"] / 2**30, 1),
            "compute_capability": f"{props['major']}.{props['minor']}",
            "driver": cupy.cuda.runtime.driverGetVersion(),
            "runtime": cupy.cuda.runtime.runtimeGetVersion(),
        }, ""
    except Exception as e:  # noqa: BLE001
        return None, f"CUDA is not usable ({type(e).__name__}: {e})"


def run(args) -> int:
    import gpubcast
    from gpubcast import backends

    print(f"gpubcast {gpubcast.__version__} on Python {platform.python_version()} ({platform.machine()})")
    for name in ("numpy", "numba", "ml_dtypes", "cupy", "onnx", "onnxruntime", "openvino", "dask"):
        print(f"  {name:12s} {_version(name) or 'not installed'}")
    print(f"default CPU backend: {backends.DEFAULT_CPU}")
    gpu, why = gpu_info()
    if gpu:
        print("GPU: " + ", ".join(f"{k}={v}" for k, v in gpu.items()))
    else:
        print(f"GPU: none ({why})")
    return 0
