"""The benchmark's fused chains: ``gpubcast.fuse`` against the same chain op by op and its peers.

Each chain is one Python function of gpubcast calls (the fused and unfused gpubcast runs use the
very same function) and its spelling for each peer:

``affine``  ``a * x + b`` over an NCHW tensor with per-channel ``a`` and ``b`` (1, C, 1, 1);
``gelu``    the tanh GELU of ``x + bias`` over (M, K) with a (K,) bias;
``where``   ``where(x > t, x * s, 0)`` with per-column thresholds (K,) and per-row scales (M, 1);
``swish``   ``x * sigmoid(x)`` over (M, K) (issue #22); NumPy and CuPy, which have no sigmoid, write
            ``x * (1 / (1 + exp(-x)))``.

Peers: NumPy op by op; numexpr (CPU, if installed; its threads as onnxruntime's); onnxruntime
(the chain as one model, ``--threads`` intra-op threads); on a GPU, CuPy op by op, ``cupy.fuse``
and gpubcast's CUDA backend fused and op by op.  gpubcast op by op is the traced chain run step by
step as a user writes it op by op: each step the public function of its op.  Timing is
``measure.time_host`` / ``time_cuda`` (medians), over input sets rotated as for the pattern suite.
"""

from __future__ import annotations

import re
import time
from dataclasses import dataclass
from collections.abc import Callable

import numpy as np

from . import measure

GELU_C, GELU_K = 0.7978845608028654, 0.044715


def _affine(module):
    return lambda a, x, b: a * x + b


def _gelu(gb):
    def gelu(x, bias):
        h = x + bias
        return 0.5 * h * (1 + gb.tanh(GELU_C * (h + GELU_K * h * h * h)))
    return gelu


def _where(gb):
    return lambda x, t, s: gb.where(x > t, x * s, 0)


def _swish(module):
    sigmoid = getattr(module, "sigmoid", None) or (lambda x: 1 / (1 + module.exp(-x)))
    return lambda x: x * sigmoid(x)


@dataclass(frozen=True)
class Chain:
    name: str
    title: str
    make: Callable                       # module (gpubcast, numpy, cupy) -> the chain's function
    tiny: tuple
    cpu: tuple
    gpu: tuple
    numexpr: str                         # the chain as a numexpr expression of the inputs' names
    names: tuple                         # the inputs' names

    def shapes(self, size: str, device: str) -> tuple:
        return self.tiny if size == "tiny" else getattr(self, device)


CHAINS = (
    Chain("affine", "a * x + b, NCHW with per-channel a, b", _affine,
          ((1, 3, 1, 1), (2, 3, 4, 4), (1, 3, 1, 1)),
          ((1, 64, 1, 1), (16, 64, 112, 112), (1, 64, 1, 1)),
          ((1, 256, 1, 1), (32, 256, 112, 112), (1, 256, 1, 1)),
          "a * x + b", ("a", "x", "b")),
    Chain("gelu", "tanh GELU of x + bias, (M, K) + (K,)", _gelu,
          ((4, 8), (8,)), ((4096, 3072), (3072,)), ((16384, 8192), (8192,)),
          f"0.5 * (x + bias) * (1 + tanh({GELU_C} * ((x + bias) + {GELU_K} * (x + bias) ** 3)))", ("x", "bias")),
    Chain("where", "where(x > t, x * s, 0), t (K,), s (M, 1)", _where,
          ((4, 8), (8,), (4, 1)), ((4096, 3072), (3072,), (4096, 1)), ((16384, 8192), (8192,), (16384, 1)),
          "where(x > t, x * s, 0)", ("x", "t", "s")),
    Chain("swish", "x * sigmoid(x), (M, K)", _swish,
          ((4, 8),), ((4096, 3072),), ((16384, 8192),), "x / (1 + exp(-x))", ("x",)),
)


def select(names) -> tuple:
    """The chains called ``names`` (all when empty), in suite order; a clear error for unknown names."""
    known = {c.name for c in CHAINS}
    unknown = [n for n in names if n not in known]
    if unknown:
        raise ValueError(f"unknown fused chain(s) {', '.join(unknown)}; choose from "
                         f"{', '.join('fused-' + c.name for c in CHAINS)}")
    return tuple(c for c in CHAINS if not names or c.name in names)


def inputs(chain: Chain, size: str, device: str, dtype, sets: int, seed: int = 0):
    rng = np.random.default_rng(seed)
    return [[rng.standard_normal(s).astype(dtype) for s in chain.shapes(size, device)] for _ in range(sets)]


