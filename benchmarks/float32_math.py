"""float32 math at SIMD speed (issue 43): per-element cost of tanh, exp, sigmoid and GELU against NumPy
and JAX's ``jit``, at 16 K, 256 K and 4 M elements on 1 and 2 threads, and the first-call compile time
of each gpubcast function (on an empty cache).

Run: ``nice .venv/bin/python benchmarks/float32_math.py [--repeat 30]``.  Each thread count runs in its
own process pinned to that many cores (``taskset``): gpubcast's Numba threads, XLA's thread pool and
NumPy all see the same cores.  Every library allocates its own output; the figure is the best of
``--repeat`` calls, in ns per element.  ``fused gelu`` is the tanh GELU of ``x + bias`` (bias one row)
through ``gpubcast.fuse``, NumPy op by op and ``jax.jit`` of the same chain.
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
import tempfile
import time

import numpy as np

SIZES = (16 * 1024, 256 * 1024, 4 * 1024 * 1024)
GELU_C, GELU_K = 0.7978845608028654, 0.044715
COLUMNS = 1024   # fused gelu: (n / COLUMNS, COLUMNS) + (COLUMNS,)


def _numpy():
    def gelu_tanh(x):
        return 0.5 * x * (1 + np.tanh(np.float32(GELU_C) * (x + np.float32(GELU_K) * x * x * x)))

    def fused(x, b):
        h = x + b
        return 0.5 * h * (1 + np.tanh(np.float32(GELU_C) * (h + np.float32(GELU_K) * h * h * h)))
    return {"tanh": np.tanh, "exp": np.exp, "sigmoid": lambda x: 1 / (1 + np.exp(-x)),
            "gelu tanh": gelu_tanh, "fused gelu": fused}


def _jax():
    try:
        import jax
        import jax.numpy as jnp
    except ImportError:
        return {}

    def fused(x, b):
        h = x + b
        return 0.5 * h * (1 + jnp.tanh(GELU_C * (h + GELU_K * h * h * h)))
    fns = {"tanh": jnp.tanh, "exp": jnp.exp, "sigmoid": jax.nn.sigmoid,
           "gelu": lambda x: jax.nn.gelu(x, approximate=False), "gelu tanh": lambda x: jax.nn.gelu(x, approximate=True),
           "fused gelu": fused}
    jitted = {k: jax.jit(f) for k, f in fns.items()}
    return {k: (lambda f: lambda *a: f(*a).block_until_ready())(f) for k, f in jitted.items()}


def _gpubcast():
    import gpubcast as gb

    def fused(x, b):
        h = x + b
        return 0.5 * h * (1 + gb.tanh(GELU_C * (h + GELU_K * h * h * h)))
    return {"tanh": gb.tanh, "exp": gb.exp, "sigmoid": gb.sigmoid, "gelu": gb.gelu,
            "gelu tanh": lambda x: gb.gelu(x, "tanh"), "fused gelu": gb.fuse(fused)}


def _best(fn, args, repeat):
    fn(*args)
    best = float("inf")
    for _ in range(repeat):
        t = time.perf_counter()
        fn(*args)
        best = min(best, time.perf_counter() - t)
    return best


def measure(repeat: int) -> dict:
    """ns per element of every (function, library, size) in this process."""
    libs = {"gpubcast": _gpubcast(), "numpy": _numpy(), "jax": _jax()}
    rng = np.random.default_rng(0)
    out = {}
    for n in SIZES:
        x = rng.uniform(-6, 6, n).astype(np.float32)
        xm = x.reshape(-1, COLUMNS)
        b = rng.uniform(-1, 1, COLUMNS).astype(np.float32)
        for lib, fns in libs.items():
            for name, fn in fns.items():
                args = (xm, b) if name == "fused gelu" else (x,)
                out[f"{name}|{lib}|{n}"] = _best(fn, args, repeat) / n * 1e9
    return out


def compile_times() -> dict:
    """First-call seconds of each gpubcast function on an empty cache, in a fresh process each (after
    a first ``add``, so that the drivers' own compile is not counted)."""
    code = ("import time, numpy as np, gpubcast as gb; x = np.ones(64, np.float32); gb.add(x, x); "
            "t = time.perf_counter(); {call}; print(time.perf_counter() - t)")
    calls = {"tanh": "gb.tanh(x)", "exp": "gb.exp(x)", "sigmoid": "gb.sigmoid(x)", "gelu": "gb.gelu(x)",
             "gelu tanh": "gb.gelu(x, 'tanh')"}
    out = {}
    for name, call in calls.items():
        with tempfile.TemporaryDirectory(prefix="f32-bench-cache-") as d:
            r = subprocess.run([sys.executable, "-c", code.format(call=call)], capture_output=True, text=True,
                               env=dict(os.environ, GPUBCAST_CACHE_DIR=d), timeout=600)
            out[name] = float(r.stdout.strip().splitlines()[-1]) if r.returncode == 0 else r.stderr[-300:]
    return out


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--repeat", type=int, default=30)
    parser.add_argument("--worker", type=int, default=0, help=argparse.SUPPRESS)
    parser.add_argument("--no-compile", action="store_true", help="skip the compile-time column")
    args = parser.parse_args()
    if args.worker:
        import numba
        numba.set_num_threads(args.worker)
        print(json.dumps(measure(args.repeat)))
        return
    results = {}
    for threads in (1, 2):
        cores = ",".join(str(c) for c in sorted(os.sched_getaffinity(0))[:threads])
        r = subprocess.run(["taskset", "-c", cores, sys.executable, __file__, "--worker", str(threads),
                            "--repeat", str(args.repeat)], capture_output=True, text=True, timeout=1800)
        if r.returncode:
            sys.exit(r.stderr)
        results[threads] = json.loads(r.stdout.strip().splitlines()[-1])
    print(f"load: {os.getloadavg()}; ns per element, best of {args.repeat}; ratio = peer / gpubcast")
    names = sorted({k.split("|")[0] for k in results[1]}, key=["tanh", "exp", "sigmoid", "gelu", "gelu tanh",
                                                               "fused gelu"].index)
    for threads, res in results.items():
        print(f"\n{threads} thread(s)")
        print(f"{'function':<11} {'size':>8} {'gpubcast':>9} {'numpy':>9} {'jax':>9} {'np/gb':>7} {'jax/gb':>7}")
        for name in names:
            for n in SIZES:
                g = res.get(f"{name}|gpubcast|{n}")
                p, j = res.get(f"{name}|numpy|{n}"), res.get(f"{name}|jax|{n}")
                cell = lambda v: f"{v:9.3f}" if v is not None else f"{'-':>9}"
                ratio = lambda v: f"{v / g:7.2f}" if v is not None else f"{'-':>7}"
                print(f"{name:<11} {n:>8} {cell(g)} {cell(p)} {cell(j)} {ratio(p)} {ratio(j)}")
    if not args.no_compile:
        print("\nfirst call on an empty cache (s):", {k: round(v, 2) if isinstance(v, float) else v
                                                     for k, v in compile_times().items()})


if __name__ == "__main__":
    main()
