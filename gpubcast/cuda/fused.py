"""CUDA kernels generated from fused programs (``gpubcast.fusion.Program``): a whole chain of ops in
one kernel over the output.

One translation unit per program (``kernel``), registered as a generated family of ``sources`` (so
NVRTC, its cache and the host emulation treat it as ``kernels/*.cu``), named by a hash of its text:

    namespace gbf_<hash> {
      struct Body<EPT>       loads every leaf (access.cuh's Access: vector, scalar, strided and
                             shared-memory tiles as in the built-in kernels), then per element
                             computes each step with the registry op's functor of kernels/*.cu
                             (NumPy's values in the step's loop dtype), converts between steps as
                             ``dispatch`` converts inputs (num::cast), and stores the result;
      fused_contig<u64>            no strided leaf: ContigArgs = Head<NIN>, then the constants
      fused_general<index_t>       any strides: GeneralArgs = General<NIN, index_t>, then the constants
    }

The statements of ``Body`` come from ``gpubcast.fused_code``'s walk over the program (written once
for this backend and the Numba one), spelled in C++ here (``_Spelling``).  NIN is the number of
leaves; the constants (``Program.constants``) travel in the kernel argument after the launch struct,
one 16-byte slot each: kernels and launch templates are kept by the program's structure
(``Program.key``, constants by dtype; the ``MAX_PROGRAMS`` most recently used), so a new scalar
value does not recompile.  Launches are ``launch``'s (grid, shared-memory tiles, ranks beyond
MAX_DIMS, 32/64-bit paths).

Values equal the unfused chain on the CUDA backend: the same functors, the same conversions; the
kernels compile with ``--fmad=false``, so no product is fused into a later step's addition.  An
exponent one value over the whole call takes power's fast path (``catalog.SCALAR_SECOND``), as the
unfused step's VALUE or SCALAR operand does.
"""

from __future__ import annotations

import functools
import hashlib
from dataclasses import dataclass

import numpy as np

from .. import fused_code
from . import catalog, launch, sources

#: the largest kernel argument (bytes) a fused launch may have: CUDA's 4 KiB limit of sm_80 drivers
MAX_PARAM_BYTES = 4096
#: the most leaves of one kernel: Head::classes holds 2 bits for each operand, the output included
MAX_LEAVES = 15
#: bytes of leaf elements one thread holds at once (a tile's loads all issue before any compute): the
#: elements per thread halve until the leaves' elements fit, so many leaves do not spill registers
LOADED_BYTES = 128
#: programs whose kernels (and, per plan, launch templates) are kept, least recently used dropped first
MAX_PROGRAMS = 1024


@dataclass(frozen=True)
class FusedKernels:
    """The kernels of one program (``launch`` reads family, name, ept and path, like ``catalog.Kernels``)."""
    family: str
    contig_ept: int
    general_ept: int            # 32-bit indices
    general64_ept: int          # 64-bit indices
    path: catalog.Path = catalog.DEFAULT_PATH   # the default store path only (kernels/launch.cuh Path)

    def name(self, index_bits: int | None) -> str:
        if index_bits is None:
            return f"{self.family}::fused_contig<gb::u64>"
        return f"{self.family}::fused_general<{catalog.INDEX_TYPES[index_bits]}>"

    def ept(self, index_bits: int | None) -> int:
        return {None: self.contig_ept, 32: self.general_ept, 64: self.general64_ept}[index_bits]

    def names(self) -> tuple[str, str, str]:
        return self.name(None), self.name(32), self.name(64)


