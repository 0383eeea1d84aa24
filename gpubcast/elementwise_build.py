"""ElementwiseKernel's code: the user's C/C++ body spliced into gpubcast's skeletons, built and run.

One ``Signature`` (the kernel's text, its parameters and their resolved types) gives two
translation units around the same ``operation``:

- GPU: ``kernels/elementwise_kernel.cuh``, registered as a generated family of
  ``gpubcast.cuda.sources`` so that NVRTC, the ``nvrtc`` cache (keyed by the inlined text, options
  and NVRTC version) and the host emulation (the virtual CUDA device) treat it like
  ``kernels/*.cu``; launched on CuPy's current stream (or ``stream=``) through
  ``CudaBackend.function``.  A kernel whose array parameters are all const inputs or outputs
  (``Signature.tiles``) runs on the built-in kernels' access paths (the header's tile path: a
  contiguous kernel and general kernels with 32- and 64-bit indices, vector loads and stores where
  operands are contiguous and aligned, several elements a thread, lane chunks; ``gpu_launch`` lays
  them out as ``cuda.launch`` does for the built-ins); any other (a ``_non_const`` array input, or
  only ``raw`` arrays) on its element path (one element a thread, 32- or 64-bit indices).
- CPU: ``kernels/elementwise_host.h``, built with the system C++ compiler by
  ``gpubcast.hostbuild.build_library`` (cache kind ``cpu``: the key holds the text, the compiler's
  ``--version`` and the flags; the ``.so`` is checked against its SHA-256 before it is loaded; one
  process builds while the others wait), one build per innermost-stride kind of the parameters
  (0, 1 or any: unit-stride rows vectorise), run on every core with ``std::thread``.

The user's code is preceded by ``#line 1 "operation"`` (and likewise for ``preamble``,
``loop_prep``, ``after_loop``), so a compiler's message names the user's own line; a failed build
is a ``KernelSourceError`` carrying the compiler's message and that line.
"""

from __future__ import annotations

import ctypes
import dataclasses
import functools
import hashlib
import os
import re
import struct
from dataclasses import dataclass

import numpy as np

from . import hostbuild
from .cuda import catalog, launch, sources
from .plan import c_strides

#: C type of each dtype in kernel code (CuPy's names)
CTYPES = {
    np.dtype(np.bool_): "bool", np.dtype(np.int8): "signed char", np.dtype(np.uint8): "unsigned char",
    np.dtype(np.int16): "short", np.dtype(np.uint16): "unsigned short", np.dtype(np.int32): "int",
    np.dtype(np.uint32): "unsigned int", np.dtype(np.int64): "long long",
    np.dtype(np.uint64): "unsigned long long", np.dtype(np.float32): "float", np.dtype(np.float64): "double",
}
#: host build flags: no fused multiply-add (the GPU path's NVRTC runs with --fmad=false), no -march
#: (the library may be loaded on another CPU of the same cache; SSE2/NEON vectorise the rows)
HOST_FLAGS = ("-std=c++17", "-O3", "-fPIC", "-shared", "-pthread", "-ffp-contract=off", "-fno-strict-aliasing",
              "-w")
MAX_GPU_DIMS = 10          # kernels/launch.cuh MAX_DIMS
MAX_HOST_DIMS = 64         # kernels/elementwise_host.h MAX_DIMS
BLOCK = 256
MAX_GRID = 65535 * 8       # kernels/elementwise_kernel.cuh EWK_MAX_GRID
PARTS = ("preamble", "loop_prep", "operation", "after_loop")


class KernelSourceError(ValueError):
    """The user's kernel code does not compile; the message holds the compiler's and the user's line."""


@dataclass(frozen=True)
class Param:
    """One declared parameter: ``[raw] [_non_const] type name``."""
    name: str
    dtype: np.dtype | None      # None: a one-letter type placeholder
    ctype: str                  # the placeholder letter, or the dtype's C type
    raw: bool
    is_const: bool
    decl: str


