"""gpubcast's CUDA kernels on a GPU, against the NumPy reference backend.

Marker ``gpu``.  The ``cupy`` fixture (conftest.py) is the real CuPy where a GPU is
(``ci/gpu-check`` runs them on a GPU machine), else the virtual CUDA device
(``gpubcast.testing.virtual``): the same backend path, each launch's arguments checked against
the loaded kernel's parameters and run by the host emulation with every memory access checked.
On the virtual device a sample of the (op, dtype) cases runs by default, the rest is marked
``slow``.  Device operands keep the host operand's strides and 16-byte alignment offset
(``device_like``), so every fast path of the kernels is reached the same way as under host
emulation.
"""

import zlib

import numpy as np
import pytest

import gpubcast as gb
from gpubcast import backends
from gpubcast import dtypes as _dt
from gpubcast import ops
from gpubcast.testing import checks
from gpubcast.dispatch import apply
from gpubcast.testing.device import use_virtual

from tests.support.sampling import one_dtype_per_op, rotating_dtype
from tests.support.sampling import sampled as _sampled

pytestmark = pytest.mark.gpu

ALL_DTYPES = tuple(_dt.NUMERIC)


def on_device(cupy, xs):
    return [checks.device_like(x, cupy) for x in xs]


def host(x):
    return np.asarray(x) if isinstance(x, np.ndarray) or not hasattr(x, "get") else x.get()


def is_virtual(cupy) -> bool:
    return type(cupy).__name__ == "VirtualCupy"


def needs_device_dtype(cupy, dtype):
    try:
        view = cupy.empty(3, dtype)[::-1]
        view[...] = cupy.asarray(np.zeros(3, dtype))           # what device_like does
        view.get()
    except Exception as e:  # noqa: BLE001 - CuPy without this dtype
        pytest.skip(f"CuPy cannot hold {dtype} here ({type(e).__name__}: {e})")


def assert_agrees(op_name, got, want, dtype):
    got = host(got)
    rtol = checks.tolerance(op_name, dtype, device=True)
    assert checks.agree(op_name, got, want, rtol), checks._difference(got, want, rtol, op_name)


def sampled(cases, keep, ids):
    """``cases`` as pytest params; on the virtual device those not ``keep(i, case)`` are marked slow."""
    return _sampled(cases, keep, ids, active=use_virtual())


BINARY = [(name, t) for name, op in sorted(ops.REGISTRY.items()) if op.kind == "binary"
          for t in sorted({pair[0] for pair in checks.dtypes_for(op, ALL_DTYPES)}, key=str)]


def _binary_sample(k, case):
    """Every dtype with add (every binary op runs once on the device in test_binary_rule_sets)."""
    return case[0] == "add"


@pytest.mark.parametrize("name, dtype", sampled(BINARY, _binary_sample, [f"{n}-{t}" for n, t in BINARY]))
def test_binary_op_every_layout(name, dtype, cupy):
    needs_device_dtype(cupy, dtype)
    rng = np.random.default_rng(zlib.crc32(f"{name}-{dtype}".encode()))   # the same draw every run
    op = ops.get(name)
    for layout, (x1, x2) in checks.binary_layouts(rng, dtype, name).items():
        want = apply(op, (x1, x2), backend="numpy")
        got = apply(op, on_device(cupy, (x1, x2)))
        assert isinstance(got, cupy.ndarray), layout
        assert_agrees(name, got, want, dtype)


UNARY = [(name, t[0]) for name in ops.UNARY for t in checks.dtypes_for(ops.get(name), ALL_DTYPES)]
_unary_sample = one_dtype_per_op(UNARY)   # every op with one dtype (rotating through the dtypes it takes)


@pytest.mark.parametrize("name, dtype", sampled(UNARY, _unary_sample, [f"{n}-{t}" for n, t in UNARY]))
def test_unary_op_every_layout(name, dtype, cupy):
    """Each unary op (math functions included) on each dtype with a kernel, in every layout of
    ``checks.unary_layouts``."""
    needs_device_dtype(cupy, dtype)
    rng = np.random.default_rng(zlib.crc32(f"{name}-{dtype}".encode()))   # the same draw every run
    op = ops.get(name)
    target = dtype if name == "cast" else None
    for x in checks.unary_layouts(rng, dtype, name).values():
        want = apply(op, (x,), backend="numpy", dtype=target)
        got = apply(op, on_device(cupy, (x,)), dtype=target)
        assert_agrees(name, got, want, dtype)


