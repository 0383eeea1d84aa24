"""The host memory pool: gpubcast's large CPU outputs reuse freed blocks, and nothing else does."""

import _thread
import collections
import gc
import operator
import os
import pickle
import signal
import subprocess
import sys
import textwrap
import threading
import tracemalloc

import numpy as np
import pytest

import gpubcast as gb
from gpubcast import host_pool

BIG = (64, 1024, 136)                   # 34 MiB of float32: over host_pool.MIN_BYTES
BIG_BYTES = int(np.prod(BIG)) * 4
pooled = host_pool.is_pooled


@pytest.fixture
def pool():
    """The pool, emptied and with its default limit before and after the test."""
    p = host_pool.host_memory_pool()
    limit = p.get_limit()
    p.set_limit(host_pool.DEFAULT_LIMIT)
    p.free_all_blocks()
    yield p
    p.free_all_blocks()
    p.set_limit(limit)


@pytest.mark.parametrize("backend", ["numba", "numpy"])
def test_a_large_output_comes_from_the_pool_and_its_block_serves_the_next(pool, backend):
    rng = np.random.default_rng(0)
    x, y = rng.random(BIG, dtype=np.float32), rng.random(BIG[-1:], dtype=np.float32)
    first = gb.add(x, y, backend=backend)
    assert pooled(first) and first.flags.c_contiguous and first.flags.writeable
    np.testing.assert_array_equal(first, x + y)
    address = first.ctypes.data
    del first
    assert pool.n_free_blocks() == 1 and pool.free_bytes() == x.nbytes
    second = gb.multiply(x, y, backend=backend)        # the same block, every element rewritten
    assert second.ctypes.data == address and pool.free_bytes() == 0
    np.testing.assert_array_equal(second, x * y)


def test_front_ends_and_user_kernels_on_numpy_arrays_get_pool_outputs(pool):
    import gpubcast.onnx as gbo
    import gpubcast.openvino as gbv
    x = np.random.default_rng(3).random(BIG, dtype=np.float32)
    onnx_sum = gbo.Add(x, x[:1])
    np.testing.assert_array_equal(onnx_sum, x + x[:1])
    openvino = gbv.Broadcast(x[0], np.array(BIG), mode="numpy")
    np.testing.assert_array_equal(openvino, np.broadcast_to(x[0], BIG))
    squared = gb.ElementwiseKernel("T x, T y", "T z", "z = (x - y) * (x - y)", "pool_squared_diff")(x, x[:1])
    np.testing.assert_array_equal(squared, (x - x[:1]) * (x - x[:1]))
    assert [pooled(a) for a in (onnx_sum, openvino, squared)] == [True] * 3


def test_small_outputs_and_the_callers_arrays_are_numpys_own(pool):
    small = gb.add(np.ones(1000, np.float32), 1)
    assert not pooled(small) and small.flags.owndata
    big = gb.add(np.ones(BIG, np.float32), 1)
    assert pooled(big) and not pooled(np.ones(BIG, np.float32) + 1)
    assert not pooled(big.copy()) and big.copy().flags.owndata


def test_a_view_keeps_its_block_from_being_reused(pool):
    x = np.arange(np.prod(BIG), dtype=np.float32).reshape(BIG)
    out = gb.add(x, 1)
    view = out[1:]
    del out
    assert pool.n_free_blocks() == 0                    # the view still holds the block
    again = gb.add(x, 2)
    assert not np.shares_memory(again, view)
    np.testing.assert_array_equal(view, x[1:] + 1)
    del view
    assert pool.n_free_blocks() == 1


def test_fused_outputs_come_from_the_pool(pool):
    x = np.random.default_rng(1).random(BIG, dtype=np.float32)
    f = gb.fuse(lambda a, x, b: a * x + b)
    for _ in range(3):                                  # the traced call, then the prepared runner
        out = f(np.float32(2), x, np.float32(1))
        assert pooled(out)
        np.testing.assert_array_equal(out, np.float32(2) * x + np.float32(1))
        del out
    assert pool.n_free_blocks() == 1


