"""``python -m gpubcast kernels``: compile every CUDA kernel with NVRTC, or run them emulated on the CPU.

    --check [--arch sm_80 sm_90] [--fast] [--emit DIR]
        compile every instantiation the dispatcher can request, per family and architecture,
        with NVRTC (no GPU needed); non-zero exit on any failure.  --fast compiles PTX for
        the virtual architecture (compute_XX) with --Ofast-compile=max: every instantiation
        goes through NVRTC's front end and code generation, not through ptxas (programs of
        catalog.FAST_PROGRAM instantiations, kept in the cache: the virtual CUDA device runs
        the kernels of the same programs, so one compile serves both).  --emit
        writes the PTX of each program into DIR.
    --warm [--arch sm_90]
        fill the runtime kernel cache (what a GPU compiles on first use) for the given
        architecture, default the current device's, in parallel.
    --resources [--arch sm_80 sm_90]
        static resource report of the hot kernels (gpubcast.sass.resources): registers, spills,
        local memory, occupancy at the launch block size, global access widths and instructions
        per element, from ptxas's report and the SASS (cuobjdump, nvdisasm); no GPU needed.
    --model
        a static model of each benchmark pattern's fraction of copy bandwidth on an H100 (sm_90),
        from the SASS of the kernel it launches (gpubcast.sass.model); a model, nothing measured.
    --emulate [--seed N] [--cases N]
        run every kernel family on the CPU (host emulation harness) over the benchmark
        patterns and random cases, against the NumPy reference; non-zero exit on any mismatch.
"""

from __future__ import annotations

import concurrent.futures
import os
import time
from pathlib import Path


def configure(parser) -> None:
    parser.add_argument("--check", action="store_true", help="compile every instantiation with NVRTC")
    parser.add_argument("--emulate", action="store_true", help="run every kernel family under host emulation")
    parser.add_argument("--warm", action="store_true",
                        help="compile every kernel into the runtime cache (default arch: the current GPU's)")
    parser.add_argument("--resources", action="store_true",
                        help="static resource report of the hot kernels (registers, spills, occupancy, SASS)")
    parser.add_argument("--model", action="store_true",
                        help="static model: each benchmark pattern's fraction of copy bandwidth on an H100")
    parser.add_argument("--arch", nargs="+", default=None, metavar="SM",
                        help="architectures for --check and --resources (default: sm_80 sm_90) "
                             "or --warm (default: the GPU's)")
    parser.add_argument("--fast", action="store_true",
                        help="--check: PTX for compute_XX with --Ofast-compile=max (no ptxas)")
    parser.add_argument("--emit", metavar="DIR", help="--check: write each program's PTX into DIR")
    parser.add_argument("--family", nargs="+", choices=["unary", "binary", "ternary", "variadic", "copy"],
                        help="limit to these families")
    parser.add_argument("--jobs", type=int, default=min(2, os.cpu_count() or 1),
                        help="parallel NVRTC / g++ processes (default: 2)")
    parser.add_argument("--seed", type=int, default=0, help="--emulate: random seed")
    parser.add_argument("--cases", type=int, default=400, help="--emulate: random cases")


def _compile_task(family, arch, names, fast, emit):
    from .cuda import compiler
    t0 = time.perf_counter()
    try:
        if fast:   # the cached programs the virtual CUDA device takes its kernels from too
            ptx, _ = compiler.fast_program(family, tuple(names), arch)
        else:
            compiler.compile_family(family, names, arch)
            ptx = compiler.fast_program(family, tuple(names), arch.replace("sm_", "compute_"))[0] if emit else None
    except compiler.CompileError as e:
        return family, arch, len(names), str(e), time.perf_counter() - t0, None
    return family, arch, len(names), "", time.perf_counter() - t0, ptx if emit else None


