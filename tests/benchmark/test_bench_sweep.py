"""The size sweep (``gpubcast/bench/sweep.py``, issues 42 and 43): the scaled shapes of every
pattern, the CPU sweep's records (timing stubbed where the numbers are asserted), the libraries
that are absent or fail, the tables, the plot, the JSON under the shipped schema, and the CLI
(``--sweep``; part of the default run).  The GPU sweep's paths: tests/benchmark/test_bench_gpu_paths.py."""

import contextlib
import dis
import io
import json
import math
import sys
import types

import jsonschema
import numpy as np
import pytest
from rich.console import Console

import gpubcast.info
from gpubcast.__main__ import main
from gpubcast.bench import measure, patterns, report, sweep
from gpubcast.bench.cli import _sweep_devices, sweep_plot_path

from tests.support import ROOT

SCHEMA = json.loads((ROOT / "gpubcast" / "bench" / "schema.json").read_text())
DEVICE = {"cpu": {"model": "test", "cores": 2}, "gpu": None, "gpu_absent_reason": "test", "versions": {}}
SMALL = (4**5, 4**6)


def _document(sweep_part):
    return {"device": DEVICE, "ceilings": {}, "records": [], "sweep": sweep_part}


def _render(renderable) -> str:
    console = Console(file=io.StringIO(), width=200, color_system=None)
    console.print(renderable)
    return console.file.getvalue()


@pytest.mark.parametrize("pattern", patterns.PATTERNS, ids=lambda p: p.name)
def test_scaled_shapes_keep_the_patterns_broadcasts_at_every_sweep_size(pattern):
    fixed = pattern.gpu
    fixed_out = pattern.out_shape(fixed)
    for n in sweep.GPU_SIZES:
        shapes = patterns.scaled(pattern, n)
        out = pattern.out_shape(shapes)                      # the rule accepts them
        assert math.prod(out) == n and len(out) == len(fixed_out), (n, shapes)
        assert [len(s) for s in shapes] == [len(s) for s in fixed]
        for got, want in zip(pattern.aligned(shapes), pattern.aligned(fixed)):
            # a dim the fixed shapes broadcast stays broadcast (1), and each operand that is
            # smaller than the output there is smaller here too
            assert all(g == 1 for g, w in zip(got, want) if w == 1), (n, shapes)
            if math.prod(want) < math.prod(fixed_out):
                assert math.prod(got) < n, (n, shapes)


def test_sweep_sizes_are_the_issues_and_bad_sizes_are_refused():
    assert [sweep.size_text(n, "cpu") for n in sweep.CPU_SIZES] == ["1K", "4K", "16K", "64K", "256K", "1M", "4M",
                                                                     "16M"]
    assert [sweep.size_text(n, "gpu") for n in (sweep.GPU_SIZES[0], sweep.GPU_SIZES[-1])] == ["4KB", "1GB"]
    assert set(sweep.CPU_QUICK) < set(sweep.CPU_SIZES) and set(sweep.GPU_QUICK) < set(sweep.GPU_SIZES)
    for bad in (4**5 * 2, 4**4, 1000):
        with pytest.raises(ValueError, match="power of 4 of at least 1024"):
            patterns.scaled(patterns.BY_NAME["row"], bad)


def _fake_timings(monkeypatch, per_element_ns: dict):
    """measure.time_host stubbed: each library's calls take ``per_element_ns[library]`` ns per element
    (the library told by the closure's name), samples [t, 2t]."""
    def time_host(calls, *, repeat, min_sample_s):
        lib, n = time_host.current
        t = per_element_ns[lib] * n * 1e-9
        return measure.Timing(1.5 * t, (t, 2 * t), 1)
    real = sweep._time_library

    def timed(lib, case, host, expected, *rest):
        time_host.current = (lib.name, math.prod(np.broadcast_shapes(*(x.shape for x in host))))
        return real(lib, case, host, expected, *rest)
    monkeypatch.setattr(sweep.measure, "time_host", time_host)
    monkeypatch.setattr(sweep, "_time_library", timed)