def test_complex_math_functions_are_a_clear_type_error(cupy):
    """libdevice has no complex sin ... log10: a TypeError naming the op, not a wrong value."""
    z = cupy.asarray(np.array([1 + 2j, -0.5j], np.complex64))
    for name in ("sin", "arctanh", "log1p", "exp2"):
        with pytest.raises(TypeError, match=rf"{name}: the CUDA backend has no kernel for complex"):
            getattr(gb, name)(z)
    assert_agrees("conj", gb.conj(z), np.conj(host(z)), np.complex64)   # exact ones have kernels
    assert_agrees("sign", gb.sign(z), np.sign(host(z)), np.complex64)


@pytest.mark.parametrize("name", [n for n, op in sorted(ops.REGISTRY.items()) if op.kind == "binary"])
def test_binary_rule_sets(name, cupy):
    op = ops.get(name)
    dtype = rotating_dtype(BINARY)[name]    # the sampled layouts' dtype: their kernels serve here too
    needs_device_dtype(cupy, dtype)
    rng = np.random.default_rng(1)
    v = lambda *s, role=0: checks.values(rng, dtype, s, op_name=name, role=role)
    calls = [
        dict(inputs=(v(2, 3, 4, 5), v(3, 4, role=1)), rule="pdpd", axis=1),
        dict(inputs=(v(2, 3, 4, 5), v(4, 5, role=1)), rule="pdpd", axis=-1),
        dict(inputs=(v(6, 7), v(6, 7, role=1)), rule="none"),
        dict(inputs=(v(4, 1, 5), v(3, 1, role=1)), rule="numpy"),
    ]
    if name == "prelu":
        calls.append(dict(inputs=(v(2, 3, 4), v(3, 1, role=1)), rule="unidirectional"))
    for c in calls:
        want = apply(op, c["inputs"], rule=c["rule"], axis=c.get("axis", -1), backend="numpy")
        got = apply(op, on_device(cupy, c["inputs"]), rule=c["rule"], axis=c.get("axis", -1))
        assert_agrees(name, got, want, dtype)


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_where(dtype, cupy):
    needs_device_dtype(cupy, dtype)
    rng = np.random.default_rng(11)
    v = lambda *s: checks.values(rng, dtype, s)
    c = rng.random((23, 41)) < 0.5
    cases = [
        (c, v(23, 41), v(23, 41)),
        (c[0], v(23, 41), v(41)),
        (np.asarray(True), v(23, 41), checks.layout(rng, v(23, 41), "flipped")),
        (c, v(1, 1), np.asarray(v())),
        (checks.layout(rng, c, "transposed"), checks.layout(rng, v(23, 41), "misaligned"), v(23, 1)),
    ]
    for x in cases:
        assert_agrees("where", apply(ops.get("where"), on_device(cupy, x)), np.where(*x), dtype)
    x, cond, y = v(2, 3, 4, 5), rng.random((3, 4)) < 0.5, v(3, 1)
    want = gb.where(cond, x, y, broadcast="pdpd", axis=1, backend="numpy")
    assert_agrees("where", gb.where(*on_device(cupy, (cond, x, y)), broadcast="pdpd", axis=1), want, dtype)


VARIADIC = [(n, t) for n in ("sum", "mean", "max", "min") for t in ALL_DTYPES if _dt.kind(t) in ops.get(n).accepts]


@pytest.mark.parametrize("name, dtype", sampled(VARIADIC, lambda k, c: k % 3 == 0,
                                                [f"{n}-{t}" for n, t in VARIADIC]))
def test_variadic(name, dtype, cupy):
    needs_device_dtype(cupy, dtype)
    rng = np.random.default_rng(2)
    v = lambda *s: checks.values(rng, dtype, s)
    op = ops.get(name)
    for xs in ([v(17, 29)], [v(17, 29), v(29), v(17, 1)],
               [v(17, 29), np.asarray(v()), checks.layout(rng, v(17, 29), "transposed"), v(1, 1)],
               [v(17, 29)] + [v(29) for _ in range(10)] + [checks.layout(rng, v(17, 29), "flipped")]):
        assert_agrees(name, apply(op, on_device(cupy, xs)), apply(op, xs, backend="numpy"), dtype)


