"""Row functions generated from a fused program (``gpubcast.fusion.Program``): a whole chain of ops
in one pass over the output.

The generated function has the row contract of ``memory`` (``row(ptrs, offs, strides, nops,
n, m, scratch)``; operands: the program's leaves, then the output) and runs under the drivers
(``drivers.drive_n``: any number of operands; slabs, threads, staging, non-temporal stores as for the
built-in ops).  Per element it loads every leaf, computes each step with the registry op's scalar
function (``scalars``: ``UNARY``, ``SCALAR``, ``VARIADIC``; NumPy's values in each step's loop
dtype), converts between steps of different dtypes as ``dispatch`` converts inputs
(``codecs.convert``), and stores the result.

The walk over the program's steps is ``gpubcast.fused_code``'s (written once for this backend and
the CUDA one); this module spells it in Python (``_Spelling``) and wraps it in the row's loops.
Each step's value is truncated to its raw type (``R(...)``): the scalar functions may compute in a
wider type (Numba widens small integers), and the unfused chain stores every intermediate.

Two loops per row: one specialised on the pattern of inner strides the plan was compiled for
(unit-stride leaves indexed by ``k``, stride-0 leaves loaded once per row: LLVM vectorises it),
taken when the strides the driver passes match it, and a general strided loop.  Short rows of a
slab stored row after row, each leaf either stored the same way or one row for all (a bias, a
per-channel scale: tiled in scratch), are one flat run over the slab instead, as in
``rows.binary_short_row`` (generated for plans of short rows only: ``rows.short_rows``).
"""

from __future__ import annotations

import hashlib
import threading
from collections import OrderedDict

import numpy as np

from ... import fused_code
from . import scalars as S
from .cache import JIT, cfunc
from .codecs import convert
from .memory import ROW_SIGNATURE, load, store, vector_width
from .meta import H_ND, H_NOPS, H_TRANSPOSED, HEADER
from .rows import TILE_SLOT, TILE_SLOTS, TILED_RUN, short_rows, tile_row, vector_bits

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


class _Spelling(fused_code.Spelling):
    """Python for Numba: each value truncated to its raw type (``R_<dtype>(...)``), the registry
    op's scalar functions of ``scalars`` called with the loop dtype's codec (``C_<dtype>``); every
    name the text uses is added to ``names`` (the globals it runs with)."""

    def __init__(self, names: dict, raw):
        self.names, self.raw = names, raw

    def typename(self, dt) -> tuple[str, str]:
        """The names of ``dt``'s raw type and codec."""
        key = str(np.dtype(dt)).replace("[", "_").replace("]", "")
        self.names[f"R_{key}"], self.names[f"C_{key}"] = self.raw(np.dtype(dt))
        return f"R_{key}", f"C_{key}"

    def function(self, table, op_name, prefix) -> str:
        name = f"{prefix}_{op_name}"
        self.names[name] = table[op_name]
        return name

    def _call(self, node, natural, f, *args) -> str:
        """``f(codec of the loop dtype, *args)`` truncated to the raw type of ``natural``."""
        return f"{self.typename(natural)[0]}({f}({self.typename(node.loop[0])[1]}, {', '.join(args)}))"

    def value(self, kind, k):
        return {"leaf": "a", "const": "c", "step": "v"}[kind] + str(k)

    def convert(self, expr, src, want):
        (_, cs), (rw, cw) = self.typename(src), self.typename(want)
        return f"convert({cs}, {cw}, {expr}, {rw})"

    def bind(self, name, dtype, expr):
        return f"{name} = {expr}"

    def unary(self, node, natural, x):
        return self._call(node, natural, self.function(S.UNARY, node.op.name, "U"), x)

    def binary(self, node, natural, x, y, second_constant):
        # NumPy's loop where the second operand is one value over the whole call (power's fast path)
        if second_constant and node.op.name in S.SCALAR_SECOND_CONSTANT:
            f = self.function(S.SCALAR_SECOND_CONSTANT, node.op.name, "Y")
        else:
            f = self.function(S.SCALAR, node.op.name, "B")
        return self._call(node, natural, f, x, y)

    def where(self, node, natural, condition, x, y):    # the condition converted to bool (raw 0/1)
        return f"{x} if {condition} != 0 else {y}"

    def fold(self, node, natural, acc, x):
        self.names[f"V_{node.op.name}"], self.names[f"F_{node.op.name}"] = S.VARIADIC[node.op.name]
        return self._call(node, natural, f"V_{node.op.name}", acc, x)

    def finish(self, node, natural, acc, count):
        self.names[f"V_{node.op.name}"], self.names[f"F_{node.op.name}"] = S.VARIADIC[node.op.name]
        return self._call(node, natural, f"F_{node.op.name}", acc, str(count))

    def parametric(self, node, natural, x, alpha, beta):
        return self._call(node, natural, self.function(S.PARAMETRIC, node.op.name, "P"), x, alpha, beta)

    def axpby(self, node, natural, a, x, b, y):          # each product rounded
        mul, add = self.function(S.SCALAR, "multiply", "B"), self.function(S.SCALAR, "add", "B")
        products = self._call(node, natural, mul, a, x), self._call(node, natural, mul, b, y)
        return self._call(node, natural, add, *products)


