"""The Numba CPU backend against the NumPy reference backend (and NumPy / the API contract):
every op x every dtype x layouts, rank 0, zero-size, broadcasting, ``out=``."""

from __future__ import annotations

import warnings
import zlib

import numpy as np
import pytest

import gpubcast as gb
from gpubcast import backends, ops
from gpubcast.dispatch import apply

from tests.support.layouts import LAYOUTS
from tests.support.numba_cases import inputs_for, loop_types, mismatch, op_dtype_cases, run_both, tolerance
from tests.support.sampling import one_dtype_per_op, sampled

CASES = op_dtype_cases()
#: run by ``make test``: every op with one dtype (rotating), and every dtype of one op of each kind
SAMPLE = one_dtype_per_op(CASES, every_dtype=("add", "negative", "where", "sum", "copy"))

#: operand shapes per op kind: equal shapes, then broadcasting ones
SHAPES = {
    "unary": [((4, 6),), ((4, 1),)],
    "binary": [((4, 6), (4, 6)), ((4, 6), (6,)), ((4, 1), (1, 6))],
    "ternary": [((4, 6), (4, 6), (4, 6)), ((4, 6), (6,), (4, 1))],
    "variadic": [((4, 6), (4, 6), (4, 6)), ((4, 6), (6,), (4, 1))],
    "parametric": [((4, 6), (4, 6), (4, 6)), ((4, 6), (6,), (4, 1)), ((4, 6), (), ())],
    "quaternary": [((), (4, 6), (), (4, 6)), ((), (4, 6), (), (4, 1))],
    "move": [((4, 6),), ((4, 1),)],
}


def _rng(*key):
    return np.random.default_rng(zlib.crc32(repr(key).encode()))


def _check(op, inputs, name, dt, what, **kw):
    got, want = run_both(op, inputs, **kw)
    diff = mismatch(got, want, tolerance(name, dt))
    assert not diff, f"{name} {dt} {what}: {diff}"
    return got


@pytest.mark.parametrize("name,dt", sampled(CASES, SAMPLE, [f"{n}-{d}" for n, d in CASES]))
def test_op_dtype_layouts(name, dt):
    """Each op on each dtype it accepts, over every layout, broadcasting, rank 0 and zero-size."""
    op = ops.get(name)
    rng = _rng(name, str(dt))
    kw = {"shape": (3, 4, 6)} if op.kind == "move" else {}
    for shapes in SHAPES[op.kind]:
        base = inputs_for(op, dt, shapes, rng)
        for layout, make in LAYOUTS.items():
            _check(op, [make(x) for x in base], name, dt, f"{layout} {shapes}", **kw)
        # mixed layouts, and a broadcast (stride 0) view as an input
        mixed = [LAYOUTS["transposed"](base[0])] + [np.broadcast_to(x, x.shape) for x in base[1:]]
        _check(op, mixed, name, dt, f"mixed {shapes}", **kw)
    # rank 0 and zero-size
    _check(op, inputs_for(op, dt, [()] * len(SHAPES[op.kind][0]), rng), name, dt, "rank 0",
           **({"shape": ()} if op.kind == "move" else {}))
    zero = [(0, 6)] + [(6,)] * (len(SHAPES[op.kind][0]) - 1)
    _check(op, inputs_for(op, dt, zero, rng), name, dt, "zero-size",
           **({"shape": (0, 6)} if op.kind == "move" else {}))


#: short rows against one row of the other operand, either side (``rows.binary_row``'s tiled run): widths
#: of 1 to 127 elements over several runs of a slab and a partial one, and 128, the first it leaves alone;
#: against one value a row (its spread run: widths below 32, and 32); the last two on every thread
SHORT_ROWS = [((1000, k), (k,)) for k in (1, 3, 5, 16, 127, 128)] + [((k,), (700, k)) for k in (3, 100)] \
    + [((1000, k), (1000, 1)) for k in (2, 3, 7, 16, 31, 32)] + [((700, 1), (700, k)) for k in (5, 17)] \
    + [((40000, 3), (3,)), ((20000, 7), (20000, 1))]
