"""Store-path microbenchmark (issue 42, grown from issue 23's write-only probe): which way of writing takes
each kernel family to the device's write ceiling?  On the H100 run (benchmarks/results/nvidia-h100-80gb-hbm3-
2026-11-27.md) the broadcast copies ``expand`` and ``explicit`` moved 54-59 % of copy bandwidth while ``add``
on ``outer`` wrote the same kind of output at 84 %, with the same stores in the SASS; no static model tells
them apart (``gpubcast.sass.model.UNEXPLAINED``).  This script measures, per kernel family and pattern,
each store path of kernels/launch.cuh (``Path``; host side ``gpubcast.cuda.catalog.Path``) against the
device's memset and memcpy, in one run.

    PYTHONPATH=. python benchmarks/write_only.py [--repeat 5] [--json FILE] [--patterns A,B] [--variants A,B]
    PYTHONPATH=. python benchmarks/write_only.py --virtual     # no GPU: every row's kernel run and checked
    PYTHONPATH=. python benchmarks/write_only.py --static      # no GPU: each row's stores, as the SASS runs

Patterns (float32; the benchmark's GPU shapes, (M, K) = (16384, 4096): 256 MiB written):

  fill         broadcast_to of 1 element -> (M, K)               copy contig (a device scalar)
  copy column  broadcast_to (M, 1) -> (M, K)                     copy general32, input of stride 0 in rows
  copy row     broadcast_to (1, K) -> (M, K)                     copy general32, input of stride 1
  expand       expand (4096, 1) with (8, 1, 4096): 512 MiB       copy general32, rank 3
  explicit     (64, 56) -> (384, 64, 56, 56), axes (1, 3)        copy general32, padded rows of 56
  outer        add (M, 1) + (1, K)                               binary general32
  row          add (M, K) + (K,)                                 binary general32
  same         add (N,) + (N,), N = 2**26                        binary contig
  where        where((M, 1), (M, K), (1, K))                     ternary general32
  axpb         ElementwiseKernel z = a*x+b, (1,C,1,1)*(N,C,H,W)+(1,C,1,1)   user kernel, tile path

Variants (``VARIANTS``; "default" is what gpubcast launches today): store8 / store4 (bytes a store
instruction writes: each 16-byte lane chunk's store split, so a warp's store request fills 1/2 or 1/4
of each 32-byte sector it touches), chunk8 / chunk4 (lane chunks of 8 or 4 bytes stored whole: narrow
stores, every sector a request touches written whole), stream (st.global.cs), span4 / span16 (tiles a
block takes in a row before it strides: each block writes one contiguous span), t128 / t512 (threads
a block), ept/2 / ept*2 (elements a thread), stream+span4, and "resident grid" (the default kernel
launched with one wave of blocks, SMs x the blocks an SM holds, grid-stride).  Lane chunks (and so
chunk8 / chunk4) apply where the rows allow them (``launch.row_tiles``): copy column / row, expand,
outer, row, where (rows of 4096), explicit (rows of 56 padded to 64: 16-byte chunks only, chunk8 /
chunk4 fall back to tiles of consecutive elements); fill and same run contiguous kernels (a thread's
16 bytes are its chunk) and axpb row tiles (rows of 3136).  Reference rows per pattern: memset
(cudaMemsetAsync of its output: the write ceiling) and memcpy (cudaMemcpyAsync of as many bytes into
it: the copy ceiling, read + write).

Columns: GB/s written (output bytes / median time, CUDA events, ``gpubcast.bench.measure``), "of memset"
(that over the memset of the same output), GB/s moved (the pattern's traffic: each input's own bytes +
the output, as ``python -m gpubcast bench`` counts it), "of memcpy" (moved over the memcpy's bytes moved,
the benchmark's "fraction of copy"), blocks/SM (the driver's occupancy for the launch's block size).
Every row's output is checked against CuPy's/NumPy's values before it is timed (a wrong variant fails
the run).  ``--static`` prints, per row, what the SASS interpreter (``gpubcast.sass.interpreter``, sm_90) sees in
one block at these shapes: instructions and L1 lines per element, store requests per element and store sector
fill (1.0: every 32-byte sector a store request touches is written whole).  Nothing of ``--static`` is
measured on a GPU.

How to read the output to pick a variant:

1. memset and memcpy rows: the device's write-only and copy ceilings.  If memset writes about what
   memcpy moves, a write-only kernel can reach the benchmark's "fraction of copy" of 1.0; if memset is
   itself well below memcpy, the broadcast copies' 54-59 % is (partly) the device, and the goal is
   "of memset", not "of memcpy".
2. Per pattern, "default"'s "of memset": the gap.  Compare the copy patterns (expand, explicit, copy
   column/row, fill) with outer/row (binary, same shapes): if the copy kernel is behind on the same
   output, the cause is in the copy kernel's own path, else in the pattern.
3. The variant that closes the gap names the cause: stream -> write-allocate / L2 eviction behaviour;
   span* or resident grid -> block scheduling / DRAM page locality of the grid order; t128/t512 ->
   block size; ept*2 -> per-tile overhead (fewer, longer tiles); store8/store4 as fast as default ->
   partly filled sectors per request cost nothing; chunk8/chunk4 as fast -> the store width is not
   it.  A variant is worth adopting for a family when it gains >= 3 % "of memset" on every pattern
   of that family and loses nothing on the others (rerun it: samples vary about 1-2 %).
4. Adopt it by changing the family's default (``gb::DefaultPath`` in kernels/launch.cuh and
   ``catalog.DEFAULT_PATH``, or the family's kernels' path), then rerun this script and
   ``python -m gpubcast bench``.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import json
import multiprocessing
import re
import time
from dataclasses import dataclass
from collections.abc import Callable

import numpy as np

import gpubcast as gb
from gpubcast import dispatch
from gpubcast.bench import measure
from gpubcast.cuda import catalog, compiler, launch, sources
from gpubcast.cuda.sources import FAMILIES

M, K = 16384, 4096
F32 = np.dtype(np.float32)
AXPB = ("T a, T x, T b", "T z", "z = a * x + b", "axpb")   # the benchmark's user kernel (gpubcast/bench/peers.py)


@dataclass(frozen=True)
class Pattern:
    """One pattern: its op, its inputs' shapes (large: the benchmark's; small: the virtual device's, laid out
    alike: lane chunks, padded rows, partial tiles), how gpubcast plans it, and NumPy's/CuPy's result."""
    name: str
    op: str                      # copy | add | where | axpb (the user kernel)
    large: tuple                 # input shapes
    small: tuple
    target: tuple | None         # copy: the target shape (large, small)
    rule: str = "numpy"
    axes_mapping: tuple | None = None
    bool_first: bool = False     # where: the first input is the condition


PATTERNS = (
    Pattern("fill", "copy", ((1,),), ((1,),), ((M, K), (24, 512)), rule="numpy_to"),
    Pattern("copy column", "copy", ((M, 1),), ((24, 1),), ((M, K), (24, 512)), rule="numpy_to"),
    Pattern("copy row", "copy", ((1, K),), ((1, 512),), ((M, K), (24, 512)), rule="numpy_to"),
    Pattern("expand", "copy", ((4096, 1),), ((16, 1),), ((8, 1, 4096), (2, 1, 512)), rule="bidirectional"),
    Pattern("explicit", "copy", ((64, 56),), ((4, 56),), ((384, 64, 56, 56), (2, 4, 8, 56)), rule="explicit",
            axes_mapping=(1, 3)),
    Pattern("outer", "add", ((M, 1), (1, K)), ((24, 1), (1, 512)), None),
    Pattern("row", "add", ((M, K), (K,)), ((24, 512), (512,)), None),
    Pattern("same", "add", ((2**26,), (2**26,)), ((5000,), (5000,)), None),
    Pattern("where", "where", ((M, 1), (M, K), (1, K)), ((24, 1), (24, 512), (1, 512)), None, bool_first=True),
    Pattern("axpb", "axpb", ((1, 64, 1, 1), (384, 64, 56, 56), (1, 64, 1, 1)),
            ((1, 4, 1, 1), (2, 4, 8, 56), (1, 4, 1, 1)), None),
)
BY_NAME = {p.name: p for p in PATTERNS}


@dataclass(frozen=True)
class Variant:
    name: str
    path: Callable            # the kernel's own elements per thread -> catalog.Path
    resident: bool = False    # one wave of blocks (grid-stride), not a block a tile


VARIANTS = (
    Variant("default", lambda ept: catalog.Path()),
    Variant("store8", lambda ept: catalog.Path(store=8)),
    Variant("store4", lambda ept: catalog.Path(store=4)),
    Variant("chunk8", lambda ept: catalog.Path(store=8, chunk=8)),
    Variant("chunk4", lambda ept: catalog.Path(store=4, chunk=4)),
    Variant("stream", lambda ept: catalog.Path(stream=True)),
    Variant("span4", lambda ept: catalog.Path(span=4)),
    Variant("span16", lambda ept: catalog.Path(span=16)),
    Variant("t128", lambda ept: catalog.Path(threads=128)),
    Variant("t512", lambda ept: catalog.Path(threads=512)),
    Variant("ept/2", lambda ept: catalog.Path(ept=max(1, ept // 2))),
    Variant("ept*2", lambda ept: catalog.Path(ept=ept * 2)),
    Variant("stream+span4", lambda ept: catalog.Path(stream=True, span=4)),
    Variant("resident grid", lambda ept: catalog.Path(), resident=True),
)
VARIANT_NAMES = {v.name: v for v in VARIANTS}


# ---- arrays and launches ---------------------------------------------------------------------------

class Arrays:
    """A pattern's device inputs and output (``make(shape, dtype)``: a new device array of values)."""

    def __init__(self, cp, pattern: Pattern, small: bool, make):
        shapes = pattern.small if small else pattern.large
        self.pattern, self.cp = pattern, cp
        self.ins = [make(s, np.dtype(bool) if pattern.bool_first and i == 0 else F32) for i, s in enumerate(shapes)]
        target = pattern.target and pattern.target[1 if small else 0]
        if pattern.op != "copy":
            out_shape = np.broadcast_shapes(*shapes)
        else:
            out_shape = np.broadcast_shapes(shapes[0], target) if pattern.rule == "bidirectional" else target
        self.shape, self.target = tuple(out_shape), target
        self.out = cp.empty(self.shape, F32)
        self.moved = sum(x.nbytes for x in self.ins) + self.out.nbytes

    def reference(self):
        """The pattern's values, computed by ``cp`` (CuPy on a GPU, NumPy's on the virtual device)."""
        cp, x = self.cp, self.ins
        if self.pattern.op == "copy":
            if self.pattern.rule == "explicit":
                c, w = x[0].shape
                return cp.ascontiguousarray(cp.broadcast_to(x[0].reshape(1, c, 1, w), self.shape))
            return cp.ascontiguousarray(cp.broadcast_to(x[0], self.shape))
        if self.pattern.op == "add":
            return x[0] + x[1]
        if self.pattern.op == "where":
            return cp.where(x[0], x[1], x[2])
        t = x[0] * x[1]                                 # two kernels: no fused multiply-add in the reference
        return t + x[2]

    def public_call(self) -> Callable:
        """The call a user makes for the pattern: what gpubcast launches (the default row must equal it)."""
        p, x, out = self.pattern, self.ins, self.out
        if p.op == "copy" and p.rule == "bidirectional":
            return lambda: gb.expand(x[0], self.target, out=out)
        if p.op == "copy":
            mode = "explicit" if p.rule == "explicit" else "numpy"
            return lambda: gb.broadcast_to(x[0], self.shape, mode=mode, axes_mapping=p.axes_mapping, out=out)
        if p.op == "add":
            return lambda: gb.add(x[0], x[1], out=out)
        if p.op == "where":
            return lambda: gb.where(x[0], x[1], x[2], out=out)
        k = gb.ElementwiseKernel(*AXPB)
        return lambda: k(x[0], x[1], x[2], out)


