"""From (op, plan, operands) to kernel launches: which kernel, its packed argument, the grid.

Shared by the CUDA backend (which launches through CuPy) and the host emulation harness
(which runs the same kernels on the CPU over NumPy memory), so both exercise the same
packing.  The packed argument is the C struct ``gb::Head<NIN>`` (contiguous kernels) or
``gb::General<NIN, index_t>`` (kernels/offsets.cuh), byte for byte:

    Head<NIN>:       u64 ptr[NIN+1]; u64 value[NIN+1][2]; u64 size; u32 classes, flags, nin, aux
    OffsetCalc<NARGS, index_t> (index_t = u32 | u64, W = its bytes):
                     i32 ndim; u32 width; index_t dim[MAX_DIMS][3] (divisor, magic, shift);
                     signed index_t stride[MAX_DIMS][NARGS]   (innermost dim first)
                     signed index_t chunk_step[NARGS]         (LANE_CHUNKS launches, else 0)
                     u32 tile_grid[2][3] (divisor, magic, shift: SHARED_TILES' column and row
                     blocks, else 1)
    General<NIN, index_t> = Head<NIN> then OffsetCalc<NIN+1, index_t>, padded to 8 bytes.

Operand classes come from the planner (``plan.classes``): contiguous -> CONTIG (vector
loads), scalar -> VALUE when the value is on the host (a kernel argument) else SCALAR (one
device element), strided -> STRIDED (offsets from the coalesced strides).
"""

from __future__ import annotations

import functools
import itertools
import math
import struct
from dataclasses import dataclass
from typing import NamedTuple

import numpy as np

from .. import ops as _ops
from ..plan import CONTIGUOUS, SCALAR as PLAN_SCALAR
from . import catalog
from .sources import FAMILIES

MAX_DIMS = 10          # kernels/launch.cuh MAX_DIMS
BLOCK = 256            # kernels/launch.cuh BLOCK
MAX_GRID = 2**31 - 1
CONTIG, VALUE, SCALAR, STRIDED = 0, 1, 2, 3
SHARED_TILES = 1       # Head::flags (kernels/launch.cuh)
LANE_CHUNKS, PADDED_ROWS = 2, 4   # Head::flags of row tiles (kernels/launch.cuh)
WARP = 32
LANE_CHUNK_FAMILIES = ("unary", "binary", "ternary", "copy", "variadic")   # kernels passing their CHUNK
TILE_COLS = 32         # kernels/launch.cuh TILE_COLS: a shared tile is TILE_COLS x (BLOCK * ept / TILE_COLS)
SHARED_MIN = 32        # shared tiles only with at least a warp's width of columns, and as many rows
SHARED_BYTES = 8192 + TILE_COLS * 16   # kernels/launch.cuh SHARED_BYTES: the buffer, per block


class Operand(NamedTuple):   # made per operand per call: a tuple is the cheapest record
    """One operand: device memory at ``ptr`` (element (0, ..., 0)), or a host ``value``."""
    dtype: np.dtype
    ptr: int = 0
    value: bytes | None = None      # VALUE class: the element's bytes in ``dtype``

    @classmethod
    def host_value(cls, x, dtype) -> Operand:
        dt = np.dtype(dtype)
        return cls(dt, 0, np.asarray(x, dtype=dt).tobytes())


class Launch(NamedTuple):   # made per launch per call
    """One kernel launch: its family, kernel, by-value argument, grid and elements per thread."""
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
    size = head_size(nin) + 8 + 3 * w * MAX_DIMS + w * (MAX_DIMS + 1) * (nin + 1) + 24
    return (size + 7) // 8 * 8


@functools.lru_cache(maxsize=4096)
def pack_calc(shape: tuple, strides: tuple, bits: int, chunk_steps: tuple = (), width: int = 0,
              tile_grid: tuple = (1, 1)) -> bytes:
    """OffsetCalc bytes for coalesced ``shape``, per-argument ``strides`` (output first),
    ``chunk_steps`` (per argument, LANE_CHUNKS; none: zeros), ``width`` (LANE_CHUNKS: the
    innermost size, under PADDED_ROWS ``shape``'s being the padded one; else 0) and ``tile_grid``
    (SHARED_TILES: the column and row blocks, ``shared_tile_grid``)."""
    nargs = len(strides)
    dims = list(reversed(shape))
    cols = [list(reversed(s)) for s in strides]
    div = []
    for d in range(MAX_DIMS):
        n = dims[d] if d < len(dims) else 1
        m, sh = magic(n, bits)
        div += [n, m, sh]
    st = [cols[k][d] if d < len(dims) else 0 for d in range(MAX_DIMS) for k in range(nargs)]
    steps = tuple(chunk_steps) or (0,) * nargs
    u, s = ("I", "i") if bits == 32 else ("Q", "q")
    grid = [x for n in tile_grid for x in (n, *magic(n, 32))]
    return struct.pack(f"<iI{3 * MAX_DIMS}{u}{(MAX_DIMS + 1) * nargs}{s}6I", len(dims), width, *div, *st, *steps,
                       *grid)