BINARY_CASES = [c for c in CASES if ops.get(c[0]).kind == "binary"]


def _row_by_row(x):
    """x as a view whose rows do not follow each other (one element apart): the row loop's layout."""
    wide = np.empty((x.shape[0], x.shape[1] + 1), x.dtype)
    wide[:, :-1] = x
    return wide[:, :-1]


@pytest.mark.parametrize("name,dt", sampled(BINARY_CASES, one_dtype_per_op(BINARY_CASES, every_dtype=("add",)),
                                            [f"{n}-{d}" for n, d in BINARY_CASES]))
def test_short_rows_against_one_row(name, dt):
    """(N, k) op (k,), (k,) op (N, k), (N, k) op (N, 1) and (N, 1) op (N, k) for short k give exactly the
    row loop's values (the same op on the (N, k) operand laid out row by row) into a new output and
    into out= the (N, k) operand itself; add's are NumPy's."""
    op = ops.get(name)
    rng = _rng("short", name, str(dt))
    for shapes in SHORT_ROWS:
        inputs = inputs_for(op, dt, shapes, rng)
        full = 0 if shapes[0] == np.broadcast_shapes(*shapes) else 1
        spread = list(inputs)
        spread[full] = _row_by_row(inputs[full])
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            want = apply(op, spread, backend="numba")
            got = apply(op, inputs, backend="numba")
            assert not mismatch(got, want), f"{name} {dt} {shapes}: {mismatch(got, want)}"
            if want.dtype == inputs[full].dtype:       # in place: out= is the (N, k) operand
                x = inputs[full].copy()
                args = [x, inputs[1]] if full == 0 else [inputs[0], x]
                assert apply(op, args, out=x, backend="numba") is x
                assert not mismatch(x, want), f"{name} {dt} in place {shapes}: {mismatch(x, want)}"
        if name == "add":
            assert not mismatch(got, run_both(op, inputs)[1]), f"add {dt} {shapes} against NumPy"


#: (op, input dtypes, output dtype, whether its rows are light: ``backend.light``)
WIDTH_CASES = [("add", ("float32", "float32"), "float32", True), ("maximum", ("float64", "float64"), "float64", True),
               ("negative", ("int16",), "int16", True), ("where", ("bool", "float32", "float32"), "float32", True),
               ("copy", ("float32",), "float32", True), ("sum", ("float32",) * 3, "float32", True),
               ("tanh", ("float32",), "float32", False), ("power", ("float32", "float32"), "float32", False),
               ("greater", ("float32", "float32"), "bool", False)]


@pytest.mark.parametrize("name,ins,out,light", WIDTH_CASES, ids=[c[0] for c in WIDTH_CASES])
def test_light_rows_vectorise_at_the_light_width(name, ins, out, light, monkeypatch):
    """A light op's row function carries the ``prefer-vector-width`` of ``rows.LIGHT_BITS`` into LLVM
    (and on an AVX-512 host, its loops use no 512-bit register); a heavy op's, or one that narrows
    its inputs (a comparison), keeps LLVM's own width."""
    import llvmlite.binding as llvm
    import numba

    from gpubcast.backends.numba import backend as numba_backend
    from gpubcast.backends.numba import rows

    # compiled here, not loaded from gpubcast's cache (a cached library holds machine code, no IR)
    monkeypatch.setattr(rows, "cfunc", lambda signature, fn, identity, **options: numba.cfunc(signature, **options)(fn))
    op = ops.get(name)
    assert numba_backend.light(op, [np.dtype(d) for d in ins], np.dtype(out)) == light
    spec = numba_backend.make_spec(op, tuple(np.dtype(d) for d in ins), np.dtype(out))
    library = spec.make_row()._library
    attribute = f'"prefer-vector-width"="{rows.LIGHT_BITS}"'
    assert (attribute in library.get_llvm_str()) == light
    if light and llvm.get_host_cpu_features().get("avx512f"):
        assert "zmm" not in library.get_asm_str()


OUT_CASES = [c for c in CASES if c[0] in ("add", "divide", "where", "sum", "copy", "maximum", "power", "less")]


