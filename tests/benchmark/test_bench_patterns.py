"""The pattern suite and the peers: the shapes the issue asks for, each peer computing what
NumPy computes on every pattern, and the runner's handling of failing or wrong peers."""

import math

import numpy as np
import pytest

from gpubcast.bench import patterns
from gpubcast.bench.patterns import BY_NAME, PATTERNS, Case, make_cases
from gpubcast.bench.peers import Gpubcast, OnnxRuntime, discover, numpy_peer, onnx_model
from gpubcast.bench.runner import Settings, WrongResult, agrees, reference, run_case, run_suite, sample

MiB = 2**20
QUICK = Settings(repeat=2, min_sample_s=0.0, sets=2)


def test_cpu_large_shapes_are_the_numba_issue_table():
    table = {
        "same": ((2**25,), (2**25,)),
        "row": ((8192, 4096), (4096,)),
        "column": ((8192, 4096), (8192, 1)),
        "nchw": ((128, 64, 56, 56), (1, 64, 1, 1)),
        "outer": ((8192, 1), (1, 4096)),
        "rank6": ((8, 1, 16, 1, 32, 64), (1, 12, 1, 24, 32, 1)),
        "transposed": ((4096, 4096), (4096, 4096)),
    }
    for name, shapes in table.items():
        assert BY_NAME[name].shapes("large", "cpu") == shapes
    assert BY_NAME["scalar"].shapes("tiny", "cpu") == ((4,), (1,))
    assert BY_NAME["transposed"].transposed == (0,)


@pytest.mark.parametrize("pattern", PATTERNS, ids=lambda p: p.name)
def test_sizes_are_bandwidth_bound_and_tiny_is_tiny(pattern):
    assert pattern.traffic(pattern.shapes("large", "gpu"), np.float32) >= 256 * MiB
    assert 64 * MiB <= pattern.traffic(pattern.shapes("large", "cpu"), np.float32) <= 512 * MiB
    assert math.prod(pattern.out_shape(pattern.tiny)) <= 64


def test_suite_covers_every_op_and_rule_the_issue_names():
    assert [p.name for p in PATTERNS] == ["same", "scalar", "row", "column", "nchw", "outer", "rank6",
                                          "transposed", "pdpd", "explicit", "expand", "where", "sum4", "axpb"]
    assert {(p.op, p.rule) for p in PATTERNS} == {("add", "numpy"), ("add", "pdpd"), ("copy", "explicit"),
                                                  ("copy", "bidirectional"), ("where", "numpy"), ("sum", "numpy"),
                                                  ("axpb", "numpy")}
    assert BY_NAME["axpb"].shapes("large", "cpu") == ((1, 64, 1, 1), (128, 64, 56, 56), (1, 64, 1, 1))
    assert len(BY_NAME["sum4"].tiny) == 4


def test_aligned_shapes_are_what_a_numpy_user_writes():
    assert BY_NAME["pdpd"].aligned(((2, 3, 2, 2), (3, 2))) == ((2, 3, 2, 2), (1, 3, 2, 1))
    assert BY_NAME["explicit"].aligned(((3, 2), (2, 3, 2, 2))) == ((1, 3, 1, 2),)
    assert BY_NAME["row"].aligned(((2, 4), (4,))) == ((2, 4), (4,))
    assert BY_NAME["expand"].out_shape(((3, 1), (2, 1, 4))) == (2, 3, 4)
    assert BY_NAME["explicit"].out_shape(((3, 2), (2, 3, 2, 2))) == (2, 3, 2, 2)


def test_select_and_size_errors_name_the_choices():
    assert [p.name for p in patterns.select(["where", "row"])] == ["row", "where"]
    with pytest.raises(ValueError, match="unknown pattern.*nope.*choose from same, scalar"):
        patterns.select(["nope"])
    with pytest.raises(ValueError, match="unknown size 'huge'"):
        BY_NAME["row"].shapes("huge", "cpu")


def _cpu_peers():
    peers, _ = discover()
    return [p for p in peers if p.device == "cpu"]


@pytest.mark.parametrize("dtype", ["float32", "int32"])
@pytest.mark.parametrize("pattern", PATTERNS, ids=lambda p: p.name)
def test_every_cpu_peer_computes_numpys_result(pattern, dtype):
    """The numbers the benchmark times are the right numbers: each peer's full result equals
    NumPy's own broadcasting (np.broadcast_to of each operand, then the plain op)."""
    shapes = pattern.tiny
    for peer in _cpu_peers():
        case = make_cases(pattern, shapes, dtype, sets=1)[0]
        if peer.name == "onnxruntime" and pattern.op == "sum" and dtype == "int32":
            with pytest.raises(Exception, match="tensor.int32.*Sum.*invalid"):  # ONNX Sum: floats only
                peer.bind(pattern, shapes, case)
            continue
        if peer.name.startswith("gpubcast-") and pattern.op == "sum" and dtype == "int32":
            # gpubcast's variadic sum as users call it is ONNX Sum, floats only (the suite lists it skipped)
            with pytest.raises(TypeError, match="Sum: tensor.int32. input .* not allowed by type constraint T"):
                peer.bind(pattern, shapes, case)[0]()
            continue
        call, _ = peer.bind(pattern, shapes, case)
        got = np.asarray(call())
        out = pattern.out_shape(shapes)
        views = [np.broadcast_to(x.reshape(s), out) for x, s in zip(case.inputs, pattern.aligned(shapes))]
        if pattern.op == "where":
            want = np.where(*views)
        elif pattern.op in ("add", "sum"):
            want = sum(views[1:], views[0])
        elif pattern.op == "axpb":
            want = views[0] * views[1] + views[2]
        else:
            want = views[0]
        assert got.shape == out and got.dtype == np.dtype(dtype), peer.name
        np.testing.assert_allclose(got, want, rtol=1e-6, err_msg=peer.name)


