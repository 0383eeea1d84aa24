"""``python -m gpubcast bench``: the pattern suite on every backend found, against the measured
ceilings, the fused chains, the math table, the small calls and the size sweep; tables on the
terminal, ``--json PATH`` and ``--plot PATH`` (the sweep's plot beside it, ``sweep_plot_path``).
``--sweep`` runs the size sweep alone (its plot at PATH)."""

from __future__ import annotations

import datetime
import platform
import sys

import numpy as np

#: --backends accepts these names (gpubcast-cpu: whichever gpubcast CPU backend runs)
BACKENDS = ("numpy", "gpubcast-numba", "gpubcast-numpy", "gpubcast-cpu", "onnxruntime", "cupy",
            "gpubcast-cuda", "torch")


def _names(text: str) -> list[str]:
    return [n.strip() for n in text.split(",") if n.strip()]


def configure(parser) -> None:
    from .patterns import BY_NAME

    parser.add_argument("--quick", action="store_true",
                        help="fewer and shorter samples, the math table on a quarter of its elements and without goals "
                             "(the pattern suite in about a minute on 2 CPU cores, the math table about 40 s more)")
    parser.add_argument("--size", choices=("tiny", "large", "both"), default="both",
                        help="tiny: per-call latency; large: bandwidth (default: both)")
    parser.add_argument("--patterns", type=_names, metavar="A,B",
                        help=f"comma-separated patterns (default all): {', '.join(BY_NAME)}; the fused "
                             f"chains fused-affine, fused-gelu, fused-where, fused-swish; the math table "
                             f"'math' or its rows math-sin, math-gelu, math-hypot-outer, ... (named: at every "
                             f"--size; by default: at large only)")
    parser.add_argument("--backends", type=_names, metavar="A,B",
                        help=f"comma-separated backends (default: all found): {', '.join(BACKENDS)}")
    parser.add_argument("--dtype", default="float32", help="element type (default float32; e.g. float64, "
                        "float16, bfloat16, int32)")
    parser.add_argument("--repeat", type=int, help="samples per case (default 15, 5 with --quick)")
    parser.add_argument("--sets", type=int, help="input sets rotated per case (default 3, 2 with --quick)")
    parser.add_argument("--threads", type=int, default=2, help="onnxruntime intra-op threads (default 2)")
    parser.add_argument("--json", metavar="PATH", help="write the results as JSON (schema: gpubcast/bench/schema.json)")
    parser.add_argument("--plot", metavar="PATH", help="write a PNG bar chart of GB/s per pattern and backend")
    parser.add_argument("--no-fused", dest="fused", action="store_false",
                        help="skip the fused chains (gpubcast.fuse against the same chain op by op and its peers)")
    parser.add_argument("--no-math", dest="math", action="store_false",
                        help="skip the math table (each new math function and activation against NumPy, issue #22)")
    parser.add_argument("--sweep", nargs="?", const="all", choices=("all", "cpu", "gpu"),
                        help="only the size sweep (float32; CPU: 1K-16M elements against NumPy, PyTorch, JAX; GPU: "
                             "every pattern at 4 KB-1 GB against CuPy and torch), on every device found, or on "
                             "'cpu' or 'gpu' alone; the default run includes it (at fewer sizes with --quick); "
                             "--plot PATH draws it")
    parser.add_argument("--no-sweep", dest="with_sweep", action="store_false",
                        help="leave the size sweep out of the default run")


def _dtype(name: str) -> np.dtype:
    from gpubcast.dtypes import bfloat16
    if name == "bfloat16":
        return bfloat16
    try:
        return np.dtype(name)
    except TypeError:
        raise ValueError(f"--dtype {name!r} is not a NumPy dtype name (e.g. float32, float16, int64, "
                         f"bfloat16)") from None


def _chosen(peers, names):
    if not names:
        return peers
    unknown = [n for n in names if n not in BACKENDS]
    if unknown:
        raise ValueError(f"unknown backend(s) {', '.join(unknown)}; choose from {', '.join(BACKENDS)}")
    wanted = set(names)
    return [p for p in peers if p.name in wanted or ("gpubcast-cpu" in wanted and p.name in
                                                      ("gpubcast-numba", "gpubcast-numpy"))]


def run(args) -> int:
    try:
        from rich.console import Console
    except ImportError as e:
        print(f"gpubcast bench needs the bench extras ({e}): pip install 'gpubcast[bench]'", file=sys.stderr)
        return 2

    console = Console(highlight=False)
    if not console.is_terminal:  # a log or a pipe: wide enough for the table
        console = Console(highlight=False, width=160)
    try:
        return _run(args, console)
    except ValueError as e:
        console.print(f"gpubcast bench: {e}", style="red", markup=False)
        return 2


