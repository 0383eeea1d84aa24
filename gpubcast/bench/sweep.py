"""The size sweep (``python -m gpubcast bench --sweep``; part of the default run, at the quick sizes
under ``--quick``): gpubcast against the other array libraries at every size, so that the size
below which a user should prefer another library -- the goal is that there is none -- is in view.

CPU (issue 43): 1 K to 16 M float32 elements (powers of 4) for seven cases -- a same-shape add, a
row-broadcast add, the fused chain ``s * x + b`` (``gpubcast.fuse``), and four transcendentals:
``tanh``, ``exp``, ``sigmoid`` and the tanh GELU -- in gpubcast, NumPy, and PyTorch (CPU) and JAX
(``jax.jit``) where they are installed.  NumPy has no sigmoid or GELU: its spelling is the formula
op by op, as a NumPy user writes it (``1 / (1 + exp(-x))``; ``0.5 * x * (1 + tanh(...))``).  Each library allocates its
own output, as its users' calls do; each call is the library's own spelling (``CPU_CASES``); a
library's result is checked against NumPy's before it is timed; the time is the best of the samples
(``measure.time_host``, input sets rotated); the table shows ns per element and gpubcast's speed
against the fastest other library (its time over gpubcast's: above 1, gpubcast is ahead).

GPU (issue 42, where CuPy finds a device): every pattern of the suite (``patterns.py``) at output
sizes of 4 KB to 1 GB of float32 (1 K to 256 M elements; ``patterns.scaled``), gpubcast's CUDA
backend, CuPy and torch through the suite's own peers (``peers.py``: outputs into ``out=`` where the
library has it), checked and timed as the suite does (``runner.run_group``, CUDA events); the table
shows µs and GB/s.

Records (one per case or pattern, size and device) hold every library's best and median seconds,
GB/s, and gpubcast's speed-up against each other library and the best of them.  Sizes and shapes
are fixed (``CPU_SIZES``, ``GPU_SIZES`` and their quick subsets), so runs compare across machines.
"""

from __future__ import annotations

import statistics
import time
from collections.abc import Callable
from dataclasses import dataclass

import numpy as np

from . import measure
from .fused import GELU_C, GELU_K
from .patterns import PATTERNS, matrix, scaled
from .peers import spelled_out

#: output elements of the CPU sweep: 1 K .. 16 M (powers of 4), and the quick subset
CPU_SIZES = tuple(4**k for k in range(5, 13))
CPU_QUICK = tuple(4**k for k in (5, 7, 9, 11))
#: output elements of the GPU sweep: 1 K .. 256 M (4 KB .. 1 GB of float32), and the quick subset
GPU_SIZES = tuple(4**k for k in range(5, 15))
GPU_QUICK = tuple(4**k for k in (5, 7, 9, 11, 13))
DTYPE = np.dtype(np.float32)
#: gpubcast's own name in the records; every other library is a peer
GPUBCAST = "gpubcast"
#: a library's result agrees with NumPy's within this (float32 transcendentals differ by an ulp or two)
RTOL, ATOL = 1e-5, 1e-6


@dataclass(frozen=True)
class CpuCase:
    name: str
    title: str
    shapes: Callable[[int], tuple]       # output elements -> operand shapes
    domain: tuple = (-1.0, 1.0)          # operands drawn uniformly from [low, high)


def _pair(n: int) -> tuple:
    return (n,), (n,)


def _row(n: int) -> tuple:
    m, k = matrix(n)
    return (m, k), (k,)


def _one(n: int) -> tuple:
    return ((n,),)


def _affine(n: int) -> tuple:
    m, k = matrix(n)
    return (k,), (m, k), (k,)


