"""The one hot-path mechanism (gpubcast.hot_calls): a runner is prepared on a signature's second
sighting, kept, bounded; dispatch, fusion and ElementwiseKernel all use it."""

import numpy as np
import pytest

import gpubcast as gb
from gpubcast import backends, compiled_calls, dispatch, hot_calls
from gpubcast.fusion import _one_op as one_op
from gpubcast.hot_calls import HotCalls


def test_a_runner_is_prepared_on_the_second_sighting_only():
    hot, made = HotCalls(8), []

    def prepare():
        made.append(1)
        return lambda inputs, out: "ran"
    assert hot.note("k", prepare) is None and made == []           # one-off calls compile nothing
    runner = hot.note("k", prepare)
    assert runner(None, None) == "ran" and made == [1]
    assert hot.note("k", prepare) is None and made == [1]          # kept: never prepared again
    assert hot.runners["k"] is runner


def test_a_backend_without_a_runner_is_not_asked_again_and_the_map_is_bounded():
    hot, asked = HotCalls(4), []
    hot.note("k", lambda: asked.append(1))
    hot.note("k", lambda: asked.append(1))
    assert hot.runners["k"] is hot_calls.no_runner and hot.note("k", lambda: asked.append(1)) is None
    assert asked == [1]
    for i in range(20):
        hot.keep(i, hot_calls.no_runner)
        assert len(hot.runners) <= 4


def test_dispatch_fusion_and_user_kernels_keep_their_runners_there(monkeypatch):
    monkeypatch.setattr(dispatch, "HOT", HotCalls(16))
    compiled_calls.clear()     # an earlier test's compiled entries would serve these calls before apply
    x, b = np.ones((4, 8), np.float32), np.arange(8, dtype=np.float32)
    for _ in range(3):
        np.testing.assert_array_equal(gb.add(x, b), x + b)
    assert [r for r in dispatch.HOT.runners.values() if r not in (hot_calls.noted, hot_calls.no_runner)]
    f = gb.fuse(lambda a, c: a * c + 1)
    for _ in range(3):
        np.testing.assert_array_equal(f(x, b), x * b + 1)
    assert isinstance(f._hot, HotCalls) and len(f._hot.runners) == 1


def _repeat(call, values):
    """``call(v)`` for each value, every value three times in turn (first sighting, runner made, runner)."""
    return [call(v) for _ in range(3) for v in values]


def test_scalars_take_the_hot_path_with_their_own_values_each_call(monkeypatch):
    monkeypatch.setattr(dispatch, "HOT", HotCalls(64))
    x = np.linspace(-3, 3, 32, dtype=np.float32).reshape(4, 8)
    for v, got in zip([2.0, -0.5, 1e30, 3] * 3, _repeat(lambda v: gb.multiply(x, v), [2.0, -0.5, 1e30, 3])):
        want = np.multiply(x, v)
        assert got.dtype == want.dtype
        np.testing.assert_array_equal(got, want)
    prepared = [r for r in dispatch.HOT.runners.values() if r not in (hot_calls.noted, hot_calls.no_runner)]
    assert len(prepared) == 2                  # one per scalar type (float, int), never per value
    h = x.astype(np.float16)
    with np.errstate(over="ignore"):
        for v, got in zip([1e5, 2.0] * 3, _repeat(lambda v: gb.add(h, v), [1e5, 2.0])):   # overflows to inf
            np.testing.assert_array_equal(got, np.add(h, np.float16(v) if v < 7e4 else np.float16(np.inf)))


