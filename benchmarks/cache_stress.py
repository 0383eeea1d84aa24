"""Cache stress: processes released together on an empty cache, then a fresh process over the
warm cache; every value checked against the NumPy reference.

    python benchmarks/cache_stress.py [--rounds 30] [--procs 3] [--cases 24] [--seed 0] [--start both]

Each round gets a new, empty ``GPUBCAST_CACHE_DIR`` and a pool of ``--cases`` (op, dtype) pairs
drawn from the op registry (every op kind: binary, where, variadic, axpby, copy).  ``--procs``
worker processes (started with ``fork`` or ``spawn``; ``both`` alternates by round) wait at a
barrier, then each runs the pool in its own shuffled order, every case in a memory layout drawn
per worker (0-d, contiguous, row, column, outer, transposed, large enough for the parallel
drivers), on two threads, twice (the second call takes the hot path).  Then a fresh process runs
every case in every layout over the warm cache.  Every result is compared with gpubcast's NumPy
reference backend (exact; float ``power`` to a few ulps, see ``tests/support/numba_cases.tolerance``).

Prints rounds, processes, cases, wrong values, unexpected exceptions, hangs and time; exits 1 if
any wrong value, exception or hang was seen.  ``tests/runtime/test_cache.py`` runs a short version.
"""

from __future__ import annotations

import argparse
import concurrent.futures
import multiprocessing as mp
import os
import queue
import random
import sys
import tempfile
import time
import traceback
import warnings
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))   # the checkout: its tests.support

import numpy as np

LAYOUTS = ("zero-d", "contiguous", "row", "column", "outer", "transposed", "large")
#: a worker that has not finished by then is a hang
TIMEOUT = 900


def shapes(layout: str, n: int):
    """Shapes of ``n`` operands in ``layout`` (the first operand's, then the others')."""
    first, other = {"zero-d": ((), ()), "contiguous": ((5, 7), (5, 7)), "row": ((6, 33), (33,)),
                    "column": ((33, 1), (17,)), "outer": ((9, 1), (1, 11)),
                    "transposed": ((24, 40), (24, 40)), "large": ((300, 1024), (1024,))}[layout]
    return [first] + [other] * (n - 1)


def run_case(name: str, dtype: str, layout: str, seed: int) -> str:
    """'' when ``name`` over ``dtype`` in ``layout`` equals the reference on two calls, else what
    differs (an exception propagates)."""
    from tests.support import layouts, numba_cases as nc
    from gpubcast import dtypes, ops
    from gpubcast.dispatch import apply

    op = ops.get(name)
    dt = dtypes.bfloat16 if dtype == "bfloat16" else np.dtype(dtype)
    rng = np.random.default_rng(seed)
    n = 1 if op.kind == "move" else 3 if op.kind == "variadic" else nc.N_INPUTS[op.kind]
    shp = shapes(layout, n)
    if op.kind == "move":
        inputs = [nc.values(dt, int(np.prod(shp[0])), rng).reshape(shp[0])]
        kw = {"shape": np.broadcast_shapes(*shapes(layout, 2))}
    else:
        inputs = nc.inputs_for(op, dt, shp, rng)
        kw = {}
    if layout == "transposed":
        inputs[0] = layouts.transposed(inputs[0])
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        want = apply(op, [np.array(x) for x in inputs], backend="numpy", **kw)
        for call in ("first call", "second call"):
            got = apply(op, inputs, backend="numba", **kw)
            bad = nc.mismatch(got, want, nc.tolerance(name, dt))
            if bad:
                return f"{name} {dtype} {layout} ({call}): {bad}"
    return ""


def worker(cache_dir, cases, seed, barrier, results) -> None:
    """Run ``cases`` (op, dtype) in a shuffled order with layouts drawn from ``seed``, on two
    threads, after ``barrier``; put (wrong, errors, count, numba cache hits) on ``results``."""
    os.environ["GPUBCAST_CACHE_DIR"] = cache_dir
    import gpubcast  # noqa: F401  (imported before the barrier: the race is in compiling)
    rnd = random.Random(seed)
    todo = [(name, dtype, layout, rnd.randrange(1 << 30)) for (name, dtype) in rnd.sample(cases, len(cases))
            for layout in [rnd.choice(LAYOUTS)]]
    if barrier is not None:
        barrier.wait()
    wrong, errors = [], []

    def one(case):
        try:
            bad = run_case(*case)
            if bad:
                wrong.append(bad)
        except Exception:  # noqa: BLE001 - every exception here is a finding
            errors.append(f"{case[:3]}: {traceback.format_exc(limit=4)}")

    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        list(pool.map(one, todo))
    results.put((wrong, errors, len(todo), _hits()))


