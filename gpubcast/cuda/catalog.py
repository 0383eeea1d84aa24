"""Which kernel instantiations exist: C++ types of dtypes, kernel names, elements per thread.

Every op of the registry (``gpubcast.ops``) maps to one kernel family:

    unary     unary.cu      <Op, A, R>            A: the op's loop dtype, R: the output dtype
    binary    binary.cu     <Op, A, B>            A, B: the op's loop dtypes
    ternary   ternary.cu    <Where, Bytes<N>>     N: itemsize of the values (data movement)
    variadic  variadic.cu   <Op, T>               T: the inputs' common dtype (also the
                                                  quaternary axpby: 4 inputs in one pass, and
                                                  the parametric activations: x, p, q)
    copy      copy.cu       <Copy, Bytes<N>>      N: itemsize (data movement)

and each (op, types) has three kernels: ``*_contig`` (no strided operand), ``*_general``
with 32-bit indices and with 64-bit indices.  ``every_instantiation()`` lists what the
dispatcher can ever request, for ``python -m gpubcast kernels --check``.

Every kernel of binary, ternary and copy also exists on other store paths (``Path``:
kernels/launch.cuh Path -- store width, streaming stores, tile order, block size, elements per
thread): ``Kernels.on(path)`` names them.  The dispatcher requests the default path only; the
others are the variants ``benchmarks/write_only.py`` measures on a GPU.
"""

from __future__ import annotations

import dataclasses
import functools
import itertools
from dataclasses import dataclass

import numpy as np

from .. import dtypes as _dt
from .. import ops as _ops
from .sources import FAMILIES, FAMILY_OF_KIND

#: NumPy dtype -> C++ type in kernels/element_types.cuh
CXX_TYPES = {
    np.dtype(bool): "bool",
    np.dtype(np.int8): "gb::i8", np.dtype(np.int16): "gb::i16",
    np.dtype(np.int32): "gb::i32", np.dtype(np.int64): "gb::i64",
    np.dtype(np.uint8): "gb::u8", np.dtype(np.uint16): "gb::u16",
    np.dtype(np.uint32): "gb::u32", np.dtype(np.uint64): "gb::u64",
    np.dtype(np.float16): "gb::f16", _dt.bfloat16: "gb::bf16",
    np.dtype(np.float32): "float", np.dtype(np.float64): "double",
    np.dtype(np.complex64): "gb::c64", np.dtype(np.complex128): "gb::c128",
}
MOVE_SIZES = (1, 2, 4, 8, 16)     # element sizes the data-movement kernels handle
#: unary ops computed on the CPU only for complex inputs (no complex CUDA kernel yet)
COMPLEX_ON_CPU = frozenset({"sqrt", "exp", "log", "tanh"})
#: the math functions of #22 with no complex CUDA kernel (libdevice has no complex functions)
COMPLEX_ON_CPU |= frozenset({"sin", "cos", "tan", "arcsin", "arccos", "arctan", "sinh", "cosh", "arcsinh", "arccosh",
                             "arctanh", "exp2", "expm1", "log1p", "log2", "log10"})
#: op -> the functor computing it when its second operand is one value over the whole call (a VALUE or
#: SCALAR operand), for float32/float64: NumPy's power loop then takes its fast path (arithmetic.cuh)
SCALAR_SECOND = {"power": "PowerScalarExponent"}
GENERAL_EPT = 4                    # kernels/launch.cuh GENERAL_EPT (variadic kernels but few-input general launches)
MAX_VARIADIC = FAMILIES["variadic"].nin   # inputs one variadic launch takes
FEW_VARIADIC = 4                   # kernels/variadic.cu FEW_VARIADIC: launches of at most this many inputs take
                                   # variadic_general_ept; more inputs GENERAL_EPT
INDEX_TYPES = {32: "gb::u32", 64: "gb::u64"}
BLOCK = 256                        # kernels/launch.cuh BLOCK
#: the families whose kernels take a store path (kernels/launch.cuh Path), and the generated
#: ElementwiseKernel families (gpubcast.elementwise_build)
PATH_FAMILIES = ("binary", "ternary", "copy")


