"""The NumPy reference backend: executes a plan with strided views and the op's NumPy reference.

Slow but plain: it defines the values the Numba and CUDA backends must reproduce.
"""

from __future__ import annotations

import numpy as np
from numpy.lib.stride_tricks import as_strided

from .. import host_pool


class HostArrays:
    """Array handling shared by the CPU backends (NumPy arrays)."""

    xp = np

    def owns(self, x) -> bool:
        return isinstance(x, np.ndarray)

    def asarray(self, x, dtype=None):
        return np.asarray(x, dtype=dtype)

    def empty(self, shape, dtype):
        return host_pool.empty(shape, dtype)

    def copy(self, x):
        return np.array(x, copy=True, order="C")

    def copyto(self, dst, src):
        np.copyto(dst, src, casting="unsafe")

    def write_in_order(self, dst, src):
        """``src`` into ``dst`` element by element in C order of the index, so that where elements of
        ``dst`` share memory the last write wins, as in NumPy's ufuncs over C-ordered operands
        (``np.copyto`` walks ``dst``'s memory order instead)."""
        with np.nditer([src, dst], flags=["external_loop", "buffered", "growinner", "zerosize_ok", "refs_ok"],
                       op_flags=[["readonly"], ["writeonly"]], order="C", casting="unsafe") as it:
            for s, d in it:
                d[...] = s

    def may_share_memory(self, a, b) -> bool:
        return np.may_share_memory(a, b)

    def data_ptr(self, x) -> int:
        return x.__array_interface__["data"][0]


def strided_view(x, p, i):
    """Operand ``i`` of plan ``p`` as a read-only view of ``out_shape``."""
    return as_strided(x, p.out_shape, tuple(s * x.itemsize for s in p.strides[i]), writeable=False)


class NumpyBackend(HostArrays):
    name = "numpy"

    def execute(self, op, p, inputs, out):
        views = [strided_view(x, p, i) for i, x in enumerate(inputs)]
        np.copyto(out, op.reference(*views), casting="unsafe")
