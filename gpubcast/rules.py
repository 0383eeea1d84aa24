"""Broadcasting rule sets reduced to one primitive: a per-operand dim map.

Every rule set turns operand shapes into an output shape plus, for each
operand, a map ``dims[k] -> output dim`` (``None`` for a dim that maps
nowhere, e.g. PDPD's ignored trailing 1s).  One validator then checks that
every mapped dim equals its output dim or is 1; it raises the one message for
that failure, whatever the rule.  Rule-specific preconditions (ranks, the PDPD
axis, ``axes_mapping``) each have one message of their own.

The maps are the same idea as ``broadcast_dimensions`` in JAX's
``lax.broadcast_in_dim``.
"""

from __future__ import annotations

import operator
from collections.abc import Sequence

from .errors import BroadcastError

#: rule name -> (spec, what the operands are)
RULES = {
    "numpy": "ONNX multidirectional / OpenVINO NUMPY: 1..N shapes, right-aligned, each dim equal or 1",
    "unidirectional": "ONNX Gemm C / PRelu slope: (target, other, ...); the others broadcast to target, never "
                      "the reverse (an activation's parameters: several others)",
    "pdpd": "OpenVINO PDPD: (a, b, ...); b placed at `axis` of a, b's trailing 1s ignored, result is a",
    "bidirectional": "ONNX Expand / OpenVINO Broadcast-3 BIDIRECTIONAL: (input, target), numpy rule of the two",
    "explicit": "OpenVINO Broadcast-1 EXPLICIT: (input, target) with axes_mapping, result is target",
    "numpy_to": "OpenVINO Broadcast-1 NUMPY: (input, target); input broadcasts to target one-directionally",
    "none": "OpenVINO NONE: 1..N shapes, all equal",
}

MAX_RANK = 64

DimMap = tuple  # tuple[int | None, ...]: operand dim -> output dim


def check_shape(shape, what: str = "shape") -> tuple[int, ...]:
    """Validate one shape: a sequence of non-negative ints (bools rejected)."""
    if isinstance(shape, (str, bytes)) or not hasattr(shape, "__iter__"):
        raise TypeError(f"{what} must be a sequence of ints, got {type(shape).__name__} {shape!r}")
    dims = []
    for d in shape:
        if isinstance(d, bool) or not hasattr(d, "__index__"):
            raise TypeError(f"{what} {tuple(shape)!r} holds {d!r} of type {type(d).__name__}; dims must be integers")
        d = operator.index(d)
        if d < 0:
            raise ValueError(f"{what} {tuple(shape)!r} holds the negative dim {d}; dims must be >= 0")
        dims.append(d)
    if len(dims) > MAX_RANK:
        raise ValueError(f"{what} {tuple(dims)!r} has rank {len(dims)}; gpubcast supports rank <= {MAX_RANK}")
    return tuple(dims)


def _label(rule: str, axis: int | None = None, axes_mapping=None) -> str:
    if rule == "pdpd":
        return f"broadcast (pdpd, axis={axis!r})"
    if rule == "explicit":
        shown = list(axes_mapping) if isinstance(axes_mapping, (list, tuple)) else axes_mapping
        return f"broadcast (explicit, axes_mapping={shown!r})"
    return f"broadcast ({rule})"


def check_options(rule, axis=-1, axes_mapping=None):
    """``(rule, axis, axes_mapping)`` validated and made hashable (plans are cached on them): a known
    rule name, an int ``axis`` and None or a tuple of ints for ``axes_mapping`` (bools rejected)."""
    if not isinstance(rule, str) or rule not in RULES:
        raise ValueError(f"unknown broadcast rule {rule!r}; choose one of {', '.join(map(repr, RULES))}")
    label = _label(rule, axis, axes_mapping)
    if type(axis) is not int:
        if isinstance(axis, bool) or not hasattr(axis, "__index__"):
            raise TypeError(f"{label}: axis must be an int, got {type(axis).__name__} {axis!r}")
        axis = operator.index(axis)
    if axes_mapping is not None:
        if isinstance(axes_mapping, (str, bytes)) or not hasattr(axes_mapping, "__iter__"):
            raise TypeError(f"{label}: axes_mapping must be a sequence of ints, got {type(axes_mapping).__name__}")
        entries = tuple(axes_mapping)
        if any(isinstance(a, bool) or not hasattr(a, "__index__") for a in entries):
            raise TypeError(f"{label}: axes_mapping must be a sequence of ints, got {list(entries)!r}")
        axes_mapping = tuple(operator.index(a) for a in entries)
    return rule, axis, axes_mapping


