"""Raw memory access for compiled code, and how a row function is called.

Loads and stores go through raw addresses (``load``, ``store``), without bounds or negative-index
checks; ``stack_i64`` gives int64 slots on the calling function's stack; ``vector_width`` sets how
wide its loops vectorise; ``nt_copy`` writes whole cache lines with non-temporal stores
(``store_fence`` orders them); ``call_row`` and ``call_driver`` call compiled code by its address.

Row function contract: ``row(ptrs, offs, strides, nops, n, m, scratch)`` (``ROW_SIGNATURE``), all
int64; ``ptrs`` and ``offs`` are addresses of int64 arrays holding, per operand (inputs, then the
output), its data address and the element offset of the slab's first element; ``strides`` holds
``2 * nops`` element strides: along the row (inner dim) for every operand, then from one row to the
next; ``scratch`` is the address of ``ACC * 16`` bytes (64-byte aligned).
"""

from __future__ import annotations

import platform

import numpy as np
from llvmlite import ir
from numba import types
from numba.extending import intrinsic

from .cache import register_jitable

#: elements per accumulator segment of the variadic rows; SCRATCH bytes hold ACC of any raw type
ACC = 1024
#: bytes of a staged tile of a transposed input
TILE_BYTES = ACC * 16
#: a row function's scratch, an output block (+ room to place it at its destination's offset in a
#: cache line), a staged tile
SCRATCH = 2 * (ACC * 16 + 64) + TILE_BYTES
SCRATCH_SLOTS = SCRATCH // 8

#: every row function's C signature (the contract above)
ROW_SIGNATURE = types.void(*(types.int64,) * 7)


@intrinsic
def load(typingctx, addr, idx, cls):
    """The element ``idx`` of type ``cls`` at address ``addr`` (no checks)."""
    ty = cls.instance_type

    def codegen(context, builder, sig, args):
        lty = context.get_data_type(ty)
        ptr = builder.inttoptr(args[0], lty.as_pointer())
        val = builder.load(builder.gep(ptr, [args[1]]))
        return context.data_model_manager[ty].from_data(builder, val)
    return ty(addr, idx, cls), codegen


@intrinsic
def store(typingctx, addr, idx, val, cls):
    """Store ``val`` (cast to ``cls``) as element ``idx`` at address ``addr`` (no checks)."""
    ty = cls.instance_type

    def codegen(context, builder, sig, args):
        v = context.cast(builder, args[2], sig.args[2], ty)
        lty = context.get_data_type(ty)
        ptr = builder.inttoptr(args[0], lty.as_pointer())
        builder.store(context.data_model_manager[ty].as_data(builder, v), builder.gep(ptr, [args[1]]))
        return context.get_dummy_value()
    return types.void(addr, idx, val, cls), codegen


@intrinsic
def vector_width(typingctx, bits):
    """Ask LLVM to vectorise the calling function's loops ``bits`` wide (a constant; 0: its default),
    by the function's ``prefer-vector-width`` attribute: the width clang's ``-mprefer-vector-width``
    sets, read by LLVM's x86 backend per function."""
    if not isinstance(bits, types.IntegerLiteral):
        return None

    def codegen(context, builder, sig, args):
        if bits.literal_value:   # a string attribute: llvmlite's add() knows the enum attributes only
            set.add(builder.function.attributes, f'"prefer-vector-width"="{bits.literal_value}"')
        return context.get_dummy_value()
    return types.void(bits), codegen


#: elements ``store_splat`` writes
SPLAT = 16


@intrinsic
def store_splat(typingctx, addr, idx, val, cls):
    """Store SPLAT copies of ``val`` (cast to ``cls``, a scalar raw type) as elements ``idx`` on at
    address ``addr``: one vector store (no checks, no alignment assumed)."""
    ty = cls.instance_type

    def codegen(context, builder, sig, args):
        v = context.cast(builder, args[2], sig.args[2], ty)
        lty = context.get_data_type(ty)
        vty, undef = ir.VectorType(lty, SPLAT), ir.Constant(ir.VectorType(lty, SPLAT), ir.Undefined)
        one = builder.insert_element(undef, context.data_model_manager[ty].as_data(builder, v),
                                     ir.Constant(ir.IntType(32), 0))
        zeros = ir.Constant(ir.VectorType(ir.IntType(32), SPLAT), [0] * SPLAT)
        splat = builder.shuffle_vector(one, undef, zeros)       # element 0 everywhere
        ptr = builder.gep(builder.inttoptr(args[0], lty.as_pointer()), [args[1]])
        builder.store(splat, builder.bitcast(ptr, vty.as_pointer()), align=1)
        return context.get_dummy_value()
    return types.void(addr, idx, val, cls), codegen


@intrinsic
def _call_void7(typingctx, fn, a0, a1, a2, a3, a4, a5, a6):
    """Call the C function ``void(int64 x 7)`` at address ``fn``."""
    sig = types.void(fn, a0, a1, a2, a3, a4, a5, a6)

    def codegen(context, builder, signature, args):
        i64 = ir.IntType(64)
        fnty = ir.FunctionType(ir.VoidType(), [i64] * 7)
        builder.call(builder.inttoptr(args[0], fnty.as_pointer()), args[1:])
        return context.get_dummy_value()
    return sig, codegen