@dataclass(frozen=True)
class Signature:
    """Everything one built kernel is made of: code, parameters, resolved types and argument kinds."""
    name: str
    params: tuple               # Param, inputs then outputs
    types: tuple                # resolved dtype of each parameter
    kinds: tuple                # per parameter: "array" | "raw" | "scalar"
    placeholders: tuple         # ((letter, dtype), ...) sorted
    preamble: str
    loop_prep: str
    operation: str
    after_loop: str
    options: tuple
    nin: int                    # inputs among params

    @property
    def slots(self) -> tuple[int, ...]:
        """The tile path's argument slots: the parameters that are non-raw arrays, in order."""
        return tuple(k for k, kind in enumerate(self.kinds) if kind == "array")

    @property
    def tiles(self) -> bool:
        """Whether the kernel runs on the tile path: some non-raw array parameter, and no array input
        declared ``_non_const`` (the operation might write it: it keeps its element reference)."""
        return bool(self.slots) and all(self.params[k].is_const for k in self.slots if k < self.nin)

    def lane_tiles(self) -> int:
        """Tiles a general tile kernel's lane tile holds: 2 for at most 3 slots (as the binary kernels),
        else 1 (as where's: registers)."""
        return 2 if len(self.slots) <= 3 else 1

    def _typedefs(self) -> str:
        return "".join(f"typedef {CTYPES[t]} {letter};\n" for letter, t in self.placeholders)

    def _user(self, part: str, after: str = "") -> str:
        return f'#line 1 "{part}"\n{getattr(self, part)}{after}\n#line 1 "gpubcast-generated"\n'

    def gpu_source(self, namespace: str = "gb_ewk") -> str:
        """The GPU translation unit, its kernels in ``namespace``: the tile path's (``tile_names``) or the
        element path's (``namespace::name<index_t>``)."""
        return self._tile_source(namespace) if self.tiles else self._element_source(namespace)

    def _tile_source(self, namespace: str) -> str:
        """The tile path (kernels/elementwise_kernel.cuh): ``name_contig<P>`` and ``name<index_t, P>``."""
        n, slots, name = len(self.params), self.slots, self.name
        nin = len(slots) - 1
        ctypes = [CTYPES[self.types[k]] for k in slots]
        tlist = ", ".join(ctypes)
        pre, refs, loads, stores = self._host_values("_p.s."), [], [], []
        for s_, k in enumerate(slots):
            p, c = self.params[k], ctypes[s_]
            const = "const " if p.is_const else ""
            loads.append(f"      {c} _a{s_}[_E];")
            loads.append(f"      _acc.template load<{s_}>(_a{s_});")
            if k >= self.nin:
                stores.append(f"      _acc.template store<{s_}>(_a{s_});")
            refs.append(f"        {const}{c} &{p.name} = _a{s_}[_k];")

        def tile(guard: str) -> list[str]:        # loads, the operation on each element, stores
            return [*loads, "#pragma unroll", "      for (int _k = 0; _k < _E; ++_k) {", *guard,
                    "        const long long i = (long long)_acc.linear(_k);", "        (void)i;", *refs,
                    self._user("operation", ";"), "      }", *stores]
        return "\n".join([
            f"// gpubcast.ElementwiseKernel '{name}' for the GPU (generated: kernels/elementwise_kernel.cuh: tiles)",
            '#include "elementwise_kernel.cuh"',
            self._typedefs() + self._user("preamble"),
            f"namespace {namespace} {{",
            f"constexpr int {name}_lane_tiles = {self.lane_tiles()};",
            f"template <class P = gb::DefaultPath> constexpr int {name}_contig_ept = "
            f"gb::path_ept<P>(gb::contig_ept<{tlist}>());",
            f"template <typename index_t, class P = gb::DefaultPath> constexpr int {name}_ept = "
            f"gb::path_ept<P>(gb::general_ept<{tlist}>());",
            "template <bool GENERAL, typename index_t, class P, class Params>",
            f"__device__ __forceinline__ void {name}_tiles(const Params& _p) {{",
            "  const gb::EwkIndexer _ind{_p.s.size};",
            *pre,
            "  {",
            self._user("loop_prep", ";"),
            "  auto _body = [&](const auto& _acc) {",
            "    constexpr int _E = gb::EwkElements<decltype(_acc)>::value;",
            "    if (_acc.t.count == _E) {             // a full tile: output loads the operation never reads are dead",
            *tile([]),
            "    } else {                               // a partial tile: the elements in range",
            *tile(["        if (_k >= _acc.t.count) break;"]),
            "    }",
            "  };",
            "  if constexpr (GENERAL) {",
            f"    constexpr int _EPT = {name}_ept<index_t, P>, _LANE = {name}_lane_tiles * _EPT;",
            f"    gb::for_each_tile<{nin}, _EPT, index_t, true, false, {nin + 1}, gb::path_chunk<P, _LANE, {tlist}>(), "
            f"_LANE, P>(_p.g.h, _p.g.calc, true, _body);",
            "  } else {",
            f"    constexpr int _EPT = {name}_contig_ept<P>;",
            "    const bool _consecutive = " + " && ".join(f"gb::vec_ok<{c}, _EPT>(_p.h, {s_})"
                                                      for s_, c in enumerate(ctypes)) + ";",
            f"    gb::for_each_tile<{nin}, _EPT, gb::u64, false, false, {nin + 1}, _EPT, _EPT, P>(_p.h, gb::NoCalc(), "
            f"_consecutive, _body);",
            "  }",
            self._user("after_loop", ";"),
            "  }",
            "}",
            "template <class P = gb::DefaultPath>",
            f"__global__ void __launch_bounds__(P::THREADS) {name}_contig("
            f"const __grid_constant__ gb::EwkContig<{nin}, {n}> _p) {{",
            f"  {name}_tiles<false, gb::u64, P>(_p);",
            "}",
            "template <typename index_t, class P = gb::DefaultPath>",
            f"__global__ void __launch_bounds__(P::THREADS) {name}("
            f"const __grid_constant__ gb::EwkGeneral<{nin}, {n}, index_t> _p) {{",
            f"  {name}_tiles<true, index_t, P>(_p);",
            "}",
            f"}}  // namespace {namespace}",
            ""])

    def _host_values(self, params: str) -> list[str]:
        """The declarations of the scalar and raw parameters, read from the launch parameters at
        ``params`` (``"_p."`` or ``"_p.s."``): what both kernel paths begin with."""
        lines = []
        for k, (p, t, kind) in enumerate(zip(self.params, self.types, self.kinds)):
            c = CTYPES[t]
            if kind == "scalar":
                const = "const " if p.is_const else ""
                lines.append(f"  {const}{c} {p.name} = gb::from_bits<{c}>({params}value[{k}]);")
            elif kind == "raw":
                lines.append(f"  const gb::EwkRaw<{c}> {p.name}{{({c}*){params}ptr[{k}], "
                             f"(long long){params}raw_size[{k}]}};")
        return lines

    def _element_source(self, namespace: str) -> str:
        """The element path (kernels/elementwise_kernel.cuh): ``name<index_t>``."""
        n = len(self.params)
        pre, elem = self._host_values("_p."), []
        for k, (p, t, kind) in enumerate(zip(self.params, self.types, self.kinds)):
            c = CTYPES[t]
            const = "const " if p.is_const else ""
            if kind == "array":
                elem.append(f"    {const}{c} &{p.name} = *GB_PTR(({const}{c}*)_p.ptr[{k}] + _off[{k}], _p.ptr[{k}], "
                            f"{'false' if p.is_const else 'true'});")
        return "\n".join([
            f"// gpubcast.ElementwiseKernel '{self.name}' for the GPU (generated: kernels/elementwise_kernel.cuh)",
            '#include "elementwise_kernel.cuh"',
            self._typedefs() + self._user("preamble"),
            f"namespace {namespace} {{",
            f"template <typename index_t> constexpr int {self.name}_ept = 1;",
            "template <typename index_t>",
            f"__global__ void __launch_bounds__(gb::BLOCK) {self.name}("
            f"const __grid_constant__ gb::EwkParams<{n}, index_t> _p) {{",
            "  typedef typename gb::OffsetType<index_t>::type _offset_t;",
            "  const gb::EwkIndexer _ind{_p.size};",
            *pre,
            "  {",
            self._user("loop_prep", ";"),
            "  const index_t _size = (index_t)_p.size;",
            "  for (index_t _i = (index_t)blockIdx.x * gb::BLOCK + threadIdx.x; _i < _size;"
            " _i += (index_t)gridDim.x * gb::BLOCK) {",
            f"    _offset_t _off[{n}];",
            "    gb::ewk_offsets(_p, _i, _off);",
            "    const long long i = (long long)_i;",
            "    (void)i;",
            *elem,
            self._user("operation", ";"),
            "  }",
            self._user("after_loop", ";"),
            "  }",
            "}",
            f"}}  // namespace {namespace}",
            ""])

    def cpu_source(self, row_kinds: tuple) -> str:
        """The CPU translation unit, gpubcast's headers inlined but ``host_header()``, written beside it.
        ``row_kinds``: per parameter, its innermost stride's kind (0, 1, 2: any; None: not an array)."""
        n = len(self.params)
        pre, rows, elem = [], [], []
        for k, (p, t, kind) in enumerate(zip(self.params, self.types, self.kinds)):
            c = CTYPES[t]
            const = "const " if p.is_const else ""
            if kind == "scalar":
                pre.append(f"  {const}{c} {p.name} = gb_host::from_bits<{c}>(_a.value[{k}]);")
            elif kind == "raw":
                pre.append(f"  const gb_host::Raw<{c}> {p.name}{{({c}*)_a.ptr[{k}], _a.raw_size[{k}]}};")
            else:
                rows.append(f"    {const}{c}* const _p{k} = ({const}{c}*)_a.ptr[{k}] + _off[{k}];")
                rows.append(f"    const long long _s{k} = _a.stride[{k}][_last];")
                elem.append(f"      {const}{c} &{p.name} = *gb_host::at<{row_kinds[k]}>(_p{k}, _j, _s{k});")
        return "\n".join([
            *sources.defines(self.options),           # before everything, as NVRTC's -D options
            f'#include "{host_header().name}"',        # written beside it (hostbuild.Header), not inlined
            sources.inline_headers("\n".join([
            f"// gpubcast.ElementwiseKernel '{self.name}' for the CPU (generated: kernels/elementwise_host.h)",
            '#include "elementwise_host.h"',
            "using std::min;", "using std::max;",
            self._typedefs() + self._user("preamble"),
            f"static void gb_ewk_chunk(const gb_host::Args<{n}>& _a, long long _begin, long long _end) {{",
            "  const gb_host::Indexer _ind{_a.size};",
            *pre,
            "  {",
            self._user("loop_prep", ";"),
            "  const long long _last = _a.ndim - 1, _n0 = _a.shape[_last];",
            "  long long _row = _begin / _n0, _j0 = _begin % _n0;",
            "  for (long long _e = _begin; _e < _end; ++_row, _j0 = 0) {",
            f"    long long _off[{n}];",
            "    gb_host::row_start(_a, _row, _off);",
            "    const long long _stop = _n0 - _j0 <= _end - _e ? _n0 : _j0 + (_end - _e);",
            "    const long long _base = _row * _n0;",
            *rows,
            "    for (long long _j = _j0; _j < _stop; ++_j) {",
            "      const long long i = _base + _j;",
            "      (void)i;",
            *elem,
            self._user("operation", ";"),
            "    }",
            "    _e += _stop - _j0;",
            "  }",
            self._user("after_loop", ";"),
            "  }",
            "}",
            'extern "C" int gb_ewk_run(const void* args, unsigned long long nbytes, int nthreads) {',
            f"  if (nbytes != sizeof(gb_host::Args<{n}>)) return -1;",
            f"  static thread_local gb_host::Args<{n}> a;",
            "  memcpy(&a, args, sizeof a);",
            f"  const gb_host::Args<{n}>& ca = a;",
            "  gb_host::parallel(a.size, nthreads, [&ca](long long b, long long e) { gb_ewk_chunk(ca, b, e); });",
            "  return 0;",
            "}",
            ""]))])


