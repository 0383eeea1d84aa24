"""gpubcast on Dask arrays: every op under every rule set, lazily, chunk by chunk.

``dispatch.apply`` hands a call here when any input is a ``dask.array.Array``;
the result is a lazy Dask array.  Dask does the scheduling (threads,
processes, ``dask.distributed``); gpubcast does the planning and the kernels:

1. Eager checks, at call time, in the order of the NumPy path: types
   (``op.resolve``: ``TypeError``; a Python scalar that does not fit its loop
   dtype: ``OverflowError``), then shapes (the same planner, so the same
   ``BroadcastError`` as for NumPy arrays).  Dask arrays of unknown chunk sizes
   (NaN in ``shape``) are a ``ValueError``: call ``x.compute_chunk_sizes()``.
2. Lowering: every rule set becomes an *aligned reshape*.  Each operand gets
   the output's rank, its dims of size != 1 at the output dims the rule maps
   them to, 1 everywhere else (only size-1 dims are inserted or dropped, so it
   is a per-chunk view).  Operands of equal rank whose dims equal the
   output's or are 1 broadcast by the NumPy rule, so Dask's ``blockwise``
   (``unify_chunks``) lines the chunks up, uneven chunks included.
3. Each output chunk is computed by ``dispatch.apply(op, chunks, rule="numpy")``:
   NumPy chunks on the default CPU backend, CuPy chunks on the CUDA backend.

Data movement (``broadcast_to`` / ``expand`` of a Dask array): the aligned
input goes through ``da.broadcast_to`` (new and broadcast dims get Dask's
"auto" chunking, the input's dims keep their chunks), then every chunk is
materialised by gpubcast's copy, so the result holds no read-only views.

Rules of this module (documented in docs/guide/dask.md):
- ``out=`` is a ``TypeError``: Dask arrays are immutable and lazy; use the
  returned array (``result.compute()``, ``da.store(result, target)``).
- NumPy / CuPy arrays mixed with Dask arrays are chunked like the Dask
  operands; Python scalars and 0-d arrays go to every chunk as they are (weak
  scalar typing kept).  Host arrays (other than 0-d) mixed with CuPy-chunked
  Dask arrays are a ``TypeError``, as for CuPy arrays.
- ``backend=`` is not consulted: each chunk runs where it lives.
"""

from __future__ import annotations

import functools
import math

import numpy as np

from . import backends, dispatch, ops
from . import dtypes as _dt
from .rules import dim_maps


def apply(op: ops.Op, inputs, *, rule: str = "numpy", axis: int = -1, axes_mapping=None, out=None,
          dtype=None, target: int = 0, shape=None, backend=None):
    """``dispatch.apply`` for inputs of which at least one is a Dask array; returns a lazy Dask array
    (``backend=`` is not consulted: each chunk runs where it lives)."""
    import dask.array as da
    from dask.array.utils import meta_from_array
    from dask.base import tokenize

    if out is not None:
        raise TypeError(f"{op.name}: out= is not supported with Dask arrays (they are lazy and immutable); "
                        f"use the returned Dask array, e.g. dask.array.store(result, out) or result.compute()")
    inputs = [x if _dt.is_python_scalar(x) or hasattr(x, "dtype") and hasattr(x, "shape") else np.asarray(x)
              for x in inputs]
    template = _device_template(op, inputs)
    out_dtype = _resolve_types(op, inputs, dtype)
    shapes = [_known_shape(op.name, i, x) for i, x in enumerate(inputs)]
    name = f"gpubcast-{op.name}-" + tokenize(op.name, rule, axis, axes_mapping, dtype, target, shape, *inputs)

    if shape is not None:  # broadcast_to / expand: one Dask input, the target shape is no array
        p = dispatch.plan_for(shapes, rule, axis, axes_mapping, None, target, shape)
        meta = meta_from_array(template, ndim=len(p.out_shape), dtype=out_dtype)
        x = _aligned(inputs[0], p.out_shape, p.strides[0])
        moved = da.broadcast_to(x, p.out_shape, chunks=_target_chunks(x, p.out_shape), meta=meta)
        return moved.map_blocks(_copy_block, dtype=out_dtype, meta=meta, name=name)

    out_shape, maps = _operand_maps(shapes, rule, axis, axes_mapping, target)
    meta = meta_from_array(template, ndim=len(out_shape), dtype=out_dtype)
    out_ind = tuple(f"o{d}" for d in range(len(out_shape)))
    chunks = _reference_chunks(inputs, maps, out_shape)
    args, layouts = [], []
    for i, (x, dmap) in enumerate(zip(inputs, maps)):
        if _dt.is_python_scalar(x) or not backends.is_dask_array(x) and x.ndim == 0:
            args += [x, None]      # Python scalar or 0-d array: handed to every chunk as it is
            layouts.append(None)
            continue
        if not backends.is_dask_array(x):
            x = da.from_array(x, chunks=tuple(chunks[d] if d is not None and n != 1 else (n,)
                                              for n, d in zip(x.shape, dmap)), asarray=False)
        # dims the rule maps nowhere (PDPD's trailing 1s) get an index of their own, contracted away
        args += [x, tuple(f"o{d}" if d is not None else f"c{i}_{k}" for k, d in enumerate(dmap))]
        layouts.append(dmap)
    block = functools.partial(_apply_block, op.name, None if dtype is None else np.dtype(dtype),
                              tuple(layouts), len(out_shape))
    return da.blockwise(block, out_ind, *args, name=name, dtype=out_dtype, meta=meta, concatenate=False,
                        align_arrays=True)


