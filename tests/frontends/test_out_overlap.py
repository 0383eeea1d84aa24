"""``out=`` that overlaps itself or its inputs gives NumPy's values, on every path.

NumPy's rule (its ufuncs' ``NPY_ITER_COPY_IF_OVERLAP``): an input that shares memory with ``out`` is
read as if copied first, except an input that *is* ``out`` element for element (same address,
strides and item size) where ``out`` has no internal overlap; an ``out`` whose elements share memory
(a writable sliding window, a stride-0 view) is written element by element in iteration order.
So where every write to one memory location carries the same value (``x += 1`` on a sliding window,
``v * v`` into ``v``), the result is defined and gpubcast must give NumPy's bits exactly; where the
writes differ, NumPy's documentation calls the result unpredictable and gpubcast's must be one of the
values written (on the CPU, the last in C order of the output, as NumPy for C-ordered inputs).

Paths: the general path (a first call), the prepared runner (a second) and the compiled hot path
(a third) of the Numba backend, the NumPy reference backend, ``gpubcast.fuse``, and the CUDA backend
on the ``cupy`` fixture (the virtual device without a GPU).  Layouts are drawn by Hypothesis: windows,
stride-0 dims, negative strides, partial overlaps and independent arrays, as views of one buffer.
"""

from __future__ import annotations

import os

import numpy as np
import pytest
from hypothesis import HealthCheck, assume, given, settings, strategies as st
from numpy.lib.stride_tricks import as_strided, sliding_window_view

import gpubcast as gb
from gpubcast.plan import overlaps_itself

EXAMPLES = int(os.environ.get("GPUBCAST_OVERLAP_EXAMPLES", "40"))
PROPERTY = settings(max_examples=EXAMPLES, deadline=None, derandomize=True,
                    suppress_health_check=list(HealthCheck))
DEEP = settings(max_examples=10 * EXAMPLES, deadline=None, suppress_health_check=list(HealthCheck))

#: gpubcast name -> NumPy ufunc (the reference)
OPS = {"add": np.add, "subtract": np.subtract, "multiply": np.multiply, "maximum": np.maximum,
       "negative": np.negative}
DTYPES = [np.dtype(np.float64), np.dtype(np.float32), np.dtype(np.int32)]


# --- the issue's reproductions ------------------------------------------------------------------

def _window(a):
    return sliding_window_view(a, 3, writeable=True)


@pytest.mark.parametrize("call", range(3), ids=["general", "prepared", "compiled"])
@pytest.mark.parametrize("case", [
    ("window += 1", lambda v: gb.add(v, 1.0, out=v), lambda v: np.add(v, 1.0, out=v), _window),
    ("window *= window", lambda v: gb.multiply(v, v, out=v), lambda v: np.multiply(v, v, out=v), _window),
    ("stride 0 += 1", lambda s: gb.add(s, 1.0, out=s), lambda s: np.add(s, 1.0, out=s),
     lambda a: as_strided(a[:1], (8,), (0,))),
], ids=lambda c: c[0])
def test_the_issues_reproductions_give_numpys_values(case, call):
    _, ours, numpys, view = case
    for _ in range(call + 1):   # the call-th sighting of this signature: general, prepared, compiled
        a, b = np.arange(8.0), np.arange(8.0)
        ours(view(a))
    numpys(view(b))
    np.testing.assert_array_equal(a, b)


def test_a_stride_0_out_of_independent_inputs_keeps_the_last_value_in_c_order():
    a = np.zeros(1)
    x = np.arange(12.0).reshape(3, 4)
    for _ in range(3):
        gb.add(x, 1.0, out=as_strided(a, (3, 4), (0, 0)))
        assert a[0] == 12.0     # NumPy: the last element written
    b = np.zeros(1)
    np.add(x, 1.0, out=as_strided(b, (3, 4), (0, 0)))
    assert a[0] == b[0]


# --- the overlap analysis --------------------------------------------------------------------------

@PROPERTY
@given(st.lists(st.tuples(st.integers(0, 5), st.integers(-7, 7)), min_size=0, max_size=4))
def test_overlaps_itself_is_exact_on_small_arrays(dims):
    shape, strides = tuple(n for n, _ in dims), tuple(s for _, s in dims)
    offsets = np.zeros(1, np.int64)
    for n, s in dims:
        offsets = (offsets[:, None] + s * np.arange(n)).ravel()
    assert overlaps_itself(shape, strides) == (len(np.unique(offsets)) < offsets.size)


