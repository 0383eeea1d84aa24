"""torch CUDA tensors in gpubcast calls: computed on torch's current stream, returned as torch tensors.

A call with a torch CUDA tensor among its operands (or as ``out=``) runs on CuPy views of the
tensors (DLPack, no copy) inside ``cupy.cuda.ExternalStream`` of torch's current stream, so its
launches (and the allocation of its result) are ordered with the torch work around it: a torch
user on a side stream (``with torch.cuda.stream(s):``) never races.  The result comes back as a
torch tensor (DLPack, no copy; a given ``out=`` is returned as it was given).  Repeated calls take
the compiled launch path, which reads torch tensors by their own fields (``register``: torch's
stream, torch's allocator) -- the C entry of a torch call is the one its CuPy views registered.

torch is never imported here: a tensor is recognised by its type, ``torch.Tensor`` of an already
imported ``torch`` (or a type a stand-in registers, ``testing.virtual_torch``), so gpubcast runs
where torch is absent.  A tensor that requires grad, or a complex one with a lazy conjugate or
negation, is refused by DLPack (torch's error) on the Python path and never read by the C path.
"""

from __future__ import annotations

import sys

import numpy as np

from . import compiled_launch

#: tensor type -> its torch module (``torch.Tensor`` once met; stand-ins register themselves)
_MODULES: dict = {}
#: the torch modules whose tensors the compiled launch path reads (``register``)
_COMPILED: set = set()
#: torch dtype names whose NumPy dtype has the same name (bfloat16: ml_dtypes', as gpubcast.bfloat16)
DTYPE_NAMES = ("bool", "uint8", "int8", "int16", "int32", "int64", "uint16", "uint32", "uint64", "float16",
               "float32", "float64", "complex64", "complex128", "bfloat16")


def register_type(tensor_type, torch) -> None:
    """Tensors of ``tensor_type`` (exactly) belong to ``torch`` (a module with torch's API)."""
    _MODULES[tensor_type] = torch


def forget_type(tensor_type) -> None:
    """Undo ``register_type`` (a stand-in's, when it is done)."""
    torch = _MODULES.pop(tensor_type, None)
    if torch is not None and torch not in _MODULES.values():
        _COMPILED.discard(torch)


def torch_of(arrays) -> object | None:
    """The torch module of the first torch CUDA tensor among ``arrays`` (None, arrays, tuples of
    arrays); None where there is none."""
    for x in arrays:
        if type(x) is tuple:
            found = torch_of(x)
            if found is not None:
                return found
            continue
        torch = _MODULES.get(type(x))
        if torch is not None:
            if x.is_cuda:
                return torch
            continue
        real = sys.modules.get("torch")
        if real is not None and isinstance(x, getattr(real, "Tensor", ())):
            _MODULES[type(x)] = real
            if x.is_cuda:
                return real
    return None


def numpy_dtypes(torch) -> dict:
    """torch dtype -> NumPy dtype, for the dtypes both have."""
    import ml_dtypes
    found = {}
    for name in DTYPE_NAMES:
        t = getattr(torch, name, None)
        if t is not None:
            found[t] = np.dtype(ml_dtypes.bfloat16 if name == "bfloat16" else name)
    return found


def current_stream(torch) -> int:
    """The handle of torch's current stream on its current device (torch's raw-stream query where it
    has one, as its compiler's generated code asks; else its public ``current_stream()``)."""
    raw = getattr(torch._C, "_cuda_getCurrentRawStream", None)
    if raw is not None:
        return raw(torch.cuda.current_device())
    return torch.cuda.current_stream().cuda_stream


def register(torch, backend) -> None:
    """Have the compiled launch path read ``torch``'s tensors (once per module; where the backend
    has the path): launches on torch's current stream, results from ``torch.empty``."""
    if torch in _COMPILED or backend.compiled_context() is None:
        return
    dtypes = numpy_dtypes(torch)
    to_torch = {v: k for k, v in dtypes.items()}

    def alloc(shape, dtype):
        return torch.empty(shape, dtype=to_torch[dtype], device="cuda")

    for tensor_type, module in list(_MODULES.items()):
        if module is torch:
            compiled_launch.register_library(tensor_type, compiled_launch.READ_TORCH, lambda: current_stream(torch),
                                             None, alloc, dtypes, torch=True)
    _COMPILED.add(torch)


def through_torch(torch, backend, run, arrays, out):
    """``run(arrays, out)`` on CuPy views of the torch tensors among ``arrays`` and ``out`` (None, an
    array, or a tuple of them), on torch's current stream; its result (an array or a tuple) as torch
    tensors, a given ``out=`` as it was given."""
    xp = backend.xp
    register(torch, backend)
    given: dict = {}                  # id of a view -> the tensor it views (alive while the call is)

    def view(x):
        if type(x) is tuple:
            return tuple(view(y) for y in x)
        if torch_of((x,)) is not torch:
            return x
        v = xp.from_dlpack(x)
        given[id(v)] = x
        return v

    def back(r):
        if type(r) is tuple:
            return tuple(back(y) for y in r)
        if id(r) in given:
            return given[id(r)]
        return torch.from_dlpack(r) if isinstance(r, xp.ndarray) else r

    with xp.cuda.ExternalStream(current_stream(torch)):
        views, out_view = [view(x) for x in arrays], view(out)
        return back(run(views, out_view))