@dataclass(frozen=True)
class Path:
    """A kernel's store path and tile order (kernels/launch.cuh ``Path``); ``Path()`` is
    ``DefaultPath``, what the runtime launches."""
    store: int = 16          # bytes a store instruction writes at most: 4, 8 or 16
    stream: bool = False     # streaming stores (st.global.cs)
    span: int = 1            # consecutive tiles a block takes before it strides by the grid
    threads: int = BLOCK     # threads per block (the launch's blockDim.x)
    ept: int = 0             # elements per thread (0: the kernel's own)
    chunk: int = 0           # bytes of a lane chunk (LANE_CHUNKS; 0: 16)

    def __post_init__(self):
        if self.store not in (4, 8, 16):
            raise ValueError(f"a store path writes 4, 8 or 16 bytes a store, not {self.store}")
        if self.chunk not in (0, 4, 8, 16):
            raise ValueError(f"a store path's lane chunks are 4, 8 or 16 bytes (0: 16), not {self.chunk}")
        if self.span < 1 or self.threads % 32 or not 32 <= self.threads <= 1024 or self.ept < 0:
            raise ValueError(f"bad store path {self}: span >= 1, threads a multiple of 32 up to 1024, ept >= 0")

    @property
    def default(self) -> bool:
        return self == DEFAULT_PATH

    def cxx(self) -> str:
        """The C++ type, ``gb::Path<...>``."""
        return (f"gb::Path<{self.store}, {'true' if self.stream else 'false'}, {self.span}, {self.threads}, "
                f"{self.ept}, {self.chunk}>")

    def label(self) -> str:
        """A short name: ``default``, or what differs from it (``store8 stream span4 t128 ept16 chunk8``)."""
        parts = [f"store{self.store}" if self.store != 16 else "", "stream" if self.stream else "",
                 f"span{self.span}" if self.span != 1 else "", f"t{self.threads}" if self.threads != BLOCK else "",
                 f"ept{self.ept}" if self.ept else "", f"chunk{self.chunk}" if self.chunk else ""]
        return " ".join(p for p in parts if p) or "default"


DEFAULT_PATH = Path()


def cxx_type(dtype) -> str:
    """The C++ type computing ``dtype``; TypeError for dtypes the CUDA backend has no kernels for."""
    try:
        return CXX_TYPES[np.dtype(dtype)]
    except (KeyError, TypeError):
        raise TypeError(f"the CUDA backend does not compute on dtype {dtype} (strings, objects and "
                        f"structured dtypes run on the CPU backends only)") from None


def move_type(dtype) -> str:
    """``gb::Bytes<N>`` moving elements of ``dtype`` (data movement: any dtype of size 1/2/4/8/16)."""
    dt = np.dtype(dtype)
    if dt.kind in "OSUV" and dt != _dt.bfloat16 or dt.itemsize not in MOVE_SIZES:
        raise TypeError(f"the CUDA backend cannot move elements of dtype {dt} (itemsize {dt.itemsize}); "
                        f"it moves numeric and bool elements of {'/'.join(map(str, MOVE_SIZES))} bytes")
    return f"gb::Bytes<{dt.itemsize}>"


