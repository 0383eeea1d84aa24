"""The thread pool parallel walks run on (gpubcast/backends/numba/pool.py, ``drive_parallel`` in
gpubcast/native/hot_call.cpp): every chunk runs exactly once, from many Python threads at once, after
a fork, on every path (the general path, a prepared runner, the compiled hot path), and without the
compiled module the Numba parallel drivers give the same values."""

from __future__ import annotations

import os
import subprocess
import sys
import threading

import numpy as np
import pytest

import gpubcast as gb
import gpubcast.onnx as gx
from gpubcast.backends.numba import backend as numba_backend, drivers, pool

N = 4 * numba_backend.PARALLEL_MIN   # a parallel walk of several chunks per thread

pytestmark = pytest.mark.skipif(not pool.available(), reason="no compiled module: no pool")


@pytest.fixture
def pool_only(monkeypatch):
    """Numba's parallel drivers raise: a parallel walk that does not take the pool fails the test."""
    def numba_prange(*args):
        raise AssertionError("a parallel walk took Numba's prange drivers, not the pool")
    monkeypatch.setattr(drivers, "drive_parallel", numba_prange)
    monkeypatch.setattr(drivers, "drive_n_parallel", numba_prange)


def test_every_chunk_runs_exactly_once_in_place(pool_only):
    """x += 1 in place, 60 times, on the general, prepared and compiled paths: a chunk run twice (or
    skipped) would show as a wrong count."""
    x = np.zeros((N // 64, 64), np.float32)
    for _ in range(60):
        gb.add(x, 1.0, out=x)
    assert np.all(x == 60)


@pytest.mark.parametrize("shape", [(N,), (N // 100, 100), (100, N // 100)])
def test_parallel_sizes_equal_numpy_on_every_call(shape, pool_only):
    rng = np.random.default_rng(1)
    a, b = rng.standard_normal(shape).astype(np.float32), rng.standard_normal(shape[-1:]).astype(np.float32)
    for _ in range(4):
        np.testing.assert_array_equal(gb.multiply(a, b), a * b)
        np.testing.assert_array_equal(gb.subtract(a.T, 2.0), a.T - np.float32(2.0))   # a transposed walk
        np.testing.assert_array_equal(gx.Sum(a, a, b, a), ((a + a) + b) + a)            # variadic


def test_many_python_threads_share_the_pool(pool_only):
    """8 threads, each its own arrays, 40 parallel calls each: a caller finding the pool busy runs its
    chunks itself; every result is right."""
    errors = []

    def work(k):
        x = np.full(N, k, np.float64)
        try:
            for i in range(40):
                y = gb.add(x, float(i))
                if not np.all(y == k + i):
                    errors.append((k, i))
        except Exception as e:  # noqa: BLE001 - reported by the assertion below
            errors.append(repr(e))
    threads = [threading.Thread(target=work, args=(k,)) for k in range(8)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(timeout=120)
    assert not any(t.is_alive() for t in threads), "a thread hung"
    assert errors == []


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork")
def test_a_forked_child_makes_its_own_workers():
    """The parent's workers are not in a forked child: its first parallel call makes them again
    (a child that waited on the parent's workers would hang)."""
    x = np.arange(N, dtype=np.float64)
    gb.add(x, 1.0)     # the parent's pool started
    r, w = os.pipe()
    pid = os.fork()
    if pid == 0:   # the child: compute, report, exit without running the parent's atexit
        try:
            ok = all(np.array_equal(gb.add(x, float(i)), x + i) for i in range(5))
            os.write(w, b"1" if ok else b"0")
        finally:
            os._exit(0)
    os.close(w)
    try:
        import select
        ready, _, _ = select.select([r], [], [], 60)
        assert ready, "the forked child hung"
        assert os.read(r, 1) == b"1"
    finally:
        os.waitpid(pid, 0)
        os.close(r)


def test_without_the_compiled_module_numbas_parallel_drivers_give_the_same_values(tmp_path):
    code = ("import numpy as np, gpubcast as gb\n"
            "from gpubcast.backends.numba import pool\n"
            "assert not pool.available()\n"
            f"x = np.arange({N}, dtype=np.float32)\n"
            "for i in range(3): assert np.array_equal(gb.add(x, 2.0), x + np.float32(2)), i\n"
            "print('ok')\n")
    env = dict(os.environ, GPUBCAST_COMPILED_CALLS="0")
    done = subprocess.run([sys.executable, "-c", code], env=env, capture_output=True, text=True, timeout=600)
    assert done.returncode == 0 and done.stdout.strip() == "ok", done.stderr[-2000:]


def test_heavy_ops_split_sooner_than_cheap_ones():
    """A transcendental (tanh, a math function, an activation using exp) runs on every thread from
    PARALLEL_MIN_HEAVY elements; add from PARALLEL_MIN (the thresholds the pool's measurements chose)."""
    from gpubcast import ops
    be, f32 = gb.backends.get("numba"), np.dtype(np.float32)
    lo, hi = numba_backend.PARALLEL_MIN_HEAVY, numba_backend.PARALLEL_MIN
    assert lo < hi
    for name, arity in (("tanh", 1), ("sin", 1), ("gelu", 1), ("power", 2)):
        spec = be.spec(ops.get(name), (f32,) * arity, f32)
        assert spec.parallel(lo) and not spec.parallel(lo - 1), name
    add = be.spec(ops.get("add"), (f32, f32), f32)
    assert add.parallel(hi) and not add.parallel(hi - 1)
    x = np.linspace(-3, 3, lo, dtype=np.float32)
    for _ in range(3):   # values on every path at the heavy threshold
        np.testing.assert_allclose(gb.tanh(x), np.tanh(x), rtol=3e-7, atol=1e-7)
