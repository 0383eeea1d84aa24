"""The host memory pool: gpubcast's large CPU outputs reuse the blocks of freed ones.

A fresh large array pays the operating system's zeroing of every new page on its first write: on
a 2-core machine, about 5 ms for a 51 MB output, more than a fused ``a * x + b`` over it takes
(1.5 ms).  NumPy pays it on every call.  Like ONNX Runtime's CPU arena and CuPy's memory pools,
gpubcast keeps the blocks of its freed large outputs (up to a limit) and hands them out again,
already paged in.

How: a block is a ``uint8`` array from ``numpy.empty`` that only the pool holds.  An output of at
least ``MIN_BYTES`` (and at most the limit: a larger block could never be kept) is a view of a
block through a ``_Lease``, a small object that exposes the block's memory
(``__array_interface__``) and holds nothing.  NumPy's base collapse stops at an array whose base
is not an array, so the output and every view made of it hold the lease, and the lease dies
exactly when the last array on the block does.

Its weak reference, a ``_Ticket`` that holds the block, then has CPython queue it: the callback is
the queue's own ``append``, C code, so no Python code runs when an output dies.  A callback in
Python could be cut short by a Ctrl-C (a signal handler runs at a Python function's first
instruction): CPython reports an exception there as "unraisable" and drops it, so the
KeyboardInterrupt was lost and the lease stayed lent for good.  With nothing to interrupt, a
pending Ctrl-C reaches the caller's next line, and an output freed while an exception unwinds
leaves that exception alone (an allocator callback written in Python does not: ctypes reports the
pending exception as its own error).  The pool takes the queued blocks back under its lock at its
next operation: any gpubcast output allocation or pool method; until then a freed output's block
is held, not freed.

Only plain data comes from the pool: an output whose dtype holds Python objects (``hasobject``:
object arrays, records with an object field) is ``numpy.empty``'s, which fills it with ``None``.

Bookkeeping survives an exception at any line (a Ctrl-C, a signal handler's exception): the free
blocks are the only count, derived from them, never kept beside them; a ticket leaves the lent
ones before it leaves the queue, so a take-back cut short is finished by the next; a step that is
cut short at worst drops a block (NumPy frees it), it never miscounts one or leaves one lent.

``host_memory_pool()`` is the pool (its methods are CuPy's ``MemoryPool``'s); the limit comes from
``GPUBCAST_HOST_POOL_LIMIT`` (bytes; 0 turns the pool off) and defaults to ``DEFAULT_LIMIT`` (a value
that is not a whole number >= 0 warns and keeps the default).
"""

from __future__ import annotations

import collections
import math
import os
import threading
import warnings
import weakref

import numpy as np

#: smaller outputs come from numpy.empty: glibc's malloc raises its mmap threshold (up to 32 MiB on
#: 64-bit) as blocks are freed and serves the next ones from its heap, already paged in, for less
#: than the pool's bookkeeping (measured: 1-16 MiB, np.empty + write 1.00-0.78x the pool's time;
#: 32 MiB, 1.47x: every new array of that size is a fresh mapping whose pages fault)
MIN_BYTES = 32 << 20
PAGE = 4096                          # blocks are whole pages: a block serves every request of its size


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
    if limit < 0:  # as Numba treats a bad NUMBA_* value: warn, keep the default, import on
        warnings.warn(f"GPUBCAST_HOST_POOL_LIMIT={text!r} is not a number of bytes (a whole number >= 0; "
                      f"0 turns the pool off); using the default, {DEFAULT_LIMIT} bytes", RuntimeWarning,
                      stacklevel=2)
        return DEFAULT_LIMIT
    return limit


class _Lease:
    """A block's memory, lent to the arrays of one output: alive exactly while one of them is."""
    __slots__ = ("__array_interface__", "__weakref__")

    def __init__(self, interface: dict):
        self.__array_interface__ = interface


class _Ticket(weakref.ref):
    """A lease's weak reference that holds the lease's block: CPython queues it when the lease dies."""
    __slots__ = ("block",)


def _interface(block: np.ndarray) -> dict:
    """The ``__array_interface__`` of a block's whole memory (read by NumPy, never changed)."""
    return {"shape": block.shape, "typestr": "|u1", "version": 3, "data": (block.ctypes.data, False)}