#: ``call_row(fn, ptrs, offs, strides, nops, n, m, scratch)``: the row function at address ``fn``
call_row = _call_void7
#: ``call_chunk(fn, row, c, nchunks, pp, meta, work, scratch)``: the chunk runner at ``fn``
#: (``drivers.chunk_address``)
call_chunk = _call_void7


I64 = np.int64
U8, U16, U32, U64 = np.uint8, np.uint16, np.uint32, np.uint64


def _nt_store32(src_align):
    def impl(typingctx, dst, src):
        def codegen(context, builder, sig, args):
            vt = ir.VectorType(ir.IntType(32), 8)
            v = builder.load(builder.inttoptr(args[1], vt.as_pointer()), align=src_align)
            st = builder.store(v, builder.inttoptr(args[0], vt.as_pointer()), align=32)
            st.set_metadata("nontemporal", builder.module.add_metadata([ir.Constant(ir.IntType(32), 1)]))
            return context.get_dummy_value()
        return types.void(dst, src), codegen
    return intrinsic(impl)


#: copy 32 bytes from ``src`` to ``dst`` (32-byte aligned) with a non-temporal store; ``src``
#: 32-byte aligned too / of any alignment
nt_store32, nt_store32_unaligned = _nt_store32(32), _nt_store32(1)


_X86 = platform.machine().lower() in ("x86_64", "amd64")


@intrinsic
def store_fence(typingctx):
    """Order earlier non-temporal stores before later stores (x86 ``sfence``; a sequentially
    consistent fence elsewhere)."""
    def codegen(context, builder, sig, args):
        if _X86:
            builder.call(builder.module.declare_intrinsic(
                "llvm.x86.sse.sfence", fnty=ir.FunctionType(ir.VoidType(), [])), [])
        else:
            builder.fence("seq_cst")
        return context.get_dummy_value()
    return types.void(), codegen


@register_jitable
def _copy_small(dst, src, nbytes):
    """Copy fewer than 64 bytes with plain stores, in the widest units the alignment allows."""
    i = 0
    while i < nbytes:
        a = dst + i
        if a % 8 == 0 and (src + i) % 8 == 0 and i + 8 <= nbytes:
            store(a, 0, load(src + i, 0, U64), U64)
            i += 8
        elif a % 4 == 0 and (src + i) % 4 == 0 and i + 4 <= nbytes:
            store(a, 0, load(src + i, 0, U32), U32)
            i += 4
        else:
            store(a, 0, load(src + i, 0, U8), U8)
            i += 1


@register_jitable
def nt_first(dst, osz):
    """Elements of a first block that ends on a 64-byte line of the output at ``dst`` (item size
    ``osz``), so that the later blocks of ``ACC`` elements start on line boundaries."""
    lead = ((64 - dst % 64) % 64 + osz - 1) // osz
    per_line = max(1, 64 // osz)
    return lead + max(0, (ACC - lead) // per_line) * per_line


@register_jitable
def nt_copy(dst, src, nbytes):
    """Copy ``nbytes`` from ``src`` to ``dst``, streaming the whole 64-byte cache lines past the
    caches (non-temporal stores) and the partial lines at the ends with plain stores, so that no
    line is written both ways (fastest with ``src`` at ``dst``'s offset in a 32-byte block).  The
    caller issues ``store_fence`` before the data is read by others (the drivers do, per chunk)."""
    head = min(nbytes, (64 - dst % 64) % 64)
    _copy_small(dst, src, head)
    i = head
    if (src - dst) % 32 == 0:
        while i + 64 <= nbytes:
            nt_store32(dst + i, src + i)
            nt_store32(dst + i + 32, src + i + 32)
            i += 64
    else:
        while i + 64 <= nbytes:
            nt_store32_unaligned(dst + i, src + i)
            nt_store32_unaligned(dst + i + 32, src + i + 32)
            i += 64
    _copy_small(dst + i, src + i, nbytes - i)


@intrinsic
def stack_i64(typingctx, n):
    """Address of ``n`` (a constant) int64 slots on the calling function's stack."""
    if not isinstance(n, types.IntegerLiteral):
        return None
    count = n.literal_value

    def codegen(context, builder, sig, args):
        i64 = ir.IntType(64)
        with builder.goto_entry_block():
            slot = builder.alloca(ir.ArrayType(i64, count))
            slot.align = 64
        return builder.ptrtoint(slot, i64)
    return types.int64(n), codegen


@intrinsic
def call_driver(typingctx, fn, row, p0, p1, p2, p3, meta):
    """Call the serial driver at address ``fn`` (see ``driver_address``)."""
    sig = types.int64(fn, row, p0, p1, p2, p3, meta)

    def codegen(context, builder, signature, args):
        i64 = ir.IntType(64)
        fnty = ir.FunctionType(i64, [i64] * 6)
        return builder.call(builder.inttoptr(args[0], fnty.as_pointer()), args[1:])
    return sig, codegen
