"""``gpubcast.ElementwiseKernel``: CuPy's user-defined elementwise kernels, broadcast under any rule set.

CuPy's constructor and call conventions (``cupy.ElementwiseKernel``): parameters declared as
``"float32 x, T y, raw T z"`` (a NumPy dtype name, or a one-letter type placeholder resolved from
the arguments' dtypes; ``raw`` parameters are whole arrays indexed by the kernel), an ``operation``
in C/C++ run once per element with the special variables ``i`` (the element's linear index, C
order of the broadcast shape) and ``_ind.size()`` (the number of elements), scalar arguments cast
to their parameter's type, outputs given (all of them, positionally) or allocated, ``size=`` for
kernels whose arrays are all ``raw``, ``preamble``, ``loop_prep``, ``after_loop``, ``options``
(NVRTC), ``no_return``, ``return_tuple``, and CuPy's errors for wrong counts and types.

Beyond CuPy: the non-raw array arguments broadcast under any gpubcast rule set, through the
planner (``gpubcast.plan``), in call order:

- ``"numpy"`` (default), ``"none"``: all of them;
- ``"pdpd"``: the first is the target, each other is placed onto it at ``axis``;
- ``"explicit"``: the first is the target, each other is mapped onto it by ``axes_mapping``;
- ``"bidirectional"``: exactly two (input, target).

A shape the rule rejects is the planner's ``BroadcastError``, followed by which parameter each
``arg`` of the message is.  Given outputs must have the loop shape (they never broadcast); under
``"numpy"`` they take part in it, as in CuPy (``kernel(bias, y)`` with ``y += x`` adds a row to
every row of ``y``).

Where it runs: CuPy arrays (or any CUDA array) on the GPU, the operation spliced into
``kernels/elementwise_kernel.cuh`` and compiled by NVRTC; NumPy arrays on the CPU, the same body
in ``kernels/elementwise_host.h`` compiled by the system C++ compiler (``gpubcast.elementwise_build``);
Dask arrays chunk by chunk (``gpubcast.dask_arrays``).  Supported types: bool, int8..uint64,
float32, float64.

On the GPU a kernel whose non-raw array parameters are all const inputs or outputs (no ``_non_const``
array input) runs on the built-in ops' access paths (``elementwise_build``, the header's tile path):
vector loads and stores where operands are contiguous and aligned, several elements a thread with
every load issued before the operation, lane chunks where the rows allow them.  An output is read
only where the operation reads it before writing it (``y += x``) or writes it only sometimes; such
elements keep their values, as in CuPy.  Other kernels run one element a thread.
"""

from __future__ import annotations

import re
from functools import partial

import numpy as np

from . import backends, compiled_calls
from . import dtypes as _dt
from . import elementwise_build as build
from . import host_pool
from .cuda import compiled_launch, torch_tensors
from .errors import BroadcastError
from .hot_calls import HotCalls
from .plan import c_strides, coalesce, plan as make_plan
from .rules import check_options, dim_maps

_IDENTIFIER = re.compile(r"^[A-Za-z_][A-Za-z0-9_]*$")
INT32_LIMIT = 2**31 - 1


def parse_params(text: str, is_const: bool) -> tuple[build.Param, ...]:
    """CuPy's parameter list: comma-separated ``[raw] [_non_const] type name``."""
    if not isinstance(text, str):
        raise TypeError(f"parameter lists are strings such as 'float32 x, T y', got {type(text).__name__}")
    if not text.strip():
        return ()
    params = []
    for decl in text.strip().split(","):
        words = decl.split()
        if len(words) < 2:
            raise ValueError(f"Syntax error: {decl!r}: a parameter is '[raw] type name', e.g. 'float32 x'")
        t, name = words[-2:]
        raw, const = False, is_const
        for w in words[:-2]:
            if w == "raw":
                raw = True
            elif w == "_non_const":
                const = False
            else:
                raise ValueError(f'Unknown keyword "{w}" in parameter {decl.strip()!r} (known: raw, _non_const)')
        if not _IDENTIFIER.match(name):
            raise ValueError(f"parameter {decl.strip()!r}: {name!r} is not a C identifier")
        if len(t) == 1:
            dtype, ctype = None, t
        else:
            try:
                dtype = np.dtype(t)
            except TypeError:
                raise TypeError(f"parameter {decl.strip()!r}: unknown type {t!r}; use a NumPy dtype name "
                                f"(bool, int32, float32, ...) or a one-letter type placeholder (T)") from None
            ctype = _ctype(dtype, decl)
        params.append(build.Param(name, dtype, ctype, raw, const, decl.strip()))
    return tuple(params)


