"""An ONNX backend that runs models made of ``gpubcast.onnx``'s operators.

The interface is ONNX's (``onnx.backend.base.Backend``), used the way
``onnxruntime.backend`` is::

    import gpubcast.onnx.backend as backend
    rep = backend.prepare(model, device="CPU")    # or "CUDA"
    outputs = rep.run([x, y])                     # a list of NumPy arrays, in graph output order
    backend.run_model(model, [x, y]); backend.run_node(node, [x, y]); backend.supports_device("CUDA")

What runs: graphs of the default ONNX domain at opset >= 7 whose nodes are all
operators of ``gpubcast.onnx.OPERATORS``, with initializers; nodes run in
topological order, their attributes parsed from the node.  Anything else
raises ``NotImplementedError`` naming the node and its operator, in
``prepare`` (so before any input is read).

Devices: ``"CPU"`` computes on gpubcast's CPU backend (the default one, or
``prepare(..., gpubcast_backend="numba")``).  ``"CUDA"`` needs CuPy and a GPU
(``supports_device("CUDA")`` is ``cupy.cuda.is_available()``): initializers
and inputs are copied to the GPU with ``cupy.asarray``, every node computes
there, and the outputs come back as NumPy arrays.  String tensors stay on the
host (CuPy has none); a node with a string input computes on the CPU.

Fusion (``prepare(model, fuse=True)``, the default): ``Constant`` nodes are computed once, in
``prepare``; maximal chains of elementwise nodes (every operator but ``Gemm``, ``Pow``,
``Constant``) run as one ``gpubcast.fuse`` call each -- one pass per chain output consumed
elsewhere (a chain longer than ``fusion.MAX_STEPS`` nodes: several passes, storing the values
between them), no other intermediate arrays, the same values.  A chain joins a node only if every other
input of that node exists before the chain starts, so chains run in the graph's order.
``fuse=False`` runs node by node.

Semantics are ``gpubcast.onnx``'s, whatever the opset: the latest operator
versions' type lists (each a superset of the earlier ones) and Mod-28's
floating-point ``fmod=0``.  Feeds must have the element types the graph
declares (``TypeError`` otherwise), and its declared rank and static dims (``ValueError`` naming
the input, the declared and the given shape; a symbolic or unknown dim takes any size), as in
ONNX Runtime.
"""

from __future__ import annotations

import functools

import os
from dataclasses import dataclass
from typing import Any
from collections.abc import Callable

import numpy as np
import onnx
from onnx import helper, numpy_helper
from onnx.backend.base import Backend, BackendRep, Device, DeviceType

from .. import backends
from ..attributes import float_attribute
from . import OPERATORS
from .constraints import type_name

#: the first opset whose versions of these operators gpubcast runs (Add-6 and older had `broadcast`/`axis`)
MIN_OPSET = 7
#: operators whose version 1 gpubcast runs (Not-1; Softplus-1, Softsign-1; Elu-1, LeakyRelu-1, Selu-1 and
#: HardSigmoid-1, whose legacy ``consumed_inputs`` is ignored): any opset
MIN_OPSET_OF = {"Not": 1, "Softplus": 1, "Softsign": 1, "LeakyRelu": 1, "Elu": 1, "Selu": 1, "HardSigmoid": 1}
#: the attributes an operator takes, as keywords of its gpubcast.onnx function
ATTRIBUTES = {"Mod": ("fmod",), "BitShift": ("direction",), "Gemm": ("alpha", "beta", "transA", "transB"),
              "Clip": ("min", "max"), "Cast": ("to", "saturate", "round_mode"),
              "CastLike": ("saturate", "round_mode"),
              "LeakyRelu": ("alpha", "consumed_inputs"), "Elu": ("alpha", "consumed_inputs"),
              "Celu": ("alpha",), "ThresholdedRelu": ("alpha",), "Selu": ("alpha", "gamma", "consumed_inputs"),
              "HardSigmoid": ("alpha", "beta", "consumed_inputs"), "Shrink": ("bias", "lambd"),
              "Gelu": ("approximate",), "IsInf": ("detect_negative", "detect_positive"),
              "Constant": ("value", "value_float", "value_floats", "value_int", "value_ints", "value_string",
                           "value_strings")}