def _template(a: Arrays, path: catalog.Path):
    """The one launch template of ``a``'s built-in pattern on store ``path`` (``launch.templates_for``, the
    templates the CUDA backend fills, over the plan dispatch makes)."""
    p = a.pattern
    plan = dispatch.plan_for(a.ins, p.rule, -1, p.axes_mapping, None, 0, a.target if p.op == "copy" else None)
    (t,) = launch.templates_for(p.op, plan, tuple(x.dtype for x in a.ins), F32, (False,) * len(a.ins), path)
    return t


def _user_launch(a: Arrays, path: catalog.Path):
    """The user kernel's launch (``elementwise_build.GpuLaunch``) on store ``path``."""
    from gpubcast.sass import model
    return model.user_kernel_launch(AXPB, [x.shape for x in a.ins], "float32", path,
                                    [x.data.ptr for x in a.ins] + [a.out.data.ptr])[1]


def own_ept(a: Arrays) -> int:
    """Elements per thread of the pattern's default kernel (a tile's, not a lane tile's: catalog.Kernels.ept)."""
    if a.pattern.op == "axpb":
        general = "_contig<" not in _user_launch(a, catalog.Path()).name
        return catalog.general_ept(4) if general else catalog.contig_ept(4)
    kern = catalog.kernels_for(gb.ops.get(a.pattern.op), tuple(x.dtype for x in a.ins), F32)
    return kern.ept(32 if "_general<" in _template(a, catalog.Path()).name else None)