CPU_CASES = (
    CpuCase("same", "same-shape add x + y, (N,) + (N,)", _pair),
    CpuCase("row", "row-broadcast add x + b, (M, K) + (K,)", _row),
    CpuCase("fused", "fused s * x + b, (K,) * (M, K) + (K,)", _affine),
    CpuCase("tanh", "tanh(x), (N,)", _one, (-4.0, 4.0)),
    CpuCase("exp", "exp(x), (N,)", _one, (-4.0, 4.0)),
    CpuCase("sigmoid", "sigmoid(x), (N,)", _one, (-8.0, 8.0)),
    CpuCase("gelu", "tanh GELU 0.5 x (1 + tanh(sqrt(2/pi) (x + 0.044715 x^3))), (N,)", _one, (-4.0, 4.0)),
)
CPU_BY_NAME = {c.name: c for c in CPU_CASES}


@dataclass
class Library:
    """One library of the CPU sweep: ``name``, ``label``, ``bind(case, host arrays) -> call``
    (the call returns the result, finished), ``to_numpy(result)``."""
    name: str
    label: str
    bind: Callable
    to_numpy: Callable = np.asarray


def _gpubcast_library() -> Library:
    import gpubcast as gb
    from gpubcast import backends

    fused = gb.fuse(lambda s, x, b: s * x + b)
    calls = {"same": gb.add, "row": gb.add, "fused": fused, "tanh": gb.tanh, "exp": gb.exp, "sigmoid": gb.sigmoid,
             "gelu": lambda x: gb.gelu(x, approximate="tanh")}

    def bind(case, xs):
        return spelled_out(calls[case.name], xs)
    return Library(GPUBCAST, f"gpubcast {gb.__version__} ({backends.default_cpu().name})", bind)


def _numpy_library() -> Library:
    calls = {"same": np.add, "row": np.add, "fused": lambda s, x, b: s * x + b, "tanh": np.tanh, "exp": np.exp,
             "sigmoid": lambda x: 1 / (1 + np.exp(-x)),
             "gelu": lambda x: 0.5 * x * (1 + np.tanh(GELU_C * (x + GELU_K * x * x * x)))}

    def bind(case, xs):
        return spelled_out(calls[case.name], xs)
    return Library("numpy", f"NumPy {np.__version__}", bind)


def _torch_library() -> Library:
    import torch

    calls = {"same": torch.add, "row": torch.add, "fused": lambda s, x, b: torch.addcmul(b, s, x),
             "tanh": torch.tanh, "exp": torch.exp, "sigmoid": torch.sigmoid,
             "gelu": lambda x: torch.nn.functional.gelu(x, approximate="tanh")}

    def bind(case, xs):
        return spelled_out(calls[case.name], [torch.from_numpy(x) for x in xs])
    return Library("torch", f"PyTorch {torch.__version__} CPU ({torch.get_num_threads()} threads; "
                            f"s * x + b as torch.addcmul)", bind, lambda t: t.numpy())


def _jax_library() -> Library:
    import jax
    import jax.numpy as jnp

    cpu = jax.devices("cpu")[0]
    calls = {"same": jax.jit(lambda x, y: x + y), "row": jax.jit(lambda x, b: x + b),
             "fused": jax.jit(lambda s, x, b: s * x + b), "tanh": jax.jit(jnp.tanh), "exp": jax.jit(jnp.exp),
             "sigmoid": jax.jit(jax.nn.sigmoid), "gelu": jax.jit(lambda x: jax.nn.gelu(x, approximate=True))}

    def bind(case, xs):
        call = spelled_out(calls[case.name], [jax.device_put(x, cpu) for x in xs])
        return lambda: call().block_until_ready()
    return Library("jax", f"JAX {jax.__version__} jit (CPU)", bind)


#: the CPU libraries, gpubcast first; a peer that does not import is absent, with the reason
CPU_LIBRARIES = {GPUBCAST: _gpubcast_library, "numpy": _numpy_library, "torch": _torch_library,
                 "jax": _jax_library}


