"""A pytest plugin for ``ci/array-api-tests``: Python's ``random`` seeded as each test starts.

The suite's special-case tests draw their input with hypothesis's ``strategy.example()``, which
picks among its examples with the unseeded global ``random`` (``--hypothesis-seed`` does not reach
it): seeded per test, the NumPy run and the gpubcast run see the same inputs, and a rerun too.
"""

import random

import pytest


@pytest.hookimpl(tryfirst=True)
def pytest_runtest_call(item):
    random.seed(0)
