"""The implementations the benchmark compares, each running a pattern the way its users would.

A peer has ``name`` (its id in the records), ``label`` (the table), ``device``
("cpu" | "gpu"), ``xp`` (the array module its cases are made in), ``note``
(how it is run, or None) and ``bind(pattern, shapes, case) -> (call, footnote)``:
``call()`` runs the pattern once on that input set and returns the result;
``footnote`` says how the pattern was expressed where the peer has no direct
equivalent (None where it does).

Every peer writes into the case's preallocated output where its API allows.
``discover`` finds the peers present on this machine and says why the others
are absent.
"""

from __future__ import annotations

from dataclasses import dataclass
from collections.abc import Callable

import numpy as np

from .patterns import Case, Pattern

WHERE_ALLOCATES = "{lib}.where has no out=: it allocates its result on every call"
SUM_AS_ADDS = "no variadic sum: one add, then two in-place adds into the output"
AXPB_TWO_OPS = "two ops: multiply into the output, then an in-place add"
SUM_ALLOCATES = "gpubcast's variadic sum is ONNX Sum (gpubcast.onnx.Sum): it has no out=, and allocates its result"
#: the custom-kernel pattern's kernel, in CuPy's ElementwiseKernel conventions
AXPB_KERNEL = ("T a, T x, T b", "T z", "z = a * x + b", "axpb")


def spelled_out(f, xs):
    """``f`` called on the 1 to 4 arguments ``xs`` as a user writes the call: each argument named,
    no ``*`` unpacking (which costs a tiny call a tenth of its time)."""
    if len(xs) == 1:
        (a,) = xs
        return lambda: f(a)
    if len(xs) == 2:
        a, b = xs
        return lambda: f(a, b)
    if len(xs) == 3:
        a, b, c = xs
        return lambda: f(a, b, c)
    a, b, c, d = xs
    return lambda: f(a, b, c, d)


def _identity(x):
    return x


@dataclass
class Library:
    """NumPy, CuPy or torch: the library's own ops, reshaping where a pattern needs it."""
    name: str
    label: str
    device: str
    xp: object
    add: Callable          # add(a, b, out)
    where: Callable        # where(cond, x, y, out) -> result
    copy: Callable         # copy(out, x): x broadcast into out
    wrap: Callable = _identity   # a case's array -> the library's array (zero-copy)
    where_writes_out: bool = False
    note: str | None = None
    axpb: Callable | None = None   # axpb(a, x, b, out): a user kernel; None: multiply, then add
    axpb_note: str | None = None

    def bind(self, pattern: Pattern, shapes, case: Case):
        ins, out = [self.wrap(x) for x in case.inputs], self.wrap(case.out)
        aligned, add, note = pattern.aligned(shapes), self.add, pattern.peer_note
        if pattern.op == "add":
            a, b = ins
            if pattern.rule == "pdpd":
                b_shape = aligned[1]
                return (lambda: add(a, b.reshape(b_shape), out)), note
            return (lambda: add(a, b, out)), None
        if pattern.op == "where":
            c, x, y, where = *ins, self.where
            return (lambda: where(c, x, y, out)), (None if self.where_writes_out
                                                  else WHERE_ALLOCATES.format(lib=self.name))
        if pattern.op == "sum":
            first, second, *rest = ins

            def call():
                add(first, second, out)
                for x in rest:
                    add(out, x, out)
                return out
            return call, SUM_AS_ADDS
        if pattern.op == "copy":
            (x,), (x_shape,), copy = ins, aligned, self.copy
            return (lambda: copy(out, x.reshape(x_shape))), note
        if pattern.op == "axpb":
            (a, x, b), axpb = ins, self.axpb
            if axpb is not None:
                return (lambda: axpb(a, x, b, out)), self.axpb_note

            def two_ops():
                add(_multiply(self.xp, a, x, out), b, out)
                return out
            return two_ops, AXPB_TWO_OPS
        raise ValueError(f"{self.name}: no way to run op {pattern.op!r}")


