"""The CUDA kernels, run on the CPU by the host emulation harness, against the NumPy reference.

Every op x representative dtypes x layouts: contiguous (vector loads), misaligned contiguous
(element path), kernel-argument scalars (Python and 0-d), device scalars (size-1 arrays),
row / column broadcasts (contiguous and strided operands in one kernel), transposed,
negative strides, strided output, the 64-bit index path (forced with a small threshold) and
a 1-block grid (grid-stride loop); transposed operands through shared-memory tiles, also in
shuffled block and thread orders (barriers and shared accesses checked by the harness).  Plus
integer edge cases with hand-computed values.
"""

import struct
import zlib

import numpy as np
import pytest

import gpubcast as gb
from gpubcast import dtypes as _dt
from gpubcast import ops
from gpubcast.cuda import launch
from gpubcast.cuda.catalog import Path
from gpubcast.cuda.sources import FAMILIES
from gpubcast.testing import checks, emulate
from gpubcast.dispatch import apply

pytestmark = pytest.mark.skipif(bool(emulate.available()), reason=emulate.available() or "")

BE, BE64, BE1 = "cuda-emulated", "cuda-emulated-64", "cuda-emulated-grid1"
BES = "cuda-emulated-shuffled"      # blocks and threads in a shuffled order (1000003: a prime)


@pytest.fixture(scope="module", autouse=True)
def backends():
    emulator = emulate.Emulator(checks.emulation_kernels())
    made = []
    for name, kw in ((BE, {}), (BE64, {"index64_above": 0}), (BE1, {"grid": 1}),
                     (BES, {"order": (1000003, 5, 77, 200)})):
        be = emulate.EmulatedBackend(emulator, **kw)
        be.name = name
        made.append(be)
    with emulate.registered(made[0]), emulate.registered(made[1]), emulate.registered(made[2]), \
            emulate.registered(made[3]):
        yield {be.name: be for be in made}


def _same(op_name, got, want, dtype):
    rtol = checks.tolerance(op_name, dtype)
    assert checks.agree(op_name, got, want, rtol), checks._difference(got, want, rtol, op_name)


BINARY_CASES = [(name, dt) for name, op in sorted(ops.REGISTRY.items()) if op.kind == "binary"
                for dt in sorted({t[0] for t in checks.dtypes_for(op)}, key=str)]


@pytest.mark.parametrize("name, dtype", BINARY_CASES, ids=[f"{n}-{d}" for n, d in BINARY_CASES])
def test_binary_op_every_layout(name, dtype, backends):
    rng = np.random.default_rng(zlib.crc32(f"{name}-{dtype}".encode()))   # the same draw every run
    op = ops.get(name)
    for layout, (x1, x2) in checks.binary_layouts(rng, dtype, name).items():
        for be in ((BE, BE64) if layout in ("row", "transposed") else (BE,)):
            want = apply(op, (x1, x2), backend="numpy")
            got = apply(op, (x1, x2), backend=be)
            _same(name, got, want, dtype)
    kinds = {lc.name.split("<")[0] for lc in backends[BE].launches}
    assert {"gb::binary_contig", "gb::binary_general"} <= kinds


UNARY_CASES = [(name, t[0]) for name in ops.UNARY for t in checks.dtypes_for(ops.get(name))]


@pytest.mark.parametrize("name, dtype", UNARY_CASES, ids=[f"{n}-{d}" for n, d in UNARY_CASES])
def test_unary_op_every_layout(name, dtype, backends):
    """Each unary op on each dtype with a CUDA kernel: contiguous (vector), misaligned, a 0-d
    value, a device scalar, a broadcast column, transposed, negative strides, sliced, rank 6,
    and the 64-bit index path."""
    rng = np.random.default_rng(zlib.crc32(f"{name}-{dtype}".encode()))   # the same draw every run
    op = ops.get(name)
    inputs = checks.unary_layouts(rng, dtype, name)
    targets = [None] if name != "cast" else [t for t in checks.EMULATION_DTYPES]
    for layout, x in inputs.items():
        for target in targets:
            xs = checks.castable(x, target) if target is not None else x
            for be in ((BE, BE64) if layout in ("transposed", "rank 6") else (BE,)):
                want = apply(op, (xs,), backend="numpy", dtype=target)
                got = apply(op, (xs,), backend=be, dtype=target)
                _same(name, got, want, dtype)
    kinds = {lc.name.split("<")[0] for lc in backends[BE].launches}
    assert {"gb::unary_contig", "gb::unary_general"} <= kinds


@pytest.mark.parametrize("dtype", [np.float16, np.float32, np.float64, _dt.bfloat16], ids=str)
def test_maximum_minimum_of_signed_zeros(dtype):
    """Ties of -0.0 and +0.0: float32/float64 (NumPy) and bfloat16 (ml_dtypes) keep the second
    operand, float16 (NumPy's half loop) the first; the variadic ops fold the same way."""
    a, b = np.array([-0.0, 0.0, -0.0], dtype), np.array([0.0, -0.0, np.nan], dtype)
    for name in ("maximum", "minimum"):
        want = apply(ops.get(name), (a, b), backend="numpy")
        assert np.array_equal(np.signbit(want[:2]), [False, True] if dtype != np.float16 else [True, False])
        for be in (BE, "numba"):
            got = apply(ops.get(name), (a, b), backend=be)
            assert np.array_equal(np.signbit(got), np.signbit(want)) and np.isnan(got[2]), (name, be, got)
    for name, pair in (("max", "maximum"), ("min", "minimum")):
        want = apply(ops.get(pair), (a, b), backend="numpy")
        got = apply(ops.get(name), (a, b), backend=BE)
        assert np.array_equal(np.signbit(got), np.signbit(want)), (name, got)


