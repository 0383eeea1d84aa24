"""From (op, plan, operands) to kernel launches: which kernel, its packed argument, the grid.

Shared by the CUDA backend (which launches through CuPy) and the host emulation harness
(which runs the same kernels on the CPU over NumPy memory), so both exercise the same
packing.  The packed argument is the C struct ``gb::Head<NIN>`` (contiguous kernels) or
``gb::General<NIN, index_t>`` (kernels/indexing.cuh), byte for byte:

    Head<NIN>:       u64 ptr[NIN+1]; u64 value[NIN+1][2]; u64 size; u32 classes, flags, nin, aux
    OffsetCalc<NARGS, index_t> (index_t = u32 | u64, W = its bytes):
                     i32 ndim; u32 pad; index_t dim[MAX_DIMS][3] (divisor, magic, shift);
                     signed index_t stride[MAX_DIMS][NARGS]   (innermost dim first)
    General<NIN, index_t> = Head<NIN> then OffsetCalc<NIN+1, index_t>, padded to 8 bytes.

Operand classes come from the planner (``plan.classes``): contiguous -> CONTIG (vector
loads), scalar -> VALUE when the value is on the host (a kernel argument) else SCALAR (one
device element), strided -> STRIDED (offsets from the coalesced strides).
"""

from __future__ import annotations

import functools
import itertools
import struct
from dataclasses import dataclass

import numpy as np

from ..plan import CONTIGUOUS, SCALAR as PLAN_SCALAR
from . import catalog

MAX_DIMS = 10          # kernels/indexing.cuh MAX_DIMS
BLOCK = 256            # kernels/indexing.cuh BLOCK
MAX_GRID = 2**31 - 1
CONTIG, VALUE, SCALAR, STRIDED = 0, 1, 2, 3
F_CONSECUTIVE, F_OFFSETS = 1, 2
NIN_OF_FAMILY = {"binary": 2, "ternary": 3, "variadic": catalog.MAX_VARIADIC, "copy": 1}


@dataclass(frozen=True)
class Operand:
    """One operand: device memory at ``ptr`` (element (0, ..., 0)), or a host ``value``."""
    dtype: np.dtype
    ptr: int = 0
    value: bytes | None = None      # VALUE class: the element's bytes in ``dtype``

    @classmethod
    def host_value(cls, x, dtype) -> "Operand":
        dt = np.dtype(dtype)
        return cls(dt, 0, np.asarray(x, dtype=dt).tobytes())


@dataclass(frozen=True)
class Launch:
    family: str
    name: str           # C++ name expression of the kernel
    params: bytes       # the kernel's one by-value argument
    grid: int
    ept: int


def magic(divisor: int, bits: int) -> tuple[int, int]:
    """(magic, shift) with n // divisor == (mulhi(n, magic) + n) >> shift for n < 2**(bits-1)."""
    if not 1 <= divisor < 2 ** (bits - 1) + 1:
        raise ValueError(f"divisor {divisor} out of range for {bits}-bit magic division")
    shift = (divisor - 1).bit_length()
    m = ((1 << bits) * ((1 << shift) - divisor)) // divisor + 1
    return m, shift


def head_size(nin: int) -> int:
    return 24 * (nin + 1) + 24


def general_size(nin: int, bits: int) -> int:
    w = bits // 8
    size = head_size(nin) + 8 + 3 * w * MAX_DIMS + w * MAX_DIMS * (nin + 1)
    return (size + 7) // 8 * 8


def pack_head(nin: int, ptrs, values, size: int, classes: int, flags: int, n_used: int, aux: int) -> bytes:
    words = list(ptrs) + [0] * (nin + 1 - len(ptrs))
    vals = b"".join((v or b"").ljust(16, b"\0") for v in values).ljust(16 * (nin + 1), b"\0")
    return (struct.pack(f"<{nin + 1}Q", *words) + vals
            + struct.pack("<Q4I", size, classes, flags, n_used, aux))


