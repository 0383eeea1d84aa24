"""The compiled launch path: a repeated call on device arrays, from the public function to
``cuLaunchKernel`` in one C call (``native/cuda_launch.cpp``), as ``compiled_calls`` is for the CPU.

Why: the Python runner of a repeated CUDA call (``backends.cuda``'s ``prepare``) builds operands,
asks CuPy for the current device, packs each launch with ``struct`` and launches through CuPy's
``Function.__call__``: ~20 us of host time per call on a 2-core VM, more than a small kernel's
whole run.  ``cuda_launch.cpp`` reads the call's signature from the arrays' own fields (CuPy's
``dtype``/``shape``/``strides``/``data``; a torch tensor's ``stride()``/``data_ptr()``), finds its
entry, patches each launch's parameter block (pointers, host scalars by value) and launches.

Where it comes from: the extension ``gpubcast.native.cuda_launch`` built with the package (setup.py),
else built at run time, as the CPU path's (``compiled_calls.native_module``).

Who uses it: the same tables as the CPU path (``compiled_calls.table_for``; one per op and option
set).  ``compiled_calls.call`` hands a call with device operands to this code (``connect``); a
prepared CUDA runner carries a ``Program`` as its ``native``, so ``compiled_calls.register``
adds the call's entry here at its second sighting, as for the CPU.  ``ElementwiseKernel`` calls
``call_kernel`` with a table of its own (``register_kernel``).  None from C means "not here": the
Python path runs, with the same values (and raises what C does not check: another device, ...).

Launches: through the backend's ``Launcher``: the CUDA driver's ``cuLaunchKernel`` from
``libcuda`` (``LIBCUDA``, loaded with dlopen at run time: nothing links against it), the virtual
device's (``testing.virtual``: its emulation, checking the parameter bytes as ``Function.__call__``
does), or ``noop()`` (the host-path benchmark).  A ``libcuda`` that does not load leaves the backend
on the Python path (one warning).  ``GPUBCAST_COMPILED_CALLS=0`` turns this path off with the CPU's.

Arrays are read by their exact type (``register_library``): the CUDA backend registers its array
module's ``ndarray``; ``cuda.torch_tensors`` registers torch's ``Tensor``.  Each library allocates
results (CuPy: the ``ndarray`` constructor, its memory pool) and names the stream launches go to
(its current one) -- a call with a torch tensor among its operands takes torch's.  Other objects
exposing ``__cuda_array_interface__`` or DLPack take the Python path (as CuPy views).  A call that
converts an input first or its result into ``out=`` allocates its temporaries the same way.
"""

from __future__ import annotations

import threading
import warnings
from typing import NamedTuple

import numpy as np

from .. import compiled_calls
from ..plan import c_strides, plan as make_plan
from . import launch
from .sources import FAMILIES

#: the CUDA driver library the real launcher is taken from (dlopen at run time)
LIBCUDA = "libcuda.so.1"


class Launcher(NamedTuple):
    """A launch function with ``cuLaunchKernel``'s C signature, at ``address``; ``on_error(status)``
    raises the error a non-zero status stands for; ``keep`` holds what the address lives in."""
    address: int
    on_error: object
    keep: object = None


def _absent(*args):
    """``call_kernel`` without the library: never answers."""
    return None


call_kernel = _absent
_module = None
_lock = threading.Lock()
_state = {"tried": False, "driver": None, "driver_tried": False}