def _operand_maps(shapes, rule, axis, axes_mapping, target):
    """``(out_shape, maps)``: per operand, in call order, the output dim of each of its dims (None: none).

    Operands are planned in ``dispatch``'s order (PDPD: ``target`` first), so the
    ``BroadcastError`` is the one the NumPy path raises.
    """
    order = dispatch.planning_order(rule, len(shapes), target) or tuple(range(len(shapes)))
    out_shape, maps = dim_maps(tuple(shapes[i] for i in order), rule, axis, axes_mapping)
    return out_shape, [maps[order.index(i)] for i in range(len(shapes))]


def _resolve_types(op, inputs, dtype) -> np.dtype:
    """The output dtype, resolved as ``dispatch.apply`` resolves it (TypeError at call time)."""
    loop, out_dtype = dispatch.resolve_types(op, tuple(_dt.weak_type(x) for x in inputs), dtype)
    for x, dt in zip(inputs, loop):
        if _dt.is_python_scalar(x):
            np.asarray(x, dtype=dt)  # raises now what each chunk would raise (e.g. 1000 into int8)
    return np.dtype(out_dtype)


def _known_shape(what: str, i, x) -> tuple:
    shape = tuple(getattr(x, "shape", ()))
    if any(isinstance(n, float) and math.isnan(n) for n in shape):
        raise ValueError(f"{what}: arg {i} is a Dask array of unknown chunk sizes (shape {shape}); gpubcast "
                         f"plans the broadcast before computing, so call x.compute_chunk_sizes() first")
    return shape


def _device_template(op, inputs):
    """The array whose kind (NumPy or CuPy) the output chunks take; TypeError for a host/CUDA mix."""
    kinds = [(x, backends.is_cuda_array(getattr(x, "_meta", x))) for x in inputs if not _dt.is_python_scalar(x)]
    cuda = [x for x, on_gpu in kinds if on_gpu]
    if cuda:
        for x, on_gpu in kinds:
            if not on_gpu and x.ndim != 0:
                raise TypeError(f"{op.name}: cannot mix host data {type(x).__name__} (shape {x.shape}, chunks of "
                                f"{type(getattr(x, '_meta', x)).__name__}) with CUDA data; move it to the GPU "
                                f"first (x.map_blocks(cupy.asarray) or cupy.asarray(x))")
        return cuda[0]
    return next(x for x in inputs if backends.is_dask_array(x))


def _aligned(x, out_shape, strides):
    """``x`` with ``len(out_shape)`` dims: its non-1 dims where the plan maps them (where its plan
    ``strides`` are non-zero), 1 elsewhere.  Only size-1 dims move, so chunks are kept."""
    aligned = tuple(n if s else 1 for n, s in zip(out_shape, strides))
    if tuple(x.shape) == aligned:
        return x
    real_out = iter(d for d, n in enumerate(aligned) if n != 1)
    index, next_dim = [], 0
    for n in x.shape:
        if n == 1:
            index.append(0)                 # drop it (an int index makes no output dim)
            continue
        d = next(real_out)
        index += [None] * (d - next_dim) + [slice(None)]
        next_dim = d + 1
    return x[tuple(index + [None] * (len(aligned) - next_dim))]


def _reference_chunks(inputs, maps, out_shape):
    """Per output dim, the chunks of the first Dask operand that spans it (one chunk where none does)."""
    chunks = [None] * len(out_shape)
    for x, dmap in zip(inputs, maps):
        if backends.is_dask_array(x):
            for c, n, d in zip(x.chunks, x.shape, dmap):
                if d is not None and n != 1 and chunks[d] is None:
                    chunks[d] = c
    return [c if c is not None else (n,) for c, n in zip(chunks, out_shape)]


def _target_chunks(x, out_shape):
    """Chunks of a broadcast of aligned ``x``: x's own where it spans the dim, Dask's "auto" elsewhere."""
    from dask.array.core import normalize_chunks
    spec = tuple(c if n == m else "auto" for c, n, m in zip(x.chunks, x.shape, out_shape))
    dtype = x.dtype if x.dtype.kind != "O" else np.dtype(np.intp)  # objects: one pointer per element
    return normalize_chunks(spec, shape=out_shape, dtype=dtype)


def _apply_block(op_name, dtype, layouts, rank, *blocks):
    """One output chunk: the op on the operands' chunks, laid onto the output's rank by ``layouts``
    (per operand its dim map, None for one passed as it is); then the NumPy rule is the requested rule."""
    return dispatch.apply(ops.get(op_name), _aligned_blocks(layouts, rank, blocks), rule="numpy", dtype=dtype)