def test_cpu_records_hold_each_librarys_best_time_and_gpubcasts_speed(monkeypatch):
    libraries, _ = sweep.cpu_libraries(["gpubcast", "numpy"])
    _fake_timings(monkeypatch, {"gpubcast": 1.0, "numpy": 3.0})
    records, skipped = sweep.run_cpu(SMALL, libraries=libraries)
    assert skipped == []
    assert [(r["pattern"], r["elements"]) for r in records] == [(c.name, n) for c in sweep.CPU_CASES for n in SMALL]
    for r in records:
        n = r["elements"]
        assert r["seconds"] == pytest.approx({"gpubcast": n * 1e-9, "numpy": 3 * n * 1e-9})   # the best sample
        assert r["seconds_median"] == pytest.approx({"gpubcast": 1.5 * n * 1e-9, "numpy": 4.5 * n * 1e-9})
        assert r["speedup"] == pytest.approx({"numpy": 3.0}) and r["best_peer"] == "numpy"
        assert r["speedup_vs_best_peer"] == pytest.approx(3.0)
        assert r["gbps"]["gpubcast"] == pytest.approx(r["bytes"] / r["seconds"]["gpubcast"] / 1e9)
        assert math.prod(np.broadcast_shapes(*map(tuple, r["operands"]))) == n
    row = next(r for r in records if r["pattern"] == "row" and r["elements"] == 4096)
    assert row["operands"] == [[64, 64], [64]] and row["bytes"] == (4096 + 64 + 4096) * 4
    fused = next(r for r in records if r["pattern"] == "fused" and r["elements"] == 1024)
    assert fused["operands"] == [[32], [32, 32], [32]]


def test_every_cpu_library_computes_numpys_values_and_allocates_its_output():
    libraries, absent = sweep.cpu_libraries()
    assert {lib.name for lib in libraries} | set(absent) == set(sweep.CPU_LIBRARIES)
    assert {"gpubcast", "numpy"} <= {lib.name for lib in libraries}
    for case in sweep.CPU_CASES:
        host = sweep._operands(case, 4096)
        low, high = case.domain
        assert all(x.dtype == np.float32 and low <= x.min() and x.max() < high for x in host)
        c, k = 0.7978845608028654, 0.044715
        want = {"same": lambda x, y: x + y, "row": lambda x, b: x + b, "fused": lambda s, x, b: s * x + b,
                "tanh": np.tanh, "exp": np.exp, "sigmoid": lambda x: 1 / (1 + np.exp(-x)),
                "gelu": lambda x: 0.5 * x * (1 + np.tanh(c * (x + k * x**3)))}[case.name](
                    *(h.astype(np.float64) for h in host))
        for lib in libraries:
            call = lib.bind(case, host)
            assert "CALL_FUNCTION_EX" not in {i.opname for i in dis.get_instructions(call)}   # f(a, b), no f(*xs)
            got = lib.to_numpy(call())
            assert got.dtype == np.float32 and got.shape == want.shape, lib.name
            assert not any(np.shares_memory(got, h) for h in host), lib.name        # its own output
            np.testing.assert_allclose(got, want, rtol=2e-6, atol=1e-6, err_msg=f"{lib.name} {case.name}")


def test_absent_peers_are_reported_and_the_sweep_runs_without_them(monkeypatch):
    monkeypatch.setitem(sys.modules, "torch", None)     # import torch raises ImportError
    monkeypatch.setitem(sys.modules, "jax", None)
    libraries, absent = sweep.cpu_libraries()
    assert [lib.name for lib in libraries] == ["gpubcast", "numpy"]
    assert set(absent) == {"torch", "jax"}
    assert all(why.startswith(("ImportError", "ModuleNotFoundError")) for why in absent.values()), absent
    records, skipped = sweep.run_cpu((1024,), cases=[sweep.CPU_BY_NAME["tanh"]], libraries=libraries, repeat=1,
                                     sets=1, min_sample_s=0.0)
    assert skipped == [] and set(records[0]["seconds"]) == {"gpubcast", "numpy"}