def traffic(chain: Chain, size: str, device: str, dtype) -> int:
    shapes = chain.shapes(size, device)
    out = np.broadcast_shapes(*shapes)
    return measure.traffic_bytes([(s, np.dtype(dtype).itemsize) for s in shapes], (out, np.dtype(dtype).itemsize))


def _onnx_model(chain: Chain, shapes, dtype):
    """The chain as one ONNX model (constants as initializers)."""
    from onnx import helper, numpy_helper
    et = helper.np_dtype_to_tensor_dtype(np.dtype(dtype))
    ins = [helper.make_tensor_value_info(n, et, list(s)) for n, s in zip(chain.names, shapes)]
    const = lambda name, v: numpy_helper.from_array(np.array(v, dtype), name)
    if chain.name == "affine":
        nodes, inits = [helper.make_node("Mul", ["a", "x"], ["ax"]), helper.make_node("Add", ["ax", "b"], ["y"])], []
    elif chain.name == "gelu":
        nodes = [helper.make_node("Add", ["x", "bias"], ["h"]), helper.make_node("Mul", ["h", "h"], ["h2"]),
                 helper.make_node("Mul", ["h2", "h"], ["h3"]), helper.make_node("Mul", ["k", "h3"], ["kh3"]),
                 helper.make_node("Add", ["h", "kh3"], ["inner"]), helper.make_node("Mul", ["c", "inner"], ["arg"]),
                 helper.make_node("Tanh", ["arg"], ["t"]), helper.make_node("Add", ["one", "t"], ["t1"]),
                 helper.make_node("Mul", ["half", "h"], ["hh"]), helper.make_node("Mul", ["hh", "t1"], ["y"])]
        inits = [const("k", GELU_K), const("c", GELU_C), const("one", 1), const("half", 0.5)]
    elif chain.name == "swish":
        nodes, inits = [helper.make_node("Sigmoid", ["x"], ["s"]), helper.make_node("Mul", ["x", "s"], ["y"])], []
    else:
        nodes = [helper.make_node("Greater", ["x", "t"], ["m"]), helper.make_node("Mul", ["x", "s"], ["xs"]),
                 helper.make_node("Where", ["m", "xs", "zero"], ["y"])]
        inits = [const("zero", 0)]
    out = helper.make_tensor_value_info("y", et, list(np.broadcast_shapes(*shapes)))
    graph = helper.make_graph(nodes, chain.name, ins, [out], initializer=inits)
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)


def runners(chain: Chain, size: str, threads: int, dtype, gpu: bool) -> dict:
    """Backend label -> (device, make(input set) -> call): every implementation present here."""
    import gpubcast as gb
    from gpubcast import fusion
    fused = gb.fuse(chain.make(gb))
    numpy_chain = chain.make(np)

    def unfused(xs):
        """The traced chain op by op as a user writes it: each step the public function of its op
        (``gb.multiply``, ``gb.add``, ...) on the inputs and the earlier steps' results, so each call
        takes the path a user's call takes (the chain's function itself would run NumPy's or CuPy's
        operators on arrays).  A step with no public function: ``fusion.evaluate``, op by op."""
        [program] = fused._trace(xs).programs
        functions = [getattr(gb, node.op.name, None) for node, _ in program.steps]
        if None in functions or program.result[0] != "step":
            return lambda: fusion.evaluate(program, xs)
        leaves = [xs[leaf[0].arg] for leaf in program.leaves]
        steps = list(zip(functions, (refs for _, refs in program.steps)))

        def run():
            values = []
            for f, refs in steps:
                values.append(f(*[leaves[k] if kind == "leaf" else program.constants[k] if kind == "const"
                                  else values[k] for kind, k in refs]))
            return values[program.result[1]]
        return run
    out = {
        "gpubcast fused": ("cpu", lambda xs: lambda: fused(*xs)),
        "gpubcast op by op": ("cpu", unfused),
        "numpy op by op": ("cpu", lambda xs: lambda: numpy_chain(*xs)),
    }
    try:
        import numexpr
        numexpr.set_num_threads(threads)
        out["numexpr"] = ("cpu", lambda xs: lambda: numexpr.evaluate(chain.numexpr, dict(zip(chain.names, xs))))
    except ImportError:
        pass
    try:
        import onnxruntime as ort
        options = ort.SessionOptions()
        options.intra_op_num_threads = threads
        session = ort.InferenceSession(_onnx_model(chain, chain.shapes(size, "cpu"), dtype).SerializeToString(),
                                       options, providers=["CPUExecutionProvider"])
        out["onnxruntime"] = ("cpu", lambda xs: lambda: session.run(None, dict(zip(chain.names, xs))))
    except ImportError:
        pass
    if gpu:
        import cupy
        # a chain is a lambda, and cupy.fuse names its kernel after the function: give it a C name
        cf = cupy.fuse(kernel_name="gb_bench_" + re.sub(r"\W", "_", chain.name))(chain.make(cupy))
        cupy_chain = chain.make(cupy)
        out["cupy op by op"] = ("gpu", lambda xs: lambda: cupy_chain(*xs))
        out["cupy.fuse"] = ("gpu", lambda xs: lambda: cf(*xs))
        out["gpubcast cuda fused"] = ("gpu", lambda xs: lambda: fused(*xs))
        out["gpubcast cuda op by op"] = ("gpu", unfused)
    return out