def test_unary_values_by_hand():
    """Edge values computed by hand (not by NumPy): wraps, NaN rules, signed zeros, halves to even."""
    i8 = np.array([-128, -1, 0, 5], np.int8)
    f4 = np.array([-2.5, -0.0, 0.5, 1.5, np.nan, -np.inf], np.float32)
    hand = [
        ("negative", i8, [-128, 1, 0, -5]),
        ("abs", i8, [-128, 1, 0, 5]),
        ("bitwise_not", i8, [127, 0, -1, -6]),
        ("sign", i8, [-1, -1, 0, 1]),
        ("relu", i8, [0, 0, 0, 5]),
        ("round", f4, [-2.0, -0.0, 0.0, 2.0, np.nan, -np.inf]),
        ("floor", f4, [-3.0, -0.0, 0.0, 1.0, np.nan, -np.inf]),
        ("ceil", f4, [-2.0, -0.0, 1.0, 2.0, np.nan, -np.inf]),
        ("sign", f4, [-1.0, 0.0, 1.0, 1.0, np.nan, -1.0]),
        ("relu", f4, [0.0, 0.0, 0.5, 1.5, np.nan, 0.0]),
        ("logical_not", f4, [False, True, False, False, False, False]),
        ("sqrt", np.array([4.0, -1.0, 0.0], np.float32), [2.0, np.nan, 0.0]),
        ("log", np.array([1.0, 0.0, -1.0], np.float32), [0.0, -np.inf, np.nan]),
        ("exp", np.array([0.0, -np.inf, 1000.0], np.float32), [1.0, 0.0, np.inf]),
        ("sigmoid", np.array([0.0, -np.inf, np.inf], np.float32), [0.5, 0.0, 1.0]),
        ("erf", np.array([0.0, np.inf, -np.inf], np.float32), [0.0, 1.0, -1.0]),
        ("tanh", np.array([0.0, np.inf, -np.inf], np.float32), [0.0, 1.0, -1.0]),
        ("reciprocal", np.array([2.0, -0.0, 0.25], np.float32), [0.5, -np.inf, 4.0]),
    ]
    for name, x, want in hand:
        for be in (BE, "numba", "numpy"):
            got = apply(ops.get(name), (x,), backend=be)
            assert np.array_equal(got, np.array(want, dtype=got.dtype), equal_nan=True), (name, be, got)
            if got.dtype.kind == "f":  # signed zeros and infinities (a NaN's sign is not defined)
                num = ~np.isnan(got)
                assert np.array_equal(np.signbit(got[num]), np.signbit(np.array(want, got.dtype)[num])), (name, be)


def test_mixed_int64_uint64_comparisons():
    a = np.array([-1, 0, 2**62, -2**63, 5], np.int64)
    b = np.array([2**64 - 1, 0, 2**62, 0, 4], np.uint64)
    for name in ("equal", "not_equal", "less", "less_equal", "greater", "greater_equal"):
        got = apply(ops.get(name), (a, b), backend=BE)
        assert np.array_equal(got, getattr(np, name)(a, b)), name
        assert np.array_equal(apply(ops.get(name), (b, a[::-1]), backend=BE), getattr(np, name)(b, a[::-1]))


def test_binary_strided_output_and_64bit(backends):
    rng = np.random.default_rng(3)
    a, b = rng.standard_normal((40, 30)), rng.standard_normal(30)
    for be in (BE, BE64, BE1):
        out = np.full((30, 40), np.nan).T
        gb.subtract(a, b, out=out, backend=be)
        assert np.array_equal(out, a - b)
    assert any(lc.name.endswith("gb::u64>") for lc in backends[BE64].launches)


@pytest.mark.parametrize("dtype", checks.EMULATION_DTYPES, ids=str)
def test_where_every_layout(dtype):
    rng = np.random.default_rng(11)
    v = lambda *s: checks.values(rng, dtype, s)
    c = rng.random((23, 41)) < 0.5
    cases = [
        (c, v(23, 41), v(23, 41)),
        (c[0], v(23, 41), v(41)),                                    # row condition
        (np.asarray(True), v(23, 41), checks.layout(rng, v(23, 41), "flipped")),
        (c, v(1, 1), np.asarray(v())),                               # device scalar, kernel argument
        (checks.layout(rng, c, "transposed"), checks.layout(rng, v(23, 41), "misaligned"), v(23, 1)),
    ]
    for x in cases:
        for be in (BE, BE64):
            _same("where", apply(ops.get("where"), x, backend=be), np.where(*x), dtype)


def test_where_pdpd_target_is_x():
    rng = np.random.default_rng(5)
    x, cond, y = rng.standard_normal((2, 3, 4, 5)), rng.random((3, 4)) < 0.5, rng.standard_normal((3, 1))
    got = gb.where(cond, x, y, broadcast="pdpd", axis=1, backend=BE)
    want = gb.where(cond, x, y, broadcast="pdpd", axis=1, backend="numpy")
    assert np.array_equal(got, want)


VARIADIC_CASES = [(name, dt) for name in ("sum", "mean", "max", "min")
                  for dt in checks.EMULATION_DTYPES if _dt.kind(dt) in ops.get(name).accepts]


@pytest.mark.parametrize("name, dtype", VARIADIC_CASES, ids=[f"{n}-{d}" for n, d in VARIADIC_CASES])
def test_variadic_one_pass_and_chained(name, dtype):
    rng = np.random.default_rng(2)
    v = lambda *s: checks.values(rng, dtype, s)
    op = ops.get(name)
    groups = [
        [v(17, 29)],
        [v(17, 29), v(29), v(17, 1)],
        [v(17, 29), np.asarray(v()), checks.layout(rng, v(17, 29), "transposed"), v(1, 1)],
        [v(17, 29)] + [v(29) for _ in range(10)] + [checks.layout(rng, v(17, 29), "flipped")],   # 12: chained
        [v(5, 7) for _ in range(8)],
        [v(5, 7) for _ in range(9)],
    ]
    for xs in groups:
        for be in (BE, BE64):
            _same(name, apply(op, xs, backend=be), apply(op, xs, backend="numpy"), dtype)