def test_a_python_int_beyond_the_loop_dtype_is_never_served_by_a_runner(monkeypatch):
    monkeypatch.setattr(dispatch, "HOT", HotCalls(64))
    i8 = np.arange(-4, 4, dtype=np.int8)
    for v in [1, 2, 300, 5, -129, 127] * 3:
        if -128 <= v <= 127:
            got = gb.add(i8, v)
            assert got.dtype == np.int8
            np.testing.assert_array_equal(got, np.add(i8, v))
        else:
            with pytest.raises(OverflowError, match=f"Python integer {v} out of bounds for int8"):
                gb.add(i8, v)
    for v in [1, 300, -300, 2, 127, 128] * 3:               # comparisons compare exactly, as NumPy 2
        np.testing.assert_array_equal(gb.less(i8, v), np.less(i8, v))
        np.testing.assert_array_equal(gb.greater_equal(v, i8), np.greater_equal(v, i8))


def test_scalar_types_numpy_scalars_out_and_backends_key_their_own_runners(monkeypatch):
    monkeypatch.setattr(dispatch, "HOT", HotCalls(64))
    x = np.arange(12, dtype=np.float32).reshape(3, 4)
    calls = [
        (lambda: gb.add(x, True), lambda: np.add(x, True)),
        (lambda: gb.add(x, 1j), lambda: np.add(x, 1j)),
        (lambda: gb.add(x, np.float64(0.25)), lambda: np.add(x, np.float64(0.25))),
        (lambda: gb.add(x, np.float32(0.25)), lambda: np.add(x, np.float32(0.25))),
        (lambda: gb.subtract(2, x), lambda: np.subtract(2, x)),
        (lambda: gb.exp(1.5), lambda: np.exp(1.5)),
        (lambda: gb.where(x > 3, x, 0.0), lambda: np.where(x > 3, x, np.float32(0.0))),
        (lambda: gb.add(x, 2.0, backend="numpy"), lambda: np.add(x, 2.0)),
    ]
    for _ in range(3):
        for call, want in calls:
            got, expected = call(), want()
            assert np.asarray(got).dtype == np.asarray(expected).dtype
            np.testing.assert_array_equal(got, expected)
    out = np.empty((3, 4), np.float64)
    for v in (1.0, 2.0, 3.0):
        assert gb.multiply(x, v, out=out) is out
        np.testing.assert_array_equal(out, x * v)
    overlapping = x.copy()
    for v in (1.0, 2.0, 3.0):                         # out= overlapping the input element for element
        expected = overlapping * v
        assert gb.multiply(overlapping, v, out=overlapping) is overlapping
        np.testing.assert_array_equal(overlapping, expected)
    readonly = x.copy()
    readonly.flags.writeable = False
    for v in (1.0, 2.0, 3.0):
        np.testing.assert_array_equal(gb.add(readonly, v), x + v)
        with pytest.raises(ValueError, match="read-only"):
            gb.add(x, v, out=readonly)


def test_cast_takes_the_hot_path_with_numpys_conversion(monkeypatch):
    monkeypatch.setattr(dispatch, "HOT", HotCalls(64))
    x = np.linspace(-300, 300, 48).reshape(6, 8)
    for dt in (np.float16, np.int8, np.uint16, gb.bfloat16, np.complex64, bool, np.float64):
        for _ in range(3):
            with np.errstate(all="ignore"):
                got, want = gb.cast(x, dt), x.astype(dt)
            assert got.dtype == want.dtype
            np.testing.assert_array_equal(got.view(np.uint8), want.view(np.uint8))
    same = np.arange(8.0)
    for _ in range(3):                                     # out= is the input itself: the general path
        assert gb.cast(same, np.float64, out=same) is same
    np.testing.assert_array_equal(same, np.arange(8.0))