@pytest.mark.parametrize("dtype", ALL_DTYPES, ids=str)
def test_data_movement_every_mode(dtype, cupy):
    needs_device_dtype(cupy, dtype)
    rng = np.random.default_rng(9)
    v = lambda *s: checks.values(rng, dtype, s)
    x6, x91, x913, x34, x61 = v(6), v(9, 1), checks.layout(rng, v(9, 13), "transposed"), v(3, 4), v(6, 1)
    calls = [
        lambda m, x: gb.broadcast_to(x, (2, 6, 9, 11), mode="explicit", axes_mapping=[1]),
        lambda m, x: gb.broadcast_to(x, (4, 9, 1), mode="numpy"),
        lambda m, x: gb.broadcast_to(x, (3, 9, 13)),
        lambda m, x: gb.broadcast_to(x, (2, 3, 4, 5), mode="pdpd", axis=1),
        lambda m, x: gb.expand(x, (2, 1, 11)),
    ]
    for call, x in zip(calls, (x6, x91, x913, x34, x61)):
        assert_agrees("copy", call(None, checks.device_like(x, cupy)), call(None, x), dtype)


RANDOM_CASES, RANDOM_SAMPLE = 400, 60    # random cases; those run by default on the virtual device


@pytest.mark.parametrize("part", sampled([("sample",), ("rest",)], lambda k, c: c[0] == "sample",
                                         ["sample", "rest"]))
def test_random_cases_and_benchmark_patterns(part, cupy):
    """The benchmark's patterns and the first RANDOM_SAMPLE random cases ("sample"), the other random
    cases ("rest": slow on the virtual device, where each new kernel is an NVRTC compile)."""
    rng = np.random.default_rng(0)
    cases = checks.benchmark_patterns(rng) + checks.benchmark_patterns(rng, np.float16) + \
        checks.random_cases(rng, RANDOM_CASES)
    cut = len(cases) - (RANDOM_CASES - RANDOM_SAMPLE)
    cases = cases[:cut] if part == "sample" else cases[cut:]
    bad = []
    for case in cases:
        want = checks.run(case, "numpy")
        got = host(checks.run(case, None, inputs=on_device(cupy, case.inputs)))
        dtype = case.meta.get("dtype") or np.asarray(want).dtype
        rtol = checks.tolerance(case.op.name, dtype, device=True)
        if not checks.agree(case.op.name, got, want, rtol):
            bad.append(f"{case.name}: {checks._difference(got, want, rtol, case.op.name)}")
    assert not bad, "\n".join(bad[:10])


@pytest.mark.parametrize("name, dtype, a, b, expected", checks.INTEGER_EDGE_CASES,
                         ids=[f"{c[0]}-{c[1].__name__}" for c in checks.INTEGER_EDGE_CASES])
def test_integer_edge_cases(name, dtype, a, b, expected, cupy):
    got = apply(ops.get(name), (cupy.asarray(np.array(a, dtype)), cupy.asarray(np.array(b, dtype))))
    assert np.array_equal(host(got), np.array(expected, dtype))


def test_float32_subnormals_are_kept_and_nan_propagates(cupy):
    t = np.float32(1e-40)                                                    # a subnormal
    tiny = cupy.full(5, t, cupy.float32)
    assert (host(gb.multiply(tiny, 1.0)) == t).all()                         # no flush to zero
    assert (host(gb.add(tiny, tiny)) == t + t).all() and t + t != 0
    r = host(gb.maximum(cupy.asarray([np.nan, 1.0, 2.0]), cupy.asarray([1.0, np.nan, 1.0])))
    assert np.isnan(r[:2]).all() and r[2] == 2.0


@pytest.mark.parametrize("dtype", [np.float32, _dt.bfloat16, np.complex64])
def test_subnormals_survive_the_conversions_gpubcast_makes_on_the_device(dtype, cupy):
    """Inputs converted to the loop's type and results converted into out=, each through gpubcast's
    cast kernels, as NumPy converts.  Not CuPy's astype: its kernels flush float32
    subnormals (an H100, 2026-11-27: logical_and(1e-40, 2.5) was False, a bfloat16 prelu gave 0)."""
    t = np.array([1e-40, -3e-39, 0.0, 2.0], np.float32)
    x = t.astype(dtype)
    assert np.count_nonzero(x) == 3                                   # the subnormals are there
    d = cupy.asarray(x)
    wide = np.complex128 if np.dtype(dtype).kind == "c" else np.float64
    assert np.array_equal(host(gb.logical_and(d, 2.5)), x != 0)       # a weak scalar: the bool loop
    got = host(gb.add(d, cupy.zeros(4, np.float64)))                   # x converted to the float64 loop
    assert got.dtype == wide and np.array_equal(got, x.astype(wide)), got
    out = cupy.empty(4, wide)
    gb.multiply(d, cupy.ones(4, dtype), out=out)                       # computed in x's type, converted into out
    assert np.array_equal(host(out), x.astype(wide)), host(out)