class _Spelling(fused_code.Spelling):
    """C++ for NVRTC: the registry op's functor of kernels/*.cu (``op.functor``), conversions by
    ``num::cast``, each value a ``const`` of its C++ type; leaves are read per element ``e``."""

    def value(self, kind, k):
        return {"leaf": f"a{k}[e]", "const": f"c{k}", "step": f"v{k}"}[kind]

    def convert(self, expr, src, want):
        return f"num::cast<{catalog.cxx_type(want)}>({expr})"

    def bind(self, name, dtype, expr):
        return f"      const {catalog.cxx_type(dtype)} {name} = {expr};"

    def unary(self, node, natural, x):
        return f"{node.op.functor}().template apply<{catalog.cxx_type(natural)}>({x})"

    def binary(self, node, natural, x, y, second_constant):
        functor = catalog.SCALAR_SECOND.get(node.op.name, node.op.functor) if second_constant else node.op.functor
        return f"{functor}()({x}, {y})"

    def where(self, node, natural, condition, x, y):
        return f"({condition} ? {x} : {y})"

    def fold(self, node, natural, acc, x):
        return f"{node.op.functor}().step({acc}, {x})"

    def finish(self, node, natural, acc, count):
        if node.op.name == "mean":
            return f"num::true_divide({acc}, num::from_count<{catalog.cxx_type(natural)}>({count}))"
        return acc

    def parametric(self, node, natural, x, alpha, beta):    # kernels/variadic.cu
        return f"{node.op.functor}()({x}, {alpha}, {beta})"

    def axpby(self, node, natural, a, x, b, y):               # kernels/variadic.cu Axpby
        return f"num::add(num::multiply({a}, {x}), num::multiply({b}, {y}))"


def source(program, out_dtype) -> str:
    """The translation unit of ``program`` storing ``out_dtype`` (namespace ``gbf``: ``kernel`` renames
    it after the hash of this text).  TypeError where the CUDA backend has no kernel for a step (the
    unfused chain's error)."""
    out_dtype = np.dtype(out_dtype)
    leaves = [leaf.dtype for leaf, _ in program.leaves]
    consts = [c.dtype for c in program.constants]
    cx = catalog.cxx_type
    for node, _ in program.steps:     # each step's kernel exists on its own (same checks, same errors)
        catalog.kernels_for(node.op, node.loop, fused_code.natural_dtype(node))
    cx(out_dtype)
    files = sorted({sources.FAMILIES[sources.FAMILY_OF_KIND[node.op.kind]].file for node, _ in program.steps})
    lines, value = fused_code.statements(program, out_dtype, _Spelling())
    nin = len(leaves)
    ept = elements_per_thread(program, out_dtype)
    types = [cx(t) for t in leaves] + [cx(out_dtype)]
    loads = [f"    {cx(t)} a{k}[EPT];\n    acc.template load<{k + 1}>(a{k});" for k, t in enumerate(leaves)]
    constants = [f"    const {cx(t)} c{k} = from_bits<{cx(t)}>(c[{k}]);" for k, t in enumerate(consts)]
    vec_ok = " && ".join([f"vec_ok<{cx(out_dtype)}, EPT>(p.h, 0)"] +
                         [f"vec_ok<{t}, EPT>(p.h, {k + 1})" for k, t in enumerate(types[:-1])])
    return "\n".join([
        "// gpubcast.fuse program for the GPU (generated by gpubcast/cuda/fused.py)",
        *(f'#include "{f}"' for f in files or ["indexing.cuh"]),
        "namespace gbf {",
        "using namespace gb;",
        f"constexpr int NIN = {nin};",
        f"constexpr int NCONST = {max(1, len(consts))};",
        f"constexpr int MIN_BLOCKS64 = {4 if nin <= 12 else 2};   // 64-bit offsets of > 12 leaves: 128 registers",
        "template <int EPT> struct Body {",
        "  const u64 (*c)[2];                 // the constants, 16-byte slots",
        "  template <class Acc> GB_FN void operator()(const Acc& acc) const {",
        *loads,
        *constants,
        f"    {cx(out_dtype)} r[EPT];",
        "#pragma unroll",
        "    for (int e = 0; e < EPT; ++e) {",
        *lines,
        f"      r[e] = {value};",
        "    }",
        "    acc.store(r);",
        "  }",
        "};",
        "struct ContigArgs { Head<NIN> h; u64 c[NCONST][2]; };",
        "template <typename index_t> struct GeneralArgs { General<NIN, index_t> g; u64 c[NCONST][2]; };",
        f"template <typename index_t> constexpr int fused_contig_ept = {ept[0]};",
        f"template <typename index_t> constexpr int fused_general_ept = sizeof(index_t) == 4 ? {ept[1]} : {ept[2]};",
        "template <typename index_t>",
        "__global__ void __launch_bounds__(BLOCK) fused_contig(const __grid_constant__ ContigArgs p) {",
        "  constexpr int EPT = fused_contig_ept<index_t>;",
        f"  const bool consecutive = {vec_ok};",
        "  for_each_tile<NIN, EPT, u64, false>(p.h, NoCalc(), consecutive, Body<EPT>{p.c});",
        "}",
        "template <typename index_t>",
        "__global__ void __launch_bounds__(BLOCK, sizeof(index_t) == 4 ? 4 : MIN_BLOCKS64)   // 64 registers: 50 %",
        "fused_general(const __grid_constant__ GeneralArgs<index_t> p) {",
        "  constexpr int EPT = fused_general_ept<index_t>;",
        "  for_each_tile<NIN, EPT, index_t, true>(p.g.h, p.g.calc, true, Body<EPT>{p.c});",
        "}",
        "}  // namespace gbf",
    ]) + "\n"


