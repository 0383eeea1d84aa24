"""Per-call cost on a GPU (issue 42): a warm, repeated small call through gpubcast's compiled launch
path, its Python runner, CuPy and PyTorch, on the same (4, 8) float32 operands; run by
``ci/gpu-check calls`` on a machine with an NVIDIA GPU (it needs CuPy; PyTorch's rows where torch
imports with CUDA).

Each row first checks its values against NumPy's, and for gpubcast that the compiled launch path
answered the calls (``compiled_launch.answered()``: the proof that the real driver launcher works on
this machine).  Per row, over ``--repeat`` samples: ``issue``, the host time of ``--calls`` calls
(launches queued, no synchronisation), and ``done``, the time until the device finished them
(one synchronisation at the end); both per call, best and median.

Run: python benchmarks/gpu_calls.py [--json PATH] [--calls 2000] [--repeat 15]
     python benchmarks/gpu_calls.py --virtual --calls 20 --repeat 2     (the plumbing, without a GPU)
"""

from __future__ import annotations

import argparse
import json
import os
import statistics
import sys
import time
from pathlib import Path

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))   # this checkout's gpubcast


def _timed(call, sync, calls: int, repeat: int) -> dict:
    for _ in range(20):
        call()
    sync()
    issue, done = [], []
    for _ in range(repeat):
        t0 = time.perf_counter()
        for _ in range(calls):
            call()
        t1 = time.perf_counter()
        sync()
        t2 = time.perf_counter()
        issue.append((t1 - t0) / calls)
        done.append((t2 - t0) / calls)
    return {"issue_best_us": min(issue) * 1e6, "issue_median_us": statistics.median(issue) * 1e6,
            "done_best_us": min(done) * 1e6, "done_median_us": statistics.median(done) * 1e6}


def rows(cupy, torch):
    """(name, library, call, NumPy's answer, whether it is gpubcast's) per row, and a synchronisation."""
    import gpubcast as gb
    rng = np.random.default_rng(0)
    hx, hb = rng.standard_normal((4, 8)).astype(np.float32), rng.standard_normal(8).astype(np.float32)
    ha, hc, hd = (rng.standard_normal(s).astype(np.float32) for s in ((1, 3, 1, 1), (2, 3, 4, 4), (1, 3, 1, 1)))
    x, b, o = cupy.asarray(hx), cupy.asarray(hb), cupy.empty((4, 8), np.float32)
    a, c, d = cupy.asarray(ha), cupy.asarray(hc), cupy.asarray(hd)
    gb_affine = gb.fuse(lambda a, x, b: a * x + b)
    found = [
        ("add(x, b)", "gpubcast", lambda: gb.add(x, b), hx + hb, True),
        ("add(x, b)", "cupy", lambda: cupy.add(x, b), hx + hb, False),
        ("add(x, b, out=o)", "gpubcast", lambda: gb.add(x, b, out=o), hx + hb, True),
        ("add(x, b, out=o)", "cupy", lambda: cupy.add(x, b, out=o), hx + hb, False),
        ("multiply(x, 2.0)", "gpubcast", lambda: gb.multiply(x, 2.0), hx * np.float32(2), True),
        ("multiply(x, 2.0)", "cupy", lambda: cupy.multiply(x, 2.0), hx * np.float32(2), False),
        ("affine a * x + b, fused", "gpubcast", lambda: gb_affine(a, c, d), ha * hc + hd, True),
    ]
    if hasattr(cupy, "fuse"):
        cp_affine = cupy.fuse(kernel_name="affine")(lambda a, x, b: a * x + b)
        found.append(("affine a * x + b, fused", "cupy.fuse", lambda: cp_affine(a, c, d), ha * hc + hd, False))
    sync = cupy.cuda.Device().synchronize
    if torch is None:
        return found, sync
    tx, tb, to = (torch.as_tensor(v, device="cuda") for v in (hx, hb, np.empty((4, 8), np.float32)))
    found += [
        ("add(x, b)", "gpubcast on torch tensors", lambda: gb.add(tx, tb), hx + hb, True),
        ("add(x, b, out=o)", "gpubcast on torch tensors", lambda: gb.add(tx, tb, out=to), hx + hb, True),
    ]
    if hasattr(torch, "add"):
        found += [
            ("add(x, b)", "torch", lambda: torch.add(tx, tb), hx + hb, False),
            ("add(x, b, out=o)", "torch", lambda: torch.add(tx, tb, out=to), hx + hb, False),
            ("multiply(x, 2.0)", "torch", lambda: torch.mul(tx, 2.0), hx * np.float32(2), False),
        ]

    def both():
        if hasattr(torch.cuda, "synchronize"):
            torch.cuda.synchronize()
        sync()
    return found, both


