"""Timing, the bandwidth arithmetic, and the machine's ceilings.

Timing: a first call is timed on its own (it carries JIT / NVRTC compiles and
setup) by the caller; ``time_host`` and ``time_cuda`` then warm up over every
input set, time one more warm pass to choose a number of calls per sample long
enough for the clock, and return the median over ``repeat`` samples.  Calls rotate over the input sets
across samples, so caches never see the same buffers twice in a row.  GPU
samples are bracketed by CUDA events on the current stream, so they count
device time, launch-bound or not, and nothing of the host's synchronisation.

Bandwidth: an op moves at least each operand's DISTINCT bytes (its own size,
however far it broadcasts) plus the bytes it writes; ``traffic_bytes`` is that
sum and ``gbps`` divides it by the time.
"""

from __future__ import annotations

import itertools
import math
import os
import statistics
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass
from collections.abc import Callable, Iterable, Sequence

import numpy as np

#: never more calls than this per sample, however fast one call is
MAX_CALLS_PER_SAMPLE = 100_000


def traffic_bytes(inputs: Iterable[tuple[Sequence[int], int]], output: tuple[Sequence[int], int]) -> int:
    """Least bytes a broadcast op moves: for each input ``(shape, itemsize)`` its own size in
    bytes, plus the output's ``(shape, itemsize)`` written once.

    >>> traffic_bytes([((8192, 4096), 4), ((4096,), 4)], ((8192, 4096), 4))  # row add, float32
    268451840
    """
    return sum(math.prod(shape) * itemsize for shape, itemsize in inputs) + math.prod(output[0]) * output[1]


def gbps(nbytes: int, seconds: float) -> float:
    """Effective bandwidth in GB/s (10**9 bytes per second)."""
    if not seconds > 0:
        raise ValueError(f"a bandwidth needs a positive time, got {seconds!r} s")
    return nbytes / seconds / 1e9


def fraction(value_gbps: float, ceiling_gbps: float | None) -> float | None:
    """``value_gbps`` as a fraction of the measured ceiling (None without a ceiling)."""
    return value_gbps / ceiling_gbps if ceiling_gbps else None


@dataclass(frozen=True)
class Timing:
    median_s: float               # seconds per call, median over samples
    samples: tuple[float, ...]    # seconds per call, one value per sample
    calls_per_sample: int


def _measure(batch: Callable[[int], float], warmup_calls: int, repeat: int, min_sample_s: float) -> Timing:
    """``batch(n)`` runs n calls and returns their seconds.  A warm-up batch (every input set once:
    compiled, prepared, on gpubcast's hot path, which prepares a call the second time it sees it),
    then a second such batch estimates a warm call, which sets the calls per sample (estimated from
    the first, a slow first sight made samples of one or two tiny calls)."""
    if repeat < 1:
        raise ValueError(f"repeat must be >= 1, got {repeat}")
    batch(warmup_calls)
    estimate = batch(warmup_calls) / warmup_calls
    n = max(1, min(MAX_CALLS_PER_SAMPLE, math.ceil(min_sample_s / max(estimate, 1e-9))))
    samples = tuple(batch(n) / n for _ in range(repeat))
    return Timing(statistics.median(samples), samples, n)


def time_host(calls: Sequence[Callable], *, repeat: int, min_sample_s: float) -> Timing:
    """Wall-clock timing of CPU work; ``calls`` are one per input set."""
    next_call = itertools.cycle(calls).__next__

    def batch(n: int) -> float:
        t0 = time.perf_counter()
        for _ in range(n):
            next_call()()
        return time.perf_counter() - t0
    return _measure(batch, len(calls), repeat, min_sample_s)


def time_cuda(calls: Sequence[Callable], *, repeat: int, min_sample_s: float) -> Timing:
    """CUDA-event timing of GPU work launched on the current stream; ``calls`` one per input set."""
    import cupy

    next_call = itertools.cycle(calls).__next__
    start, stop = cupy.cuda.Event(), cupy.cuda.Event()

    def batch(n: int) -> float:
        start.record()
        for _ in range(n):
            next_call()()
        stop.record()
        stop.synchronize()
        return cupy.cuda.get_elapsed_time(start, stop) / 1e3
    return _measure(batch, len(calls), repeat, min_sample_s)


def synchronize(device: str) -> None:
    """Wait for the device's queued work (a no-op on the CPU)."""
    if device == "gpu":
        import cupy
        cupy.cuda.Device().synchronize()


def cpu_ceiling(nbytes: int = 2**27, *, repeat: int = 5, threads: int | None = None) -> dict:
    """The CPU's memory bandwidth, measured now: NumPy copy (2 x nbytes moved) and same-shape
    float32 add (3 x nbytes), each on one thread and split across ``threads`` threads (NumPy
    releases the GIL in both), over two rotated sets of arrays of ``nbytes`` each."""
    threads = threads or os.cpu_count() or 1
    n = nbytes // 4
    sets = [tuple(np.full(n, 1.5, np.float32) for _ in range(3)) for _ in range(2)]
    chunks = [slice(lo, hi) for lo, hi in itertools.pairwise(np.linspace(0, n, threads + 1).astype(int))]
    result = {"method": f"NumPy copy and float32 add of {nbytes / 2**20:.0f} MiB arrays, 1 and {threads} threads",
              "threads": threads}
    with ThreadPoolExecutor(threads) as pool:
        kinds = {
            "copy": (2, lambda a, b, c, s=slice(None): np.copyto(c[s], a[s])),
            "add": (3, lambda a, b, c, s=slice(None): np.add(a[s], b[s], out=c[s])),
        }
        for kind, (moved, f) in kinds.items():
            single = [lambda a=a, b=b, c=c, f=f: f(a, b, c) for a, b, c in sets]
            split = [lambda a=a, b=b, c=c, f=f: list(pool.map(lambda s: f(a, b, c, s), chunks))
                     for a, b, c in sets]
            for key, calls in ((f"{kind}_gbps", single), (f"{kind}_threads_gbps", split)):
                calls[0]()
                result[key] = gbps(moved * nbytes, time_host(calls, repeat=repeat, min_sample_s=0.01).median_s)
    result["gbps"] = max(v for k, v in result.items() if k.endswith("_gbps"))
    return result


def gpu_ceiling(nbytes: int = 2**30, *, repeat: int = 20) -> dict:
    """The GPU's memory bandwidth, measured now: a device-to-device copy of ``nbytes``
    (read + write: 2 x nbytes moved) over two rotated buffer pairs, timed with CUDA events."""
    import cupy

    pairs = [(cupy.empty(nbytes, np.uint8), cupy.empty(nbytes, np.uint8)) for _ in range(2)]
    calls = [lambda s=s, d=d: d.data.copy_from_device_async(s.data, nbytes) for s, d in pairs]
    calls[0]()
    synchronize("gpu")
    t = time_cuda(calls, repeat=repeat, min_sample_s=0.01)
    del pairs, calls
    cupy.get_default_memory_pool().free_all_blocks()
    return {"method": f"device-to-device copy of {nbytes / 2**20:.0f} MiB (cudaMemcpyAsync), read + write",
            "gbps": gbps(2 * nbytes, t.median_s)}
