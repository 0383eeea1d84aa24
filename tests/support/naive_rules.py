"""Each rule set written the naive way (the style of JAX's lax_reference.py).

Independent of gpubcast.rules: used by the property tests as the oracle.
Each function returns the output shape or raises ValueError.
"""

import numpy as np


def numpy_rule(*shapes):
    return tuple(np.broadcast_shapes(*shapes))


def unidirectional(target, other):
    if len(other) > len(target):
        raise ValueError("rank")
    if numpy_rule(target, other) != tuple(target):
        raise ValueError("widens")
    return tuple(target)


def numpy_to(inp, target):
    return unidirectional(target, inp)


def bidirectional(inp, target):
    return tuple((np.zeros(inp) * np.ones(target)).shape) if np.prod(inp) * np.prod(target) < 10**6 \
        else numpy_rule(inp, target)


def pdpd(a, b, axis=-1):
    if len(b) > len(a):
        raise ValueError("rank")
    if axis == -1:
        axis = len(a) - len(b)
    trimmed = list(b)
    while trimmed and trimmed[-1] == 1:
        trimmed.pop()
    if axis < 0 or axis + len(trimmed) > len(a):
        raise ValueError("axis")
    padded = [1] * axis + trimmed + [1] * (len(a) - axis - len(trimmed))
    for x, y in zip(a, padded):
        if y != 1 and y != x:
            raise ValueError("mismatch")
    return tuple(a)


def explicit(inp, target, axes_mapping):
    if len(axes_mapping) != len(inp):
        raise ValueError("length")
    if any(not 0 <= a < len(target) for a in axes_mapping):
        raise ValueError("range")
    if list(axes_mapping) != sorted(set(axes_mapping)):
        raise ValueError("order")
    for n, a in zip(inp, axes_mapping):
        if n != 1 and n != target[a]:
            raise ValueError("mismatch")
    return tuple(target)


def none(*shapes):
    if any(tuple(s) != tuple(shapes[0]) for s in shapes):
        raise ValueError("unequal")
    return tuple(shapes[0])