def launch_of(a: Arrays, variant: Variant, resident_blocks: Callable | None = None) -> tuple:
    """(family, name expression, argument bytes, grid, block) of ``variant`` on ``a``'s pattern;
    ``resident_blocks(family, name, block)``: the blocks all SMs hold at once (a resident grid's size)."""
    path = variant.path(own_ept(a))
    if a.pattern.op == "axpb":
        lc = _user_launch(a, path)
        found = [lc.family, lc.name, lc.params, lc.grid, lc.block]
    else:
        t = _template(a, path)
        operands = [launch.Operand(F32, a.out.data.ptr)] + [launch.Operand(x.dtype, x.data.ptr) for x in a.ins]
        found = [t.family, t.name, launch.pack(t, operands, FAMILIES[t.family].nin), t.grid, path.threads]
    if variant.resident:
        found[3] = max(1, min(found[3], resident_blocks(*found[:2], found[4]) if resident_blocks else 132 * 8))
    return tuple(found)


@dataclass
class Row:
    """One row: a pattern's output written by one launch (or by memset / memcpy: no kernel)."""
    pattern: str
    variant: str
    arrays: Arrays
    family: str = ""
    kernel: str = ""             # name expression
    params: bytes = b""
    grid: int = 0
    block: int = 0
    run: Callable | None = None  # one launch
    moved: int = 0               # bytes the row moves (the pattern's traffic; memcpy: twice the output)