@pytest.mark.parametrize("dtype", [np.float32, np.float64])
def test_power_fast_path_only_for_an_exponent_constant_over_the_whole_call(dtype, cupy):
    """As NumPy: an exponent that is one value over the call (host scalar, (1, 1) device array,
    0-stride view) takes the fast path (0.5 -> sqrt: -0.0 stays -0.0, -inf gives nan; -1, 0, 1, 2
    exact); one broadcast along rows gives pow's values (0.0, inf) even where all its values are 0.5."""
    x = np.array([[-0.0, -np.inf, np.inf, -1.0, 4.0, 1e-3, np.nan, 3.0]] * 3, dtype)
    for e in (0.5, 2.0, -1.0, 1.0, 0.0, 3.0):
        for host_e in (e, dtype(e), np.full((1, 1), e, dtype), np.full((3, 1), e, dtype),
                       np.array([[e], [2.0], [-1.0]], dtype)):
            with np.errstate(all="ignore"):
                want = np.power(x, host_e)
            dev_e = cupy.asarray(host_e) if isinstance(host_e, np.ndarray) else host_e
            got = host(gb.power(cupy.asarray(x), dev_e))
            assert got.dtype == want.dtype
            assert_agrees("power", got, want, dtype)                  # pow's last bit may differ
            special = ~np.isfinite(want) | (want == 0)
            assert np.array_equal(got[special], want[special], equal_nan=True), (e, host_e, got, want)
            number = ~np.isnan(want)   # a NaN's sign is no value (x86 makes -nan, CUDA's sqrtf +nan)
            assert np.array_equal(np.signbit(got[number]), np.signbit(want[number])), (e, host_e, got, want)


def test_out_aliasing(cupy):
    rng = np.random.default_rng(4)
    a, b = rng.standard_normal((50, 40)), rng.standard_normal(40)
    want = a + b
    x = cupy.asarray(a.copy())
    gb.add(x, cupy.asarray(b), out=x)                          # element for element: no copy
    assert np.array_equal(host(x), want)
    x, y = cupy.asarray(a.copy()), a.copy()
    gb.multiply(x[:-1], 2.0, out=x[1:])                        # partial overlap: copied first
    np.multiply(y[:-1], 2.0, out=y[1:])
    assert np.array_equal(host(x), y)
    out = cupy.empty((50, 40), cupy.float32)
    assert gb.add(cupy.asarray(a), cupy.asarray(b), out=out) is out
    assert np.array_equal(host(out), (a + b).astype(np.float32))
    t = cupy.empty((40, 50)).T                                 # strided out=
    gb.subtract(cupy.asarray(a), cupy.asarray(b), out=t)
    assert np.array_equal(host(t), a - b)


def test_zero_size_launches_nothing(monkeypatch, cupy):
    be = backends.get("cuda")
    monkeypatch.setattr(be, "function", lambda *a: pytest.fail("a zero-size output launched a kernel"))
    r = gb.add(cupy.ones((0, 3), cupy.float32), cupy.ones(3, cupy.float32))
    assert isinstance(r, cupy.ndarray) and r.shape == (0, 3)
    assert gb.expand(cupy.ones((1, 3)), (0, 3)).shape == (0, 3)


def test_kernels_are_compiled_once_per_device(cupy):
    be = backends.get("cuda")
    gb.add(cupy.ones(4, cupy.float32), cupy.ones(4, cupy.float32))
    keys = set(be._functions)
    gb.add(cupy.ones(9, cupy.float32), cupy.ones(9, cupy.float32))
    assert set(be._functions) == keys
    assert any(dev == cupy.cuda.Device().id for dev, _ in keys)