class HostMemoryPool:
    """Freed blocks of gpubcast's large CPU outputs, by size, kept up to ``get_limit()`` bytes.

    A block is a pair: a ``uint8`` array that only the pool holds, and its ``_interface``."""

    def __init__(self, limit: int):
        self._lock = threading.RLock()   # reentrant: the public methods take blocks back under it too
        self._blocks: dict = {}          # block bytes -> free blocks of that size (the only count kept)
        self._lent: dict = {}            # id(ticket) -> the ticket of a lent block (keeps its callback alive)
        self._returned = collections.deque()   # tickets of dead leases, appended by CPython, to take back
        self._limit = limit

    def free_bytes(self) -> int:
        """Bytes held in free blocks."""
        self._take_back()
        return self._free_bytes()

    def n_free_blocks(self) -> int:
        """Number of free blocks held."""
        self._take_back()
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
        """Give every free block back to NumPy's allocator (those of outputs freed just now too)."""
        with self._lock:
            self._take_back()
            self._blocks = {}

    def _free_bytes(self) -> int:
        return sum(size * len(free) for size, free in list(self._blocks.items()))

    def _lend(self, shape, dtype: np.dtype, nbytes: int) -> np.ndarray:
        """A C-contiguous array of ``shape`` and ``dtype`` (``nbytes`` in all) on a block of the pool."""
        size = _block_bytes(nbytes)
        with self._lock:
            if self._returned:
                self._take_back()
            free = self._blocks.get(size)
            if free:
                block = free.pop()     # cut short after this line: the block is dropped, nothing miscounted
            else:
                array = np.empty(size, np.uint8)   # NumPy's allocator: huge pages as NumPy sets them
                block = (array, _interface(array))
            lease = _Lease(block[1])
            ticket = _Ticket(lease, self._returned.append)   # C code: nothing to interrupt when the lease dies
            ticket.block = block
            self._lent[id(ticket)] = ticket
        whole = np.asarray(lease)
        return (whole if nbytes == size else whole[:nbytes]).view(dtype).reshape(shape)

    def _take_back(self) -> None:
        """Keep the blocks of the leases that died since the last call (those that fit the limit)."""
        with self._lock:
            returned = self._returned
            while returned:
                ticket = returned[0]                  # still queued: a call cut short here is finished by the next
                self._lent.pop(id(ticket), None)      # not lent any more (its id stays its own while it is queued)
                returned.popleft()                    # cut short after this line: the block is dropped, not kept twice
                block = getattr(ticket, "block", None)  # None: its lend was cut short before it got the block
                if block is not None and self._free_bytes() + block[0].nbytes <= self._limit:
                    self._blocks.setdefault(block[0].nbytes, []).append(block)

    def _trim(self) -> None:
        """Drop free blocks, largest first, until they fit the limit (and the sizes left empty)."""
        with self._lock:
            self._take_back()
            excess = self._free_bytes() - self._limit
            for size in sorted(self._blocks, reverse=True):
                free = self._blocks[size]
                while free and excess > 0:
                    free.pop()
                    excess -= size
                if not free:
                    del self._blocks[size]

    def _after_fork(self) -> None:
        self._lock = threading.RLock()   # a fork may have copied it held by another thread


def _block_bytes(nbytes: int) -> int:
    """A request's block: whole pages, at least one."""
    return -(-max(nbytes, 1) // PAGE) * PAGE


def _nbytes(shape, dtype) -> int:
    return math.prod(shape if hasattr(shape, "__iter__") else (shape,)) * np.dtype(dtype).itemsize


_POOL = HostMemoryPool(_limit_from_environment())
if hasattr(os, "register_at_fork"):
    os.register_at_fork(after_in_child=_POOL._after_fork)


def host_memory_pool() -> HostMemoryPool:
    """The pool that gpubcast's large CPU outputs come from (see the module docstring)."""
    return _POOL


def empty(shape, dtype):
    """``numpy.empty(shape, dtype)``, from the pool when it is large enough, fits the pool's limit,
    holds no Python objects and the pool is on."""
    dtype = np.dtype(dtype)
    nbytes = _nbytes(shape, dtype)
    if nbytes < MIN_BYTES or _block_bytes(nbytes) > _POOL._limit or dtype.hasobject:
        if _POOL._returned:              # outputs freed since the last allocation: their blocks back (or freed) now
            _POOL._take_back()
        return np.empty(shape, dtype)
    return _POOL._lend(shape, dtype, nbytes)


def empty_for(shape, dtype):
    """The allocator for repeated outputs of this shape and dtype (a prepared runner's)."""
    return empty if _nbytes(shape, dtype) >= MIN_BYTES and not np.dtype(dtype).hasobject else np.empty


def is_pooled(array: np.ndarray) -> bool:
    """Whether ``array`` (or the array it views) lies on a block of the pool."""
    base = array
    while isinstance(base, np.ndarray):
        base = base.base
    return isinstance(base, _Lease)


def describe() -> str:
    """One line for ``info`` and the benchmark: whether large CPU outputs come from the pool."""
    limit = _POOL.get_limit()
    if not limit:
        return "off (its limit is 0); outputs from numpy.empty"
    return (f"on, keeps up to {limit / 2**20:.0f} MiB of freed outputs of >= {MIN_BYTES >> 20} MiB "
            f"(GPUBCAST_HOST_POOL_LIMIT=0 turns it off)")
