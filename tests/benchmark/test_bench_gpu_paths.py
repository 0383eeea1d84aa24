"""The benchmark's GPU code paths.

Without a GPU they run against a stand-in ``cupy`` (NumPy arrays, host-clock events), which
checks the plumbing: device grouping, CUDA-event timing with rotation, synchronisation,
speed-ups against CuPy, the "vs CuPy" column and the GPU ceiling line in the plot.  With a
GPU (``gpu`` marker) the real CLI runs on it.
"""

import json
import sys
import time
import types

import numpy as np
import pytest

from gpubcast.__main__ import main
from gpubcast.bench import fused, measure, patterns, report
from gpubcast.bench.peers import cupy_peer, numpy_peer
from gpubcast.bench.runner import Settings, run_suite


class _Event:
    recorded = []

    def record(self, stream=None):
        self.t = time.perf_counter()
        _Event.recorded.append(self)

    def synchronize(self):
        pass


def _fuse(*function, kernel_name=None):
    """cupy.fuse, called or as a decorator with ``kernel_name=``.  The kernel is named after the function:
    a name that is no C identifier fails to compile (a lambda's '<lambda>' did, on an H100)."""
    def wrap(f):
        name = kernel_name or f.__name__
        assert name.isidentifier(), f"cupy.fuse would name its kernel {name!r}: NVRTC rejects that"
        return f
    return wrap(*function) if function else wrap


@pytest.fixture
def fake_cupy(monkeypatch):
    syncs = []
    cuda = types.SimpleNamespace(
        Event=_Event, get_elapsed_time=lambda start, stop: (stop.t - start.t) * 1e3,
        Device=lambda: types.SimpleNamespace(synchronize=lambda: syncs.append(1)),
        get_current_stream=lambda: types.SimpleNamespace(synchronize=lambda: syncs.append(1)),
        is_available=lambda: True)
    fake = types.SimpleNamespace(
        cuda=cuda, add=np.add, where=np.where, copyto=np.copyto, array=np.array, empty=np.empty, asarray=np.asarray,
        fuse=_fuse,
        get_default_memory_pool=lambda: types.SimpleNamespace(free_all_blocks=lambda: None))
    monkeypatch.setitem(sys.modules, "cupy", fake)
    _Event.recorded.clear()
    return syncs


def test_time_cuda_brackets_batches_with_events_and_rotates(fake_cupy):
    order = []
    t = measure.time_cuda([lambda k=k: order.append(k) for k in range(3)], repeat=2, min_sample_s=0.0)
    assert order == [0, 1, 2, 0, 1, 2, 0, 1]   # warm-up and estimate over every set, then a call per sample
    assert len(_Event.recorded) == 2 * 4 and t.calls_per_sample == 1 and len(t.samples) == 2


def test_gpu_group_records_speedups_and_table(fake_cupy, tmp_path):
    gpu_peer = cupy_peer()
    assert (gpu_peer.name, gpu_peer.device) == ("cupy", "gpu")
    ceilings = {"cpu": {"gbps": 10.0, "method": "m"}, "gpu": {"gbps": 1000.0, "method": "d2d"}}
    records, skipped = run_suite(patterns.select(["row", "where"]), ("tiny", "large"), [numpy_peer(), gpu_peer],
                                 np.float32, Settings(repeat=2, min_sample_s=0.0, sets=2), ceilings)
    assert skipped == []
    assert fake_cupy, "the first GPU call must be synchronised before it is timed"
    gpu = [r for r in records if r["device"] == "gpu"]
    assert {(r["pattern"], r["size"]) for r in gpu} == {(p, s) for p in ("row", "where") for s in ("tiny", "large")}
    large_row = next(r for r in gpu if r["pattern"] == "row" and r["size"] == "large")
    assert large_row["operands"] == [[16384, 4096], [4096]]   # the GPU's large shapes
    assert large_row["fraction_of_ceiling"] == pytest.approx(large_row["gbps"] / 1000.0)
    for r in records:
        cupy_r = next(c for c in gpu if (c["pattern"], c["size"]) == (r["pattern"], r["size"]))
        assert r["speedup_vs_cupy"] == pytest.approx(r["gbps"] / cupy_r["gbps"])
    tables, notes = report.tables({"records": records, "device": {"gpu": {"name": "fake"}}})
    assert all("vs CuPy" in [c.header for c in t.columns] for t in tables)
    assert any("cupy.where has no out=" in n for n in notes)
    document = {"records": records, "ceilings": ceilings}
    report.plot(document, tmp_path / "p.png")
    assert (tmp_path / "p.png").read_bytes()[:4] == b"\x89PNG"


def test_fused_chains_on_the_gpu_path(fake_cupy):
    """The fused chains' GPU runners: gpubcast's CUDA backend fused and op by op, CuPy op by op and
    cupy.fuse, each timed with events and compared in the speed-up lines."""
    records = fused.run("tiny", gpu=True, repeat=2, sets=2, min_sample_s=0.0, chains=fused.select(["affine"]))
    gpu = {r["backend"] for r in records if r["device"] == "gpu"}
    assert gpu == {"gpubcast cuda fused", "gpubcast cuda op by op", "cupy op by op", "cupy.fuse"}
    lines = fused.speedups(records)
    for peer in ("gpubcast cuda op by op", "cupy op by op", "cupy.fuse"):
        assert any(line.startswith("affine tiny: gpubcast cuda fused is") and line.split("x ", 1)[1].startswith(peer)
                   for line in lines), (peer, lines)


