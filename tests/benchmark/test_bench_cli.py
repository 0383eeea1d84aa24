"""``python -m gpubcast bench`` end to end (tiny size), its JSON against the shipped schema,
its PNG, behaviour without a GPU, bad arguments; and ``python -m gpubcast info``."""

import contextlib
import io
import json
import subprocess
import sys

import jsonschema
import numpy as np
import pytest

import gpubcast.cache
import gpubcast.info
from gpubcast.__main__ import main
from gpubcast.bench import report
from gpubcast.bench.patterns import PATTERNS

from tests.support import ROOT

SCHEMA = json.loads((ROOT / "gpubcast" / "bench" / "schema.json").read_text())
PNG_SIGNATURE = b"\x89PNG\r\n\x1a\n"


@pytest.fixture(scope="module")
def quick_run(tmp_path_factory):
    """One real ``bench --quick --size tiny --json --plot`` run, with the GPU reported absent
    (so the no-GPU behaviour is tested on every machine)."""
    tmp = tmp_path_factory.mktemp("bench")
    json_path, png_path = tmp / "r.json", tmp / "r.png"
    buffer = io.StringIO()
    with pytest.MonkeyPatch.context() as mp, contextlib.redirect_stdout(buffer):
        mp.setattr(gpubcast.info, "gpu_info", lambda: (None, "no GPU in this test"))
        rc = main(["bench", "--quick", "--size", "tiny", "--json", str(json_path), "--plot", str(png_path)])
    return rc, buffer.getvalue(), json.loads(json_path.read_text()), png_path


def test_quick_run_succeeds_and_prints_the_table(quick_run):
    rc, out, doc, _ = quick_run
    assert rc == 0
    assert "tiny (per-call latency), float32" in out
    for column in ("median", "GB/s", "of ceiling", "vs NumPy", "first call"):
        assert column in out
    for p in PATTERNS:
        assert p.name in out
    assert "CPU ceiling:" in out and "wrote" in out


def test_json_validates_against_the_shipped_schema(quick_run):
    _, _, doc, _ = quick_run
    jsonschema.validate(doc, SCHEMA)
    assert SCHEMA == report.schema()   # the one the package ships is the one in the tree
    bad = json.loads(json.dumps(doc))
    del bad["records"][0]["gbps"]
    with pytest.raises(jsonschema.ValidationError):
        report.validate(bad)


def test_json_records_are_complete_and_consistent(quick_run):
    _, _, doc, _ = quick_run
    records = doc["records"]
    backends = {r["backend"] for r in records}
    assert {"numpy", "onnxruntime"} <= backends
    assert backends & {"gpubcast-numba", "gpubcast-numpy"}
    ceiling = doc["ceilings"]["cpu"]["gbps"]
    assert doc["skipped"] == []   # float32: every backend runs every pattern
    assert doc["math"] == []      # the math table runs at the large size unless named (test_bench_math.py)
    for backend in backends:
        assert [r["pattern"] for r in records if r["backend"] == backend] == [p.name for p in PATTERNS]
    for r in records:
        assert r["size"] == "tiny" and r["dtype"] == "float32" and r["device"] == "cpu"
        assert r["gbps"] == pytest.approx(r["bytes"] / r["seconds_median"] / 1e9)
        assert r["fraction_of_ceiling"] == pytest.approx(r["gbps"] / ceiling)
        assert r["seconds_median"] == pytest.approx(float(np.median(r["seconds_samples"])))
        assert len(r["seconds_samples"]) == 5 and r["first_call_seconds"] > 0
    numpy_row = next(r for r in records if r["backend"] == "numpy" and r["pattern"] == "row")
    assert numpy_row["shape"] == [2, 4] and numpy_row["operands"] == [[2, 4], [4]]
    assert numpy_row["bytes"] == (8 + 4 + 8) * 4 and numpy_row["speedup_vs_numpy"] == 1.0


def test_without_a_gpu_the_gpu_columns_are_absent_and_one_line_says_why(quick_run):
    _, out, doc, _ = quick_run
    why = [line for line in out.splitlines() if line.startswith("No GPU:")]
    assert len(why) == 1 and "no GPU in this test" in why[0]
    assert "vs CuPy" not in out
    assert doc["device"]["gpu"] is None and doc["device"]["gpu_absent_reason"] == "no GPU in this test"
    assert "gpu" not in doc["ceilings"] and doc["absent"]["gpu"] == "no GPU in this test"
    assert all(r["device"] == "cpu" for r in doc["records"])
    assert not {"cupy", "gpubcast-cuda", "torch"} & set(doc["backends"])


def test_plot_is_a_real_png(quick_run):
    import matplotlib.image
    _, _, _, png_path = quick_run
    data = png_path.read_bytes()
    assert data[:8] == PNG_SIGNATURE
    image = matplotlib.image.imread(png_path)
    height, width = image.shape[:2]
    assert 300 <= height <= 2000 and 800 <= width <= 3000 and image.shape[2] in (3, 4)
    assert image.std() > 0.01   # not a blank canvas


def test_filters_and_a_large_run(tmp_path, capsys):
    """--patterns / --backends / --size large / --repeat / --dtype, and a plot with the ceiling."""
    rc = main(["bench", "--quick", "--size", "large", "--patterns", "outer", "--backends", "numpy",
               "--repeat", "2", "--dtype", "float64", "--json", str(tmp_path / "r.json"),
               "--plot", str(tmp_path / "r.png")])
    assert rc == 0
    doc = json.loads((tmp_path / "r.json").read_text())
    jsonschema.validate(doc, SCHEMA)
    [r] = doc["records"]
    assert (r["pattern"], r["backend"], r["size"], r["dtype"]) == ("outer", "numpy", "large", "float64")
    assert r["shape"] == [8192, 4096] and r["bytes"] == (8192 + 4096 + 8192 * 4096) * 8
    assert len(r["seconds_samples"]) == 2
    assert (tmp_path / "r.png").read_bytes()[:8] == PNG_SIGNATURE
    assert "large (bandwidth), float64" in capsys.readouterr().out


