"""``gpubcast.fuse``: a chain of broadcasting ops traced once, planned once, run as one pass.

    @gpubcast.fuse
    def scale_shift(a, x, b):
        return a * x + b                       # gpubcast functions, Python operators, scalars

    y = scale_shift(a, x, b)                   # one pass over y (Numba backend): no temporaries

Tracing (this module is a front end): ``f`` runs once per signature -- each array argument's
dtype and shape, each Python scalar argument's value, and the backend -- with ``Traced`` values
in place of its array arguments (scalars are passed as they are: Python's own arithmetic on them
stays Python's, and may change the graph; their values reach the pass in its constant block, so a
new value retraces, it does not recompile).  Every gpubcast call that meets a
``Traced`` value comes here through ``dispatch.defer`` and becomes a ``Node`` of the graph, with
the dtypes that call would have (``dispatch.resolve_types``: NumPy 2's rules, weak Python
scalars) and the shape the planner gives it (``dispatch.plan_for`` on the operands' shapes:
every rule set, ``axis``, ``axes_mapping``, data movement's target shape).

Planning: an operand reaches a node's output through the dim map of that node's rule; composing
the maps from an output back to the leaves gives each leaf use (an argument, or a constant) the
output dim each of its dims walks, or none (broadcast).  A call turns those into element
strides of the actual arrays and one ``BroadcastPlan`` of the output (the planner's coalescing,
operand classes, index width).  A value used under two different maps is computed once per map
(a broadcast intermediate is recomputed along the dims it is broadcast over).  A pass computes at
most ``MAX_STEPS`` nodes: a longer chain runs as several passes, each storing the values later ones
read (in their dtypes, as the unfused chain stores them), so a chain of any depth compiles in time
linear in its length; nothing here recurses along a chain.

Execution: on the Numba backend, one row function generated from the graph per pass
(``backends.numba.fused``), run by the usual drivers; on the CUDA backend, one kernel generated
from the graph per pass (``cuda.fused``); elsewhere (NumPy reference, Dask, ndarray subclasses such
as masked arrays, a CUDA program whose argument would not fit a launch) the graph is evaluated op by op
through ``dispatch.apply`` -- the unfused chain, the same values.  Inputs that overlap ``out=`` other
than element for element are copied first, as ``dispatch`` does.

Caches, all bounded: per fused function, ``MAX_TRACES`` traces and as many hot-path runners; compiled
code is found by a program's structure (``Program.key``: ops, dtypes, shapes, dim maps and the
constants' dtypes -- not their values, not the object), so a new scalar value, a new
``gpubcast.fuse(f)`` of the same function or a new ONNX ``prepare`` compiles nothing.  The Numba
backend keeps ``numba.backend.MAX_FUSED_SPECS`` program specs and ``numba.fused.MAX_ROWS`` row functions
(by source text), the CUDA backend ``cuda.fused.MAX_PROGRAMS`` kernels and launch templates: LRU
caches (Numba does not free machine code: a structure dropped and met again compiles again).

Values: equal to the unfused chain (each node computes in its own loop dtype, converted as
``dispatch`` converts inputs), except that a float -> integer conversion of a value out of
range (``cast``) is undefined, as in C.  Outputs are new arrays (or ``out=``).
"""

from __future__ import annotations

import functools
from dataclasses import dataclass

import numpy as np

from . import api, backends, compiled_calls, dispatch, ops
from . import dtypes as _dt
from .cuda import torch_tensors
from .fused_code import natural_dtype
from .hot_calls import HotCalls
from .plan import plan as make_plan
from .subclasses import is_subclass

#: traces kept per fused function (each Python scalar value is its own signature)
MAX_TRACES = 256
#: the most nodes one pass computes: a longer chain runs as several passes, each intermediate they
#: share stored (measured: Numba's compile time per step is least near 128 steps and grows beyond)
MAX_STEPS = 128