def rows(cp, *, small: bool, patterns, variants, make, resident_blocks=None) -> list[Row]:
    """The reference rows (where ``cp`` has a runtime: memset, memcpy) and every (pattern, variant) row."""
    from gpubcast import backends
    backend = backends.get("cuda")
    runtime = getattr(cp.cuda, "runtime", None)
    found = []
    for pattern in patterns:
        a = Arrays(cp, pattern, small, make)
        if hasattr(runtime, "memsetAsync"):                 # the virtual device has neither
            src = cp.empty(a.shape, F32)
            found.append(Row(pattern.name, "memset", a, moved=a.out.nbytes,
                             run=lambda a=a: runtime.memsetAsync(a.out.data.ptr, 0, a.out.nbytes, 0)))
            found.append(Row(pattern.name, "memcpy", a, moved=2 * a.out.nbytes,
                             run=lambda a=a, src=src: runtime.memcpyAsync(a.out.data.ptr, src.data.ptr, a.out.nbytes,
                                                                          runtime.memcpyDeviceToDevice, 0)))
        for v in variants:
            family, name, params, grid, block = launch_of(a, v, resident_blocks)
            found.append(Row(pattern.name, v.name, a, family, name, params, grid, block,
                             _launcher(backend, family, name, params, grid, block), a.moved))
    return found