def test_more_than_2_to_the_31_elements(cupy):
    if is_virtual(cupy):
        pytest.skip("needs a real GPU: 2**31 elements are hours of host emulation")
    n = 2**31 + 7
    # contiguous kernel: 64-bit linear index
    out = gb.add(cupy.ones(n, cupy.int8), 1)
    assert out.shape == (n,) and bool((out == 2).all())
    del out
    # general kernel, 64-bit path: a row broadcast over 2**31 + 2**15 elements
    x = cupy.zeros((2**16 + 1, 2**15), cupy.int8)
    b = cupy.arange(2**15, dtype=cupy.int16).astype(cupy.int8)
    assert gb.plan(x, b).index_bits == 64
    out = gb.add(x, b)
    for row in (0, 2**15, 2**16):
        assert bool((out[row] == b).all()), row
    assert bool((out == b).all())
    del x, out
    # data movement past 2**31: expand a column
    col = cupy.arange(7, dtype=cupy.int8).reshape(7, 1)
    out = gb.expand(col, (7, 2**29 + 1))
    assert out.size > 2**31 and bool((out == col).all())


def test_launches_go_to_the_current_stream(cupy):
    a = cupy.random.standard_normal((512, 256)).astype(cupy.float32)
    b = cupy.random.standard_normal(256).astype(cupy.float32)
    out = cupy.empty_like(a)
    gb.add(a, b, out=out)                                       # compile and load outside the capture
    stream = cupy.cuda.Stream(non_blocking=True)
    with stream:
        stream.begin_capture()
        gb.add(a, b, out=out)                                   # a launch on any other stream breaks the capture
        graph = stream.end_capture()
    out.fill(0)
    graph.launch(stream)
    stream.synchronize()
    assert cupy.array_equal(out, a + b)
    with cupy.cuda.Stream(non_blocking=True) as s:
        r = gb.multiply(a, 3.0)
        s.synchronize()
    assert cupy.array_equal(r, a * cupy.float32(3.0))


def test_cuda_array_interface_and_dlpack_inputs(cupy):
    a = cupy.arange(12, dtype=cupy.float32).reshape(3, 4)

    class Wrapped:
        def __init__(self, arr):
            self.__cuda_array_interface__ = arr.__cuda_array_interface__
            self.shape, self.ndim = arr.shape, arr.ndim

    r = gb.multiply(Wrapped(a), 2.0)
    assert isinstance(r, cupy.ndarray) and cupy.array_equal(r, a * 2)
    r = gb.add(Wrapped(a), cupy.ones(4, cupy.float32))
    assert cupy.array_equal(r, a + 1)


def test_torch_cuda_tensors(cupy):
    if is_virtual(cupy):
        pytest.skip("needs a real GPU: torch CUDA tensors")
    torch = pytest.importorskip("torch")
    if not torch.cuda.is_available():
        pytest.skip("torch has no CUDA here")
    t1 = torch.arange(12, dtype=torch.float32, device="cuda").reshape(3, 4)
    t2 = torch.arange(4, dtype=torch.float32, device="cuda")
    r = gb.add(t1, t2)
    assert isinstance(r, cupy.ndarray)
    assert np.array_equal(host(r), (t1 + t2).cpu().numpy())
    r = gb.where(t1 > 5, t1, 0.0)
    assert np.array_equal(host(r), torch.where(t1 > 5, t1, 0.0).cpu().numpy())
    tb = t1.to(torch.bfloat16)
    r = gb.multiply(tb, tb)
    assert np.array_equal(host(r).astype(np.float32), (tb * tb).float().cpu().numpy())


def test_mixing_numpy_and_cupy(cupy):
    with pytest.raises(TypeError, match="cannot mix a host array of type ndarray"):
        gb.add(cupy.ones(3), np.ones(3))
    r = gb.add(cupy.ones(3, cupy.float32), np.float32(2.0))             # 0-d host: a kernel argument
    assert isinstance(r, cupy.ndarray) and r.dtype == np.float32 and bool((r == 3).all())
    r = gb.add(cupy.ones(3, cupy.int8), np.array(5, np.int16))         # strong 0-d: NumPy 2 promotion
    assert r.dtype == np.int16


def test_dtype_argument_as_on_the_cpu(cupy):
    a = np.arange(6, dtype=np.int32)
    for dtype in (np.float32, np.int64):
        want = gb.add(a, a, dtype=dtype, backend="numpy")
        got = gb.add(cupy.asarray(a), cupy.asarray(a), dtype=dtype)
        assert got.dtype == want.dtype and np.array_equal(host(got), want)