@dataclass(frozen=True)
class Node:
    """One op call of the traced function."""
    op: ops.Op
    inputs: tuple             # value ids, in the call's operand order
    loop: tuple               # the loop dtype of each input
    dtype: np.dtype           # the output dtype
    shape: tuple              # the output shape
    maps: tuple               # per input: for each of its dims, the output dim it walks, or None


@dataclass(frozen=True, eq=False)
class Leaf:
    """An operand of the fused pass: array argument ``arg``, or the 0-d constant ``value`` (a
    Python scalar or NumPy scalar of the trace, converted to the loop dtype that used it)."""
    dtype: np.dtype
    shape: tuple
    arg: int | None = None
    value: object = None


class Graph:
    """The values of one trace: leaves and nodes, by id (``Traced.vid``)."""

    def __init__(self):
        self.values: list = []

    def add(self, v) -> int:
        self.values.append(v)
        return len(self.values) - 1


class Traced:
    """An array value inside a traced function: gpubcast calls on it add nodes to its graph."""

    __array_priority__ = 1000          # NumPy defers its operators to ours
    __array_ufunc__ = None             # a NumPy ufunc on it is an error, not an object array

    def __init__(self, graph: Graph, vid: int, dtype: np.dtype, shape: tuple):
        self.graph, self.vid, self.dtype, self.shape = graph, vid, np.dtype(dtype), tuple(shape)

    ndim = property(lambda self: len(self.shape))
    size = property(lambda self: int(np.prod(self.shape, dtype=np.int64)))

    def __repr__(self):
        return f"Traced({self.dtype}, {self.shape})"

    def __bool__(self):
        raise TypeError("the truth value of a traced array is not known while gpubcast.fuse traces; "
                        "use gpubcast.where(cond, x, y) instead of if/else on array values")

    def __len__(self):
        if not self.shape:
            raise TypeError("len() of a 0-d traced array")
        return self.shape[0]

    def astype(self, dtype):
        return api.cast(self, dtype)

    def __neg__(self):
        return api.negative(self)

    def __pos__(self):
        return self

    def __abs__(self):
        return api.abs(self)

    def __invert__(self):
        return api.bitwise_not(self)


def _operator(name: str, reflected: bool):
    op = ops.get(name)

    def method(self, other):
        return dispatch.apply(op, (other, self) if reflected else (self, other))
    return method


for _dunder, _name in {"add": "add", "sub": "subtract", "mul": "multiply", "truediv": "divide",
                       "floordiv": "floor_divide", "mod": "remainder", "pow": "power", "and": "bitwise_and",
                       "or": "bitwise_or", "xor": "bitwise_xor", "lshift": "left_shift",
                       "rshift": "right_shift"}.items():
    setattr(Traced, f"__{_dunder}__", _operator(_name, False))
    setattr(Traced, f"__r{_dunder}__", _operator(_name, True))
for _dunder, _name in {"lt": "less", "le": "less_equal", "gt": "greater", "ge": "greater_equal",
                       "eq": "equal", "ne": "not_equal"}.items():
    setattr(Traced, f"__{_dunder}__", _operator(_name, False))
Traced.__hash__ = None


# --- tracing: dispatch hands every call on a Traced value here ----------------------------------------

def _is_traced(x) -> bool:
    return type(x) is Traced


