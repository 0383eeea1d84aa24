"""gpubcast: broadcasting elementwise tensor ops with the exact semantics of ONNX and OpenVINO.

The planner (``broadcast_shapes``, ``plan``) turns shapes and a rule set into
an output shape and per-operand strides; backends (NumPy reference, Numba,
CUDA) execute plans; front ends (this module's NumPy-style functions,
``gpubcast.onnx``, ``gpubcast.openvino``) translate; ``fuse`` runs a traced chain of
them as one pass; ``ElementwiseKernel`` runs user-written C/C++ kernels (CuPy's) under the
same rules.
"""

from . import api, dask_arrays, ops, subclasses  # noqa: F401 - dask_arrays and subclasses register with dispatch
from .api import *  # noqa: F403 - the generated NumPy-style functions, exactly api.__all__
from .dtypes import bfloat16
from .elementwise_kernel import ElementwiseKernel
from .errors import BroadcastError
from .fusion import fuse
from .host_pool import host_memory_pool
from .plan import BroadcastPlan, plan
from .rules import RULES, broadcast_shapes
from .version import __version__ as __version__  # public (in __dir__, not __all__): the alias marks the re-export

__all__ = ["BroadcastError", "BroadcastPlan", "ElementwiseKernel", "RULES", "bfloat16", "broadcast_shapes",
           "fuse", "host_memory_pool", "ops", "plan", *api.__all__]

#: the front ends, imported on first use (``gpubcast.onnx`` needs no ``import gpubcast.onnx``)
_FRONT_ENDS = ("onnx", "openvino")


def __getattr__(name):
    if name in _FRONT_ENDS:
        import importlib
        return importlib.import_module(f"{__name__}.{name}")
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def __dir__():
    """The public API only (``__all__``, the front ends, ``__version__``): implementation modules
    stay importable by name but are not part of it."""
    return sorted([*__all__, *_FRONT_ENDS, "__version__"])