@pytest.mark.parametrize("dtype", checks.EMULATION_DTYPES, ids=str)
def test_data_movement_every_mode(dtype):
    rng = np.random.default_rng(9)
    v = lambda *s: checks.values(rng, dtype, s)
    calls = [
        lambda be: gb.broadcast_to(v(6), (2, 6, 9, 11), mode="explicit", axes_mapping=[1], backend=be),
        lambda be: gb.broadcast_to(v(9, 1), (4, 9, 13), backend=be),
        lambda be: gb.broadcast_to(checks.layout(rng, v(9, 13), "transposed"), (3, 9, 13), backend=be),
        lambda be: gb.broadcast_to(v(3, 4), (2, 3, 4, 5), mode="pdpd", axis=1, backend=be),
        lambda be: gb.expand(v(6, 1), (2, 1, 11), backend=be),
        lambda be: gb.expand(np.asarray(v()), (7, 3), backend=be),
        lambda be: gb.expand(checks.layout(rng, v(8, 9), "misaligned"), (8, 9), backend=be),
    ]
    for call in calls:
        state = rng.bit_generator.state
        want = call("numpy")
        for be in (BE, BE64, BE1):
            rng.bit_generator.state = state
            _same("copy", call(be), want, dtype)


@pytest.mark.parametrize("name, dtype, a, b, expected", checks.INTEGER_EDGE_CASES,
                         ids=[f"{c[0]}-{c[1].__name__}" for c in checks.INTEGER_EDGE_CASES])
def test_integer_edge_cases(name, dtype, a, b, expected):
    a, b = np.array(a, dtype), np.array(b, dtype)
    for x1, x2, want in ((a, b, np.array(expected, dtype)), (a[::-1], b[::-1], np.array(expected, dtype)[::-1])):
        got = apply(ops.get(name), (x1, x2), backend=BE)
        assert np.array_equal(got, want), (got, want)
        assert np.array_equal(got, apply(ops.get(name), (x1, x2), backend="numpy"))


def test_float_edge_cases():
    nan, inf = np.nan, np.inf
    a = np.array([1.0, -1.0, 0.0, nan, 5.0, -7.5, 1e-40, inf], np.float32)
    b = np.array([0.0, 0.0, 0.0, 1.0, nan, 2.0, 1.0, inf], np.float32)
    for name in ("floor_divide", "remainder", "fmod", "maximum", "minimum", "divide", "power", "div_trunc"):
        got = apply(ops.get(name), (a, b), backend=BE)
        want = apply(ops.get(name), (a, b), backend="numpy")
        assert np.array_equal(got, want, equal_nan=True), name
    # subnormals survive (no flush to zero), NaN propagates through maximum / minimum
    assert gb.multiply(np.float32(1e-40), np.ones(3, np.float32), backend=BE)[0] == np.float32(1e-40)
    assert np.isnan(gb.maximum(np.array([nan, 1.0]), np.array([1.0, nan]), backend=BE)).all()


def test_half_and_bfloat16_round_once():
    x = np.arange(-2048, 2048, dtype=np.float32) / 7
    for dt in (np.float16, _dt.bfloat16):
        a, b = x.astype(dt), x[::-1].astype(dt)
        for name in ("add", "subtract", "multiply", "divide", "floor_divide", "remainder"):
            _same(name, apply(ops.get(name), (a, b), backend=BE), apply(ops.get(name), (a, b), backend="numpy"), dt)


def test_complex_division_and_power_special_values():
    z = np.array([1 + 2j, 0j, complex(np.inf, 0), complex(np.nan, 1), 3 - 4j, 0j, 2j], np.complex128)
    w = np.array([0j, 0j, 1 + 1j, 1j, 2 + 0j, 1 + 1j, -3 + 0j], np.complex128)
    for name in ("divide", "power", "multiply", "equal", "less", "maximum"):
        _same(name, apply(ops.get(name), (z, w), backend=BE), apply(ops.get(name), (z, w), backend="numpy"),
              np.complex128)


def test_out_aliasing(backends):
    rng = np.random.default_rng(4)
    a, b = rng.standard_normal((50, 40)), rng.standard_normal(40)
    # the output is an input element for element: no copy needed
    x = a.copy()
    gb.add(x, b, out=x, backend=BE)
    assert np.array_equal(x, a + b)
    # partial overlap: dispatch copies the input first, as NumPy does
    x, y = a.copy(), a.copy()
    gb.multiply(x[:-1], 2.0, out=x[1:], backend=BE)
    np.multiply(y[:-1], 2.0, out=y[1:])
    assert np.array_equal(x, y)
    # out of another dtype: same_kind cast into it
    out = np.empty((50, 40), np.float32)
    gb.add(a, b, out=out, backend=BE)
    assert np.array_equal(out, (a + b).astype(np.float32))


def test_zero_size_launches_nothing(backends):
    be = backends[BE]
    before = len(be.launches)
    r = gb.add(np.ones((0, 3), np.float32), np.ones(3, np.float32), backend=BE)
    assert r.shape == (0, 3) and len(be.launches) == before


def test_grid_stride_loop_covers_every_tile(backends):
    rng = np.random.default_rng(8)
    first = len(backends[BE1].launches)
    a, b = rng.integers(-50, 50, (301, 257)).astype(np.int32), rng.integers(-50, 50, 257).astype(np.int32)
    for name in ("add", "maximum", "floor_divide"):
        got = apply(ops.get(name), (a, b), backend=BE1)
        assert np.array_equal(got, apply(ops.get(name), (a, b), backend="numpy"))
    assert all(lc.grid > 1 for lc in backends[BE1].launches[first:])   # each wanted more blocks than it got