def _record(op, inputs, *, rule, axis, axes_mapping, out, dtype, backend, target, shape):
    graph = next(x.graph for x in inputs if type(x) is Traced)
    if out is not None:
        raise TypeError(f"{op.name}: out= inside a fused function is not supported; return the value and "
                        f"pass out= to the fused call")
    values = []
    for x in inputs:
        if type(x) is Traced:
            if x.graph is not graph:
                raise TypeError(f"{op.name}: a traced value of another gpubcast.fuse call")
            values.append(x)
        elif _dt.is_python_scalar(x) or isinstance(x, np.generic) or isinstance(x, np.ndarray) and x.ndim == 0:
            values.append(x)
        else:
            raise TypeError(f"{op.name}: a fused function computes on its arguments, Python scalars and 0-d "
                            f"constants; pass this {type(x).__name__} of shape {getattr(x, 'shape', '?')} as an "
                            f"argument of the fused function")
    types = tuple(x.dtype if type(x) is Traced else _dt.weak_type(x) for x in values)
    loop, out_dtype = dispatch.resolve_types(op, types, dtype)
    if "comparison" in op.tags and int in types:  # an int beyond the loop dtype compares as +-inf
        values, loop = dispatch.compare_out_of_range(values, types, loop)
    ids = [x.vid if type(x) is Traced else graph.add(Leaf(np.dtype(dt), (), value=_constant(op, x, dt)))
           for x, dt in zip(values, loop)]
    shapes = [x.shape if type(x) is Traced else () for x in values]
    p = dispatch.plan_for(shapes, rule, axis, axes_mapping, None, target, shape)
    maps = p.dim_maps
    vid = graph.add(Node(op, tuple(ids), tuple(np.dtype(t) for t in loop), np.dtype(out_dtype),
                         p.out_shape, maps))
    return Traced(graph, vid, out_dtype, p.out_shape)


dispatch.defer(_is_traced, _record)


def _constant(op, x, dt):
    """A constant of the trace as a 0-d array of its loop dtype (NumPy's conversion and errors)."""
    if type(x) is int and not _dt.fits(x, dt):
        raise OverflowError(f"{op.name}: Python integer {x} out of bounds for {dt}")
    with np.errstate(all="ignore"):
        return np.asarray(x, dtype=dt)


# --- the fused function --------------------------------------------------------------------------------

@dataclass(frozen=True, eq=False)
class Program:
    """One output of a traced function as a pass over that output: ``leaves`` are its array
    operands (each with, per dim, the output dim it walks), ``constants`` its 0-d values (one block
    of 16-byte slots, ``constant_block``), ``steps`` the node instances in evaluation order
    (references ``("leaf", k)``, ``("const", k)``, ``("step", j)``), ``result`` the value stored.

    Programs are equal when their ``key`` is: the structure, the constants by dtype only (their
    values travel in the constant block at run time), so compiled code is found by structure."""
    leaves: tuple             # (Leaf, dim map)
    constants: tuple          # 0-d arrays, each of the loop dtype that reads it
    steps: tuple              # (Node, input references)
    result: tuple             # reference
    dtype: np.dtype
    shape: tuple

    @functools.cached_property
    def key(self) -> tuple:
        """Everything the pass's code depends on (hashable, flat: no recursion at any depth)."""
        return (tuple((leaf.dtype, leaf.shape, leaf.arg, dmap) for leaf, dmap in self.leaves),
                tuple(c.dtype for c in self.constants),
                tuple((node.op, node.loop, node.dtype, node.shape, node.maps, refs) for node, refs in self.steps),
                self.result, self.dtype, self.shape)

    @functools.cached_property
    def _hash(self) -> int:
        return hash(self.key)

    def __hash__(self):
        return self._hash

    def __eq__(self, other):
        return self is other or type(other) is Program and self._hash == other._hash and self.key == other.key

    @functools.cached_property
    def constant_block(self) -> np.ndarray:
        """The constants' bytes, one per 16-byte slot (a kernel operand read at stride 0)."""
        block = np.zeros(max(1, len(self.constants)), np.complex128)
        raw = block.view(np.uint8)
        for i, c in enumerate(self.constants):
            raw[16 * i:16 * i + c.itemsize] = np.frombuffer(c.tobytes(), np.uint8)
        return block