def _libraries(virtual: bool):
    """(cupy, torch or None, backend(compiled) -> a CudaBackend, a context manager for the run)."""
    import contextlib

    from gpubcast.backends.cuda import CudaBackend
    if virtual:   # the plumbing on the virtual device (no timing worth reading): a dry run without a GPU
        from gpubcast.testing import virtual as v, virtual_torch
        stack = contextlib.ExitStack()
        cp = stack.enter_context(v.installed())
        torch = stack.enter_context(virtual_torch.installed(cp))
        return cp, torch, lambda compiled: CudaBackend(cp, cp.launcher, compiled=compiled), stack
    import cupy
    try:
        import torch
        if not torch.cuda.is_available():
            torch = None
    except ImportError:
        torch = None
    return cupy, torch, lambda compiled: CudaBackend(compiled=compiled), contextlib.nullcontext()


def _host(r):
    return r.get() if hasattr(r, "get") else r.cpu().numpy()


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", metavar="PATH")
    parser.add_argument("--calls", type=int, default=2000)
    parser.add_argument("--repeat", type=int, default=15)
    parser.add_argument("--virtual", action="store_true", help="a dry run on the virtual CUDA device")
    args = parser.parse_args(argv)
    from gpubcast import backends
    from gpubcast.cuda import compiled_launch

    cupy, torch, backend, scope = _libraries(args.virtual)
    records, failures = [], []
    with scope:
        for compiled in (True, False):
            with backends.registered("cuda", backend(compiled)):
                found, sync = rows(cupy, torch)
                for name, library, call, want, ours in found:
                    if not ours and not compiled:
                        continue                       # the peers once
                    label = library if not ours else f"{library}{'' if compiled else ', Python runner'}"
                    before = compiled_launch.answered()
                    for _ in range(5):                 # a fused call is answered in C from its fourth
                        got = call()
                    ok = bool(np.allclose(_host(got), want, rtol=1e-6, atol=1e-6))
                    answered = compiled_launch.answered() - before
                    if not ok or (ours and compiled and answered < 1):
                        failures.append(f"{name} [{label}]: values {'ok' if ok else 'WRONG'}, compiled path "
                                        f"answered {answered} of 5")
                    t = _timed(call, sync, args.calls, args.repeat)
                    records.append({"call": name, "library": label, "compiled_answered": answered, "values_ok": ok,
                                    **t})
                    print(f"{name:24s} {label:38s} issue {t['issue_best_us']:7.2f} us (median "
                          f"{t['issue_median_us']:7.2f})  done {t['done_best_us']:7.2f} us (median "
                          f"{t['done_median_us']:7.2f})", flush=True)
        props = cupy.cuda.runtime.getDeviceProperties(0) if hasattr(cupy.cuda.runtime, "getDeviceProperties") else {}
    device = props.get("name", b"virtual CUDA device")
    doc = {"device": device.decode() if isinstance(device, bytes) else device, "load_average": os.getloadavg(),
           "calls": args.calls, "repeat": args.repeat, "records": records, "failures": failures}
    if args.json:
        Path(args.json).write_text(json.dumps(doc, indent=1))
    for f in failures:
        print("FAILED:", f)
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