# ---- errors ----------------------------------------------------------------------------------------

_DIAGNOSTIC = re.compile(r"\b(error|warning|note|remark)\b|^\S+:\s*In |^In file", re.I)
_WHERE = re.compile(r"\b(preamble|loop_prep|operation|after_loop)(?::(\d+)|\((\d+)\))")


def source_error(sig: Signature, where: str, log: str) -> KernelSourceError:
    """The compiler's ``log`` for ``sig`` as a KernelSourceError naming the user's first faulty line."""
    lines, shown = log.splitlines(), []
    for j, ln in enumerate(lines):     # each error with the source line and caret after it
        if re.search(r"\berror\b", ln):
            shown.append(ln)
            shown += [x for x in lines[j + 1:j + 3] if x.strip() and not _DIAGNOSTIC.search(x)]
    shown = "\n".join(shown[:24] or [ln for ln in lines if ln.strip()][:24])
    m = _WHERE.search(log)
    culprit = ""
    if m:
        part, line = m.group(1), int(m.group(2) or m.group(3))
        text = getattr(sig, part).splitlines()
        if 1 <= line <= len(text):
            culprit = f"\nin {part}, line {line}: {text[line - 1].strip()}"
    return KernelSourceError(f"ElementwiseKernel '{sig.name}' does not compile ({where}):\n{shown}{culprit}")