def _ctype(dtype: np.dtype, what: str) -> str:
    try:
        return build.CTYPES[dtype]
    except KeyError:
        raise TypeError(f"{what.strip()}: gpubcast.ElementwiseKernel computes on bool, int8..uint64, float32 "
                        f"and float64, not {dtype}") from None


class ElementwiseKernel:
    """A user-defined elementwise kernel (CuPy's ``ElementwiseKernel``), broadcasting under gpubcast's
    rule sets, on CuPy arrays (GPU), NumPy arrays (CPU) and Dask arrays.

    ``broadcast``, ``axis`` and ``axes_mapping`` are the defaults of every call (a call may override
    them).  ``reduce_dims`` is accepted for CuPy compatibility (dims are always coalesced; ``i`` is
    the same either way).  See the module docstring for the rules and docs/guide/elementwise-kernel.md for examples.
    """

    def __init__(self, in_params, out_params, operation, name="kernel", reduce_dims=True, preamble="",
                 no_return=False, return_tuple=False, loop_prep="", after_loop="", options=(), *,
                 broadcast="numpy", axis=-1, axes_mapping=None):
        if not isinstance(name, str) or not _IDENTIFIER.match(name):
            raise ValueError(f'Invalid kernel name: "{name}"')
        for what, text in (("operation", operation), ("preamble", preamble), ("loop_prep", loop_prep),
                           ("after_loop", after_loop)):
            if not isinstance(text, str):
                raise TypeError(f"ElementwiseKernel {what} must be a string of C/C++ code, got {type(text).__name__}")
        self.in_params = parse_params(in_params, True)
        self.out_params = parse_params(out_params, False)
        self.params = self.in_params + self.out_params
        names = [p.name for p in self.params]
        if "i" in names:
            raise ValueError("Can not use 'i' as a parameter name")
        dup = sorted({n for n in names if names.count(n) > 1})
        if dup:
            raise ValueError(f"ElementwiseKernel '{name}': parameter name(s) {', '.join(dup)} declared twice")
        if not self.out_params:
            raise ValueError(f"ElementwiseKernel '{name}' declares no output parameter")
        if isinstance(options, str) or not all(isinstance(o, str) for o in options):
            raise TypeError("options must be a tuple of NVRTC option strings, e.g. ('-DN=4',)")
        self.nin, self.nout = len(self.in_params), len(self.out_params)
        self.nargs = self.nin + self.nout
        self.operation, self.name, self.__name__ = operation, name, name
        self.preamble, self.loop_prep, self.after_loop = preamble, loop_prep, after_loop
        self.options = tuple(options)
        self.reduce_dims, self.no_return, self.return_tuple = reduce_dims, no_return, return_tuple
        self.broadcast, self.axis, self.axes_mapping = check_options(broadcast, axis, axes_mapping)
        self._hot = HotCalls(_HOT_MAX)   # call signature -> runner (see _hot_key; hot_calls)
        self._table = compiled_calls.table_for(f"ElementwiseKernel {name}")   # the compiled launch path's

    def __getstate__(self):       # the runners hold ctypes functions, the table C entries: rebuilt where unpickled
        return {k: v for k, v in self.__dict__.items() if k not in ("_hot", "_table")}

    def __setstate__(self, state):
        self.__dict__.update(state)
        self._hot = HotCalls(_HOT_MAX)
        self._table = compiled_calls.table_for(f"ElementwiseKernel {self.name}")

    def __repr__(self):
        ins = ", ".join(p.decl for p in self.in_params)
        outs = ", ".join(p.decl for p in self.out_params)
        return f"<gpubcast.ElementwiseKernel '{self.name}' ({ins}) -> ({outs})>"

    # ---- the call ---------------------------------------------------------------------------------
    def __call__(self, *args, size=None, stream=None, block_size=None, broadcast=None, axis=None,
                 axes_mapping=None, **kwargs):
        """Run the kernel: ``kernel(*inputs)`` or ``kernel(*inputs, *outputs)``.

        ``size``: the loop size, only when every array argument is ``raw``.  ``stream``: a CuPy stream
        (GPU).  ``block_size``: accepted for CuPy compatibility (gpubcast launches 256 threads per
        block).  ``broadcast`` / ``axis`` / ``axes_mapping``: the rule set (default: the kernel's).
        Returns the output, a tuple of outputs (several, or ``return_tuple``), or None (``no_return``).
        """
        if kwargs:
            raise TypeError(f"Wrong arguments {kwargs}")
        return self._result(self.outputs(*args, size=size, stream=stream, block_size=block_size,
                                         broadcast=broadcast, axis=axis, axes_mapping=axes_mapping))

    def outputs(self, *args, size=None, stream=None, block_size=None, broadcast=None, axis=None,
                axes_mapping=None) -> tuple:
        """``__call__``, always returning the tuple of outputs (whatever ``no_return`` / ``return_tuple``)."""
        plain = size is None and stream is None and broadcast is None and axis is None and axes_mapping is None
        if plain:   # the compiled launch path first (CUDA arrays; None: not here)
            found = compiled_launch.call_kernel(self._table, *args)
            if found is not None:
                return found
        key = _hot_key(args, size, stream, broadcast, axis, axes_mapping)
        hot = self._hot.runners.get(key) if key is not None else None
        if hot is not None:
            if plain and hasattr(hot, "register"):   # seen before: its entry for the compiled path
                hot.register(self._table, args)
            return hot(args)
        if (torch := torch_tensors.torch_of(args)) is not None:   # torch's stream, torch tensors back
            return torch_tensors.through_torch(torch, backends.get("cuda"), lambda xs, _: self.outputs(
                *xs, size=size, stream=stream, block_size=block_size, broadcast=broadcast, axis=axis,
                axes_mapping=axes_mapping), args, None)
        if len(args) not in (self.nin, self.nargs):
            raise TypeError(f"Wrong number of arguments for {self.name!r}. It must be either {self.nin} or "
                            f"{self.nargs} (with outputs), but given {len(args)}.")
        if block_size is not None and block_size <= 0:
            raise ValueError("block_size must be greater than zero")
        rule, axis, axes_mapping = check_options(
            self.broadcast if broadcast is None else broadcast, self.axis if axis is None else axis,
            self.axes_mapping if axes_mapping is None else axes_mapping)
        if size is not None and (isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size < 0):
            raise ValueError(f"size must be a non-negative int, got {size!r}")
        if any(backends.is_dask_array(a) for a in args):
            from . import dask_arrays
            return dask_arrays.apply_kernel(self, args, rule=rule, axis=axis, axes_mapping=axes_mapping)
        gpu = any(backends.is_cuda_array(a) for a in args)
        xp = backends.get("cuda").xp if gpu else np
        args = [self._argument(k, a, gpu) for k, a in enumerate(args)]
        ins, outs = args[:self.nin], args[self.nin:]
        types, placeholders = self.resolve_types([_dtype_of(a) for a in ins], [a.dtype for a in outs])

        arrays = [k for k, a in enumerate(ins) if _is_array(a) and not self.params[k].raw]
        out_arrays = [k for k, a in enumerate(outs) if not self.out_params[k].raw]
        if size is not None:
            if arrays or (outs and out_arrays):
                raise ValueError("Specified 'size' can be used only if all of the ndarray are 'raw'.")
            out_shape, strides = (int(size),), {}
        elif arrays:
            planned = [(k, ins[k]) for k in arrays]
            if rule == "numpy":     # as CuPy: given outputs take part (an input may broadcast to an output)
                planned += [(self.nin + k, outs[k]) for k in out_arrays]
            out_shape, strides = self._broadcast_shape(planned, rule, axis, axes_mapping)
        elif outs and out_arrays:
            out_shape, strides = tuple(outs[out_arrays[0]].shape), {}
        else:
            raise ValueError("Loop size is undecided.")

        if outs:
            for k, o in enumerate(outs):
                if not self.out_params[k].raw and tuple(o.shape) != out_shape:
                    raise ValueError(f"Out shape is mismatched: output '{self.out_params[k].name}' has shape "
                                     f"{tuple(o.shape)}, the kernel's loop shape is {out_shape}")
            allocate = None
        else:
            if any(p.raw for p in self.out_params) and size is None:
                raise ValueError("Output array size is Undecided")
            allocate = (out_shape, types[self.nin:])
            outs = [_empty(xp)(out_shape, t) for t in types[self.nin:]]
        result = tuple(outs)
        n = int(np.prod(out_shape))
        if n:
            launcher = self._run(ins, outs, types, placeholders, out_shape, strides, n, gpu, stream, xp)
            if key is not None and launcher is not None:
                self._hot.keep(key, _hot_runner(launcher, allocate, xp))  # built anyway: kept at once
        return result

    def _result(self, outs):
        if self.no_return:
            return None
        return outs if self.return_tuple or len(outs) != 1 else outs[0]

    def _argument(self, k: int, a, gpu: bool):
        """Argument ``k`` as the path takes it: an array of the device, or a NumPy scalar / Python number."""
        p = self.params[k]
        out = k >= self.nin
        if gpu:
            if backends.is_cuda_array(a):
                return backends.get("cuda").asarray(a)
            if not out and (_dt.is_python_scalar(a) or isinstance(a, np.generic)
                            or isinstance(a, np.ndarray) and a.ndim == 0):
                return a[()] if isinstance(a, np.ndarray) else a
            if isinstance(a, np.ndarray):
                raise TypeError(f"ElementwiseKernel '{self.name}': argument '{p.name}' is a NumPy array of shape "
                                f"{a.shape} among CUDA arrays; move it to the GPU first (cupy.asarray(x))")
        else:
            if isinstance(a, np.ndarray):
                if out and not a.flags.writeable:
                    raise ValueError(f"ElementwiseKernel '{self.name}': output '{p.name}' is read-only")
                return a
            if not out and (_dt.is_python_scalar(a) or isinstance(a, np.generic)):
                return a
        if out:
            raise TypeError(f"Output arguments type must be an array (numpy.ndarray on the CPU, cupy.ndarray on the "
                            f"GPU): output '{p.name}' is {type(a).__name__}")
        raise TypeError(f"Unsupported type {type(a)} for argument '{p.name}' of ElementwiseKernel '{self.name}' "
                        f"(arrays, NumPy scalars and Python numbers)")

    def resolve_types(self, in_dtypes, out_dtypes):
        """(dtype of every parameter, ((placeholder, dtype), ...)): CuPy's rules -- a typed parameter takes
        arrays of exactly its type, a placeholder takes the type of the first array (outputs first) that
        names it, and scalars take their parameter's type.  TypeError on a mismatch."""
        found: dict = {}
        for params, dtypes in ((self.out_params, out_dtypes), (self.in_params, in_dtypes)):
            for p, a in zip(params, dtypes):
                if a is None:
                    continue
                a = np.dtype(a)
                if p.dtype is not None:
                    if a != p.dtype:
                        raise TypeError(f"Type is mismatched. {p.name} {a} {p.dtype}: parameter '{p.decl}' of "
                                        f"'{self.name}' takes {p.dtype} arrays; cast it first (x.astype({p.dtype}))")
                elif p.ctype in found:
                    if a != found[p.ctype]:
                        raise TypeError(f"Type is mismatched. {p.name} {a} {found[p.ctype]} {p.ctype}: placeholder "
                                        f"{p.ctype} of '{self.name}' is already {found[p.ctype]}")
                else:
                    found[p.ctype] = a
        for p in self.params:
            if p.dtype is None and p.ctype not in found:
                raise TypeError(f"ElementwiseKernel '{self.name}': cannot determine type placeholder {p.ctype} of "
                                f"parameter '{p.decl}': no array argument has it; pass an array of that type or "
                                f"declare the parameter's type (e.g. 'float32 {p.name}')")
        for letter, t in found.items():
            _ctype(t, f"type placeholder {letter} resolved to {t}:")
        types = tuple(p.dtype if p.dtype is not None else found[p.ctype] for p in self.params)
        return types, tuple(sorted(found.items()))

    def _broadcast_shape(self, arrays, rule, axis, axes_mapping):
        """(loop shape, {parameter index: element strides aligned to it}) of the non-raw input arrays."""
        names = [self.params[k].name for k, _ in arrays]
        xs = [a for _, a in arrays]
        if rule == "explicit":     # every other one onto the first, one (input, target) pair at a time
            strides = [make_plan(xs[0]).strides[0]]
            strides += [self._planned(partial(make_plan, x, xs[0], rule=rule, axes_mapping=axes_mapping),
                                      rule, [name, names[0]]).strides[0] for x, name in zip(xs[1:], names[1:])]
            out_shape = xs[0].shape
        else:
            p = self._planned(lambda: make_plan(*xs, rule=rule, axis=axis, axes_mapping=axes_mapping), rule, names)
            out_shape, strides = p.out_shape, list(p.strides)
        return tuple(out_shape), {k: s for (k, _), s in zip(arrays, strides)}

    def dim_maps(self, shapes, names, rule, axis, axes_mapping):
        """(loop shape, per shape its dim -> loop dim map) under ``rule`` (``names``: the parameters'):
        the lowering of the Dask path, the same rules as ``_broadcast_shape``."""
        if rule == "explicit":
            maps = [self._planned(partial(dim_maps, (s, shapes[0]), rule, axis, axes_mapping),
                                  rule, [name, names[0]])[1][0] for s, name in zip(shapes[1:], names[1:])]
            return tuple(shapes[0]), [tuple(range(len(shapes[0])))] + maps
        out_shape, maps = self._planned(lambda: dim_maps(tuple(shapes), rule, axis, axes_mapping), rule, names)
        return out_shape, list(maps)

    def _planned(self, planner, rule, names):
        """``planner()``; its BroadcastError followed by which parameter each ``arg j`` of it is."""
        try:
            return planner()
        except BroadcastError as e:
            where = {"pdpd": ", the first is the target", "explicit": ", arg 1 is the target"}.get(rule, "")
            legend = ", ".join(f"arg {j} = '{n}'" for j, n in enumerate(names))
            raise BroadcastError(f"{e} [ElementwiseKernel '{self.name}': {legend}{where}]") from None

    # ---- execution ----------------------------------------------------------------------------------
    def signature(self, types, placeholders, kinds) -> build.Signature:
        return build.Signature(self.name, self.params, tuple(types), tuple(kinds), tuple(placeholders),
                               self.preamble, self.loop_prep, self.operation, self.after_loop, self.options,
                               self.nin)

    def _run(self, ins, outs, types, placeholders, out_shape, strides, n, gpu, stream, xp):
        args = list(ins) + list(outs)
        kinds, ptrs, values, raw_sizes, sets = [], [], [], [], []
        for k, (p, a, t) in enumerate(zip(self.params, args, types)):
            if not _is_array(a):
                kinds.append("scalar")
                ptrs.append(0)
                values.append(np.dtype(t).type(a).tobytes())
                raw_sizes.append(0)
                sets.append((0,) * len(out_shape))
                continue
            if p.raw:
                if not a.flags.c_contiguous:
                    if k >= self.nin:
                        raise ValueError(f"ElementwiseKernel '{self.name}': raw output '{p.name}' must be "
                                         f"C-contiguous")
                    a = args[k] = xp.ascontiguousarray(a)
                kinds.append("raw")
                raw_sizes.append(int(a.size))
                sets.append((0,) * len(out_shape))
            else:
                kinds.append("array")
                raw_sizes.append(0)
                sets.append(strides[k] if k in strides else _elements(a))
            ptrs.append(_pointer(a, gpu))
            values.append(b"")
        copied = any(x is not y for x, y in zip(args, list(ins) + list(outs)))
        sig = self.signature(types, placeholders, kinds)
        shape, csets, _ = coalesce(out_shape, sets, c_strides(out_shape))
        if gpu:
            launcher = self._run_gpu(sig, kinds, ptrs, values, raw_sizes, n, shape, csets, stream)
        else:
            launcher = self._run_cpu(sig, kinds, ptrs, values, raw_sizes, n, shape, csets)
        return None if copied else launcher

    def _run_gpu(self, sig, kinds, ptrs, values, raw_sizes, n, shape, csets, stream):
        if len(shape) > build.MAX_GPU_DIMS:
            raise ValueError(f"ElementwiseKernel '{self.name}': the broadcast loop has {len(shape)} dims that "
                             f"cannot be merged; the GPU path takes at most {build.MAX_GPU_DIMS}")
        reach = max([n] + [sum((d - 1) * abs(s) for d, s in zip(shape, st)) for st in csets])
        bits = 32 if reach <= INT32_LIMIT else 64
        lc = build.gpu_launch(sig, bits, ptrs, values, raw_sizes, n, shape, csets)
        build.run_gpu(sig, lc, stream)
        return build.device_launcher(sig, lc, self.nin, lambda a: _pointer(a, True))

    def _run_cpu(self, sig, kinds, ptrs, values, raw_sizes, n, shape, csets):
        row_kinds = tuple(None if kind != "array" else {0: 0, 1: 1}.get(st[-1], 2)
                          for kind, st in zip(kinds, csets))
        data = build.host_args(len(kinds), len(shape), n, shape, ptrs, csets, raw_sizes, values)
        build.run_cpu(sig, row_kinds, data)
        return build.host_launcher(sig, row_kinds, data, self.nin)