def verifier(cache_dir, cases, seed, results) -> None:
    """Every case in every layout, in a fresh process over the warm cache."""
    os.environ["GPUBCAST_CACHE_DIR"] = cache_dir
    wrong, errors = [], []
    for i, (name, dtype) in enumerate(cases):
        for layout in LAYOUTS:
            try:
                bad = run_case(name, dtype, layout, seed + i)
                if bad:
                    wrong.append(bad)
            except Exception:  # noqa: BLE001 - every exception here is a finding
                errors.append(f"{(name, dtype, layout)}: {traceback.format_exc(limit=4)}")
    results.put((wrong, errors, len(cases) * len(LAYOUTS), _hits()))


def _hits() -> int:
    """Overloads this process loaded from the cache (drivers and launchers)."""
    from gpubcast.backends.numba import drivers as K
    return sum(f._cache.hits for f in vars(K).values() if hasattr(getattr(f, "_cache", None), "hits"))


def pool_of_cases(n: int, rnd: random.Random):
    from tests.support import numba_cases as nc
    every = [(name, "bfloat16" if str(dt) == "bfloat16" else np.dtype(dt).name)
             for name, dt in nc.op_dtype_cases()]
    return rnd.sample(every, min(n, len(every)))


def _collect(procs, results, timeout):
    """Start ``procs``, read one result from each off ``results`` (before joining: a process
    exits only once its result is read); (results, processes that hung or died without one)."""
    for p in procs:
        p.start()
    deadline = time.monotonic() + timeout
    got = []
    for _ in procs:
        try:
            got.append(results.get(timeout=max(1.0, deadline - time.monotonic())))
        except queue.Empty:
            break
    for p in procs:
        p.join(5 if len(got) == len(procs) else 0.1)
        if p.is_alive():
            p.kill()
    return got, len(procs) - len(got)


def one_round(r: int, args, out=print) -> dict:
    start = args.start if args.start != "both" else ("spawn", "fork")[r % 2]
    ctx = mp.get_context(start)
    rnd = random.Random(args.seed * 1000003 + r)
    cases = pool_of_cases(args.cases, rnd)
    tally = {"wrong": [], "errors": [], "hung": 0, "cases": 0}
    with tempfile.TemporaryDirectory(prefix="gpubcast-stress-") as cache_dir:
        results = ctx.Queue()
        barrier = ctx.Barrier(args.procs)
        workers = [ctx.Process(target=worker, args=(cache_dir, cases, rnd.randrange(1 << 30), barrier, results))
                   for _ in range(args.procs)]
        fresh = [ctx.Process(target=verifier, args=(cache_dir, cases, args.seed, results))]
        hits = 0  # the fresh process's
        for group in (workers, fresh):
            got, hung = _collect(group, results, TIMEOUT)
            tally["hung"] += hung
            for wrong, errors, count, process_hits in got:
                tally["wrong"] += wrong
                tally["errors"] += errors
                tally["cases"] += count
                if group is fresh:
                    hits = process_hits
        entries = sum(1 for _ in Path(cache_dir).rglob("*.entry"))
    out(f"round {r + 1:3d} ({start}): {len(cases)} (op, dtype) x {args.procs} processes + fresh: "
        f"{tally['cases']} cases, {len(tally['wrong'])} wrong, {len(tally['errors'])} exceptions, "
        f"{tally['hung']} hung; {entries} cache entries, fresh process loaded {hits} driver overloads")
    for line in (tally["wrong"] + tally["errors"])[:5]:
        out("   " + line.replace("\n", "\n   "))
    return tally


def main(argv=None) -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--rounds", type=int, default=30)
    parser.add_argument("--procs", type=int, default=3)
    parser.add_argument("--cases", type=int, default=24, help="(op, dtype) pairs per round")
    parser.add_argument("--seed", type=int, default=0)
    parser.add_argument("--start", choices=("fork", "spawn", "both"), default="both")
    args = parser.parse_args(argv)
    t0 = time.perf_counter()
    total = {"wrong": 0, "errors": 0, "hung": 0, "cases": 0}
    for r in range(args.rounds):
        tally = one_round(r, args)
        for k in ("wrong", "errors"):
            total[k] += len(tally[k])
        total["hung"] += tally["hung"]
        total["cases"] += tally["cases"]
    seconds = time.perf_counter() - t0
    print(f"{args.rounds} rounds x ({args.procs} processes + 1 fresh), {total['cases']} cases: "
          f"{total['wrong']} wrong values, {total['errors']} unexpected exceptions, {total['hung']} hung, "
          f"{seconds:.0f} s")
    return 1 if total["wrong"] or total["errors"] or total["hung"] else 0


if __name__ == "__main__":
    sys.exit(main())
