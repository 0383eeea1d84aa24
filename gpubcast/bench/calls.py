"""Small calls (``python -m gpubcast bench --size tiny``): what one everyday call costs, gpubcast
against the same call in NumPy (or onnxruntime), measured in one run.

Every row is a warm, repeated call on (4, 8) float32 operands (the fused chains on their tiny
shapes, ``gpubcast/bench/fused.py``); the time is the median over samples of many calls each
(``measure.time_host``).  Each gpubcast call is written exactly as a user writes it: no ``backend=``
or option where a user passes none (a row that names one is about that form).  Rows: the
NumPy-style functions with arrays, Python and NumPy scalars and a 0-d array (the scalar's own cost),
``where``, ``cast``, ``clip``, ``broadcast_to``, ``out=``; every other calling form (issue 42):
``dtype=``, ``out=`` of another dtype, ``backend=`` named, ``broadcast='pdpd'`` with ``axis`` and
``'none'``, each ``broadcast_to`` mode, ``expand``, math functions and activations, ``prelu``,
``where`` under pdpd, the ONNX and OpenVINO front ends; a fused chain and the same chains op by op;
the ONNX backend running a 3-node graph; and the CUDA backend's host path with the kernel launch
stubbed (``_host_only_cupy``: a stand-in for CuPy whose launches do nothing), each call through the
compiled launch path and through the Python runner, and the stand-in's own allocation; their peer
is CuPy's own host cost (not measurable without a GPU, so not shown).

A row whose peer is NumPy is held to issue 42's goal: gpubcast's call at most ``GOAL`` times NumPy's
closest equivalent call (``met`` in the record; the table marks the rows above it).
"""

from __future__ import annotations

import contextlib
import functools
import math
from collections.abc import Callable
from dataclasses import dataclass
from types import SimpleNamespace

import numpy as np

from . import fused, measure

SHAPE = (4, 8)
WARM_CALLS = 5
#: issue 42: every calling form at most this many times NumPy's closest equivalent call
GOAL = 1.5


@dataclass(frozen=True)
class Row:
    call: str
    peer: str                                    # what the gpubcast call is compared with
    make: Callable      # (ExitStack for what it sets up) -> (gpubcast call, peer call or None)


def _operands():
    rng = np.random.default_rng(0)
    x = rng.standard_normal(SHAPE).astype(np.float32)
    return x, rng.standard_normal(SHAPE[-1:]).astype(np.float32)


def _unary_binary_rows():
    import gpubcast as gb

    x, b = _operands()
    t, two, zero_d, o = np.float32(0.5), np.float32(2.0), np.array(2.0, np.float32), np.empty(SHAPE, np.float32)
    return [
        Row("add(x, b), b (8,)", "numpy", lambda _: (lambda: gb.add(x, b), lambda: np.add(x, b))),
        Row("add(x, b, out=o)", "numpy", lambda _: (lambda: gb.add(x, b, out=o), lambda: np.add(x, b, out=o))),
        Row("multiply(x, 2.0)", "numpy", lambda _: (lambda: gb.multiply(x, 2.0), lambda: np.multiply(x, 2.0))),
        Row("multiply(x, np.float32(2))", "numpy",
            lambda _: (lambda: gb.multiply(x, two), lambda: np.multiply(x, two))),
        Row("multiply(x, 0-d array)", "numpy",
            lambda _: (lambda: gb.multiply(x, zero_d), lambda: np.multiply(x, zero_d))),
        Row("add(x, 1)", "numpy", lambda _: (lambda: gb.add(x, 1), lambda: np.add(x, 1))),
        Row("tanh(x)", "numpy", lambda _: (lambda: gb.tanh(x), lambda: np.tanh(x))),
        Row("where(x > t, x, 0.0)", "numpy",
            lambda _: (lambda: gb.where(gb.greater(x, t), x, 0.0), lambda: np.where(x > t, x, 0.0))),
        Row("cast(x, float16)", "numpy astype",
            lambda _: (lambda: gb.cast(x, np.float16), lambda: x.astype(np.float16))),
        Row("clip(x, -1.0, 1.0)", "numpy", lambda _: (lambda: gb.clip(x, -1.0, 1.0), lambda: np.clip(x, -1.0, 1.0))),
        Row("broadcast_to(b, (4, 8))", "numpy (+ copy)",
            lambda _: (lambda: gb.broadcast_to(b, SHAPE), lambda: np.broadcast_to(b, SHAPE).copy())),
    ]


