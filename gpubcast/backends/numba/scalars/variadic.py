"""The finishes of the variadic ops (``sum``, ``mean``, ``max``, ``min``: a left fold of a binary
scalar function, then a finish of the accumulated value and the count of inputs).
"""

from __future__ import annotations

import numpy as np

from ..cache import overload
from ..codecs import decode, encode, family
from .values import cdiv, cpack, like


def count_finish(codec, acc, n):
    """Finish of ``sum``/``max``/``min``: the accumulated value itself."""
    raise NotImplementedError


@overload(count_finish)
def _count_finish(codec, acc, n):
    return lambda codec, acc, n: acc


def mean_finish(codec, acc, n):
    """Finish of ``mean``: the sum divided by n converted to the inputs' type (NumPy's
    ``total / dtype(n)``), complex by NumPy's Smith division."""
    raise NotImplementedError


@overload(mean_finish)
def _mean_finish(codec, acc, n):
    fam = family(codec, acc)
    if fam == "c":
        return lambda codec, acc, n: cdiv(acc, cpack(acc, n, 0))
    if codec.codec in ("float16", "bfloat16"):
        def impl(codec, acc, n):
            count = decode(codec, encode(codec, np.float32(n)))  # n in the inputs' type
            return encode(codec, decode(codec, acc) / count)
        return impl
    return lambda codec, acc, n: acc / like(acc, n)
