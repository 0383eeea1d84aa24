"""The static bandwidth model of the benchmark patterns (gpubcast.sass.model): an H100 model fed by
the SASS of the kernel each pattern launches. A model, +-15 %: nothing here is measured on a GPU."""

import json

import pytest

from gpubcast.sass import cubins, model, resources as res

WHY = cubins.unavailable()
needs_tools = pytest.mark.skipif(bool(WHY), reason=f"the model needs NVRTC, cuobjdump and nvdisasm: {WHY}")

#: patterns the model predicts below their goal today, {(name, dtype): why} (the gap; an entry comes out
#: when it is met; sum4's came out with the variadic folds' lane tiles, issue 23)
BELOW_GOAL: dict = {}


def _params(names, failing):
    return [pytest.param(n, dt, id=f"{n}-{dt}",
                         marks=[pytest.mark.xfail(strict=True, reason=failing[n, dt])] if (n, dt) in failing else [])
            for dt in ("float32", "float64") for n in names]


@needs_tools
@pytest.mark.parametrize("name, dtype", _params([p.name for p in model.patterns()], BELOW_GOAL))
def test_pattern_reaches_its_fraction_of_copy_bandwidth(name, dtype):
    r = model.predict(name, dtype)
    assert r.fraction >= r.goal, f"{name}: {r.fraction:.2f} of copy ({r.bound}-bound, {r.instr_per_elem} instr/elem)"


@needs_tools
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_every_pattern_has_a_path_through_its_kernel(dtype):
    for r in model.predict_all(dtype):
        assert r.instr_per_elem is not None, r.pattern
        assert r.rows == 1.0, f"{r.pattern}: tiles straddle innermost rows; the path is a lower bound"
        assert 0 < r.fraction <= 1.0 + 1e-9
        assert r.dtype == dtype and any(t in r.kernel for t in {"float32": (" f32 ", " 4 B "),
                                                                "float64": (" f64 ", " 8 B ")}[dtype]), r.kernel


def test_l1_lines_per_warp_access():
    # row tiles of 8 floats a thread: a warp spans 32 * 8 * 4 = 1024 bytes, 8 lines of 128
    C, X, S, V = model.launch.CONTIG, model.launch.STRIDED, model.launch.SCALAR, model.launch.VALUE

    def lines(cls, strides, shared=False, chunk=0, index32=False):
        return model.warp_lines(cls, 4, 8, strides, shared, chunk, False, index32)
    assert lines(C, (4096, 1)) == 2 * 8                   # two 16-byte vectors a thread
    assert lines(X, (0, 1)) == 8 * 8                      # (1, K) element by element (64-bit path)
    assert lines(X, (1, 0)) == 8 * 1                      # (M, 1): one address a warp access
    assert lines(X, (1, 4096)) == 8 * 32                  # transposed: a line a lane
    assert (lines(S, (0, 0)), lines(V, (0, 0))) == (1, 0)
    # outer (M,1)+(1,K) on the element paths, issue 23's count: 88 L1 requests per warp tile
    assert sum(lines(c, st) for c, st in ((C, (4096, 1)), (X, (1, 0)), (X, (0, 1)))) == 88
    # the 32-bit path: an input of innermost stride 1 takes vector loads, of stride 0 one load;
    # a strided output stores element by element
    assert lines(X, (0, 1), index32=True) == 2 * 8 and lines(X, (1, 0), index32=True) == 1
    assert lines(X, (1, 4096), index32=True) == 8 * 32
    assert model.warp_lines(X, 4, 8, (0, 1), False, 0, True, True) == 8 * 8
    assert sum(lines(c, st, index32=True) for c, st in ((C, (4096, 1)), (X, (1, 0)), (X, (0, 1)))) == 33
    # shared tiles: 4 threads a row of 32 columns, 8 rows a warp: a contiguous operand's vector
    # access covers 8 rows x 16 bytes, 8 lines; a staged operand moves whole lines
    assert lines(C, (8192, 1), shared=True) == 2 * 8
    assert lines(X, (1, 8192), shared=True, chunk=4) == 8


