"""``python -m gpubcast info``: the backends found, the CPU, the GPU (or why there is none), versions."""

from __future__ import annotations

import importlib.metadata
import os
import platform


def configure(parser) -> None:
    pass


#: what ``versions`` reports: a name -> the distributions that provide it (first installed wins)
DISTRIBUTIONS = {
    "numpy": ("numpy",), "numba": ("numba",), "ml_dtypes": ("ml_dtypes", "ml-dtypes"),
    "cupy": ("cupy-cuda13x", "cupy-cuda12x", "cupy"), "onnx": ("onnx",), "onnxruntime": ("onnxruntime",),
    "openvino": ("openvino",), "dask": ("dask",), "torch": ("torch",),
}


def versions() -> dict[str, str | None]:
    """Installed version of each of ``DISTRIBUTIONS`` (None when absent), read from package
    metadata without importing anything."""
    found = {}
    for name, dists in DISTRIBUTIONS.items():
        found[name] = None
        for dist in dists:
            try:
                found[name] = importlib.metadata.version(dist)
                break
            except importlib.metadata.PackageNotFoundError:
                continue
    return found


def cpu_info() -> dict:
    """The CPU's model name (from /proc/cpuinfo where there is one), architecture and core count."""
    model = platform.processor() or platform.machine()
    try:
        with open("/proc/cpuinfo") as f:
            model = next((line.split(":", 1)[1].strip() for line in f if line.startswith("model name")), model)
    except OSError:
        pass
    return {"model": model, "machine": platform.machine(), "cores": os.cpu_count()}


def _cuda_version(v: int) -> str:
    """CUDA's integer version (e.g. 12040) as text ("12.4")."""
    return f"{v // 1000}.{v % 1000 // 10}"


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
            "driver": _cuda_version(cupy.cuda.runtime.driverGetVersion()),
            "runtime": _cuda_version(cupy.cuda.runtime.runtimeGetVersion()),
        }, ""
    except Exception as e:  # noqa: BLE001 - any failure means no usable GPU, reported with its reason
        return None, f"CUDA is not usable ({type(e).__name__}: {e})"


def backends_found() -> dict[str, str | None]:
    """Each gpubcast backend -> None when it can run here, else why not."""
    from gpubcast import backends

    found = {}
    for name in ("numpy", "numba", "cuda"):
        try:
            backends.get(name)
            found[name] = None
        except Exception as e:  # noqa: BLE001 - report any import failure, never crash
            found[name] = f"does not import ({type(e).__name__}: {e})"
    if found["cuda"] is None:
        gpu, why = gpu_info()
        found["cuda"] = None if gpu else why
    return found


def host_compiler() -> str:
    """The C++ compiler gpubcast.ElementwiseKernel builds CPU kernels with (first line of --version),
    or why there is none."""
    from gpubcast import hostbuild
    try:
        cxx = hostbuild.compiler("gpubcast.ElementwiseKernel on NumPy arrays")
        return f"{cxx} ({hostbuild.compiler_version(cxx).splitlines()[0]})"
    except Exception as e:  # noqa: BLE001 - report, never crash
        return f"unavailable: {e}"


def hot_path() -> str:
    """Where the compiled hot path's module came from (built with the package, or at run time), or
    why there is none (gpubcast.compiled_calls; its warning is this line)."""
    import warnings

    from gpubcast import compiled_calls
    with warnings.catch_warnings():
        warnings.simplefilter("ignore", RuntimeWarning)
        compiled_calls.load()
    return compiled_calls.describe()


def run(args) -> int:
    import gpubcast
    from gpubcast import backends, cache, host_pool
    from gpubcast.backends import threading_layer

    print(f"gpubcast {gpubcast.__version__} on Python {platform.python_version()} ({platform.machine()})")
    for name, version in versions().items():
        print(f"  {name:12s} {version or 'not installed'}")
    print("backends:")
    for name, why in backends_found().items():
        print(f"  {name:12s} {'available' if why is None else 'unavailable: ' + why}")
    why = backends.default_cpu_unavailable()
    print(f"default CPU backend: {backends.DEFAULT_CPU}" if why is None else
          f"default CPU backend: numpy ({backends.DEFAULT_CPU} cannot load: {why}; NumPy arrays compute on "
          f"NumPy's loops, the same values, slower)")
    print(f"compiled hot path: {hot_path()}")
    print(f"ElementwiseKernel on NumPy arrays: {host_compiler()}")
    print(f"cache of compiled code: {cache.root() / cache.__version__} (python -m gpubcast cache)")
    print(f"host memory pool: {host_pool.describe()}")
    print(f"parallel CPU threading layer: {threading_layer.describe()}")
    cpu = cpu_info()
    print(f"CPU: {cpu['model']} ({cpu['machine']}, {cpu['cores']} cores)")
    gpu, why = gpu_info()
    if gpu:
        print("GPU: " + ", ".join(f"{k}={v}" for k, v in gpu.items()))
    else:
        print(f"GPU: none ({why})")
    return 0