def test_strings_are_a_type_error():
    with pytest.raises(TypeError, match="cannot move elements of dtype <U2"):
        gb.broadcast_to(np.array(["ab", "cd"]), (3, 2), backend=BE)


def test_kernels_emulate_command(capsys):
    from gpubcast import kernels_cli
    assert kernels_cli.emulate(seed=1, n_cases=80) == 0
    out = capsys.readouterr().out
    assert "all agree" in out
    for family in ("binary", "ternary", "variadic", "copy"):
        assert family in out
    assert "gb::binary_general" in out and "gb::copy_general" in out and "gb::variadic_" in out


def test_rank_above_max_dims_runs_as_several_launches(backends):
    rng = np.random.default_rng(12)
    a = rng.standard_normal(tuple(2 if i % 2 else 1 for i in range(12)))
    b = rng.standard_normal(tuple(1 if i % 2 else 3 for i in range(12)))
    first = len(backends[BE].launches)
    got = gb.multiply(a, b, backend=BE)
    assert np.array_equal(got, a * b)
    assert len(backends[BE].launches) - first == 6          # out (3, 2, 3, 2, ...): dims 0, 1 beyond MAX_DIMS


@pytest.mark.parametrize("name", ["add", "floor_divide", "less", "power", "prelu", "div_trunc"])
def test_rule_sets(name):
    rng = np.random.default_rng(13)
    op = ops.get(name)
    dtype = np.dtype(np.float32 if name in ("power", "prelu") else np.int32)
    v = lambda *s, role=0: checks.values(rng, dtype, s, op_name=name, role=role)
    calls = [((v(2, 3, 4, 5), v(3, 4, role=1)), "pdpd", 1), ((v(2, 3, 4, 5), v(4, 5, role=1)), "pdpd", -1),
             ((v(6, 7), v(6, 7, role=1)), "none", -1), ((v(4, 1, 5), v(3, 1, role=1)), "numpy", -1)]
    if name == "prelu":
        calls = [((v(2, 3, 4), v(3, 1, role=1)), "unidirectional", -1)]
    for inputs, rule, axis in calls:
        for be in (BE, BE64):
            _same(name, apply(op, inputs, rule=rule, axis=axis, backend=be),
                  apply(op, inputs, rule=rule, axis=axis, backend="numpy"), dtype)


@pytest.mark.parametrize("dtype", ["float32", "float16", "bfloat16", "float64", "int32", "complex64"])
def test_axpby_gemm_bias_in_one_pass(dtype, backends):
    """alpha * x + beta * y (Gemm's scaling and bias), scalars as kernel arguments, y broadcast."""
    dt = np.dtype(_dt.bfloat16) if dtype == "bfloat16" else np.dtype(dtype)
    rng = np.random.default_rng(3)
    x = rng.integers(-50, 50, (33, 17)).astype(dt)
    alpha, beta = np.asarray(3, dt), np.asarray(-2, dt)
    for y in (rng.integers(-50, 50, 17).astype(dt), rng.integers(-50, 50, (33, 1)).astype(dt),
              rng.integers(-50, 50, (33, 17)).astype(dt)):
        for be in (BE, BE64):
            first = len(backends[be].launches)
            want = apply(ops.get("axpby"), (alpha, x, beta, y), backend="numpy")
            got = apply(ops.get("axpby"), (alpha, x, beta, y), backend=be)
            _same("axpby", got, want, dt)
            assert all(lc.name.startswith("gb::variadic_") and "gb::Axpby" in lc.name
                       for lc in backends[be].launches[first:])


PARAMETRIC_CASES = [(name, dt) for name in ops.PARAMETRIC for dt in checks.EMULATION_DTYPES if _dt.kind(dt) == "f"]


@pytest.mark.parametrize("name, dtype", PARAMETRIC_CASES, ids=[f"{n}-{d}" for n, d in PARAMETRIC_CASES])
def test_parametric_activation_every_layout(name, dtype, backends):
    """An activation's x and two parameters (gpubcast/kernels/variadic.cu): parameters as kernel-argument
    scalars, a row, a column, x's own shape; x contiguous, transposed, flipped."""
    rng = np.random.default_rng(4)
    v = lambda *s: checks.values(rng, dtype, s)
    x = v(37, 45)
    calls = [(x, np.asarray(v()), np.asarray(v())), (x, v(45), v(37, 1)), (x, v(37, 45), v(1, 45)),
             (checks.layout(rng, x, "transposed"), v(45), np.asarray(v())),
             (checks.layout(rng, x, "flipped"), checks.layout(rng, v(37, 45), "transposed"), v(37, 1))]
    for inputs in calls:
        for be in (BE, BE64):
            first = len(backends[be].launches)
            _same(name, apply(ops.get(name), inputs, rule="unidirectional", backend=be),
                  apply(ops.get(name), inputs, rule="unidirectional", backend="numpy"), dtype)
            assert all(lc.name.startswith("gb::variadic_") and f"gb::{ops.get(name).functor}" in lc.name
                       for lc in backends[be].launches[first:])


