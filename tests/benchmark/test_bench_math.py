"""The benchmark's math table (``gpubcast/bench/functions.py``, issue #22) and the fused swish chain:
every new unary function and activation has a row, each NumPy expression computes the op's own
reference on inputs inside its domain, the table runs at tiny sizes into schema-valid JSON, goals are
marked only at the large size, and the CLI selects rows with ``--patterns math-...``."""

import json

import jsonschema
import numpy as np
import pytest

from gpubcast import ops
from gpubcast.__main__ import main
from gpubcast.bench import functions, fused, report

from tests.support import ROOT

SCHEMA = json.loads((ROOT / "gpubcast" / "bench" / "schema.json").read_text())
DEVICE = {"cpu": {"model": "test", "cores": 2}, "gpu": None, "gpu_absent_reason": "test", "versions": {}}


def _document(**parts):
    return {"device": DEVICE, "ceilings": {}, "records": [], **parts}


def test_every_new_unary_function_and_activation_has_a_row():
    new_unary = {n for n, op in ops.REGISTRY.items() if op.kind == "unary" and "math" in op.tags}
    activations = {n for n, op in ops.REGISTRY.items() if "activation" in op.tags}
    unary_rows = [f.op for f in functions.FUNCTIONS if f.layout == "unary"]
    assert len(unary_rows) == len(set(unary_rows))
    assert set(unary_rows) == new_unary | activations
    assert {"sin", "arccosh", "cbrt", "gelu", "gelu_tanh", "leaky_relu", "shrink"} <= set(unary_rows)
    binary = {(f.op, f.layout) for f in functions.FUNCTIONS if f.layout != "unary"}
    assert binary == {(op, layout) for op in ("hypot", "arctan2") for layout in ("outer", "row")}
    assert all(f.goal == (1.5 if f.layout == "unary" else 2.0) for f in functions.FUNCTIONS)
    assert functions.BY_NAME["gelu_tanh"].title == "gelu(x, approximate='tanh')"


@pytest.mark.parametrize("f", functions.FUNCTIONS, ids=lambda f: f.name)
def test_numpy_expression_computes_the_ops_reference_inside_the_domain(f):
    shapes = ((4096,),) if f.layout == "unary" else f.shapes("tiny")
    xs = functions.operands(f, shapes, np.float32)
    low, high = f.domain
    assert all(x.dtype == np.float32 and (x >= low).all() and (x <= high).all() for x in xs)
    o = np.empty(np.broadcast_shapes(*shapes), ops.get(f.op).resolve((np.dtype(np.float32),) * len(xs))[1])
    got = f.numpy_call()(xs[0], xs[1] if len(xs) > 1 else None, o)
    params = [value for _, value in ops.ACTIVATIONS.get(f.op, (None, ()))[1]]
    expected = ops.get(f.op).reference(*xs, *params)
    assert got.dtype == expected.dtype and got.shape == expected.shape
    if got.dtype == bool:
        assert 0 < got.sum() < got.size or f.op in ("isnan", "isinf", "isfinite")  # finite inputs: one answer
        np.testing.assert_array_equal(got, expected)
        return
    assert np.isfinite(got).all()                                         # the inputs are inside the domain
    tol = 1e-3 if f.name == "gelu" else 2e-6                              # gelu: NumPy's row is the tanh form
    np.testing.assert_allclose(got, expected, rtol=tol, atol=tol)
    if f.name == "gelu":
        assert np.abs(got - expected).max() > 1e-5                        # really a different function


def test_operands_are_seeded():
    f = functions.BY_NAME["hypot-outer"]
    a, b = functions.operands(f, f.shapes("tiny"), np.float32), functions.operands(f, f.shapes("tiny"), np.float32)
    assert all(np.array_equal(x, y) for x, y in zip(a, b)) and a[0].shape == (4, 1) and a[1].shape == (1, 8)
    assert not np.array_equal(functions.operands(f, f.shapes("tiny"), np.float32, seed=1)[0], a[0])
    assert f.shapes("large") == ((2048, 1), (1, 4096)) and f.shapes("large", quick=True) == ((1024, 1), (1, 2048))
    with pytest.raises(ValueError, match="unknown size 'huge'"):
        f.shapes("huge")


