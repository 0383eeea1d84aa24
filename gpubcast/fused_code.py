"""The code of a fused program (``gpubcast.fusion.Program``), walked once: every backend that
compiles a program (``backends.numba.fused``: Python for Numba; ``cuda.fused``: C++ for NVRTC)
supplies only its spelling (a ``Spelling``) and gets the same statements in the same order.

Contract of ``statements(program, out_dtype, spelling)``: one statement per step, in the
program's order (a variadic step first binds each partial result of its left fold), each step's
value bound to ``v<j>`` in its own dtype (``node.dtype``); then the expression of the stored value,
converted to ``out_dtype``.  Each step reads its inputs converted to its loop dtypes (as
``dispatch`` converts inputs; ``Spelling.convert`` is asked only where the dtypes differ),
computes the registry op in its natural result dtype (``natural_dtype``), and converts that to
``node.dtype`` where the call's ``dtype=`` asked for another.  A binary op whose second input is
one value over the whole call (a constant, a leaf broadcast along every dim, or a step computed
from those alone) is spelled with ``second_constant=True``: NumPy's loop for a scalar operand
(power's fast path), as the unfused call takes it.

A program is read through its fields only (leaves, constants, steps, result): this module stands
below the backends and imports nothing of ``gpubcast.fusion``.
"""

from __future__ import annotations

import numpy as np


def natural_dtype(node) -> np.dtype:
    """The dtype the node's op gives on its loop dtypes (``node.dtype`` differs where the call's
    ``dtype=`` cast the result)."""
    return np.dtype(node.op.resolve(node.loop)[1])


class Spelling:
    """How one backend writes each piece of a fused program's code (each method returns source
    text).  ``node``: the step (``node.op`` the registry op, ``node.loop`` its loop dtypes);
    ``natural``: its op's result dtype; arguments are expressions already in the loop dtypes."""

    def value(self, kind: str, k: int) -> str:
        """The name of leaf ``k`` (its element), constant ``k`` or step ``k``'s value (``kind``:
        "leaf", "const" or "step")."""
        raise NotImplementedError

    def convert(self, expr: str, src: np.dtype, want: np.dtype) -> str:
        """``expr`` of dtype ``src`` converted to ``want`` (the two differ)."""
        raise NotImplementedError

    def bind(self, name: str, dtype: np.dtype, expr: str) -> str:
        """A statement binding ``name`` (of ``dtype``) to ``expr``."""
        raise NotImplementedError

    def unary(self, node, natural: np.dtype, x: str) -> str:
        raise NotImplementedError

    def binary(self, node, natural: np.dtype, x: str, y: str, second_constant: bool) -> str:
        raise NotImplementedError

    def where(self, node, natural: np.dtype, condition: str, x: str, y: str) -> str:
        raise NotImplementedError

    def fold(self, node, natural: np.dtype, acc: str, x: str) -> str:
        """One step of a variadic op's left fold (bound to a name of dtype ``node.loop[0]``)."""
        raise NotImplementedError

    def finish(self, node, natural: np.dtype, acc: str, count: int) -> str:
        """The variadic op's result from its fold over ``count`` inputs (Mean's division)."""
        raise NotImplementedError

    def parametric(self, node, natural: np.dtype, x: str, alpha: str, beta: str) -> str:
        raise NotImplementedError

    def axpby(self, node, natural: np.dtype, a: str, x: str, b: str, y: str) -> str:
        """alpha * x + beta * y, each product rounded to the loop dtype."""
        raise NotImplementedError


def statements(program, out_dtype, spelling: Spelling) -> tuple[list[str], str]:
    """(the statements computing every step, the expression of the value stored as ``out_dtype``)."""
    leaves = [leaf.dtype for leaf, _ in program.leaves]
    consts = [c.dtype for c in program.constants]
    lines, dtypes, steady = [], [], []    # per step: its dtype; whether it is one value over the whole call

    def whole_call_constant(kind, k):
        return kind == "const" or kind == "leaf" and all(d is None for d in program.leaves[k][1]) \
            or kind == "step" and steady[k]

    def converted(expr, src, want):
        return expr if np.dtype(src) == np.dtype(want) else spelling.convert(expr, np.dtype(src), np.dtype(want))

    for j, (node, refs) in enumerate(program.steps):
        args = [converted(spelling.value(kind, k), {"leaf": leaves, "const": consts, "step": dtypes}[kind][k],
                          node.loop[i]) for i, (kind, k) in enumerate(refs)]
        natural, kind = natural_dtype(node), node.op.kind
        if node.op.name == "cast":
            expr, natural = args[0], np.dtype(node.loop[0])
        elif kind == "unary":
            expr = spelling.unary(node, natural, args[0])
        elif kind == "binary":
            expr = spelling.binary(node, natural, args[0], args[1], whole_call_constant(*refs[1]))
        elif kind == "ternary":          # where: the condition in the loop dtype bool
            expr = spelling.where(node, natural, *args)
        elif kind == "variadic":         # a left fold, one statement per input (no nesting limit)
            expr = args[0]
            for i, a in enumerate(args[1:]):
                lines.append(spelling.bind(f"w{j}_{i}", np.dtype(node.loop[0]), spelling.fold(node, natural, expr, a)))
                expr = f"w{j}_{i}"
            expr = spelling.finish(node, natural, expr, len(args))
        elif kind == "parametric":       # an activation's x and two parameters
            expr = spelling.parametric(node, natural, *args)
        elif kind == "quaternary":       # axpby
            expr = spelling.axpby(node, natural, *args)
        else:                            # data movement: the value itself
            expr = args[0]
        lines.append(spelling.bind(f"v{j}", node.dtype, converted(expr, natural, node.dtype)))
        dtypes.append(node.dtype)
        steady.append(all(whole_call_constant(*r) for r in refs))
    kind, k = program.result             # never a constant
    src = dtypes[k] if kind == "step" else leaves[k]
    return lines, converted(spelling.value(kind, k), src, out_dtype)