@pytest.mark.parametrize("argv, message", [
    (["--patterns", "row,nope"], "unknown pattern(s) nope; choose from same"),
    (["--backends", "numpy,tensorflow"], "unknown backend(s) tensorflow; choose from numpy"),
    (["--dtype", "float33"], "--dtype 'float33' is not a NumPy dtype name"),
    (["--repeat", "0"], "--repeat and --sets must be at least 1"),
])
def test_bad_arguments_exit_2_with_a_clear_message(argv, message, capsys):
    assert main(["bench", "--quick", "--size", "tiny", *argv]) == 2
    assert message in capsys.readouterr().out


def test_module_entry_point_lists_bench_and_info_reports():
    out = subprocess.run([sys.executable, "-m", "gpubcast", "bench", "--help"], capture_output=True, text=True,
                         cwd=ROOT, check=True, timeout=120).stdout
    for option in ("--quick", "--json", "--plot", "--size", "--patterns", "--backends", "--repeat", "--dtype"):
        assert option in out
    info = subprocess.run([sys.executable, "-m", "gpubcast", "info"], capture_output=True, text=True, cwd=ROOT,
                          check=True, timeout=120).stdout
    assert "backends:" in info and "numpy        available" in info
    assert info.count("GPU: ") == 1 and "CPU: " in info
    assert f"cache of compiled code: {gpubcast.cache.root() / gpubcast.__version__}" in info
    assert "compiled hot path: gpubcast.native.hot_call, built " in info
    gpu, why = gpubcast.info.gpu_info()
    assert (f"GPU: none ({why})" in info) if gpu is None else (gpu["name"] in info)


def test_info_helpers():
    found = gpubcast.info.backends_found()
    assert found["numpy"] is None and set(found) == {"numpy", "numba", "cuda"}
    assert gpubcast.info.versions()["numpy"] == np.__version__
    assert gpubcast.info._cuda_version(12040) == "12.4" and gpubcast.info._cuda_version(13000) == "13.0"
    assert gpubcast.info.cpu_info()["cores"] >= 1


def test_fused_chains(tmp_path, capsys):
    """--patterns fused-*: only the fused chains, each against the same chain op by op and NumPy,
    values in the JSON document (schema-valid), the speed-ups printed."""
    rc = main(["bench", "--quick", "--size", "tiny", "--patterns", "fused-affine,fused-where", "--repeat", "2",
               "--json", str(tmp_path / "f.json")])
    assert rc == 0
    doc = json.loads((tmp_path / "f.json").read_text())
    jsonschema.validate(doc, SCHEMA)
    assert doc["records"] == []
    got = {(r["chain"], r["backend"]) for r in doc["fused"]}
    for chain in ("affine", "where"):
        assert {(chain, "gpubcast fused"), (chain, "gpubcast op by op"), (chain, "numpy op by op")} <= got
    assert all(r["median_s"] > 0 and r["size"] == "tiny" for r in doc["fused"])
    out = capsys.readouterr().out
    assert "affine tiny: gpubcast fused is" in out and "x numpy op by op" in out
    assert main(["bench", "--quick", "--size", "tiny", "--patterns", "fused-nope"]) == 2
    assert "unknown fused chain(s) nope" in capsys.readouterr().out


def test_a_default_backend_that_cannot_load_is_reported_and_numpy_arrays_still_compute():
    # Numba broken (an import that fails): info says so and why, and calls take the NumPy reference
    # after one warning, instead of failing on every NumPy array.
    code = ("import sys; sys.modules['numba'] = None\n"
            "import warnings, numpy as np, gpubcast as gb\n"
            "from gpubcast import info\n"
            "with warnings.catch_warnings(record=True) as caught:\n"
            "    warnings.simplefilter('always')\n"
            "    print(gb.add(np.arange(3.0), 1).tolist(), gb.exp(np.zeros(2)).tolist())\n"
            "print(len(caught), caught[0].category.__name__, 'cannot load' in str(caught[0].message))\n"
            "info.run(None)\n")
    run = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert run.returncode == 0, run.stderr
    lines = run.stdout.splitlines()
    assert lines[0] == "[1.0, 2.0, 3.0] [1.0, 1.0]" and lines[1] == "1 RuntimeWarning True"
    assert "  numba        unavailable: does not import (ModuleNotFoundError" in run.stdout
    assert "default CPU backend: numpy (numba cannot load: ModuleNotFoundError" in run.stdout


def test_small_calls_table_has_every_row_with_its_peer(quick_run):
    """``--size tiny`` measures the small calls (gpubcast/bench/calls.py) next to their peers in one run."""
    from gpubcast.bench import calls

    _, out, doc, _ = quick_run
    assert "Small calls" in out
    rows = {(r.call, r.peer) for r in calls.rows()}
    got = {(r["call"], r["peer"]) for r in doc["calls"]}
    assert got == rows
    for r in doc["calls"]:
        assert r["gpubcast_s"] > 0
        assert (r["peer_s"] is None) == (r["ratio"] is None) == (r["peer"] == "")
        if r["ratio"] is not None:
            assert r["ratio"] == pytest.approx(r["gpubcast_s"] / r["peer_s"])