def load():
    """The compiled module, connected to ``compiled_calls``' (the package's extension
    ``gpubcast.native.cuda_launch``, else built now, as ``compiled_calls.native_module`` finds it);
    None where it cannot be (``GPUBCAST_COMPILED_CALLS=0``, no CPU hot path, no compiler, a failed
    build): the Python path serves, after one warning saying why."""
    global _module, call_kernel
    with _lock:
        if _state["tried"]:
            return _module
        if not compiled_calls.enabled() or not compiled_calls.load():
            _state["tried"] = compiled_calls.describe() != "not loaded yet"   # another thread loads it: ask again
            return None
        _state["tried"] = True
        try:
            module, _, note = compiled_calls.native_module("cuda_launch", "gpubcast's compiled CUDA launch path")
            module.connect(compiled_calls.module.api)
        except Exception as e:  # noqa: BLE001 - no compiler or a failed build: the Python path serves
            warnings.warn(f"gpubcast: the compiled CUDA launch path is unavailable ({type(e).__name__}: "
                          f"{str(e).splitlines()[0] if str(e) else ''}); repeated CUDA calls take the Python "
                          f"path (GPUBCAST_COMPILED_CALLS=0 silences this)", RuntimeWarning, stacklevel=3)
            return None
        if note:
            warnings.warn(f"gpubcast: {note}", RuntimeWarning, stacklevel=3)
        _module, call_kernel = module, module.call_kernel
        return module


def answered() -> int:
    """How many calls the compiled launch path answered in this process (0 before it loads)."""
    return _module.answered() if _module is not None else 0


# ---- launchers ----------------------------------------------------------------------------------------

def _driver_error(status: int):
    raise RuntimeError(f"cuLaunchKernel failed with CUresult {status} (see the CUDA driver API's CUresult list)")


def driver() -> Launcher | None:
    """``cuLaunchKernel`` of ``LIBCUDA``, loaded once; None (and one warning) where it does not load."""
    if not _state["driver_tried"]:
        module = load()
        if module is None:
            return None
        _state["driver_tried"] = True
        try:
            _state["driver"] = Launcher(module.driver_launcher(LIBCUDA), _driver_error)
        except OSError as e:
            warnings.warn(f"gpubcast: the compiled CUDA launch path cannot use the CUDA driver ({e}); repeated "
                          f"CUDA calls take the Python path", RuntimeWarning, stacklevel=3)
    return _state["driver"]


def noop() -> Launcher | None:
    """A launcher that launches nothing (the host path's cost, ``bench --size tiny``)."""
    module = load()
    return None if module is None else Launcher(module.noop_launcher(), _driver_error)


# ---- libraries and contexts -----------------------------------------------------------------------------

READ_ATTRS, READ_TORCH = 0, 1


def register_library(array_type, reader: int, stream_fn, stream_attr, alloc, dtypes=None, torch=False) -> bool:
    """Arrays of exactly ``array_type`` are read by ``reader`` (``READ_ATTRS``: CuPy's fields;
    ``READ_TORCH``: a torch tensor's, its dtypes mapped to NumPy's by ``dtypes``); their calls
    launch on ``stream_fn()`` (``.stream_attr`` of it, unless None: an int, the stream's handle) and
    allocate with ``alloc(shape, numpy dtype)``.  ``torch``: this library's stream and allocator win
    in a call mixing libraries.  Whether the compiled path is there to take it."""
    module = load()
    if module is None:
        return False
    module.register_type(array_type, reader, int(torch), stream_fn, stream_attr, alloc, dtypes)
    return True


def context(launcher: Launcher | None, get_device):
    """The C context of a backend: its launcher and ``get_device()`` (the current device's id); None
    where the compiled path or the launcher is missing."""
    module = load()
    if module is None or launcher is None:
        return None
    return module.context(launcher.address, get_device, launcher.on_error), launcher


# ---- entries --------------------------------------------------------------------------------------------

#: blank operands for ``launch.pack``: every pointer 0, no host value (each call's are patched in)
_BLANK = [launch.Operand(None)] * 32


def describe(t, host, nin: int, extra: bytes = b"") -> tuple:
    """A launch template (``launch._Template``) as ``cuda_launch.cpp`` takes it: (family, name, grid,
    block, parameter bytes, pointer slots, value slots); ``host[i]``: whether operand i (0: the
    output) is a host value; ``extra``: bytes after the struct (a fused program's constants)."""
    params = launch.pack(t, _BLANK, nin) + extra
    ptrs = tuple((i, 8 * k, off) for k, (i, off) in enumerate(zip(t.args, t.offsets)) if not host[i])
    values = tuple((i, 8 * (nin + 1) + 16 * k) for k, i in enumerate(t.args) if host[i])
    return (t.family, t.name, t.grid, launch.BLOCK, params, ptrs, values)


