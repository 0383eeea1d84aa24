"""CPU benchmark table: gpubcast (Numba backend) vs NumPy vs onnxruntime on broadcast patterns.

float32, preallocated outputs, median of interleaved repeats: the implementations take turns (in a
rotating order, with a pause before each timed call so that no thread pool still spins from the
previous call), so load from other processes hits them alike.  onnxruntime runs a one-node ``Add``
model (``Transpose`` then ``Add`` for the transposed case: it has no strided inputs) with
``intra_op_num_threads`` equal to Numba's thread count and spinning off, inputs and the
preallocated output bound with io_binding.

    python benchmarks/cpu_table.py [--repeats N] [--calls N] [--json PATH]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import statistics
import time

import numba
import numpy as np

import gpubcast as gb

CASES = [  # name, shape of a, shape of b, a transposed
    ("same shape 32M", (1 << 25,), (1 << 25,), False),
    ("row (8192,4096)+(4096,)", (8192, 4096), (4096,), False),
    ("column (8192,4096)+(8192,1)", (8192, 4096), (8192, 1), False),
    ("NCHW (128,64,56,56)+(1,64,1,1)", (128, 64, 56, 56), (1, 64, 1, 1), False),
    ("outer (8192,1)+(1,4096)", (8192, 1), (1, 4096), False),
    ("rank-6 (8,1,16,1,32,64)+(1,12,1,24,32,1)", (8, 1, 16, 1, 32, 64), (1, 12, 1, 24, 32, 1), False),
    ("transposed (4096,4096).T+(4096,4096)", (4096, 4096), (4096, 4096), True),
]


def _ort_runner(a_shape, b_shape, out, transposed, threads):
    """A callable running the onnxruntime model into ``out``, or None without onnxruntime."""
    try:
        import onnxruntime as ort
        from onnx import TensorProto, helper
    except ImportError:
        return None, None
    f32 = TensorProto.FLOAT
    nodes = [helper.make_node("Add", ["A", "B"], ["C"])]
    if transposed:
        nodes = [helper.make_node("Transpose", ["A"], ["AT"]), helper.make_node("Add", ["AT", "B"], ["C"])]
    graph = helper.make_graph(nodes, "bench", [helper.make_tensor_value_info("A", f32, a_shape),
                                               helper.make_tensor_value_info("B", f32, b_shape)],
                              [helper.make_tensor_value_info("C", f32, out.shape)])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = threads
    opts.inter_op_num_threads = 1
    opts.add_session_config_entry("session.intra_op.allow_spinning", "0")
    sess = ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])

    def bind(a, b):
        binding = sess.io_binding()
        binding.bind_cpu_input("A", a)
        binding.bind_cpu_input("B", b)
        binding.bind_output("C", "cpu", 0, np.float32, list(out.shape), out.ctypes.data)
        return binding
    return sess, bind


def _median_times(fns, repeats, pause=0.02):
    """Median seconds of each callable: one warm-up each, then calls interleaved in a rotating
    order, each after a pause."""
    for f in fns.values():
        f()
    names = list(fns)
    times = {k: [] for k in fns}
    for r in range(repeats):
        for k in names[r % len(names):] + names[:r % len(names)]:
            time.sleep(pause)
            t = time.perf_counter()
            fns[k]()
            times[k].append(time.perf_counter() - t)
    return {k: statistics.median(v) for k, v in times.items()}


def _bench_case(rng, name, sa, sb, transposed, threads, repeats):
    """One row of the table (milliseconds). Its arrays, closures and session are locals, freed on
    return, before the next case allocates."""
    a = rng.random(sa, dtype=np.float32)
    b = rng.random(sb, dtype=np.float32)
    x = a.T if transposed else a
    out = np.empty(np.broadcast_shapes(x.shape, b.shape), np.float32)
    fns = {"numpy": lambda: np.add(x, b, out=out), "gpubcast": lambda: gb.add(x, b, out=out)}
    sess, bind = _ort_runner(list(sa), list(sb), out, transposed, threads)
    if sess is not None:
        binding = bind(a, b)
        fns["onnxruntime"] = lambda: sess.run_with_iobinding(binding)
    gb.add(x, b, out=out)
    np.testing.assert_array_equal(out, x + b)
    t = _median_times(fns, repeats)
    return {"case": name, **{k: v * 1e3 for k, v in t.items()}}


def bench_cases(repeats):
    rng = np.random.default_rng(0)
    threads = numba.get_num_threads()
    return [_bench_case(rng, name, sa, sb, transposed, threads, repeats)
            for name, sa, sb, transposed in CASES]


def bench_per_call(calls):
    """Per-call time (microseconds) of (4,) + (1,) into a preallocated output."""
    a, b = np.ones(4, np.float32), np.ones(1, np.float32)
    out = np.empty(4, np.float32)
    fns = {"numpy": lambda: np.add(a, b, out=out), "gpubcast": lambda: gb.add(a, b, out=out)}
    sess, bind = _ort_runner([4], [1], out, False, numba.get_num_threads())
    if sess is not None:
        binding = bind(a, b)
        fns["onnxruntime"] = lambda: sess.run_with_iobinding(binding)

    def batch(f):
        def run():
            for _ in range(calls):
                f()
        return run
    t = _median_times({k: batch(f) for k, f in fns.items()}, 15, pause=0.0)
    return {k: v / calls * 1e6 for k, v in t.items()}


def table(rows, per_call) -> str:
    impls = [k for k in ("numpy", "gpubcast", "onnxruntime") if k in rows[0]]
    head = ("| case | " + " | ".join(f"{k} ms" for k in impls) + " | vs NumPy |"
            + (" vs onnxruntime |" if "onnxruntime" in impls else ""))
    lines = [head, "|" + "---|" * (head.count("|") - 1)]
    for r in rows:
        cells = " | ".join(f"{r[k]:.2f}" for k in impls)
        extra = f" {r['onnxruntime'] / r['gpubcast']:.2f}x |" if "onnxruntime" in r else ""
        lines.append(f"| {r['case']} | {cells} | {r['numpy'] / r['gpubcast']:.2f}x |{extra}")
    cells = " | ".join(f"{per_call[k]:.2f} us" for k in impls)
    extra = f" {per_call['onnxruntime'] / per_call['gpubcast']:.2f}x |" if "onnxruntime" in per_call else ""
    lines.append(f"| per call (4,)+(1,) | {cells} | {per_call['numpy'] / per_call['gpubcast']:.2f}x |{extra}")
    return "\n".join(lines)


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--repeats", type=int, default=11, help="timed calls per implementation and case")
    ap.add_argument("--calls", type=int, default=20000, help="calls per per-call batch")
    ap.add_argument("--json", help="also write the numbers here")
    args = ap.parse_args(argv)
    load = os.getloadavg()[0] if hasattr(os, "getloadavg") else float("nan")
    rows = bench_cases(args.repeats)
    per_call = bench_per_call(args.calls)
    info = (f"{platform.processor() or platform.machine()}, {os.cpu_count()} cores, Numba threads "
            f"{numba.get_num_threads()} ({numba.threading_layer()}), NumPy {np.__version__}, Numba "
            f"{numba.__version__}, load average {load:.2f} at start, {os.getloadavg()[0]:.2f} at end")
    print(info)
    print(table(rows, per_call))
    if args.json:
        with open(args.json, "w") as f:
            json.dump({"info": info, "cases": rows, "per_call_us": per_call}, f, indent=1)


if __name__ == "__main__":
    main()