def _form_rows():
    """Every calling form of issue 42, each against NumPy's closest equivalent call (the lead's list,
    one row per form); an activation NumPy has no function for is held to one NumPy ufunc call."""
    import gpubcast as gb
    import gpubcast.onnx as gx
    from gpubcast import openvino as gv

    rng = np.random.default_rng(1)
    x, z = (rng.standard_normal(SHAPE).astype(np.float32) for _ in range(2))
    b, c = rng.standard_normal(SHAPE[1]).astype(np.float32), rng.standard_normal(SHAPE[0]).astype(np.float32)
    m3 = rng.standard_normal((2, *SHAPE)).astype(np.float32)
    xi = rng.integers(1, 9, SHAPE).astype(np.int32)
    o64, f64 = np.empty(SHAPE, np.float64), np.float64
    col = c[:, None]
    rows = [
        ("add(x, z, dtype=float64)", "numpy", lambda: gb.add(x, z, dtype=f64), lambda: np.add(x, z, dtype=f64)),
        ("add(x, z, out=o float64)", "numpy", lambda: gb.add(x, z, out=o64), lambda: np.add(x, z, out=o64)),
        ("add(x, z, backend='numba')", "numpy", lambda: gb.add(x, z, backend="numba"), lambda: np.add(x, z)),
        ("add(x, z, backend='numpy')", "numpy", lambda: gb.add(x, z, backend="numpy"), lambda: np.add(x, z)),
        ("add(x, c, broadcast='pdpd', axis=0)", "numpy c[:, None]",
         lambda: gb.add(x, c, broadcast="pdpd", axis=0), lambda: np.add(x, c[:, None])),
        ("add(x, z, broadcast='none')", "numpy", lambda: gb.add(x, z, broadcast="none"), lambda: np.add(x, z)),
        ("add(x, 1.5)", "numpy", lambda: gb.add(x, 1.5), lambda: np.add(x, 1.5)),
        ("exp(x)", "numpy", lambda: gb.exp(x), lambda: np.exp(x)),
        ("gelu(x)", "numpy np.tanh (one ufunc)", lambda: gb.gelu(x), lambda: np.tanh(x)),
        ("leaky_relu(x)", "numpy np.maximum(x, 0.01 * x)", lambda: gb.leaky_relu(x),
         lambda: np.maximum(x, 0.01 * x)),
        ("relu(x)", "numpy np.maximum(x, 0)", lambda: gb.relu(x), lambda: np.maximum(x, 0)),
        ("prelu(x, b)", "numpy np.where(x >= 0, x, b * x)", lambda: gb.prelu(x, b),
         lambda: np.where(x >= 0, x, b * x)),
        ("where(x > 0, x, z)", "numpy", lambda: gb.where(x > 0, x, z), lambda: np.where(x > 0, x, z)),
        ("where(x > 0, x, c, broadcast='pdpd', axis=0)", "numpy c[:, None]",
         lambda: gb.where(x > 0, x, c, broadcast="pdpd", axis=0), lambda: np.where(x > 0, x, c[:, None])),
        ("broadcast_to(c, (4, 8), mode='explicit', axes_mapping=[0])", "numpy broadcast_to(c[:, None]) + copy",
         lambda: gb.broadcast_to(c, SHAPE, mode="explicit", axes_mapping=[0]),
         lambda: np.broadcast_to(col, SHAPE).copy()),
        ("broadcast_to(c, (4, 8), mode='pdpd', axis=0)", "numpy broadcast_to(c[:, None]) + copy",
         lambda: gb.broadcast_to(c, SHAPE, mode="pdpd", axis=0), lambda: np.broadcast_to(col, SHAPE).copy()),
        ("broadcast_to(b, (4, 1), mode='bidirectional')", "numpy broadcast_to + copy",
         lambda: gb.broadcast_to(b, (4, 1), mode="bidirectional"), lambda: np.broadcast_to(b, SHAPE).copy()),
        ("expand(b, (4, 8))", "numpy broadcast_to + copy", lambda: gb.expand(b, SHAPE),
         lambda: np.broadcast_to(b, SHAPE).copy()),
        ("onnx Add(x, b)", "numpy", lambda: gx.Add(x, b), lambda: np.add(x, b)),
        ("onnx Div(xi, xi), int32", "numpy floor_divide", lambda: gx.Div(xi, xi), lambda: np.floor_divide(xi, xi)),
        ("onnx Relu(x)", "numpy np.maximum(x, 0)", lambda: gx.Relu(x), lambda: np.maximum(x, 0)),
        ("onnx Sum(x, z, x)", "numpy x + z + x", lambda: gx.Sum(x, z, x), lambda: x + z + x),
        ("openvino Add(x, b)", "numpy", lambda: gv.Add(x, b), lambda: np.add(x, b)),
        ("openvino Add(m3, x, auto_broadcast='pdpd', axis=1)", "numpy",
         lambda: gv.Add(m3, x, auto_broadcast="pdpd", axis=1), lambda: np.add(m3, x)),
        ("openvino Broadcast(c, [4, 8], [0], mode='explicit')", "numpy broadcast_to(c[:, None]) + copy",
         lambda: gv.Broadcast(c, [4, 8], [0], mode="explicit"), lambda: np.broadcast_to(col, SHAPE).copy()),
    ]
    return [Row(call, peer, _pair(ours, theirs)) for call, peer, ours, theirs in rows]