@pytest.mark.parametrize("name,dt", sampled(OUT_CASES, one_dtype_per_op(OUT_CASES, every_dtype=("add",)),
                                            [f"{n}-{d}" for n, d in OUT_CASES]))
def test_out_layouts(name, dt):
    """``out=`` of any layout (transposed, sliced, flipped, misaligned) receives NumPy's values."""
    op = ops.get(name)
    rng = _rng("out", name, str(dt))
    shapes = SHAPES[op.kind][-1]
    inputs = inputs_for(op, dt, shapes, rng)
    kw = {"shape": (4, 6)} if op.kind == "move" else {}
    want = run_both(op, inputs, **kw)[1]
    for layout, make in LAYOUTS.items():
        out = make(np.zeros(want.shape, want.dtype))
        got = apply(op, inputs, out=out, backend="numba", **kw)
        assert got is out
        assert not mismatch(out, want, tolerance(name, dt)), f"{layout}: {mismatch(out, want)}"


def test_default_cpu_backend_is_numba():
    a = np.ones(3)
    assert backends.DEFAULT_CPU == "numba"
    assert backends.select([a]).name == "numba"
    assert backends.select([a], requested="numpy").name == "numpy"
    np.testing.assert_array_equal(gb.add(a, a, backend="numpy"), gb.add(a, a))


def test_python_scalars_and_mixed_dtypes():
    a = np.arange(6, dtype=np.int8).reshape(2, 3)
    for got, want in [
        (gb.add(a, 3), np.add(a, 3)),
        (gb.multiply(a, 2.5), np.multiply(a, 2.5)),
        (gb.subtract(a.astype(np.float32), np.array(1.0)), np.subtract(a.astype(np.float32), np.array(1.0))),
        (gb.add(a, np.arange(3, dtype=np.uint16)), np.add(a, np.arange(3, dtype=np.uint16))),
        (gb.divide(a, 7), np.divide(a, 7)),
        (gb.where(a > 2, a, -1.5), np.where(a > 2, a, -1.5)),
    ]:
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)


def test_casting_out():
    a = np.arange(6, dtype=np.int16)
    out = np.zeros(6, np.float64)
    gb.multiply(a, 3, out=out)
    np.testing.assert_array_equal(out, a * 3.0)
    with pytest.raises(TypeError, match="same_kind"):
        gb.add(np.ones(3), np.ones(3), out=np.zeros(3, np.int32))


def test_read_only_output_is_an_error():
    out = np.zeros(4)
    out.flags.writeable = False
    with pytest.raises(ValueError, match="read-only"):
        gb.add(np.ones(4), np.ones(4), out=out)
    with pytest.raises(ValueError, match="read-only"):  # the hot path too (second call)
        gb.add(np.ones(4), np.ones(4), out=out)


def test_hot_path_gives_the_same_results():
    """Repeated calls (served by the cached runner) equal the first and NumPy's."""
    rng = np.random.default_rng(0)
    a, b = rng.random((5, 7)), rng.random(7)
    out = np.empty((5, 7))
    for _ in range(3):
        np.testing.assert_array_equal(gb.subtract(a, b), a - b)
        gb.subtract(a, b, out=out)
        np.testing.assert_array_equal(out, a - b)
        c = rng.random((5, 7)) > 0.5
        np.testing.assert_array_equal(gb.where(c, a, b), np.where(c, a, b))
        np.testing.assert_array_equal(gb.broadcast_to(b, (5, 7)), np.broadcast_to(b, (5, 7)))


@pytest.mark.parametrize("n_inputs", [1, 2, 5])
@pytest.mark.parametrize("name", ["sum", "mean", "max", "min"])
def test_variadic_one_pass(name, n_inputs):
    op = ops.get(name)
    rng = _rng("variadic", name, n_inputs)
    shapes = [(3, 4, 5), (4, 5), (3, 1, 5), (5,), (1, 4, 1)][:n_inputs]
    for dt in (np.dtype(np.float32), np.dtype(np.float16), gb.bfloat16, np.dtype(np.int16)):
        if loop_types(op, dt) is None:
            continue
        inputs = [inputs_for(ops.get("copy"), dt, [s], rng)[0] for s in shapes]
        got, want = run_both(op, inputs)
        assert not mismatch(got, want), f"{name} {dt} x{n_inputs}: {mismatch(got, want)}"