def cpu_libraries(names=None) -> tuple[list[Library], dict[str, str]]:
    """(the CPU libraries present here, {name: why absent}), among ``names`` (default all)."""
    present, absent = [], {}
    for name, make in CPU_LIBRARIES.items():
        if names and name not in names:
            continue
        try:
            present.append(make())
        except Exception as e:  # noqa: BLE001 - not installed, or broken: the peer is absent, and why
            absent[name] = f"{type(e).__name__}: {e}"
    return present, absent


def _operands(case: CpuCase, n: int, seed: int = 0) -> tuple[np.ndarray, ...]:
    rng = np.random.default_rng(seed)
    low, high = case.domain
    return tuple((low + (high - low) * rng.random(s, dtype=np.float32)).astype(DTYPE) for s in case.shapes(n))


def _traffic(shapes, out_elements: int) -> int:
    return measure.traffic_bytes([(s, DTYPE.itemsize) for s in shapes], ((out_elements,), DTYPE.itemsize))


def run_cpu(sizes=CPU_SIZES, *, cases=CPU_CASES, libraries=None, repeat: int = 5, sets: int = 2,
            min_sample_s: float = 0.01, progress=lambda text: None) -> tuple[list[dict], list[dict]]:
    """(records, skipped): every case at every size on every library (``cpu_libraries()``'s
    by default); a library that fails or disagrees with NumPy at a point is skipped there."""
    libraries = cpu_libraries()[0] if libraries is None else libraries
    records, skipped, reference = [], [], _numpy_library()
    for case in cases:
        for n in sizes:
            host = _operands(case, n)
            expected = reference.bind(case, host)()
            times = {}
            for lib in libraries:
                progress(f"sweep cpu {case.name} {n} {lib.name}")
                try:
                    times[lib.name] = _time_library(lib, case, host, expected, repeat, sets, min_sample_s)
                except Exception as e:  # noqa: BLE001 - report, and go on with the others
                    skipped.append({"device": "cpu", "pattern": case.name, "elements": n, "backend": lib.name,
                                    "reason": f"{type(e).__name__}: {e}"})
            records.append(record("cpu", case.name, case.title, n, [list(s) for s in case.shapes(n)],
                                  _traffic(case.shapes(n), n), times))
    return records, skipped


def _time_library(lib: Library, case: CpuCase, host, expected, repeat, sets, min_sample_s) -> measure.Timing:
    """The library's timing on ``sets`` copies of ``host`` (its first call checked against NumPy's)."""
    calls = [lib.bind(case, tuple(x.copy() for x in host)) for _ in range(sets)]
    got = lib.to_numpy(calls[0]())                   # compiles (Numba, XLA), then checked
    if got.shape != expected.shape or got.dtype != expected.dtype or \
            not np.allclose(got, expected, rtol=RTOL, atol=ATOL):
        raise ValueError(f"{lib.label} computes a result that differs from NumPy's on {case.name} "
                         f"({got.dtype}{got.shape} against {expected.dtype}{expected.shape})")
    return measure.time_host(calls, repeat=repeat, min_sample_s=min_sample_s)


def run_gpu(peers, sizes=GPU_SIZES, *, patterns=PATTERNS, settings, progress=lambda text: None
            ) -> tuple[list[dict], list[dict]]:
    """(records, skipped): every pattern at every size on the GPU peers (``peers.discover``'s:
    gpubcast's CUDA backend, CuPy, torch), through ``runner.run_group``."""
    from .runner import run_group

    group = [p for p in peers if p.device == "gpu"]
    records, skipped = [], []
    if not group:
        return records, skipped
    for pattern in patterns:
        for n in sizes:
            shapes = scaled(pattern, n)
            times = {}
            for peer, outcome in run_group(pattern, shapes, group, DTYPE, settings,
                                           lambda peer: progress(f"sweep gpu {pattern.name} {n} {peer.label}")):
                name = GPUBCAST if peer.name.startswith("gpubcast-") else peer.name
                if isinstance(outcome, str):
                    skipped.append({"device": "gpu", "pattern": pattern.name, "elements": n, "backend": name,
                                    "reason": outcome})
                else:
                    times[name] = outcome[1]
            records.append(record("gpu", pattern.name, pattern.title, n, [list(s) for s in shapes],
                                  pattern.traffic(shapes, DTYPE), times))
    return records, skipped