def test_the_table_at_tiny_has_every_row_and_validates():
    """Every row, on gpubcast's NumPy reference backend (nothing to compile), one sample each."""
    records, skipped = functions.run("tiny", backend="numpy", repeat=1, sets=2, min_sample_s=0.0)
    assert skipped == []
    assert [r["function"] for r in records] == [f.name for f in functions.FUNCTIONS]
    for r, f in zip(records, functions.FUNCTIONS):
        assert r["gpubcast_s"] > 0 and r["numpy_s"] > 0 and r["first_s"] > 0
        assert r["speedup"] == pytest.approx(r["numpy_s"] / r["gpubcast_s"])
        assert (r["goal"], r["met"], r["numpy"], r["layout"]) == (f.goal, None, f.numpy, f.layout)
        assert r["operands"] == [list(s) for s in f.shapes("tiny")] and r["elements"] == (64 if f.layout == "unary"
                                                                                           else 32)
        assert r["backend"] == "gpubcast-numpy" and r["dtype"] == "float32" and r["size"] == "tiny"
    assert functions.goal_lines(records) == []          # no goal at tiny
    jsonschema.validate(_document(math=records), SCHEMA)
    bad = json.loads(json.dumps(records))
    bad[0]["speedup"] = -1.0
    with pytest.raises(jsonschema.ValidationError):
        report.validate(_document(math=bad))


def test_goals_are_marked_at_the_large_size_and_not_under_quick(monkeypatch):
    small = {"unary": ((256,),), "outer": ((4, 1), (1, 8))}
    for layout, shapes in small.items():
        monkeypatch.setitem(functions.LAYOUTS, layout, {**functions.LAYOUTS[layout], "large": shapes, "quick": shapes})
    rows = functions.select(["sin", "hypot-outer"])
    records, _ = functions.run("large", backend="numpy", repeat=1, sets=1, min_sample_s=0.0, functions=rows)
    for r in records:
        assert r["met"] is (r["speedup"] >= r["goal"])
    lines = functions.goal_lines(records)
    assert len(lines) == 2 and lines[0].startswith("math goal, unary >= 1.5x NumPy: ")
    assert lines[1].startswith("math goal, broadcast hypot/arctan2 >= 2x NumPy: ")
    quick, _ = functions.run("large", quick=True, backend="numpy", repeat=1, sets=1, min_sample_s=0.0, functions=rows)
    assert [r["met"] for r in quick] == [None, None] and functions.goal_lines(quick) == []


def test_a_numpy_expression_that_computes_something_else_is_skipped_with_the_reason():
    wrong = functions.Function("sin", "sin", "np.cos(x, out=o)")
    records, skipped = functions.run("tiny", backend="numpy", repeat=1, sets=1, min_sample_s=0.0,
                                     functions=(wrong, functions.BY_NAME["cos"]))
    assert [r["function"] for r in records] == ["cos"]
    [s] = skipped
    assert s["pattern"] == "math-sin" and "differs from NumPy's np.cos(x, out=o)" in s["reason"]


def test_select_names_the_choices():
    assert functions.select([]) == functions.FUNCTIONS
    assert [f.name for f in functions.select(["hypot-row", "sin"])] == ["sin", "hypot-row"]
    with pytest.raises(ValueError, match=r"unknown math function\(s\) nope; choose from math \(all\), math-sin"):
        functions.select(["nope"])


def test_swish_chain_computes_x_times_sigmoid_for_every_peer():
    import gpubcast as gb
    [chain] = fused.select(["swish"])
    [x] = fused.inputs(chain, "tiny", "cpu", np.float32, sets=1)[0]
    expected = (x.astype(np.float64) / (1 + np.exp(-x.astype(np.float64)))).astype(np.float32)
    for got in (chain.make(np)(x), chain.make(gb)(x), gb.fuse(chain.make(gb))(x)):
        np.testing.assert_allclose(got, expected, rtol=1e-6, atol=1e-7)
    ort = pytest.importorskip("onnxruntime")
    session = ort.InferenceSession(fused._onnx_model(chain, chain.tiny, np.float32).SerializeToString(),
                                   providers=["CPUExecutionProvider"])
    np.testing.assert_allclose(session.run(None, {"x": x})[0], expected, rtol=1e-6, atol=1e-7)


