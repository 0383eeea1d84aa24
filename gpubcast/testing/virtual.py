"""A virtual CUDA device for tests: the real CUDA backend path, kernels run by the host emulation.

``installed()`` registers a fresh ``gpubcast.backends.cuda.CudaBackend`` built on a stand-in for the
few CuPy calls gpubcast makes (``gpubcast.backends.registered``: gpubcast reaches CuPy through that
backend's ``xp``; ``sys.modules["cupy"]`` stays the real CuPy, whose NVRTC compiles), and stands in
for ``compiler.cached_kernel`` (to know which name expression each lowered name came from; by
default with fast PTX, ``VirtualCupy``'s ``kernels``).
Everything else is gpubcast's own code: ``backends/cuda.py`` -> ``cuda/launch.py`` -> the kernel
call ``Function.__call__(grid, block, args)`` -- or, for a call the compiled launch path answers
(``gpubcast.cuda.compiled_launch``), its C code -> ``launcher``, a C function with
``cuLaunchKernel``'s signature that finds the kernel by its handle (``Function.ptr``) and the stream
by its handle, and takes the argument bytes from ``extra`` (buffer and size) -- which here

* marshals ``args`` as CuPy 14 does (``cupy/cuda/function.pyx`` ``_pointer``): a CuPy array,
  ``MemoryPointer`` or ``None`` is an 8-byte pointer; a NumPy array of size 1 is passed by value,
  its own bytes (any other NumPy array is a TypeError); a NumPy scalar is its own bytes; a Python
  bool / int / float / complex is a bool / int64 (uint64 from 2**63) / double / complex128;
* checks them against the kernel's parameters in the binary the backend loaded, as the driver reads
  them (a CUBIN's ``.nv.info.<kernel>`` parameter records, a PTX ``.entry``'s ``.param`` list):
  count, and each argument's byte size against the parameter's (a mismatch makes a GPU read a
  wrong or garbage value); the host build's struct size must equal the parameter's too;
* checks the launch: ``get_function`` finds the lowered name among the loaded CUBIN's (ELF
  symbol table) or PTX's entries, and it is NVRTC's lowered name of a name expression; block
  size within ``.maxntid`` and 1024, grid within CUDA's limits, the stream is the current one and
  not a stream other than the capturing one while a capture runs;
* runs the launch with the host-built kernel of the same instantiation
  (``gpubcast.testing.emulate``), blocks and threads in a shuffled order, every global access checked
  (``kernels/access.cuh`` ``GB_PTR``): inside the allocation its operand pointer points into and
  aligned to its type; a faulting access raises ``VirtualFault`` (on a GPU: an illegal or
  misaligned address error), as does barrier divergence or a shared-memory race.

Device memory is NumPy memory: allocations are 256-byte aligned, fresh ones filled with a
poison byte (0xA5, so unwritten output shows), and known to the device by address range.
Barriers and shared memory are checked as ``gpubcast.testing.emulate`` says (divergence, races on
shared memory accessed through ``GB_SMEM``).  What it cannot see: warps, memory ordering, races on
global memory, NVRTC's optimiser (the host build is g++ -O0), real timing, and driver or ABI issues
beyond parameter sizes.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import itertools
import math
import re
import struct
import types
import weakref

import ml_dtypes
import numpy as np

from ..cuda import catalog, compiler, sources
from . import emulate

ALIGN = 256                           # cudaMalloc's alignment (CuPy's pool: 512)
POISON = 0xA5                         # fresh allocations (cupy.empty) hold this byte
MAX_THREADS = 1024
MAX_BLOCK = (1024, 1024, 64)
MAX_GRID = (2**31 - 1, 65535, 65535)
MAX_SHARED = 48 * 1024


class VirtualCudaError(RuntimeError):
    """What the driver or the GPU would report (or silently mis-run) for this call."""


class VirtualFault(VirtualCudaError):
    """A kernel accessed memory a GPU would fault on (illegal or misaligned address)."""


# ---- memory ------------------------------------------------------------------------------------

class Allocation:
    """``nbytes`` of device memory: a 256-byte aligned NumPy buffer."""

    def __init__(self, device: VirtualCupy, nbytes: int, fill: int | None = POISON):
        self.nbytes = int(nbytes)
        self.device_id = device._current_device
        raw = np.empty(self.nbytes + ALIGN, np.uint8)
        start = (-raw.ctypes.data) % ALIGN
        self.buf = raw[start:start + self.nbytes]
        if fill is not None:
            self.buf.fill(fill)
        self.ptr = self.buf.ctypes.data if self.nbytes else 0
        if self.nbytes:
            device._allocations[self.ptr] = weakref.ref(self)
            weakref.finalize(self, device._allocations.pop, self.ptr, None)


class MemoryPointer:
    def __init__(self, mem: Allocation, offset: int = 0):
        self.mem, self.offset = mem, int(offset)
        self.ptr = mem.ptr + self.offset if mem.nbytes else 0
        self.device_id = mem.device_id

    def __add__(self, n):
        return MemoryPointer(self.mem, self.offset + int(n))

    def __int__(self):
        return self.ptr


#: the dtypes whose subnormals CuPy's own kernels flush (``_flushed``)
_FLUSHED = (np.dtype(np.float32), np.dtype(np.complex64), np.dtype(ml_dtypes.bfloat16))


def _flushed(a):
    """``a``'s values as CuPy's own kernels (``astype``, ``copyto`` across dtypes) read them: CuPy
    compiles with -ftz=true, so a float32 subnormal (a bfloat16 or complex64 one too: computed in
    float32) reads as a zero of its sign.  Seen on an H100, 2026-11-27: ``astype(float64)`` of 1e-40
    gave 0.0.  gpubcast must convert with its own kernels; this makes the virtual device show it."""
    a = np.asarray(a)
    if a.dtype not in _FLUSHED:
        return a
    parts = np.array(a, copy=True, order="C").reshape(-1)
    parts = parts.view(np.float32) if a.dtype.kind == "c" else parts
    wide = parts.astype(np.float32)
    sub = (wide != 0) & (np.abs(wide) < np.finfo(np.float32).tiny)
    parts[sub] = np.copysign(np.float32(0), wide[sub]).astype(parts.dtype)
    return parts.view(a.dtype).reshape(a.shape)


def _host(x):
    """``x`` with virtual arrays replaced by their NumPy views (recursively in tuples/lists)."""
    if isinstance(x, ndarray):
        return x._a
    if isinstance(x, (tuple, list)):
        return type(x)(_host(y) for y in x)
    return x


class ndarray:  # CuPy's name (the virtual device stands in for cupy.ndarray)
    """A CuPy-like array over virtual device memory (a NumPy view into one ``Allocation``)."""

    __array_priority__ = 100
    _cp: VirtualCupy

    def __init__(self, shape, dtype=float, memptr: MemoryPointer | None = None, strides=None, order="C"):
        shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
        dtype = np.dtype(dtype)
        if memptr is None:
            memptr = MemoryPointer(Allocation(self._cp, math.prod(shape) * dtype.itemsize))
        self._mem = memptr.mem
        self._a = np.ndarray(shape, dtype, buffer=memptr.mem.buf, offset=memptr.offset, strides=strides,
                             order=order)

    @classmethod
    def _view(cls, mem: Allocation, a: np.ndarray) -> ndarray:
        x = cls.__new__(cls)
        x._mem, x._a = mem, a
        return x

    def _wrap(self, r):
        """A NumPy result as a virtual array: a view of this array's memory stays one, else a copy."""
        if isinstance(r, np.ndarray):
            if self._mem.nbytes and np.shares_memory(r, self._mem.buf):
                return type(self)._view(self._mem, r)
            return self._cp.asarray(r)
        if isinstance(r, np.generic):
            return self._cp.asarray(np.asarray(r))
        return r

    # attributes
    shape = property(lambda self: self._a.shape)
    dtype = property(lambda self: self._a.dtype)
    strides = property(lambda self: self._a.strides)
    ndim = property(lambda self: self._a.ndim)
    size = property(lambda self: self._a.size)
    itemsize = property(lambda self: self._a.itemsize)
    nbytes = property(lambda self: self._a.nbytes)
    flags = property(lambda self: self._a.flags)
    T = property(lambda self: type(self)._view(self._mem, self._a.T))

    @property
    def data(self) -> MemoryPointer:
        off = self._a.__array_interface__["data"][0] - self._mem.ptr if self._mem.nbytes else 0
        return MemoryPointer(self._mem, off)

    @property
    def device(self):
        return self._cp.cuda.Device(self._mem.device_id)

    @property
    def __cuda_array_interface__(self):
        a = self._a
        return {"shape": a.shape, "typestr": a.dtype.str, "descr": a.dtype.descr, "version": 3,
                "data": (self.data.ptr, False), "stream": None,
                "strides": None if a.flags.c_contiguous else a.strides}

    def __array__(self, *args, **kwargs):
        raise TypeError("Implicit conversion to a NumPy array is not allowed. Please use `.get()` to "
                        "construct a NumPy array explicitly.")

    def get(self, stream=None, order="C", out=None):
        self._cp.host_syncs += 1
        return np.array(self._a, order=order)

    def __repr__(self):
        return f"virtual cupy {self._a!r}"

    def __len__(self):
        return len(self._a)

    def __iter__(self):
        return (self[i] for i in range(len(self)))

    def __bool__(self):
        self._cp.host_syncs += 1
        return bool(self._a)

    def __int__(self):
        self._cp.host_syncs += 1
        return int(self._a)

    def __float__(self):
        self._cp.host_syncs += 1
        return float(self._a)

    def __getitem__(self, key):
        return self._wrap(self._a[_host(key)])

    def __setitem__(self, key, value):
        self._a[_host(key)] = _host(value)

    def astype(self, dtype, order="K", casting=None, subok=None, copy=True):
        if self.dtype == np.dtype(dtype):
            return self if not copy else self._cp.asarray(self._a.astype(dtype, order=order))
        return self._cp.asarray(_flushed(self._a).astype(dtype, order=order))

    def copy(self, order="C"):
        return self._cp.asarray(self._a.copy(order=order))

    def reshape(self, *shape, order="C"):
        return self._wrap(self._a.reshape(*shape, order=order))

    def fill(self, value):
        self._a.fill(value)

    def __getattr__(self, name):
        """NumPy's method of the same name, on the host values (all, any, sum, ravel, ...)."""
        if name.startswith("_"):
            raise AttributeError(name)
        attr = getattr(self._a, name)
        if not callable(attr):
            return self._wrap(attr)
        return lambda *a, **k: self._wrap(attr(*_host(a), **{n: _host(v) for n, v in k.items()}))