def record(device: str, pattern: str, title: str, n: int, operands, nbytes: int, times: dict) -> dict:
    """One point of the sweep: each library's best and median seconds and GB/s, gpubcast's speed-up
    (the other library's best time over gpubcast's) against each and against the fastest of them."""
    best = {name: min(t.samples) for name, t in times.items()}
    mine, peers = best.get(GPUBCAST), {k: v for k, v in best.items() if k != GPUBCAST}
    fastest = min(peers, key=peers.get) if peers else None
    return {
        "device": device, "pattern": pattern, "title": title, "elements": n, "dtype": str(DTYPE),
        "operands": operands, "bytes": nbytes,
        "seconds": best, "seconds_median": {name: statistics.median(t.samples) for name, t in times.items()},
        "gbps": {name: measure.gbps(nbytes, s) for name, s in best.items()},
        "speedup": {k: v / mine for k, v in peers.items()} if mine else {},
        "best_peer": fastest,
        "speedup_vs_best_peer": peers[fastest] / mine if mine and fastest else None,
    }


def run(devices, *, quick: bool, peers, settings, progress=lambda text: None) -> dict:
    """The sweep's part of the JSON document: on each of ``devices`` ("cpu", "gpu") present, the
    records at the full or quick sizes, which libraries ran (with their labels) and which did not."""
    t0 = time.perf_counter()
    records, skipped, labels, absent = [], [], {}, {}
    if "cpu" in devices:
        libraries, absent_cpu = cpu_libraries()
        absent.update({f"cpu {k}": v for k, v in absent_cpu.items()})
        labels.update({f"cpu {lib.name}": lib.label for lib in libraries})
        got, missed = run_cpu(CPU_QUICK if quick else CPU_SIZES, libraries=libraries, repeat=settings.repeat,
                              sets=settings.sets, min_sample_s=settings.min_sample_s, progress=progress)
        records += got
        skipped += missed
    if "gpu" in devices:
        gpu_peers = [p for p in peers if p.device == "gpu"]
        labels.update({f"gpu {GPUBCAST if p.name.startswith('gpubcast-') else p.name}": p.label for p in gpu_peers})
        got, missed = run_gpu(gpu_peers, GPU_QUICK if quick else GPU_SIZES, settings=settings, progress=progress)
        records += got
        skipped += missed
    return {"dtype": str(DTYPE), "quick": quick, "devices": list(devices),
            "sizes": {"cpu": list(CPU_QUICK if quick else CPU_SIZES), "gpu": list(GPU_QUICK if quick else GPU_SIZES)},
            "libraries": labels, "absent": absent, "records": records, "skipped": skipped,
            "seconds": time.perf_counter() - t0}


def behind(records, device: str) -> list[str]:
    """``pattern@size`` of each point where another library is ahead of gpubcast on ``device``."""
    return [f"{r['pattern']}@{size_text(r['elements'], device)}" for r in records
            if r["device"] == device and r["speedup_vs_best_peer"] is not None and r["speedup_vs_best_peer"] < 1.0]


def size_text(n: int, device: str) -> str:
    """A size as the sweep names it: elements on the CPU (1K, 16M), float32 output bytes on the GPU."""
    value, units = (n, ("", "K", "M", "G")) if device == "cpu" else (n * DTYPE.itemsize, ("B", "KB", "MB", "GB"))
    k = 0
    while value >= 1024**(k + 1) and k + 1 < len(units):
        k += 1
    return f"{value / 1024**k:g}{units[k]}"
