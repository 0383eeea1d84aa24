"""gpubcast.fuse on CUDA arrays: one generated kernel per output (gpubcast.cuda.fused), equal bit for
bit to the unfused chain of gpubcast's CUDA kernels (the same functors, the same conversions).

Marker ``gpu``: the ``cupy`` fixture is the real CuPy on a GPU (``ci/gpu-check``), else the virtual
CUDA device (each launch checked against the kernel's PTX parameters, run by the host emulation
with every memory access checked).  tests/cuda/test_kernels_emulate.py runs the generated kernels on the
64-bit index path and a one-block grid, which a small array never reaches on a GPU.
"""

import warnings

import ml_dtypes
import numpy as np
import pytest

import gpubcast as gb
import gpubcast.onnx as gbo
from gpubcast import backends, fusion
from gpubcast.cuda import fused, launch, sources

from tests.support import ROOT

pytestmark = pytest.mark.gpu
RNG = np.random.default_rng(5)


def _v(shape, dtype=np.float32, scale=3.0):
    x = RNG.standard_normal(shape) * scale
    return (x + 1j * RNG.standard_normal(shape) if np.dtype(dtype).kind == "c" else x).astype(dtype)


def _host(x):
    return x.get() if hasattr(x, "get") else np.asarray(x)


def _bits(x):
    x = _host(x)
    return x.view(f"u{x.itemsize}") if x.dtype.kind == "f" or x.dtype == ml_dtypes.bfloat16 else x


def _same(got, want):
    got, want = _host(got), _host(want)
    assert (got.dtype, got.shape) == (want.dtype, want.shape)
    if got.dtype.kind == "c":
        assert np.array_equal(_bits(got.real.copy()), _bits(want.real.copy())) and \
            np.array_equal(_bits(got.imag.copy()), _bits(want.imag.copy()))
    else:
        assert np.array_equal(_bits(got), _bits(want)), (got, want)


@pytest.fixture
def launched(cupy, monkeypatch):
    """The launches the CUDA backend makes (family, name, grid), in order.  The backend's Python path
    only (the compiled launch path, which bypasses ``_launch``, is off): the compiled path makes the
    same launches from the same templates, which tests/cuda/test_compiled_launch.py checks."""
    be = backends.get("cuda")
    monkeypatch.setattr(be, "_context", False)
    made, real = [], be._launch

    def spy(lc, dev):
        made.append(lc)
        real(lc, dev)
    monkeypatch.setattr(be, "_launch", spy)
    return made


def _fused_and_unfused(f, cupy, launched, *args):
    """f fused on device copies of args (one launch per output, of a generated family) and the same
    trace unfused: each step a gpubcast call on the CUDA backend (``fusion.evaluate``; not f itself,
    whose Python operators on CuPy arrays would be CuPy's)."""
    dev = [cupy.asarray(a) if isinstance(a, np.ndarray) and a.ndim else a for a in args]
    fn = gb.fuse(f)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        launched.clear()
        got = fn(*dev)
        outputs = got if isinstance(got, tuple) else (got,)
        assert [lc.family[:4] for lc in launched] == ["gbf_"] * len(outputs), [lc.name for lc in launched]
        [trace] = fn._traces.values()
        want = [fusion.evaluate(p, dev, backend="cuda") for p in trace.programs]
    assert not any(lc.family.startswith("gbf_") for lc in launched[len(outputs):])
    for g, w in zip(outputs, want):
        _same(g, w)
    return got


def gelu(x, bias):
    h = x + bias
    return 0.5 * h * (1 + gb.tanh(0.7978845608 * (h + 0.044715 * h * h * h)))


@pytest.mark.parametrize("dtype", [np.float32, pytest.param(np.float64, marks=pytest.mark.slow),
                                   pytest.param(np.float16, marks=pytest.mark.slow),
                                   pytest.param(ml_dtypes.bfloat16, marks=pytest.mark.slow)], ids=str)