def _pair(ours, theirs):
    """A row's ``make`` for calls that need nothing set up."""
    return lambda _stack: (ours, theirs)


def _on(f, args):
    return lambda: f(*args)


def _chain_rows():
    import gpubcast as gb

    rows = []
    for chain in fused.CHAINS:
        args = fused.inputs(chain, "tiny", "cpu", np.float32, 1)[0]
        by_gb, by_np = chain.make(gb), chain.make(np)
        rows.append(Row(f"{chain.name} chain, op by op", "numpy op by op", _pair(_on(by_gb, args), _on(by_np, args))))
        rows.append(Row(f"{chain.name} chain, gb.fuse", "numpy op by op",
                        _pair(_on(gb.fuse(by_gb), args), _on(by_np, args))))
    return rows


def _onnx_graph():
    """y = tanh(x * s + b), s and b (8,): three nodes, broadcast."""
    from onnx import TensorProto, helper

    f = TensorProto.FLOAT
    nodes = [helper.make_node("Mul", ["x", "s"], ["xs"]), helper.make_node("Add", ["xs", "b"], ["xsb"]),
             helper.make_node("Tanh", ["xsb"], ["y"])]
    graph = helper.make_graph(nodes, "three", [helper.make_tensor_value_info("x", f, SHAPE),
                                               helper.make_tensor_value_info("s", f, SHAPE[-1:]),
                                               helper.make_tensor_value_info("b", f, SHAPE[-1:])],
                              [helper.make_tensor_value_info("y", f, SHAPE)])
    return helper.make_model(graph, opset_imports=[helper.make_opsetid("", 21)], ir_version=10)


def _onnx_rows():
    try:
        import onnx  # noqa: F401 - the bench extra: present, or the rows are skipped
    except ImportError:
        return []
    from gpubcast.onnx import backend

    x, b = _operands()
    s = b * 0.5
    model = _onnx_graph()
    rep = backend.prepare(model)
    rows = [Row("ONNX 3-node graph, backend rep.run", "numpy op by op",
                _pair(lambda: rep.run([x, s, b]), lambda: np.tanh(x * s + b)))]
    try:
        import onnxruntime as ort
    except ImportError:
        return rows
    opts = ort.SessionOptions()
    opts.intra_op_num_threads = 1

    def with_ort(_):
        session = ort.InferenceSession(model.SerializeToString(), opts, providers=["CPUExecutionProvider"])
        r = backend.prepare(model)
        return (lambda: r.run([x, s, b]), lambda: session.run(None, {"x": x, "s": s, "b": b}))
    rows.append(Row("ONNX 3-node graph, backend rep.run", "onnxruntime", with_ort))
    return rows


class _HostOnlyArray:
    """What the CUDA backend reads of a CuPy array, as plain attributes (CuPy's are C fields); no
    memory behind it (nothing is launched).  Made as cheaply as Python allows (CuPy's constructor is
    compiled): the strides of a (shape, dtype) are computed once."""

    __slots__ = ("dtype", "shape", "strides", "data")
    _DATA = SimpleNamespace(ptr=1 << 40, device_id=0)    # an aligned address nothing reads

    def __init__(self, shape, dtype, data=_DATA):
        self.shape = shape if type(shape) is tuple else tuple(shape)
        self.dtype = dtype if type(dtype) is np.dtype else np.dtype(dtype)
        self.strides = _c_strides(self.shape, self.dtype.itemsize)
        self.data = data

    @classmethod
    def at(cls, shape, dtype, k: int):
        """An array at its own address (the ``k``-th): operands that share no memory."""
        return cls(shape, dtype, SimpleNamespace(ptr=(1 << 40) + (k + 1) * (1 << 30), device_id=0))

    ndim = property(lambda self: len(self.shape))
    itemsize = property(lambda self: self.dtype.itemsize)
    size = property(lambda self: math.prod(self.shape))

    @property
    def __cuda_array_interface__(self):
        return {"shape": self.shape, "typestr": self.dtype.str, "data": (self.data.ptr, False), "version": 3}


@functools.lru_cache(maxsize=64)
def _c_strides(shape: tuple, itemsize: int) -> tuple:
    return tuple(itemsize * math.prod(shape[k + 1:]) for k in range(len(shape)))