def test_the_limit_bounds_the_free_blocks_and_zero_turns_the_pool_off(pool):
    pool.set_limit(BIG_BYTES * 3 // 2)                  # room for one BIG block
    outs = [gb.add(np.ones(BIG, np.float32), i) for i in range(3)]
    del outs
    assert pool.n_free_blocks() == 1 and pool.free_bytes() == BIG_BYTES
    pool.set_limit(BIG_BYTES // 2)                      # lowering the limit frees what is over it
    assert pool.n_free_blocks() == 0 and pool.free_bytes() == 0
    pool.set_limit(0)
    out = gb.add(np.ones(BIG, np.float32), 1)
    assert not pooled(out) and out.flags.owndata
    assert "off" in host_pool.describe()
    for bad in (-1, 1.5, True, "1"):
        with pytest.raises(ValueError, match="whole number"):
            pool.set_limit(bad)


def test_free_all_blocks_empties_the_pool(pool):
    outs = [gb.add(np.ones(BIG, np.float32), i) for i in range(2)]
    del outs
    assert pool.n_free_blocks() == 2
    pool.free_all_blocks()
    assert pool.n_free_blocks() == 0 and pool.free_bytes() == 0


def test_pool_outputs_pickle_copy_and_are_traced(pool):
    out = gb.add(np.ones(BIG, np.float32), 1)
    back = pickle.loads(pickle.dumps(out))
    np.testing.assert_array_equal(back, out)
    assert not pooled(back)
    with pytest.raises(ValueError, match="does not own its data"):   # a view of its block, as NumPy says
        out.resize((10,))
    del out, back
    gc.collect()
    tracemalloc.start()
    try:
        kept = gb.add(np.ones(BIG, np.float32), 1)
        assert tracemalloc.get_traced_memory()[1] >= kept.nbytes   # NumPy's own tracking sees the block
    finally:
        tracemalloc.stop()


def _raises_while_an_output_is_on_the_stack(x):
    def fail():
        raise KeyError("the caller's own error")
    return (gb.add(x, 1), fail())       # the output is freed while the KeyError unwinds


def test_an_output_freed_while_an_exception_unwinds_keeps_the_exception_and_returns_its_block(pool):
    # The CI failure of the NEP 49 allocator written with ctypes: freeing there ran Python with the
    # exception pending, which turned it into a SystemError and leaked the block.
    x = np.ones(BIG, np.float32)
    for _ in range(50):
        with pytest.raises(KeyError, match="the caller's own error"):
            _raises_while_an_output_is_on_the_stack(x)
        assert pool.n_free_blocks() == 1 and pool.free_bytes() == x.nbytes
    run = _python("""
        import numpy as np, gpubcast as gb
        def fail():
            raise KeyError("mine")
        for _ in range(20):
            try:
                (gb.add(np.ones((64, 1024, 136), np.float32), 1), fail())
            except KeyError:
                pass
        print(gb.host_memory_pool().n_free_blocks())
    """)
    assert run.returncode == 0 and run.stdout.split() == ["1"] and run.stderr == "", run.stderr


def test_threads_allocating_and_freeing_at_once_get_their_own_values(pool):
    x = np.random.default_rng(2).random(BIG, dtype=np.float32)
    errors = []

    def work(k):
        try:
            for i in range(30):
                out = gb.add(x, np.float32(k * 100 + i))
                if not np.array_equal(out, x + np.float32(k * 100 + i)):
                    errors.append((k, i))
        except Exception as e:                          # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=work, args=(k,)) for k in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert errors == []
    assert pool.free_bytes() == pool.n_free_blocks() * x.nbytes <= pool.get_limit()
    assert pool._lent == {} and not pool._returned      # every output is gone: every block taken back


def _python(code, **env):
    return subprocess.run([sys.executable, "-c", textwrap.dedent(code)], capture_output=True, text=True,
                          timeout=120, env={**os.environ, **env})


def test_pool_arrays_alive_at_interpreter_exit_are_harmless():
    # Pool arrays in module globals, in a reference cycle, in a daemon thread and in a free block
    # all meet interpreter shutdown, after the pool's module is torn down.
    run = _python("""
        import threading, time, numpy as np, gpubcast as gb
        keep = gb.add(np.ones((64, 1024, 136), np.float32), 1)
        cycle = [gb.add(np.ones((64, 1024, 136), np.float32), 2)]
        cycle.append(cycle)
        gb.add(np.ones((64, 1024, 136), np.float32), 3)   # freed at once: a free block
        def hold():
            a = gb.add(np.ones((64, 1024, 136), np.float32), 4)
            time.sleep(60)
        threading.Thread(target=hold, daemon=True).start()
        time.sleep(0.2)
        print("ok", gb.host_pool.is_pooled(keep))
    """)
    assert run.returncode == 0, run.stderr
    assert run.stdout.split() == ["ok", "True"] and run.stderr == ""


def test_the_environment_sets_the_limit_and_rejects_nonsense():
    off = _python("import numpy as np, gpubcast as gb; "
                  "print(gb.host_pool.is_pooled(gb.add(np.ones((64, 1024, 136), np.float32), 1)))",
                  GPUBCAST_HOST_POOL_LIMIT="0")
    assert off.returncode == 0 and off.stdout.strip() == "False", off.stderr
    bad = _python("import numpy as np, gpubcast as gb; print(gb.add(np.ones(3), 1)[0], "
                  "gb.host_memory_pool().get_limit() == gb.host_pool.DEFAULT_LIMIT)", GPUBCAST_HOST_POOL_LIMIT="1GB")
    assert bad.returncode == 0, bad.stderr                       # a typo warns, it does not break the import
    assert bad.stdout.split() == ["2.0", "True"]
    assert "RuntimeWarning: GPUBCAST_HOST_POOL_LIMIT='1GB' is not a number of bytes" in bad.stderr


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork here")
def test_a_forked_child_reuses_the_blocks_it_inherits():
    run = _python("""
        import os, numpy as np, gpubcast as gb
        x = np.ones((64, 1024, 136), np.float32)
        gb.add(x, 1, backend="numpy")                    # freed at once: a free block
        pid = os.fork()
        if pid == 0:
            y = gb.add(x, 2, backend="numpy")
            os._exit(0 if (y == 3).all() and gb.host_memory_pool().n_free_blocks() == 0 else 1)
        print(os.waitstatus_to_exitcode(os.waitpid(pid, 0)[1]), gb.host_memory_pool().n_free_blocks())
    """)
    assert run.returncode == 0 and run.stdout.split() == ["0", "1"], run.stderr


@pytest.mark.parametrize("dtype", [np.dtype(object), np.dtype([("a", object), ("b", np.float64)])])
def test_outputs_holding_python_objects_never_come_from_the_pool(pool, dtype):
    n = host_pool.MIN_BYTES // dtype.itemsize + 1                    # over the pool's size
    one = np.empty(1, dtype)
    one[0] = (7, 1.5) if dtype.names else 7
    values = np.empty(n, dtype)
    values[:] = one[0]
    for result in (gb.broadcast_to(one, (n,)), gb.expand(one, (n,)), gb.where(np.ones(n, bool), values, one)):
        assert result.dtype == dtype and not pooled(result)
        np.testing.assert_array_equal(result, np.broadcast_to(one, (n,)))
    if not dtype.names:
        total = gb.add(values, values)
        assert not pooled(total) and total.dtype == object and (total == 14).all()


def _bookkeeping_lines():
    """Every line of the pool's methods that touch its blocks (the places an exception can land)."""
    import dis
    import linecache
    lines = set()
    for name in ("_lend", "_take_back", "_trim", "set_limit", "free_all_blocks", "free_bytes", "_free_bytes",
                 "n_free_blocks"):
        code = getattr(host_pool.HostMemoryPool, name).__code__
        for c in (code, *(k for k in code.co_consts if hasattr(k, "co_code"))):   # nested code (lambdas) too
            lines |= {n for _, n in dis.findlinestarts(c) if n and n > c.co_firstlineno}
    return sorted(n for n in lines if not linecache.getline(host_pool.__file__, n).strip().startswith("raise "))


@pytest.mark.parametrize("line", _bookkeeping_lines())
def test_an_exception_at_any_bookkeeping_line_leaves_the_pool_consistent(pool, line):
    # A tracer raises KeyboardInterrupt the first time ``line`` of host_pool.py runs, inside a
    # scenario that lends, returns, reuses and trims blocks: deterministic Ctrl-C at each step.
    # It reaches the caller (none is lost as "unraisable") and leaves no block lent for good.
    x = np.ones(BIG, np.float32)
    fired, unraisable, surfaced = [], [], []

    def local(frame, event, arg):
        if event == "line" and frame.f_lineno == line and not fired:
            fired.append(line)
            raise KeyboardInterrupt
        return local

    def tracer(frame, event, arg):
        return local if frame.f_code.co_filename == host_pool.__file__ else None

    def scenario():
        a = gb.add(x, 1, backend="numpy")
        b = gb.add(x, 2, backend="numpy")
        del a, b                                   # two free blocks (their tickets, queued by CPython)
        pool.set_limit(x.nbytes)                   # taken back, trimmed to one block
        c = gb.add(x, 3, backend="numpy")          # which is reused
        del c                                      # and returned
        d = gb.add(x, 4, backend="numpy")          # taken back by this lend itself, and reused
        del d
        pool.free_bytes()
        pool.n_free_blocks()
        pool.set_limit(0)                          # every block dropped
        pool.set_limit(host_pool.DEFAULT_LIMIT)
        pool.free_all_blocks()

    hook, sys.unraisablehook = sys.unraisablehook, unraisable.append   # a callback's exception is unraisable
    sys.settrace(tracer)
    try:
        scenario()
    except KeyboardInterrupt:
        surfaced.append(line)
    finally:
        sys.settrace(None)
        sys.unraisablehook = hook
    gc.collect()
    assert fired == surfaced == [line] and unraisable == []
    pool.free_bytes()                              # takes back what the scenario freed: nothing stays lent
    assert pool._lent == {} and not pool._returned
    assert pool.free_bytes() == sum(b[0].nbytes for free in pool._blocks.values() for b in free)
    pool.set_limit(3 * x.nbytes)                   # never fails on what the interruption left
    again = [gb.add(x, k, backend="numpy") for k in range(4)]
    assert [float(a[0, 0, 0]) for a in again] == [1.0, 2.0, 3.0, 4.0]
    del again
    assert pool.free_bytes() == pool.n_free_blocks() * x.nbytes <= 3 * x.nbytes
    pool.set_limit(0)
    assert pool.free_bytes() == 0
    pool.free_all_blocks()


def _numpy_bytes() -> int:
    """Bytes of array data that NumPy allocated and still holds, as tracemalloc traces them."""
    traces = tracemalloc.take_snapshot().filter_traces([tracemalloc.DomainFilter(True, np.lib.tracemalloc_domain)])
    return sum(t.size for t in traces.traces)


def test_a_ctrl_c_pending_when_an_output_dies_reaches_the_caller_and_its_block_comes_back(pool, monkeypatch):
    # One C call makes SIGINT pending (``_thread.interrupt_main``) and then drops the last reference
    # to a pool output, so the first Python code to run after the output dies receives the
    # KeyboardInterrupt.  In a Python weak-reference callback CPython drops it as "unraisable" and
    # the lease stays lent for good (852472c: 200 lost interrupts, 200 stale leases, no block back).
    monkeypatch.setattr(host_pool, "MIN_BYTES", host_pool.PAGE)      # small blocks: 200 lost ones are 12.8 MiB
    x = np.ones(16 * 1024, np.float32)                               # 64 KiB: one block
    call = operator.methodcaller("__call__")
    surfaced, unraisable, n = 0, [], 200
    handler = signal.signal(signal.SIGINT, signal.default_int_handler)
    hook, sys.unraisablehook = sys.unraisablehook, unraisable.append
    tracemalloc.start()
    try:
        for i in range(n):
            holder = [gb.add(x, np.float32(i), backend="numpy")]
            assert pooled(holder[0]) and holder[0][0] == i + 1
            if i == 0:
                before = _numpy_bytes()                              # x's one block, lent
            try:
                collections.deque(map(call, (_thread.interrupt_main, holder.clear)), maxlen=0)
                len(holder)                                          # a line that receives the pending signal
            except KeyboardInterrupt:
                surfaced += 1
        assert (surfaced, unraisable) == (n, [])
        assert pool.n_free_blocks() == 1 and pool.free_bytes() == x.nbytes   # the one block, reused 200 times
        assert pool._lent == {}                                      # nothing stays lent
        assert _numpy_bytes() < before + 4096                        # nothing else holds a block (a page of slack)
    finally:
        tracemalloc.stop()
        sys.unraisablehook = hook
        signal.signal(signal.SIGINT, handler)


def test_blocks_of_freed_outputs_beyond_the_limit_are_released_by_the_next_allocation(pool):
    # The pool takes blocks back at its next operation; an allocation of any size is one, so memory
    # the limit does not let it keep is freed there, not held until the next large output.
    pool.set_limit(BIG_BYTES * 3 // 2)                  # room for one BIG block
    tracemalloc.start()
    try:
        x = np.ones(BIG, np.float32)
        outs = [gb.add(x, i) for i in range(3)]
        held = _numpy_bytes()
        del outs
        small = gb.add(np.ones(10, np.float32), 1)      # not from the pool, yet it takes the three blocks back
        assert held - _numpy_bytes() > 2 * x.nbytes - 4096                   # two of them freed (a page of slack)
        assert pool.n_free_blocks() == 1 and small[0] == 2
        larger = gb.add(np.ones((2, *BIG), np.float32), 1)                   # 2 BIG: over the limit
        assert not pooled(larger) and larger.flags.owndata
    finally:
        tracemalloc.stop()