def source(program, out_dtype, classes: str, raw, short: bool = False, light: bool = False) -> tuple[str, dict]:
    """The row function's Python source and the globals it names. ``raw(dtype) -> (raw type, codec)``;
    ``short``: with the flat run over short rows (``_short_rows``), for plans whose rows are short;
    ``light``: its loops ``rows.LIGHT_BITS`` wide (a program of light ops)."""
    names: dict = {"load": load, "store": store, "I64": np.int64, "convert": convert, "tile_row": tile_row,
                   "short_rows": short_rows, "vector_width": vector_width}
    spelling = _Spelling(names, raw)
    typename = spelling.typename
    leaves = [leaf.dtype for leaf, _ in program.leaves]
    consts = [c.dtype for c in program.constants]
    L = len(leaves) + bool(consts)   # the operands before the output: leaves, the constant block

    def body(fast: bool) -> list[str]:
        """Lines computing and storing element k of a row: in the loop specialised on ``classes``
        (stride-0 leaves loaded before it), or in the general one."""
        def indexed(k):
            cls = classes[k] if fast else STRIDED
            return f"o{k} + k" if cls == UNIT else f"o{k}" if cls == ZERO else f"o{k} + k * s{k}"
        lines = [f"a{k} = load(p{k}, {indexed(k)}, {typename(dt)[0]})" for k, dt in enumerate(leaves)
                 if not (fast and classes[k] == ZERO)]
        steps, value = fused_code.statements(program, out_dtype, spelling)
        return lines + steps + [f"store(po, {indexed(L)}, {value}, {typename(out_dtype)[0]})"]

    head = ["def row(ptrs, offs, strides, nops, n, m, scratch):", f"    vector_width({vector_bits(light)})"]
    for k in range(L + 1):
        p = "po" if k == L else f"p{k}"
        head.append(f"    {p} = load(ptrs, {k}, I64)")
        head.append(f"    s{k} = load(strides, {k}, I64)")
        head.append(f"    r{k} = load(strides, nops + {k}, I64)")
    for k, dt in enumerate(consts):  # one 16-byte slot each
        head.append(f"    c{k} = load(p{len(leaves)}, {16 * k // np.dtype(raw(dt)[0]).itemsize}, "
                    f"{typename(dt)[0]})")
    head += _short_rows(program, out_dtype, classes, spelling, L) if short else []
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


def _short_rows(program, out_dtype, classes: str, spelling, L) -> list[str]:
    """The row's lines for short rows of a slab stored row after row (the output's rows following each
    other): one flat run over the slab, each unit-stride leaf either stored the same way (indexed
    along the run) or one row for all (tiled in its scratch slot, a whole number of rows), stride-0
    leaves one value for the slab; none (no lines) where a leaf is strided or there are more
    unit-stride leaves than slots."""
    typename = spelling.typename
    leaves = [leaf.dtype for leaf, _ in program.leaves]
    unit = [k for k in range(len(leaves)) if classes[k] == UNIT]
    if STRIDED in classes or classes[L] != UNIT or len(unit) > TILE_SLOTS:
        return []
    rows_ok = [f"(r{k} == n or r{k} == 0)" if k in unit else f"r{k} == 0" for k in range(len(leaves))]
    fast = " and ".join(f"s{k} == {1 if c == UNIT else 0}" for k, c in enumerate(classes))
    lines = ["    total = n * m",
             f"    if short_rows(n, m) and {fast} and " + " and ".join(rows_ok + [f"r{L} == n"]) + ":",
             f"        run = n * ({TILED_RUN} // n)"]
    for slot, k in enumerate(unit):
        t = typename(leaves[k])[0]
        lines += [f"        if r{k} == 0:",
                  f"            q{k}, e{k}, d{k} = scratch + {slot * TILE_SLOT}, 0, 0",
                  f"            tile_row(q{k}, p{k}, load(offs, {k}, I64), n, run, {t})",
                  "        else:",
                  f"            q{k}, e{k}, d{k} = p{k}, load(offs, {k}, I64), run"]
    for k, dt in enumerate(leaves):
        if classes[k] == ZERO:
            lines.append(f"        a{k} = load(p{k}, load(offs, {k}, I64), {typename(dt)[0]})")
    lines += [f"        eo = load(offs, {L}, I64)",
              "        for t0 in range(0, total, run):",
              "            for k in range(min(run, total - t0)):"]
    lines += [f"                a{k} = load(q{k}, e{k} + k, {typename(leaves[k])[0]})" for k in unit]
    steps, value = fused_code.statements(program, out_dtype, spelling)
    lines += [f"                {line}" for line in steps]
    lines.append(f"                store(po, eo + t0 + k, {value}, {typename(out_dtype)[0]})")
    lines += [f"            e{k} += d{k}" for k in unit]
    lines.append("        return")
    return lines


def row_function(program, out_dtype, classes: str, raw, short: bool = False, light: bool = False):
    """The compiled row function of ``program`` storing ``out_dtype``, its fast loop specialised on
    ``classes`` (see ``pattern``), with the flat run over short rows where ``short``: one per source
    text in this process (the ``MAX_ROWS`` most recently used), kept in gpubcast's cache under the
    hash of its source."""
    text, names = source(program, out_dtype, classes, raw, short, light)
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
