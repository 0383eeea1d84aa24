"""Row functions: one small compiled function per (op, raw types), made by one factory per op kind.

A *row function* is a C-callable (``numba.cfunc``) that computes one slab of the output: ``m``
rows of ``n`` elements along the two innermost dims (its contract: ``memory``).  It is generated
from an op's scalar function (``scalars``) by one factory per op kind: ``unary_row``, ``binary_row``
(two inputs; ``binary_short_row`` for plans of short rows), ``where_row`` (condition + two values),
``variadic_row`` (N inputs folded into an accumulator, one pass over the output), ``axpby_row``,
``parametric_row`` (an activation's x and two parameters); data movement is ``unary_row`` of
``scalars.move``, by element size.  Row functions have specialised loops for unit-stride and
broadcast (stride 0) operands, which LLVM vectorises, and a strided loop.
"""

from __future__ import annotations

import numpy as np

from .cache import JIT, cfunc, register_jitable
from .memory import ACC, I64, ROW_SIGNATURE, SPLAT, load, stack_i64, store, store_splat, vector_width


#: vector width (bits) of the loops of *light* rows (``backend.light``: ops of a few instructions an
#: element, whose loops stream memory).  On AMD Zen 4, 256-bit loops stream faster than the 512-bit ones
#: LLVM picks there (4 M elements, one core, into out=, medians of 4 alternated runs: float32 (N,) + (N,)
#: 0.383 -> 0.344 ns an element, (2048, 2048) + (2048,) 0.257 -> 0.236, int32 add 0.447 -> 0.360, maximum
#: 0.469 -> 0.385), while heavy math runs 30-50 % slower at 256 bits (tanh 0.39 -> 0.54).  LLVM's own
#: width on Intel's AVX-512 cores is 256 bits already
LIGHT_BITS = 256


def vector_bits(light: bool) -> int:
    """``vector_width``'s argument for a row: LIGHT_BITS for a light op's, else 0 (LLVM's default)."""
    return LIGHT_BITS if light else 0


def _light(light: bool) -> tuple:
    """What a light row adds to ``_compile``'s ``made_from`` (its identity)."""
    return ("light",) if light else ()


def _compile(fn, factory, *made_from):
    """Compile row function ``fn`` made by ``factory`` from ``made_from`` (its cache identity, and
    its symbol's name: no two row functions share either)."""
    parts = [getattr(x, "__name__", None) or getattr(x, "name", None) or str(x) for x in made_from]
    identity = "-".join([factory, *parts])
    fn.__name__ = fn.__qualname__ = identity.replace("-", "_")
    return cfunc(ROW_SIGNATURE, fn, identity, **JIT)


#: rows shorter than this, in a slab whose rows follow each other and with the other operand the same
#: row for each, are computed as one run over the slab (``binary_short_row``): a loop of a few elements a row
#: does not vectorise (a (N, 3) + (3,) add cost 1.6 ns an element, 0.12 for 1024-element rows)
SHORT_ROW = 128
#: elements of that run's tiled row: a whole number of rows, at most this many
TILED_RUN = 256
#: rows shorter than this against one value a row of the other operand (a per-row max, a per-channel
#: bias of an NCHW map of few pixels) are one run over the slab with those values spread into scratch
#: (``spread_rows``); from it, the row loop vectorises as well (float32 (N, 49) + (N, 1): 0.18 ns an
#: element either way; (N, 7): 0.72 against 0.24, (N, 16): 0.32 against 0.16)
SPREAD_ROW = 32
#: bytes of scratch a tiled row takes (any raw type), and how many fit the row's own scratch (``memory``)
TILE_SLOT = TILED_RUN * 16
TILE_SLOTS = ACC * 16 // TILE_SLOT


@register_jitable
def short_rows(n, m):
    """Whether a slab of ``m`` rows of ``n`` elements is one flat run (where its layout allows): asked
    by the rows of each slab, and once per walk by ``meta.iteration_meta`` (its ``SHORT_ROWS`` flag:
    the backend's choice of ``binary_short_row`` and of fused rows with that run)."""
    return n < SHORT_ROW and n * m >= 2 * TILED_RUN


@register_jitable
def tile_row(dst, src, off, n, run, T):
    """Elements [0, run) of ``dst`` (raw type ``T``): the row src[off:off + n] over and over (``run`` a
    multiple of n), by doubling the filled part: a few copies long enough to vectorise."""
    for j in range(n):
        store(dst, j, load(src, off + j, T), T)
    filled = n
    while filled < run:
        c = min(filled, run - filled)
        for j in range(c):
            store(dst, filled + j, load(dst, j, T), T)
        filled += c