def test_overlaps_itself_answers_large_arrays_without_enumerating():
    assert not overlaps_itself((1 << 20, 64), (64, 1))
    assert not overlaps_itself((1 << 20, 64), (1, -(1 << 20)))
    assert overlaps_itself((1 << 20, 64), (1, 1))          # a window
    assert overlaps_itself((1 << 30, 2), (0, 1))            # a stride-0 dim


# --- drawn layouts ---------------------------------------------------------------------------------

@st.composite
def layout(draw, shape=None):
    """(shape, element strides) of a view, with the reach it needs below and above its start."""
    if shape is None:
        shape = tuple(draw(st.lists(st.integers(1, 5), min_size=1, max_size=3)))
    strides = tuple(draw(st.sampled_from([0, 1, 2, 3, -1, -2, n, len(shape) * n, 5, -4])) for n in shape)
    return shape, strides


def _reach(shape, strides):
    lo = sum(min(0, (n - 1) * s) for n, s in zip(shape, strides))
    hi = sum(max(0, (n - 1) * s) for n, s in zip(shape, strides))
    return lo, hi


@st.composite
def case(draw, unary=False):
    """(op name, dtype, buffer length, out view, input recipes): views are (start, shape, strides)."""
    name = "negative" if unary else draw(st.sampled_from(sorted(set(OPS) - {"negative"})))
    dtype = draw(st.sampled_from(DTYPES))
    shape, ostrides = draw(layout())
    recipes = []
    for _ in range(1 if unary else 2):
        kind = draw(st.sampled_from(["out", "view", "view", "array", "row", "scalar"]))
        if kind == "view":
            recipes.append(("view", *draw(layout(shape))))
        elif kind == "row":
            recipes.append(("array", shape[-1:]))
        elif kind == "array":
            recipes.append(("array", shape))
        else:
            recipes.append((kind,))
    # an input of out's shape (NumPy would also broadcast the inputs to a larger out=; gpubcast does not)
    assume(any(r[0] in ("out", "view") or r[0] == "array" and r[1] == shape for r in recipes))
    views = [(shape, ostrides)] + [(r[1], r[2]) for r in recipes if r[0] == "view"]
    need = max(hi - lo for lo, hi in (_reach(*v) for v in views)) + 1
    length = need + draw(st.integers(0, 4))
    starts = []
    for v in views:   # each view starts where its whole reach lies inside the buffer
        lo, hi = _reach(*v)
        starts.append(draw(st.integers(-lo, length - 1 - hi)))
    out = (starts[0], shape, ostrides)
    k = 1
    inputs = []
    for r in recipes:
        if r[0] == "view":
            inputs.append(("view", starts[k], r[1], r[2]))
            k += 1
        else:
            inputs.append(r)
    return name, dtype, length, out, tuple(inputs), draw(st.integers(0, 2**32 - 1))


def _view(base, start, shape, strides, xp=np):
    s = base.itemsize
    window = base[start:]
    if xp is np:
        return as_strided(window, shape, tuple(x * s for x in strides), writeable=True)
    return xp.lib.stride_tricks.as_strided(window, shape, tuple(x * s for x in strides))


def _materialise(c, xp=np):
    """(buffer, out view, inputs) of case ``c`` on ``xp`` (fresh each time: the calls write into them)."""
    name, dtype, length, (start, shape, strides), recipes, seed = c
    rng = np.random.default_rng(seed)
    host = (rng.integers(-9, 10, length) if dtype.kind == "i" else rng.standard_normal(length) * 4).astype(dtype)
    extra = [(rng.integers(-9, 10, r[1]) if dtype.kind == "i" else rng.standard_normal(r[1])).astype(dtype)
             for r in recipes if r[0] == "array"]
    base = host if xp is np else xp.asarray(host)
    out = _view(base, start, shape, strides, xp)
    inputs, e = [], iter(extra)
    for r in recipes:
        if r[0] == "out":
            inputs.append(out)
        elif r[0] == "view":
            inputs.append(_view(base, *r[1:], xp=xp))
        elif r[0] == "array":
            a = next(e)
            inputs.append(a if xp is np else xp.asarray(a))
        else:
            inputs.append(3 if dtype.kind == "i" else 1.5)
    return base, out, inputs