def _binary_dunder(name):
    def method(self, other):
        return self._wrap(getattr(self._a, name)(_host(other)))
    return method


for _name in ("add", "sub", "mul", "truediv", "floordiv", "mod", "pow", "and", "or", "xor", "lshift",
              "rshift", "eq", "ne", "lt", "le", "gt", "ge"):
    for _n in (f"__{_name}__", f"__r{_name}__"):
        if hasattr(np.ndarray, _n):
            setattr(ndarray, _n, _binary_dunder(_n))
for _n in ("__neg__", "__pos__", "__abs__", "__invert__"):
    setattr(ndarray, _n, lambda self, _n=_n: self._wrap(getattr(self._a, _n)()))
ndarray.__hash__ = None


# ---- kernels: modules, functions, launches ------------------------------------------------------

def _elf_sections(binary: bytes) -> tuple[list[tuple], int]:
    """The section headers of an ELF64 little-endian file (a CUBIN) and the index of the one
    holding the section names."""
    if binary[:4] != b"\x7fELF" or binary[4] != 2 or binary[5] != 1:
        raise VirtualCudaError("CUDA_ERROR_INVALID_IMAGE: not an ELF64 little-endian CUBIN")
    shoff, = struct.unpack_from("<Q", binary, 0x28)
    shentsize, shnum, shstrndx = struct.unpack_from("<HHH", binary, 0x3A)
    return [struct.unpack_from("<IIQQQQIIQQ", binary, shoff + i * shentsize) for i in range(shnum)], shstrndx


