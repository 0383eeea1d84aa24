"""Shared test configuration: Hypothesis profiles, the GPU marker and the ``cupy`` fixture.

``cupy``: the real CuPy where a GPU is, else the virtual CUDA device (``gpubcast.testing.virtual``):
gpubcast's real CUDA backend path with every kernel launch checked and run by the host emulation.
``GPUBCAST_VIRTUAL_CUDA=1`` takes the virtual device even where a GPU is; ``=0`` never takes it
(tests that use the fixture then need a GPU, as before); that switch is ``gpubcast.testing.device``.
Tests marked ``gpu`` that do not use the fixture still need a real GPU.

The tests are grouped by layer in the folders beside this file; what several of them share (case
generators, layouts, references, sampling) is the ``tests.support`` package.
"""

import os

import pytest
from hypothesis import HealthCheck, settings

from gpubcast.testing import device

settings.register_profile("ci", max_examples=60, deadline=None,
                          suppress_health_check=[HealthCheck.too_slow])
settings.register_profile("dev", max_examples=200, deadline=None)
settings.register_profile("thorough", max_examples=2000, deadline=None)
settings.load_profile(os.environ.get("HYPOTHESIS_PROFILE", "ci"))


@pytest.fixture
def cupy():
    """CuPy on the GPU, or the virtual CUDA device standing in for it (module docstring)."""
    why = device.use_virtual() and device.virtual_unavailable()
    if why:
        pytest.skip(f"no virtual CUDA device: {why}")
    with device.cupy() as cp:
        yield cp


def pytest_collection_modifyitems(config, items):
    if device.gpu_available():
        return
    skip = pytest.mark.skip(reason="no CUDA device (cupy.cuda.is_available() is false)")
    for item in items:
        if "gpu" in item.keywords and not ("cupy" in getattr(item, "fixturenames", ()) and device.use_virtual()):
            item.add_marker(skip)
