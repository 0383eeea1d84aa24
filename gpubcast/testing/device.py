"""The one switch between a GPU and the virtual CUDA device, as Numba's ``NUMBA_ENABLE_CUDASIM``
chooses its CUDA simulator.

``GPUBCAST_VIRTUAL_CUDA``: unset, the virtual device (``virtual``) where no GPU is and CuPy where
one is; ``1`` always the virtual device; ``0`` never (code asking for CUDA then needs a GPU).
``cupy()`` gives what was chosen; tests/conftest.py's ``cupy`` fixture is that.
"""

from __future__ import annotations

import contextlib
import functools
import os

SWITCH = "GPUBCAST_VIRTUAL_CUDA"


@functools.lru_cache(maxsize=1)
def gpu_available() -> bool:
    """Whether CuPy imports and sees a CUDA device."""
    try:
        import cupy
        return bool(cupy.cuda.is_available())
    except Exception:  # noqa: BLE001 - any failure means no GPU
        return False


def use_virtual() -> bool:
    """Whether CUDA work runs on the virtual device (module docstring)."""
    setting = os.environ.get(SWITCH, "")
    return setting == "1" or (not gpu_available() and setting != "0")


def virtual_unavailable() -> str:
    """'' when the virtual CUDA device can run here, else why not."""
    if os.environ.get(SWITCH, "") == "0":
        return f"{SWITCH}=0"
    try:
        from ..cuda import compiler
        from . import emulate
        compiler.nvrtc_version()
    except Exception as e:  # noqa: BLE001 - no CuPy / NVRTC: no virtual device
        return f"no NVRTC ({type(e).__name__}: {e})"
    return emulate.available()


@contextlib.contextmanager
def cupy():
    """CuPy on the GPU, or the virtual CUDA device standing in for it (``use_virtual``), for the block."""
    if not use_virtual():
        import cupy
        yield cupy
        return
    from . import virtual
    with virtual.installed() as cp:
        yield cp