# ---- GPU ---------------------------------------------------------------------------------------------

@functools.lru_cache(maxsize=1024)
def gpu_family(sig: Signature) -> tuple[str, tuple[str, ...]]:
    """(family, name expressions) of ``sig``, registered with the sources: the tile path's (contiguous,
    32-bit, 64-bit: ``tile_names``) or the element path's (32-bit, 64-bit)."""
    digest = hashlib.sha256("\0".join([sig.gpu_source(), *sig.options]).encode()).hexdigest()[:20]
    family = f"ewk_{digest}"          # also the kernels' namespace: one family, one signature
    names = tile_names(family, sig) if sig.tiles else (f"{family}::{sig.name}<gb::u32>",
                                                       f"{family}::{sig.name}<gb::u64>")
    sources.register(family, sig.gpu_source(family), names, sig.options)
    return family, names


def tile_names(family: str, sig: Signature, path: catalog.Path = catalog.DEFAULT_PATH) -> tuple[str, str, str]:
    """The tile path's name expressions on store ``path`` (kernels/launch.cuh Path): the contiguous
    kernel, the general kernels with 32- and 64-bit indices."""
    p = "" if path.default else path.cxx()
    return (f"{family}::{sig.name}_contig<{p}>", f"{family}::{sig.name}<gb::u32{', ' + p if p else ''}>",
            f"{family}::{sig.name}<gb::u64{', ' + p if p else ''}>")