def _run(args, console) -> int:
    import gpubcast
    from rich.progress import BarColumn, MofNCompleteColumn, Progress, TextColumn, TimeElapsedColumn

    from gpubcast import host_pool
    from gpubcast.info import cpu_info, gpu_info, versions

    from . import measure, patterns, report
    from .peers import discover
    from .runner import Settings, run_suite

    from . import functions, fused

    dtype = _dtype(args.dtype)
    if args.sweep and args.patterns:
        raise ValueError("--sweep runs the size sweep alone: leave out --patterns")
    if args.sweep and dtype != np.float32:
        raise ValueError(f"the size sweep runs float32 (its sizes are float32 bytes), not --dtype {dtype}")
    names = args.patterns or ([] if not args.sweep else ["sweep"])   # --sweep: nothing else
    fused_names = [n for n in names if n.startswith("fused-")]
    math_names = [n for n in names if n == "math" or n.startswith("math-")]
    plain = [n for n in names if n not in fused_names and n not in math_names and n != "sweep"]
    chosen = patterns.select(plain) if plain or not names else ()
    chains = fused.select([n[len("fused-"):] for n in fused_names]) if fused_names or not names else ()
    rows = functions.select([n[len("math-"):] for n in math_names if n != "math"]) \
        if math_names or not names else ()
    sizes = patterns.SIZES if args.size == "both" else (args.size,)
    preset = Settings.preset(args.quick)
    settings = Settings(repeat=preset.repeat if args.repeat is None else args.repeat,
                        min_sample_s=preset.min_sample_s, sets=preset.sets if args.sets is None else args.sets)
    if settings.repeat < 1 or settings.sets < 1:
        raise ValueError("--repeat and --sets must be at least 1")

    peers, absent = discover(args.threads)
    peers = _chosen(peers, args.backends)
    gpu, why_no_gpu = gpu_info()
    sweep_devices = _sweep_devices(args, names, dtype, gpu)
    what = f"{len(chosen)} patterns × {', '.join(sizes)}, {dtype}" if not args.sweep else "the size sweep, float32"
    console.print(f"gpubcast {gpubcast.__version__} bench: {what}, {settings.repeat} samples, {settings.sets} input "
                  f"sets rotated", markup=False)
    console.print(f"gpubcast's host memory pool: {host_pool.describe()}", markup=False)
    if gpu is None:
        console.print(f"No GPU: {why_no_gpu}; the GPU backends (CuPy, gpubcast CUDA, torch) are not run.",
                      markup=False)
    for name, why in absent.items():
        if name != "gpu":
            console.print(f"{name} not run: {why}", markup=False)
    for peer in peers:
        if peer.note:
            console.print(f"{peer.label}: {peer.note}", markup=False)
    if not peers:
        raise ValueError("none of the chosen backends is present here")

    devices = {p.device for p in peers} if chosen else set()   # the ceilings are the pattern suite's
    ceilings = {}
    with console.status("measuring the machine's ceilings"):
        if "cpu" in devices:
            ceilings["cpu"] = measure.cpu_ceiling(repeat=3 if args.quick else 10)
        if "gpu" in devices:
            ceilings["gpu"] = measure.gpu_ceiling(repeat=10 if args.quick else 30)
    for device, c in ceilings.items():
        console.print(f"{device.upper()} ceiling: {c['gbps']:.1f} GB/s ({c['method']})", markup=False)

    total = sum(1 for _ in chosen for _ in sizes for _ in peers)
    with Progress(TextColumn("{task.description:<40}"), BarColumn(), MofNCompleteColumn(), TimeElapsedColumn(),
                  console=console, transient=True) as bar:
        task, started = bar.add_task("starting", total=total), []

        def progress(text):  # called as each (pattern, size, backend) starts
            bar.update(task, description=text, completed=len(started))
            started.append(text)
        records, skipped = run_suite(chosen, sizes, peers, dtype, settings, ceilings, progress)
        bar.update(task, completed=total)

    tables, notes = report.tables({"records": records, "device": {"gpu": gpu}})
    for table in tables:
        console.print(table)
    for note in notes:
        console.print(note, markup=False)
    for s in skipped:
        console.print(f"skipped {s['pattern']} {s['size']} on {s['backend']}: {s['reason']}", markup=False)
    fused_records = _fused(args, console, chains, sizes, dtype, settings, gpu is not None) \
        if args.fused and chains else []
    math_sizes = sizes if math_names else tuple(s for s in sizes if s == "large")
    math_records = _math(args, console, rows, math_sizes, dtype, settings, peers, skipped) \
        if args.math and rows and math_sizes else []
    call_records = _calls(console, settings) if "tiny" in sizes and not names else []
    sweep = _sweep(console, sweep_devices, args.quick, peers, settings) if sweep_devices else None

    document = {
        "gpubcast_version": gpubcast.__version__,
        "created": datetime.datetime.now(datetime.UTC).isoformat(timespec="seconds"),
        "settings": {"quick": args.quick, "repeat": settings.repeat, "min_sample_s": settings.min_sample_s,
                     "sets": settings.sets, "sizes": list(sizes), "patterns": [p.name for p in chosen],
                     "onnxruntime_threads": args.threads, "host_pool": host_pool.describe(), "command": sys.argv},
        "device": {"cpu": cpu_info(), "gpu": gpu, "gpu_absent_reason": why_no_gpu or None,
                   "versions": versions(), "python": platform.python_version()},
        "ceilings": ceilings,
        "backends": {p.name: {"label": p.label, "device": p.device, "note": p.note} for p in peers},
        "absent": absent,
        "records": records,
        "skipped": skipped,
        "fused": fused_records,
        "fused_goals": fused.comparisons(fused_records),
        "math": math_records,
        "calls": call_records,
        "sweep": sweep,
    }
    if args.json:
        report.write_json(document, args.json)
        console.print(f"wrote {args.json}", markup=False)
    if args.plot:
        if not args.sweep:
            report.plot(document, args.plot)
            console.print(f"wrote {args.plot}", markup=False)
        if sweep:
            path = args.plot if args.sweep else sweep_plot_path(args.plot)
            report.plot_sweep(sweep, path)
            console.print(f"wrote {path}", markup=False)
    return 0