@dataclass(frozen=True)
class _Template:
    """One launch with everything but the pointers and host values filled in (cached per plan)."""
    family: str
    name: str
    grid: int
    ept: int
    head: struct.Struct         # the Head<NIN> layout
    args: tuple                 # operand filling argument slot k (0: the output, i: input i)
    offsets: tuple              # bytes added to that operand's pointer (launches split by rank)
    size: int
    classes: int
    flags: int
    n_used: int
    aux: int
    calc: bytes                 # OffsetCalc bytes and padding (b"" for contiguous kernels)


def plan_launches(op, p, inputs: list[Operand], out: Operand) -> list[Launch]:
    """The launches computing ``op`` over plan ``p`` (operands in plan order) into ``out``."""
    if p.size == 0:
        return []
    templates = templates_for(op.name, p, tuple(x.dtype for x in inputs), out.dtype,
                           tuple(x.value is not None for x in inputs))
    operands = (out, *inputs)
    return [Launch(t.family, t.name, pack(t, operands, FAMILIES[t.family].nin), t.grid, t.ept) for t in templates]


def pack(t: _Template, operands, nin: int) -> bytes:
    """The launch argument of template ``t`` (a kernel of ``nin`` input slots) on ``operands`` (the
    output first): its Head, then its OffsetCalc for a general kernel."""
    ptrs = [operands[i].ptr + o if operands[i].ptr else 0 for i, o in zip(t.args, t.offsets)]
    values = [b""] + [operands[i].value or b"" for i in t.args[1:]]
    pad = nin + 1 - len(t.args)
    return t.head.pack(*ptrs, *([0] * pad), *values, *([b""] * pad),
                       t.size, t.classes, t.flags, t.n_used, t.aux) + t.calc


def operand_classes(p, host_values) -> list:
    """The class of every operand of plan ``p`` (the output first): an input given on the host
    (``host_values``) is VALUE, a plan SCALAR a device SCALAR, else CONTIG or STRIDED."""
    classes = [CONTIG if p.out_contiguous else STRIDED]
    for is_value, cls in zip(host_values, p.classes):
        classes.append(VALUE if is_value else SCALAR if cls == PLAN_SCALAR
                       else CONTIG if cls == CONTIGUOUS else STRIDED)
    return classes


@functools.lru_cache(maxsize=4096)
def templates_for(op_name, p, in_dtypes, out_dtype, host_values, path: catalog.Path = catalog.DEFAULT_PATH) -> tuple:
    """The launch templates of ``op_name`` over plan ``p`` (``host_values``: per input, whether it is a
    host scalar): the kernels ``launches`` fills with an actual call's addresses.  ``path``: the kernels'
    store path (binary, ternary, copy; the default but for benchmarks/write_only.py's variants, which launch
    with ``path.threads`` threads a block)."""
    op = _ops.get(op_name)
    classes = operand_classes(p, host_values)
    kern = catalog.kernels_for(op, in_dtypes, out_dtype, classes[2:3] in ([VALUE], [SCALAR]))
    if not path.default:
        kern = kern.on(path)
    nin = FAMILIES[kern.family].nin
    strides = [tuple(p.coalesced_out_strides)] + [tuple(s) for s in p.coalesced_strides]
    itemsizes = [np.dtype(out_dtype).itemsize] + [np.dtype(t).itemsize for t in in_dtypes]
    n = len(in_dtypes)
    if kern.family != "variadic":
        passes = [(list(range(n + 1)), 0)]
    else:   # one pass per MAX_VARIADIC inputs, folding into the output left to right
        passes, first = [], 1
        while first <= n:
            take = list(range(1, min(n, nin) + 1)) if first == 1 else \
                [0] + list(range(first, min(n, first + nin - 2) + 1))    # the partial result first
            passes.append(([0] + take, n if op_name == "mean" and take[-1] == n else 0))
            first = take[-1] + 1
    return tuple(t for args, aux in passes
                 for t in launch_templates(kern, nin, args, [classes[i] for i in args], [strides[i] for i in args],
                                 [itemsizes[i] for i in args], p, aux))


