"""gpubcast: broadcasting elementwise tensor ops with the exact semantics of ONNX and OpenVINO.

The planner (``broadcast_shapes``, ``plan``) turns shapes and a rule set into
an output shape and per-operand strides; backends (NumPy reference, Numba,
CUDA) execute plans; front ends (this module's NumPy-style functions,
``gpubcast.onnx``, ``gpubcast.openvino``) translate.
"""

from . import api, dask_arrays, ops  # noqa: F401 - dask_arrays registers with dispatch (no dask import)
from .fusion import fuse
from .api import *  # noqa: F401,F403  (the generated NumPy-style functions)
from .api import broadcast_to, cast, clip, expand, prelu, where
from .dtypes import bfloat16
from .errors import BroadcastError
from .plan import BroadcastPlan, plan
from .rules import RULES, broadcast_shapes
from .version import __version__

__all__ = ["BroadcastError", "BroadcastPlan", "RULES", "bfloat16", "broadcast_shapes", "broadcast_to",
           "cast", "clip", "expand", "fuse", "ops", "plan", "prelu", "where",
           *api.NUMPY_STYLE_BINARY, *api.NUMPY_STYLE_UNARY]