def _cstring(binary: bytes, at: int) -> str:
    return binary[at:binary.index(b"\0", at)].decode()


def elf_functions(binary: bytes) -> set[str]:
    """Names of the function symbols of an ELF64 little-endian file (a CUBIN)."""
    sections, _ = _elf_sections(binary)
    names = set()
    for sh in sections:
        if sh[1] != 2:                                  # SHT_SYMTAB
            continue
        strtab = sections[sh[6]]
        for off in range(sh[4], sh[4] + sh[5], sh[9]):
            st_name, st_info = struct.unpack_from("<IB", binary, off)
            if st_info & 0xF == 2:                      # STT_FUNC
                names.add(_cstring(binary, strtab[4] + st_name))
    return names


# CUBIN kernel attributes (section ``.nv.info.<kernel>``): records of a format byte, an attribute byte
# and a value; 4-byte headers, an EIFMT_SVAL's value sized by the header's last 2 bytes
_EIFMT_SVAL = 4
_EIATTR_KPARAM_INFO = 0x17       # one per parameter: index u32, ordinal u16, offset u16, flags u32 (size: bits 18-31)
_EIATTR_MAX_THREADS = 0x05       # __launch_bounds__: the block's dims, 3 x u32


def cubin_entries(binary: bytes) -> dict:
    """kernel name -> {"params": [byte size of each parameter, in order], "maxntid": threads or None}
    of a CUBIN, as the driver reads them (its ``.nv.info.<kernel>`` sections)."""
    sections, shstrndx = _elf_sections(binary)
    names_at = sections[shstrndx][4]
    out = {}
    for sh in sections:
        section = _cstring(binary, names_at + sh[0])
        if not section.startswith(".nv.info."):
            continue
        data = binary[sh[4]:sh[4] + sh[5]]
        params, maxntid, i = {}, None, 0
        while i + 4 <= len(data):
            fmt, attr, size = data[i], data[i + 1], struct.unpack_from("<H", data, i + 2)[0]
            value = data[i + 4:i + 4 + size] if fmt == _EIFMT_SVAL else b""
            if attr == _EIATTR_KPARAM_INFO and fmt == _EIFMT_SVAL:
                _, ordinal, _, flags = struct.unpack_from("<IHHI", value)
                params[ordinal] = flags >> 18
            elif attr == _EIATTR_MAX_THREADS and fmt == _EIFMT_SVAL:
                maxntid = math.prod(struct.unpack_from("<III", value))
            i += 4 + (size if fmt == _EIFMT_SVAL else 0)
        out[section[len(".nv.info."):]] = {"params": [params[k] for k in sorted(params)], "maxntid": maxntid}
    return out