def _expected(c):
    """(the buffer as NumPy's rule defines it, the buffer before, per written element the values
    some write put there, whether every location's writes agree).  The values come from NumPy's
    ufunc on copies of the inputs (what "read before out is written" means); where writes to one
    location differ, the defined buffer keeps the last in C order of the output's index (NumPy's
    iteration order for C-ordered operands).  Not NumPy's own in-place call: NumPy 2.4's float32
    ``negative`` in place on a view of stride -4 elements reads a wrong element (``np.negative(w,
    out=w)``, w = as_strided(a[4:], (2,), (-16,)), wrote -a[1] into a[4])."""
    base, out, inputs = _materialise(c)
    before = base.copy()
    values = OPS[c[0]](*[np.array(x, copy=True) if isinstance(x, np.ndarray) else x for x in inputs])
    values = np.broadcast_to(values, out.shape)
    start, shape, strides = c[3]
    offsets = np.full(shape, start, np.int64)
    for d, (n, s) in enumerate(zip(shape, strides)):
        offsets += s * np.arange(n).reshape([-1 if e == d else 1 for e in range(len(shape))])
    written: dict = {}
    want = before.copy()
    for off, v in zip(offsets.ravel(), values.ravel()):   # C order: the last write stays
        written.setdefault(int(off), []).append(v)
        want[off] = v
    agree = all(len({_bits(v) for v in vs}) == 1 for vs in written.values())
    return want, before, written, agree


def _bits(v):
    v = np.asarray(v)
    return b"nan" if v.dtype.kind == "f" and np.isnan(v) else v.tobytes()


def _check(got, c, exact_if_independent: bool):
    want, before, written, agree = _expected(c)
    independent = all(r[0] in ("array", "scalar") for r in c[4])
    if agree or (exact_if_independent and independent):
        np.testing.assert_array_equal(got, want, err_msg=f"case {c}")
        return
    for i in range(len(got)):
        allowed = written.get(i, [before[i]])
        assert _bits(got[i]) in {_bits(v) for v in allowed}, f"element {i}: {got[i]} not in {allowed} ({c})"


def _gb_call(c, inputs, out, backend=None):
    getattr(gb, c[0])(*inputs, out=out, backend=backend)


@pytest.mark.parametrize("calls", [1, 3], ids=["first-call", "warm-calls"])
@PROPERTY
@given(c=st.one_of(case(), case(unary=True)))
def test_drawn_overlaps_on_the_numba_backend(c, calls):
    for _ in range(calls):   # 3: the general path, then the prepared runner, then the compiled one
        base, out, inputs = _materialise(c)
        _gb_call(c, inputs, out)
        _check(base, c, exact_if_independent=True)


@PROPERTY
@given(c=case())
def test_drawn_overlaps_on_the_numpy_reference_backend(c):
    base, out, inputs = _materialise(c)
    _gb_call(c, inputs, out, backend="numpy")
    _check(base, c, exact_if_independent=True)


def _fused(f):
    return gb.fuse(lambda x, y: f(x, y))


_FUSED = {name: _fused(getattr(gb, name)) for name in OPS if name != "negative"}


@PROPERTY
@given(c=case())
def test_drawn_overlaps_through_gpubcast_fuse(c):
    assume(not any(r[0] == "scalar" for r in c[4]))   # fused functions take arrays (a scalar: a constant)
    for _ in range(3):
        base, out, inputs = _materialise(c)
        _FUSED[c[0]](*inputs, out=out)
        _check(base, c, exact_if_independent=True)


@pytest.mark.gpu
@settings(max_examples=max(5, EXAMPLES // 4), deadline=None, derandomize=True,
          suppress_health_check=list(HealthCheck))
@given(c=case())
def test_drawn_overlaps_on_the_cuda_backend(cupy, c):
    for _ in range(2):   # the general path, then the prepared runner
        base, out, inputs = _materialise(c, cupy)
        _gb_call(c, inputs, out)
        _check(cupy.asnumpy(base), c, exact_if_independent=False)


@pytest.mark.slow
@DEEP
@given(c=st.one_of(case(), case(unary=True)))
def test_drawn_overlaps_deeper(c):
    for backend in (None, "numpy"):
        for _ in range(3):
            base, out, inputs = _materialise(c)
            _gb_call(c, inputs, out, backend=backend)
            _check(base, c, exact_if_independent=True)