def _array_module_peer(name: str, label: str, device: str, xp) -> Library:
    """NumPy or CuPy (same API): ``xp.add(out=)``, ``xp.where`` (no out=), ``xp.copyto``."""
    def add(a, b, out):
        return xp.add(a, b, out=out)

    def copy(out, x):
        xp.copyto(out, x)
        return out
    return Library(name, label, device, xp, add, lambda c, x, y, out: xp.where(c, x, y), copy)


def _multiply(xp, a, x, out):
    return xp.multiply(a, x, out=out)


def numpy_peer() -> Library:
    return _array_module_peer("numpy", "NumPy", "cpu", np)


def cupy_peer() -> Library:
    import cupy
    peer = _array_module_peer("cupy", "CuPy", "gpu", cupy)
    kernel = []                   # made on first use

    def axpb(a, x, b, out):
        if not kernel:
            kernel.append(cupy.ElementwiseKernel(*AXPB_KERNEL))
        return kernel[0](a, x, b, out)
    peer.axpb, peer.axpb_note = axpb, "cupy.ElementwiseKernel"
    return peer


def torch_peer() -> Library:
    """torch CUDA on the cases' CuPy buffers (shared through DLPack; both run on the legacy
    default stream, so the CUDA events of ``measure.time_cuda`` bracket its kernels)."""
    import cupy
    import torch

    if not torch.cuda.is_available():
        raise RuntimeError(f"torch {torch.__version__} sees no CUDA device")

    def add(a, b, out):
        return torch.add(a, b, out=out)

    def where(c, x, y, out):
        return torch.where(c, x, y, out=out)

    def copy(out, x):
        return out.copy_(x)
    def axpb(a, x, b, out):
        return torch.addcmul(b, a, x, out=out)
    return Library("torch", "torch CUDA", "gpu", cupy, add, where, copy, wrap=torch.from_dlpack,
                   where_writes_out=True, axpb=axpb, axpb_note="torch.addcmul(b, a, x, out=)")


class Gpubcast:
    """gpubcast's public API (``add``, ``where``, ``broadcast_to``, ``expand``, ONNX ``Sum`` for the
    variadic sum, ``ElementwiseKernel`` for ``axpb``), each call written as its users write it.

    ``default=True`` (what ``discover`` makes): ``backend`` is the one gpubcast picks for these arrays
    by itself, so calls pass no ``backend=`` and no option at its default value -- the path a user's
    call takes; ``out=`` where the function has it (ONNX ``Sum`` has none: it allocates).  ``default``
    False forces ``backend`` (``backend=`` in every call: a kernel runs where its arrays are, NumPy
    arrays on its CPU build) and writes every result into ``out=`` (the variadic sum through
    ``dispatch.apply``)."""

    def __init__(self, backend: str, device: str, xp, label: str, note: str | None = None, *, default: bool = False):
        self.backend, self.device, self.xp, self.label, self.note = backend, device, xp, label, note
        self.name, self.default = f"gpubcast-{backend}", default

    def bind(self, pattern: Pattern, shapes, case: Case):
        import gpubcast as gb

        # each call spelled out as the user writes it (no **kwargs: unpacking costs 0.15 us a call)
        ins, out, be, user = case.inputs, case.out, self.backend, self.default
        if pattern.op == "add":
            (a, b), rule, axis = ins, pattern.rule, pattern.axis
            if rule == "numpy":
                return ((lambda: gb.add(a, b, out=out)) if user else
                        (lambda: gb.add(a, b, out=out, backend=be))), None
            return ((lambda: gb.add(a, b, out=out, broadcast=rule, axis=axis)) if user else
                    (lambda: gb.add(a, b, out=out, broadcast=rule, axis=axis, backend=be))), None
        if pattern.op == "where":
            c, x, y = ins
            return ((lambda: gb.where(c, x, y, out=out)) if user else
                    (lambda: gb.where(c, x, y, out=out, backend=be))), None
        if pattern.op == "sum":
            return self._sum(ins, out)
        if pattern.op == "axpb":
            kernel, (a, x, b) = gb.ElementwiseKernel(*AXPB_KERNEL), ins
            note = "gpubcast.ElementwiseKernel: built with the host C++ compiler" if self.device == "cpu" else None
            return (lambda: kernel(a, x, b, out)), note
        if pattern.op == "copy":
            (x,), target = ins, shapes[1]
            if pattern.rule == "explicit":
                m, to = pattern.axes_mapping, gb.broadcast_to
                return ((lambda: to(x, target, mode="explicit", axes_mapping=m, out=out)) if user else
                        (lambda: to(x, target, mode="explicit", axes_mapping=m, out=out, backend=be))), None
            if pattern.rule == "bidirectional":
                return ((lambda: gb.expand(x, target, out=out)) if user else
                        (lambda: gb.expand(x, target, out=out, backend=be))), None
        raise ValueError(f"{self.name}: no way to run op {pattern.op!r} under rule {pattern.rule!r}")

    def _sum(self, ins, out):
        """The variadic sum: ONNX ``Sum``, gpubcast's one function for it (no out=), by default."""
        if self.default:
            from gpubcast.onnx import Sum
            return spelled_out(Sum, ins), SUM_ALLOCATES
        from gpubcast import ops
        from gpubcast.dispatch import apply
        op, be = ops.get("sum"), self.backend
        return (lambda: apply(op, ins, out=out, backend=be)), None


