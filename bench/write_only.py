"""Write-only broadcasts on a GPU, side by side (issue 23): does the ``copy`` general kernel write the
same bytes slower than ``add``, and what is the device's write-only ceiling?

    PYTHONPATH=. python bench/write_only.py [--repeat 9] [--json FILE]

Why: on the H100 run (bench/results/nvidia-h100-80gb-hbm3-2026-11-27.md) the ``add`` general kernel
wrote 2538 GB/s on ``outer`` (M,1)+(1,K), the ``copy`` general kernel 1786 and 1624 GB/s on
``explicit`` and ``expand``; the SASS has the same stores, and the model (``kernels --model``) has no
term that tells them apart (``model.UNEXPLAINED``).  Each row writes a float32 output; the first
five the same (M, K) = (16384, 4096) buffer, 256 MiB, from inputs that stay in L2:

  memset          cudaMemsetAsync of the output: the device's write-only ceiling
  fill            gb.broadcast_to of a 1-element array (copy contig, a device scalar)
  add outer       gb.add((M,1), (1,K))           binary general32: a stride-0 and a stride-1 input
  copy column     gb.broadcast_to((M,1), (M,K))  copy general32: the input stride 0 along the row
  copy row        gb.broadcast_to((1,K), (M,K))  copy general32: the input stride 1 (vector loads)
  expand          the benchmark's expand: (4096,1) with (8,1,4096), 512 MiB
  explicit        the benchmark's explicit: (64,56) -> (384,64,56,56), axes_mapping [1,3], 294 MiB

Prints GB/s written (output bytes / median time, CUDA events) and the share of memset's.  With
``--virtual`` it runs small shapes on the virtual CUDA device (gpubcast.devtools.virtual) and checks
every output against NumPy: the plumbing, not a timing.
"""

from __future__ import annotations

import argparse
import json

import numpy as np

import gpubcast as gb
from gpubcast.bench import measure

M, K = 16384, 4096
NCHW = (384, 64, 56, 56)


def rows(cp, small: bool):
    """(name, output, call, expected or None): each call writes its output; ``small``: tiny shapes."""
    m, k = (40, 96) if small else (M, K)
    nchw = (3, 4, 5, 6) if small else NCHW
    rng = np.random.default_rng(0)
    col = rng.random((m, 1), np.float32)
    row = rng.random((1, k), np.float32)
    one = rng.random((1,), np.float32)
    e_in = rng.random((8 if small else 4096, 1), np.float32)
    e_shape = (8, 1, 4096) if not small else (2, 1, 16)
    x_in = rng.random((nchw[1], nchw[3]), np.float32)
    d = {name: cp.asarray(a) for name, a in (("col", col), ("row", row), ("one", one), ("e", e_in), ("x", x_in))}
    out = cp.empty((m, k), np.float32)
    e_out = cp.empty(np.broadcast_shapes(e_in.shape, e_shape), np.float32)
    x_out = cp.empty(nchw, np.float32)
    memset = getattr(cp.cuda.runtime, "memsetAsync", None)    # the virtual device has none
    found = []
    if memset is not None:
        found.append(("memset", out, lambda: memset(out.data.ptr, 0, out.nbytes, 0), np.zeros((m, k), np.float32)))
    found += [
        ("fill", out, lambda: gb.broadcast_to(d["one"], (m, k), out=out), np.broadcast_to(one, (m, k))),
        ("add outer", out, lambda: gb.add(d["col"], d["row"], out=out), col + row),
        ("copy column", out, lambda: gb.broadcast_to(d["col"], (m, k), out=out), np.broadcast_to(col, (m, k))),
        ("copy row", out, lambda: gb.broadcast_to(d["row"], (m, k), out=out), np.broadcast_to(row, (m, k))),
        ("expand", e_out, lambda: gb.expand(d["e"], e_shape, out=e_out), np.broadcast_to(e_in, e_out.shape)),
        ("explicit", x_out, lambda: gb.broadcast_to(d["x"], nchw, mode="explicit", axes_mapping=(1, 3), out=x_out),
         np.broadcast_to(x_in[None, :, None, :], nchw)),
    ]
    return found


def run(cp, *, small: bool, repeat: int, timed: bool, out=print) -> list[dict]:
    """Each row once checked against NumPy, then timed (``timed``: CUDA events); the rows as dicts."""
    results = []
    for name, dst, call, want in rows(cp, small):
        first = len(getattr(cp, "launches", ()))      # the virtual device records its launches
        call()
        kernels = sorted({launched[0] for launched in getattr(cp, "launches", ())[first:]})
        got = cp.asnumpy(dst)
        if not np.array_equal(got, want):
            raise AssertionError(f"{name}: the output differs from NumPy's")
        t = measure.time_cuda([call], repeat=repeat, min_sample_s=0.002) if timed else None
        results.append({"row": name, "shape": list(dst.shape), "bytes_written": int(dst.nbytes), "kernels": kernels,
                        "seconds_median": t.median_s if t else None,
                        "gbps_written": measure.gbps(dst.nbytes, t.median_s) if t else None})
    ceiling = next((r["gbps_written"] for r in results if r["row"] == "memset"), None)
    out(f"{'row':<12} {'output':<20} {'GB/s written':>13} {'of memset':>10}")
    for r in results:
        g = r["gbps_written"]
        share = f"{g / ceiling:.2f}" if g and ceiling else "-"
        out(f"{r['row']:<12} {str(tuple(r['shape'])):<20} {f'{g:.0f}' if g else '-':>13} {share:>10}")
    return results


def main(argv=None, out=print) -> list[dict]:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--repeat", type=int, default=9, help="timed samples per row (default 9)")
    ap.add_argument("--json", help="also write the rows to this file")
    ap.add_argument("--virtual", action="store_true",
                    help="small shapes on the virtual CUDA device, checked against NumPy, not timed")
    args = ap.parse_args(argv)
    if args.virtual:
        from gpubcast.devtools import virtual
        with virtual.installed() as cp:
            results = run(cp, small=True, repeat=args.repeat, timed=False, out=out)
    else:
        import cupy
        results = run(cupy, small=False, repeat=args.repeat, timed=True, out=out)
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"device": "virtual" if args.virtual else "gpu", "rows": results}, f, indent=1)
    return results


if __name__ == "__main__":
    main()