#: calls whose arrays the general path converts to the loop dtypes: (function, arguments, keywords)
CONVERTING = [
    (gb.add, (np.float32, (300, 256)), (np.float64, (256,)), {}),          # a row, 76 800 elements: threads
    (gb.multiply, (np.int8, (64,)), (np.float32, (64,)), {}),
    (gb.subtract, (np.uint16, (5, 1, 3)), (np.int32, (4, 3)), {}),
    (gb.divide, (np.int32, (2000,)), (np.int64, (2000,)), {}),              # int64 division: float64
    (gb.maximum, (gb.bfloat16, (40, 7)), (np.float32, (7,)), {}),
    (gb.power, (np.float16, (33,)), (np.float32, (33,)), {}),
    (gb.add, (np.float32, (3, 4)), (np.float64, (3,)), {"broadcast": "pdpd", "axis": 0}),
    (gb.where, (bool, (70000,)), (np.int16, (70000,)), {"_third": (np.float32, (70000,))}),
    (gb.add, (np.float32, (0, 4)), (np.float64, (4,)), {}),                 # empty
]


@pytest.mark.parametrize("fn,a,b,kw", CONVERTING, ids=[f"{c[0].__name__}-{i}" for i, c in enumerate(CONVERTING)])
def test_calls_that_convert_their_arrays_convert_in_the_pass(fn, a, b, kw, monkeypatch):
    """A call on arrays of different dtypes (converted to the loop dtypes) gives the general path's
    values on every call, into a new array and into out=, and from its second call runs as one pass
    that converts as it reads (the runner fusion makes: no converted copies)."""
    monkeypatch.setattr(dispatch, "HOT", HotCalls(16))
    compiled_calls.clear()
    kw = dict(kw)
    rng = np.random.default_rng(len(a[1]))
    args = [(rng.random(shape) * 50 - 10).astype(dt) for dt, shape in (a, b, *([kw.pop("_third")] if "_third" in kw
                                                                                  else []))]
    if fn is gb.where:
        args[0] = args[0] > 10
    want = fn(*args, backend="numpy", **kw)
    made = []
    monkeypatch.setattr(dispatch, "_IN_PASS", [lambda *a: made.append(1) or one_op(*a)])
    for _ in range(3):
        got = fn(*args, **kw)
        assert got.dtype == want.dtype and got.shape == want.shape
        np.testing.assert_allclose(got, want, rtol=1e-6 if fn is gb.power else 0)
        out = np.full(want.shape, 7, want.dtype)
        assert fn(*args, out=out, **kw) is out
        np.testing.assert_allclose(out, want, rtol=1e-6 if fn is gb.power else 0)
    assert made, "the converting runner was never asked for"


def test_converting_calls_into_an_input_or_a_shifted_one(monkeypatch):
    """A call converting one array in the pass, with out= the other input itself or overlapping it one
    element shifted, gives NumPy's values on every call (inputs read before out= is written)."""
    monkeypatch.setattr(dispatch, "HOT", HotCalls(16))
    compiled_calls.clear()
    rng = np.random.default_rng(3)
    for n in (1000, 70000):
        a = rng.random(n).astype(np.float32)
        for _ in range(3):
            y = rng.random(n)
            want = a.astype(np.float64) + y
            assert gb.add(a, y, out=y) is y
            np.testing.assert_array_equal(y, want)
            y = rng.random(n + 1)
            want = a.astype(np.float64) + y[1:]
            gb.add(a, y[1:], out=y[:-1])
            np.testing.assert_array_equal(y[:-1], want)


