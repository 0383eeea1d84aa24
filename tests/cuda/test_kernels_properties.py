"""Property tests of the kernels' indexing under host emulation: any strides (flipped,
stepped, transposed), any broadcast, ranks beyond MAX_DIMS, both index widths."""

import numpy as np
import pytest
from hypothesis import given, settings
from hypothesis import strategies as st
from hypothesis.extra import numpy as hnp

import gpubcast as gb
from gpubcast import ops
from gpubcast.cuda import catalog
from gpubcast.testing import emulate

pytestmark = pytest.mark.skipif(bool(emulate.available()), reason=emulate.available() or "")

_EMULATOR = None


def backend(**kw):
    global _EMULATOR
    if _EMULATOR is None:
        f4, i2 = np.dtype(np.float32), np.dtype(np.int16)
        _EMULATOR = emulate.Emulator([
            catalog.kernels_for(ops.get("copy"), (f4,), f4),
            catalog.kernels_for(ops.get("subtract"), (i2, i2), i2),
        ])
    return emulate.EmulatedBackend(_EMULATOR, **kw)


@st.composite
def strided_arrays(draw, max_dims=12):
    """(array, its values in C order): a view with flipped, stepped and permuted axes."""
    shape = draw(hnp.array_shapes(min_dims=0, max_dims=max_dims, min_side=1, max_side=3))
    steps = [draw(st.sampled_from([1, 2, -1, -2])) for _ in shape]
    big = np.arange(np.prod([n * abs(s) for n, s in zip(shape, steps)], dtype=np.int64), dtype=np.float32)
    big = big.reshape([n * abs(s) for n, s in zip(shape, steps)])
    view = big[tuple(slice(None, None, s) for s in steps)]
    perm = draw(st.permutations(range(len(shape))))
    return np.transpose(view, perm)


@settings(max_examples=80, deadline=None)
@given(data=st.data(), index64=st.booleans())
def test_broadcast_to_any_strides(data, index64):
    x = data.draw(strided_arrays())
    lead = data.draw(st.lists(st.integers(1, 3), max_size=2))
    target = tuple(lead) + tuple(n if n != 1 else data.draw(st.integers(1, 3)) for n in x.shape)
    want = np.broadcast_to(x, target)
    be = backend(index64_above=0 if index64 else None)
    with emulate.registered(be):
        got = gb.broadcast_to(x, target, backend=be.name)
    assert np.array_equal(got, want)


@settings(max_examples=60, deadline=None)
@given(shapes=hnp.mutually_broadcastable_shapes(num_shapes=2, min_dims=0, max_dims=7, max_side=4),
       flips=st.lists(st.booleans(), min_size=2, max_size=2), index64=st.booleans(), out_t=st.booleans())
def test_binary_any_broadcast_and_layout(shapes, flips, index64, out_t):
    rng = np.random.default_rng(0)
    xs = []
    for shape, flip in zip(shapes.input_shapes, flips):
        x = rng.integers(-1000, 1000, shape).astype(np.int16)
        xs.append(np.flip(x) if flip and x.ndim else x)
    want = np.subtract(*xs)
    out = np.empty(want.shape[::-1], np.int16).T if out_t else None
    be = backend(index64_above=0 if index64 else None)
    with emulate.registered(be):
        got = gb.subtract(*xs, out=out, backend=be.name)
    assert np.array_equal(got, want)