#: operators whose omitted attributes take the defaults of the node's opset version (Selu-1's alpha and
#: gamma are rounder than Selu-6's; Clip-6's bounds are +-FLT_MAX, whatever T), not the gpubcast.onnx
#: function's (the latest version's)
VERSIONED_DEFAULTS = {"Softplus", "Softsign", "HardSwish", "Mish", "LeakyRelu", "Elu", "Celu", "ThresholdedRelu",
                      "Selu", "HardSigmoid", "Shrink", "Gelu", "Clip"}
#: operators whose omitted optional inputs ("" in the node) are passed as None, wherever they are
OPTIONAL_INPUTS = {"Clip"}
#: operators that are not elementwise chains' links: Gemm (a matrix product), Pow (its result is
#: converted after the op), Constant (computed in prepare)
NOT_FUSED = {"Gemm", "Pow", "Constant"}


@dataclass(frozen=True)
class _Step:
    """One node, checked and ready to call: ``function(*inputs, **attributes)`` -> ``outputs[0]``."""
    label: str
    op_type: str
    function: Callable
    inputs: tuple[str, ...]       # "" marks an omitted optional input
    outputs: tuple[str, ...]
    attributes: dict


def _default_opset(opset_import) -> int:
    for entry in opset_import:
        if entry.domain in ("", "ai.onnx"):
            return entry.version
    raise NotImplementedError("gpubcast.onnx.backend: the model imports no opset of the default ONNX domain")


def compile_node(node: onnx.NodeProto, opset: int) -> _Step:
    """Check ``node`` against what gpubcast runs and parse its attributes; raise NotImplementedError otherwise."""
    label = f"node {node.name!r} ({node.op_type})" if node.name else f"a {node.op_type} node"
    if node.domain not in ("", "ai.onnx"):
        raise NotImplementedError(f"gpubcast.onnx.backend: {label} is in domain {node.domain!r}; only the "
                                  f"default ONNX domain is supported")
    function = OPERATORS.get(node.op_type)
    if function is None:
        raise NotImplementedError(f"gpubcast.onnx.backend does not support the operator {node.op_type!r} "
                                  f"({label}); supported operators: {', '.join(sorted(OPERATORS))}")
    if opset < MIN_OPSET_OF.get(node.op_type, MIN_OPSET):
        raise NotImplementedError(f"gpubcast.onnx.backend: {label} is from opset {opset}; gpubcast runs "
                                  f"opset >= {MIN_OPSET}")
    try:
        schema = onnx.defs.get_schema(node.op_type, opset)
    except onnx.defs.SchemaError:
        raise NotImplementedError(f"gpubcast.onnx.backend: {label}: ONNX opset {opset} has no "
                                  f"{node.op_type}") from None
    attributes = {a.name: helper.get_attribute_value(a) for a in node.attribute}
    unknown = sorted(set(attributes) - set(ATTRIBUTES.get(node.op_type, ())))
    if unknown:
        raise NotImplementedError(f"gpubcast.onnx.backend: {label} has attribute(s) {', '.join(unknown)} "
                                  f"that gpubcast does not implement")
    attributes = {k: _attribute(v) for k, v in attributes.items()}
    if node.op_type in VERSIONED_DEFAULTS:   # the defaults of the node's own version (Selu-1's differ)
        for name, attr in schema.attributes.items():
            if name not in attributes and name != "consumed_inputs" and attr.default_value.name:
                attributes[name] = _attribute(helper.get_attribute_value(attr.default_value))
    if node.op_type == "Clip" and attributes:   # Clip-6's attribute bounds, checked as ONNX Runtime does
        lo, hi = (float_attribute("Clip", name, attributes[name]) for name in ("min", "max"))
        if not lo <= hi:
            raise ValueError(f"gpubcast.onnx.backend: {label}: Clip-6's attributes need min <= max (ONNX Runtime "
                             f"refuses the node), got min={lo!r}, max={hi!r}")
    if len(node.output) != 1:
        raise NotImplementedError(f"gpubcast.onnx.backend: {label} has {len(node.output)} outputs; "
                                  f"{node.op_type} has exactly one")
    return _Step(label, node.op_type, function, tuple(node.input), tuple(node.output), attributes)