def elements_per_thread(program, out_dtype) -> tuple[int, int, int]:
    """(contiguous, general 32-bit, general 64-bit) elements per thread: the built-in kernels'
    (catalog.contig_ept, general_ept), halved while the leaves' elements of a tile pass ``LOADED_BYTES``
    (half of it on the 64-bit path, whose offsets take twice the registers)."""
    sizes = [leaf.dtype.itemsize for leaf, _ in program.leaves] + [np.dtype(out_dtype).itemsize]
    held = sum(sizes[:-1])
    result = []
    for ept, budget in ((catalog.contig_ept(*sizes), LOADED_BYTES), (catalog.general_ept(*sizes), LOADED_BYTES),
                        (catalog.general_ept(*sizes), LOADED_BYTES // 2)):
        while ept > 1 and ept * held > budget:
            ept //= 2
        result.append(ept)
    return result[0], result[1], result[2]


@functools.lru_cache(maxsize=MAX_PROGRAMS)
def kernel(program, out_dtype) -> FusedKernels:
    """The kernels of ``program`` storing ``out_dtype``, their family registered with ``sources``."""
    text = source(program, out_dtype)
    family = "gbf_" + hashlib.sha256(text.encode()).hexdigest()[:20]   # also the namespace
    text = (text.replace("namespace gbf {", f"namespace {family} {{")
            .replace("// namespace gbf", f"// namespace {family}"))
    k = FusedKernels(family, *elements_per_thread(program, out_dtype))
    sources.register(family, text, k.names())
    return k


def fits(program) -> bool:
    """Whether a launch takes the program (else the chain runs op by op): at most ``MAX_LEAVES`` leaves
    (Head::classes has 2 bits per operand in 32), an argument within ``MAX_PARAM_BYTES``."""
    n = len(program.leaves)
    return n <= MAX_LEAVES and launch.general_size(n, 64) + 16 * max(1, len(program.constants)) <= MAX_PARAM_BYTES


def launches(program, p, inputs: list, out) -> list:
    """The launches computing ``program`` over plan ``p`` (its operands: the leaves, then possibly the
    constant block, which the kernel argument carries instead) from ``inputs`` (``launch.Operand``
    per leaf) into ``out``."""
    if p.size == 0:
        return []
    found = templates(program, p, tuple(x.value is not None for x in inputs), out.dtype)
    constants = program.constant_block.tobytes()
    operands = (out, *inputs)
    result = []
    for t in found:
        params = launch.pack(t, operands, len(inputs)) + constants
        result.append(launch.Launch(t.family, t.name, params, t.grid, t.ept))
    return result


@functools.lru_cache(maxsize=MAX_PROGRAMS)
def templates(program, p, host_values, out_dtype) -> tuple:
    """The launch templates of ``program`` over plan ``p`` (``host_values``: per leaf, whether it is a
    host value) storing ``out_dtype``: ``launches`` fills them with a call's addresses."""
    k = kernel(program, out_dtype)
    n = len(program.leaves)
    classes = launch.operand_classes(p, host_values)
    strides = [tuple(p.coalesced_out_strides)] + [tuple(s) for s in p.coalesced_strides[:n]]
    itemsizes = [np.dtype(out_dtype).itemsize] + [leaf.dtype.itemsize for leaf, _ in program.leaves]
    return tuple(launch.launch_templates(k, n, list(range(n + 1)), classes, strides, itemsizes, p, 0))