def _launcher(backend, family: str, name: str, params: bytes, grid: int, block: int) -> Callable:
    """One launch of kernel ``name`` (loaded on the first) with argument ``params``, on the current stream."""
    arg = np.frombuffer(params, np.dtype((np.void, len(params))))
    kernel = []

    def run():
        if not kernel:
            kernel.append(backend.function(family, name))
        kernel[0]((grid,), (block,), (arg,))
    return run


def precompile(kernels, arch: str, jobs: int) -> float:
    """``kernels`` ((family, name expression) pairs) into the runtime cache, ``jobs`` NVRTC processes at a
    time (``kernels_cli.compile_into_cache``); the seconds taken.  A kernel NVRTC rejects raises."""
    from gpubcast.kernels_cli import compile_into_cache
    t0 = time.perf_counter()
    tasks = sorted(set(kernels))
    ctx = multiprocessing.get_context("spawn")              # CUDA is initialised in this process: no fork
    with concurrent.futures.ProcessPoolExecutor(max(1, jobs), mp_context=ctx) as pool:
        done = list(pool.map(compile_into_cache, *zip(*[(f, n, arch, sources.generated_entry(f)) for f, n in tasks])))
    errors = [error for _, error, _ in done if error]
    if errors:
        raise RuntimeError(f"{len(errors)} of {len(tasks)} kernels did not compile; the first:\n{errors[0]}")
    return time.perf_counter() - t0


def _blocks_per_sm(backend):
    """(family, name, block) -> the blocks of ``block`` threads an SM holds at once (the driver's occupancy
    query), or None where the driver cannot say."""
    from cupy_backends.cuda.api import driver

    def blocks(family, name, block):
        try:
            return driver.occupancyMaxActiveBlocksPerMultiprocessor(backend.function(family, name).ptr, block, 0)
        except Exception:  # noqa: BLE001 - a driver without the query: the column stays empty, the run goes on
            return None
    return blocks