def _attribute(v):
    """An attribute's value as the gpubcast.onnx functions take it: str for bytes, NumPy for tensors."""
    if isinstance(v, bytes):
        return v.decode()
    if isinstance(v, onnx.TensorProto):
        return numpy_helper.to_array(v)
    if isinstance(v, list) and v and isinstance(v[0], bytes):
        return [s.decode() for s in v]
    return v


def _topological(steps, available) -> list[_Step]:
    """``steps`` in an order where every input exists before it is read: round by round, each round
    the steps whose inputs all exist, in graph order (stable for sorted graphs; linear time)."""
    available, waiting, readers = set(available), [], {}
    for k, s in enumerate(steps):
        missing = {i for i in s.inputs if i and i not in available}
        waiting.append(len(missing))
        for i in missing:
            readers.setdefault(i, []).append(k)
    ready, order = [k for k, n in enumerate(waiting) if not n], []
    while ready:
        order += ready
        after = []
        for k in ready:
            for o in steps[k].outputs:
                if o not in available:
                    available.add(o)
                    for r in readers.pop(o, ()):
                        waiting[r] -= 1
                        if not waiting[r]:
                            after.append(r)
        ready = sorted(after)
    if len(order) < len(steps):
        step = steps[min(set(range(len(steps))) - set(order))]
        missing = [i for i in step.inputs if i and i not in available]
        raise ValueError(f"gpubcast.onnx.backend: {step.label} reads {', '.join(map(repr, missing))}, "
                         f"which no graph input, initializer or other node provides (or the graph "
                         f"has a cycle)")
    return [steps[k] for k in order]


def _chains(steps, graph_outputs) -> list[_Step]:
    """``steps`` (in topological order) with maximal chains of elementwise steps replaced by one
    step each, which runs the chain as a ``gpubcast.fuse`` call (see the module docstring)."""
    position = {o: k for k, s in enumerate(steps) for o in s.outputs}
    group_of, groups = {}, []       # output name -> group index; groups: [first position, steps, outputs]
    for k, s in enumerate(steps):
        joined = None
        if s.op_type not in NOT_FUSED:
            for g in sorted({group_of[i] for i in s.inputs if i in group_of}, reverse=True):
                first, _, made = groups[g]
                if all(not i or i in made or position.get(i, -1) < first for i in s.inputs):
                    joined = g
                    break
        if joined is None:
            groups.append([k, [], set()])
            joined = len(groups) - 1
        groups[joined][1].append(s)
        groups[joined][2].update(s.outputs)
        if s.op_type not in NOT_FUSED:
            for o in s.outputs:
                group_of[o] = joined
    readers = {}                    # name -> the groups reading it
    for g, (_, members, _) in enumerate(groups):
        for s in members:
            for i in s.inputs:
                readers.setdefault(i, set()).add(g)
    out = []
    for g, (_, members, inside) in enumerate(groups):
        if len(members) == 1:
            out.append(members[0])
            continue
        needed = {i for s in members for i in s.inputs if i and i not in inside}
        reads = tuple(sorted(needed, key=lambda n: position.get(n, -1)))
        writes = tuple(o for s in members for o in s.outputs if o in graph_outputs or readers.get(o, set()) - {g})
        kinds = ", ".join(s.op_type for s in members[:8]) + (", ..." if len(members) > 8 else "")
        label = f"a fused chain of {len(members)} nodes ({kinds})"
        out.append(_Step(label, "fused", _fused_chain(members, reads, writes), reads, writes, {}))
    return out