def program_for(graph: Graph, vid: int, cut=None) -> Program:
    """The pass computing value ``vid`` of ``graph`` over its own shape; ``cut`` maps values computed
    by earlier passes (other than ``vid``) to the ``Leaf`` they are read as."""
    cut = cut or {}
    out = graph.values[vid]
    leaves, constants, steps, memo = {}, {}, [], {}
    root = tuple(range(len(out.shape)))
    stack = [(vid, root, None)]       # depth first, inputs in order, without recursion
    while stack:
        v, dmap, inputs = stack.pop()
        if inputs is not None:        # every input computed: the step itself
            steps.append((graph.values[v], tuple(memo[u] for u in inputs)))
            memo[v, dmap] = ("step", len(steps) - 1)
            continue
        if (v, dmap) in memo:
            continue
        value = cut[v] if v in cut and v != vid else graph.values[v]
        if isinstance(value, Leaf):
            memo[v, dmap] = ("const", constants.setdefault(value, len(constants))) if value.value is not None \
                else ("leaf", leaves.setdefault((value, dmap), len(leaves)))
            continue
        inputs = [(u, tuple(dmap[d] if d is not None and graph.values[u].shape[e] == value.shape[d] else None
                            for e, d in enumerate(m))) for u, m in zip(value.inputs, value.maps)]
        stack.append((v, dmap, inputs))
        stack.extend((u, m, None) for u, m in reversed(inputs))
    return Program(tuple(sorted(leaves, key=leaves.get)),
                   tuple(c.value for c in sorted(constants, key=constants.get)), tuple(steps), memo[vid, root],
                   out.dtype, out.shape)


def _cuts(graph: Graph, vids) -> list:
    """The values to materialise (in graph order) so that no pass computes more than ``MAX_STEPS``
    nodes: walking the nodes the outputs ``vids`` need, a node whose pass would exceed it reads its
    largest inputs from earlier passes instead (a chain of any depth: passes of ``MAX_STEPS``)."""
    live, todo = set(), list(vids)
    while todo:
        v = todo.pop()
        if v not in live and isinstance(graph.values[v], Node):
            live.add(v)
            todo.extend(graph.values[v].inputs)
    cone, cuts = {}, []               # node -> the nodes (not cut) its pass computes
    for v in sorted(live):
        inputs = sorted({u for u in graph.values[v].inputs if u in live}, key=lambda u: -len(cone[u]))
        c = {v}.union(*(cone[u] for u in inputs))
        for u in inputs:
            if len(c) <= MAX_STEPS:
                break
            cuts.append(u)
            cone[u] = set()           # read as a leaf from here on
            c = {v}.union(*(cone[u] for u in inputs))
        cone[v] = c
    return sorted(cuts)


class _Trace:
    """One signature's trace: its programs (one per output), whether it returned a tuple, and the
    passes (``stages``) whose results the programs read as arguments after the call's own."""

    def __init__(self, programs, as_tuple: bool, stages=()):
        self.programs, self.as_tuple, self.stages = programs, as_tuple, stages