class _Failing:
    def __init__(self, name, result=None):
        self.name, self.label, self.result = name, name, result
        self.to_numpy = np.asarray

    def bind(self, case, xs):
        if self.result is None:
            raise RuntimeError(f"{self.name} cannot run {case.name}")
        return lambda: self.result(xs)


def test_a_library_that_fails_or_computes_wrong_values_is_skipped_and_the_others_run():
    gb, numpy_lib = sweep.cpu_libraries(["gpubcast", "numpy"])[0]
    wrong = _Failing("wrong", lambda xs: np.zeros(np.broadcast_shapes(*(x.shape for x in xs)), np.float32))
    records, skipped = sweep.run_cpu((1024,), cases=[sweep.CPU_BY_NAME["same"]],
                                     libraries=[gb, numpy_lib, _Failing("broken"), wrong], repeat=1, sets=1,
                                     min_sample_s=0.0)
    [r] = records
    assert set(r["seconds"]) == {"gpubcast", "numpy"} and r["best_peer"] == "numpy"
    reasons = {s["backend"]: s["reason"] for s in skipped}
    assert reasons["broken"] == "RuntimeError: broken cannot run same"
    assert reasons["wrong"].startswith("ValueError: wrong computes a result that differs from NumPy's on same")
    assert all(s["device"] == "cpu" and s["elements"] == 1024 for s in skipped)


def test_a_point_without_gpubcast_has_no_speed():
    timing = measure.Timing(2e-6, (2e-6,), 1)
    r = sweep.record("cpu", "same", "t", 1024, [[1024], [1024]], 12288, {"numpy": timing})
    assert r["speedup"] == {} and r["speedup_vs_best_peer"] is None and r["best_peer"] == "numpy"
    r = sweep.record("cpu", "same", "t", 1024, [[1024], [1024]], 12288, {"gpubcast": timing})
    assert r["best_peer"] is None and r["speedup_vs_best_peer"] is None


def _sweep_part(records, devices=("cpu",)):
    return {"dtype": "float32", "quick": True, "devices": list(devices), "sizes": {"cpu": list(SMALL), "gpu": []},
            "libraries": {"cpu gpubcast": "g", "cpu numpy": "n"}, "absent": {"cpu torch": "not installed"},
            "records": records, "skipped": [], "seconds": 1.0}


def _points():
    t = lambda s: measure.Timing(s, (s,), 1)
    return [sweep.record("cpu", "same", "same-shape add", 1024, [[1024], [1024]], 12288,
                         {"gpubcast": t(2e-6), "numpy": t(1e-6), "torch": t(4e-6)}),
            sweep.record("cpu", "same", "same-shape add", 4096, [[4096], [4096]], 49152,
                         {"gpubcast": t(2e-6), "numpy": t(3e-6)}),
            sweep.record("gpu", "row", "row", 1024, [[32, 32], [32]], 8320,
                         {"gpubcast": t(5e-6), "cupy": t(10e-6), "torch": t(8e-6)})]


def test_tables_show_ns_per_element_on_the_cpu_and_us_and_gbps_on_the_gpu():
    part = _sweep_part(_points(), ("cpu", "gpu"))
    cpu, gpu = report.sweep_tables(part)
    assert [c.header for c in cpu.columns] == ["pattern", "elements", "gpubcast", "numpy", "torch", "fastest other",
                                               "speed"]
    assert [c.header for c in gpu.columns] == ["pattern", "output", "gpubcast", "cupy", "torch", "fastest other",
                                               "speed"]
    text = _render(cpu)
    assert "ns per element" in text and "1.95" in text and "0.977" in text      # 2 us / 1024 elements etc.
    assert "0.50×" in text and "1.50×" in text and "—" in text                  # torch absent at 4K
    assert cpu.rows[0].style == "red" and cpu.rows[1].style is None           # behind at 1K: red
    text = _render(gpu)
    assert "5 µs, 1.66" in text and "2.00×" not in text and "1.60×" in text   # 8320 B / 5 us; vs torch's 8 us
    assert sweep.behind(part["records"], "cpu") == ["same@1K"] and sweep.behind(part["records"], "gpu") == []