def _aligned_blocks(layouts, rank, blocks) -> list:
    """The operands' chunks laid onto the output's rank by ``layouts`` (see ``_apply_block``)."""
    aligned = []
    for b, dmap in zip(blocks, layouts):
        if dmap is not None:
            for _ in range(dmap.count(None)):
                (b,) = b                    # a contracted (size-1, one-chunk) dim arrives as a 1-list
            if dmap != tuple(range(rank - len(dmap), rank)):
                shape = [1] * rank
                for n, d in zip(b.shape, dmap):
                    if d is not None:
                        shape[d] = n
                b = b.reshape(shape)
        aligned.append(b)
    return aligned


def apply_kernel(kernel, args, *, rule: str = "numpy", axis: int = -1, axes_mapping=None) -> tuple:
    """A ``gpubcast.ElementwiseKernel`` call with Dask arrays among ``args``: one lazy Dask array per
    output.  Types and shapes are checked now (the kernel's own errors); each output chunk runs the
    kernel on the operands' chunks laid onto the output's rank, under the NumPy rule.  ``i`` and
    ``_ind.size()`` are then a chunk's own.  Outputs may not be given and ``raw`` parameters may not be
    Dask arrays (a chunk would see only part of them)."""
    import dask.array as da
    from dask.array.utils import meta_from_array
    from dask.base import tokenize

    if len(args) != kernel.nin:
        raise TypeError(f"ElementwiseKernel '{kernel.name}': outputs cannot be given with Dask arrays (they are "
                        f"lazy and immutable); call it with the {kernel.nin} inputs and use the returned arrays")
    args = [x if _dt.is_python_scalar(x) or hasattr(x, "dtype") and hasattr(x, "shape") else np.asarray(x)
            for x in args]
    for p, x in zip(kernel.in_params, args):
        if p.raw and backends.is_dask_array(x):
            raise TypeError(f"ElementwiseKernel '{kernel.name}': raw parameter '{p.name}' cannot be a Dask array "
                            f"(each chunk would index only its part); pass a NumPy or CuPy array")
    is_array = [not _dt.is_python_scalar(x) and not isinstance(x, np.generic) for x in args]
    types, _ = kernel.resolve_types([x.dtype if a else None for x, a in zip(args, is_array)], [])
    template = next(x for x in args if backends.is_dask_array(x))
    cuda = backends.is_cuda_array(template._meta)
    planned = [k for k, (p, a) in enumerate(zip(kernel.in_params, is_array)) if a and not p.raw]
    out_shape, planned_maps = kernel.dim_maps([_known_shape(f"ElementwiseKernel '{kernel.name}'", k, args[k])
                                               for k in planned], [kernel.in_params[k].name for k in planned],
                                              rule, axis, axes_mapping)
    maps = dict(zip(planned, planned_maps))
    chunks = _reference_chunks([args[k] for k in planned], planned_maps, out_shape)
    blockwise_args, layouts = [], []
    for k, x in enumerate(args):
        if k not in maps:                 # scalar, or a raw array: handed to every chunk as it is
            blockwise_args += [x, None]
            layouts.append(None)
            continue
        dmap = maps[k]
        if not backends.is_dask_array(x):
            if cuda and not backends.is_cuda_array(x) and x.ndim:
                raise TypeError(f"ElementwiseKernel '{kernel.name}': cannot mix host data (shape {x.shape}) with "
                                f"CUDA-chunked Dask arrays; move it to the GPU first")
            x = da.from_array(x, chunks=tuple(chunks[d] if d is not None and n != 1 else (n,)
                                              for n, d in zip(x.shape, dmap)), asarray=False)
        blockwise_args += [x, tuple(f"o{d}" if d is not None else f"c{k}_{j}" for j, d in enumerate(dmap))]
        layouts.append(dmap)
    out_ind = tuple(f"o{d}" for d in range(len(out_shape)))
    token = tokenize(kernel.name, kernel.in_params, kernel.out_params, kernel.operation, kernel.preamble,
                     kernel.loop_prep, kernel.after_loop, kernel.options, rule, axis, axes_mapping, *args)
    outs = []
    for j, t in enumerate(types[kernel.nin:]):
        block = functools.partial(_kernel_block, kernel, tuple(layouts), len(out_shape), j)
        meta = meta_from_array(template, ndim=len(out_shape), dtype=t)
        outs.append(da.blockwise(block, out_ind, *blockwise_args, name=f"gpubcast-{kernel.name}-{j}-{token}",
                                 dtype=t, meta=meta, concatenate=False, align_arrays=True))
    return tuple(outs)


def _kernel_block(kernel, layouts, rank, j, *blocks):
    """Output ``j`` of ``kernel`` on one set of chunks (aligned by ``layouts``, the NumPy rule)."""
    return kernel.outputs(*_aligned_blocks(layouts, rank, blocks), broadcast="numpy")[j]


def _copy_block(block):
    """A chunk of a broadcast (a read-only, stride-0 view) copied into a new array by gpubcast."""
    return dispatch.apply(ops.get("copy"), (block,), rule="numpy_to", shape=tuple(block.shape))


dispatch.defer(lambda x: backends.is_dask_array(x), apply)