def _fused_chain(members, reads, writes):
    """The chain as one ``gpubcast.fuse`` function of the values it reads, returning those it writes."""
    import gpubcast

    def chain(*inputs):
        values = dict(zip(reads, inputs))
        for s in members:
            args = [values[i] if i else None for i in s.inputs]
            while args and args[-1] is None:
                args.pop()
            values[s.outputs[0]] = s.function(*args, **s.attributes)
        return tuple(values[w] for w in writes) if len(writes) > 1 else values[writes[0]]
    fused = gpubcast.fuse(chain)    # one output: returned as it is (the compiled hot path takes it)

    def run(*inputs, backend=None):
        result = fused(*inputs, backend=backend)
        return result if len(writes) > 1 else (result,)
    return run


class _Placement:
    """Where a device keeps tensors: NumPy arrays for "CPU"; CuPy arrays for "CUDA" (strings on the host)."""

    def __init__(self, device: str, gpubcast_backend: str | None):
        self.cuda = Device(device).type == DeviceType.CUDA
        if self.cuda and gpubcast_backend not in (None, "cuda"):
            raise ValueError(f"device 'CUDA' computes with gpubcast_backend='cuda', not {gpubcast_backend!r}")
        self.backend = "cuda" if self.cuda else gpubcast_backend
        if self.cuda:
            self.cupy = backends.get("cuda").xp

    def load(self, x):
        """A feed or initializer as this device keeps it."""
        x = x if hasattr(x, "dtype") else np.asarray(x)
        if self.cuda and x.dtype.kind not in "OUST":
            return self.cupy.asarray(x)
        return x

    def colocate(self, args):
        """A node's inputs on one device: all on the host when one is a host string tensor."""
        if not self.cuda:
            return args
        on_host = any(x is not None and not backends.is_cuda_array(x) and x.dtype.kind in "OUST" for x in args)
        if on_host:
            return [self.cupy.asnumpy(x) if backends.is_cuda_array(x) else x for x in args]
        return [x if x is None or backends.is_cuda_array(x) else self.cupy.asarray(x) for x in args]

    def unload(self, x):
        """A result as NumPy."""
        return self.cupy.asnumpy(x) if self.cuda and backends.is_cuda_array(x) else x

    def call(self, step: _Step, args):
        args = self.colocate(list(args))
        while args and args[-1] is None:  # omitted trailing optional inputs (Gemm's C)
            args.pop()
        if any(x is None for x in args) and step.op_type not in OPTIONAL_INPUTS:
            raise NotImplementedError(f"gpubcast.onnx.backend: {step.label} omits an input before the last one")
        # on "CUDA": backend=None, which picks the CUDA backend for device arrays, as backend="cuda" would,
        # and lets the nodes take the compiled hot path (its tables are for calls without backend=); a
        # node with a string input is colocated on the host and computed on the CPU
        backend = None if self.cuda else self.backend
        return step.function(*args, **step.attributes, backend=backend)


@functools.lru_cache(maxsize=64)
def _onnx_type_name(elem_type: int) -> str:
    """ONNX's name of a TensorProto element type (as ``type_name`` names a dtype)."""
    return type_name(helper.tensor_dtype_to_np_dtype(elem_type))


def _declared_shape(shape) -> tuple:
    """A graph input's declared dims: each an int (static) or None (symbolic or unknown)."""
    return tuple(d.dim_value if d.HasField("dim_value") else None for d in shape.dim)