def run(size: str, *, dtype=np.float32, threads: int = 2, repeat: int = 5, sets: int = 2, min_sample_s: float = 0.05,
        gpu: bool = False, chains=CHAINS, progress=None) -> list[dict]:
    """One record per (chain, backend): median seconds per call, GB/s, first-call seconds."""
    records = []
    for chain in chains:
        for label, (device, make) in runners(chain, size, threads, dtype, gpu).items():
            if progress:
                progress(f"fused {chain.name} {size} {label}")
            sets_ = inputs(chain, size, device, dtype, sets)
            if device == "gpu":
                import cupy
                sets_ = [[cupy.asarray(x) for x in xs] for xs in sets_]
            calls = [make(xs) for xs in sets_]
            t0 = time.perf_counter()
            calls[0]()               # the first call: tracing, compiling, loading
            if device == "gpu":
                cupy.cuda.get_current_stream().synchronize()
            first = time.perf_counter() - t0
            timer = measure.time_cuda if device == "gpu" else measure.time_host
            t = timer(calls, repeat=repeat, min_sample_s=min_sample_s)
            records.append({"chain": chain.name, "size": size, "backend": label, "device": device,
                            "median_s": t.median_s, "first_s": first,
                            "gbps": measure.gbps(traffic(chain, size, device, dtype), t.median_s)})
    return records


#: each fused run and the runs it is compared with (the same device)
PEERS = {"gpubcast fused": ("gpubcast op by op", "numpy op by op", "numexpr", "onnxruntime"),
         "gpubcast cuda fused": ("gpubcast cuda op by op", "cupy op by op", "cupy.fuse")}


#: (chain, fused run, peer) -> (least speed-up, issue): the issues' goals, at the large size
GOALS = {("affine", "gpubcast fused", "gpubcast op by op"): (1.5, 14),
         ("affine", "gpubcast fused", "numpy op by op"): (2.5, 14),
         ("gelu", "gpubcast fused", "numexpr"): (1.5, 14),
         ("gelu", "gpubcast fused", "onnxruntime"): (1.0, 14),
         ("swish", "gpubcast fused", "numpy op by op"): (2.0, 22),
         ("swish", "gpubcast fused", "numexpr"): (1.0, 22)}


def comparisons(records) -> list[dict]:
    """Each fused run against the peers of its device (same run): the speed-up, and where an issue
    sets one, its goal and whether it is met."""
    out = []
    by = {(r["chain"], r["size"], r["backend"]): r["median_s"] for r in records}
    for (chain, size, backend), t in sorted(by.items()):
        for peer in PEERS.get(backend, ()):
            other = by.get((chain, size, peer))
            if other:
                goal, issue = GOALS.get((chain, backend, peer), (None, None)) if size == "large" else (None, None)
                out.append({"chain": chain, "size": size, "backend": backend, "peer": peer, "median_s": t,
                            "peer_s": other, "speedup": other / t, "goal": goal, "issue": issue,
                            "met": None if goal is None else other / t >= goal})
    return out


def speedups(records) -> list[str]:
    """The comparisons as lines, each goal marked met or not."""
    return [f"{c['chain']} {c['size']}: {c['backend']} is {c['speedup']:.2f}x {c['peer']} "
            f"({c['median_s'] * 1e3:.3g} ms vs {c['peer_s'] * 1e3:.3g} ms)"
            + ("" if c["goal"] is None else
               f"; goal (#{c['issue']}) >= {c['goal']:g}x: {'met' if c['met'] else 'NOT met'}")
            for c in comparisons(records)]