def remapped_shape(shape, dmap, rank) -> tuple[int, ...]:
    """The operand's shape laid onto the output's rank (1 where it has no dim)."""
    full = [1] * rank
    for k, d in enumerate(dmap):
        if d is not None:
            full[d] = shape[k]
    return tuple(full)


def _shape_text(shape, dmap, rank) -> str:
    remapped = remapped_shape(shape, dmap, rank)
    if remapped == tuple(shape):
        return f"{tuple(shape)}"
    return f"{tuple(shape)}->{remapped}"


def _right_aligned(shape, rank) -> DimMap:
    return tuple(range(rank - len(shape), rank))


def _check_count(label, rule, shapes, exactly=None, at_least=1):
    n = len(shapes)
    if exactly is not None and n != exactly:
        raise BroadcastError(f"{label}: rule '{rule}' takes exactly {exactly} shapes, got {n}")
    if n < at_least:
        raise BroadcastError(f"{label}: rule '{rule}' takes at least {at_least} shape{'s' * (at_least > 1)}, got {n}")


def dim_maps(shapes: Sequence[tuple[int, ...]], rule: str = "numpy", axis: int = -1,
             axes_mapping=None) -> tuple[tuple[int, ...], tuple[DimMap, ...]]:
    """Return ``(out_shape, maps)`` for validated ``shapes`` under ``rule``.

    ``shapes`` must already be tuples of non-negative ints (see ``check_shape``).
    Raises ``BroadcastError`` for every violation of the rule.
    """
    rule, axis, axes_mapping = check_options(rule, axis, axes_mapping)
    label = _label(rule, axis, axes_mapping)

    if rule in ("numpy", "bidirectional", "none"):
        _check_count(label, rule, shapes, exactly=2 if rule == "bidirectional" else None)
        rank = max((len(s) for s in shapes), default=0)
        if rule == "none":
            for i, s in enumerate(shapes[1:], 1):
                if len(s) != len(shapes[0]):
                    raise BroadcastError(
                        f"{label}: shapes must be equal, but arg 0 with shape {shapes[0]} has rank "
                        f"{len(shapes[0])} and arg {i} with shape {s} has rank {len(s)}")
            maps = tuple(tuple(range(len(s))) for s in shapes)
            out_shape = shapes[0]
            for i, s in enumerate(shapes[1:], 1):
                for d, (x, y) in enumerate(zip(out_shape, s)):
                    if x != y:
                        raise BroadcastError(
                            f"{label}: shapes must be equal. Mismatch is between arg 0 with shape "
                            f"{shapes[0]} and arg {i} with shape {s} at output dim {d}: {x} vs {y}")
            return out_shape, maps
        maps = tuple(_right_aligned(s, rank) for s in shapes)
        out = [1] * rank
        owner = [None] * rank  # which operand set out[d] (for the message)
        for i, (s, m) in enumerate(zip(shapes, maps)):
            for k, d in enumerate(m):
                n = s[k]
                if n == 1:
                    continue
                if owner[d] is None:
                    out[d], owner[d] = n, i
                elif out[d] != n:
                    j = owner[d]
                    raise BroadcastError(
                        f"{label}: shapes cannot be broadcast together. Mismatch is between arg {j} "
                        f"with shape {shapes[j]} and arg {i} with shape {s} at output dim {d}: "
                        f"{out[d]} vs {n}")
        return tuple(out), maps

    # One-directional rules: one operand is the target, the others fit onto it.
    if rule == "numpy_to":
        _check_count(label, rule, shapes, exactly=2)
        target_index, others = 1, (0,)
    elif rule == "explicit":
        _check_count(label, rule, shapes, exactly=2)
        target_index, others = 1, (0,)
    elif rule == "unidirectional":
        _check_count(label, rule, shapes, at_least=2)
        target_index, others = 0, tuple(range(1, len(shapes)))
    else:  # pdpd: operand 0 is the target, every other operand is placed at `axis`
        _check_count(label, rule, shapes, at_least=1)
        target_index, others = 0, tuple(range(1, len(shapes)))
    target = shapes[target_index]
    rank = len(target)
    maps = [None] * len(shapes)
    maps[target_index] = tuple(range(rank))
    for i in others:
        s = shapes[i]
        if rule == "explicit":
            maps[i] = _explicit_map(label, s, i, target, target_index, axes_mapping)
        elif rule == "pdpd":
            maps[i] = _pdpd_map(label, s, i, target, axis)
        else:
            if len(s) > rank:
                raise BroadcastError(
                    f"{label}: arg {i} with shape {s} has rank {len(s)}, more than the rank {rank} of "
                    f"arg {target_index} with shape {target}; it can only broadcast to a shape of equal "
                    f"or higher rank")
            maps[i] = _right_aligned(s, rank)
        for k, d in enumerate(maps[i]):
            if d is not None and s[k] != 1 and s[k] != target[d]:
                raise BroadcastError(
                    f"{label}: arg {i} with shape {_shape_text(s, maps[i], rank)} does not fit arg "
                    f"{target_index} with shape {target} at output dim {d}: {s[k]} vs {target[d]} "
                    f"(each dim must equal the target's or be 1)")
    return target, tuple(maps)