class Fused:
    """A function traced per signature and run fused (see the module docstring)."""

    def __init__(self, fn):
        self.fn = fn
        self._traces: dict = {}
        self._hot = HotCalls(MAX_TRACES)   # call key -> runner (hot_calls, as dispatch's hot path)
        self._table = compiled_calls.table_for(f"fuse {getattr(fn, '__qualname__', fn)}")
        functools.update_wrapper(self, fn)

    def __repr__(self):
        return f"<gpubcast.fuse of {getattr(self.fn, '__qualname__', self.fn)!r}>"

    def __call__(self, *args, out=None, backend=None):
        if backend is None and len(args) <= compiled_calls.MAX_INPUTS:   # the compiled hot path first
            result = compiled_calls.call(self._table, out, *args)
            if result is not None:
                return result
        fast = _fast_key(args, out, backend)
        if fast is not None:
            runner = self._hot.runners.get(fast)
            if runner is not None:
                if backend is None and hasattr(runner, "compiled"):
                    compiled_calls.register(self._table, out, args, *runner.compiled)
                result = runner(args, out)
                if result is not None:
                    return result
        if (torch := torch_tensors.torch_of((*args, out))) is not None:   # torch's stream, torch tensors back
            return torch_tensors.through_torch(torch, backends.get("cuda"),
                                               lambda xs, o: self(*xs, out=o, backend=backend), args, out)
        key = (tuple(map(_signature, args)), backend)
        trace = self._traces.get(key)
        if trace is None:
            if len(self._traces) >= MAX_TRACES:
                self._traces.clear()
            trace = self._traces[key] = self._trace(args)
        n = len(trace.programs)
        outs = (None,) * n if out is None else out if isinstance(out, tuple) else (out,)
        if len(outs) != n:
            raise ValueError(f"{self!r}: out= holds {len(outs)} array(s) but the function returns {n}")
        values = list(args)           # then the stages' results, in order
        if any(backends.is_dask_array(x) or is_subclass(x) for x in args):  # op by op: chunks; masks, wraps
            for p in trace.stages:
                values.append(evaluate(p, values, None, backend))
            results = [evaluate(p, values, o, backend) for p, o in zip(trace.programs, outs)]
        else:
            be = backends.select([a for a in args if not _dt.is_python_scalar(a)], outs[0], backend)
            for p in trace.stages:
                values.append(_run(be, p, _operands(p, values, be), None))
            results = [_run(be, p, _operands(p, values, be), o) for p, o in zip(trace.programs, outs)]
            if fast is not None and n == 1 and not trace.stages:
                self._remember(fast, be, trace.programs[0], args, out, trace.as_tuple)
        return tuple(results) if trace.as_tuple else results[0]

    def _remember(self, fast, be, p: Program, args, out, as_tuple: bool):
        """A call seen twice gets a runner (``backend.prepare_fused``) kept under its key."""
        self._hot.note(fast, lambda: _prepared(be, p, args, out, as_tuple))

    def _trace(self, args) -> _Trace:
        graph = Graph()
        traced = []
        for i, a in enumerate(args):
            if _dt.is_python_scalar(a):
                traced.append(a)
            elif hasattr(a, "dtype") and hasattr(a, "shape"):
                traced.append(Traced(graph, graph.add(Leaf(np.dtype(a.dtype), tuple(a.shape), arg=i)), a.dtype,
                                     tuple(a.shape)))
            else:
                raise TypeError(f"{self!r}: argument {i} is a {type(a).__name__}; pass arrays or Python scalars")
        result = self.fn(*traced)
        as_tuple = isinstance(result, tuple)
        outputs = result if as_tuple else (result,)
        vids = []
        for r in outputs:
            if type(r) is not Traced:
                raise TypeError(f"{self!r}: a fused function returns the arrays it computes (or a tuple of "
                                f"them), not {type(r).__name__}")
            vids.append(r.vid)
        cuts = _cuts(graph, vids)     # read as the arguments after the call's own
        cut = {v: Leaf(graph.values[v].dtype, graph.values[v].shape, arg=len(args) + k) for k, v in enumerate(cuts)}
        return _Trace([program_for(graph, v, cut) for v in vids], as_tuple,
                      [program_for(graph, v, cut) for v in cuts])


def _prepared(be, p: Program, args, out, as_tuple: bool):
    """The runner of calls like this one (``backend.prepare_fused``), or None."""
    prepare = getattr(be, "prepare_fused", None)
    arrays = _operands(p, args, be)
    if prepare is None or not all(type(x) is np.ndarray or type(x) in backends.DEVICE_ARRAY_TYPES for x in arrays):
        return None
    plan = output_plan(p, arrays, out)
    if plan.out_overlaps_itself:   # the general path's (``_run``)
        return None
    base_dtype, base_shape = p.dtype if out is None else out.dtype, plan.out_shape
    base = prepare(p, plan, tuple(x.dtype for x in arrays), base_dtype)
    if base is None:
        return None
    picks = tuple(leaf.arg for leaf, _ in p.leaves)

    def runner(args, out):
        result = base([args[i] for i in picks], out)   # out: None or one array (a tuple has no key)
        return result if result is None or not as_tuple else (result,)
    native = getattr(base, "native", None)
    if native is not None and picks != tuple(range(len(args))):   # the leaves are not the arguments in order:
        native = native.picked(picks) if hasattr(native, "picked") else None   # a device program maps them
    if native is not None and not as_tuple:
        runner.compiled = (native, (None,) * len(args), base_dtype, base_shape, base)
    return runner


