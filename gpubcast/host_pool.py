"""The host memory pool: gpubcast's large CPU outputs reuse the blocks of freed ones.

A fresh large array pays the operating system's zeroing of every new page on its first write: on
a 2-core machine, about 5 ms for a 51 MB output, more than a fused ``a * x + b`` over it takes
(1.5 ms).  NumPy pays it on every call.  Like ONNX Runtime's CPU arena and CuPy's memory pools,
gpubcast keeps the blocks of its freed large outputs (up to a limit) and hands them out again,
already paged in.

How: NumPy's allocator hook (NEP 49).  The pool's handler is made current only around the
allocation of a gpubcast output of at least ``MIN_BYTES``, and NumPy frees each array through the
handler that allocated it, so arrays the caller makes never touch the pool.  Outputs are ordinary
arrays that own their data (``flags.owndata``, ``resize``, pickling).

``host_memory_pool()`` is the pool (its methods are CuPy's ``MemoryPool``'s); the limit comes from
``GPUBCAST_HOST_POOL_LIMIT`` (bytes; 0 turns the pool off) and defaults to ``DEFAULT_LIMIT``.
Where the hook cannot be installed (no NEP 49, no C library), ``empty`` is ``numpy.empty``.
"""

from __future__ import annotations

import ctypes
import os
import threading

import numpy as np

MIN_BYTES = 1 << 20                  # smaller outputs come from malloc's heap, without page faults
PAGE = 4096                          # blocks are whole pages: a block serves every request of its size
HUGEPAGE_FROM = 1 << 22              # NumPy's own threshold for madvise(MADV_HUGEPAGE)
_MADV_HUGEPAGE = 14
NAME = b"gpubcast_host_pool"


def _physical_bytes() -> int:
    try:
        return os.sysconf("SC_PHYS_PAGES") * os.sysconf("SC_PAGE_SIZE")
    except (ValueError, OSError, AttributeError):
        return 8 << 30