@dataclass(frozen=True)
class GpuLaunch:
    """One launch of a signature's kernel: its argument bytes and shape, and where a later call's
    arrays and scalars go in the bytes (``device_launcher``)."""
    family: str
    name: str                   # name expression
    params: bytes
    grid: int
    block: int
    pointers: tuple             # (parameter, byte offset) of each pointer the call's arrays fill
    values: tuple               # (parameter, byte offset, NumPy scalar type) of each scalar


def gpu_launch(sig: Signature, bits: int, ptrs, values, raw_sizes, size: int, shape, strides,
               path: catalog.Path = catalog.DEFAULT_PATH) -> GpuLaunch:
    """The launch of ``sig`` over coalesced ``shape`` (``size`` elements; ``strides``: per parameter, in
    elements, 0 for scalar and raw ones; index width ``bits``), parameters at ``ptrs`` / of ``values``
    (bytes; b"" for arrays) / of ``raw_sizes`` elements.  Tile path: the array parameters are Head slots
    (kernels/elementwise_kernel.cuh), classed here as ``launch.templates_for`` classes operands (CONTIG where
    the strides are C-contiguous, an input of stride 0 everywhere SCALAR, else STRIDED), laid out by
    ``launch.row_tiles`` (general kernels) with the elements per thread of ``catalog`` on ``path``."""
    family, _ = gpu_family(sig)
    n = len(sig.params)
    pointers = tuple((k, 8 * k) for k, kind in enumerate(sig.kinds) if kind != "scalar")
    scalars = tuple((k, 8 * n + 16 * k, np.dtype(t).type) for k, (kind, t) in enumerate(zip(sig.kinds, sig.types))
                    if kind == "scalar")
    contiguous = c_strides(shape)
    if not sig.tiles:
        if not path.default:
            raise ValueError(f"ElementwiseKernel '{sig.name}' runs on its element path, which takes no store path")
        contig = sum(1 << k for k, (kind, st) in enumerate(zip(sig.kinds, strides))
                     if kind == "array" and tuple(st) == contiguous)
        general = int(any(kind == "array" and tuple(st) != contiguous and any(st)
                          for kind, st in zip(sig.kinds, strides)))
        head = struct.pack(f"<{n}Q{'16s' * n}{n}QQQQ", *ptrs, *values, *raw_sizes, size, contig, general)
        data = head + launch.pack_calc(tuple(shape), tuple(tuple(st) for st in strides), bits)
        return GpuLaunch(family, gpu_family(sig)[1][0 if bits == 32 else 1], data + b"\0" * (-len(data) % 8),
                         max(1, min(MAX_GRID, -(-size // BLOCK))), BLOCK, pointers, scalars)
    slots = sig.slots
    nin = len(slots) - 1
    itemsizes = [np.dtype(sig.types[k]).itemsize for k in slots]
    slot_strides = tuple(tuple(strides[k]) for k in slots)
    classes = [launch.CONTIG if st == contiguous else
               launch.SCALAR if k < sig.nin and not any(st) else launch.STRIDED for k, st in zip(slots, slot_strides)]
    general = launch.STRIDED in classes
    contig_name, name32, name64 = tile_names(family, sig, path)
    prefix = struct.pack(f"<{n}Q{'16s' * n}{n}QQ", *ptrs, *values, *raw_sizes, size)
    head = struct.Struct(f"<{nin + 1}Q{'16s' * (nin + 1)}Q4I")
    words = sum(c << (2 * s_) for s_, c in enumerate(classes))
    slot_ptrs = [ptrs[k] for k in slots]
    if general:
        tiles = launch.row_tiles(tuple(shape), slot_strides, bits, path.ept or catalog.general_ept(*itemsizes),
                                 sig.lane_tiles(), itemsizes, True, path.chunk or 16)
        calc = launch.pack_calc(tiles.shape, slot_strides, bits, tiles.steps, tiles.width)
        calc += b"\0" * (launch.general_size(nin, bits) - head.size - len(calc))
        data = prefix + head.pack(*slot_ptrs, *([b""] * (nin + 1)), tiles.size, words, tiles.flags, 0, 0) + calc
        name, covered, ept = name32 if bits == 32 else name64, tiles.size, tiles.ept
    else:
        data = prefix + head.pack(*slot_ptrs, *([b""] * (nin + 1)), size, words, 0, 0, 0)
        name, covered, ept = contig_name, size, path.ept or catalog.contig_ept(*itemsizes)
    pointers += tuple((k, len(prefix) + 8 * s_) for s_, k in enumerate(slots))
    return GpuLaunch(family, name, data + b"\0" * (-len(data) % 8),
                     launch.blocks_for(covered, ept * path.span, path.threads), path.threads, pointers, scalars)


def run_gpu(sig: Signature, lc: GpuLaunch, stream=None) -> None:
    """Launch ``lc`` (a launch of ``sig``) on ``stream`` (None: the current one)."""
    from . import backends
    from .cuda import compiler
    try:
        fn = backends.get("cuda").function(lc.family, lc.name)
    except compiler.CompileError as e:
        raise source_error(sig, "NVRTC", str(e)) from None
    arg = np.frombuffer(lc.params, np.dtype((np.void, len(lc.params))))
    if stream is None:
        fn((lc.grid,), (lc.block,), (arg,))
    else:
        fn((lc.grid,), (lc.block,), (arg,), stream=stream)


# ---- CPU ---------------------------------------------------------------------------------------------

def host_args(n: int, ndim: int, size: int, shape, ptrs, strides, raw_sizes, values) -> bytes:
    """The bytes of ``gb_host::Args<n>`` (shape and strides outermost first)."""
    pad = MAX_HOST_DIMS - ndim
    flat = [v for s in strides for v in (*s, *([0] * pad))]
    return struct.pack(f"<qq{MAX_HOST_DIMS}q{n}Q{n * MAX_HOST_DIMS}q{n}q{'16s' * n}", ndim, size,
                       *shape, *([0] * pad), *ptrs, *flat, *raw_sizes, *values)


@functools.cache
def host_header() -> hostbuild.Header:
    """What every CPU build includes first: the CUDA qualifiers made empty and the system headers of
    ``kernels/elementwise_host.h``, which g++ reads precompiled (``hostbuild.Header``): a build takes
    0.35 CPU-s, not 0.85."""
    includes = sources.system_includes((sources.kernel_dir() / "elementwise_host.h").read_text())
    return hostbuild.Header("gb_ewk_host.h", "".join(f"{line}\n" for line in [
        "#define __device__", "#define __host__", "#define __global__", "#define __forceinline__ inline",
        *includes]))


@functools.lru_cache(maxsize=1024)
def cpu_function(sig: Signature, row_kinds: tuple):
    """``gb_ewk_run`` of ``sig`` built for ``row_kinds`` (a proven cached library, else built now)."""
    text = sig.cpu_source(row_kinds)
    try:
        lib = hostbuild.build_library("cpu", f"ewk_{sig.name}", text, HOST_FLAGS,
                                      purpose="gpubcast.ElementwiseKernel on NumPy arrays", header=host_header())
    except hostbuild.BuildError as e:
        raise source_error(sig, "host C++ compiler", e.log) from None
    fn = ctypes.CDLL(str(lib)).gb_ewk_run
    hostbuild.release(lib)   # a private build (no cache directory): its file removed once loaded
    fn.argtypes = [ctypes.c_char_p, ctypes.c_ulonglong, ctypes.c_int]
    fn.restype = ctypes.c_int
    return fn


@functools.lru_cache(maxsize=1)
def cpu_threads() -> int:
    """Threads a CPU kernel runs on: $GPUBCAST_NUM_THREADS, else the cores this process may use."""
    env = os.environ.get("GPUBCAST_NUM_THREADS")
    if env:
        return max(1, int(env))
    try:
        return max(1, len(os.sched_getaffinity(0)))
    except AttributeError:
        return os.cpu_count() or 1


class Launcher:
    """One call signature run again on new arguments: the argument bytes of its first call with the
    new arguments' pointers and scalar values written in (same shapes, strides and types).
    ``pointers``: (argument, byte offset) pairs; ``values``: (argument, byte offset, NumPy scalar type);
    ``pointer(array)``: its address; ``launch(bytes)``: runs the kernel."""

    def __init__(self, template: bytes, nin: int, pointers, values, pointer, launch, device=None):
        self.template, self.nin, self.pointers, self.values = bytearray(template), nin, pointers, values
        self.pointer, self.launch = pointer, launch
        self.device = device      # a GPU launcher's (family, name expression, grid); None on the CPU

    def __call__(self, args) -> None:
        buf = bytearray(self.template)
        for k, off in self.pointers:
            struct.pack_into("<Q", buf, off, self.pointer(args[k]))
        for k, off, cast in self.values:
            value = cast(args[k]).tobytes()
            buf[off:off + len(value)] = value
        self.launch(bytes(buf))


def _slots(sig: Signature, ptr0: int, value0: int):
    """(pointer slots, value slots) of ``sig``'s argument struct: pointer k at ptr0 + 8k, value k at
    value0 + 16k."""
    pointers = [(k, ptr0 + 8 * k) for k, kind in enumerate(sig.kinds) if kind != "scalar"]
    values = [(k, value0 + 16 * k, np.dtype(t).type) for k, (kind, t) in enumerate(zip(sig.kinds, sig.types))
              if kind == "scalar"]
    return pointers, values


def host_launcher(sig: Signature, row_kinds: tuple, data: bytes, nin: int) -> Launcher:
    """``run_cpu(sig, row_kinds, ...)`` again, from the first call's argument bytes ``data``."""
    n = len(sig.kinds)
    ptr0 = 8 * (2 + MAX_HOST_DIMS)
    pointers, values = _slots(sig, ptr0, ptr0 + 8 * n + 8 * n * MAX_HOST_DIMS + 8 * n)
    fn = cpu_function(sig, row_kinds)

    def launch(data: bytes) -> None:
        if fn(data, len(data), cpu_threads()):
            raise RuntimeError(f"ElementwiseKernel '{sig.name}': argument of {len(data)} bytes does not fit its "
                               f"CPU build (a gpubcast bug)")
    return Launcher(data, nin, pointers, values, lambda a: a.__array_interface__["data"][0], launch)


def device_launcher(sig: Signature, lc: GpuLaunch, nin: int, pointer) -> Launcher:
    """``run_gpu(sig, lc)`` again (current stream), the bytes of ``lc`` taking a later call's pointers and
    scalars; ``device`` (family, name expression, grid, block) for the compiled launch path."""
    return Launcher(lc.params, nin, lc.pointers, lc.values, pointer,
                    lambda data: run_gpu(sig, dataclasses.replace(lc, params=data)),
                    (lc.family, lc.name, lc.grid, lc.block))


def run_cpu(sig: Signature, row_kinds: tuple, args: bytes) -> None:
    if cpu_function(sig, row_kinds)(args, len(args), cpu_threads()):
        raise RuntimeError(f"ElementwiseKernel '{sig.name}': argument of {len(args)} bytes does not fit its "
                           f"CPU build (a gpubcast bug)")