def test_reread_factor():
    # outer, shapes outermost first: (1, K) is re-read per row; K floats of 12 bytes an element
    # stay in L2, (M, 1) is one element at a time
    assert model.reread_factor((16384, 4096), (0, 1), 12.0) == 1
    assert model.reread_factor((16384, 4096), (1, 0), 12.0) == 1
    big = int(model.L2_SHARE // 4) + 1                       # a row of more bytes than L2's share
    assert model.reread_factor((16, big), (0, 1), 4.0) == 16
    assert model.reread_factor((16, big), (0, 1), 2.0) == 1
    assert model.reread_factor((3, 16, big), (0, 0, 1), 4.0) == 48


@needs_tools
def test_kernel_choice_follows_the_plan():
    assert model.predict("same").kernel == "add f32 contig" and model.predict("same").classes == "CCC"
    assert model.predict("scalar").classes == "CCS"           # a device element: one load per tile
    assert model.predict("rank6").rank == 6 and model.predict("rank6").kernel == "add f32 general32"
    assert model.predict("transposed").shared and not model.predict("row").shared
    assert model.predict("transposed").l2_bytes == model.predict("transposed").dram_bytes   # no sector waste
    assert model.predict("transposed").smem_bytes == 8 and model.predict("row").smem_bytes == 0  # in and out
    assert model.predict("sum4").kernel.startswith("sum 4x f32 general")
    assert model.predict("expand").kernel.startswith("copy 4 B general")


@needs_tools
def test_access_path_grows_with_rank_and_accesses():
    # the 64-bit path: a loop over dims (the 32-bit path's is unrolled: its walk takes the fewest dims)
    k = next(k for k in res.hot() if k.label == "add f32 general64")
    r = res.measure(k, "sm_90")
    instrs, labels, predicated = res.sass_of(k, "sm_90")

    def path(rank, acc):
        return res.access_path(instrs, labels, predicated, r.loop.start, r.loop.end, rank, acc)

    e = k.ept                                  # elements per thread: 128-bit accesses carry 4 floats
    mixed = {128: 2 * e // 4, 32: e}           # out and x1 vector, x2 element by element
    assert path(2, mixed) < path(6, mixed)
    assert path(6, {32: 3 * e}) == r.strided   # every operand element-wise: the rank-6 strided estimate
    assert path(6, {128: 3 * e // 4}) is not None and path(6, {64: 1}) is None


@needs_tools
def test_rank6_runs_at_most_40_instructions_per_element():
    assert model.predict("rank6").instr_per_elem <= 40


@needs_tools
def test_shared_loop_is_the_shared_tiles_loop():
    # the row tiles' loop (the steady loop) holds no barrier; the shared tiles' loop holds the
    # barriers and vector accesses on both sides (output and staged operand); a contiguous
    # kernel has no shared loop
    k = next(k for k in res.hot() if k.label == "add f32 general32")
    r = res.measure(k, "sm_90")
    instrs, labels, _ = res.sass_of(k, "sm_90")
    start, end = res.shared_loop(instrs, labels)

    def inside(a, b):
        return {i.opcode for i in instrs if a <= i.addr <= b and i.opcode.startswith(("LDG", "STG", "BAR"))}

    assert end < r.loop.start or start > r.loop.end
    assert "STG.E.128" in inside(r.loop.start, r.loop.end)
    assert "BAR.SYNC.DEFER_BLOCKING" not in inside(r.loop.start, r.loop.end)
    assert {"LDG.E.128", "STG.E.128", "BAR.SYNC.DEFER_BLOCKING"} <= inside(start, end)
    assert r.shared == 8192 + 32 * 16
    contig = next(k for k in res.hot() if k.label == "add f32 contig")
    assert res.shared_loop(*res.sass_of(contig, "sm_90")[:2]) is None
    assert res.measure(contig, "sm_90").shared == 0


def test_model_arithmetic():
    # the DRAM stream and the SM's work add as the root of their sum of squares; L2 stands alone
    assert model.GOAL == 0.9 and model.GOAL_TRANSPOSED == 0.7
    p = model.Prediction("x", "k", 1, False, "CC", 1.0, 4, 1.0, 10.0, 8.0, 8.0, 10, 2.0, 1.0, 0.0, 2.0, 0.9)
    assert p.fraction == 1.0 and p.bound == "memory"          # nothing but the copy's own bytes
    p = model.Prediction("x", "k", 1, False, "CC", 1.0, 4, 1.0, 10.0, 8.0, 8.0, 10, 3.0, 1.0, 4.0, 3.0, 0.9)
    assert p.time == 5.0 and p.fraction == 0.6 and p.bound == "issue"
    p = model.Prediction("x", "k", 1, False, "CC", 1.0, 4, 1.0, 10.0, 8.0, 8.0, 10, 3.0, 1.0, 0.0, 3.0, 0.9,
                         t_smem=2.0, t_l1=6.0)
    assert p.time == 7.0 and p.bound == "L1"                  # sqrt(9 + 4 + 36)
    p = model.Prediction("x", "k", 1, False, "CC", 1.0, 4, 1.0, 10.0, 8.0, 8.0, 10, 3.0, 8.0, 4.0, 3.0, 0.9)
    assert p.time == 8.0 and p.bound == "L2"


def test_measured_reads_the_gpubcast_rows_of_a_run(tmp_path):
    rec = {"pattern": "row", "backend": "gpubcast-cuda", "size": "large", "dtype": "float32",
           "fraction_of_ceiling": 0.5}
    others = [dict(rec, backend="cupy", fraction_of_ceiling=0.1), dict(rec, size="tiny", fraction_of_ceiling=0.2),
              dict(rec, dtype="float64", fraction_of_ceiling=0.3)]
    (tmp_path / "run.json").write_text(json.dumps({"records": [rec, *others]}))
    assert model.measured(str(tmp_path / "run.json")) == {"row": 0.5}
    assert model.measured(str(tmp_path / "run.json"), "float64") == {"row": 0.3}
    assert model.measured(str(tmp_path / "absent.json")) == {}


#: what changed in the kernels after the H100 run (its figures are the old kernels'): every general
#: kernel (the patterns but the contiguous ones, same and scalar)
CHANGED_SINCE_H100 = (
    "issue 23: the variadic general kernel at 8 float32 elements per thread (sum4); every 32-bit general "
    "kernel's offsets located unrolled; lane chunks and tiles of 2 tiles where rows allow (row, column, "
    "outer, rank6, expand, where)")


def test_model_formula_agrees_with_the_h100_run():
    """The model's formula on the terms of the kernels the H100 ran (model.H100_TERMS): within 0.08 of
    every measured pattern it explains (the plain maximum of the terms said 1.00 for outer, measured
    0.84); the ones it does not (model.UNEXPLAINED) over-predicted by more than 0.2."""
    measured, predicted = model.measured(), model.terms_of_run()
    assert set(predicted) == {p.name for p in model.patterns()} <= set(measured)
    for name, r in predicted.items():
        m = measured[name]
        if name in model.UNEXPLAINED:
            assert r - m > 0.2, f"{name}: the model ({r:.2f}) now explains the H100's {m:.2f}: update UNEXPLAINED"
        else:
            assert abs(r - m) <= 0.08, f"{name}: model {r:.2f}, H100 {m:.2f}"
    terms = json.loads(open(model.H100_TERMS).read())["patterns"]["outer"]
    plain = terms["t_copy"] / max(terms[k] for k in ("t_mem", "t_l2", "t_issue", "t_smem", "t_l1"))
    assert plain == 1.0 and abs(plain - measured["outer"]) > 0.08


@needs_tools
def test_model_agrees_with_the_h100_run():
    """The model on today's kernels against the one GPU run (benchmarks/results): the contiguous ones (unchanged)
    within 0.08; the ones it does not explain (model.UNEXPLAINED) still over-predicted; a general kernel,
    changed since (CHANGED_SINCE_H100), predicted at least as fast as measured."""
    measured = model.measured()
    assert set(measured) >= {p.name for p in model.patterns()}, sorted(measured)
    for p in model.patterns():
        pred = model.predict(p.name)
        r, m = pred.fraction, measured[p.name]
        if p.name in model.UNEXPLAINED:
            assert r - m > 0.2, f"{p.name}: the model ({r:.2f}) now explains the H100's {m:.2f}: update UNEXPLAINED"
        elif "general" in pred.kernel:      # CHANGED_SINCE_H100
            assert r >= m - 0.08, f"{p.name}: {r:.2f}, measured {m:.2f} with the old kernel"
        else:
            assert abs(r - m) <= 0.08, f"{p.name}: model {r:.2f}, H100 {m:.2f}"


@needs_tools
def test_cli_prints_the_model():
    from gpubcast import kernels_cli
    lines = []
    assert kernels_cli.model(out=lines.append) == 0
    assert lines[0].startswith("A static model, not a measurement")
    rows = [line for line in "\n".join(lines).splitlines() if line.startswith("| ")]
    assert len(rows) == 2 * (len(model.patterns()) + 1) + 5 and rows[1].startswith("| same | add f32 contig |")
    assert rows[len(model.patterns()) + 2].startswith("| same | add f64 contig |")
    assert rows[-5].startswith("| kernel | run |") and rows[-2].startswith("| axpb (user kernel, tile path) |")


@needs_tools
def test_the_table_has_a_cell_per_column():
    r = model.predict("sum4", "float32")
    header, _, line = model.table([r], {"sum4": 0.74}).splitlines()
    assert header.count("|") == line.count("|") and "| load B in flight/thread |" in header
    assert f"| {r.occupancy:.0%} | {r.inflight_bytes:.0f} | {r.instr_per_elem:.1f} |" in line
    assert line.endswith(" 0.74 |")