def _one_op(be, op, inputs, out, options):
    """The runner of one op over arrays that need converting to its loop dtypes, as one fused pass that
    converts each as it reads it (``dispatch.convert_in_pass``), or None."""
    trace = Fused(lambda *xs: dispatch.apply(op, xs, **options))._trace(inputs)
    if len(trace.programs) != 1 or trace.stages:
        return None
    return _prepared(be, trace.programs[0], inputs, out, False)


dispatch.convert_in_pass(_one_op)


def _fast_key(args, out, backend):
    """The hot-path key of a call on NumPy or CUDA arrays and Python scalars (None for anything else);
    a CUDA array is keyed by its type too (a NumPy array of its shape is another call)."""
    key = [backend]
    for a in args:
        t = type(a)
        if t is np.ndarray:
            key += (a.dtype, a.shape, a.strides)
        elif t in (float, int, bool, complex):
            key += (t, a)
        elif t in backends.DEVICE_ARRAY_TYPES:
            key += (t, a.dtype, a.shape, a.strides)
        else:
            return None
    if out is not None:
        t = type(out)
        if t is np.ndarray:
            key += (out.dtype, out.shape, out.strides)
        elif t in backends.DEVICE_ARRAY_TYPES:
            key += (t, out.dtype, out.shape, out.strides)
        else:
            return None
    return tuple(key)


def _signature(a):
    if _dt.is_python_scalar(a):
        return type(a), a
    return type(a), a.dtype, tuple(a.shape)


def fuse(fn=None):
    """``fn`` (Python calling gpubcast functions and operators) traced and run as one pass per
    output; as a decorator or ``gpubcast.fuse(fn)(*args)``.  The fused function takes arrays and
    Python scalars, and ``out=`` (an array, or a tuple for a tuple of results) and ``backend=``."""
    if fn is None:
        return fuse
    return Fused(fn)


# --- running a program ---------------------------------------------------------------------------------

def _operands(p: Program, args, be) -> list:
    """The program's leaves as arrays of ``be`` (Python scalar arguments as 0-d arrays of their
    loop dtype, with NumPy's overflow error)."""
    arrays = []
    for leaf, _ in p.leaves:
        x = args[leaf.arg]
        if isinstance(x, np.generic):  # a NumPy scalar argument: a 0-d array (a host value on a GPU)
            x = np.asarray(x)
        elif not be.owns(x) and x.ndim:
            x = be.asarray(x)
        arrays.append(x)
    return arrays