_HOT_MAX = 1024
_SCALARS = (bool, int, float)


def _hot_key(args, size, stream, broadcast, axis, axes_mapping):
    """The key of a call whose arguments are all NumPy or CuPy arrays and scalars (None otherwise): the
    second call with the same key skips parsing, type resolution and planning (``_hot_runner``)."""
    if size is not None or stream is not None or type(axes_mapping) is list:
        return None
    key = [len(args), broadcast, axis, axes_mapping]
    for a in args:
        t = type(a)
        if t is np.ndarray:
            key.append((a.dtype, a.shape, a.strides, a.flags.writeable))
        elif t in _SCALARS or isinstance(a, np.generic):
            key.append(t)
        elif t.__name__ == "ndarray" and t.__module__.startswith("cupy"):
            key.append((t, a.dtype, a.shape, a.strides))
        else:
            return None
    return tuple(key)


def _empty(xp):
    """``xp.empty``; NumPy outputs come from the host pool."""
    return host_pool.empty if xp is np else xp.empty


def _hot_runner(launcher, allocate, xp):
    """A call of the same signature: outputs allocated as before (or the given ones), then ``launcher``.
    A GPU runner can ``register(table, args)`` this call with the compiled launch path."""
    def run(args):
        if allocate is None:
            outs = tuple(args[launcher.nin:])
        else:
            shape, dtypes = allocate
            outs = tuple(_empty(xp)(shape, t) for t in dtypes)
            args = (*args, *outs)
        launcher(args)
        return outs
    if launcher.device is not None:
        run.register = partial(_register_device, launcher=launcher, allocate=allocate)
    return run