@register_jitable
def spread_rows(dst, src, off, stride, n, rows, T):
    """Elements [0, rows * n) of ``dst`` (raw type ``T``): row r is n copies of src[off + r * stride],
    written SPLAT at a time (a vector store of one value), the next row over the spill (``dst`` has
    room for SPLAT more)."""
    for r in range(rows):
        v = load(src, off + r * stride, T)
        for c in range(0, n, SPLAT):
            store_splat(dst, r * n + c, v, T)


#: how an operand of a slab of short rows is read in one run over the slab (``_run_kind``)
FULL, TILED, SPREAD = 1, 2, 3


@register_jitable
def _run_kind(s, r, n, spread):
    """FULL: stored like the output (unit inner stride, rows n apart); TILED: one row for all (unit
    inner stride, row stride 0); SPREAD: one value a row, rows under SPREAD_ROW (and ``spread``: a
    scalar raw type); 0: none of these."""
    if s == 1:
        return FULL if r == n else TILED if r == 0 else 0
    return SPREAD if s == 0 and n < SPREAD_ROW and spread else 0


def _binary_body(F, FY, C, TA, TB, TO, BITS):
    """The Python function of ``binary_row`` (``binary_short_row`` calls it too, uncompiled)."""
    def row(ptrs, offs, strides, nops, n, m, scratch):
        vector_width(BITS)
        pa, pb, po = load(ptrs, 0, I64), load(ptrs, 1, I64), load(ptrs, 2, I64)
        sa, sb, so = load(strides, 0, I64), load(strides, 1, I64), load(strides, 2, I64)
        ra, rb, ro = load(strides, 3, I64), load(strides, 4, I64), load(strides, 5, I64)
        for i in range(m):
            oa, ob, oo = load(offs, 0, I64) + i * ra, load(offs, 1, I64) + i * rb, load(offs, 2, I64) + i * ro
            if sb == 0:
                y = load(pb, ob, TB)
                if sa == 1 and so == 1:
                    for k in range(n):
                        store(po, oo + k, FY(C, load(pa, oa + k, TA), y), TO)
                else:
                    for k in range(n):
                        store(po, oo + k * so, FY(C, load(pa, oa + k * sa, TA), y), TO)
            elif sa == 1 and sb == 1 and so == 1:
                for k in range(n):
                    store(po, oo + k, F(C, load(pa, oa + k, TA), load(pb, ob + k, TB)), TO)
            elif sa == 0 and sb == 1 and so == 1:
                x = load(pa, oa, TA)
                for k in range(n):
                    store(po, oo + k, F(C, x, load(pb, ob + k, TB)), TO)
            else:
                for k in range(n):
                    store(po, oo + k * so, F(C, load(pa, oa + k * sa, TA), load(pb, ob + k * sb, TB)), TO)
    return row


def binary_row(F, FY, C, TA, TB, TO, light=False):
    """Row function of scalar function ``F`` (``FY`` where the second operand is one value along
    the row; ``backend.make_spec`` passes ``F`` unless it is one value over the whole call) under
    codec ``C``: raw input types ``TA``, ``TB``, raw output type ``TO``; ``light``: its loops
    LIGHT_BITS wide."""
    return _compile(_binary_body(F, FY, C, TA, TB, TO, vector_bits(light)), "binary_row", F, FY, C, TA, TB, TO,
                    *_light(light))


