"""Parallel CPU ops under ``multiprocessing`` (fork, forkserver, spawn) and many threads at once.

Each case runs in a subprocess with a timeout: a child killed by GNU OpenMP leaves a pool that never
returns, and that must fail the test, not hang the suite.  The parent first runs ops large enough
for the parallel drivers (``backends.numba.backend.PARALLEL_MIN`` elements), twice each (the second call takes
``prepare``'s runner, which a forked child inherits), as a data loader's parent would.
"""

import importlib.metadata
import json
import multiprocessing
import os
import subprocess
import sys
import textwrap

import pytest

#: seconds before a hung pool fails its test (a passing case takes a few)
TIMEOUT = 60

SCRIPT = textwrap.dedent("""
    import json, multiprocessing, sys
    from concurrent.futures import ThreadPoolExecutor

    import numba
    import numpy as np

    import gpubcast as gb
    from gpubcast.backends.numba import backend as numba_backend

    A = np.arange(512 * 512, dtype=np.float32).reshape(512, 512) / 7
    ROWS = np.linspace(-3, 3, 256 * 1024, dtype=np.float32).reshape(256, 1024)
    ROW = np.linspace(1, 2, 1024, dtype=np.float32)
    affine = gb.fuse(lambda x, s, b, c: x * s + b - c)      # four inputs: drive_n's runner

    def work(k):
        '''Large ops (each twice: the general path, then the prepared runner) equal to NumPy's.'''
        k = np.float32(k)
        ok = True
        for _ in range(2):
            ok &= np.array_equal(gb.add(A, A + k), A + (A + k))
            ok &= np.array_equal(gb.subtract(A.T, A + k), A.T - (A + k))    # a transposed input: the full walk
            ok &= np.array_equal(gb.multiply(ROWS, ROW), ROWS * ROW)
            ok &= np.allclose(affine(ROWS, ROW, k, ROWS), ROWS * ROW + k - ROWS, rtol=1e-6, atol=1e-5)
        return bool(ok), getattr(numba_backend, "_FORKED_FROM_OMP", None), numba.threading_layer()

    if __name__ == "__main__":
        mode = sys.argv[1]
        parent = work(0)
        if mode == "threads":
            with ThreadPoolExecutor(16) as ex:
                children = list(ex.map(work, range(16)))
        else:
            with multiprocessing.get_context(mode).Pool(2) as pool:
                children = pool.map(work, range(4))
        print(json.dumps({"parent": parent, "children": children}))
""")


@pytest.fixture(scope="module")
def script(tmp_path_factory):
    path = tmp_path_factory.mktemp("fork_threads") / "large_ops.py"
    path.write_text(SCRIPT)
    return path


def _run(script, mode, layer=None):
    """The script's report: {"parent": (ok, forked from omp, layer), "children": [...]}."""
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_THREADING_LAYER"}
    if layer:
        env["NUMBA_THREADING_LAYER"] = layer
    try:
        run = subprocess.run([sys.executable, str(script), mode], capture_output=True, text=True,
                             timeout=TIMEOUT, env=env)
    except subprocess.TimeoutExpired as e:
        stderr = e.stderr.decode(errors="replace") if isinstance(e.stderr, bytes) else e.stderr
        pytest.fail(f"{mode} with layer {layer or 'default'} hung for {TIMEOUT} s; stderr:\n{stderr}")
    assert run.returncode == 0, run.stderr
    return json.loads(run.stdout.splitlines()[-1])


def _tbb_installed() -> bool:
    try:
        importlib.metadata.distribution("tbb")
        return True
    except importlib.metadata.PackageNotFoundError:
        return False


@pytest.mark.parametrize("method", [m for m in ("fork", "forkserver", "spawn")
                                    if m in multiprocessing.get_all_start_methods()])
def test_a_pool_of_each_start_method_runs_large_ops_after_the_parent_did(script, method):
    report = _run(script, method)
    assert report["parent"][0] and all(ok for ok, _, _ in report["children"])
    layer = report["parent"][2]
    if method == "fork" and layer != "omp":  # a fork-safe layer: the children run in parallel too
        assert not any(forked_from_omp for _, forked_from_omp, _ in report["children"])


@pytest.mark.skipif(not _tbb_installed(), reason="the tbb distribution is not installed (no wheel here)")
def test_the_default_layer_is_tbb_where_the_tbb_wheel_is_installed(script):
    report = _run(script, "fork")
    assert report["parent"][2] == "tbb"
    assert [layer for _, _, layer in report["children"]] == ["tbb"] * 4
    # Numba's own parallel code after ``import gpubcast`` (before any gpubcast op) gets TBB as well
    env = {k: v for k, v in os.environ.items() if k != "NUMBA_THREADING_LAYER"}
    run = subprocess.run([sys.executable, "-c", "import gpubcast, numba; numba.get_num_threads(); "
                          "print(numba.threading_layer())"], capture_output=True, text=True, timeout=TIMEOUT, env=env)
    assert run.stdout.strip() == "tbb", run.stderr


def test_sixteen_threads_running_large_ops_at_once_get_right_values(script):
    report = _run(script, "threads")
    assert report["parent"][0] and len(report["children"]) == 16
    assert all(ok for ok, _, _ in report["children"])


@pytest.mark.skipif(not hasattr(os, "fork"), reason="no fork here")
def test_a_forked_child_of_an_openmp_parent_runs_serially_with_right_values(script):
    # The user's choice of OpenMP is kept; GNU OpenMP would kill the child at its first parallel
    # region, so the child runs the serial drivers.
    report = _run(script, "fork", layer="omp")
    assert report["parent"] == [True, False, "omp"]
    assert report["children"] == [[True, True, "omp"]] * 4



@pytest.mark.skipif(not _tbb_installed(), reason="the tbb distribution is not installed (no wheel here)")
def test_the_library_is_found_through_the_distributions_files_outside_the_environments_lib(monkeypatch):
    from gpubcast.backends import threading_layer
    monkeypatch.setattr(sys, "prefix", "/nonexistent")   # e.g. a --user install
    found = [p for p in threading_layer._candidates() if os.path.isfile(p)]
    assert found and os.path.basename(found[0]) == threading_layer.LIBRARY


def test_info_reports_the_layer_in_use_and_what_it_means():
    import numba

    from gpubcast.backends import threading_layer
    line = threading_layer.describe()
    layer = numba.threading_layer()
    assert line.startswith(f"{layer}, {numba.get_num_threads()} threads (")
    assert line.endswith(threading_layer.SAFETY[layer])