ONNX_OPS = {"add": "Add", "where": "Where", "sum": "Sum", "copy": "Expand"}


class OnnxRuntime:
    """onnxruntime on the CPU: one-node models built in memory, ``threads`` intra-op threads,
    outputs bound to the case's NumPy buffer through IOBinding when that works here."""

    name, label, device, xp = "onnxruntime", "onnxruntime CPU", "cpu", np

    def __init__(self, threads: int = 2):
        import onnxruntime

        self.ort, self.threads, self._sessions = onnxruntime, threads, {}
        why = self._iobinding_fails()
        self.iobinding = why is None
        self.note = (f"onnxruntime {onnxruntime.__version__}, {threads} intra-op threads; " +
                     ("IOBinding: outputs written into preallocated NumPy buffers" if self.iobinding else
                      f"session.run allocates outputs (IOBinding into a NumPy buffer failed: {why})"))

    def session(self, pattern: Pattern, shapes, dtype):
        key = (pattern.name, shapes, np.dtype(dtype).str)
        if key not in self._sessions:
            options = self.ort.SessionOptions()
            options.intra_op_num_threads, options.inter_op_num_threads = self.threads, 1
            self._sessions[key] = self.ort.InferenceSession(
                onnx_model(pattern, shapes, dtype), options, providers=["CPUExecutionProvider"])
        return self._sessions[key]

    def bind(self, pattern: Pattern, shapes, case: Case):
        session = self.session(pattern, shapes, case.out.dtype)
        note = pattern.onnx_note
        feeds = {f"x{i}": x.reshape(s) for i, (x, s) in enumerate(zip(case.inputs, pattern.aligned(shapes)))}
        if not self.iobinding:
            return (lambda: session.run(None, feeds)[0]), note
        io, out = session.io_binding(), case.out
        for name, x in feeds.items():
            io.bind_cpu_input(name, x)
        io.bind_output("y", "cpu", 0, out.dtype, out.shape, out.ctypes.data)
        strided = {k: x for k, x in feeds.items() if not x.flags.c_contiguous}
        if strided:  # bind_cpu_input copies a strided array once: copy it on every call, as run() does
            def call():
                for name, x in strided.items():
                    io.bind_cpu_input(name, x)
                session.run_with_iobinding(io)
                return out
            return call, "strided input: bind_cpu_input makes it contiguous on every call"

        def call():
            session.run_with_iobinding(io)
            return out
        return call, note

    def _iobinding_fails(self) -> str | None:
        """None when an output bound to a NumPy buffer receives the result, else why not."""
        from .patterns import BY_NAME, make_cases
        try:
            pattern = BY_NAME["row"]
            shapes = pattern.tiny
            case = make_cases(pattern, shapes, np.float32, sets=1)[0]
            session = self.session(pattern, shapes, np.float32)
            io = session.io_binding()
            io.bind_cpu_input("x0", case.inputs[0])
            io.bind_cpu_input("x1", case.inputs[1])
            io.bind_output("y", "cpu", 0, np.float32, case.out.shape, case.out.ctypes.data)
            session.run_with_iobinding(io)
        except Exception as e:  # noqa: BLE001 - any failure means: fall back to run()
            return f"{type(e).__name__}: {e}"
        if not np.array_equal(case.out, case.inputs[0] + case.inputs[1]):
            return "the bound buffer did not receive the result"
        return None


