"""pytest-benchmark over the benchmark's pattern suite (``pytest benchmarks/``; not part of ``make test``).

The same patterns and peers as ``python -m gpubcast bench`` (gpubcast.bench.patterns and
.peers): every pattern x size (tiny, large) x backend present here.  Each case first checks
the peer's result against NumPy's, then times calls that rotate over two input sets; GPU calls
synchronise, since pytest-benchmark's clock is the host's.  The JSON of
``--benchmark-json`` carries each case's traffic in ``extra_info`` (bytes, GB/s).

    pytest benchmarks/ --benchmark-group-by=group
    GPUBCAST_BENCH_SIZES=tiny pytest benchmarks/      # only the per-call latency cases
"""

import itertools
import os

import numpy as np
import pytest

from gpubcast.bench.measure import gbps, synchronize
from gpubcast.bench.patterns import PATTERNS, SIZES, host_operands, make_cases
from gpubcast.bench.peers import discover
from gpubcast.bench.runner import agrees, reference, sample

DTYPE = np.dtype(os.environ.get("GPUBCAST_BENCH_DTYPE", "float32"))
BENCH_SIZES = tuple(s for s in os.environ.get("GPUBCAST_BENCH_SIZES", ",".join(SIZES)).split(",") if s)
PEERS, ABSENT = discover()


@pytest.mark.parametrize("size", BENCH_SIZES)
@pytest.mark.parametrize("peer", PEERS, ids=lambda p: p.name)
@pytest.mark.parametrize("pattern", PATTERNS, ids=lambda p: p.name)
def test_pattern(benchmark, pattern, peer, size):
    shapes = pattern.shapes(size, peer.device)
    host = host_operands(pattern, shapes, DTYPE)
    cases = make_cases(pattern, shapes, DTYPE, peer.xp, sets=2, host=host)
    binds = [peer.bind(pattern, shapes, case) for case in cases]
    assert agrees(sample(binds[0][0]()), reference(pattern, shapes, DTYPE, host)), f"{peer.label} is wrong"

    next_call = itertools.cycle([call for call, _ in binds]).__next__

    def one_call():
        next_call()()
        synchronize(peer.device)

    benchmark.group = f"{pattern.name}-{size}"
    benchmark.extra_info.update(backend=peer.name, label=peer.label, note=binds[0][1], dtype=str(DTYPE),
                                operands=[list(s) for s in shapes], bytes=pattern.traffic(shapes, DTYPE))
    benchmark(one_call)
    benchmark.extra_info["gbps_median"] = gbps(benchmark.extra_info["bytes"], benchmark.stats.stats.median)