def _map(fn, tasks, jobs):
    """fn(*task) for every task: in this process (jobs <= 1) or in ``jobs`` worker processes."""
    if jobs <= 1 or len(tasks) <= 1:
        return [fn(*t) for t in tasks]
    with concurrent.futures.ProcessPoolExecutor(jobs) as pool:
        return list(pool.map(fn, *zip(*tasks), chunksize=max(1, len(tasks) // (8 * jobs))))


def check(arches, families=None, *, fast=False, emit=None, jobs=2, out=print) -> int:
    """Compile every instantiation of ``families`` for ``arches``; print counts; 0 when all compiled."""
    from .cuda import catalog, compiler
    compiler.nvrtc_module()                     # fail early with a clear message
    every = catalog.every_instantiation()
    tasks = []
    for arch in arches:
        if not arch.startswith(("sm_", "compute_")) or not arch.split("_")[1].isdigit():
            out(f"error: --arch takes names like sm_80 or sm_90, not {arch!r}")
            return 2
        target = arch.replace("sm_", "compute_") if fast else arch
        for family in every:
            if not families or family in families:
                tasks += [(family, target, list(names), fast, bool(emit)) for names in catalog.fast_programs(family)]
    totals: dict = {}
    failures = []
    t0 = time.perf_counter()
    for family, arch, n, error, seconds, ptx in _map(_compile_task, tasks, jobs):
        row = totals.setdefault((family, arch), [0, 0, 0.0, 0])
        row[0 if not error else 1] += n
        row[2] += seconds
        if error:
            failures.append(error)
        if emit and ptx:
            Path(emit).mkdir(parents=True, exist_ok=True)
            path = Path(emit) / f"{family}-{arch}-{row[3]}.ptx"
            path.write_bytes(ptx)
            row[3] += 1
    mode = "PTX, --Ofast-compile=max" if fast else "runtime options"
    out(f"NVRTC {'.'.join(map(str, compiler.nvrtc_version()))}, {mode}, {len(tasks)} programs, "
        f"{time.perf_counter() - t0:.1f} s wall")
    out(f"{'family':10s} {'arch':12s} {'compiled':>9s} {'failed':>7s} {'cpu s':>7s}")
    for (family, arch), (ok, bad, seconds, _) in totals.items():
        out(f"{family:10s} {arch:12s} {ok:9d} {bad:7d} {seconds:7.1f}")
    for error in failures[:3]:
        out(error)
    return 1 if failures else 0


def compile_into_cache(family, name, arch, entry=None):
    """Kernel ``name`` of ``family`` for ``arch`` into the runtime (disk) cache, as a GPU compiles it on first
    use (a worker process's task: ``entry``, a generated family's ``sources.generated_entry``, registers it
    here first); (family, NVRTC's error or "", seconds)."""
    from .cuda import compiler, sources
    if entry is not None:
        sources.adopt(family, entry)
    t0 = time.perf_counter()
    try:
        compiler.cached_kernel(family, name, arch)
    except compiler.CompileError as e:
        return family, str(e), time.perf_counter() - t0
    return family, "", time.perf_counter() - t0


def warm(arches=None, families=None, *, jobs=2, out=print) -> int:
    """Compile every kernel into the runtime (disk) cache, one NVRTC program each, as a GPU
    would on first use; 0 when all compiled."""
    from . import cache
    from .cuda import catalog, compiler
    if not arches:
        try:
            import cupy
            arches = [compiler.arch_for(cupy.cuda.Device().compute_capability)]
        except Exception as e:  # noqa: BLE001 - no CuPy or no device
            out(f"error: no CUDA device to take the architecture from ({type(e).__name__}); say --arch sm_XX")
            return 2
    tasks = [(family, name, arch) for arch in arches
             for family, kernels in catalog.every_instantiation().items() if not families or family in families
             for k in kernels for name in k.names()]
    t0 = time.perf_counter()
    counts: dict = {}
    errors = []
    for family, error, _ in _map(compile_into_cache, tasks, jobs):
        counts.setdefault(family, [0, 0])[1 if error else 0] += 1
        if error:
            errors.append(error)
    for family, (ok, bad) in counts.items():
        out(f"{family:10s} {', '.join(arches)}: {ok} cached, {bad} failed")
    out(f"cache {cache.directory('nvrtc')} ({time.perf_counter() - t0:.1f} s)")
    for error in errors[:3]:
        out(error)
    return 1 if errors else 0


def resources(arches, jobs=2, out=print) -> int:
    """Print the static resource table of the hot kernels for ``arches``; 0 when it was made."""
    from .cuda import compiler
    from .sass import cubins, resources as res
    why = cubins.unavailable()
    if why:
        out(f"error: the resource report cannot be made here: {why}")
        return 2
    bad = [a for a in arches if not a.startswith("sm_") or not a[3:].isdigit()]
    if bad:
        out(f"error: --resources takes real architectures like sm_80 or sm_90, not {bad[0]!r}")
        return 2
    t0 = time.perf_counter()
    rows = res.report(arches, jobs=jobs)
    out(f"Static, from the SASS and ptxas's report (nothing measured on a GPU): NVRTC "
        f"{'.'.join(map(str, compiler.nvrtc_version()))}, runtime options, {len(rows)} kernels, "
        f"block {res.launch.BLOCK} ({time.perf_counter() - t0:.1f} s)")
    out("")
    out(res.table(rows))
    return 0


def model(out=print) -> int:
    """Print the static bandwidth model of the benchmark patterns (H100, sm_90); 0 when it was made."""
    from .sass import cubins, model as mdl
    why = cubins.unavailable()
    if why:
        out(f"error: the bandwidth model cannot be made here: {why}")
        return 2
    out(f"A static model, not a measurement (+-15 %): H100 SXM sm_90, {mdl.SMS} SMs at {mdl.CLOCK_HZ / 1e9:g} GHz, "
        f"DRAM {mdl.DRAM_BW / 1e12:g} TB/s x {mdl.ACHIEVABLE:g}, L2 {mdl.L2_BW / 1e12:g} TB/s; the "
        f"benchmark's GPU shapes; fraction = copy time for the same DRAM bytes / predicted time")
    for dtype in mdl.DTYPES:
        hardware = mdl.measured(dtype=dtype.name)
        out("")
        out(f"{dtype.name}:" + (f" (last column: measured on the H100 run {mdl.H100_RUN}, an earlier commit's kernels)"
                                if hardware else ""))
        out("")
        out(mdl.table(mdl.predict_all(dtype.name), hardware))
    out("")
    out("User kernels (gpubcast.ElementwiseKernel) beside the built-in binary kernel on the same shapes, float32: "
        "one block in the middle of each launch run by the SASS interpreter (sm_90), per output element:")
    out("")
    out(mdl.block_table(mdl.user_kernel_rows()))
    return 0


def emulate(seed=0, n_cases=400, jobs=2, out=print) -> int:
    """Run the benchmark patterns and random cases on the emulated kernels; 0 when all agree."""
    import numpy as np

    from .testing import checks, emulate as em
    why = em.available()
    if why:
        out(f"error: host emulation is not available here: {why}")
        return 2
    t0 = time.perf_counter()
    emulator = em.Emulator(checks.emulation_kernels(), jobs=jobs)
    out(f"host emulation: {len(emulator.names())} kernel instantiations built in {time.perf_counter() - t0:.1f} s")
    rng = np.random.default_rng(seed)
    runs = [
        ("benchmark patterns", em.EmulatedBackend(emulator), checks.benchmark_patterns(rng)),
        ("benchmark patterns, float16", em.EmulatedBackend(emulator), checks.benchmark_patterns(rng, np.float16)),
        ("benchmark patterns, 64-bit indices", em.EmulatedBackend(emulator, index64_above=0),
         checks.benchmark_patterns(rng)),
        ("benchmark patterns, 1-block grid", em.EmulatedBackend(emulator, grid=1), checks.benchmark_patterns(rng)),
        (f"random cases (seed {seed})", em.EmulatedBackend(emulator), checks.random_cases(rng, n_cases)),
        ("random cases, 64-bit indices", em.EmulatedBackend(emulator, index64_above=0),
         checks.random_cases(rng, max(1, n_cases // 4))),
    ]
    failed = 0
    out(f"{'run':38s} {'family':10s} {'passed':>7s} {'failed':>7s}")
    for title, backend, cases in runs:
        with em.registered(backend):
            results = checks.check(cases, backend.name)
        by_family: dict = {}
        for case, ok, _ in results:
            by_family.setdefault(case.family, [0, 0])[0 if ok else 1] += 1
        for family, (ok, bad) in sorted(by_family.items()):
            out(f"{title:38s} {family:10s} {ok:7d} {bad:7d}")
        for case, ok, detail in results:
            if not ok:
                failed += 1
                if failed <= 10:
                    out(f"  MISMATCH {case.name}: {detail}")
    kinds = {lc.name.split("<")[0] for _, backend, _ in runs for lc in backend.launches}
    out(f"kernels run: {', '.join(sorted(kinds))}")
    out(f"{'all agree' if not failed else f'{failed} mismatches'} ({time.perf_counter() - t0:.1f} s)")
    return 1 if failed else 0


def run(args) -> int:
    if not (args.check or args.emulate or args.warm or args.resources or args.model):
        print("python -m gpubcast kernels: say --check (compile with NVRTC), --warm (fill the runtime cache), "
              "--resources (static resource report), --model (static bandwidth model) and/or --emulate "
              "(run on the CPU)")
        return 2
    rc = 0
    if args.check:
        rc |= check(args.arch or ["sm_80", "sm_90"], args.family, fast=args.fast, emit=args.emit, jobs=args.jobs)
    if args.warm:
        rc |= warm(args.arch, args.family, jobs=args.jobs)
    if args.resources:
        rc |= resources(args.arch or ["sm_80", "sm_90"], jobs=args.jobs)
    if args.model:
        if args.resources:
            print()
        rc |= model()
    if args.emulate:
        rc |= emulate(args.seed, args.cases, args.jobs)
    return rc