@pytest.mark.parametrize("inner", [1, 2, 3, 5, 7, 1031])
def test_general_tiles_crossing_innermost_rows(inner, backends):
    # the 32-bit general kernels step offsets along the innermost dim and locate a tile's
    # elements anew where it enters a new row: rows shorter than a tile, and longer ones
    rng = np.random.default_rng(inner)
    a = rng.standard_normal((37, 1, inner)).astype(np.float32)
    b = rng.standard_normal((37, 3, 1)).astype(np.float32)[:, ::-1]      # negative stride
    c = rng.standard_normal((3, inner)).astype(np.float32).T.copy().T     # transposed
    cond = rng.random((37, 3, inner)) < 0.5
    for be in (BE, BE64, BE1):
        assert np.array_equal(gb.add(a, b, backend=be), a + b)
        assert np.array_equal(gb.add(a, c, backend=be), a + c)
        assert np.array_equal(gb.where(cond, a, b, backend=be), np.where(cond, a, b))
        assert np.array_equal(gb.broadcast_to(a.transpose(2, 1, 0), (inner, 3, 37), backend=be),
                              np.broadcast_to(a.transpose(2, 1, 0), (inner, 3, 37)))
        full = rng.standard_normal((37, 3, inner)).astype(np.float32)
        for xs in ([a, b, c, full], [full, a, b, c, a, full[:, ::-1], b, c]):
            for name in ("sum", "max"):
                _same(name, apply(ops.get(name), xs, backend=be), apply(ops.get(name), xs, backend="numpy"),
                      np.dtype(np.float32))
    assert any(lc.name.startswith("gb::binary_general") and lc.name.endswith("gb::u32>")
               for lc in backends[BE].launches)


def test_general_rank6_broadcast(backends):
    rng = np.random.default_rng(6)
    a = rng.standard_normal((2, 3, 1, 5, 1, 3)).astype(np.float32)
    b = rng.standard_normal((1, 3, 4, 1, 6, 1)).astype(np.float32)[:, ::-1, :, :, ::-1, :]
    x = rng.integers(-2**31, 2**31, (2, 1, 4, 5, 1, 3), dtype=np.int64).astype(np.int32)
    for be in (BE, BE64, BE1):
        assert np.array_equal(gb.add(a, b, backend=be), a + b)
        assert np.array_equal(gb.add(x, x.transpose(0, 1, 2, 3, 5, 4)[..., :1, :], backend=be),
                              x + x.transpose(0, 1, 2, 3, 5, 4)[..., :1, :])
        cond = rng.random((2, 3, 4, 5, 6, 3)) < 0.5
        assert np.array_equal(gb.where(cond, a, b, backend=be), np.where(cond, a, b))


@pytest.mark.parametrize("rank", [1, 2, 3, 4, 5, 6])
def test_general_every_rank_layout_and_zero_size(rank, backends):
    # the general kernels locate a tile's first element once and step within the innermost row,
    # or go row by row where a tile crosses rows: every coalesced rank 1..6, innermost sizes
    # shorter and longer than a tile (4 or 8 elements), negative and transposed strides,
    # zero-size dims, on the 32- and 64-bit paths and a 1-block grid
    rng = np.random.default_rng(100 + rank)
    for trial in range(4):
        out = [int(rng.integers(1, 5)) for _ in range(rank)]
        out[-1] = (3, 8, 13, 1029)[trial]
        if trial == 3 and rank > 1:
            out[0] = 0 if rank % 2 else out[0]
        a_shape = tuple(n if rng.random() < 0.6 else 1 for n in out)
        b_shape = tuple(n if rng.random() < 0.6 else 1 for n in out)
        a = rng.standard_normal(a_shape[::-1]).astype(np.float32).T          # transposed
        b = rng.standard_normal(b_shape).astype(np.float32)[..., ::-1]       # negative innermost stride
        full = rng.standard_normal(out).astype(np.float32)[::-1]
        cond = rng.random(out) < 0.5
        for be in (BE, BE64, BE1):
            assert np.array_equal(gb.add(a, b, backend=be), a + b)
            assert np.array_equal(gb.add(full, b, backend=be), full + b)
            assert np.array_equal(gb.where(cond, a, b, backend=be), np.where(cond, a, b))
            assert np.array_equal(gb.broadcast_to(b, tuple(out), backend=be), np.broadcast_to(b, tuple(out)))
            xs = [full, a, b, full[..., ::-1], a]
            _same("sum", apply(ops.get("sum"), xs, backend=be), apply(ops.get("sum"), xs, backend="numpy"),
                  np.dtype(np.float32))


def _shared_tiles(lc, nin=None) -> bool:
    head = launch.head_size(FAMILIES[lc.family].nin if nin is None else nin)
    return bool(struct.unpack_from("<I", lc.params, head - 12)[0] & launch.SHARED_TILES)


def _transposed(rng, shape, dtype, flip=False):
    """Values of ``shape`` stored transposed in its two innermost dims (rows flipped: stride -1)."""
    a = checks.values(rng, dtype, shape[:-2] + shape[:-3:-1]).swapaxes(-1, -2)
    return a[..., ::-1, :] if flip else a


@pytest.mark.parametrize("rows, cols, outer", [(32, 32, 1), (45, 77, 1), (100, 33, 1), (40, 300, 3), (129, 257, 2),
                                               (64, 64, 2)])