@pytest.mark.gpu
def test_cli_on_a_gpu(tmp_path, capsys):
    rc = main(["bench", "--quick", "--size", "tiny", "--patterns", "row,where,sum4,explicit,fused-gelu",
               "--json", str(tmp_path / "r.json")])
    assert rc == 0
    doc = json.loads((tmp_path / "r.json").read_text())
    assert doc["device"]["gpu"]["name"] and doc["ceilings"]["gpu"]["gbps"] > 100
    assert {r["backend"] for r in doc["records"] if r["device"] == "gpu"} >= {"cupy"}
    assert "vs CuPy" in capsys.readouterr().out


def test_gpu_sweep_runs_every_pattern_at_each_size_with_events(fake_cupy, tmp_path):
    """The GPU sweep's plumbing (stand-in CuPy on NumPy arrays): every pattern at the sizes asked, each
    GPU peer timed with events, gpubcast's name normalised, speed-ups against each peer, a valid JSON
    part, the GPU table and plot."""
    from gpubcast.bench import sweep
    from gpubcast.bench.peers import Gpubcast

    cupy = sys.modules["cupy"]
    gpu_peers = [Gpubcast("cuda", "gpu", cupy, "gpubcast CUDA", default=True), cupy_peer()]
    sizes = (4**5, 4**6)
    records, skipped = sweep.run_gpu([numpy_peer(), *gpu_peers], sizes, settings=Settings(1, 0.0, 2))
    # the stand-in has no ElementwiseKernel: CuPy's axpb is skipped with the reason, the rest run
    assert [(s["pattern"], s["backend"], s["elements"]) for s in skipped] == [("axpb", "cupy", n) for n in sizes]
    assert all("ElementwiseKernel" in s["reason"] for s in skipped)
    assert [(r["pattern"], r["elements"]) for r in records] == [(p.name, n) for p in patterns.PATTERNS for n in sizes]
    assert _Event.recorded and fake_cupy                      # CUDA events, synchronised first calls
    for r in records:
        if r["pattern"] == "axpb":
            assert set(r["seconds"]) == {"gpubcast"} and r["speedup_vs_best_peer"] is None
            continue
        assert r["device"] == "gpu" and set(r["seconds"]) == {"gpubcast", "cupy"}
        assert r["speedup"]["cupy"] == pytest.approx(r["seconds"]["cupy"] / r["seconds"]["gpubcast"])
        assert r["best_peer"] == "cupy" and r["operands"] == [list(s) for s in patterns.scaled(
            patterns.BY_NAME[r["pattern"]], r["elements"])]
        assert r["bytes"] == patterns.BY_NAME[r["pattern"]].traffic(tuple(map(tuple, r["operands"])), np.float32)
    part = {"dtype": "float32", "quick": True, "devices": ["gpu"], "sizes": {"gpu": list(sizes)},
            "libraries": {"gpu gpubcast": "g", "gpu cupy": "c"}, "absent": {}, "records": records, "skipped": []}
    report.validate({"device": {"cpu": {"model": "t", "cores": 2}, "gpu": {"name": "fake", "memory_gib": 1.0,
                                                                          "compute_capability": "90", "driver": "1"},
                                "gpu_absent_reason": None, "versions": {}},
                     "ceilings": {}, "records": [], "sweep": part})
    [table] = report.sweep_tables(part)
    assert [c.header for c in table.columns][:4] == ["pattern", "output", "gpubcast", "cupy"]
    report.plot_sweep(part, tmp_path / "g.png")
    assert (tmp_path / "g.png").read_bytes()[:4] == b"\x89PNG"


class _Delegating(types.ModuleType):
    """A module whose own attributes are ``own`` and every other one the real module's."""

    def __init__(self, name, real, **own):
        super().__init__(name)
        self._real = real
        self.__dict__.update(own)

    def __getattr__(self, name):
        return getattr(self._real, name)


def test_gpu_sweep_on_the_virtual_device(monkeypatch):
    """gpubcast's real CUDA backend (the virtual device: every launch checked, run by the host
    emulation) in the GPU sweep at its smallest size, against CuPy's calls on the same arrays: the
    results agree with NumPy's (or the run skips them), so the sweep's gpubcast path works end to end.
    The timing's CUDA events are host-clock stand-ins (the real CuPy for everything else: NVRTC)."""
    from gpubcast.bench import sweep
    from gpubcast.bench.peers import Gpubcast, _array_module_peer
    from gpubcast.testing import device, virtual

    why = device.virtual_unavailable()
    if why:
        pytest.skip(f"no virtual CUDA device here: {why}")
    import cupy as real
    idle = types.SimpleNamespace(synchronize=lambda: None)
    cuda = _Delegating("cupy.cuda", real.cuda, Event=_Event, Device=lambda: idle, get_current_stream=lambda: idle,
                       get_elapsed_time=lambda start, stop: (stop.t - start.t) * 1e3)
    monkeypatch.setitem(sys.modules, "cupy", _Delegating("cupy", real, cuda=cuda, get_default_memory_pool=lambda:
                                                         types.SimpleNamespace(free_all_blocks=lambda: None)))
    _Event.recorded.clear()
    with virtual.installed() as cp:
        launches = len(cp.launches)
        gpu_peers = [Gpubcast("cuda", "gpu", cp, "gpubcast CUDA", default=True),
                     _array_module_peer("cupy", "CuPy", "gpu", cp)]
        records, skipped = sweep.run_gpu(gpu_peers, (4**5,), patterns=patterns.select(["row", "where", "explicit"]),
                                         settings=Settings(1, 0.0, 1))
        assert skipped == []
        assert len(cp.launches) > launches                    # gpubcast's calls launched kernels on the device
    assert [r["pattern"] for r in records] == ["row", "explicit", "where"] and _Event.recorded
    assert all(set(r["seconds"]) == {"gpubcast", "cupy"} and r["speedup_vs_best_peer"] > 0 for r in records)
