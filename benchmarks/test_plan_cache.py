"""Planner cost: a cache hit for plan(a, b) with two small arrays (issue target: < 2 us),
and a miss for comparison.  Run: .venv/bin/python -m pytest benchmarks/test_plan_cache.py"""

import numpy as np

import gpubcast as gb
from gpubcast.plan import cached_plan


def test_plan_cache_hit(benchmark):
    a, b = np.ones((4, 3)), np.ones(3)
    p = gb.plan(a, b)
    assert benchmark(gb.plan, a, b) is p


def test_plan_cache_miss(benchmark):
    a, b = np.ones((4, 3)), np.ones(3)

    def miss():
        cached_plan.cache_clear()
        return gb.plan(a, b)

    assert benchmark(miss).out_shape == (4, 3)


def test_call_add_small_reference(benchmark):
    a, b = np.ones(4, np.float32), np.ones(1, np.float32)
    out = np.empty(4, np.float32)
    benchmark(gb.add, a, b, out=out, backend="numpy")