def test_shared_tiles_for_transposed_operands(rows, cols, outer, backends):
    # a transposed operand (contiguous along the second-innermost dim) goes through shared memory
    # in tiles of 32 columns by 8 x ept rows: partial row and column blocks, outer dims, negative
    # strides (the element path), odd leading dims (misaligned: the element path), a transposed
    # output (staged stores), the 32/64-bit paths, a 1-block grid, shuffled block/thread orders
    rng = np.random.default_rng(rows * cols)
    t = _transposed(rng, (outer, rows, cols), np.float32)
    x = rng.standard_normal((outer, rows, cols)).astype(np.float32)
    row = rng.standard_normal((cols,)).astype(np.float32)[::-1]
    cond = rng.random((rows, cols)) < 0.5
    ti = _transposed(rng, (outer, rows, cols), np.int8, flip=True)
    for be in (BE, BE64, BE1, BES):
        first = len(backends[be].launches)
        f4 = np.dtype(np.float32)
        _same("add", gb.add(t, x, backend=be), t + x, f4)
        _same("add", gb.add(t, row, backend=be), t + row, f4)
        _same("where", gb.where(cond, t, x, backend=be), np.where(cond, t, x), f4)
        _same("copy", gb.broadcast_to(t, (2, outer, rows, cols), backend=be),
              np.broadcast_to(t, (2, outer, rows, cols)), f4)
        assert np.array_equal(gb.subtract(ti, ti[..., ::-1, :], backend=be), ti - ti[..., ::-1, :])
        out = np.full((outer, cols, rows), np.nan, np.float32).swapaxes(-1, -2)     # a transposed output
        gb.multiply(x, row, out=out, backend=be)
        _same("multiply", out, x * row, f4)
        launched = backends[be].launches[first:]
        assert len(launched) == 6 and all(_shared_tiles(lc) for lc in launched), [lc.name for lc in launched]
        if be == BE:   # one block per tile of 32 columns by 8 x ept rows
            tiles = [outer * -(-rows // (8 * lc.ept)) * -(-cols // 32) for lc in launched]
            assert [lc.grid for lc in launched] == tiles[:3] + [2 * tiles[3]] + tiles[4:]


@pytest.mark.parametrize("dtype", checks.EMULATION_DTYPES, ids=str)
def test_shared_tiles_every_element_size(dtype, backends):
    # 1..16-byte elements: vector staging (2..8 rows a chunk), the element path, and several
    # passes through the buffer (16-byte elements at 4 per thread: 2 passes); ternary and copy
    rng = np.random.default_rng(7)
    for shape in ((2, 70, 45), (1, 64, 64), (3, 33, 130)):
        t = _transposed(rng, shape, dtype)
        x = checks.values(rng, dtype, shape)
        flipped = _transposed(rng, shape, dtype, flip=True)
        cond = _transposed(rng, shape, np.bool_)
        for be in (BE, BE64, BE1, BES):
            first = len(backends[be].launches)
            _same("where", gb.where(cond, t, x, backend=be), np.where(cond, t, x), dtype)
            _same("where", gb.where(cond, flipped, t, backend=be), np.where(cond, flipped, t), dtype)
            _same("copy", gb.broadcast_to(t, (2, *shape), backend=be), np.broadcast_to(t, (2, *shape)), dtype)
            out = np.empty(shape[:-2] + shape[:-3:-1], dtype).swapaxes(-1, -2)
            gb.broadcast_to(x, shape, out=out, backend=be)                       # staged stores
            _same("copy", out, x, dtype)
            assert all(_shared_tiles(lc) for lc in backends[be].launches[first:])


def test_shared_tiles_with_many_operands(backends):
    # every input transposed and the output too: one operand at a time through the one buffer
    rng = np.random.default_rng(17)
    shape = (2, 50, 70)
    cond, x, y = (_transposed(rng, shape, t) for t in (np.bool_, np.float64, np.float64))
    for be in (BE, BE64, BES):
        out = np.empty((2, 70, 50)).swapaxes(-1, -2)
        gb.where(cond, x, y, out=out, backend=be)
        _same("where", out, np.where(cond, x, y), np.dtype(np.float64))


def test_row_tiles_where_shared_tiles_do_not_pay(backends):
    # fewer columns or rows than a warp's width, or no operand contiguous along the
    # second-innermost dim: row tiles
    rng = np.random.default_rng(3)
    first = len(backends[BE].launches)
    for rows, cols in ((40, 5), (5, 40)):
        t = rng.standard_normal((cols, rows)).astype(np.float32).T
        x = rng.standard_normal((rows, cols)).astype(np.float32)
        assert np.array_equal(gb.add(t, x, backend=BE), t + x)
    a = rng.standard_normal((40, 64)).astype(np.float32)[:, ::2]               # innermost stride 2, no column
    assert np.array_equal(gb.add(a, a[::-1], backend=BE), a + a[::-1])
    assert not any(_shared_tiles(lc) for lc in backends[BE].launches[first:])
    transposed = [(4096, 64, 1), (4096, 1, 64)]                   # output, a transposed input
    assert launch.shared_tiles((2**30 - 1, 64, 64), transposed, 8)
    assert not launch.shared_tiles((2**30, 64, 64), transposed, 8)   # 2**31 tiles: the u32 dividers' limit
    assert not launch.shared_tiles((64, 64), [(64, 1), (1, 64)], 3)  # ept not dividing 32


@pytest.mark.parametrize("layout", ["contiguous", "broadcast", "transposed", "strided", "rank 6"])
def test_fused_kernels_on_every_index_path(layout, backends):
    """gpubcast.fuse's generated kernels (gpubcast.cuda.fused) on the 32-bit, 64-bit and 1-block paths,
    shared-memory tiles included, against the fused Numba pass."""
    rng = np.random.default_rng(8)
    v = lambda *shape: rng.standard_normal(shape).astype(np.float32)
    x, y = {"contiguous": (v(70, 50), v(70, 50)), "broadcast": (v(70, 1), v(50)),
            "transposed": (v(50, 70).T, v(70, 50)), "strided": (v(140, 150)[::2, ::-3], v(50)),
            "rank 6": (v(2, 1, 3, 1, 4, 5), v(1, 3, 1, 2, 4, 1))}[layout]
    f = gb.fuse(lambda x, y: gb.where(x > y, x * y - 1, gb.tanh(y)) / 3)
    want = f(x, y)
    for be in (BE, BE64, BE1):
        backends[be].launches.clear()
        got = f(x, y, backend=be)
        [lc] = backends[be].launches
        assert lc.family.startswith("gbf_")
        if layout == "contiguous":
            assert "::fused_contig<" in lc.name
        else:
            assert lc.name.endswith("gb::u64>" if be == BE64 else "gb::u32>"), lc.name
        assert _shared_tiles(lc, 2) == (layout == "transposed") or layout == "contiguous"
        np.testing.assert_allclose(got, want, rtol=4 * np.finfo(np.float32).eps)   # tanh: CUDA's vs Numba's



def _row_cases(rng, dtype, inner):
    """Inputs whose innermost coalesced stride is 0 (broadcast along the row: one load a tile) or
    1 (ascending: vector loads where aligned), aligned and not (a view starting one element in),
    with the other operand contiguous, flipped or transposed; rows of ``inner`` elements."""
    def v(*s):
        return checks.values(rng, dtype, s)
    col = v(37, 3, 1)                                    # stride 0 innermost
    row = v(3, inner)                                    # stride 1 innermost, broadcast over dim 0
    row_off = v(3, inner + 1)[:, 1:]                     # stride 1, starting one element in
    outer = v(37, 1, 1)
    full = v(37, 3, inner)
    return [(col, row), (row_off, col), (outer, row_off), (full[..., ::-1], row), (row, full),
            (checks.layout(rng, full, "transposed"), row_off)]


@pytest.mark.parametrize("inner", [1, 5, 8, 64, 67])
@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int8, np.complex128], ids=str)
def test_general_row_broadcast_and_ascending_operands(inner, dtype, backends):
    # issue 23: a strided input of innermost stride 0 is loaded once per tile, one of stride 1
    # with vector loads where aligned; every index path (32/64-bit, 1-block grid, shuffled orders)
    rng = np.random.default_rng(inner)
    cond = rng.random((37, 3, inner)) < 0.5
    for be in (BE, BE64, BE1, BES):
        first = len(backends[be].launches)
        for a, b in _row_cases(rng, dtype, inner):
            _same("add", gb.add(a, b, backend=be), gb.add(a, b, backend="numpy"), np.dtype(dtype))
            _same("where", gb.where(cond, a, b, backend=be), np.where(cond, a, b), np.dtype(dtype))
            target = np.broadcast_shapes(a.shape, b.shape)
            assert np.array_equal(gb.broadcast_to(b, target, backend=be), np.broadcast_to(b, target), equal_nan=True)
        assert any("_general<" in lc.name for lc in backends[be].launches[first:])