def _slot(x, dt, module) -> int | None:
    """An input's slot: the loop dtype's number of a scalar converted by value (``dt``), SLOT_HOST0D for
    a 0-d NumPy array (its bytes), SLOT_DEVICE for a device array; None where C cannot take it (a
    scalar without a loop dtype: its value, not its type, is part of the call)."""
    if dt is not None:
        if isinstance(x, np.generic) or dt.num in compiled_calls.PYTHON_SCALAR_LOOPS and dt.isnative:
            return dt.num
        return None
    if type(x) is np.ndarray:
        return module.SLOT_HOST0D if x.ndim == 0 else None
    if isinstance(x, (bool, int, float, complex, np.generic)):
        return None
    return module.SLOT_DEVICE


def _alignment(x) -> int:
    item = getattr(getattr(x, "dtype", None), "itemsize", 0)
    return min(item, 16) or 1 if isinstance(getattr(x, "dtype", None), np.dtype) else 1


def add_entry(table, key: bytes, backend, mode: int, nops: int, slots, aligns, allocs, first_out: int, launches,
              keep) -> bool:
    """``table[key]``: an entry of ``backend`` (its context, the current device, the kernels loaded on
    it) running ``launches`` (``describe``'s tuples) on the call's ``nops`` operands and what it
    allocates (``allocs``)."""
    found = backend.compiled_context()
    if found is None:
        return False
    ctx, launcher = found
    device = backend.current_device()
    resolved = tuple((backend.function(family, name, device).ptr, grid, block, params, ptrs, values)
                     for family, name, grid, block, params, ptrs, values in launches)
    entry = _module.entry(ctx, mode, nops, first_out, device, tuple(slots), tuple(aligns), tuple(allocs), resolved,
                          (keep, launcher, [backend.function(f, n, device) for f, n, *_ in launches]))
    if len(table) >= compiled_calls.MAX_ENTRIES and key not in table:
        table.clear()
    table[key] = entry
    return True


class Layout(NamedTuple):
    """What the planner reads of an array (a temporary the call allocates, C-contiguous)."""
    shape: tuple
    strides: tuple
    itemsize: int
    dtype: np.dtype

    @classmethod
    def contiguous(cls, shape, dtype) -> Layout:
        dtype = np.dtype(dtype)
        return cls(tuple(shape), tuple(s * dtype.itemsize for s in c_strides(tuple(shape))), dtype.itemsize, dtype)


def _renumbered(launches, where: dict) -> list:
    """``describe``'s tuples with operand i read as operand ``where.get(i, i)``."""
    return [(*rest, tuple((where.get(i, i), off, add) for i, off, add in ptrs),
             tuple((where.get(i, i), off) for i, off in values)) for *rest, ptrs, values in launches]


def _cast_launches(src, dst, src_at: int, dst_at: int) -> list:
    """The launches converting array ``src`` (operand ``src_at``) into ``dst`` (operand ``dst_at``, of
    its shape), as ``CudaBackend.convert`` launches them: ``launch.templates_for('cast', ...)``."""
    found = launch.templates_for("cast", make_plan(src, out=dst), (np.dtype(src.dtype),), np.dtype(dst.dtype),
                                 (False,))
    return _renumbered([describe(t, (False, False), FAMILIES[t.family].nin) for t in found], {0: dst_at, 1: src_at})