def _check_shape(name: str, given: tuple, declared: tuple) -> None:
    """A feed's shape against its input's declared rank and static dims, as ONNX Runtime checks it."""
    if len(given) == len(declared) and all(d is None or g == d for g, d in zip(given, declared)):
        return
    shown = "(" + ", ".join("?" if d is None else str(d) for d in declared) + (",)" if len(declared) == 1 else ")")
    if len(given) != len(declared):
        raise ValueError(f"gpubcast.onnx.backend: input {name!r} has shape {given} of rank {len(given)}, but the "
                         f"model declares rank {len(declared)}: {shown}")
    bad = [k for k, (g, d) in enumerate(zip(given, declared)) if d is not None and g != d]
    if bad:
        dims = ", ".join(f"dim {k}: {given[k]} vs {declared[k]}" for k in bad)
        raise ValueError(f"gpubcast.onnx.backend: input {name!r} has shape {given}, but the model declares "
                         f"{shown} ({dims}); feed an array of the declared shape")


class GpubcastRep(BackendRep):
    """A prepared model: ``run(inputs)`` -> list of NumPy arrays, one per graph output."""

    def __init__(self, model: onnx.ModelProto, device: str = "CPU", gpubcast_backend: str | None = None,
                 fuse: bool = True):
        graph = model.graph
        if len(graph.sparse_initializer):
            raise NotImplementedError("gpubcast.onnx.backend: sparse initializers are not supported")
        self._place = _Placement(device, gpubcast_backend)
        opset = _default_opset(model.opset_import)
        self._initializers = {t.name: self._place.load(numpy_helper.to_array(t)) for t in graph.initializer}
        self.input_names = [i.name for i in graph.input if i.name not in self._initializers]
        self.output_names = [o.name for o in graph.output]
        self._declared = {i.name: i.type.tensor_type.elem_type for i in graph.input
                          if i.type.HasField("tensor_type") and i.type.tensor_type.elem_type}
        self._declared_shapes = {i.name: _declared_shape(i.type.tensor_type.shape) for i in graph.input
                                 if i.type.HasField("tensor_type") and i.type.tensor_type.HasField("shape")}
        self._steps = _topological([compile_node(n, opset) for n in graph.node],
                                   [i.name for i in graph.input] + list(self._initializers))
        produced = set(self._initializers) | {i.name for i in graph.input} | {o for s in self._steps for o in s.outputs}
        missing = [n for n in self.output_names if n not in produced]
        if missing:
            raise ValueError(f"gpubcast.onnx.backend: graph output(s) {', '.join(map(repr, missing))} are "
                             f"produced by no node")
        if fuse:
            for s in [s for s in self._steps if s.op_type == "Constant"]:
                self._initializers[s.outputs[0]] = self._place.call(s, ())
            self._steps = _chains([s for s in self._steps if s.op_type != "Constant"], set(self.output_names))

    def _feeds(self, inputs) -> dict:
        if isinstance(inputs, dict):
            unknown = [k for k in inputs if k not in self.input_names and k not in self._initializers]
            if unknown:
                raise ValueError(f"gpubcast.onnx.backend: unknown input name(s) {unknown}; the model's inputs "
                                 f"are {self.input_names}")
            feeds = dict(inputs)
        else:
            if hasattr(inputs, "dtype"):
                inputs = [inputs]
            inputs = list(inputs)
            if len(inputs) != len(self.input_names):
                raise ValueError(f"gpubcast.onnx.backend: the model takes {len(self.input_names)} input(s) "
                                 f"{self.input_names}, got {len(inputs)}")
            feeds = dict(zip(self.input_names, inputs))
        missing = [n for n in self.input_names if n not in feeds]
        if missing:
            raise ValueError(f"gpubcast.onnx.backend: missing input(s) {missing}")
        for name, x in feeds.items():
            x = feeds[name] = x if hasattr(x, "dtype") else np.asarray(x)
            if name in self._declared:
                expected = _onnx_type_name(self._declared[name])
                if type_name(x.dtype) != expected:
                    raise TypeError(f"gpubcast.onnx.backend: input {name!r} must be tensor({expected}), got "
                                    f"tensor({type_name(x.dtype)})")
            if name in self._declared_shapes:
                _check_shape(name, tuple(x.shape), self._declared_shapes[name])
        return feeds

    def run(self, inputs: Any, **kwargs: Any) -> list:
        values = dict(self._initializers)
        values.update({k: self._place.load(v) for k, v in self._feeds(inputs).items()})
        for step in self._steps:
            result = self._place.call(step, (values[i] if i else None for i in step.inputs))
            values.update(zip(step.outputs, result) if step.op_type == "fused" else ((step.outputs[0], result),))
        return [self._place.unload(values[name]) for name in self.output_names]