def test_benchmark_chains(dtype, cupy, launched):
    a, x, b = _v((1, 8, 1, 1), dtype), _v((4, 8, 9, 11), dtype), _v((1, 8, 1, 1), dtype)
    _fused_and_unfused(lambda a, x, b: a * x + b, cupy, launched, a, x, b)
    _fused_and_unfused(gelu, cupy, launched, _v((33, 70), dtype), _v((70,), dtype))
    _fused_and_unfused(lambda x, t, s: gb.where(x > t, x * s, 0), cupy, launched, _v((30, 17), dtype),
                       _v((30, 1), dtype), _v((17,), dtype))


def test_integer_bool_and_complex_chains(cupy, launched):
    i8 = RNG.integers(-128, 128, (6, 40), dtype=np.int8)
    u8 = RNG.integers(0, 256, (40,), dtype=np.uint8)
    _fused_and_unfused(lambda x, y: (x * 3 + 100) // 7 % 5 - (x << 2) ^ y.astype(np.int8), cupy, launched, i8, u8)
    _fused_and_unfused(lambda x, y: (x // (y - y)) + (x % 0), cupy, launched, i8, i8[0])  # division by zero: 0
    m = np.array([-2**31, -1, 7, 2**31 - 1], np.int32)
    _fused_and_unfused(lambda x, y: x // y + x % y, cupy, launched, m, np.array([-1, -1, 0, -1], np.int32))
    _fused_and_unfused(lambda x, y: gb.logical_xor(x > 0, ~(y > 0)) | (x < -1), cupy, launched, _v((5, 9)), _v((9,)))
    z, w = _v((7, 8), np.complex64), _v((8,), np.complex128)
    _fused_and_unfused(lambda z, w: (z * w + 1j) / (w - 2) ** 2, cupy, launched, z, w)
    _fused_and_unfused(lambda x: gb.cast(gb.clip(x, -1.5, 2), np.float16) * 3 + gb.abs(x), cupy, launched, _v((8, 16)))


def test_unary_math_variadic_and_casts(cupy, launched):
    x, y = _v((12, 33)), _v((33,), np.float64)
    _fused_and_unfused(lambda x, y: gb.exp(gb.sigmoid(x) - gb.erf(y)) + gb.log(gb.abs(x) + 1) * gb.sqrt(gb.abs(y)),
                       cupy, launched, x, y)
    _fused_and_unfused(lambda x, y: gb.round(x * 10) + gb.floor(y) - gb.ceil(x) * gb.sign(y) + gb.relu(x),
                       cupy, launched, x, y)
    _fused_and_unfused(lambda x, y, z: gbo.Mean(x, y, z) + gbo.Sum(x, y) * gbo.Max(x, z), cupy, launched,
                       x, x[0], _v((12, 1)))
    _fused_and_unfused(lambda x: gb.multiply(x, 3, dtype=np.float64) + gb.reciprocal(x), cupy, launched, x)


@pytest.mark.parametrize("dtype", [np.float32, pytest.param(np.float16, marks=pytest.mark.slow),
                                   pytest.param(ml_dtypes.bfloat16, marks=pytest.mark.slow)], ids=str)
def test_activation_chains(dtype, cupy, launched):
    """Unary, one-parameter and parametric (x, p, q) activations in one generated kernel, bit for bit
    the unfused chain; a tensor parameter broadcast to x."""
    x, a = _v((9, 40), dtype), (RNG.uniform(0.1, 1.0, (40,))).astype(dtype)
    _fused_and_unfused(lambda x, a: gb.hard_sigmoid(gb.leaky_relu(x, a), 0.25, 0.5) + gb.gelu(x, "tanh")
                       * gb.mish(x), cupy, launched, x, a)
    _fused_and_unfused(lambda x, a: gb.shrink(gb.selu(x, a, 1.5), 0.25, a) - gb.elu(gb.softplus(x), 0.5)
                       + gb.swish(gb.softsign(x), a) * gb.celu(x, 2.0) + gb.thresholded_relu(gb.hard_swish(x), a)
                       + gb.gelu(x) * gb.hsigmoid(x), cupy, launched, x, a)


def test_layouts_and_scalars(cupy, launched):
    x = cupy.asarray(_v((40, 70)))
    t = cupy.asarray(_v((70, 40))).T                     # transposed: shared-memory tiles
    _fused_and_unfused(lambda x, t: x * t - t, cupy, launched, x, t)
    assert _shared_tiles(launched[0], 2)
    _fused_and_unfused(lambda x, t: x * t - t, cupy, launched, x[::-2, ::3], t[::-2, ::-3])  # negative strides
    s0 = cupy.asarray(np.float32(2.5))                   # a 0-d device array: SCALAR
    _fused_and_unfused(lambda x, s, h: x * s + h, cupy, launched, x, s0, np.float32(-1.0))  # h: a host VALUE
    _fused_and_unfused(lambda x: x + 1, cupy, launched, _v((2, 1, 3, 1, 2, 1, 2, 1, 2, 3, 2)[::-1]))
    deep = cupy.asarray(_v((2, 3) * 6))[::-1, :, ::-1, :, ::-1, :, ::-1, :, ::-1, :, ::-1, :]  # 12 dims, no coalescing
    launched.clear()
    got = gb.fuse(lambda x: x * 2 - 1)(deep)
    assert len(launched) == 6 and len({lc.name for lc in launched}) == 1   # one launch per index of the 2 outer dims
    _same(got, _host(deep) * np.float32(2) - np.float32(1))


def _shared_tiles(lc, nin) -> bool:
    head = launch.head_size(nin)
    return bool(int.from_bytes(lc.params[head - 12:head - 8], "little") & launch.SHARED_TILES)


def test_power_fast_path_follows_the_unfused_chain(cupy, launched):
    x = np.array([[-0.0, -np.inf, np.inf, 4.0, -1.0, 2.0]] * 3)
    for e in (0.5, 2.0, -1.0, 1.0, 0.0, 3.0):
        got = _fused_and_unfused(lambda x, e: x ** e * 1.0, cupy, launched, x, e)
        with np.errstate(all="ignore"):
            want = np.power(x, e)
        assert np.array_equal(np.signbit(_host(got)), np.signbit(want)), e   # NumPy's own signs
        _fused_and_unfused(lambda x, e: x ** (e * 1), cupy, launched, x, np.full((1, 1), e))
        _fused_and_unfused(lambda x, e: x ** (e * 1), cupy, launched, x, np.full((3, 1), e))


def test_a_new_scalar_value_does_not_recompile(cupy, launched):
    f = gb.fuse(lambda x, s: x * s + 1)
    x = cupy.asarray(_v((9, 10)))
    f(x, 2.0)
    family, compiled, registered = launched[-1].family, set(backends.get("cuda")._functions), len(sources._GENERATED)
    for s in (3.0, -7.5):
        _same(f(x, s), _host(x) * np.float32(s) + np.float32(1))
        assert launched[-1].family == family
    assert set(backends.get("cuda")._functions) == compiled and len(sources._GENERATED) == registered


def test_outputs_out_and_overlap(cupy, launched):
    x, y = cupy.asarray(_v((30, 40))), cupy.asarray(_v((40,)))
    f = gb.fuse(lambda x, y: (x + y, gb.multiply(x, y, dtype=np.float64)))
    o1, o2 = cupy.empty((30, 40), np.float64), cupy.empty((30, 40), np.float64)
    r = f(x, y, out=(o1, o2))
    assert r[0] is o1 and r[1] is o2
    _same(o1, (_host(x) + _host(y)).astype(np.float64))
    _same(o2, _host(x).astype(np.float64) * _host(y))
    g = gb.fuse(lambda x, y: x * 2 + y)
    x3 = x.copy()
    g(x3, y, out=x3)                                     # element for element
    _same(x3, _host(x) * 2 + _host(y))
    x3 = x.copy()
    g(x3[:, ::-1], y, out=x3)                            # partial overlap: read before written
    _same(x3, _host(x)[:, ::-1] * 2 + _host(y))
    launched.clear()
    assert g(cupy.empty((0, 40), np.float32), y).shape == (0, 40) and launched == []


def _sum_chain(*xs):
    acc = xs[0]
    for x in xs[1:]:
        acc = acc * 1.5 + x
    return acc


def test_many_operands_take_fewer_elements_per_thread(cupy, launched):
    args = [_v((9, 40)) if k % 3 else _v((40,)) for k in range(fused.MAX_LEAVES)]
    _fused_and_unfused(_sum_chain, cupy, launched, *args)
    assert launched[0].ept == 2                           # 15 float32 leaves: 2 elements per thread
    _fused_and_unfused(_sum_chain, cupy, launched, *args[:6])
    assert launched[0].ept == 4
    launched.clear()
    gb.fuse(_sum_chain)(*[cupy.asarray(a) for a in args + args[:1]])   # 16 leaves: op by op
    assert launched and not any(lc.family.startswith("gbf_") for lc in launched)


def test_too_many_operands_run_op_by_op(cupy, launched):
    n = 40
    args = [_v((4, 5)) for _ in range(n)]
    f = _sum_chain
    assert not fused.fits(gb.fuse(f)._trace(args).programs[0])
    launched.clear()
    got = gb.fuse(f)(*[cupy.asarray(a) for a in args])
    assert len(launched) == 2 * (n - 1) and not any(lc.family.startswith("gbf_") for lc in launched)
    _same(got, f(*[cupy.asarray(a) for a in args]))


def test_a_step_without_a_cuda_kernel_is_the_unfused_error(cupy):
    z = cupy.asarray(_v((3, 4), np.complex64))
    with pytest.raises(TypeError, match="compute it on the CPU"):
        gb.exp(z)
    with pytest.raises(TypeError, match="compute it on the CPU"):
        gb.fuse(lambda z: gb.exp(z) + 1)(z)


def test_random_chains_fused_equal_unfused_on_cuda(cupy, launched):
    """Random chains (tests.support.fused_chains): where the unfused CUDA chain refuses (a type or overflow
    error) the fused call refuses with the same error type; otherwise bit-equal results."""
    from hypothesis import given, settings
    from tests.support.fused_chains import chains, program
    compared = []

    @settings(max_examples=12, deadline=None)
    @given(chains())
    def check(chain):
        args, steps = chain
        f = program(steps)
        dev = [cupy.asarray(a) for a in args]
        try:
            with warnings.catch_warnings():
                warnings.simplefilter("ignore")
                fn = gb.fuse(f)
                [trace] = [fn._trace(dev)]
                want = fusion.evaluate(trace.programs[0], dev, backend="cuda")
        except (TypeError, OverflowError) as e:
            with pytest.raises(type(e)):
                gb.fuse(f)(*dev)
            return
        launched.clear()
        got = gb.fuse(f)(*dev)
        assert [lc.family[:4] for lc in launched] == ["gbf_"]
        if any(s[0] == "cast" and np.dtype(s[2]).kind == "i" for s in steps):
            return  # a float -> int cast of NaN or an out-of-range value is undefined (C)
        _same(got, want)
        compared.append(1)

    check()
    assert len(compared) >= 4, len(compared)   # most random chains compute (the rest refuse as unfused)


def test_onnx_backend_runs_chains_as_generated_kernels(cupy, launched):
    """prepare(model, device="CUDA"): y = Relu(Sigmoid(x) * 3 + 1 - b) and nu = Neg(Sigmoid(x) * 3 + 1),
    one fused group, one generated kernel per output; fuse=False gives the same bits."""
    from onnx import TensorProto, helper, numpy_helper

    from gpubcast.onnx import backend as onnx_backend
    f32 = np.float32
    info = lambda n: helper.make_tensor_value_info(n, TensorProto.FLOAT, [4, 3])
    nodes = [helper.make_node("Sigmoid", ["x"], ["s"]), helper.make_node("Constant", [], ["w0"], value_float=3.0),
             helper.make_node("Mul", ["s", "w0"], ["sw"]),
             helper.make_node("Constant", [], ["one"], value=numpy_helper.from_array(np.array(1.0, f32))),
             helper.make_node("Add", ["sw", "one"], ["u"]), helper.make_node("Sub", ["u", "b"], ["d"]),
             helper.make_node("Relu", ["d"], ["y"]), helper.make_node("Neg", ["u"], ["nu"])]
    b = numpy_helper.from_array(np.array([0.5, -1.0, 2.0], f32), "b")
    graph = helper.make_graph(nodes, "chain", [info("x")], [info("y"), info("nu")], initializer=[b])
    model = helper.make_model(graph, opset_imports=[helper.make_opsetid("", 17)], ir_version=8)
    x = _v((4, 3))
    rep = onnx_backend.prepare(model, device="CUDA")
    launched.clear()
    y, nu = rep.run([x])
    assert [lc.family[:4] for lc in launched] == ["gbf_", "gbf_"], [lc.name for lc in launched]
    y0, nu0 = onnx_backend.prepare(model, device="CUDA", fuse=False).run([x])
    _same(y, y0)
    _same(nu, nu0)
    u = (1 / (1 + np.exp(-x))) * f32(3) + f32(1)
    np.testing.assert_allclose(_host(y), np.maximum(u - np.array([0.5, -1.0, 2.0], f32), 0), rtol=1e-5, atol=1e-6)


def test_sanitizer_script_fused_runs(cupy, monkeypatch):
    """ci/sanitize_run.py's fused runs (what compute-sanitizer checks on a GPU) agree here too."""
    import sys
    monkeypatch.syspath_prepend(str(ROOT / "ci"))
    monkeypatch.delitem(sys.modules, "sanitize_run", raising=False)
    import sanitize_run
    assert sanitize_run.fused_kernels(np.random.default_rng(0), backends.get("cuda")) == 0


def test_repeated_fused_calls_on_cuda_arrays_take_a_prepared_runner(cupy, launched):
    """From the second call of a signature on, a fused call on CUDA arrays runs a prepared runner
    (the hot path, as on NumPy arrays): one fused launch, the first call's bits.  A NumPy call of the
    same shapes is another signature, and an out= sharing memory with an input takes the general path
    (inputs read before out is written)."""
    f = gb.fuse(lambda x, b: x * gb.sigmoid(x) + b)
    xh, bh = _v((6, 7)), _v((7,))
    x, b = cupy.asarray(xh), cupy.asarray(bh)
    first = _host(f(x, b))
    for _ in range(3):
        launched.clear()
        got = f(x, b)
        assert [lc.family[:4] for lc in launched] == ["gbf_"]
        _same(got, first)
    prepared = [r for r in f._hot.runners.values() if callable(r) and getattr(r, "__name__", "") == "runner"]
    assert len(prepared) == 1                               # the CUDA call's runner, kept
    on_host = f(xh, bh)                                     # same shapes on NumPy: its own signature
    assert isinstance(on_host, np.ndarray)
    # Numba's sigmoid and CUDA's differ by an ulp or so: within that of the terms, not of a result near 0
    # (x * sigmoid(x) + b cancels: the draws, from the module's generator, depend on what ran before)
    np.testing.assert_allclose(on_host, first, rtol=1e-6, atol=1e-6 * float(np.abs(xh).max() + np.abs(bh).max()))
    for _ in range(3):
        out = x.copy()
        _same(f(out, b, out=out), first)                    # out= is the input x: the same values
        out = cupy.empty((6, 7), np.float32)
        _same(f(x, b, out=out), first)


def test_fused_cuda_runners_are_bounded_and_survive_a_failing_launch(cupy, launched, monkeypatch):
    """The prepared runners live in the Fused object's bounded table (cleared past its size), and a
    call whose kernel cannot be loaded raises and leaves the runner usable by the next call."""
    f = gb.fuse(lambda x: x * gb.sigmoid(x))
    f._hot.maxsize = 2
    for n in range(1, 6):                                   # 5 signatures, each called three times
        x = _v((n, 3))
        for _ in range(3):
            assert np.allclose(_host(f(cupy.asarray(x))), x / (1 + np.exp(-x)), rtol=1e-5, atol=1e-6)
        assert len(f._hot.runners) <= 2
    x = cupy.asarray(_v((4, 3)))
    want = _host(f(x)), _host(f(x))                         # the second call prepares the runner
    be = backends.get("cuda")
    real, failures = be.function, []

    def failing(*a, **k):
        if not failures:
            failures.append(1)
            raise RuntimeError("kernel load failed")
        return real(*a, **k)
    monkeypatch.setattr(be, "function", failing)
    with pytest.raises(RuntimeError, match="kernel load failed"):
        f(x)
    launched.clear()
    _same(f(x), want[0])
    assert [lc.family[:4] for lc in launched] == ["gbf_"]