def _pdpd_map(label, s, i, target, axis) -> DimMap:
    rank = len(target)
    if len(s) > rank:
        raise BroadcastError(
            f"{label}: arg {i} with shape {s} has rank {len(s)}, more than the rank {rank} of arg 0 "
            f"with shape {target}; PDPD needs rank(b) <= rank(a)")
    trimmed = len(s)
    while trimmed and s[trimmed - 1] == 1:  # trailing 1s are ignored for the match
        trimmed -= 1
    start = rank - len(s) if axis == -1 else axis
    if start < 0 or start + trimmed > rank:
        raise BroadcastError(
            f"{label}: arg {i} with shape {s} (matched as {s[:trimmed]}) placed at axis {start} runs "
            f"outside arg 0 with shape {target}; PDPD needs 0 <= axis and axis + {trimmed} <= {rank}")
    return tuple(start + k if k < trimmed else None for k in range(len(s)))


def _explicit_map(label, s, i, target, target_index, axes_mapping) -> DimMap:
    rank = len(target)
    if axes_mapping is None:
        raise BroadcastError(f"{label}: rule 'explicit' needs axes_mapping, one output axis per dim of "
                             f"arg {i} with shape {s}")
    mapping = axes_mapping
    if len(mapping) != len(s):
        raise BroadcastError(
            f"{label}: axes_mapping has {len(mapping)} entries but arg {i} with shape {s} has rank "
            f"{len(s)}; give one output axis per input dim")
    for k, a in enumerate(mapping):
        if not 0 <= a < rank:
            raise BroadcastError(
                f"{label}: axes_mapping[{k}] = {a} is out of range for arg {target_index} with shape "
                f"{target} (rank {rank}); each entry must be in [0, {rank})")
        if k and a <= mapping[k - 1]:
            raise BroadcastError(
                f"{label}: axes_mapping must be strictly increasing, but axes_mapping[{k - 1}] = "
                f"{mapping[k - 1]} and axes_mapping[{k}] = {a}")
    return mapping


def broadcast_shapes(*shapes, rule: str = "numpy", axis: int = -1, axes_mapping=None) -> tuple[int, ...]:
    """Output shape of ``shapes`` under ``rule`` (see ``gpubcast.rules.RULES``).

    >>> broadcast_shapes((2, 3, 4, 5), (3, 1), rule="pdpd", axis=1)
    (2, 3, 4, 5)
    >>> broadcast_shapes((3, 1), (2, 1, 6), rule="bidirectional")
    (2, 3, 6)

    Raises ``BroadcastError`` (a ``ValueError``) naming the rule, the shapes,
    the argument and the output dim when the shapes do not fit.
    """
    checked = tuple(check_shape(s, f"arg {i} shape") for i, s in enumerate(shapes))
    return dim_maps(checked, rule, axis, axes_mapping)[0]
