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
    assert order == [0, 1, 2, 0, 1]   # warm-up over every set, then one call per sample, still rotating
    assert len(_Event.recorded) == 2 * 3 and t.calls_per_sample == 1 and len(t.samples) == 2


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