DEFAULT_LIMIT = min(1 << 30, _physical_bytes() // 8)


def _limit_from_environment() -> int:
    text = os.environ.get("GPUBCAST_HOST_POOL_LIMIT", "").strip()
    if not text:
        return DEFAULT_LIMIT
    try:
        limit = int(text)
    except ValueError:
        limit = -1
    if limit < 0:
        raise ValueError(f"GPUBCAST_HOST_POOL_LIMIT={text!r}: give the bytes the host pool may keep "
                         f"(a whole number >= 0; 0 turns the pool off)")
    return limit


class HostMemoryPool:
    """Freed blocks of gpubcast's large CPU outputs, by size, kept up to ``get_limit()`` bytes."""

    def __init__(self, limit: int):
        self._lock = threading.RLock()   # reentrant: a garbage collection inside may free a block
        self._blocks: dict = {}          # block bytes -> addresses of free blocks of that size
        self._sizes: dict = {}           # address -> block bytes, for every live block
        self._free_bytes = 0
        self._limit = limit

    def free_bytes(self) -> int:
        """Bytes held in free blocks."""
        return self._free_bytes

    def n_free_blocks(self) -> int:
        """Number of free blocks held."""
        return sum(map(len, self._blocks.values()))

    def get_limit(self) -> int:
        """The most bytes of free blocks kept."""
        return self._limit

    def set_limit(self, size: int) -> None:
        """Keep at most ``size`` bytes of free blocks (0: keep none, and allocate as NumPy does)."""
        if isinstance(size, bool) or not isinstance(size, int) or size < 0:
            raise ValueError(f"set_limit(size={size!r}): give a whole number of bytes >= 0")
        self._limit = size
        self._trim()

    def free_all_blocks(self) -> None:
        """Return every free block to the C library."""
        with self._lock:
            blocks, self._blocks, self._free_bytes = self._blocks, {}, 0
        for addresses in blocks.values():
            for address in addresses:
                _libc.free(address)

    def _trim(self) -> None:
        with self._lock:
            while self._free_bytes > self._limit:
                size = max(self._blocks)
                address = self._blocks[size].pop()
                if not self._blocks[size]:
                    del self._blocks[size]
                self._free_bytes -= size
                _libc.free(address)

    def _after_fork(self) -> None:
        self._lock = threading.RLock()   # a fork may have copied it held by another thread

    # The handler's functions (called by NumPy with the GIL held; never raise).

    def _malloc(self, nbytes: int) -> int:
        size = _block_bytes(nbytes)
        address = 0
        with self._lock:
            free = self._blocks.get(size)
            if free:
                address = free.pop()
                self._free_bytes -= size
        if not address:
            address = _libc.malloc(size) or 0
            if address and size >= HUGEPAGE_FROM and _madvise is not None and _hugepages():
                start = -(-address // PAGE) * PAGE          # as NumPy: the pages inside the block
                _madvise(start, address + size - start, _MADV_HUGEPAGE)
        if address:
            self._sizes[address] = size
        return address

    def _calloc(self, count: int, itemsize: int) -> int:
        size = _block_bytes(count * itemsize)
        address = _libc.calloc(1, size) or 0
        if address:
            self._sizes[address] = size
        return address

    def _realloc(self, address: int, nbytes: int) -> int:
        if not address:
            return self._malloc(nbytes)
        size = _block_bytes(nbytes)
        moved = _libc.realloc(address, size) or 0
        if moved:
            self._sizes.pop(address, None)
            self._sizes[moved] = size
        return moved

    def _free(self, address: int) -> None:
        if not address:
            return
        size = self._sizes.pop(address, None)
        if size is not None and size >= MIN_BYTES:
            with self._lock:
                if self._free_bytes + size <= self._limit:
                    self._blocks.setdefault(size, []).append(address)
                    self._free_bytes += size
                    return
        _libc.free(address)


def _block_bytes(nbytes: int) -> int:
    """A request's block: whole pages, at least one."""
    return -(-max(nbytes, 1) // PAGE) * PAGE


_POOL = HostMemoryPool(_limit_from_environment())
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_POOL._after_fork)


def host_memory_pool() -> HostMemoryPool:
    """The pool that gpubcast's large CPU outputs come from (see the module docstring)."""
    return _POOL


def _install():
    """The NEP 49 handler capsule and NumPy's ``PyDataMem_SetHandler``; None where unavailable."""
    global _libc, _madvise, _hugepages
    try:
        libc = ctypes.CDLL(None)
        for name, res, args in (("malloc", ctypes.c_void_p, [ctypes.c_size_t]),
                                ("calloc", ctypes.c_void_p, [ctypes.c_size_t, ctypes.c_size_t]),
                                ("realloc", ctypes.c_void_p, [ctypes.c_void_p, ctypes.c_size_t]),
                                ("free", None, [ctypes.c_void_p])):
            fn = getattr(libc, name)
            fn.restype, fn.argtypes = res, args
        _libc = libc
        _madvise = getattr(libc, "madvise", None)
        if _madvise is not None:
            _madvise.restype, _madvise.argtypes = ctypes.c_int, [ctypes.c_void_p, ctypes.c_size_t, ctypes.c_int]
        _hugepages = getattr(np._core.multiarray, "_get_madvise_hugepage", lambda: False)

        api = ctypes.pythonapi
        api.PyCapsule_GetPointer.restype, api.PyCapsule_GetPointer.argtypes = ctypes.c_void_p, [ctypes.py_object,
                                                                                                 ctypes.c_char_p]
        api.PyCapsule_New.restype, api.PyCapsule_New.argtypes = ctypes.py_object, [ctypes.c_void_p, ctypes.c_char_p,
                                                                                   ctypes.c_void_p]
        table = api.PyCapsule_GetPointer(np._core._multiarray_umath._ARRAY_API, None)
        slots = (ctypes.c_void_p * 307).from_address(table)   # NumPy's C API table (ABI-stable slots)
        set_handler = ctypes.PYFUNCTYPE(ctypes.py_object, ctypes.py_object)(slots[304])   # PyDataMem_SetHandler
    except (AttributeError, OSError, TypeError, ValueError):
        return None

    malloc_t = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t)
    calloc_t = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t, ctypes.c_size_t)
    realloc_t = ctypes.CFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t)
    free_t = ctypes.CFUNCTYPE(None, ctypes.c_void_p, ctypes.c_void_p, ctypes.c_size_t)

    class Allocator(ctypes.Structure):
        _fields_ = [("ctx", ctypes.c_void_p), ("malloc", malloc_t), ("calloc", calloc_t),
                    ("realloc", realloc_t), ("free", free_t)]

    class Handler(ctypes.Structure):
        _fields_ = [("name", ctypes.c_char * 127), ("version", ctypes.c_uint8), ("allocator", Allocator)]

    pool = _POOL
    functions = (malloc_t(lambda ctx, n: pool._malloc(n)),
                 calloc_t(lambda ctx, n, size: pool._calloc(n, size)),
                 realloc_t(lambda ctx, p, n: pool._realloc(p or 0, n)),
                 free_t(lambda ctx, p, n: pool._free(p or 0)))
    handler = Handler(NAME, 1, Allocator(None, *functions))
    capsule_name = b"mem_handler"
    capsule = api.PyCapsule_New(ctypes.addressof(handler), capsule_name, None)
    # Arrays hold the capsule and may outlive this module (interpreter exit): what it points at
    # must never be freed, so one reference is leaked on purpose.
    keep = (functions, handler, capsule_name, capsule, pool)
    api.Py_IncRef(ctypes.py_object(keep))
    return set_handler, capsule


_libc = _madvise = _hugepages = None
_HOOK = _install()


def available() -> bool:
    """Whether this NumPy and C library let the pool serve outputs."""
    return _HOOK is not None


def empty(shape, dtype):
    """``numpy.empty(shape, dtype)``, from the pool when it is large enough and the pool is on."""
    if _HOOK is None or not _POOL._limit or _nbytes(shape, dtype) < MIN_BYTES:
        return np.empty(shape, dtype)
    set_handler, capsule = _HOOK
    previous = set_handler(capsule)
    try:
        return np.empty(shape, dtype)
    finally:
        set_handler(previous)


def empty_for(shape, dtype):
    """The allocator for repeated outputs of this shape and dtype (a prepared runner's)."""
    return empty if _nbytes(shape, dtype) >= MIN_BYTES else np.empty


def _nbytes(shape, dtype) -> int:
    count = 1
    for n in (shape if hasattr(shape, "__iter__") else (shape,)):
        count *= int(n)
    return count * np.dtype(dtype).itemsize


def describe() -> str:
    """One line for ``info`` and the benchmark: whether large CPU outputs come from the pool."""
    if _HOOK is None:
        return "unavailable (NumPy's allocator hook or the C library's malloc is missing); outputs from numpy.empty"
    limit = _POOL.get_limit()
    if not limit:
        return "off (its limit is 0); outputs from numpy.empty"
    return (f"on, keeps up to {limit / 2**20:.0f} MiB of freed outputs of >= {MIN_BYTES >> 20} MiB "
            f"(GPUBCAST_HOST_POOL_LIMIT=0 turns it off)")
