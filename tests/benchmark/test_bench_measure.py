"""The benchmark's arithmetic and timing loops: bandwidth against hand-computed cases,
rotation of input sets, and calls-per-sample selection."""

import itertools

import numpy as np
import pytest

from gpubcast.bench import measure
from gpubcast.bench.patterns import BY_NAME, PATTERNS, host_operands, make_cases

F32, F64 = 4, 8


@pytest.mark.parametrize("inputs, output, expected", [
    # row add (8192,4096)+(4096,): 2 x 128 MiB + 16 KiB
    ([((8192, 4096), F32), ((4096,), F32)], ((8192, 4096), F32), 268_451_840),
    # outer (8192,1)+(1,4096): the output dominates; the inputs count their own 32 KiB and 16 KiB
    ([((8192, 1), F32), ((1, 4096), F32)], ((8192, 4096), F32), 134_217_728 + 32_768 + 16_384),
    # scalar (2**25,)+(1,): one element read for the scalar
    ([((2**25,), F32), ((1,), F32)], ((2**25,), F32), 268_435_460),
    # a 0-d operand is one element
    ([((3,), F64), ((), F64)], ((3,), F64), 24 + 8 + 24),
    # where: a bool condition (1 byte per element) of (8192,1)
    ([((8192, 1), 1), ((8192, 4096), F32), ((1, 4096), F32)], ((8192, 4096), F32),
     8_192 + 134_217_728 + 16_384 + 134_217_728),
    # rank-6 interleaved: 262144 + 9216 elements read, 75497472 written
    ([((8, 1, 16, 1, 32, 64), F32), ((1, 12, 1, 24, 32, 1), F32)], ((8, 12, 16, 24, 32, 64), F32),
     (262_144 + 9_216 + 75_497_472) * 4),
    # float64 doubles everything
    ([((8192, 4096), F64), ((4096,), F64)], ((8192, 4096), F64), 2 * 268_451_840),
    # zero-size: nothing moves
    ([((0, 4), F32), ((4,), F32)], ((0, 4), F32), 16),
])
def test_traffic_bytes_hand_computed(inputs, output, expected):
    assert measure.traffic_bytes(inputs, output) == expected


@pytest.mark.parametrize("name, size, device, expected", [
    ("row", "large", "cpu", 268_451_840),
    ("transposed", "large", "cpu", 3 * 4096 * 4096 * 4),   # a transposed view reads its own 64 MiB once
    ("explicit", "large", "cpu", 64 * 56 * 4 + 128 * 64 * 56 * 56 * 4),   # copy: the input, the output
    ("expand", "large", "cpu", 4096 * 4 + 2 * 4096 * 4096 * 4),
    ("where", "tiny", "cpu", 4 * 1 + 16 * 4 + 4 * 4 + 16 * 4),   # condition (4,1) bool
    ("sum4", "tiny", "gpu", (24 + 3 + 8 + 2 + 24) * 4),
])
def test_pattern_traffic_hand_computed(name, size, device, expected):
    p = BY_NAME[name]
    assert p.traffic(p.shapes(size, device), np.float32) == expected


@pytest.mark.parametrize("pattern", PATTERNS, ids=lambda p: p.name)
def test_pattern_traffic_equals_the_arrays_own_bytes(pattern):
    """Independent of the arithmetic: the real operand arrays' nbytes (a broadcast operand's own
    size, a transposed view's own size) plus the output buffer's."""
    shapes = pattern.tiny
    case = make_cases(pattern, shapes, np.float64, sets=1)[0]
    assert pattern.traffic(shapes, np.float64) == sum(x.nbytes for x in case.inputs) + case.out.nbytes


def test_gbps_and_fraction():
    assert measure.gbps(2_000_000_000, 0.5) == 4.0
    assert measure.gbps(0, 1.0) == 0.0
    assert measure.fraction(5.0, 20.0) == 0.25
    assert measure.fraction(5.0, None) is None
    with pytest.raises(ValueError, match="positive time"):
        measure.gbps(100, 0.0)


def test_time_host_rotates_input_sets_across_samples():
    """With one call per sample, the sets must still alternate (not set 0 every time)."""
    order = []
    calls = [lambda k=k: order.append(k) for k in range(2)]
    t = measure.time_host(calls, repeat=4, min_sample_s=0.0)
    assert t.calls_per_sample == 1 and len(t.samples) == 4
    assert order == [0, 1, 0, 1, 0, 1, 0, 1]   # warm-up and estimate (each set once each), then 4 samples
    assert t.median_s == np.median(t.samples)


def test_measure_picks_calls_per_sample_from_a_warm_batch():
    """A slow first batch (compiles, a first sight on the hot path: 1 s) is not the estimate: the
    next batch's call at 1 ms and a 10 ms minimum sample give 10 calls per sample; the median is of
    the per-call times."""
    seconds = itertools.chain([2.0, 0.002], itertools.repeat(None))
    per_call = iter([0.0010, 0.0030, 0.0020])
    batches = []

    def batch(n):
        batches.append(n)
        first = next(seconds)
        return first if first is not None else next(per_call) * n
    t = measure._measure(batch, warmup_calls=2, repeat=3, min_sample_s=0.01)
    assert batches == [2, 2, 10, 10, 10]
    assert t.calls_per_sample == 10
    assert t.samples == pytest.approx((0.001, 0.003, 0.002))
    assert t.median_s == pytest.approx(0.002)


def test_measure_rejects_zero_repeats():
    with pytest.raises(ValueError, match="repeat"):
        measure._measure(lambda n: 1.0, 1, 0, 0.0)


def test_cases_are_distinct_buffers_with_equal_values():
    p = BY_NAME["transposed"]
    host = host_operands(p, p.tiny, np.float32)
    a, b = make_cases(p, p.tiny, np.float32, sets=2, host=host)
    for x, y in zip(a.inputs, b.inputs):
        assert not np.shares_memory(x, y)
        np.testing.assert_array_equal(x, y)
    np.testing.assert_array_equal(a.inputs[0], host[0].T)   # passed as a transposed view
    assert not a.inputs[0].flags.c_contiguous


def test_cpu_ceiling_is_measured_and_consistent():
    c = measure.cpu_ceiling(2**22, repeat=2, threads=2)
    rates = [c[k] for k in ("copy_gbps", "copy_threads_gbps", "add_gbps", "add_threads_gbps")]
    assert all(r > 0 for r in rates)
    assert c["gbps"] == max(rates) and c["threads"] == 2 and "4 MiB" in c["method"]


@pytest.mark.gpu
def test_time_cuda_and_gpu_ceiling():
    import cupy
    x = cupy.ones(2**20, cupy.float32)
    t = measure.time_cuda([lambda: x + 1, lambda: x * 2], repeat=3, min_sample_s=0.001)
    assert t.median_s > 0 and t.calls_per_sample >= 1
    assert measure.gpu_ceiling(2**26, repeat=3)["gbps"] > 10