def launch_templates(kern, nin, args, classes, strides, itemsizes, p, aux) -> list[_Template]:
    """The launches of one pass: one, or one per index of the dims beyond MAX_DIMS."""
    head = struct.Struct(f"<{nin + 1}Q{'16s' * (nin + 1)}Q4I")
    cls_word = sum(c << (2 * k) for k, c in enumerate(classes))
    general = STRIDED in classes
    bits = p.index_bits if general else None
    name, ept = kern.name(bits), kern.ept(bits)
    shape = tuple(p.coalesced_shape)
    n_used = len(args) - 1
    many_inputs = kern.family == "variadic" and general and n_used > catalog.FEW_VARIADIC
    if many_inputs:
        ept = catalog.GENERAL_EPT            # kernels/variadic.cu: the launches of many inputs (lane tiles of 1)
    path = kern.path
    if not general:
        return [_Template(kern.family, name, blocks_for(p.size, ept * path.span, path.threads), ept, head, tuple(args),
                          (0,) * len(args), p.size, cls_word, 0, n_used, aux, b"")]
    lead = max(0, len(shape) - MAX_DIMS)     # dims beyond MAX_DIMS: one launch per index
    inner = shape[lead:]
    inner_strides = tuple(tuple(s[lead:]) for s in strides)
    inner_strides += ((0,) * len(inner),) * (nin + 1 - len(inner_strides))   # unused argument slots
    shared = kern.family != "variadic" and path.threads == BLOCK and shared_tiles(inner, inner_strides, ept)
    if shared:                               # a block a tile
        size, grid = int(np.prod(inner)), max(1, min(MAX_GRID, shared_tile_count(inner, ept)))
        flags, steps, shape_of_calc, width, tile_grid = SHARED_TILES, (), inner, 0, shared_tile_grid(inner, ept)
    else:
        lanes = kern.family in LANE_CHUNK_FAMILIES
        lane_tiles = 1 if many_inputs or not lanes else kern.lane_tiles
        flags, ept, size, shape_of_calc, width, steps = row_tiles(inner, inner_strides, bits, ept, lane_tiles,
                                                                  itemsizes, lanes, path.chunk or 16)
        grid, tile_grid = blocks_for(size, ept * path.span, path.threads), (1, 1)
    calc = pack_calc(shape_of_calc, inner_strides, bits, steps, width, tile_grid)
    calc += b"\0" * (general_size(nin, bits) - head.size - len(calc))
    return [_Template(kern.family, name, grid, ept, head, tuple(args),
                      tuple(sum(i * s for i, s in zip(idx, st[:lead])) * isz for st, isz in zip(strides, itemsizes)),
                      size, cls_word, flags, n_used, aux, calc)
            for idx in itertools.product(*(range(d) for d in shape[:lead]))]


class RowTiles(NamedTuple):
    """The row-tile layout of a general launch (kernels/indexing.cuh for_each_tile)."""
    flags: int          # 0, LANE_CHUNKS or LANE_CHUNKS | PADDED_ROWS
    ept: int            # elements a thread takes per tile (LANE_CHUNKS: the lane tile's, LANE_EPT)
    size: int           # elements the tiles cover (PADDED_ROWS: counting the padding)
    shape: tuple        # the OffsetCalc's coalesced shape (PADDED_ROWS: the innermost size padded)
    width: int          # OffsetCalc::width (LANE_CHUNKS: the innermost size; else 0)
    steps: tuple        # OffsetCalc::chunk_step per argument (LANE_CHUNKS; else ())


def row_tiles(shape, strides, bits: int, ept: int, lane_tiles: int, itemsizes, lanes: bool = True,
              chunk_bytes: int = 16) -> RowTiles:
    """The row tiles of a general launch over coalesced ``shape`` (``strides``: per argument, outermost
    first) by a kernel of ``ept`` elements per thread whose lane tile holds ``lane_tiles`` tiles
    (kernels/*.cu LANE_EPT = ``ept * lane_tiles``), elements of ``itemsizes``: lane chunks where the
    rows allow them (``chunk_steps``), else padded rows where a lane tile holds 2 tiles
    (``padded_row``: they cost their idle lanes' issue, which pays only then), else tiles of ``ept``
    consecutive elements; lane chunks only on the 32-bit path and where ``lanes`` (the kernel takes
    them), of ``chunk_bytes`` (16, or a store path's chunk: catalog.lane_chunk)."""
    size = math.prod(shape)
    if lanes and bits == 32:
        lane_ept = ept * lane_tiles
        chunk = catalog.lane_chunk(lane_ept, *itemsizes, nbytes=chunk_bytes)
        steps = chunk_steps(shape, strides, chunk, lane_ept)
        if steps:
            return RowTiles(LANE_CHUNKS, lane_ept, size, tuple(shape), shape[-1], steps)
        if lane_tiles > 1 and (row := padded_row(shape, chunk, lane_ept)) and size // shape[-1] * row < 2**31:
            padded = tuple(shape[:-1]) + (row,)
            return RowTiles(LANE_CHUNKS | PADDED_ROWS, lane_ept, size // shape[-1] * row, padded, shape[-1],
                            chunk_steps(padded, strides, chunk, lane_ept))
    return RowTiles(0, ept, size, tuple(shape), 0, ())