def test_converting_runners_are_bounded_survive_an_interrupted_preparation_and_serve_a_forked_child(monkeypatch):
    """The converting runners live in dispatch's bounded map; a preparation cut short (an exception in
    the maker) leaves the signature to be prepared at its next call, with the same values; a forked
    child runs the parent's runner (the thread pool's walk: 70000 elements) on its own arrays."""
    import os

    monkeypatch.setattr(dispatch, "HOT", HotCalls(4))
    compiled_calls.clear()
    for n in range(10, 20):                      # ten signatures, a map of four
        a, b = np.arange(n, dtype=np.float32), np.arange(n, dtype=np.float64)
        for _ in range(2):
            np.testing.assert_array_equal(gb.add(a, b), a.astype(np.float64) + b)
        assert len(dispatch.HOT.runners) <= 4

    def interrupted(*args):
        raise KeyboardInterrupt
    a, b = np.linspace(0, 1, 70000, dtype=np.float32), np.linspace(2, 3, 70000)
    want = a.astype(np.float64) + b
    real = dispatch._IN_PASS[0]
    monkeypatch.setattr(dispatch, "_IN_PASS", [interrupted])
    np.testing.assert_array_equal(gb.add(a, b), want)         # seen once
    with pytest.raises(KeyboardInterrupt):
        gb.add(a, b)                                           # prepared: cut short
    monkeypatch.setattr(dispatch, "_IN_PASS", [real])
    for _ in range(2):
        np.testing.assert_array_equal(gb.add(a, b), want)     # prepared now, then served
    assert dispatch.HOT.runners[next(k for k in dispatch.HOT.runners if k[0] == "add" and k[2] == a.shape)] \
        not in (hot_calls.noted, hot_calls.no_runner)
    pid = os.fork()
    if pid == 0:                                               # the child: its own arrays, the parent's runner
        c = a * 2
        ok = np.array_equal(gb.add(c, b), c.astype(np.float64) + b)
        os._exit(0 if ok else 1)
    _, status = os.waitpid(pid, 0)
    assert os.waitstatus_to_exitcode(status) == 0
    np.testing.assert_array_equal(gb.add(a, b), want)


def test_object_casts_keep_the_general_paths_errors():
    o = np.array(["1", "x", 2], dtype=object)
    for _ in range(3):
        with pytest.raises(TypeError, match="cast: computing on object elements failed with ValueError"):
            gb.cast(o, np.float64)


def test_cuda_calls_repeat_through_the_backends_runner(cupy, monkeypatch):
    """The CUDA host path's hot runner (``CudaBackend.prepare``): each call's own scalar values and
    addresses, out=, host 0-d arrays; an out= sharing an input's memory takes the general path."""
    monkeypatch.setattr(dispatch, "HOT", HotCalls(64))
    host_x = np.linspace(-3, 3, 32, dtype=np.float32).reshape(4, 8)
    host_b = np.arange(8, dtype=np.float32)
    x, b = cupy.asarray(host_x), cupy.asarray(host_b)
    for v in [2.0, -0.5, 3, np.float32(7), np.array(1.5, np.float32)] * 3:
        np.testing.assert_array_equal(cupy.asnumpy(gb.multiply(x, v)), np.multiply(host_x, v))
        np.testing.assert_array_equal(cupy.asnumpy(gb.add(x, b)), host_x + host_b)
    be, general = backends.get("cuda"), []
    execute = be.execute
    monkeypatch.setattr(be, "execute", lambda *args: (general.append(args[0].name), execute(*args)))
    for v in [4.0, 5, np.float32(-2)]:
        np.testing.assert_array_equal(cupy.asnumpy(gb.multiply(x, v)), np.multiply(host_x, v))
    np.testing.assert_array_equal(cupy.asnumpy(gb.add(x, b)), host_x + host_b)
    assert general == []                      # every one served by a prepared runner
    o = cupy.empty((4, 8), np.float32)
    for _ in range(3):
        assert gb.add(x, b, out=o) is o
        np.testing.assert_array_equal(cupy.asnumpy(o), host_x + host_b)
    y = cupy.asarray(host_x)
    for _ in range(3):   # in place, element for element: fine; then a partial overlap: the general path
        gb.add(y, b, out=y)
    np.testing.assert_array_equal(cupy.asnumpy(y), host_x + host_b + host_b + host_b)
    z = cupy.asarray(np.arange(9, dtype=np.float32))
    gb.add(z[1:], z[:-1], out=z[1:])
    gb.add(z[1:], z[:-1], out=z[1:])
    want = np.arange(9, dtype=np.float32)
    for _ in range(2):
        want[1:] = want[1:] + want[:-1].copy()
    np.testing.assert_array_equal(cupy.asnumpy(z), want)