def contig_ept(*itemsizes: int) -> int:
    """Elements per thread of a contiguous kernel: 16 bytes of the widest operand, at least 4
    (kernels/launch.cuh contig_ept)."""
    return max(4, 16 // max(itemsizes))


def general_ept(*itemsizes: int) -> int:
    """Elements per thread of a binary, ternary or copy general kernel: 8 where every element has
    at most 4 bytes, else 4 (kernels/launch.cuh general_ept)."""
    return 8 if max(itemsizes) <= 4 else 4


def lane_chunk(ept: int, *itemsizes: int, nbytes: int = 16) -> int:
    """Elements of a lane chunk of a general kernel of ``ept`` over elements of ``itemsizes``: ``nbytes``
    (16, or a store path's chunk) of the widest, at least one, at most ``ept`` (kernels/launch.cuh
    lane_chunk, path_chunk)."""
    return min(ept, max(1, nbytes // max(itemsizes)))


def variadic_general_ept(itemsize: int) -> int:
    """Elements per thread of a variadic general kernel's launch of at most ``FEW_VARIADIC`` inputs
    with 32-bit indices: 8 for elements of 2 or 4 bytes, else ``GENERAL_EPT`` (kernels/variadic.cu
    variadic_general_ept)."""
    return 8 if itemsize in (2, 4) else GENERAL_EPT


@dataclass(frozen=True)
class Kernels:
    """The three kernels of one (op, types): template arguments shared, names derived."""
    family: str
    targs: str                 # template arguments, e.g. "gb::Add, float, float"
    contig_ept: int
    general_ept: int = GENERAL_EPT
    general64_ept: int | None = None   # 64-bit indices, where not general_ept
    # tiles of general_ept a general kernel's lane tile holds (kernels/indexing.cuh LANE_EPT): 2, but 1 in
    # where (4 operands at 16 elements: 72 registers, occupancy 3/8) and the variadic kernel's non-folds
    # (Axpby, the parametric activations: all inputs held at once, 116-248 registers at 2, f16 Axpby spills)
    lane_tiles: int = 2
    path: Path = DEFAULT_PATH  # the store path (kernels/launch.cuh Path): the default but for ``on``

    def name(self, index_bits: int | None) -> str:
        """The name expression: contiguous kernel (None) or general with 32/64-bit indices."""
        extra = "" if self.path.default else f", {self.path.cxx()}"
        if index_bits is None:
            return f"gb::{self.family}_contig<{self.targs}{extra}>"
        return f"gb::{self.family}_general<{self.targs}, {INDEX_TYPES[index_bits]}{extra}>"

    def ept(self, index_bits: int | None) -> int:
        if self.path.ept:
            return self.path.ept
        if index_bits is None:
            return self.contig_ept
        return self.general64_ept if index_bits == 64 and self.general64_ept else self.general_ept

    def on(self, path: Path) -> Kernels:
        """These kernels on store path ``path`` (binary, ternary and copy only)."""
        if self.family not in PATH_FAMILIES:
            raise ValueError(f"{self.family} kernels take no store path (those of {', '.join(PATH_FAMILIES)} do)")
        return dataclasses.replace(self, path=path)

    def names(self) -> tuple[str, str, str]:
        return self.name(None), self.name(32), self.name(64)


@functools.lru_cache(maxsize=4096)
def kernels_for(op: _ops.Op, in_dtypes: tuple, out_dtype, scalar_second: bool = False) -> Kernels:
    """The kernels computing ``op`` on inputs of loop dtypes ``in_dtypes`` into ``out_dtype``;
    ``scalar_second``: the second input is one value over the whole call (``SCALAR_SECOND``)."""
    family = FAMILY_OF_KIND[op.kind]
    out_dtype = np.dtype(out_dtype)
    if family == "unary":
        a = np.dtype(in_dtypes[0])
        if a.kind == "c" and op.name in COMPLEX_ON_CPU:
            raise TypeError(f"{op.name}: the CUDA backend has no kernel for complex inputs ({a}); compute "
                            f"it on the CPU (cupy.asnumpy(x), then gpubcast.{op.name})")
        sizes = (a.itemsize, out_dtype.itemsize)
        return Kernels(family, f"gb::{op.functor}, {cxx_type(a)}, {cxx_type(out_dtype)}", contig_ept(*sizes),
                       general_ept(*sizes))
    if family == "binary":
        a, b = (np.dtype(t) for t in in_dtypes)
        functor = SCALAR_SECOND[op.name] if scalar_second and op.name in SCALAR_SECOND and a.kind == "f" \
            and a.itemsize in (4, 8) else op.functor
        targs = f"gb::{functor}, {cxx_type(a)}, {cxx_type(b)}"
        sizes = (a.itemsize, b.itemsize, out_dtype.itemsize)
        return Kernels(family, targs, contig_ept(*sizes), general_ept(*sizes))
    if family == "variadic":
        t = np.dtype(in_dtypes[0])   # general: a launch of at most FEW_VARIADIC inputs (launch.py: more, GENERAL_EPT)
        return Kernels(family, f"gb::{op.functor}, {cxx_type(t)}", contig_ept(t.itemsize),
                       variadic_general_ept(t.itemsize), GENERAL_EPT, 2 if op.kind == "variadic" else 1)
    if family == "ternary":
        t = np.dtype(in_dtypes[1])
        return Kernels(family, f"gb::{op.functor}, {move_type(t)}", contig_ept(1, t.itemsize),
                       general_ept(1, t.itemsize), lane_tiles=1)
    t = np.dtype(in_dtypes[0])
    return Kernels(family, f"gb::{op.functor}, {move_type(t)}", contig_ept(t.itemsize), general_ept(t.itemsize))


def _binary_loops(op: _ops.Op):
    """Every (loop dtypes, output dtype) op.resolve gives for numeric dtypes and weak scalars
    (at least one operand an array: two Python scalars never reach the CUDA backend)."""
    candidates = list(_dt.NUMERIC) + [int, float, complex]
    loops = set()
    for a, b in itertools.product(candidates, repeat=2):
        if isinstance(a, type) and isinstance(b, type):
            continue
        try:
            loops.add(op.resolve((a, b)))
        except TypeError:
            continue
    return sorted(loops, key=str)


def _unary_loops(op: _ops.Op):
    """Every (loop dtypes, output dtype) of a unary op over numeric dtypes (cast: every pair)."""
    if op.name == "cast":
        return [((a,), b) for a in _dt.NUMERIC for b in _dt.NUMERIC]
    loops = set()
    for a in _dt.NUMERIC:
        try:
            loop, out = op.resolve((a,))
        except TypeError:
            continue
        if not (loop[0].kind == "c" and op.name in COMPLEX_ON_CPU):
            loops.add((loop, out))
    return sorted(loops, key=str)


#: name expressions per fast NVRTC program (``compiler.fast_program``): about 4 s of NVRTC each
FAST_PROGRAM = 260


def groups(family: str, size: int) -> tuple[tuple[str, ...], ...]:
    """The name expressions of ``family``'s instantiations cut into groups of ``size`` (catalog
    order): every caller asking for the same size gets the same groups."""
    names = [n for k in every_instantiation().get(family, ()) for n in k.names()]
    return tuple(tuple(names[i:i + size]) for i in range(0, len(names), size))


@functools.lru_cache(maxsize=len(FAMILIES))
def fast_programs(family: str) -> tuple[tuple[str, ...], ...]:
    """``groups`` of ``FAST_PROGRAM``: the programs ``kernels --check --fast`` compiles and the
    virtual CUDA device takes its kernels from, so that one compile serves both."""
    return groups(family, FAST_PROGRAM)


@functools.lru_cache(maxsize=1)
def every_instantiation() -> dict[str, tuple[Kernels, ...]]:
    """family -> every Kernels the dispatcher can request (each yields 3 name expressions)."""
    found: dict[str, dict[str, Kernels]] = {f: {} for f in FAMILIES}
    for op in _ops.REGISTRY.values():
        family = FAMILY_OF_KIND[op.kind]
        if family == "unary":
            combos = _unary_loops(op)
        elif family == "binary":
            combos = [(loop, out) for loop, out in _binary_loops(op)]
        elif family == "variadic":
            combos = [((t,), t) for t in _dt.NUMERIC if _dt.kind(t) in op.accepts]
        else:
            sizes = {}
            for t in _dt.NUMERIC:
                sizes.setdefault(t.itemsize, t)
            combos = [((np.dtype(bool), t, t) if family == "ternary" else (t,), t) for t in sizes.values()]
        for loop, out in combos:
            for scalar_second in (False, True) if op.name in SCALAR_SECOND else (False,):
                k = kernels_for(op, tuple(loop), out, scalar_second)
                found[family][k.targs] = k
    return {f: tuple(ks.values()) for f, ks in found.items()}
