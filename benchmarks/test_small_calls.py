"""Small calls under pytest-benchmark: every row of ``python -m gpubcast bench --size tiny``'s small-call
table (gpubcast/bench/calls.py), gpubcast and its peer side by side in one group per row.
Run: .venv/bin/python -m pytest benchmarks/test_small_calls.py --benchmark-group-by=group"""

import contextlib

import pytest

from gpubcast.bench import calls

ROWS = calls.rows()


@pytest.mark.parametrize("side", ["gpubcast", "peer"])
@pytest.mark.parametrize("row", ROWS, ids=[f"{r.call} vs {r.peer}" if r.peer else r.call for r in ROWS])
def test_small_call(benchmark, row, side):
    with contextlib.ExitStack() as stack:
        ours, theirs = row.make(stack)
        call = ours if side == "gpubcast" else theirs
        if call is None:
            pytest.skip("this row has no peer")
        for _ in range(calls.WARM_CALLS):
            call()
        benchmark.group = row.call
        benchmark(call)