@pytest.mark.parametrize("dtype", [np.float32, np.float16, np.int32], ids=str)
def test_benchmark_patterns_as_the_benchmark_calls_them(dtype, cupy):
    """Every pattern of gpubcast/bench/patterns.py at its tiny shapes, through the benchmark's own
    binding (``peers.Gpubcast``, out= buffers from ``make_cases``), against the NumPy backend."""
    from gpubcast import elementwise_build
    from gpubcast.bench import patterns, peers
    for pattern in patterns.PATTERNS:
        if pattern.op == "axpb" and np.dtype(dtype) not in elementwise_build.CTYPES:
            continue   # ElementwiseKernel takes no float16 (a TypeError; the benchmark lists it as skipped)
        shapes = pattern.shapes("tiny", "gpu")
        host_in = patterns.host_operands(pattern, shapes, dtype)
        results = []
        for backend, xp in (("cuda", cupy), ("numpy", np)):
            [case] = patterns.make_cases(pattern, shapes, dtype, xp=xp, sets=1, host=host_in)
            call, _ = peers.Gpubcast(backend, "gpu", xp, backend).bind(pattern, shapes, case)
            call()
            results.append(host(case.out))
        assert_agrees("add", results[0], results[1], dtype), pattern.name


@pytest.mark.parametrize("dtype", [np.float32, np.float64], ids=str)
def test_general_kernels_row_broadcast_ascending_and_few_variadic_inputs(dtype, cupy):
    # issue 23's kernel paths through the real launch path: inputs of innermost stride 0 (one load
    # a tile) and 1 (vector loads; aligned or one element in), variadic launches of at most 4
    # inputs (5 argument slots located) and more (all 9), against the NumPy reference
    rng = np.random.default_rng(23)

    def v(*s):
        return checks.values(rng, dtype, s)
    col, row, row_off, full = v(37, 3, 1), v(3, 67), v(3, 68)[:, 1:], v(37, 3, 67)
    pairs = [(col, row), (row_off, col), (full[..., ::-1], row_off), (checks.layout(rng, full, "transposed"), row)]
    for a, b in pairs:
        da, db = on_device(cupy, [a, b])
        assert_agrees("add", gb.add(da, db), gb.add(a, b, backend="numpy"), dtype)
    for xs in ([col, row, row_off, full], [col, row, row_off, full, col, row]):
        for name in ("sum", "max"):
            assert_agrees(name, apply(ops.get(name), on_device(cupy, xs)), apply(ops.get(name), xs, backend="numpy"),
                          dtype)
    # shared tiles (a transposed operand): threads of a partial tile that own no element read
    # nothing of the (45, 1) column (its rows past 45 lie outside its allocation) or the row
    t = checks.layout(rng, v(45, 77), "transposed")
    for b in (v(45, 1), v(77)):
        dt, db = on_device(cupy, [t, b])
        assert_agrees("add", gb.add(dt, db), gb.add(t, b, backend="numpy"), dtype)


@pytest.mark.parametrize("dtype", [np.float32, np.float64, np.int16], ids=str)
@pytest.mark.parametrize("shape", [(9, 512), (9, 8, 64), (9, 8, 56)], ids=["rows", "chunk-rows", "padded-rows"])
def test_lane_chunks_through_the_launch_path(shape, dtype, cupy):
    # issue 23's lane chunks (gpubcast/kernels/launch.cuh LANE_CHUNKS, PADDED_ROWS) through the real launch
    # path: the allocations are the arrays' own (the virtual device faults a read or write past one:
    # a padded row's lanes past its end, a warp past the end), against the NumPy reference
    rng = np.random.default_rng(sum(shape))

    def v(*s):
        return checks.values(rng, dtype, s)
    full, row, column = v(*shape), v(shape[-1]), v(*shape[:-1], 1)
    reversed_ = v(*shape)[..., ::-1]
    for a, b in ((full, row), (column, reversed_), (reversed_, column), (row, column)):
        da, db = on_device(cupy, [a, b])
        assert_agrees("add", gb.add(da, db), gb.add(a, b, backend="numpy"), dtype)
    xs = [full, row, column, reversed_]
    assert_agrees("sum", apply(ops.get("sum"), on_device(cupy, xs)), apply(ops.get("sum"), xs, backend="numpy"), dtype)
    for b in (row, column):
        got = gb.broadcast_to(on_device(cupy, [b])[0], shape)
        assert_agrees("copy", got, np.broadcast_to(b, shape), dtype)
