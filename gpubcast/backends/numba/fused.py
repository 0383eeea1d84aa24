"""Row functions generated from a fused program (``gpubcast.fusion.Program``): a whole chain of ops
in one pass over the output.

The generated function has the row contract of ``memory`` (``row(ptrs, offs, strides, nops,
n, m, scratch)``; operands: the program's leaves, then the output) and runs under the drivers
(``drivers.drive_n``: any number of operands; slabs, threads, staging, non-temporal stores as for the
built-in ops).  Per element it loads every leaf, computes each step with the registry op's scalar
function (``scalars``: ``UNARY``, ``SCALAR``, ``VARIADIC``; NumPy's values in each step's loop
dtype), converts between steps of different dtypes as ``dispatch`` converts inputs
(``codecs.convert``), and stores the result.

Each step's value is truncated to its raw type (``R(...)``): the scalar functions may compute in a
wider type (Numba widens small integers), and the unfused chain stores every intermediate.

Two loops per row: one specialised on the pattern of inner strides the plan was compiled for
(unit-stride leaves indexed by ``k``, stride-0 leaves loaded once per row: LLVM vectorises it),
taken when the strides the driver passes match it, and a general strided loop.
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict

import numpy as np

from . import scalars as S
from .cache import JIT, cfunc
from .codecs import convert
from .memory import ROW_SIGNATURE, load, store
from .meta import H_ND, H_NOPS, H_TRANSPOSED, HEADER

#: a row's inner stride class per operand: unit, zero, or any other
UNIT, ZERO, STRIDED = "u", "z", "s"
#: compiled row functions kept in this process (by source text), least recently used dropped first
MAX_ROWS = 256

_ROWS: OrderedDict = OrderedDict()     # source digest -> compiled row function
_LOCK = threading.Lock()


def pattern(meta) -> str:
    """The inner stride class of every operand (leaves, then the output) under driver ``meta``
    (a staged transposed input is read with unit stride)."""
    nd, nops = int(meta[H_ND]), int(meta[H_NOPS])
    tiled = int(meta[H_TRANSPOSED]) - 1
    out = []
    for k in range(nops):
        s = int(meta[HEADER + nd + k * nd + nd - 1])
        out.append(UNIT if s == 1 or k == tiled else ZERO if s == 0 else STRIDED)
    return "".join(out)


def source(program, out_dtype, classes: str, raw) -> tuple[str, dict]:
    """The row function's Python source and the globals it names. ``raw(dtype) -> (raw type, codec)``."""
    names: dict = {"load": load, "store": store, "I64": np.int64, "convert": convert}
    leaves = [leaf.dtype for leaf, _ in program.leaves]
    consts = [c.dtype for c in program.constants]
    L = len(leaves) + bool(consts)   # the operands before the output: leaves, the constant block

    def typename(dt):
        key = str(np.dtype(dt)).replace("[", "_").replace("]", "")
        r, c = raw(np.dtype(dt))
        names[f"R_{key}"], names[f"C_{key}"] = r, c
        return f"R_{key}", f"C_{key}"

    def function(table, op_name, prefix):
        name = f"{prefix}_{op_name}"
        names[name] = table[op_name]
        return name

    def body(fast: bool) -> list[str]:
        """Lines computing and storing element k of a row: in the loop specialised on ``classes``
        (stride-0 leaves loaded before it), or in the general one."""
        def indexed(k):
            cls = classes[k] if fast else STRIDED
            return f"o{k} + k" if cls == UNIT else f"o{k}" if cls == ZERO else f"o{k} + k * s{k}"
        lines = [f"a{k} = load(p{k}, {indexed(k)}, {typename(dt)[0]})" for k, dt in enumerate(leaves)
                 if not (fast and classes[k] == ZERO)]
        dtypes, steady = [], []   # per step: its dtype; whether it is one value over the whole call

        def whole_call_constant(kind, k):
            return kind == "const" or kind == "leaf" and all(d is None for d in program.leaves[k][1]) \
                or kind == "step" and steady[k]
        for j, (node, refs) in enumerate(program.steps):
            args = []
            for i, (kind, k) in enumerate(refs):
                src = {"leaf": leaves, "const": consts, "step": dtypes}[kind][k]
                name = {"leaf": "a", "const": "c", "step": "v"}[kind] + str(k)
                want = node.loop[i]
                if np.dtype(src) != np.dtype(want):
                    (_, cs), (rw, cw) = typename(src), typename(want)
                    name = f"convert({cs}, {cw}, {name}, {rw})"
                args.append(name)
            natural = np.dtype(node.op.resolve(node.loop)[1])
            rn = typename(natural)[0]
            _, c = typename(node.loop[0] if node.op.kind != "ternary" else node.loop[1])
            op, kind = node.op, node.op.kind
            if op.name == "cast":
                expr = args[0]
                natural = np.dtype(node.loop[0])
            elif kind == "unary":
                expr = f"{rn}({function(S.UNARY, op.name, 'U')}({c}, {args[0]}))"
            elif kind == "binary":
                # NumPy's loop where the second operand is one value over the whole call (power's fast path)
                f = function(S.SCALAR_SECOND_CONSTANT, op.name, "Y") if whole_call_constant(*refs[1]) and \
                    op.name in S.SCALAR_SECOND_CONSTANT else function(S.SCALAR, op.name, "B")
                expr = f"{rn}({f}({c}, {args[0]}, {args[1]}))"
            elif kind == "ternary":  # where: the condition converted to bool (raw 0/1)
                expr = f"{args[1]} if {args[0]} != 0 else {args[2]}"
            elif kind == "variadic":  # a left fold, one statement per input (no nesting limit)
                step, finish = S.VARIADIC[op.name]
                names[f"V_{op.name}"], names[f"F_{op.name}"] = step, finish
                acc = args[0]
                for i, a in enumerate(args[1:]):
                    lines.append(f"w{j}_{i} = {rn}(V_{op.name}({c}, {acc}, {a}))")
                    acc = f"w{j}_{i}"
                expr = f"{rn}(F_{op.name}({c}, {acc}, {len(args)}))"
            elif kind == "parametric":  # an activation's x and two parameters
                f = function(S.PARAMETRIC, op.name, "P")
                expr = f"{rn}({f}({c}, {args[0]}, {args[1]}, {args[2]}))"
            elif kind == "quaternary":  # axpby: alpha * x + beta * y, each product rounded
                mul, add = function(S.SCALAR, "multiply", "B"), function(S.SCALAR, "add", "B")
                expr = (f"{rn}({add}({c}, {rn}({mul}({c}, {args[0]}, {args[1]})), "
                        f"{rn}({mul}({c}, {args[2]}, {args[3]}))))")
            else:  # move: the value itself
                expr = args[0]
            if natural != node.dtype:  # the call's dtype= cast the op's result
                (_, cn), (rd, cd) = typename(natural), typename(node.dtype)
                expr = f"convert({cn}, {cd}, {expr}, {rd})"
            lines.append(f"v{j} = {expr}")
            dtypes.append(node.dtype)
            steady.append(all(whole_call_constant(*r) for r in refs))
        kind, k = program.result
        value, src = (f"v{k}", dtypes[k]) if kind == "step" else (f"a{k}", leaves[k])  # never a constant
        ro, co = typename(out_dtype)
        if np.dtype(src) != np.dtype(out_dtype):
            value = f"convert({typename(src)[1]}, {co}, {value}, {ro})"
        lines.append(f"store(po, {indexed(L)}, {value}, {ro})")
        return lines

    head = ["def row(ptrs, offs, strides, nops, n, m, scratch):"]
    for k in range(L + 1):
        p = "po" if k == L else f"p{k}"
        head.append(f"    {p} = load(ptrs, {k}, I64)")
        head.append(f"    s{k} = load(strides, {k}, I64)")
        head.append(f"    r{k} = load(strides, nops + {k}, I64)")
    for k, dt in enumerate(consts):  # one 16-byte slot each
        head.append(f"    c{k} = load(p{len(leaves)}, {16 * k // np.dtype(raw(dt)[0]).itemsize}, "
                    f"{typename(dt)[0]})")
    head.append("    for i in range(m):")
    for k in range(L + 1):
        head.append(f"        o{k} = load(offs, {k}, I64) + i * r{k}")
    fast = " and ".join(f"s{k} == {1 if c == UNIT else 0}" for k, c in enumerate(classes) if c != STRIDED) or "True"
    head.append(f"        if {fast}:")
    for k, dt in enumerate(leaves):   # leaves one value along the row: loaded once per row
        if classes[k] == ZERO:
            head.append(f"            a{k} = load(p{k}, o{k}, {typename(dt)[0]})")
    head.append("            for k in range(n):")
    head += [f"                {line}" for line in body(True)]
    head.append("        else:")
    head.append("            for k in range(n):")
    head += [f"                {line}" for line in body(False)]
    return "\n".join(head) + "\n", names


def row_function(program, out_dtype, classes: str, raw):
    """The compiled row function of ``program`` storing ``out_dtype``, its fast loop specialised on
    ``classes`` (see ``pattern``): one per source text in this process (the ``MAX_ROWS`` most recently
    used), kept in gpubcast's cache under the hash of its source."""
    text, names = source(program, out_dtype, classes, raw)
    digest = hashlib.sha256(text.encode()).hexdigest()[:24]
    with _LOCK:
        fn = _ROWS.get(digest)
        if fn is not None:
            _ROWS.move_to_end(digest)
            return fn
    fn = _compile(text, names, digest)
    with _LOCK:
        _ROWS[digest] = fn
        while len(_ROWS) > MAX_ROWS:
            _ROWS.popitem(last=False)
    return fn


def _compile(text: str, names: dict, digest: str):
    identity = f"fused_row-{digest}"
    scope = dict(names, __name__=__name__)   # a module name: Numba rebuilds a cached entry's environment from it
    exec(compile(text, f"<gpubcast fused {digest}>", "exec"), scope)  # the text generated above
    fn = scope["row"]
    fn.__name__ = fn.__qualname__ = identity.replace("-", "_")
    return cfunc(ROW_SIGNATURE, fn, identity, **JIT)
