"""Out-of-core broadcasting with gpubcast on Dask: an input larger than the memory budget, in chunks.

The input (``--gib`` GiB of float32, generated lazily chunk by chunk in the workers) goes through
three gpubcast ops under three rule sets and is reduced to one value per column, on a
``dask.distributed.LocalCluster`` whose workers together may use less memory than the input:

    y = prelu(add(multiply(x, scale), bias, broadcast="pdpd", axis=0), slope)     # x: (rows, cols)
    column_means = y.mean(axis=0)

``scale`` (cols,) is a NumPy array (NumPy rule), ``bias`` (rows,) a Dask array placed on dim 0
(OpenVINO PDPD), ``slope`` (cols,) broadcasts one-directionally (ONNX PRelu).  Nothing of the size
of the input ever exists at once: each worker holds a few chunks.

Prints the input size, the chunking, the time, and the peak resident memory (ru_maxrss) of each
worker process and of this process (which runs the scheduler).  Checks a slice against NumPy.

    python benchmarks/dask_out_of_core.py                   # 4 GiB through 2 workers of 768 MiB each
    python benchmarks/dask_out_of_core.py --gib 1 --scheduler threads   # no cluster: this process only
"""

from __future__ import annotations

import argparse
import resource
import time

import numpy as np


def peak_rss_mib() -> float:
    """This process's peak resident set size so far, in MiB (Linux reports ru_maxrss in KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def pipeline(x, bias, scale, slope):
    import gpubcast as gb
    y = gb.multiply(x, scale)                              # NumPy rule: (rows, cols) * (cols,)
    y = gb.add(y, bias, broadcast="pdpd", axis=0)          # PDPD: bias (rows,) placed at axis 0
    return gb.prelu(y, slope)                              # unidirectional: slope (cols,) onto y


def reference(x, bias, scale, slope):
    y = x * scale + bias[:, None]
    return np.where(y < 0, y * slope, y)


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--gib", type=float, default=4.0, help="input size in GiB of float32 (default 4)")
    parser.add_argument("--cols", type=int, default=1024, help="columns of the input (default 1024)")
    parser.add_argument("--chunk-mib", type=float, default=64.0, help="chunk size in MiB (default 64)")
    parser.add_argument("--workers", type=int, default=2, help="worker processes (default 2, 1 thread each)")
    parser.add_argument("--memory-limit", default="768MiB", help="memory limit per worker (default 768MiB)")
    parser.add_argument("--scheduler", choices=("distributed", "threads"), default="distributed",
                        help="a LocalCluster of worker processes (default) or Dask's threaded scheduler")
    args = parser.parse_args(argv)

    import dask
    import dask.array as da
    from dask.utils import parse_bytes

    cols = args.cols
    rows = int(args.gib * 2**30 / (4 * cols))
    chunk_rows = max(1, int(args.chunk_mib * 2**20 / (4 * cols)))
    rng = da.random.default_rng(42)
    x = rng.standard_normal((rows, cols), dtype=np.float32, chunks=(chunk_rows, cols))
    bias = rng.uniform(-0.5, 0.5, size=rows, chunks=chunk_rows).astype(np.float32)
    scale = np.linspace(0.5, 1.5, cols, dtype=np.float32)
    slope = np.full(cols, 0.25, dtype=np.float32)

    y = pipeline(x, bias, scale, slope)
    means = y.mean(axis=0, dtype=np.float64)

    print(f"input      x: {rows} x {cols} float32 = {x.nbytes / 2**30:.2f} GiB "
          f"(+ bias {bias.nbytes / 2**20:.1f} MiB), generated lazily, chunk by chunk")
    print(f"chunking   {x.numblocks[0]} chunks of {chunk_rows} x {cols} "
          f"({chunk_rows * cols * 4 / 2**20:.0f} MiB each); graph: {len(means.__dask_graph__())} tasks")

    if args.scheduler == "distributed":
        from distributed import Client, LocalCluster
        budget = args.workers * parse_bytes(args.memory_limit)
        print(f"budget     {args.workers} worker processes x 1 thread x {args.memory_limit} = "
              f"{budget / 2**30:.2f} GiB (the input is {x.nbytes / budget:.1f}x the budget)")
        with LocalCluster(n_workers=args.workers, threads_per_worker=1, processes=True,
                          memory_limit=args.memory_limit, dashboard_address=None, silence_logs=40) as cluster, \
                Client(cluster) as client:
            client.run(lambda: None)  # workers up before the clock starts
            start = time.perf_counter()
            result = means.compute()
            elapsed = time.perf_counter() - start
            worker_peaks = client.run(peak_rss_mib)
            check = y[:2000].compute()
    else:
        print(f"budget     none set: the threaded scheduler in this process "
              f"({dask.config.get('num_workers', None) or 'all'} threads)")
        worker_peaks = {}
        start = time.perf_counter()
        result = means.compute(scheduler="threads")
        elapsed = time.perf_counter() - start
        check = y[:2000].compute(scheduler="threads")

    expected = reference(x[:2000].compute(scheduler="threads"), bias[:2000].compute(scheduler="threads"),
                         scale, slope)
    np.testing.assert_array_equal(check, expected)
    if not np.all(np.isfinite(result)) or result.shape != (cols,):
        raise SystemExit(f"unexpected result: shape {result.shape}")

    print(f"time       {elapsed:.2f} s ({x.nbytes / 2**30 / elapsed:.2f} GiB/s of input)")
    for address, peak in sorted(worker_peaks.items()):
        print(f"peak RSS   worker {address}: {peak:.0f} MiB")
    print(f"peak RSS   this process (client{' + scheduler' if worker_peaks else ' + compute'}): "
          f"{peak_rss_mib():.0f} MiB")
    print(f"result     column means of prelu(x*scale + bias): {result[:3].round(5)} ...; "
          f"slice y[:2000] equals NumPy")
    return 0


if __name__ == "__main__":
    raise SystemExit(main())