def test_onnxruntime_runs_with_iobinding_and_valid_models():
    import onnx
    ort = OnnxRuntime(threads=2)
    assert ort.iobinding and "IOBinding" in ort.note
    for p in PATTERNS:
        onnx.checker.check_model(onnx.load_from_string(onnx_model(p, p.tiny, np.float32)), full_check=True)


def test_peers_footnote_what_they_cannot_express():
    np_peer, ort = numpy_peer(), OnnxRuntime()
    for name, expect_np, expect_ort in [("pdpd", "reshaped", "reshaped"), ("explicit", "reshaped", "reshaped"),
                                        ("where", "no out=", None), ("sum4", "in-place adds", None),
                                        ("transposed", None, "contiguous on every call"), ("row", None, None),
                                        ("axpb", "two ops", "two nodes")]:
        p = BY_NAME[name]
        case = make_cases(p, p.tiny, np.float32, sets=1)[0]
        for peer, expect in ((np_peer, expect_np), (ort, expect_ort)):
            note = peer.bind(p, p.tiny, case)[1]
            assert (note is None) if expect is None else (expect in note), (name, peer.name, note)
        note = Gpubcast("numpy", "cpu", np, "g").bind(p, p.tiny, case)[1]
        assert ("ElementwiseKernel" in note) if name == "axpb" else note is None


def test_agrees_and_sample():
    x = np.arange(10_000, dtype=np.float32)
    s = sample(x)
    assert s[0] == 0 and len(s) <= 2 * 4096 and np.all(np.diff(s) > 0)
    assert agrees(s, s.copy()) and not agrees(s, s + 1) and not agrees(s, s.astype(np.float64))
    assert agrees(np.float32([1.0]), np.float32([1.0 + 1e-7]))
    assert not agrees(np.int32([1]), np.int32([2]))


class _Wrong:
    name, label, device, xp, note = "wrong", "Wrong", "cpu", np, None

    def bind(self, pattern, shapes, case):
        return (lambda: np.zeros(pattern.out_shape(shapes), np.float32)), None


class _Broken(_Wrong):
    name, label = "broken", "Broken"

    def bind(self, pattern, shapes, case):
        raise RuntimeError("cannot bind")


def test_run_case_rejects_a_wrong_result():
    p = BY_NAME["row"]
    host = patterns.host_operands(p, p.tiny, np.float32)
    cases = make_cases(p, p.tiny, np.float32, sets=2, host=host)
    with pytest.raises(WrongResult, match="differs from NumPy's on row"):
        run_case(_Wrong(), p, p.tiny, cases, reference(p, p.tiny, np.float32, host), QUICK)
    first, timing, note = run_case(numpy_peer(), p, p.tiny, cases, reference(p, p.tiny, np.float32, host), QUICK)
    assert first > 0 and timing.median_s > 0 and len(timing.samples) == 2 and note is None


def test_run_suite_skips_failing_peers_and_goes_on():
    seen = []
    records, skipped = run_suite(patterns.select(["row", "where"]), ("tiny",), [numpy_peer(), _Wrong(), _Broken()],
                                 np.float32, QUICK, {"cpu": {"gbps": 10.0}}, seen.append)
    assert [(r["pattern"], r["backend"]) for r in records] == [("row", "numpy"), ("where", "numpy")]
    assert {(s["pattern"], s["backend"]) for s in skipped} == {(p, b) for p in ("row", "where")
                                                               for b in ("wrong", "broken")}
    assert any("RuntimeError: cannot bind" in s["reason"] for s in skipped)
    assert len(seen) == 6 and seen[0] == "row tiny NumPy"
    r = records[0]
    assert r["gbps"] == pytest.approx(r["bytes"] / r["seconds_median"] / 1e9)
    assert r["fraction_of_ceiling"] == pytest.approx(r["gbps"] / 10.0)
    assert r["speedup_vs_numpy"] == 1.0 and r["speedup_vs_cupy"] is None


def test_cases_in_other_dtypes():
    p = BY_NAME["where"]
    case = make_cases(p, p.tiny, "float16", sets=1)[0]
    assert [x.dtype for x in case.inputs] == [np.dtype(bool), np.float16, np.float16]
    assert case.out.dtype == np.float16 and isinstance(case, Case)