class GpubcastBackend(Backend):
    """ONNX backend on gpubcast (see the module docstring)."""

    @classmethod
    def _load(cls, model) -> onnx.ModelProto:
        if isinstance(model, (str, os.PathLike)):
            return onnx.load(model)
        if isinstance(model, bytes):
            return onnx.load_from_string(model)
        return model

    @classmethod
    def is_compatible(cls, model, device: str = "CPU", **kwargs: Any) -> bool:
        """Whether every node of ``model`` is one gpubcast runs, on a device it supports."""
        model = cls._load(model)
        try:
            opset = _default_opset(model.opset_import)
            for node in model.graph.node:
                compile_node(node, opset)
        except NotImplementedError:
            return False
        return cls.supports_device(device)

    @classmethod
    def prepare(cls, model, device: str = "CPU", **kwargs: Any) -> GpubcastRep:
        """Check ``model`` (a ModelProto, serialized bytes or a path) and return a runnable rep.

        ``gpubcast_backend`` (keyword) forces gpubcast's CPU backend ('numpy' or 'numba');
        ``fuse=False`` runs node by node instead of fused chains.
        """
        model = cls._load(model)
        onnx.checker.check_model(model)
        if not cls.supports_device(device):
            raise RuntimeError(f"gpubcast.onnx.backend: device {device!r} is not available "
                               f"(CUDA needs CuPy and a GPU)")
        return GpubcastRep(model, device, kwargs.get("gpubcast_backend"), kwargs.get("fuse", True))

    @classmethod
    def run_model(cls, model, inputs: Any, device: str = "CPU", **kwargs: Any) -> list:
        """``prepare(model, device, **kwargs).run(inputs)``: the outputs, a list of NumPy arrays in graph
        output order."""
        return cls.prepare(model, device, **kwargs).run(inputs)

    @classmethod
    def run_node(cls, node: onnx.NodeProto, inputs: Any, device: str = "CPU", outputs_info=None,
                 **kwargs: Any) -> list:
        """Run one node on ``inputs`` (a list in the node's input order); ``opset_version`` defaults
        to the newest ONNX knows."""
        super().run_node(node, inputs, device=device, outputs_info=outputs_info, **kwargs)
        step = compile_node(node, kwargs.get("opset_version", onnx.defs.onnx_opset_version()))
        place = _Placement(device, kwargs.get("gpubcast_backend"))
        args = [place.load(x) if x is not None else None for x in inputs]
        return [place.unload(place.call(step, args))]

    @classmethod
    def supports_device(cls, device: str) -> bool:
        """"CPU" always; "CUDA" when CuPy sees a GPU (``cupy.cuda.is_available()``)."""
        try:
            kind = Device(device).type
        except (AttributeError, ValueError):
            return False
        if kind == DeviceType.CPU:
            return True
        try:
            return bool(backends.get("cuda").xp.cuda.is_available())
        except Exception:  # noqa: BLE001 - any failure to load CuPy or the CUDA backend means no CUDA device
            return False


is_compatible = GpubcastBackend.is_compatible
prepare = GpubcastBackend.prepare
run_model = GpubcastBackend.run_model
run_node = GpubcastBackend.run_node
supports_device = GpubcastBackend.supports_device