def run(cp, *, small: bool, repeat: int, gpu: bool, patterns=PATTERNS, variants=VARIANTS, jobs: int = 1,
        out=print) -> list[dict]:
    """Each row's first launch checked against the reference (its output poisoned before), then timed
    (``gpu``: CUDA events); on the virtual device each default row's launch is also checked to be the one
    gpubcast's own call makes.  The rows as dicts; the table printed."""
    from gpubcast import backends
    if gpu:
        def make(shape, dt):                                # on the device: no host copies
            x = cp.random.random(shape, np.float32)
            return x < 0.5 if dt.kind == "b" else x
        per_sm = _blocks_per_sm(backends.get("cuda"))
        sms = cp.cuda.Device().attributes["MultiProcessorCount"]

        def resident(family, name, block):
            return sms * (per_sm(family, name, block) or 2048 // block)
    else:
        rng = np.random.default_rng(0)

        def make(shape, dt):
            return cp.asarray(rng.random(shape) < 0.5 if dt.kind == "b" else rng.random(shape, np.float32))
        per_sm = resident = None
    found = rows(cp, small=small, patterns=patterns, variants=variants, make=make, resident_blocks=resident)
    if gpu:
        arch = compiler.arch_for(cp.cuda.Device().compute_capability)
        n = len({r.kernel for r in found if r.kernel})
        seconds = precompile([(r.family, r.kernel) for r in found if r.kernel], arch, jobs)
        out(f"compiled {n} kernels for {arch} in {seconds:.0f} s")
    else:
        from gpubcast.testing import virtual
        virtual.prepare(sorted({(r.family, r.kernel) for r in found if r.kernel}))
    wanted: dict = {}
    results = []
    for r in found:
        a = r.arrays
        if a not in wanted:
            wanted[a] = a.reference()
            if not gpu:                                     # the default row is gpubcast's own launch
                a.public_call()()
                public = cp.launches[-1]
                default = next((x for x in found if x.arrays is a and x.variant == "default"), None)
                if default and (public[0], public[4]) != (default.kernel, default.params):
                    raise AssertionError(f"{a.pattern.name}: gpubcast launches {public[0]}, not the default row's "
                                         f"{default.kernel} with its argument")
        first = len(getattr(cp, "launches", ()))
        a.out.fill(np.nan)
        r.run()
        if r.kernel and not bool(cp.array_equal(a.out, wanted[a])):
            raise AssertionError(f"{r.pattern}, {r.variant} ({r.kernel}): the output differs from the reference")
        launched = [x[0] for x in getattr(cp, "launches", ())[first:]]
        t = measure.time_cuda([r.run], repeat=repeat, min_sample_s=0.002) if gpu else None
        results.append({
            "pattern": r.pattern, "variant": r.variant, "kernel": r.kernel, "launched": launched, "grid": r.grid,
            "block": r.block, "blocks_per_sm": per_sm(r.family, r.kernel, r.block) if per_sm and r.kernel else None,
            "bytes_written": a.out.nbytes, "bytes_moved": r.moved,
            "seconds_median": t.median_s if t else None, "samples_s": list(t.samples) if t else None,
            "gbps_written": measure.gbps(a.out.nbytes, t.median_s) if t else None,
            "gbps_moved": measure.gbps(r.moved, t.median_s) if t else None})
    ratios(results)
    table(results, out)
    return results


def ratios(results) -> None:
    """Each row's "of memset" (GB/s written over its pattern's memset's) and "of memcpy" (GB/s moved over its
    pattern's memcpy's), None where either is missing."""
    ref = {(r["pattern"], r["variant"]): r for r in results if r["variant"] in ("memset", "memcpy")}
    for r in results:
        memset, memcpy = ref.get((r["pattern"], "memset")), ref.get((r["pattern"], "memcpy"))
        r["of_memset"] = r["gbps_written"] / memset["gbps_written"] if memset and r["gbps_written"] else None
        r["of_memcpy"] = r["gbps_moved"] / memcpy["gbps_moved"] if memcpy and r["gbps_moved"] else None


def _cell(x, spec: str) -> str:
    return "-" if x is None else format(x, spec)


def table(results, out=print) -> None:
    out(f"{'pattern':<12} {'variant':<14} {'grid':>8} {'block':>5} {'blk/SM':>6} {'GB/s written':>12} "
        f"{'of memset':>9} {'GB/s moved':>10} {'of memcpy':>9}  kernel")
    for r in results:
        out(f"{r['pattern']:<12} {r['variant']:<14} {r['grid']:>8} {r['block']:>5} {_cell(r['blocks_per_sm'], 'd'):>6} "
            f"{_cell(r['gbps_written'], '.0f'):>12} {_cell(r['of_memset'], '.3f'):>9} "
            f"{_cell(r['gbps_moved'], '.0f'):>10} {_cell(r['of_memcpy'], '.3f'):>9}  {short(r['kernel'])}")


def short(name: str) -> str:
    """A name expression without its namespaces: ``copy_general<Copy, Bytes<4>, u32>``."""
    return re.sub(r"\b(gb|ewk_[0-9a-f]+)::", "", name)


# ---- --static: what the SASS interpreter sees --------------------------------------------------------

class _Buffer:
    """A zero-filled buffer of ``interpreter.Memory`` with what ``Arrays`` and the planner read of an array."""

    def __init__(self, memory, shape, dtype):
        a = np.zeros(shape, dtype)
        self.shape, self.dtype, self.strides, self.itemsize, self.nbytes = a.shape, a.dtype, a.strides, a.itemsize, \
            a.nbytes
        self.data = type("Pointer", (), {"ptr": memory.add(a)})()


class _Memory:
    """Just enough of CuPy for ``Arrays`` over ``interpreter.Memory``: ``empty``."""

    def __init__(self):
        from gpubcast.sass import interpreter
        self.memory = interpreter.Memory()

    def empty(self, shape, dtype):
        return _Buffer(self.memory, shape, dtype)


def static(patterns, variants, out=print) -> list[dict]:
    """Each row's launch at the GPU shapes over zero-filled memory, one block in its middle run by the SASS
    interpreter (sm_90, ``model.run_block``): instructions and L1 lines per element, store requests per
    element, store sector fill.  Rows of other than 256 threads a block are left out (the interpreter runs
    blocks of 256)."""
    from gpubcast.sass import model
    found = []
    for pattern in patterns:
        host = _Memory()
        a = Arrays(host, pattern, False, host.empty)
        for v in variants:
            family, name, params, grid, block = launch_of(a, v)
            if block != launch.BLOCK:
                continue
            r = model.run_block(v.name, family, name, params, grid, host.memory,
                                (a.out.data.ptr, a.out.data.ptr + a.out.nbytes), F32.itemsize)
            found.append({"pattern": pattern.name, "variant": v.name, "kernel": name,
                          "instr_per_elem": r.instr_per_elem, "l1_lines_per_elem": r.l1_lines_per_elem,
                          "store_requests_per_elem": r.store_requests_per_elem,
                          "store_sector_fill": r.store_sector_fill})
            out(f"{pattern.name:<12} {v.name:<14} instr/elem {r.instr_per_elem:6.2f}  L1 lines/elem "
                f"{r.l1_lines_per_elem:.3f}  store requests/elem {r.store_requests_per_elem:.4f}  "
                f"store sector fill {r.store_sector_fill:.2f}")
    return found


def main(argv=None, out=print) -> list[dict]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=5, help="timed samples per row (default 5)")
    ap.add_argument("--json", help="also write the rows to this file")
    ap.add_argument("--patterns", help=f"comma-separated, of: {', '.join(BY_NAME)} (default: all)")
    ap.add_argument("--variants", help=f"comma-separated, of: {', '.join(VARIANT_NAMES)} (default: all)")
    ap.add_argument("--jobs", type=int, default=0, help="NVRTC processes compiling the kernels (default: cores - 2)")
    mode = ap.add_mutually_exclusive_group()
    mode.add_argument("--virtual", action="store_true",
                      help="small shapes on the virtual CUDA device: every row's kernel run and checked, not timed")
    mode.add_argument("--static", action="store_true",
                      help="each row's stores at the GPU shapes as the SASS interpreter (sm_90) sees them")
    args = ap.parse_args(argv)
    patterns = _pick(args.patterns, BY_NAME, "pattern")
    variants = _pick(args.variants, VARIANT_NAMES, "variant")
    if args.static:
        results = static(patterns, variants, out)
        device = "static (sm_90 SASS interpreter)"
    elif args.virtual:
        from gpubcast.testing import virtual
        with virtual.installed() as cp:
            results = run(cp, small=True, repeat=args.repeat, gpu=False, patterns=patterns, variants=variants,
                          out=out)
        device = "virtual"
    else:
        import os

        import cupy
        jobs = args.jobs or max(1, (os.cpu_count() or 4) - 2)
        results = run(cupy, small=False, repeat=args.repeat, gpu=True, patterns=patterns, variants=variants,
                      jobs=jobs, out=out)
        name = cupy.cuda.runtime.getDeviceProperties(0)["name"]
        device = name.decode() if isinstance(name, bytes) else name
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": device, "rows": results}, f, indent=1)
    return results


def _pick(arg, table_, what):
    if not arg:
        return tuple(table_.values())
    names = [n.strip() for n in arg.split(",")]
    bad = [n for n in names if n not in table_]
    if bad:
        raise SystemExit(f"unknown {what} {bad[0]!r}; known: {', '.join(table_)}")
    return tuple(table_[n] for n in names)


if __name__ == "__main__":
    main()