def _host_only_cupy():
    """A stand-in for CuPy whose kernel launches do nothing: a call through it costs gpubcast's CUDA
    host path (hot path, operand checks, argument packing) and nothing else."""
    class Device:
        id, compute_capability = 0, "90"

        def __enter__(self):
            return self

        def __exit__(self, *exc):
            return False

    device = Device()

    class Function:                             # CuPy's: called by the Python path, its ptr by the compiled one
        ptr = 1 << 41

        def __call__(self, grid, block, args):
            return None

    class Module:
        def load(self, binary):
            pass

        def get_function(self, name):
            return Function()

    stream = SimpleNamespace(ptr=0)
    xp = SimpleNamespace(ndarray=_HostOnlyArray, empty=_HostOnlyArray,
                         may_share_memory=lambda a, b: False,
                         cuda=SimpleNamespace(Device=lambda device_id=None: device,
                                              function=SimpleNamespace(Module=Module),
                                              get_current_stream=lambda: stream,
                                              runtime=SimpleNamespace(getDevice=lambda: 0)))
    return xp


def _cuda_rows():
    """The CUDA backend's host path on ``_host_only_cupy``: each call through the compiled launch path
    (its no-op launcher) and, as the row after it, through the Python runner (the path a call took
    before it; ``CudaBackend(compiled=False)``), in one run."""
    import gpubcast as gb
    from gpubcast import backends
    from gpubcast.backends.cuda import CudaBackend
    from gpubcast.cuda import compiled_launch

    affine = fused.CHAINS[0]
    shapes = affine.shapes("tiny", "gpu")
    scale_shift = gb.fuse(affine.make(gb))

    def on_device(call, compiled):
        def make(stack):
            backend = CudaBackend(_host_only_cupy(), compiled_launch.noop(), compiled=compiled)
            stack.enter_context(backends.registered("cuda", backend))
            x, b = (_HostOnlyArray.at(a.shape, a.dtype, k) for k, a in enumerate(_operands()))
            o = _HostOnlyArray.at(x.shape, x.dtype, 2)
            chain = [_HostOnlyArray.at(s, np.float32, 3 + k) for k, s in enumerate(shapes)]
            return (lambda: call(x, b, o, chain), None)
        return make

    calls = [("add(x, b)", lambda x, b, o, c: gb.add(x, b)),
             ("add(x, b, out=o)", lambda x, b, o, c: gb.add(x, b, out=o)),
             ("multiply(x, 2.0)", lambda x, b, o, c: gb.multiply(x, 2.0)),
             (f"{affine.name} chain, gb.fuse", lambda x, b, o, c: scale_shift(*c))]
    stub = _HostOnlyArray(SHAPE, np.float32)
    return [Row("CUDA stub allocation alone (CuPy's allocator stands in)", "",
                _pair(lambda: _HostOnlyArray(stub.shape, stub.dtype), None))] + [
        Row(f"CUDA {name}, host path (launch stubbed){'' if compiled else ', Python runner'}", "",
            on_device(call, compiled))
        for name, call in calls for compiled in (True, False)]


def rows(cuda: bool = True) -> list[Row]:
    return [*_unary_binary_rows(), *_form_rows(), *_chain_rows(), *_onnx_rows(), *(_cuda_rows() if cuda else [])]


def held_to_goal(peer: str) -> bool:
    """Whether a row with this peer is held to ``GOAL`` (NumPy's calls; not onnxruntime, not none)."""
    return peer.startswith("numpy")


def run(*, repeat: int = 5, min_sample_s: float = 0.05, cuda: bool = True, progress=None) -> list[dict]:
    """One record per row: ``{"call", "peer", "gpubcast_s", "peer_s", "ratio", "met"}`` (peer_s None: no
    peer; ratio gpubcast's time over the peer's; met: ratio <= GOAL, None for a row not held to it)."""
    records = []
    for row in rows(cuda):
        if progress:
            progress(f"calls {row.call}")
        with contextlib.ExitStack() as stack:   # what a row set up (the virtual device) ends with it
            ours, theirs = row.make(stack)
            for _ in range(WARM_CALLS):   # compiled, prepared and on the hot path before it is timed
                ours()
            t_ours = measure.time_host([ours], repeat=repeat, min_sample_s=min_sample_s).median_s
            t_theirs = None if theirs is None else \
                measure.time_host([theirs], repeat=repeat, min_sample_s=min_sample_s).median_s
        ratio = None if t_theirs is None else t_ours / t_theirs
        records.append({"call": row.call, "peer": row.peer, "gpubcast_s": t_ours, "peer_s": t_theirs, "ratio": ratio,
                        "met": ratio <= GOAL if ratio is not None and held_to_goal(row.peer) else None})
    return records