def strides_on_output(p: Program, arrays) -> list:
    """Each leaf's element strides over the program's output dims (0 where it is broadcast)."""
    out = []
    for (_, dmap), x in zip(p.leaves, arrays):
        strides = [0] * len(p.shape)
        own = [s // x.itemsize for s in x.strides] if getattr(x, "ndim", 0) else []
        for e, d in enumerate(dmap):
            if d is not None:
                strides[d] = own[e]
        out.append(tuple(strides))
    return out


class _View:
    """An operand as the planner reads it: the output's shape with the leaf's byte strides."""

    def __init__(self, shape, strides, itemsize):
        self.shape, self.strides, self.itemsize = shape, strides, itemsize


def output_plan(p: Program, arrays, out):
    """The BroadcastPlan of one fused pass: every leaf's strides onto the program's output."""
    views = [_View(p.shape, tuple(s * x.itemsize for s in st), x.itemsize)
             for x, st in zip(arrays, strides_on_output(p, arrays))]
    if p.constants:  # the constant block: read at stride 0 (the last operand before the output)
        views.append(_View(p.shape, (0,) * len(p.shape), 16))
    return make_plan(*views, rule="none", out=out)


def _run(be, p: Program, arrays, out):
    """One pass on a backend that fuses (``execute_fused(program, plan, operands, out)``: the plan's
    operands are the leaves, then ``program.constant_block`` if the program has constants; False
    where it cannot), else the program op by op through ``dispatch.apply``: the same values."""
    run = getattr(be, "execute_fused", None)
    if run is None or not all(_dt.kind(x.dtype) in "biufc" for x in arrays):
        return evaluate(p, arrays, out, be.name, leaves_given=True)
    given = out
    if out is None:
        out = be.empty(p.shape, p.dtype)
    else:
        out = dispatch.checked_out(ops.get("copy"), out)
        if tuple(out.shape) != p.shape:
            raise ValueError(f"out= has shape {tuple(out.shape)}, but the fused result has shape {p.shape}")
        if not np.can_cast(p.dtype, out.dtype, casting="same_kind"):
            raise TypeError(f"cannot write {p.dtype} results into an out= array of {out.dtype} (casting rule "
                            f"'same_kind')")
    plan = output_plan(p, arrays, out)
    if plan.out_overlaps_itself and plan.size:   # as dispatch: computed apart, then written in NumPy's order
        be.write_in_order(out, _run(be, p, arrays, None))
        return out
    if plan.size and any(dispatch.partial_overlap(be, x, i, plan, out) for i, x in enumerate(arrays)):
        arrays = [be.copy(x) if dispatch.partial_overlap(be, x, i, plan, out) else x for i, x in enumerate(arrays)]
        plan = output_plan(p, arrays, out)    # inputs read before out is written, as dispatch does
    if plan.size and not run(p, plan, arrays, out):
        return evaluate(p, arrays, given, be.name, leaves_given=True)   # the last step writes given out=
    return out


def evaluate(p: Program, args, out=None, backend=None, leaves_given: bool = False):
    """Run the program's steps one op at a time through ``dispatch.apply`` (any backend, Dask)."""
    def value(kind, k):
        if kind == "leaf":
            return args[k] if leaves_given else args[p.leaves[k][0].arg]
        return p.constants[k] if kind == "const" else values[k]

    values = []
    for node, refs in p.steps:
        inputs = [value(kind, k) for kind, k in refs]
        inputs = [x if getattr(x, "dtype", None) == dt else _convert(x, dt, backend)
                  for x, dt in zip(inputs, node.loop)]
        values.append(_apply_node(node, inputs, backend))
    kind, k = p.result
    result = value(kind, k)
    if out is None:
        return result if kind == "step" else api.cast(result, p.dtype, backend=backend)
    return api.cast(result, out.dtype, out=out, backend=backend)


def _convert(x, dt, backend):
    if _dt.is_python_scalar(x) or isinstance(x, (np.ndarray, np.generic)) and x.ndim == 0:
        return np.asarray(x).astype(dt)     # a host value (a 0-d device array is cast on its device)
    return api.cast(x, dt, backend=backend)


def _apply_node(node: Node, inputs, backend):
    """The node's op on its inputs under their own dim maps, as broadcasting views: each input
    reshaped to the node's output rank (maps as ``rule='numpy'``) -- the op's own rule was applied
    when the trace was planned."""
    aligned = []
    for x, m in zip(inputs, node.maps):
        shape = [1] * len(node.shape)
        for e, d in enumerate(m):
            if d is not None:
                shape[d] = x.shape[e]
        aligned.append(x.reshape(shape) if getattr(x, "ndim", 0) else x)
    if node.op.kind == "move":
        return dispatch.apply(node.op, aligned, rule="numpy_to", backend=backend, shape=node.shape)
    result = dispatch.apply(node.op, aligned, backend=backend, dtype=None if natural_dtype(node) == node.dtype
                            else node.dtype)
    if tuple(result.shape) != node.shape:  # every input broadcast (or 0-d): grow to the planned shape
        result = dispatch.apply(ops.get("copy"), (result,), rule="numpy_to", backend=backend, shape=node.shape)
    return result
