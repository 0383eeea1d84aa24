"""The one hot-path mechanism (gpubcast.hot_calls): a runner is prepared on a signature's second
sighting, kept, bounded; dispatch, fusion and ElementwiseKernel all use it."""

import numpy as np

import gpubcast as gb
from gpubcast import dispatch, hot_calls
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
    x, b = np.ones((4, 8), np.float32), np.arange(8, dtype=np.float32)
    for _ in range(3):
        np.testing.assert_array_equal(gb.add(x, b), x + b)
    assert [r for r in dispatch.HOT.runners.values() if r not in (hot_calls.noted, hot_calls.no_runner)]
    f = gb.fuse(lambda a, c: a * c + 1)
    for _ in range(3):
        np.testing.assert_array_equal(f(x, b), x * b + 1)
    assert isinstance(f._hot, HotCalls) and len(f._hot.runners) == 1
