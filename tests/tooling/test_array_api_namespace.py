"""The namespace ``ci/array-api-tests`` runs the Array API suite against
(``gpubcast.testing.array_api_namespace``): the standard's 67 elementwise functions (2024.12) and
``where`` are gpubcast's own functions, every other name is NumPy's."""

import numpy as np
import pytest

import gpubcast as gb
from gpubcast.testing import array_api_namespace as xp


def test_the_standards_functions_are_gpubcasts():
    assert len(set(xp.ELEMENTWISE)) == 67   # the 2024.12 list (array_api_stubs elementwise_functions.__all__)
    for name in (*xp.ELEMENTWISE, *xp.OTHERS):
        assert getattr(xp, name) is getattr(gb, name), name
    assert xp.acos is gb.arccos and xp.pow is gb.power and xp.bitwise_invert is gb.bitwise_not
    x = np.array([-1.5, 0.0, 2.0], np.float32)
    assert np.array_equal(xp.clip(x, min=-1.0, max=1.0), np.clip(x, -1.0, 1.0))


def test_everything_else_is_numpys():
    assert xp.float32 is np.float32 and xp.asarray is np.asarray and xp.finfo is np.finfo
    assert xp.__array_api_version__ == np.__array_api_version__
    with pytest.raises(AttributeError, match="no attribute 'no_such_function'"):
        xp.no_such_function  # noqa: B018 - the attribute access is the test
