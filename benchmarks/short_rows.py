"""Row broadcasts on the CPU by row width: (N, k) op (k,) with N k = 2^20 float32 elements, the row
widths from channels-last images (3, 4) to long rows (1024), into a preallocated output.

    python benchmarks/short_rows.py [--threads T]

Prints ns an element (best of 9 samples of alternating input sets) of ``gb.add(x, b, out=o)``,
``gb.fuse(lambda s, x, b: s * x + b)(b, x, b, out=o)``, NumPy's ``np.add`` and, where installed,
PyTorch's ``torch.add(..., out=)`` with the same threads.  To compare two trees, put each first on
``PYTHONPATH`` (each with its own ``GPUBCAST_CACHE_DIR``) and alternate the runs.
"""

from __future__ import annotations

import argparse
import time

import numba
import numpy as np

import gpubcast as gb

WIDTHS = (3, 4, 16, 64, 1024)
ELEMENTS = 1 << 20


def best_ns(call, n: int, reps: int = 20) -> float:
    """ns an element of ``call(i)`` (i counting calls), best of 9 samples of ``reps`` calls."""
    for i in range(4):
        call(i)
    samples = []
    for _ in range(9):
        t0 = time.perf_counter()
        for i in range(reps):
            call(i)
        samples.append((time.perf_counter() - t0) / reps)
    return min(samples) / n * 1e9


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--threads", type=int, default=1)
    threads = ap.parse_args().threads
    numba.set_num_threads(threads)
    try:
        import torch
        torch.set_num_threads(threads)
    except ImportError:
        torch = None
    rng = np.random.default_rng(0)
    fused = gb.fuse(lambda s, x, b: s * x + b)
    print(f"{'k':>5} {'add':>7} {'fused':>7} {'numpy':>7} {'torch':>7}   (ns an element, {threads} thread(s))")
    for k in WIDTHS:
        m = ELEMENTS // k
        n = m * k
        xs = [rng.random((m, k), dtype=np.float32) for _ in range(3)]
        b = rng.random(k, dtype=np.float32)
        o = np.empty((m, k), np.float32)
        row = [best_ns(lambda i: gb.add(xs[i % 3], b, out=o), n), best_ns(lambda i: fused(b, xs[i % 3], b, out=o), n),
               best_ns(lambda i: np.add(xs[i % 3], b, out=o), n)]
        if torch is not None:
            ts, bt, ot = [torch.from_numpy(x) for x in xs], torch.from_numpy(b), torch.from_numpy(o)
            row.append(best_ns(lambda i: torch.add(ts[i % 3], bt, out=ot), n))
        print(f"{k:>5} " + " ".join(f"{v:7.3f}" for v in row))


if __name__ == "__main__":
    main()
