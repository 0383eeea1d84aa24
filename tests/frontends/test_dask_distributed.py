"""gpubcast on a dask.distributed LocalCluster: 2 worker processes, 1 thread each (one cluster per module).

The workers import gpubcast themselves and run each chunk through gpubcast's kernels; results are
compared with NumPy.
"""

import numpy as np
import pytest

da = pytest.importorskip("dask.array")
distributed = pytest.importorskip("distributed")

import gpubcast as gb  # noqa: E402 - below the importorskip of Dask
from gpubcast import dispatch, ops  # noqa: E402 - below the importorskip of Dask


@pytest.fixture(scope="module")
def client():
    with distributed.LocalCluster(n_workers=2, threads_per_worker=1, processes=True, memory_limit="768MiB",
                                  dashboard_address=None, silence_logs=40) as cluster, \
            distributed.Client(cluster) as c:
        yield c


def _gpubcast_ran_here() -> bool:
    import sys
    return "gpubcast.dask_arrays" in sys.modules


def test_cluster_runs_every_kind_of_call(client):
    rng = np.random.default_rng(0)
    a = rng.normal(size=(60, 7, 9))
    b = rng.normal(size=(7, 1)).astype(np.float32)
    s = rng.uniform(0.1, 0.3, size=(9,))
    x = da.from_array(a, chunks=(25, 4, 5))      # uneven: 60 -> 25, 25, 10
    y = da.from_array(b, chunks=(3, 1))

    pdpd = gb.multiply(x, y, broadcast="pdpd", axis=1)
    chosen = gb.where(gb.greater(x, 0.0), pdpd, gb.prelu(x, s))
    summed = dispatch.apply(ops.get("sum"), (x, y, 2.0), rule="numpy")
    moved = gb.expand(da.from_array(s, chunks=4), (5, 1, 9))

    got = client.compute([chosen, summed, moved], sync=True)
    expected_pdpd = a * b.reshape(1, 7, 1)
    np.testing.assert_array_equal(got[0], np.where(a > 0, expected_pdpd, np.where(a < 0, a * s, a)))
    np.testing.assert_array_equal(got[1], a + b + 2.0)
    np.testing.assert_array_equal(got[2], np.broadcast_to(s, (5, 1, 9)))
    # the chunks ran in the worker processes, through gpubcast's dask module there
    assert len(client.scheduler_info()["workers"]) == 2
    assert any(client.run(_gpubcast_ran_here).values())


def test_cluster_reduces_a_lazily_generated_array(client):
    """Out-of-core in miniature: inputs made in the workers' chunks, reduced there, nothing gathered."""
    x = da.ones((4_000, 1_000), chunks=(500, 1_000), dtype=np.float32)      # 16 MB in 8 chunks
    row = da.arange(1_000, chunks=250, dtype=np.float32)
    total = gb.add(x, row).sum(dtype=np.float64)
    assert total.compute() == 4_000 * (1_000 + 999 * 1_000 / 2)
