"""The host emulation's __syncthreads() and __shared__ (gpubcast/testing/emulate.py): a block's threads
run as fibers, a barrier waits for all of them, shared variables are one per block; barrier
divergence and shared-memory races are faults; the fibers are one team per OS thread, shared by every
library.  Tiny kernels of registered test families."""

import gc
import struct
import threading

import numpy as np
import pytest

from gpubcast.cuda import sources
from gpubcast.testing import emulate

pytestmark = pytest.mark.skipif(bool(emulate.available()), reason=emulate.available() or "")

FAMILY = "test_barriers"
SOURCE = r"""
#include "indexing.cuh"
namespace gbt {
struct Args { int* out; const int* in; };
template <int MODE> constexpr int k_ept = 1;
// Each block reverses its BLOCK values through shared memory.
//   0: as it should be (barrier between writes and reads)    5: as 0, unchecked accesses
//   2: thread 0 returns before the barrier                    3: odd threads at another barrier
//   4: thread 5 writes nothing (a read of an unwritten byte)
//   6: then x + 1 back through the buffer (barriers after the reads, after the writes)
//   1: as 6 without the second barrier (a race)
template <int MODE> __global__ void k(Args a) {
  __shared__ int buf[gb::BLOCK];
  const unsigned t = threadIdx.x, i = blockIdx.x * blockDim.x + t, mirror = blockDim.x - 1 - t;
  if (MODE == 2 && t == 0) return;
  if (MODE == 5) buf[t] = a.in[i];
  else if (MODE != 4 || t != 5) *GB_SMEM(buf + t, buf, sizeof buf, true) = a.in[i];
  if (MODE == 3 && t % 2) __syncthreads();
  else __syncthreads();
  int x = MODE == 5 ? buf[mirror] : *GB_SMEM(buf + mirror, buf, sizeof buf, false);
  if (MODE == 6 || MODE == 1) {
    if (MODE == 6) __syncthreads();
    *GB_SMEM(buf + t, buf, sizeof buf, true) = x + 1;
    if (MODE == 6) __syncthreads();
    x = *GB_SMEM(buf + mirror, buf, sizeof buf, false);
  }
  a.out[i] = x;
}
}
"""
NAMES = [f"gbt::k<{m}>" for m in range(7)]
BLOCK = 256


@pytest.fixture(scope="module")
def emu():
    sources.register(FAMILY, SOURCE, NAMES)
    return emulate.Emulator([(FAMILY, n) for n in NAMES])


def _run(emu, mode, grid=3, order=(1, 0, 1, 0), check=None):
    x = np.arange(grid * BLOCK, dtype=np.int32) * 7 - 100
    out = np.full_like(x, -1)
    params = struct.pack("<QQ", out.ctypes.data, x.ctypes.data)
    emu.run_raw(f"gbt::k<{mode}>", params, grid, BLOCK, order, check)
    return out, x.reshape(grid, BLOCK)[:, ::-1].reshape(-1)


@pytest.mark.parametrize("order", [(1, 0, 1, 0), (2, 1, 255, 17), (1, 2, 77, 200)])
def test_a_barrier_makes_every_write_visible_before_the_reads(emu, order):
    # threads run one after another: without a real barrier, thread 0 would read its mirror's
    # slot before thread 255 wrote it; every block order and thread order gives the same answer
    for mode in (0, 5):
        out, want = _run(emu, mode, order=order)
        assert np.array_equal(out, want), mode


def test_shared_variables_are_one_per_block(emu):
    out, want = _run(emu, 6, grid=5, order=(3, 1, 5, 9))
    assert np.array_equal(out, np.arange(5 * BLOCK, dtype=np.int32) * 7 - 100 + 1)


def test_a_missing_barrier_is_a_race(emu):
    for order in ((1, 0, 1, 0), (1, 0, 255, 255)):          # threads in order and in reverse
        with pytest.raises(emulate.Fault, match=r"(read|write) of 4 bytes .* by block \d+, thread \d+ and "
                                                r"thread \d+: shared memory race"):
            _run(emu, 1, order=order)