_ENTRY = re.compile(r"\.entry\s+([\w$]+)\s*\(([^)]*)\)\s*((?:\.\w+[^\n{]*\n\s*)*)\{")
_PARAM = re.compile(r"\.param\s+(?:\.align\s+\d+\s+)?\.[busf](\d+)\s+[\w$]+(?:\[(\d+)\])?")


def ptx_entries(ptx: str) -> dict:
    """entry name -> {"params": [byte size of each parameter], "maxntid": threads or None} of a PTX module."""
    out = {}
    for m in _ENTRY.finditer(ptx):
        params = [int(bits) // 8 * (int(count) if count else 1) for bits, count in _PARAM.findall(m.group(2))]
        ntid = re.search(r"\.maxntid\s+([\d,\s]+)", m.group(3))
        maxntid = math.prod(int(v) for v in ntid.group(1).split(",") if v.strip()) if ntid else None
        out[m.group(1)] = {"params": params, "maxntid": maxntid}
    return out


@functools.lru_cache(maxsize=32)   # a fast program's bytes come as one object: hashed once, found by identity
def _module_entries(binary: bytes) -> dict:
    """``ptx_entries`` of NUL-terminated PTX ``binary`` (read-only: modules share it)."""
    return ptx_entries(binary[:-1].decode())


@functools.cache
def emulator(family: str) -> emulate.Emulator:
    """Host builds of every instantiation of ``family`` (catalog.every_instantiation; a generated
    family's own name expressions, gpubcast.ElementwiseKernel)."""
    if sources.generated_names(family) is not None:
        return emulate.generated_emulator(family)
    return emulate.Emulator(catalog.every_instantiation()[family])


#: kernels outside their family's build (store-path variants, catalog.Path): name -> its host build, and
#: name -> the names ``prepare`` grouped it with (one fast NVRTC program, one host library, per group)
_EXTRA_EMULATORS: dict = {}
_EXTRA_PROGRAMS: dict = {}


def prepare(kernels) -> None:
    """Make the virtual device able to run ``kernels`` ((family, name expression) pairs) that lie outside
    their family's build (``emulator``): each family's are compiled as one fast NVRTC program and built
    as one host library, now, so that a run of many variants pays one build, not one each."""
    by_family: dict = {}
    for family, name in kernels:
        if name not in _EXTRA_EMULATORS and name not in by_family.setdefault(family, []):
            by_family[family].append(name)
    for family, names in by_family.items():
        names = [n for n in names if n not in emulator(family).names()]
        if names:
            emu = emulate.Emulator([(family, n) for n in names])
            _EXTRA_PROGRAMS.update({n: tuple(names) for n in names})
            _EXTRA_EMULATORS.update({n: emu for n in names})


def emulator_of(family: str, name: str) -> emulate.Emulator:
    """The host build running kernel ``name``: its family's, or (a kernel outside it) ``prepare``'s, built
    on first use where none was prepared."""
    if name not in _EXTRA_EMULATORS and name not in emulator(family).names():
        prepare([(family, name)])
    return _EXTRA_EMULATORS.get(name) or emulator(family)


def marshal(x) -> bytes:
    """The bytes CuPy 14's ``Function.__call__`` hands the driver for kernel argument ``x``."""
    if x is None:
        return bytes(8)
    if isinstance(x, ndarray):
        return struct.pack("<Q", x.data.ptr)
    if isinstance(x, MemoryPointer):
        return struct.pack("<Q", x.ptr)
    if isinstance(x, np.ndarray):
        if x.size != 1:
            raise TypeError(f"You are trying to pass a numpy.ndarray of shape {x.shape} as a kernel "
                            f"parameter. Only numpy.ndarrays of size one can be passed by value.")
        return x.tobytes()
    if type(x) is bool:
        return np.bool_(x).tobytes()
    if type(x) is int:
        return (np.uint64(x) if x >= 2**63 else np.int64(x)).tobytes()    # OverflowError past uint64
    if type(x) is float:
        return np.float64(x).tobytes()
    if type(x) is complex:
        return np.complex128(x).tobytes()
    if isinstance(x, np.generic):
        return x.tobytes()
    raise TypeError(f"Unsupported type {type(x)}")


class Module:
    def __init__(self, cp: VirtualCupy):
        self._cp, self.symbols, self.entries, self.kind = cp, None, {}, None

    def load(self, binary):
        if not isinstance(binary, bytes):
            raise TypeError(f"Argument 'cubin' has incorrect type (expected bytes, got {type(binary).__name__})")
        if binary[:4] == b"\x7fELF":
            self.kind, self.entries = "cubin", cubin_entries(binary)
            self.symbols = elf_functions(binary)
        else:
            if not binary.endswith(b"\0"):
                raise VirtualCudaError("CUDA_ERROR_INVALID_PTX: PTX handed to the driver must end with a NUL")
            self.kind, self.entries = "ptx", _module_entries(binary)
            self.symbols = set(self.entries)

    def get_function(self, name):
        name = name.decode() if isinstance(name, bytes) else name
        if self.symbols is None or name not in self.symbols:
            raise VirtualCudaError(f"CUDA_ERROR_NOT_FOUND: named symbol not found: {name}")
        return Function(self, name)


_handles = itertools.count(0x7F0000000000, 0x100)


class Function:
    def __init__(self, module: Module, lowered: str):
        self.module, self.lowered = module, lowered
        cp = module._cp
        try:
            self.family, self.name = cp._names[lowered]
        except KeyError:
            raise VirtualCudaError(f"{lowered}: not a kernel compiled through gpubcast.cuda.compiler") from None
        self.entry = module.entries.get(lowered)
        if self.entry is None:
            raise VirtualCudaError(f"{self.name} ({lowered}): the {module.kind} has no parameter list for it")
        self.ptr = next(_handles)                     # CuPy's Function.ptr: the CUfunction handle
        cp._functions[self.ptr] = self

    def __call__(self, grid, block, args, shared_mem=0, stream=None, enable_cooperative_groups=False):
        if not isinstance(grid, tuple) or not isinstance(block, tuple):
            raise TypeError("Function.__call__: grid and block must be tuples")
        cp = self.module._cp
        self.launch(grid, block, [marshal(a) for a in args], shared_mem, stream or cp.cuda.get_current_stream())

    def launch(self, grid, block, data: list, shared_mem, stream):
        """One launch of argument bytes ``data`` (one entry per parameter) on ``stream``, checked as
        the driver checks it, then run (or captured)."""
        grid = tuple(max(1, int(v)) for v in (grid + (1, 1))[:3])
        block = tuple(max(1, int(v)) for v in (block + (1, 1))[:3])
        cp = self.module._cp
        params = self.entry["params"]
        where = f"{self.name} ({self.lowered})"
        if len(data) != len(params):
            raise VirtualCudaError(f"{where}: {len(data)} arguments for {len(params)} parameters")
        for k, (got, size) in enumerate(zip(data, params)):
            if len(got) != size:
                raise VirtualCudaError(f"{where}: argument {k} is {len(got)} bytes, its parameter {size}: "
                                       f"the GPU would read {'past the argument' if len(got) < size else 'part of it'}")
        threads = math.prod(block)
        limit = min(MAX_THREADS, self.entry["maxntid"] or MAX_THREADS)
        if threads > limit or any(b > m for b, m in zip(block, MAX_BLOCK)):
            raise VirtualCudaError(f"{where}: CUDA_ERROR_INVALID_VALUE: block {block} (the kernel takes at "
                                   f"most {limit} threads)")
        if any(g > m for g, m in zip(grid, MAX_GRID)) or shared_mem > MAX_SHARED:
            raise VirtualCudaError(f"{where}: CUDA_ERROR_INVALID_VALUE: grid {grid}, {shared_mem} bytes shared")
        if grid[1:] != (1, 1) or block[1:] != (1, 1):
            raise VirtualCudaError(f"{where}: the virtual device runs 1-D launches only ({grid}, {block})")
        capturing = [s for s in cp._streams if s._capture is not None]
        if capturing and capturing[0] is not stream:
            raise VirtualCudaError(f"{where}: cudaErrorStreamCaptureImplicit: a launch on another stream "
                                   f"while a stream is capturing")
        run = functools.partial(cp._run, self, b"".join(data), grid[0], block[0], stream)
        if stream._capture is not None:
            stream._capture.append(run)
        else:
            run()


#: ``cuLaunchKernel``'s C signature (the compiled launch path calls the virtual device through it)
LAUNCH_KERNEL = ctypes.CFUNCTYPE(ctypes.c_int, ctypes.c_void_p, *(ctypes.c_uint,) * 7, ctypes.c_void_p,
                                 ctypes.POINTER(ctypes.c_void_p), ctypes.POINTER(ctypes.c_void_p))
_BUFFER_POINTER, _BUFFER_SIZE = 1, 2          # CU_LAUNCH_PARAM_BUFFER_POINTER / _SIZE
CUDA_ERROR_LAUNCH_FAILED = 719                # what the launcher returns when a launch raised


class Stream:
    _ids = itertools.count(0x1000, 0x10)

    def __init__(self, cp: VirtualCupy, null=False, non_blocking=False, ptr=None):
        self._cp, self.ptr = cp, 0 if null else next(Stream._ids)
        self._capture = None
        cp._streams.append(self)

    def __enter__(self):
        self._cp._stream_stack.append(self)
        return self

    def __exit__(self, *exc):
        self._cp._stream_stack.pop()

    def use(self):
        self._cp._stream_stack[:] = [self]
        return self

    def synchronize(self):
        self._cp.host_syncs += 1

    def begin_capture(self, mode=None):
        self._capture = []

    def is_capturing(self):
        return self._capture is not None

    def end_capture(self):
        graph, self._capture = Graph(self._capture), None
        return graph


class Graph:
    def __init__(self, runs):
        self._runs = runs

    def launch(self, stream=None):
        for run in self._runs:
            run()


class Device:
    def __init__(self, cp: VirtualCupy, device=None):
        self._cp = cp
        self.id = cp._current_device if device is None else int(device)
        if not 0 <= self.id < cp.device_count:
            raise VirtualCudaError(f"cudaErrorInvalidDevice: device {self.id} (of {cp.device_count})")
        self._previous = []

    compute_capability = property(lambda self: self._cp.compute_capability)

    def __enter__(self):
        self._previous.append(self._cp._current_device)
        self._cp._current_device = self.id
        return self

    def __exit__(self, *exc):
        self._cp._current_device = self._previous.pop()

    def use(self):
        self._cp._current_device = self.id

    def synchronize(self):
        self._cp.host_syncs += 1

    def __eq__(self, other):
        return isinstance(other, Device) and other.id == self.id

    __hash__ = object.__hash__


# ---- the module ---------------------------------------------------------------------------------

class VirtualCupy(types.ModuleType):
    """Stands in for ``cupy``: arrays, devices, streams, modules; kernels run on the host.

    ``compute_capability``: what ``Device().compute_capability`` says ("90": CUBINs for sm_90; a
    capability NVRTC does not know makes the backend load PTX).  ``seed``: the block and thread
    order of each launch.  ``launches``: (name expression, grid, block, stream ptr, argument bytes)
    of every kernel run, for tests.  ``host_syncs``: how many device-to-host copies (``get``,
    ``asnumpy``, ``bool``/``int``/``float`` of an array) and synchronisations (of a stream or the
    device) were asked for.  ``launcher``: the compiled launch path's way in (``cuLaunchKernel``'s
    ABI).  ``kernels``: "runtime", the backend's own
    ``compiler.cached_kernel`` (a CUBIN compiled with the runtime options, one NVRTC program per
    kernel, as on a GPU); "fast", ``fast_kernel`` (PTX of the catalog's cached fast program holding the kernel, the one
    ``kernels --check --fast`` compiles; the parameters and names it checks are the same in both).
    """

    def __init__(self, compute_capability: str = "90", device_count: int = 1, seed: int = 0,
                 kernels: str = "fast"):
        super().__init__("cupy")
        if kernels not in ("fast", "runtime"):
            raise ValueError(f"kernels: 'fast' or 'runtime', not {kernels!r}")
        self.kernels = kernels
        self.__file__ = __file__
        self.compute_capability, self.device_count = str(compute_capability), device_count
        self._allocations: dict = {}
        self._current_device = 0
        self._names: dict = {}                       # lowered name -> (family, name expression)
        self._rng = np.random.default_rng(seed)
        self.launches: list = []
        self._streams: list = []
        self._null = Stream(self, null=True)
        self._stream_stack: list = []
        self.host_syncs = 0                          # device-to-host copies and synchronisations asked for
        self._functions: weakref.WeakValueDictionary = weakref.WeakValueDictionary()   # handle -> Function
        self._launch_errors: list = []
        self._next_status = 0
        self._launch_kernel_c = LAUNCH_KERNEL(self._launch_kernel)
        self.ndarray = type("ndarray", (ndarray,), {"_cp": self, "__module__": "cupy"})
        from cupy.cuda import nvrtc                  # the real one: gpubcast.cuda.compiler uses it
        function = types.SimpleNamespace(Module=lambda: Module(self), Function=Function)
        self.cuda = types.SimpleNamespace(
            Device=lambda device=None: Device(self, device), Stream=lambda **kw: Stream(self, **kw),
            function=function, nvrtc=nvrtc, is_available=lambda: True,
            get_current_stream=lambda device_id=-1: self._stream_stack[-1] if self._stream_stack else self._null,
            ExternalStream=lambda ptr, device_id=-1: self._stream_of(int(ptr)),
            runtime=types.SimpleNamespace(getDeviceCount=lambda: device_count, getDevice=lambda: self._current_device),
            MemoryPointer=MemoryPointer)
        self.lib = types.SimpleNamespace(stride_tricks=types.SimpleNamespace(as_strided=self._as_strided))
        self.random = types.SimpleNamespace(
            standard_normal=lambda size=None, dtype=float: self.asarray(self._rng.standard_normal(size).astype(dtype)),
            random=lambda size=None: self.asarray(self._rng.random(size)))
        for t in ("bool_", "int8", "int16", "int32", "int64", "uint8", "uint16", "uint32", "uint64", "float16",
                  "float32", "float64", "complex64", "complex128"):
            setattr(self, t, getattr(np, t))

    # arrays
    def _new(self, shape, dtype, fill=POISON) -> ndarray:
        shape = (shape,) if isinstance(shape, (int, np.integer)) else tuple(shape)
        dtype = np.dtype(dtype)
        mem = Allocation(self, math.prod(shape) * dtype.itemsize, fill)
        return self.ndarray(shape, dtype, MemoryPointer(mem))

    def empty(self, shape, dtype=float, order="C"):
        return self._new(shape, dtype)

    def empty_like(self, a, dtype=None):
        return self._new(a.shape, dtype or a.dtype)

    def zeros(self, shape, dtype=float):
        return self._new(shape, dtype, 0)

    def full(self, shape, value, dtype=None):
        x = self._new(shape, dtype or np.asarray(value).dtype)
        x._a[...] = value
        return x

    def ones(self, shape, dtype=float):
        return self.full(shape, 1, dtype)

    def asarray(self, x, dtype=None, order=None):
        if isinstance(x, ndarray):
            return x if dtype is None or x.dtype == np.dtype(dtype) else x.astype(dtype)
        if hasattr(x, "__cuda_array_interface__") and not isinstance(x, np.ndarray):
            return self._from_interface(x.__cuda_array_interface__, dtype)
        host = np.asarray(x, dtype=dtype)
        out = self._new(host.shape, host.dtype)
        out._a[...] = host
        return out

    def _from_interface(self, cai, dtype):
        ptr = cai["data"][0]
        mem = self._allocation_at(ptr)
        a = np.ndarray(cai["shape"], np.dtype(cai["typestr"]), buffer=mem.buf, offset=ptr - mem.ptr,
                       strides=cai.get("strides"))
        x = self.ndarray._view(mem, a)
        return x if dtype is None else x.astype(dtype)

    def _allocation_at(self, ptr) -> Allocation:
        for begin, ref in self._allocations.items():
            mem = ref()
            if mem is not None and begin <= ptr < begin + mem.nbytes:
                return mem
        raise VirtualCudaError(f"address {ptr:#x} is in no allocation of the virtual device")

    def array(self, x, dtype=None, copy=True, order="K", ndmin=0):
        return self.asarray(np.array(_host(x), dtype=dtype, copy=True, order=order, ndmin=ndmin))

    def _as_strided(self, x, shape=None, strides=None):
        """``cupy.lib.stride_tricks.as_strided``: a view of ``x``'s memory (no bounds checked, as CuPy)."""
        return self.ndarray._view(x._mem, np.lib.stride_tricks.as_strided(x._a, shape, strides, writeable=True))

    def ascontiguousarray(self, x, dtype=None):
        return self.asarray(np.ascontiguousarray(_host(x), dtype=dtype))

    def asnumpy(self, x, stream=None):
        return x.get() if isinstance(x, ndarray) else np.asarray(x)   # counted by get

    def arange(self, *args, dtype=None):
        return self.asarray(np.arange(*args, dtype=dtype))

    def copyto(self, dst, src, casting="same_kind", where=True):
        src = _host(src)
        if isinstance(src, np.ndarray) and src.dtype != dst.dtype:   # a conversion: CuPy's flushing kernel
            src = _flushed(src)
        np.copyto(dst._a, src, casting=casting, where=_host(where))

    def may_share_memory(self, a, b, max_work=None):
        return np.may_share_memory(_host(a), _host(b))

    def from_dlpack(self, x):
        """A view of ``x``'s device memory (DLPack's import without a copy, modelled through the array
        interface: the virtual device's DLPack producers, ``virtual_torch``, expose both)."""
        if not hasattr(x, "__dlpack__") or not hasattr(type(x), "__cuda_array_interface__"):
            raise TypeError("the virtual CUDA device imports DLPack only from objects that also expose "
                            "__cuda_array_interface__ (gpubcast.testing.virtual_torch)")
        x.__dlpack__()                         # the producer's refusals (a tensor that requires grad, ...)
        return self._from_interface(x.__cuda_array_interface__, None)

    def __getattr__(self, name):
        """NumPy's function of the same name on the host values (array_equal, isnan, ...)."""
        if name.startswith("_"):
            raise AttributeError(name)
        fn = getattr(np, name)

        def call(*a, **k):
            r = fn(*_host(a), **{n: _host(v) for n, v in k.items()})
            return self.asarray(r) if isinstance(r, np.ndarray) else r
        return call

    # streams
    def _stream_of(self, ptr: int) -> Stream:
        """The stream with handle ``ptr`` (0: the null stream; another library's, e.g. torch's, is one of
        this device's streams too)."""
        for stream in self._streams:
            if stream.ptr == ptr:
                return stream
        raise VirtualCudaError(f"CUDA_ERROR_INVALID_HANDLE: no stream with handle {ptr:#x}")

    # launches
    @property
    def launcher(self):
        """The compiled launch path's launcher (``gpubcast.cuda.compiled_launch.Launcher``): the
        ``cuLaunchKernel`` ABI over ``Function.launch`` -- the kernel by its handle, the argument from
        the ``extra`` buffer (its size checked against the parameter's), the stream by its handle."""
        from ..cuda import compiled_launch
        address = ctypes.cast(self._launch_kernel_c, ctypes.c_void_p).value
        return compiled_launch.Launcher(address, self._launch_error, self._launch_kernel_c)

    def fail_next_launch(self, status: int) -> None:
        """The launcher's next launch returns ``status`` and runs nothing (e.g. 201,
        CUDA_ERROR_INVALID_CONTEXT: a thread on which no CUDA context is current yet)."""
        self._next_status = status

    def _launch_kernel(self, f, gx, gy, gz, bx, by, bz, shared, stream, params, extra) -> int:
        if self._next_status:
            status, self._next_status = self._next_status, 0
            return status
        try:
            fn = self._functions.get(f or 0)
            if fn is None:
                raise VirtualCudaError(f"CUDA_ERROR_INVALID_HANDLE: no loaded kernel has handle {f or 0:#x}")
            if params:
                raise VirtualCudaError("the virtual launcher takes the argument through extra (a buffer and its size)")
            buf, size, i = None, None, 0
            while extra and extra[i]:
                if extra[i] == _BUFFER_POINTER:
                    buf = extra[i + 1]
                elif extra[i] == _BUFFER_SIZE:
                    size = ctypes.cast(extra[i + 1], ctypes.POINTER(ctypes.c_size_t))[0]
                i += 2
            if buf is None or size is None:
                raise VirtualCudaError("CUDA_ERROR_INVALID_VALUE: extra holds no argument buffer and size")
            fn.launch((gx, gy, gz), (bx, by, bz), [ctypes.string_at(buf, size)], shared, self._stream_of(stream or 0))
            return 0
        except BaseException as e:  # noqa: BLE001 - a ctypes callback cannot raise: the C caller asks _launch_error
            self._launch_errors.append(e)
            return CUDA_ERROR_LAUNCH_FAILED

    def _launch_error(self, status: int):
        if self._launch_errors:
            raise self._launch_errors.pop()
        raise VirtualCudaError(f"cuLaunchKernel returned {status}")

    def _ranges(self):
        live = sorted((b, b + m.nbytes) for b, ref in self._allocations.items() if (m := ref()) is not None)
        return np.array(live, np.uint64).reshape(-1)

    def _run(self, fn: Function, params: bytes, grid: int, block: int, stream: Stream):
        emu = emulator_of(fn.family, fn.name)
        size = emu.param_size(fn.name)
        if size != len(params):
            raise VirtualCudaError(f"{fn.name}: the host build's parameter is {size} bytes, NVRTC's {len(params)}")
        ranges = self._ranges()
        check = emulate.Check(ranges=ranges.ctypes.data, nranges=len(ranges) // 2)
        order = (self._coprime(grid), int(self._rng.integers(grid)), self._coprime(block),
                 int(self._rng.integers(block)))
        self.launches.append((fn.name, grid, block, stream.ptr, params))
        emu.run_raw(fn.name, params, grid, block, order, check)
        if check.faults:
            raise VirtualFault(f"{fn.name}: {emulate.describe(check)}")

    def _coprime(self, n: int) -> int:
        while True:
            m = int(self._rng.integers(1, max(2, n))) if n > 1 else 1
            if math.gcd(m, n) == 1:
                return m


@functools.lru_cache(maxsize=1)
def _program_of() -> dict:
    """name expression -> the names of its fast program (``catalog.fast_programs``)."""
    return {n: names for family in catalog.every_instantiation() for names in catalog.fast_programs(family)
            for n in names}


@functools.lru_cache(maxsize=24)    # PTX of up to 260 kernels each (7 MB); one dropped is read from disk again
def _fast_program(family: str, names: tuple, target: str) -> tuple[bytes, dict]:
    ptx, lowered = compiler.fast_program(family, names, target)
    return ptx + b"\0", lowered


def fast_kernel(family: str, name: str, arch: str) -> tuple[bytes, str]:
    """``compiler.cached_kernel``'s answer as a ``kernels="fast"`` device makes it: the PTX of the fast
    NVRTC program (``--Ofast-compile=max``) holding ``name``, ``compiler.fast_program`` (cached):
    the catalog's program of ``name`` (``catalog.fast_programs``, which ``kernels --check --fast``
    compiles too), or a generated family's kernels.  The PTX comes NUL-terminated, as a driver loads
    PTX in place of a CUBIN (the backend terminates only the PTX it asked for), and as one bytes
    object per program, whose entries a ``Module`` reads once.  After a program compiled here, the
    process's runtime compiles run in a fresh process (``compiler.compile_clean``: NVRTC keeps state
    after a fast program)."""
    names = _EXTRA_PROGRAMS.get(name) or sources.generated_names(family) or _program_of().get(name) or (name,)
    target = arch.replace("sm_", "compute_")          # PTX for the device's architecture
    ptx, lowered = _fast_program(family, tuple(names) if name in names else (name,), target)
    return (ptx if arch.startswith("sm_") else ptx[:-1]), lowered[name]


@contextlib.contextmanager
def installed(cp: VirtualCupy | None = None):
    """gpubcast's CUDA backend on ``cp`` (default: a new VirtualCupy), for the block."""
    from .. import backends
    from ..backends.cuda import CudaBackend
    cp = cp or VirtualCupy()
    real = compiler.cached_kernel
    make = real if cp.kernels == "runtime" else fast_kernel

    @functools.wraps(real)
    def watched(family, name, arch):
        binary, lowered = make(family, name, arch)
        cp._names[lowered] = (family, name)
        return binary, lowered

    compiler.cached_kernel = watched
    try:
        with backends.registered("cuda", CudaBackend(cp, cp.launcher)):
            yield cp
    finally:
        compiler.cached_kernel = real