@pytest.mark.parametrize("chain", fused.CHAINS, ids=lambda c: c.name)
def test_gpubcast_op_by_op_is_the_public_functions_a_user_calls(chain, monkeypatch):
    """The fused table's "gpubcast op by op" row times the chain as a user writes it op by op (each
    step gb.<op>, on the hot path once warm), not the fusion interpreter's general path."""
    from gpubcast import api, fusion
    xs = fused.inputs(chain, "tiny", "cpu", np.float32, sets=1)[0]
    run = fused.runners(chain, "tiny", 1, np.float32, gpu=False)["gpubcast op by op"][1](xs)
    monkeypatch.setattr(fusion, "evaluate", lambda *a, **k: pytest.fail("the fusion interpreter ran"))
    for _ in range(3):
        got = run()
    np.testing.assert_allclose(got, chain.make(np)(*xs), rtol=2e-6, atol=1e-6)
    calls = []
    monkeypatch.setattr(api, "apply", lambda *a, **k: calls.append(a))
    run()
    assert calls == []      # every step answered by the compiled hot path


def test_fused_goals_are_marked_at_the_large_size():
    records = [{"chain": "swish", "size": size, "backend": backend, "median_s": t}
               for size in ("tiny", "large") for backend, t in
               (("gpubcast fused", 1.0), ("numpy op by op", 2.5), ("numexpr", 0.9), ("gpubcast op by op", 3.0))]
    got = {(c["size"], c["peer"]): c for c in fused.comparisons(records)}
    assert got["large", "numpy op by op"]["speedup"] == 2.5 and got["large", "numpy op by op"]["met"] is True
    assert (got["large", "numexpr"]["goal"], got["large", "numexpr"]["met"]) == (1.0, False)
    assert got["large", "gpubcast op by op"]["goal"] is None and got["tiny", "numpy op by op"]["goal"] is None
    lines = fused.speedups(records)
    assert "swish large: gpubcast fused is 2.50x numpy op by op (1e+03 ms vs 2.5e+03 ms); goal (#22) >= 2x: met" \
        in lines
    assert any(line.endswith("goal (#22) >= 1x: NOT met") for line in lines)
    jsonschema.validate(_document(fused_goals=fused.comparisons(records)), SCHEMA)


def test_cli_runs_the_chosen_math_rows_and_the_swish_chain(tmp_path, capsys):
    path = tmp_path / "m.json"
    rc = main(["bench", "--quick", "--size", "tiny", "--patterns", "math-sin,math-leaky_relu,math-hypot-outer,"
               "fused-swish", "--repeat", "1", "--sets", "1", "--json", str(path)])
    out = capsys.readouterr().out
    assert rc == 0, out
    doc = json.loads(path.read_text())
    jsonschema.validate(doc, SCHEMA)
    assert doc["records"] == [] and doc["calls"] == []
    assert [r["function"] for r in doc["math"]] == ["sin", "leaky_relu", "hypot-outer"]
    assert all(r["gpubcast_s"] > 0 and r["numpy_s"] > 0 and r["met"] is None for r in doc["math"])
    assert {r["backend"] for r in doc["fused"]} >= {"gpubcast fused", "gpubcast op by op", "numpy op by op"}
    assert {r["chain"] for r in doc["fused"]} == {"swish"}
    assert all(c["goal"] is None for c in doc["fused_goals"]) and doc["fused_goals"]
    assert "Math functions (float32)" in out and "np.where(x >= 0, x, 0.01 * x)" in out
    assert "leaky_relu: NumPy composition: allocates" in out


@pytest.mark.parametrize("argv, message", [
    (["--patterns", "math-nope"], "unknown math function(s) nope"),
    (["--patterns", "math-sin", "--dtype", "int32"], "math table not run: it takes a float --dtype"),
])
def test_cli_math_errors_and_dtypes(argv, message, capsys):
    rc = main(["bench", "--quick", "--size", "tiny", "--repeat", "1", "--sets", "1", *argv])
    assert rc == (2 if "unknown" in message else 0)
    assert message in capsys.readouterr().out


def test_no_math_skips_the_table(tmp_path):
    path = tmp_path / "n.json"
    assert main(["bench", "--quick", "--size", "tiny", "--patterns", "math", "--no-math", "--no-fused",
                 "--backends", "numpy", "--repeat", "1", "--sets", "1", "--json", str(path)]) == 0
    doc = json.loads(path.read_text())
    assert doc["math"] == [] and doc["records"] == [] and doc["fused"] == []