@pytest.mark.parametrize("rows, cols", [(45, 77), (100, 33), (64, 64)])
def test_shared_tiles_with_row_broadcast_and_ascending_operands(rows, cols, backends):
    # under shared tiles a thread of a partial tile may own no element: an input of innermost
    # stride 0 (one load a tile) must then load nothing; of stride 1, no vector (the values here;
    # the virtual device, which knows the allocations, checks that no read leaves them:
    # tests/cuda/test_cuda_gpu.py)
    rng = np.random.default_rng(rows * cols)
    a = _transposed(rng, (rows, cols), np.dtype(np.float32))
    col, row = checks.values(rng, np.float32, (rows, 1)), checks.values(rng, np.float32, (cols,))
    cond = rng.random((rows, cols)) < 0.5
    for be in (BE, BE64, BE1, BES):
        first = len(backends[be].launches)
        for b in (col, row):
            assert np.array_equal(gb.add(a, b, backend=be), a + b, equal_nan=True)
            assert np.array_equal(gb.where(cond, b, a, backend=be), np.where(cond, b, a), equal_nan=True)
        assert any(_shared_tiles(lc) for lc in backends[be].launches[first:] if "_general<" in lc.name)


@pytest.mark.parametrize("nin", [1, 2, 4, 5, 8, 11])
def test_variadic_general_few_and_many_inputs(nin, backends):
    # issue 23: a launch of at most 4 inputs takes the variant locating 5 argument slots, more
    # inputs the one locating all 9, more than 8 a chain of launches; operands of innermost stride
    # 0, 1 (aligned and not), flipped and transposed, every index path
    rng = np.random.default_rng(nin)
    pool = [c for pair in _row_cases(rng, np.float32, 67) for c in pair]
    for be in (BE, BE64, BE1, BES):
        first = len(backends[be].launches)
        xs = [pool[(k * 5 + nin) % len(pool)] for k in range(nin)]
        for name in ("sum", "mean", "max"):
            _same(name, apply(ops.get(name), xs, backend=be), apply(ops.get(name), xs, backend="numpy"),
                  np.dtype(np.float32))
        if nin == 4:
            _same("axpby", apply(ops.get("axpby"), xs, backend=be), apply(ops.get("axpby"), xs, backend="numpy"),
                  np.dtype(np.float32))
        assert any(lc.name.startswith("gb::variadic_general") for lc in backends[be].launches[first:]) \
            or all(x.shape == xs[0].shape and x.flags.c_contiguous for x in xs)


def _lane_chunks(lc) -> bool:
    head = launch.head_size(FAMILIES[lc.family].nin)
    return bool(struct.unpack_from("<I", lc.params, head - 12)[0] & launch.LANE_CHUNKS)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int16, np.int8], ids=str)
@pytest.mark.parametrize("shape", [(9, 512), (9, 8, 64), (9, 8, 56), (5, 4, 32)],
                         ids=["rows", "chunk-rows", "padded-rows", "short-rows"])
