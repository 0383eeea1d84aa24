"""The same values in different memory: contiguous, Fortran order, strided, negative strides and
misaligned (``LAYOUTS``: name -> function of an array)."""

from __future__ import annotations

import numpy as np


def contiguous(x):
    return np.ascontiguousarray(x)


def transposed(x):
    """Fortran order (the transpose of a C-contiguous array)."""
    return np.asfortranarray(x)


def sliced(x):
    """Every other element along each dim of a larger array."""
    if x.ndim == 0:
        return np.array(x)
    big = np.zeros(tuple(2 * n for n in x.shape), x.dtype)
    view = big[tuple(slice(None, None, 2) for _ in x.shape)]
    view[...] = x
    return view


def flipped(x):
    """Negative strides along every dim."""
    if x.ndim == 0:
        return np.array(x)
    rev = np.ascontiguousarray(x[tuple(slice(None, None, -1) for _ in x.shape)])
    return rev[tuple(slice(None, None, -1) for _ in x.shape)]


def misaligned(x):
    """The same values in a byte buffer, one byte past an aligned address (misaligned for every
    dtype with an alignment above 1)."""
    buf = np.zeros(x.nbytes + 16, np.uint8)  # NumPy allocations are 16-byte aligned
    y = np.frombuffer(buf.data, dtype=x.dtype, count=x.size, offset=1).reshape(x.shape)
    y[...] = x
    return y


LAYOUTS = {"contiguous": contiguous, "transposed": transposed, "sliced": sliced, "flipped": flipped,
           "misaligned": misaligned}
