"""First calls on an empty cache: what a new user's first session pays in compiling (Numba's rows
and drivers, the hot call path's library), measured in one process.

    GPUBCAST_CACHE_DIR=$(mktemp -d) python benchmarks/first_calls.py

Prints the seconds from before ``import gpubcast`` to the end of each step: the import; three
``gb.add`` calls on 100 float32 elements (the first compiles); an ``add`` of 10^6 elements (the
parallel driver); ``gpubcast.onnx.Sum`` of three arrays of each size (a variadic row).  Run it with
an empty ``GPUBCAST_CACHE_DIR`` for the cold figures (a second run over the same directory gives the
warm ones); to compare two trees, put each first on ``PYTHONPATH`` and alternate the runs.
"""

from __future__ import annotations

import time

start = time.perf_counter()

import numpy as np  # noqa: E402 - timed from before the imports

import gpubcast as gb  # noqa: E402
import gpubcast.onnx as gx  # noqa: E402


def main() -> None:
    steps = [("import", time.perf_counter() - start)]
    x = np.ones(100, np.float32)
    for _ in range(3):
        gb.add(x, x)
    steps.append(("small add x3", time.perf_counter() - start))
    y = np.ones(10**6, np.float32)
    gb.add(y, y)
    steps.append(("+ large add", time.perf_counter() - start))
    for a in (x, y):
        gx.Sum(a, a, a)
    steps.append(("+ Sum", time.perf_counter() - start))
    print("  ".join(f"{name} {t:.2f} s" for name, t in steps))


if __name__ == "__main__":
    main()
