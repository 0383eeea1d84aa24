"""Per-call cost of gpubcast.fuse at tiny sizes, warm (issue 14: a fused call with a warm trace and
plan costs at most 2x one gpubcast op call), next to the single ops it is compared with.
Run: .venv/bin/python -m pytest benchmarks/test_fused_calls.py"""

import numpy as np

import gpubcast as gb

X, Y = np.ones((4, 8), np.float32), np.ones(8, np.float32)
A, B = np.ones((1, 3, 1, 1), np.float32), np.ones((1, 3, 1, 1), np.float32)
XN = np.ones((2, 3, 4, 4), np.float32)
T, S = np.ones(8, np.float32), np.ones((4, 1), np.float32)


def _warm(f, *args):
    for _ in range(3):
        f(*args)
    return f


def test_single_add(benchmark):
    benchmark(_warm(gb.add, X, Y), X, Y)


def test_single_multiply_nchw(benchmark):
    benchmark(_warm(gb.multiply, A, XN), A, XN)


def test_fused_x_times_y_plus_1(benchmark):
    benchmark(_warm(gb.fuse(lambda x, y: x * y + 1), X, Y), X, Y)


def test_fused_affine_nchw(benchmark):
    benchmark(_warm(gb.fuse(lambda a, x, b: a * x + b), A, XN, B), A, XN, B)


def test_fused_where_chain(benchmark):
    benchmark(_warm(gb.fuse(lambda x, t, s: gb.where(x > t, x * s, 0)), X, T, S), X, T, S)


# the benchmark's affine chain at its CPU size into preallocated outputs (no first touch of fresh memory)
AL, XL, BL = (np.random.default_rng(0).standard_normal(s).astype(np.float32)
              for s in ((1, 64, 1, 1), (16, 64, 112, 112), (1, 64, 1, 1)))


def test_fused_affine_large_into_out(benchmark):
    y = np.empty_like(XL)
    benchmark(_warm(gb.fuse(lambda a, x, b: a * x + b), AL, XL, BL), AL, XL, BL, out=y)


def test_numpy_affine_large_into_out(benchmark):
    y, t = np.empty_like(XL), np.empty_like(XL)

    def two_ops():
        np.multiply(AL, XL, out=t)
        np.add(t, BL, out=y)
    benchmark(two_ops)


# the same into fresh outputs (the benchmark's case): the host pool on (its default) and off, and NumPy
def _pool_limit(limit):
    from gpubcast import host_pool
    pool = host_pool.host_memory_pool()
    before = pool.get_limit()
    pool.set_limit(limit)
    return pool, before


def test_fused_affine_large_fresh_output_pool_on(benchmark):
    from gpubcast import host_pool
    pool, before = _pool_limit(host_pool.DEFAULT_LIMIT)
    try:
        benchmark(_warm(gb.fuse(lambda a, x, b: a * x + b), AL, XL, BL), AL, XL, BL)
    finally:
        pool.set_limit(before)


def test_fused_affine_large_fresh_output_pool_off(benchmark):
    pool, before = _pool_limit(0)
    try:
        benchmark(_warm(gb.fuse(lambda a, x, b: a * x + b), AL, XL, BL), AL, XL, BL)
    finally:
        pool.set_limit(before)


def test_numpy_affine_large_fresh_output(benchmark):
    benchmark(lambda: AL * XL + BL)
