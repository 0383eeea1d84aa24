"""Per-call cost of gpubcast.fuse at tiny sizes, warm (issue 14: a fused call with a warm trace and
plan costs at most 2x one gpubcast op call), next to the single ops it is compared with.
Run: .venv/bin/python -m pytest bench/test_fused_calls.py"""

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