class Program:
    """A prepared CUDA runner described to C: ``launches(host)`` gives its launches (``describe``'s
    tuples) for a pattern of host values (per operand, the output first).  Carried as a runner's
    ``native`` (in place of ``compiled_calls.Native``); ``compiled_calls.register`` calls
    ``register_call``."""

    def __init__(self, backend, launches):
        self.backend, self.launches = backend, launches

    def picked(self, picks) -> Program:
        """This program on a call whose operand k + 1 is argument ``picks[k]`` + 1 (a fused function's
        leaves, in their order, are arguments in another order or not all of them)."""
        where = {k + 1: i + 1 for k, i in enumerate(picks)}

        def launches(host):   # host: per call operand (the output, then every argument)
            return _renumbered(self.launches((host[0], *(host[where[k]] for k in sorted(where)))), where)
        return Program(self.backend, launches)

    def register_call(self, table, out, inputs, slots, out_dtype, out_shape, keep, cast_out=False) -> bool:
        """Add the entry of this call (mode 0: ``out`` operand 0, allocated where None).  An input the
        call converts first (``compiled_calls.Cast``) and a result converted into ``out=`` (``cast_out``)
        are temporaries after the call's operands, with the cast launches ``CudaBackend.convert`` makes
        (before the runner's, after them)."""
        module = load()
        if module is None or len(inputs) + 1 > module.MAX_OPS or self.backend.compiled_context() is None:
            return False   # (the context first: it registers the backend's array type, which the key reads)
        k = module.key(0, out, *inputs)
        if k is None or k in table:   # (there: C declined this call, e.g. for another current device)
            return k is not None
        casts = {i + 1: dt.dtype for i, dt in enumerate(slots) if type(dt) is compiled_calls.Cast}
        in_slots = [_slot(x, None if type(dt) is compiled_calls.Cast else dt, module) for x, dt in zip(inputs, slots)]
        if any(s is None for s in in_slots) or any(in_slots[i - 1] != module.SLOT_DEVICE for i in casts) or \
                cast_out and out is None or len(inputs) + 1 + len(casts) + cast_out > module.MAX_OPS:
            return False
        n, temps, where = len(inputs) + 1, [], {}
        for i, dt in casts.items():                       # each converted input: a temporary the runner reads
            where[i] = n + len(temps)
            temps.append(Layout.contiguous(inputs[i - 1].shape, dt))
        if cast_out:                                      # the runner's result: a temporary, then cast into out=
            where[0] = n + len(temps)
            temps.append(Layout.contiguous(out_shape, out_dtype))
        host = (False, *(s != module.SLOT_DEVICE for s in in_slots))
        launches = [*(c for i in casts for c in _cast_launches(inputs[i - 1], temps[where[i] - n], i, where[i])),
                    *_renumbered(self.launches(host), where),
                    *(_cast_launches(temps[-1], out, where[0], 0) if cast_out else ())]
        allocs = (((0, tuple(out_shape), np.dtype(out_dtype)),) if out is None else ()) + tuple(
            (n + j, t.shape, t.dtype) for j, t in enumerate(temps))
        slots_c = (module.SLOT_ALLOC if out is None else module.SLOT_DEVICE, *in_slots,
                   *(module.SLOT_ALLOC,) * len(temps))
        aligns = (1 if out is None else _alignment(out), *(_alignment(x) for x in inputs), *(1,) * len(temps))
        dtypes = tuple(x.dtype for x in (out, *inputs) if x is not None and hasattr(x, "dtype"))
        return add_entry(table, k, self.backend, 0, n, slots_c, aligns, allocs, 0, launches, (keep, dtypes))


def register_kernel(table, args, backend, slots, allocs, first_out: int, launches, keep) -> bool:
    """Add the entry of an ``ElementwiseKernel`` call on ``args`` (mode 1: ``allocs`` outputs after
    them, the result the tuple from ``first_out``); ``slots``: per argument None (a device array) or
    the dtype its scalar converts to."""
    module = load()
    if module is None or len(args) + len(allocs) > module.MAX_OPS or backend.compiled_context() is None:
        return False
    k = module.key(1, *args)
    if k is None or k in table:       # (there: C declined this call)
        return k is not None
    arg_slots = [_slot(x, dt, module) for x, dt in zip(args, slots)]
    if any(s is None for s in arg_slots):
        return False
    n = len(args)
    alloc_rows = tuple((n + j, tuple(shape), np.dtype(dt)) for j, (shape, dt) in enumerate(allocs))
    all_slots = (*arg_slots, *(module.SLOT_ALLOC,) * len(allocs))
    aligns = (*(_alignment(x) for x in args), *(1,) * len(allocs))
    dtypes = tuple(x.dtype for x in args if hasattr(x, "dtype"))
    return add_entry(table, k, backend, 1, n, all_slots, aligns, alloc_rows, first_out, launches, (keep, dtypes))