def test_broadcast_to_strings_objects_and_records():
    """Data movement of any dtype: strings and records move as raw bytes, objects by reference."""
    for x in [np.array(["ab", "cde", ""], dtype="S3"), np.array(["αβγ", "x", "yz"]),
              np.array([1, "two", None], dtype=object),
              np.array([(1, 2.5), (3, -1.0), (5, 0.0)], dtype=[("a", "i2"), ("b", "f8")]),
              np.array([b"\x00\x01\x02\x03\x04"] * 3, dtype="V5")]:
        for src in (x, x[::-1], x.reshape(3, 1)):
            shape = (4, 3) if src.ndim == 1 else (3, 4)
            got = gb.broadcast_to(src, shape)
            want = np.broadcast_to(src, shape)
            assert got.dtype == want.dtype and got.shape == want.shape
            assert (got == want).all(), (x.dtype, got, want)
    s = np.array(["a", "bb", "ccc"])
    np.testing.assert_array_equal(gb.where(np.array([True, False, True]), s, "zz"),
                                  np.where([True, False, True], s, "zz"))


def test_hypothesis_shapes_and_layouts():
    """Random broadcastable shapes and layouts, against NumPy."""
    hyp = pytest.importorskip("hypothesis")
    from hypothesis import given, strategies as st
    from hypothesis.extra.numpy import mutually_broadcastable_shapes

    layouts = st.sampled_from(sorted(LAYOUTS))

    @given(mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=4, max_side=5),
           layouts, layouts, st.sampled_from(["add", "maximum", "greater", "floor_divide"]))
    def check(shapes, la, lb, name):
        rng = np.random.default_rng(0)
        op = ops.get(name)
        a, b = inputs_for(op, np.dtype(np.int32), shapes.input_shapes, rng)
        got, want = run_both(op, [LAYOUTS[la](a), LAYOUTS[lb](b)])
        assert not mismatch(got, want)

    assert hyp
    check()


def test_the_power_tolerance_is_in_ulps_subnormal_results_included():
    # benchmarks/cache_stress.py round 24: NumPy's SVML power and libm's were 1-2 subnormal ulps apart
    tol = tolerance("power", np.float32)
    assert not mismatch(np.float32([4.02255e-40, 2.0]), np.float32([4.02257e-40, 2.0]), tol)
    assert mismatch(np.float32([4.02255e-40]), np.float32([4.02257e-40]))            # exact elsewhere
    assert mismatch(np.float32([1.0e-38]), np.float32([1.1e-38]), tol)              # 10 % is no ulp
    assert mismatch(np.float32([1.0]), np.float32([1.0 + 16 * 2**-23]), tol)


def test_power_fast_path_only_for_an_exponent_constant_over_the_whole_call():
    """NumPy's float power takes its fast path (0.5 -> sqrt: -0.0 stays -0.0, -inf gives nan) only
    for an exponent that is one value over the whole call; one broadcast along the rows but not
    the same everywhere gives pow's values (0.0, inf), also where all its values are 0.5."""
    x = np.array([[-0.0, -np.inf, 4.0, 1.0, 2.0]] * 3)
    exponents = [0.5, np.float64(0.5), np.full((1, 1), 0.5), np.full((3, 1), 0.5), np.full((1, 5), 0.5),
                 np.array([[0.5], [2.0], [-1.0]]), np.broadcast_to(np.full((3, 1), 0.5), (3, 5))]
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        for e in exponents:
            want = np.power(x, e)
            for be in ("numba", "numpy"):
                got = gb.power(x, e, backend=be)
                assert np.array_equal(got, want, equal_nan=True), (be, e, got, want)
                assert np.array_equal(np.signbit(got), np.signbit(want)), (be, e, got, want)
            fused = gb.fuse(lambda x, e: x ** (e * 1))(x, e)
            assert np.array_equal(np.signbit(fused), np.signbit(want)) and np.array_equal(fused, want, equal_nan=True)