def onnx_model(pattern: Pattern, shapes, dtype) -> bytes:
    """A one-node ONNX model (opset 17) computing ``pattern`` at ``shapes``: inputs x0..xn in
    their ``aligned`` shapes, output y; a copy is an Expand with its shape as an initializer."""
    from onnx import helper, numpy_helper

    aligned, out_shape = pattern.aligned(shapes), pattern.out_shape(shapes)
    inputs = [helper.make_tensor_value_info(f"x{i}", helper.np_dtype_to_tensor_dtype(dt), s)
              for i, (s, dt) in enumerate(zip(aligned, pattern.dtypes(dtype)))]
    names, initializers = [f"x{i}" for i in range(len(inputs))], []
    if pattern.op == "copy":
        target = out_shape if pattern.rule == "explicit" else shapes[1]
        initializers.append(numpy_helper.from_array(np.array(target, np.int64), "shape"))
        names.append("shape")
    output = helper.make_tensor_value_info("y", helper.np_dtype_to_tensor_dtype(np.dtype(dtype)), out_shape)
    if pattern.op == "axpb":      # x0 * x1 + x2: two nodes
        nodes = [helper.make_node("Mul", names[:2], ["t"]), helper.make_node("Add", ["t", names[2]], ["y"])]
    else:
        nodes = [helper.make_node(ONNX_OPS[pattern.op], names, ["y"])]
    graph = helper.make_graph(nodes, pattern.name, inputs, [output], initializers)
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)])
    model.ir_version = 8
    return model.SerializeToString()


def _why(e: BaseException) -> str:
    return f"{type(e).__name__}: {e}"


def discover(threads: int = 2):
    """(peers present here, {name: why absent}).  The GPU peers appear only where CuPy finds a
    CUDA device; gpubcast's CPU peer is the Numba backend, or the NumPy reference (labelled as
    such) where the Numba backend does not import."""
    from gpubcast import backends
    from gpubcast.info import gpu_info

    peers, absent = [numpy_peer()], {}
    try:
        backends.get("numba")
        peers.append(Gpubcast("numba", "cpu", np, "gpubcast CPU (Numba)", default=True))
    except Exception as e:  # noqa: BLE001 - any import failure: fall back, and say so
        absent["gpubcast-numba"] = _why(e)
        peers.append(Gpubcast("numpy", "cpu", np, "gpubcast (NumPy ref.)", default=True,
                              note="gpubcast's Numba backend is absent: its NumPy reference backend runs instead"))
    try:
        peers.append(OnnxRuntime(threads))
    except Exception as e:  # noqa: BLE001 - any failure: the peer is absent, and why is reported
        absent["onnxruntime"] = _why(e)
    gpu, why = gpu_info()
    if gpu is None:
        absent["gpu"] = why
        return peers, absent
    peers.append(cupy_peer())
    try:
        backends.get("cuda")
        import cupy
        peers.append(Gpubcast("cuda", "gpu", cupy, "gpubcast CUDA", default=True))
    except Exception as e:  # noqa: BLE001 - any failure: the peer is absent, and why is reported
        absent["gpubcast-cuda"] = _why(e)
    try:
        peers.append(torch_peer())
    except Exception as e:  # noqa: BLE001 - any failure: the peer is absent, and why is reported
        absent["torch"] = _why(e)
    return peers, absent
