"""gpubcast: broadcasting elementwise tensor ops with the exact semantics of ONNX and OpenVINO.

The planner (``broadcast_shapes``, ``plan``) turns shapes and a rule set into
an output shape and per-operand strides; backends (NumPy reference, Numba,
CUDA) execute plans; front ends (this module's NumPy-style functions,
``gpubcast.onnx``, ``gpubcast.openvino``) translate; ``fuse`` runs a traced chain of
them as one pass; ``ElementwiseKernel`` runs user-written C/C++ kernels (CuPy's) under the
same rules.
"""

from . import api, dask_arrays, ops, subclasses  # noqa: F401 - dask_arrays and subclasses register with dispatch
from .api import *  # noqa: F401,F403  (the generated NumPy-style functions)
from .api import broadcast_to, cast, clip, expand, prelu, where
from .dtypes import bfloat16
from .elementwise_kernel import ElementwiseKernel
from .errors import BroadcastError
from .fusion import fuse
from .host_pool import host_memory_pool
from .plan import BroadcastPlan, plan
from .rules import RULES, broadcast_shapes
from .version import __version__

__all__ = ["BroadcastError", "BroadcastPlan", "ElementwiseKernel", "RULES", "bfloat16", "broadcast_shapes",
           "broadcast_to", "cast", "clip", "expand", "fuse", "host_memory_pool", "ops", "plan", "prelu", "where",
           *api.NUMPY_STYLE_BINARY, *api.NUMPY_STYLE_UNARY]