@functools.lru_cache(maxsize=4096)
def pack_calc(shape: tuple, strides: tuple, bits: int) -> bytes:
    """OffsetCalc bytes for coalesced ``shape`` and per-argument ``strides`` (output first)."""
    nargs = len(strides)
    dims = list(reversed(shape))
    cols = [list(reversed(s)) for s in strides]
    div = []
    for d in range(MAX_DIMS):
        n = dims[d] if d < len(dims) else 1
        m, sh = magic(n, bits)
        div += [n, m, sh]
    st = [cols[k][d] if d < len(dims) else 0 for d in range(MAX_DIMS) for k in range(nargs)]
    u, s = ("I", "i") if bits == 32 else ("Q", "q")
    return struct.pack(f"<iI{3 * MAX_DIMS}{u}{MAX_DIMS * nargs}{s}", len(dims), 0, *div, *st)


def plan_launches(op, p, inputs: list[Operand], out: Operand) -> list[Launch]:
    """The launches computing ``op`` over plan ``p`` (operands in plan order) into ``out``."""
    if p.size == 0:
        return []
    kern = catalog.kernels_for(op, tuple(x.dtype for x in inputs), out.dtype)
    family = kern.family
    nin = NIN_OF_FAMILY[family]
    classes = []
    for x, cls in zip(inputs, p.classes):
        if x.value is not None:
            classes.append(VALUE)
        elif cls == PLAN_SCALAR:
            classes.append(SCALAR)
        else:
            classes.append(CONTIG if cls == CONTIGUOUS else STRIDED)
    out_class = CONTIG if p.out_contiguous else STRIDED
    strides = [tuple(p.coalesced_out_strides)] + [tuple(s) for s in p.coalesced_strides]
    args = [out] + list(inputs)
    arg_classes = [out_class] + classes
    if family != "variadic":
        return _launches(kern, nin, args, arg_classes, strides, p, n_used=len(inputs), aux=0)
    # variadic: one pass per MAX_VARIADIC inputs, folding into out left to right
    launches, first, n = [], 1, len(inputs)
    aux_final = n if op.name == "mean" else 0
    while first <= n:
        if first == 1:
            take = list(range(1, min(n, nin) + 1))
        else:  # the partial result (out) is this pass's first input
            take = [0] + list(range(first, min(n, first + nin - 2) + 1))
        last = take[-1] == n
        sub_args = [args[0]] + [args[i] for i in take]
        sub_cls = [arg_classes[0]] + [arg_classes[i] for i in take]
        sub_strides = [strides[0]] + [strides[i] for i in take]
        launches += _launches(kern, nin, sub_args, sub_cls, sub_strides, p, n_used=len(take),
                              aux=aux_final if last else 0)
        first = take[-1] + 1
    return launches


def _launches(kern, nin, args, classes, strides, p, *, n_used, aux) -> list[Launch]:
    general = STRIDED in classes
    bits = p.index_bits if general else None
    name, ept = kern.name(bits), kern.ept(bits)
    cls_word = 0
    for k, c in enumerate(classes):
        cls_word |= c << (2 * k)
    values = [None] + [a.value for a in args[1:]]
    shape = tuple(p.coalesced_shape)
    if not general:
        params = pack_head(nin, [a.ptr for a in args], values, p.size, cls_word, 0, n_used, aux)
        return [Launch(kern.family, name, params, _grid(p.size, ept), ept)]
    flags = F_OFFSETS | (F_CONSECUTIVE if CONTIG in classes else 0)
    lead = max(0, len(shape) - MAX_DIMS)     # dims beyond MAX_DIMS: one launch per index
    inner_shape = shape[lead:]
    inner_strides = tuple(tuple(s[lead:]) for s in strides)
    inner_strides += ((0,) * len(inner_shape),) * (nin + 1 - len(inner_strides))   # unused args
    calc = pack_calc(inner_shape, inner_strides, bits)
    size = int(np.prod(inner_shape))
    out = []
    for idx in itertools.product(*(range(n) for n in shape[:lead])):
        ptrs = [a.ptr + (sum(i * s for i, s in zip(idx, st[:lead])) * a.dtype.itemsize if a.ptr else 0)
                for a, st in zip(args, strides)]
        head = pack_head(nin, ptrs, values, size, cls_word, flags, n_used, aux)
        params = head + calc
        params += b"\0" * (general_size(nin, bits) - len(params))
        out.append(Launch(kern.family, name, params, _grid(size, ept), ept))
    return out


def _grid(size: int, ept: int) -> int:
    return max(1, min(MAX_GRID, -(-size // (BLOCK * ept))))