def chunk_steps(shape, strides, chunk: int, ept: int) -> tuple:
    """Per argument (``strides``: coalesced, outermost first), the offset from a lane's chunk to its
    next in a lane-chunk launch (kernels/launch.cuh LANE_CHUNKS: a warp access covers WARP *
    ``chunk`` consecutive elements, not WARP lanes' ``ept`` each), or () where a launch over
    coalesced ``shape`` cannot take lane chunks: ``chunk`` == ``ept``, or some lane's chunks would
    cross a row.  They do not where the innermost size n0 is a multiple of WARP * ``ept`` (a warp's
    elements lie in one row: WARP * ``chunk`` innermost strides), or where n0 is a multiple of
    ``chunk`` dividing WARP * ``chunk`` and dim 1's size a multiple of the WARP * ``ept`` / n0 rows a
    warp covers (WARP * ``chunk`` / n0 dim-1 strides)."""
    n0 = shape[-1] if shape else 1
    if chunk >= ept or n0 % chunk:
        return ()
    if n0 % (WARP * ept) == 0:
        return tuple(WARP * chunk * (s[-1] if s else 0) for s in strides)
    if len(shape) >= 2 and (WARP * chunk) % n0 == 0 and shape[-2] % (WARP * ept // n0) == 0:
        return tuple(WARP * chunk // n0 * s[-2] for s in strides)
    return ()


#: PADDED_ROWS: the least share of a padded row's lanes with elements
PADDED_USE = 0.75


def padded_row(shape, chunk: int, ept: int) -> int:
    """The padded row of a lane-chunk launch over coalesced ``shape`` whose rows cannot take lane
    chunks as they are (kernels/launch.cuh PADDED_ROWS), or 0: where the innermost size n0 is a
    multiple of ``chunk`` and the next power of 2, P, divides WARP * ``chunk`` with n0 / P at least
    ``PADDED_USE`` and dim 1's size a multiple of the WARP * ``ept`` / P rows a warp covers -- each
    lane's chunks then lie in rows of P (``chunk_steps`` over the padded shape), and a lane past n0
    runs nothing (56-element rows: 7 lanes of 8 work)."""
    n0 = shape[-1] if shape else 1
    if chunk >= ept or n0 % chunk or len(shape) < 2:
        return 0
    row = 1 << (n0 - 1).bit_length()
    if (WARP * chunk) % row or n0 < PADDED_USE * row or shape[-2] % (WARP * ept // row):
        return 0
    return row


def transposed(strides) -> bool:
    """Whether an operand with these coalesced strides (outermost first) is transposed: |stride|
    1 along the second-innermost dim, > 1 along the innermost.  Under shared tiles such an
    operand goes through shared memory (kernels/shared_tiles.cuh TileAccess::staged, the same test)."""
    return len(strides) >= 2 and abs(strides[-2]) == 1 and abs(strides[-1]) > 1


def shared_tiles(shape, strides, ept: int) -> bool:
    """Whether a general launch takes shared tiles (kernels/launch.cuh SHARED_TILES): some
    operand (the output included) transposed, at least ``SHARED_MIN`` columns and rows (fewer
    leave most lanes or warps of a tile idle), ``ept`` dividing ``TILE_COLS`` (other kernels
    ignore the flag) and fewer than 2**31 tiles (the kernel divides its 32-bit tile indices by
    multiply-high, ``magic``).  The
    variadic kernels never take them (kernels/indexing.cuh for_each_tile).  Any element size and
    any number of operands: the kernel stages one operand at a time through one buffer of
    ``SHARED_BYTES``, in passes when its tile is larger."""
    if len(shape) < 2 or shape[-1] < SHARED_MIN or shape[-2] < SHARED_MIN or TILE_COLS % ept:
        return False
    return any(transposed(s) for s in strides) and shared_tile_count(shape, ept) < 2**31   # u32 tile indices


def shared_tile_grid(shape, ept: int) -> tuple[int, int]:
    """(column blocks, row blocks) of a shared-tile launch over coalesced ``shape``: tiles of
    TILE_COLS columns by BLOCK * ept / TILE_COLS rows of the two innermost dims."""
    return -(-shape[-1] // TILE_COLS), -(-shape[-2] // (BLOCK * ept // TILE_COLS))


def shared_tile_count(shape, ept: int) -> int:
    """Tiles of a shared-tile launch over coalesced ``shape``: ``shared_tile_grid``'s, for every
    index of the outer dims."""
    return math.prod(shape[:-2]) * math.prod(shared_tile_grid(shape, ept))


def blocks_for(size: int, ept: int, threads: int = BLOCK) -> int:
    """Blocks of ``threads`` threads covering ``size`` elements at ``ept`` a thread (a block's
    SPAN tiles: ``ept`` times the span)."""
    return max(1, min(MAX_GRID, -(-size // (threads * ept))))