def test_a_thread_leaving_before_a_barrier_is_divergence(emu):
    # a fault per block, and thread 255's read of slot 0 (unwritten) in each
    with pytest.raises(emulate.Fault, match=r"a thread exited while others wait at __syncthreads\(\) "
                                            r"\(block \d+: thread 0 exited while thread \d+ waits\); 6 faults"):
        _run(emu, 2)


def test_threads_at_different_barriers_is_divergence(emu):
    with pytest.raises(emulate.Fault, match=r"threads wait at different __syncthreads\(\) calls"):
        _run(emu, 3, grid=1)


def test_reading_an_unwritten_shared_byte_is_a_fault(emu):
    with pytest.raises(emulate.Fault, match=r"read of 4 bytes .* thread 250: shared memory read of a byte not "
                                            r"written"):
        _run(emu, 4, grid=1)


def test_faults_go_to_the_callers_check(emu):
    check = emulate.Check(memory_off=1)
    out, want = _run(emu, 2, grid=2, check=check)            # released anyway: the launch runs on
    assert check.faults == 4 and check.kind == 4 and check.thread == 0   # and thread 255 reads slot 0
    assert np.array_equal(out[1:BLOCK - 1], want[1:BLOCK - 1])
    check = emulate.Check(memory_off=1)
    _run(emu, 0, check=check)
    assert check.faults == 0


# ---- one team of fibers per OS thread, shared by every library ---------------------------------
TEAM_FAMILY = "test_fiber_teams"
TEAM_SOURCE = r"""
#include "indexing.cuh"
namespace gbt {
struct TeamArgs { int* out; const int* in; };
template <int K> constexpr int t_ept = 1;
template <int K> __global__ void t(TeamArgs a) {   // every thread parked at once, then out = in + K
  const unsigned long long i = (unsigned long long)blockIdx.x * blockDim.x + threadIdx.x;
  const int x = a.in[i] + K;
  __syncthreads();
  a.out[i] = x;
}
}
"""
TEAM_LIBRARIES = 6


def _guard_pages() -> int:
    """Inaccessible anonymous mappings of this process: a fiber stack's guard is one."""
    with open("/proc/self/maps") as maps:
        return sum(1 for line in maps if line.split()[1] == "---p" and len(line.split()) == 5)


def _run_team(emu, k, grid=2, block=BLOCK):
    x = np.arange(grid * block, dtype=np.int32) * 3 - 50
    out = np.full_like(x, -1)
    emu.run_raw(f"gbt::t<{k}>", struct.pack("<QQ", out.ctypes.data, x.ctypes.data), grid, block)
    assert np.array_equal(out, x + k), (k, block)


@pytest.fixture(scope="module")
def team_emulators():
    names = [f"gbt::t<{k}>" for k in range(TEAM_LIBRARIES)]
    sources.register(TEAM_FAMILY, TEAM_SOURCE, names)
    return [emulate.Emulator([(TEAM_FAMILY, name)]) for name in names]   # one library each


def test_libraries_share_their_threads_fibers_so_memory_maps_do_not_grow_with_them(team_emulators):
    # a process may hold vm.max_map_count (65530) maps; a team of 256 fibers costs ~513 of them, so
    # a team per library ran a suite's worker out of maps after ~120 libraries
    _run_team(team_emulators[0], 0)                   # this thread's team exists from here on
    before = _guard_pages()
    for k, emu in enumerate(team_emulators):
        _run_team(emu, k)
    assert _guard_pages() - before < 8     # a team per library: 256 more guard pages for each


def test_a_threads_team_is_its_own_and_goes_with_the_thread(team_emulators):
    before, during = _guard_pages(), []

    def launches():
        for k, emu in enumerate(team_emulators):
            _run_team(emu, k)
        during.append(_guard_pages())

    worker = threading.Thread(target=launches)
    worker.start()
    worker.join()
    gc.collect()
    assert during and during[0] - before >= emulate.launch.BLOCK      # a team of its own
    assert _guard_pages() - before <= 2                                # freed with the thread


def test_a_block_larger_than_the_team_gets_a_larger_team(team_emulators):
    for block in (1024, 32, BLOCK):
        for k in (1, 4):
            _run_team(team_emulators[k], k, grid=3, block=block)