def sweep_plot_path(path: str) -> str:
    """Where the default run draws the sweep beside the suite's chart at ``path``: ``r.png`` -> ``r-sweep.png``."""
    import pathlib
    p = pathlib.Path(path)
    return str(p.with_name(f"{p.stem}-sweep{p.suffix or '.png'}"))


def _sweep_devices(args, names, dtype, gpu) -> tuple[str, ...]:
    """The devices the size sweep runs on: those ``--sweep`` names, or in the default run (no
    --patterns or --backends, both sizes, float32, no --no-sweep) every device found."""
    if args.sweep:
        wanted = ("cpu", "gpu") if args.sweep == "all" else (args.sweep,)
    elif names or args.backends or args.size != "both" or not args.with_sweep or dtype != np.float32:
        return ()
    else:
        wanted = ("cpu", "gpu")
    if args.sweep == "gpu" and gpu is None:
        raise ValueError("--sweep gpu needs a GPU, and CuPy finds none here")
    return tuple(d for d in wanted if d == "cpu" or gpu is not None)


def _sweep(console, devices, quick: bool, peers, settings) -> dict:
    """The size sweep (``gpubcast/bench/sweep.py``) on ``devices``: its tables and the points where another
    library is ahead."""
    from . import report, sweep

    with console.status("size sweep") as status:
        result = sweep.run(devices, quick=quick, peers=peers, settings=settings, progress=status.update)
    for name, why in result["absent"].items():
        console.print(f"size sweep: {name} not run: {why}", markup=False)
    for table in report.sweep_tables(result):
        console.print(table)
    for name, label in result["libraries"].items():
        console.print(f"  {name}: {label}", markup=False)
    for s in result["skipped"]:
        console.print(f"size sweep: skipped {s['pattern']} at {sweep.size_text(s['elements'], s['device'])} on "
                      f"{s['backend']}: {s['reason']}", markup=False)
    for device in devices:
        points = sweep.behind(result["records"], device)
        console.print(f"size sweep {device.upper()}: " + (f"another library is ahead at {len(points)} points: "
                                                           f"{', '.join(points)}" if points else
                                                           "gpubcast is ahead at every point"), markup=False)
    return result


def _calls(console, settings) -> list[dict]:
    """The small calls (``gpubcast/bench/calls.py``): gpubcast against the same call in NumPy, one table."""
    from rich.table import Table

    from . import calls

    with console.status("small calls"):
        records = calls.run(repeat=settings.repeat, min_sample_s=settings.min_sample_s)
    table = Table(title=f"Small calls, {calls.SHAPE} float32, warm: median per call; each gpubcast call as a user "
                        f"writes it; goal (issue 42): <= {calls.GOAL:g}x NumPy's closest call", title_justify="left")
    for col in ("call", "gpubcast", "peer", "peer's", "gpubcast / peer", "goal"):
        table.add_column(col, justify="left" if col in ("call", "peer", "goal") else "right")
    for r in records:
        table.add_row(r["call"], f"{r['gpubcast_s'] * 1e6:.2f} us", r["peer"],
                      "" if r["peer_s"] is None else f"{r['peer_s'] * 1e6:.2f} us",
                      "" if r["ratio"] is None else f"{r['ratio']:.2f}",
                      "" if r["met"] is None else ("met" if r["met"] else f"ABOVE {calls.GOAL:g}x"),
                      style=None if r["met"] is not False else "bold red")
    console.print(table)
    held = [r for r in records if r["met"] is not None]
    above = [r["call"] for r in held if not r["met"]]
    console.print(f"small calls: {len(held) - len(above)} of {len(held)} rows at most {calls.GOAL:g}x NumPy"
                  + (f"; above it: {', '.join(above)}" if above else ""), markup=False)
    return records


