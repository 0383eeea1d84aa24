"""A stand-in for the few torch calls gpubcast makes, over the virtual CUDA device (``virtual``), as
``virtual.VirtualCupy`` stands in for CuPy: torch CUDA tensors without torch or a GPU.

What gpubcast reads of a tensor (``cuda.torch_tensors``; the compiled launch path's READ_TORCH):
``dtype`` (this module's dtype objects, named as torch's), ``shape``, ``stride()`` (elements),
``data_ptr()``, ``get_device()``, ``requires_grad``, ``is_conj()``, ``is_neg()``, ``__dlpack__`` /
``__dlpack_device__`` and ``__cuda_array_interface__`` (DLPack is modelled through the array
interface: ``VirtualCupy.from_dlpack`` views the memory; ``__dlpack__`` raises torch's errors for a
tensor that requires grad or carries a conjugate bit, as torch does).  What it calls of the module:
``torch.cuda.current_device()``, ``torch._C._cuda_getCurrentRawStream(device)``,
``torch.empty(shape, dtype=, device="cuda")`` and ``torch.from_dlpack(cupy array)``.  Tests use
``torch.cuda.Stream()``, ``torch.cuda.stream(s)``, ``torch.cuda.current_stream()``,
``torch.as_tensor(numpy array, device="cuda")`` and ``t.cpu().numpy()``.

Streams: torch's current stream is torch's own (a stack here; the null stream by default), apart
from CuPy's; a ``torch.cuda.Stream`` is a stream of the virtual device, so launches on it are checked
and recorded (``VirtualCupy.launches``) like any.  ``allocations``: the (shape, dtype) of every
``torch.empty``.  What it does not model: autograd, torch's caching allocator and its stream
bookkeeping (``record_stream``), events, more than what is listed here.
"""

from __future__ import annotations

import contextlib
import types

import ml_dtypes
import numpy as np

from ..cuda import torch_tensors
from . import virtual


class dtype:  # torch's name
    """A torch dtype: its name and the NumPy dtype of its bytes."""

    def __init__(self, name: str):
        self.name = name
        self.numpy = np.dtype(ml_dtypes.bfloat16 if name == "bfloat16" else name)
        self.is_complex = self.numpy.kind == "c"

    def __repr__(self):
        return f"torch.{self.name}"


class Tensor:
    """A CUDA tensor over virtual device memory (``_a``: a virtual CuPy array viewing it)."""

    is_cuda = True
    _torch: VirtualTorch

    def __init__(self, a, requires_grad: bool = False, conj: bool = False):
        self._a, self.requires_grad, self._conj = a, requires_grad, conj

    dtype = property(lambda self: self._torch._dtypes[self._a.dtype])
    shape = property(lambda self: tuple(self._a.shape))
    ndim = property(lambda self: self._a.ndim)
    device = property(lambda self: types.SimpleNamespace(type="cuda", index=self.get_device()))

    def stride(self):
        return tuple(s // self._a.itemsize for s in self._a.strides)

    def data_ptr(self) -> int:
        return self._a.data.ptr

    def get_device(self) -> int:
        return self._a.data.device_id

    def is_conj(self) -> bool:
        return self._conj

    def is_neg(self) -> bool:
        return False

    def dim(self) -> int:
        return self._a.ndim

    @property
    def __cuda_array_interface__(self):
        if self.requires_grad:
            raise RuntimeError("Can't get __cuda_array_interface__ on Variable that requires grad. If gradients "
                               "aren't required, use var.detach() to get Variable that doesn't require grad.")
        return self._a.__cuda_array_interface__

    def __dlpack__(self, stream=None):
        if self.requires_grad:
            raise RuntimeError("Can't export tensors that require gradient, use tensor.detach()")
        if self._conj:
            raise RuntimeError("Can't export tensors with the conjugate bit set")
        return self._a.__cuda_array_interface__

    def __dlpack_device__(self):
        return (2, self.get_device())         # kDLCUDA

    def cpu(self):
        """A host copy (``.numpy()`` of it): a device-to-host copy, counted by the virtual device."""
        return types.SimpleNamespace(numpy=self._a.get)

    def __getitem__(self, key):
        return type(self)(self._a[key])

    def t(self):
        return type(self)(self._a.T)

    def __repr__(self):
        return f"virtual torch tensor({self._a.get()!r}, device='cuda:{self.get_device()}')"


class Stream:
    """``torch.cuda.Stream``: a stream of the virtual device (``cuda_stream``: its handle)."""

    def __init__(self, stream):
        self._stream, self.cuda_stream = stream, stream.ptr

    def __eq__(self, other):
        return isinstance(other, Stream) and other.cuda_stream == self.cuda_stream

    __hash__ = object.__hash__


class VirtualTorch(types.ModuleType):
    """Stands in for ``torch`` (module docstring) on the virtual device ``cp``."""

    def __init__(self, cp: virtual.VirtualCupy):
        super().__init__("torch")
        self._cp = cp
        self.Tensor = type("Tensor", (Tensor,), {"_torch": self, "__module__": "torch"})
        self._dtypes = {}
        for name in torch_tensors.DTYPE_NAMES:
            t = dtype(name)
            setattr(self, name, t)
            self._dtypes[t.numpy] = t
        self._stack: list = []
        self.allocations: list = []
        self.cuda = types.SimpleNamespace(
            current_device=lambda: cp._current_device, is_available=lambda: True, Stream=self._new_stream,
            current_stream=lambda device=None: self._stack[-1] if self._stack else Stream(cp._null),
            stream=self._stream)
        self._C = types.SimpleNamespace(
            _cuda_getCurrentRawStream=lambda device: self._stack[-1].cuda_stream if self._stack else 0)

    def _new_stream(self, device=None, priority=0):
        return Stream(self._cp.cuda.Stream())

    @contextlib.contextmanager
    def _stream(self, stream: Stream):
        self._stack.append(stream)
        try:
            yield stream
        finally:
            self._stack.pop()

    def empty(self, shape, dtype=None, device=None):
        shape = (shape,) if isinstance(shape, int) else tuple(shape)
        self.allocations.append((shape, dtype))
        return self.Tensor(self._cp.empty(shape, dtype.numpy))

    def from_dlpack(self, x):
        """A tensor viewing a virtual CuPy array's memory (DLPack's import, without a copy)."""
        if not isinstance(x, self._cp.ndarray):
            raise TypeError(f"the virtual torch imports DLPack from virtual CuPy arrays only, not {type(x).__name__}")
        return self.Tensor(x)

    def as_tensor(self, host, dtype=None, device="cuda", requires_grad=False):
        """A device copy of NumPy array ``host``."""
        return self.Tensor(self._cp.asarray(np.asarray(host)), requires_grad=requires_grad)


@contextlib.contextmanager
def installed(cp: virtual.VirtualCupy):
    """A ``VirtualTorch`` on ``cp`` whose tensors gpubcast recognises, for the block."""
    torch = VirtualTorch(cp)
    torch_tensors.register_type(torch.Tensor, torch)
    try:
        yield torch
    finally:
        torch_tensors.forget_type(torch.Tensor)