def test_lane_chunks_every_operand_kind(shape, dtype, backends):
    # lane chunks (gpubcast/kernels/launch.cuh LANE_CHUNKS): rows of a multiple of 32 * ept (a warp's
    # chunks along one row), of a power of 2 dividing 32 * chunk (chunks rows apart: the rank-6
    # pattern's case), of 56 padded to 64 (PADDED_ROWS: lanes past a row's end and warps past the
    # end run nothing) -- 2 full tiles and a partial one (consecutive elements again, but padded) --
    # against NumPy; every operand kind: contiguous, a row (stride 1, vector loads; misaligned: element
    # loads), a column (stride 0 along the row, a load per chunk under chunk rows), reversed
    # (stride -1), every other element (stride 2), a strided output, a scalar
    rng = np.random.default_rng(sum(shape))
    dt = np.dtype(dtype)
    full = checks.values(rng, dt, shape)
    row = checks.values(rng, dt, shape[-1:])
    misaligned = checks.values(rng, dt, (shape[-1] + 1,))[1:]
    column = checks.values(rng, dt, shape[:-1] + (1,))
    reversed_ = checks.values(rng, dt, shape)[..., ::-1]
    every_other = checks.values(rng, dt, shape[:-1] + (2 * shape[-1],))[..., ::2]
    cond = rng.random(shape[-2:]) < 0.5
    for be in (BE, BE1, BES):
        first = len(backends[be].launches)
        for x in (full, reversed_, every_other):
            for y in (row, misaligned, column, full, x, dt.type(3)):
                _same("add", gb.add(x, y, backend=be), gb.add(x, y, backend="numpy"), dt)
                _same("where", gb.where(cond, x, y, backend=be), np.where(cond, x, y), dt)
            out = np.zeros(shape[:-1] + (2 * shape[-1],), dt)[..., ::2]
            gb.subtract(column, x, out=out, backend=be)
            _same("subtract", out, gb.subtract(column, x, backend="numpy"), dt)
            _same("negative", gb.negative(x, backend=be), gb.negative(x, backend="numpy"), dt)
            xs = [x, row, column, full]
            for fold in ("sum", "mean", "max"):      # the variadic folds stream their inputs (VariadicBody)
                if dt.kind in ops.get(fold).accepts:
                    _same(fold, apply(ops.get(fold), xs, backend=be), apply(ops.get(fold), xs, backend="numpy"), dt)
        for y in (row, misaligned, column, every_other):
            assert np.array_equal(gb.broadcast_to(y, shape, backend=be), np.broadcast_to(y, shape), equal_nan=True)
        took = {_lane_chunks(lc) for lc in backends[be].launches[first:] if "_general<" in lc.name}
        # lane chunks of 16 bytes, fewer elements than a lane tile's (1-byte elements: as many, none);
        # short rows, (20, 32) after coalescing: 32 | 32 * chunk, but dim 1 (20) a multiple of a
        # warp's rows only at 4 elements a lane (8-byte elements in where, sum)
        lanes = dt.itemsize >= 2 and (shape != (5, 4, 32) or dt.itemsize == 8)
        assert (True in took) == lanes, took


# ---- store paths (kernels/launch.cuh Path): benchmarks/write_only.py's variants write the same values ----

STORE_PATHS = [Path(stream=True, store=8, span=3), Path(threads=128, span=2, ept=4),
               Path(threads=512, chunk=8, store=8, ept=16), Path(store=4, chunk=4)]


class PathBackend(emulate.EmulatedBackend):
    """The emulated kernels on store path ``path``: the launch templates of that path (``launch.templates_for``),
    run with ``path.threads`` threads a block and ``grid`` blocks (None: the template's)."""

    def __init__(self, emulator, path, grid=None, index64=False):
        super().__init__(emulator, grid)
        self.path, self.index64, self.name = path, index64, "cuda-emulated-path"

    def execute(self, op, p, inputs, out):
        import dataclasses
        if self.index64:
            p = dataclasses.replace(p, index_bits=64)
        operands = [emulate.operand(x) for x in inputs]
        host = tuple(o.value is not None for o in operands)
        for t in launch.templates_for(op.name, p, tuple(x.dtype for x in inputs), out.dtype, host, self.path):
            params = launch.pack(t, [emulate.operand(out, output=True), *operands], FAMILIES[t.family].nin)
            self.launches.append(t.name)
            self.emulator.run_raw(t.name, params, self.grid or t.grid, self.path.threads, (7, 1, 1, 0))


@pytest.fixture(scope="module")
def path_emulator():
    from gpubcast.cuda import catalog
    kernels = [catalog.kernels_for(ops.get(op), dts, dts[-1]).on(path) for path in STORE_PATHS
               for dt in (np.dtype(np.float64), np.dtype(np.int16))
               for op, dts in (("add", (dt, dt)), ("copy", (dt,)), ("where", (np.dtype(bool), dt, dt)))]
    return emulate.Emulator(kernels)


@pytest.mark.parametrize("path", STORE_PATHS, ids=lambda p: p.label().replace(" ", "-"))
def test_store_paths_write_the_values_of_the_default_path(path, path_emulator):
    """Every store path writes NumPy's values over the layouts that take its code: contiguous (vector and
    misaligned), lane chunks, padded rows, rows crossing tiles, transposed (shared tiles on 256 threads,
    row tiles else), 64-bit indices, and grids smaller than the tiles (SPAN tiles a block, then strides)."""
    rng = np.random.default_rng(11)
    for dt in (np.dtype(np.float64), np.dtype(np.int16)):
        for grid, index64 in ((None, False), (1, False), (3, False), (None, True)):
            be = PathBackend(path_emulator, path, grid, index64)
            with emulate.registered(be):
                for shape in ((9, 512), (9, 8, 56), (5, 4, 30), (1001,), (40, 48)):
                    x = checks.values(rng, dt, shape)
                    others = [checks.values(rng, dt, shape[-1:]), checks.values(rng, dt, shape[:-1] + (1,)),
                              checks.values(rng, dt, (shape[-1] + 1,))[1:], x[..., ::-1]]
                    if len(shape) == 2:
                        others.append(np.ascontiguousarray(x.T).T)            # transposed
                    for y in others:
                        _same("add", gb.add(x, y, backend=be.name), gb.add(x, y, backend="numpy"), dt)
                        cond = rng.random(shape[-1:]) < 0.5
                        _same("where", gb.where(cond, x, y, backend=be.name), np.where(cond, x, y), dt)
                    for y in others[:2]:
                        assert np.array_equal(gb.broadcast_to(y, shape, backend=be.name), np.broadcast_to(y, shape),
                                              equal_nan=True)
            assert be.launches and all(path.cxx() in name for name in be.launches), be.launches[:3]