def _register_device(table, args, *, launcher, allocate) -> bool:
    """The compiled launch path's entry of a GPU call on ``args`` (outputs allocated where
    ``allocate``): the launcher's parameter bytes with its pointer and value slots."""
    family, name, grid, block = launcher.device
    scalars = {k: np.dtype(cast) for k, _, cast in launcher.values}
    slots = [scalars.get(k) for k in range(len(args))]
    allocs = [] if allocate is None else [(allocate[0], t) for t in allocate[1]]
    launch = (family, name, grid, block, bytes(launcher.template),
              tuple((k, off, 0) for k, off in launcher.pointers), tuple((k, off) for k, off, _ in launcher.values))
    return compiled_launch.register_kernel(table, args, backends.get("cuda"), slots, allocs, launcher.nin, (launch,),
                                           launcher)


def _is_array(a) -> bool:
    return hasattr(a, "shape") and hasattr(a, "strides") and not isinstance(a, np.generic)


def _dtype_of(a):
    return a.dtype if _is_array(a) else None


def _elements(a) -> tuple[int, ...]:
    """An output array's strides in elements."""
    item = a.dtype.itemsize
    if any(s % item for s in a.strides):
        raise ValueError(f"output array with strides {a.strides} is not aligned to its {item}-byte elements")
    return tuple(s // item for s in a.strides)


def _pointer(a, gpu: bool) -> int:
    """The address of element (0, ..., 0); on the GPU, refused where a kernel would fault."""
    if not gpu:
        return a.__array_interface__["data"][0]
    ptr = int(a.data.ptr)
    if a.dtype.itemsize and ptr % a.dtype.itemsize:
        raise ValueError(f"CUDA array of {a.dtype} at address {ptr:#x} is not aligned to its {a.dtype.itemsize}-byte "
                         f"elements; copy it first (cupy.ascontiguousarray of an aligned view)")
    device = backends.get("cuda").xp.cuda.Device().id
    if a.data.device_id != device:
        raise ValueError(f"a CuPy array on device {a.data.device_id} with the current device {device}: compute on "
                         f"its device (with cupy.cuda.Device({a.data.device_id}): ...) or move it there")
    return ptr