def _math(args, console, rows, sizes, dtype, settings, peers, skipped: list) -> list[dict]:
    """The math table (``gpubcast/bench/functions.py``): gpubcast's CPU backend against NumPy, one row per
    function, issue #22's goal marked; rows that could not run join ``skipped``."""
    from rich.table import Table

    from . import functions

    if dtype.kind != "f":
        console.print(f"math table not run: it takes a float --dtype (float16, float32, float64), not {dtype}",
                      markup=False)
        return []
    cpu = next((p for p in peers if p.name.startswith("gpubcast-") and p.device == "cpu"), None)
    backend = None if cpu is None or cpu.default else cpu.backend   # None: the user's call, no backend=
    threads = _threads(cpu.backend if cpu else None)
    records, missed_all = [], []
    with console.status("math functions"):
        for size in sizes:
            got, missed = functions.run(size, dtype=dtype, quick=args.quick, backend=backend, repeat=settings.repeat,
                                        sets=settings.sets, min_sample_s=settings.min_sample_s, functions=rows)
            records += got
            missed_all += missed
    skipped += missed_all
    table = Table(title=f"Math functions ({dtype}): {cpu.label if cpu else 'gpubcast'} on {threads} threads "
                        f"against NumPy, median per call; speed-up = NumPy / gpubcast", title_justify="left")
    for col in ("function", "size", "operands", "gpubcast", "NumPy", "speed-up", "goal", "NumPy expression"):
        table.add_column(col, justify="right" if col in ("gpubcast", "NumPy", "speed-up") else "left")
    for r in records:
        goal = "" if r["met"] is None else f"{r['goal']:g}x {'met' if r['met'] else 'NOT met'}"
        table.add_row(r["call"], r["size"], " + ".join(str(tuple(s)).replace(" ", "") for s in r["operands"]),
                      f"{r['gpubcast_s'] * 1e3:.3g} ms", f"{r['numpy_s'] * 1e3:.3g} ms", f"{r['speedup']:.2f}x",
                      goal, r["numpy"])
    console.print(table)
    notes: dict[str, list[str]] = {}
    for r in records:
        if r["note"] and r["function"] not in notes.setdefault(r["note"], []):
            notes[r["note"]].append(r["function"])
    for note, names in notes.items():
        console.print(f"{', '.join(names)}: {note}", markup=False)
    for line in functions.goal_lines(records):
        console.print(line, markup=False)
    for s in missed_all:
        console.print(f"skipped {s['pattern']} {s['size']} on {s['backend']}: {s['reason']}", markup=False)
    return records


def _threads(backend: str | None) -> int | None:
    """The threads gpubcast's CPU backend runs on (Numba's count; 1 for the NumPy reference)."""
    if backend != "numba":
        return 1
    import numba
    return numba.get_num_threads()


def _fused(args, console, chains, sizes, dtype, settings, gpu: bool) -> list[dict]:
    """The fused chains (``gpubcast/bench/fused.py``): a table and the speed-ups the issue asks for."""
    from rich.table import Table

    from . import fused

    records = []
    with console.status("fused chains"):
        for size in sizes:
            records += fused.run(size, dtype=dtype, threads=args.threads, repeat=settings.repeat, sets=settings.sets,
                                 min_sample_s=settings.min_sample_s, gpu=gpu, chains=chains)
    table = Table(title=f"Fused chains ({dtype}): median per call")
    for col in ("chain", "size", "backend", "time", "GB/s", "first call"):
        table.add_column(col, justify="right" if col in ("time", "GB/s", "first call") else "left")
    for r in records:
        t = r["median_s"]
        table.add_row(r["chain"], r["size"], r["backend"], f"{t * 1e6:.1f} us" if t < 1e-3 else f"{t * 1e3:.2f} ms",
                      f"{r['gbps']:.2f}", f"{r['first_s']:.2f} s")
    console.print(table)
    for line in fused.speedups(records):
        console.print(line, markup=False)
    return records