def test_plot_is_a_png_with_a_panel_per_pattern_and_the_crossover(tmp_path):
    import matplotlib.image
    path = tmp_path / "s.png"
    report.plot_sweep(_sweep_part(_points(), ("cpu", "gpu")), path)
    assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n"
    image = matplotlib.image.imread(path)
    assert image.shape[0] > 300 and image.shape[1] > 1000 and image.std() > 0.01
    assert sweep_plot_path(str(tmp_path / "r.png")) == str(tmp_path / "r-sweep.png")


def test_json_validates_and_the_schema_rejects_a_bad_point():
    document = _document(_sweep_part(_points(), ("cpu", "gpu")))
    report.validate(document)
    jsonschema.validate(_document(None), SCHEMA)
    for spoil in (lambda d: d["sweep"]["records"][0].pop("seconds"),
                  lambda d: d["sweep"]["records"][0]["speedup"].update(numpy=-1.0),
                  lambda d: d["sweep"]["records"][0].update(device="tpu"),
                  lambda d: d["sweep"].update(dtype="float64")):
        bad = json.loads(json.dumps(document))
        spoil(bad)
        with pytest.raises(jsonschema.ValidationError):
            report.validate(bad)


@pytest.mark.parametrize("argv, devices", [
    ([], ("cpu",)),                                   # the default run includes the sweep
    (["--quick"], ("cpu",)),
    (["--no-sweep"], ()),
    (["--size", "tiny"], ()),
    (["--patterns", "row"], ()),
    (["--backends", "numpy"], ()),
    (["--dtype", "float64"], ()),
    (["--sweep"], ("cpu",)),
    (["--sweep", "cpu"], ("cpu",)),
])
def test_which_runs_include_the_sweep(argv, devices):
    import argparse

    from gpubcast.bench.cli import _dtype, configure
    parser = argparse.ArgumentParser()
    configure(parser)
    args = parser.parse_args(argv)
    names = args.patterns or []
    assert _sweep_devices(args, names, _dtype(args.dtype), None) == devices
    assert _sweep_devices(args, names, _dtype(args.dtype), {"name": "gpu"}) == \
        (devices + ("gpu",) if devices and (not args.sweep or args.sweep == "all") else devices)


@pytest.mark.parametrize("argv, message", [
    (["--sweep", "gpu"], "--sweep gpu needs a GPU"),
    (["--sweep", "--patterns", "row"], "--sweep runs the size sweep alone"),
    (["--sweep", "--dtype", "float64"], "the size sweep runs float32"),
])
def test_bad_sweep_arguments_exit_2_with_a_clear_message(argv, message, capsys, monkeypatch):
    monkeypatch.setattr(gpubcast.info, "gpu_info", lambda: (None, "no GPU in this test"))
    assert main(["bench", "--quick", *argv]) == 2
    assert message in capsys.readouterr().out