def binary_short_row(F, FY, C, TA, TB, TO, light=False):
    """``binary_row`` for plans whose rows are short (``short_rows``; the backend picks it by the plan,
    so that other plans do not compile the run): a slab stored row after row, against one row of the
    other operand (a bias, a per-channel scale), is one flat run over the slab with that row tiled
    in ``scratch``; rows under ``SPREAD_ROW`` against one value a row, with those values spread into
    ``scratch``.  Each run is one row of ``binary_row``'s function (its operands redirected in stack
    slots); any other slab goes to that function whole."""
    BITS = vector_bits(light)
    plain = register_jitable(forceinline=True)(_binary_body(F, FY, C, TA, TB, TO, BITS))
    SPREAD_A, SPREAD_B = np.dtype(TA).kind != "c", np.dtype(TB).kind != "c"   # store_splat: scalar types

    def row(ptrs, offs, strides, nops, n, m, scratch):
        vector_width(BITS)
        sa, sb, so = load(strides, 0, I64), load(strides, 1, I64), load(strides, 2, I64)
        ra, rb, ro = load(strides, 3, I64), load(strides, 4, I64), load(strides, 5, I64)
        total = n * m
        ka = kb = 0
        if short_rows(n, m) and so == 1 and ro == n:
            ka, kb = _run_kind(sa, ra, n, SPREAD_A), _run_kind(sb, rb, n, SPREAD_B)
        if ka == 0 or kb == 0:
            plain(ptrs, offs, strides, nops, n, m, scratch)
            return
        pa, pb, po = load(ptrs, 0, I64), load(ptrs, 1, I64), load(ptrs, 2, I64)
        a0, b0, o0 = load(offs, 0, I64), load(offs, 1, I64), load(offs, 2, I64)
        run = n * (TILED_RUN // n)           # a whole number of rows
        vp, vo, vs = stack_i64(3), stack_i64(3), stack_i64(6)   # a run as one row: operands, offsets, strides
        store(vp, 0, pa if ka == FULL else scratch, I64)
        store(vp, 1, pb if kb == FULL else scratch + TILE_SLOT, I64)
        store(vp, 2, po, I64)
        for k in range(3):
            store(vs, k, 1, I64)
            store(vs, 3 + k, 0, I64)
        if ka == TILED:
            tile_row(scratch, pa, a0, n, run, TA)
        if kb == TILED:
            tile_row(scratch + TILE_SLOT, pb, b0, n, run, TB)
        for s in range(0, total, run):
            w = min(run, total - s)
            if SPREAD_A and ka == SPREAD:    # (a constant first: no store_splat of a complex type)
                spread_rows(scratch, pa, a0 + (s // n) * ra, ra, n, w // n, TA)
            if SPREAD_B and kb == SPREAD:
                spread_rows(scratch + TILE_SLOT, pb, b0 + (s // n) * rb, rb, n, w // n, TB)
            store(vo, 0, a0 + s if ka == FULL else 0, I64)
            store(vo, 1, b0 + s if kb == FULL else 0, I64)
            store(vo, 2, o0 + s, I64)
            plain(vp, vo, vs, nops, w, 1, scratch)
    return _compile(row, "binary_short_row", F, FY, C, TA, TB, TO, *_light(light))


def where_row(TC, TV):
    """Row function of ``where``: condition raw type ``TC`` (nonzero is true), values moved as raw
    type ``TV`` (an unsigned int or complex128 of the item size); light."""
    def row(ptrs, offs, strides, nops, n, m, scratch):
        vector_width(LIGHT_BITS)
        pc, px, py, po = load(ptrs, 0, I64), load(ptrs, 1, I64), load(ptrs, 2, I64), load(ptrs, 3, I64)
        sc, sx = load(strides, 0, I64), load(strides, 1, I64)
        sy, so = load(strides, 2, I64), load(strides, 3, I64)
        rc, rx = load(strides, 4, I64), load(strides, 5, I64)
        ry, ro = load(strides, 6, I64), load(strides, 7, I64)
        for i in range(m):
            oc, ox = load(offs, 0, I64) + i * rc, load(offs, 1, I64) + i * rx
            oy, oo = load(offs, 2, I64) + i * ry, load(offs, 3, I64) + i * ro
            if so == 1 and sc == 1 and sx == 1 and sy == 1:
                for k in range(n):
                    x, y = load(px, ox + k, TV), load(py, oy + k, TV)
                    store(po, oo + k, x if load(pc, oc + k, TC) != 0 else y, TV)
            elif so == 1 and sc == 1 and sx == 1 and sy == 0:
                y = load(py, oy, TV)
                for k in range(n):
                    x = load(px, ox + k, TV)
                    store(po, oo + k, x if load(pc, oc + k, TC) != 0 else y, TV)
            elif so == 1 and sc == 1 and sx == 0 and sy == 1:
                x = load(px, ox, TV)
                for k in range(n):
                    y = load(py, oy + k, TV)
                    store(po, oo + k, x if load(pc, oc + k, TC) != 0 else y, TV)
            elif so == 1 and sc == 1 and sx == 0 and sy == 0:
                x, y = load(px, ox, TV), load(py, oy, TV)
                for k in range(n):
                    store(po, oo + k, x if load(pc, oc + k, TC) != 0 else y, TV)
            else:
                for k in range(n):
                    x, y = load(px, ox + k * sx, TV), load(py, oy + k * sy, TV)
                    store(po, oo + k * so, x if load(pc, oc + k * sc, TC) != 0 else y, TV)
    return _compile(row, "where_row", TC, TV)


#: elements per block of a row that ``unary_row`` computes by ``V``, and again by ``F`` if one is large
VECTOR_BLOCK = 512


def unary_row(F, C, TA, TO, V=None, KEY=None, LARGE_KEY=0, heavy=False, light=False):
    """Row function of unary scalar function ``F`` under codec ``C``: raw input type ``TA``, raw
    output type ``TO``.  With ``V``, ``KEY`` and ``LARGE_KEY`` (``scalars.UNARY_VECTOR``), a contiguous
    row is computed by ``V`` (F's value where ``KEY`` is below ``LARGE_KEY``, in a loop that
    vectorises) a block at a time, and a block whose largest key reaches ``LARGE_KEY`` again by ``F``.
    ``heavy`` (a long body, ``scalars.HEAVY_UNARY``): the contiguous loop is a function of its own, not
    inlined into the row, so that its registers are its own: inlined, the row's other loops' values
    pushed its constants out of registers and cost tanh 20 % (0.50 vs 0.39-0.42 ns/element, measured
    with gb.tanh(x, out=o) on 256 K float32, one core).  ``light``: its loops LIGHT_BITS wide."""
    BITS = vector_bits(light)
    if V is None:
        def contiguous(px, ox, po, oo, n, scratch):
            vector_width(BITS)      # a function of its own until LLVM inlines it: vectorised before
            for k in range(n):
                store(po, oo + k, F(C, load(px, ox + k, TA)), TO)
    else:
        in_bytes, out_bytes = np.dtype(TA).itemsize, np.dtype(TO).itemsize
        assert VECTOR_BLOCK * out_bytes <= ACC * 16   # a block fits the row's own scratch (``memory``)

        def contiguous(px, ox, po, oo, n, scratch):
            vector_width(BITS)
            # out= is x itself (the one overlap dispatch lets reach a row: element for element): V's
            # values go to scratch first, so that F can still read a large block's input
            inplace = px + ox * in_bytes == po + oo * out_bytes
            for b in range(0, n, VECTOR_BLOCK):
                e = min(b + VECTOR_BLOCK, n)
                dst, at = (scratch, -b) if inplace else (po, oo)
                largest = np.int32(-2 ** 31)
                for k in range(b, e):  # one pass, the keys' max in int32 lanes (a check pass first cost 15 %)
                    x = load(px, ox + k, TA)
                    largest = max(largest, KEY(C, x))
                    store(dst, at + k, V(C, x), TO)
                if largest >= LARGE_KEY:
                    for k in range(b, e):
                        store(po, oo + k, F(C, load(px, ox + k, TA)), TO)
                elif inplace:
                    for k in range(b, e):
                        store(po, oo + k, load(scratch, k - b, TO), TO)
    contiguous = register_jitable(forceinline=not heavy)(contiguous)

    def row(ptrs, offs, strides, nops, n, m, scratch):
        vector_width(BITS)
        px, po = load(ptrs, 0, I64), load(ptrs, 1, I64)
        sx, so = load(strides, 0, I64), load(strides, 1, I64)
        rx, ro = load(strides, 2, I64), load(strides, 3, I64)
        for i in range(m):
            ox, oo = load(offs, 0, I64) + i * rx, load(offs, 1, I64) + i * ro
            if so == 1 and sx == 1:
                contiguous(px, ox, po, oo, n, scratch)
            elif sx == 0:  # one value along the row
                y = F(C, load(px, ox, TA))
                for k in range(n):
                    store(po, oo + k * so, y, TO)
            else:
                for k in range(n):
                    store(po, oo + k * so, F(C, load(px, ox + k * sx, TA)), TO)
    return _compile(row, "unary_row", F, C, TA, TO, *(() if V is None else (V, KEY, LARGE_KEY)),
                    *(("heavy",) if heavy else ()), *_light(light))


def variadic_row(STEP, FIN, C, T):
    """Row function folding N inputs of raw type ``T`` with ``STEP`` into an accumulator (in
    ``scratch``), ``FIN(acc, N)`` stored to the output: one pass over the output; light."""
    def row(ptrs, offs, strides, nops, n, m, scratch):
        vector_width(LIGHT_BITS)
        count = nops - 1
        p0, s0, r0 = load(ptrs, 0, I64), load(strides, 0, I64), load(strides, nops, I64)
        po, so, ro = load(ptrs, count, I64), load(strides, count, I64), load(strides, nops + count, I64)
        for i in range(m):
            for j in range(0, n, ACC):
                w = min(ACC, n - j)
                o0 = load(offs, 0, I64) + i * r0 + j * s0
                for k in range(w):
                    store(scratch, k, load(p0, o0 + k * s0, T), T)
                for a in range(1, count):
                    pa, sa = load(ptrs, a, I64), load(strides, a, I64)
                    oa = load(offs, a, I64) + i * load(strides, nops + a, I64) + j * sa
                    if sa == 1:
                        for k in range(w):
                            store(scratch, k, STEP(C, load(scratch, k, T), load(pa, oa + k, T)), T)
                    elif sa == 0:
                        v = load(pa, oa, T)
                        for k in range(w):
                            store(scratch, k, STEP(C, load(scratch, k, T), v), T)
                    else:
                        for k in range(w):
                            store(scratch, k, STEP(C, load(scratch, k, T), load(pa, oa + k * sa, T)), T)
                oo = load(offs, count, I64) + i * ro + j * so
                if so == 1:
                    for k in range(w):
                        store(po, oo + k, FIN(C, load(scratch, k, T), count), T)
                else:
                    for k in range(w):
                        store(po, oo + k * so, FIN(C, load(scratch, k, T), count), T)
    return _compile(row, "variadic_row", STEP, FIN, C, T)


def axpby_row(MUL, ADD, C, T):
    """Row function of ``axpby`` over inputs (alpha, x, beta, y): ``alpha * x + beta * y``, each
    product rounded in the raw type's codec (no FMA), like the registry's NumPy reference.
    Operands as in ``variadic_row``: 4 inputs, then the output (index 4); light."""
    def row(ptrs, offs, strides, nops, n, m, scratch):
        vector_width(LIGHT_BITS)
        pa, pb, pc, pd, po = (load(ptrs, 0, I64), load(ptrs, 1, I64), load(ptrs, 2, I64),
                              load(ptrs, 3, I64), load(ptrs, 4, I64))
        sa, sb, sc, sd, so = (load(strides, 0, I64), load(strides, 1, I64), load(strides, 2, I64),
                              load(strides, 3, I64), load(strides, 4, I64))
        ra, rb, rc, rd, ro = (load(strides, nops, I64), load(strides, nops + 1, I64),
                              load(strides, nops + 2, I64), load(strides, nops + 3, I64),
                              load(strides, nops + 4, I64))
        for i in range(m):
            oa = load(offs, 0, I64) + i * ra
            ob = load(offs, 1, I64) + i * rb
            oc = load(offs, 2, I64) + i * rc
            od = load(offs, 3, I64) + i * rd
            oo = load(offs, 4, I64) + i * ro
            for k in range(n):
                ax = MUL(C, load(pa, oa + k * sa, T), load(pb, ob + k * sb, T))
                by = MUL(C, load(pc, oc + k * sc, T), load(pd, od + k * sd, T))
                store(po, oo + k * so, ADD(C, ax, by), T)
    return _compile(row, "axpby_row", MUL, ADD, C, T)


def parametric_row(F, C, T, light=False):
    """Row function of a parametric op (x and two parameters, ``scalars.PARAMETRIC``) over raw type
    ``T``: ``F(C, x, p, q)``.  Operands as in ``variadic_row``: 3 inputs, then the output (index 3);
    the usual case, parameters one value along the row, loads them once per row; ``light``: its
    loops LIGHT_BITS wide."""
    BITS = vector_bits(light)

    def row(ptrs, offs, strides, nops, n, m, scratch):
        vector_width(BITS)
        px, pa, pb, po = load(ptrs, 0, I64), load(ptrs, 1, I64), load(ptrs, 2, I64), load(ptrs, 3, I64)
        sx, sa, sb, so = load(strides, 0, I64), load(strides, 1, I64), load(strides, 2, I64), load(strides, 3, I64)
        rx, ra = load(strides, nops, I64), load(strides, nops + 1, I64)
        rb, ro = load(strides, nops + 2, I64), load(strides, nops + 3, I64)
        for i in range(m):
            ox, oa = load(offs, 0, I64) + i * rx, load(offs, 1, I64) + i * ra
            ob, oo = load(offs, 2, I64) + i * rb, load(offs, 3, I64) + i * ro
            if sa == 0 and sb == 0 and sx == 1 and so == 1:
                a, b = load(pa, oa, T), load(pb, ob, T)
                for k in range(n):
                    store(po, oo + k, F(C, load(px, ox + k, T), a, b), T)
            else:
                for k in range(n):
                    store(po, oo + k * so, F(C, load(px, ox + k * sx, T), load(pa, oa + k * sa, T),
                                             load(pb, ob + k * sb, T)), T)
    return _compile(row, "parametric_row", F, C, T, *_light(light))
