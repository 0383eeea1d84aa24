"""The threads a parallel walk runs on: gpubcast's own pool in the compiled module
(``gpubcast/native/hot_call.cpp``, ``drive_parallel``), not Numba's threading layer.

Why: Numba's parallel region (``prange`` through TBB or OpenMP) costs tens of microseconds to start,
so parallel execution only paid from 131,072 elements, and one core did all of a middle-sized call.
The pool's workers spin briefly after a job and then sleep; a job is one atomic store and, for
sleeping workers, one wake-up.  Each thread runs the drivers' chunk runner (``drivers.chunk_address``,
whose address the walk's ``meta`` holds) on chunks it claims, with its own work space and scratch.
A caller that finds the pool busy (another Python thread's job) runs its chunks itself; a forked
child makes its workers again; the GIL is released meanwhile.

``run`` answers None where there is no pool (no compiled module: ``GPUBCAST_COMPILED_CALLS=0``, or
a source tree without a compiler): the caller takes Numba's parallel drivers, the same values.
"""

from __future__ import annotations

import numba

from ... import compiled_calls
from . import drivers
from .memory import SCRATCH
from .meta import H_CHUNK, H_ITEMS

#: chunks per thread a walk is split into (claimed dynamically: a busy core takes fewer)
CHUNKS_PER_THREAD = 4

_state = {"configured": False}


def threads() -> int:
    """The threads a parallel walk uses, the caller's included: Numba's (``NUMBA_NUM_THREADS``,
    ``numba.set_num_threads``)."""
    return numba.get_num_threads()


def available() -> bool:
    """Whether the pool is there (the compiled module loads)."""
    if not compiled_calls.load():
        return False
    if not _state["configured"]:
        compiled_calls.module.configure(int(numba.config.NUMBA_NUM_THREADS), SCRATCH)
        _state["configured"] = True
    return True


def chunks(meta, n_threads: int) -> int:
    """How many chunks a walk of ``meta``'s work items is split into on ``n_threads`` threads."""
    return max(1, min(int(meta[H_ITEMS]), CHUNKS_PER_THREAD * n_threads))


def native(row: int, meta, n_threads: int) -> compiled_calls.Native:
    """The compiled hot path's description of this parallel walk (its entry runs it on the pool)."""
    check = drivers.check_address()
    return compiled_calls.Native(check, int(row), meta.ctypes.data, True, int(meta[H_CHUNK]), check,
                                 chunks(meta, n_threads))


def run(row: int, pp: int, meta, n_threads: int) -> int | None:
    """Run the walk of ``meta`` over the operand addresses at ``pp`` on the pool: the drivers' status
    (0, or why the operands were rejected, nothing computed), or None without a pool."""
    if not available():
        return None
    return compiled_calls.module.drive_parallel(int(meta[H_CHUNK]), drivers.check_address(), int(row), pp,
                                                meta.ctypes.data, chunks(meta, n_threads))