def test_cli_sweep_alone_writes_its_table_json_and_plot(tmp_path, monkeypatch):
    """``bench --sweep --quick --json --plot`` (the quick sizes made small): the sweep alone, torch and
    JAX reported absent, the JSON valid, the plot at --plot's path."""
    monkeypatch.setattr(sweep, "CPU_QUICK", SMALL)
    monkeypatch.setitem(sys.modules, "torch", None)
    monkeypatch.setitem(sys.modules, "jax", None)
    monkeypatch.setattr(gpubcast.info, "gpu_info", lambda: (None, "no GPU in this test"))
    buffer = io.StringIO()
    with contextlib.redirect_stdout(buffer):
        rc = main(["bench", "--sweep", "--quick", "--repeat", "1", "--sets", "1", "--json", str(tmp_path / "s.json"),
                   "--plot", str(tmp_path / "s.png")])
    out = buffer.getvalue()
    assert rc == 0, out
    doc = json.loads((tmp_path / "s.json").read_text())
    jsonschema.validate(doc, SCHEMA)
    assert doc["records"] == [] and doc["calls"] == [] and doc["fused"] == [] and doc["math"] == []
    assert doc["ceilings"] == {}                               # the suite's ceilings: not measured for the sweep
    part = doc["sweep"]
    assert part["devices"] == ["cpu"] and part["quick"] is True and part["sizes"]["cpu"] == list(SMALL)
    assert {(r["pattern"], r["elements"]) for r in part["records"]} == {(c.name, n) for c in sweep.CPU_CASES
                                                                         for n in SMALL}
    assert all(set(r["seconds"]) == {"gpubcast", "numpy"} for r in part["records"])
    assert set(part["absent"]) == {"cpu torch", "cpu jax"}
    assert "size sweep: cpu torch not run" in out and "Size sweep CPU (float32): ns per element" in out
    assert "size sweep CPU: " in out and f"wrote {tmp_path / 's.png'}" in out
    assert (tmp_path / "s.png").read_bytes()[:4] == b"\x89PNG"
    assert not (tmp_path / "s-sweep.png").exists()


@pytest.mark.parametrize("library", ["torch", "jax"])
def test_an_installed_peer_runs_in_the_sweep(library, monkeypatch):
    """Where PyTorch or JAX is installed, it runs every case (CI has neither: skipped there)."""
    pytest.importorskip(library)
    [lib], absent = sweep.cpu_libraries([library])
    assert absent == {} and lib.name == library
    records, skipped = sweep.run_cpu((1024,), libraries=[*sweep.cpu_libraries(["gpubcast"])[0], lib], repeat=1,
                                     sets=1, min_sample_s=0.0)
    assert skipped == [] and all(set(r["seconds"]) == {"gpubcast", library} for r in records)
    assert all(r["speedup_vs_best_peer"] > 0 and r["best_peer"] == library for r in records)


def test_fake_module_peer_is_used_when_present(monkeypatch):
    """A stand-in ``torch`` (from_numpy / add / addcmul / tanh / exp / sigmoid / gelu on NumPy) goes
    through the torch library's own spellings, so its code path runs where PyTorch is not installed."""
    fake = types.SimpleNamespace(
        __version__="0.0-test", get_num_threads=lambda: 2, from_numpy=lambda x: types.SimpleNamespace(a=x),
        add=lambda x, y: _Tensor(x.a + y.a), tanh=lambda x: _Tensor(np.tanh(x.a)),
        addcmul=lambda b, s, x: _Tensor(b.a + s.a * x.a), exp=lambda x: _Tensor(np.exp(x.a)),
        sigmoid=lambda x: _Tensor(1 / (1 + np.exp(-x.a))),
        nn=types.SimpleNamespace(functional=types.SimpleNamespace(gelu=_fake_gelu)))
    monkeypatch.setitem(sys.modules, "torch", fake)
    [lib], absent = sweep.cpu_libraries(["torch"])
    assert absent == {} and lib.label.startswith("PyTorch 0.0-test CPU (2 threads")
    records, skipped = sweep.run_cpu((1024,), libraries=[lib], repeat=1, sets=1, min_sample_s=0.0)
    assert skipped == [] and [set(r["seconds"]) for r in records] == [{"torch"}] * len(sweep.CPU_CASES)


def _fake_gelu(x, approximate):
    assert approximate == "tanh"
    a = x.a
    return _Tensor(0.5 * a * (1 + np.tanh(np.float32(0.7978845608028654) * (a + np.float32(0.044715) * a * a * a))))


class _Tensor:
    def __init__(self, a):
        self.a = a

    def numpy(self):
        return self.a
