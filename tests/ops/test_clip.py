"""``gpubcast.clip`` against NumPy 2's ``np.clip`` as the oracle, on every bound form: Python ints in
and beyond an integer dtype's range, NumPy scalars, floats on integer data, None, NaN and +-inf, 0-d
and broadcast arrays, min > max -- on the NumPy and Numba backends, the compiled hot path and the
virtual CUDA device.  (ONNX Clip and OpenVINO Clamp follow their runtimes instead:
tests/frontends/test_onnx_oracle.py and tests/frontends/test_openvino_oracle.py.)"""

from __future__ import annotations

import itertools
import math
import warnings

import numpy as np
import pytest

import gpubcast as gb

ARRAYS = {
    "int8": np.arange(-3, 5, dtype=np.int8), "uint8": np.array([0, 1, 7, 200, 255], np.uint8),
    "int64": np.array([-2**63, -3, 0, 4, 2**63 - 1], np.int64), "bool": np.array([True, False]),
    "float16": np.array([-1.5, 0, np.nan, 2.5, np.inf], np.float16),
    "float32": np.array([-1.5, 0, np.nan, 2.5, -np.inf], np.float32),
}
BOUNDS = [None, 1000, -1000, 127, 128, -128, -129, 255, 256, -1, 3, 1, 2**63, -2**63 - 1, 2**64, 2**70, -2**70,
          1.5, -1.5, 0.1, 2049, np.float32(0.1), np.float32(1.5), np.int64(1000), np.int16(-3), np.uint8(2),
          math.nan, math.inf, -math.inf, True, np.array(2), np.array(1000), np.array(-1.5, np.float32),
          np.array([[1], [0]], np.int8)]


def outcome(f):
    """What a call gives: its result (dtype, values) or the type of the exception it raises."""
    try:
        with warnings.catch_warnings(), np.errstate(all="ignore"):
            warnings.simplefilter("ignore")
            r = np.asarray(f())
    except Exception as e:  # noqa: BLE001 - the exception's type is what is compared
        return type(e)
    return r.dtype, r.shape, r.astype(object if r.dtype.kind in "iub" else np.float64)


def assert_same_outcome(got, want, what):
    if isinstance(want, type) or isinstance(got, type):
        assert got == want, what
        return
    assert got[:2] == want[:2], what
    assert np.array_equal(got[2], want[2], equal_nan=want[0].kind in "fc"), what


def differs_by_design(x, lo, hi) -> bool:
    """np.clip of bool data with no bound raises (np.positive has no bool loop); gb.clip copies x, as the
    Array API's clip does."""
    return x.dtype == bool and lo is None and hi is None


@pytest.mark.parametrize("backend", [None, "numpy", "numba"])
@pytest.mark.parametrize("name", sorted(ARRAYS))
def test_every_bound_form_is_numpy_clip(name, backend):
    x = ARRAYS[name]
    for lo, hi in itertools.product(BOUNDS, BOUNDS):
        if differs_by_design(x, lo, hi):
            continue
        what = f"clip({name}, {lo!r}, {hi!r}, backend={backend})"
        assert_same_outcome(outcome(lambda: gb.clip(x, lo, hi, backend=backend)),
                            outcome(lambda: np.clip(x, lo, hi)), what)


def test_python_int_bounds_beyond_the_dtype():
    """The issue's case: NumPy 2 raises OverflowError for a bound beyond the end that would clip everything,
    and drops one at or beyond the end on its own side."""
    x = np.arange(5, dtype=np.int8)
    with pytest.raises(OverflowError, match=r"clip: min=1000 is out of bounds for int8"):
        gb.clip(x, 1000, None)
    with pytest.raises(OverflowError, match=r"clip: max=-129 is out of bounds for int8"):
        gb.clip(x, None, -129)
    with pytest.raises(OverflowError, match=r"clip: min=1000 is out of bounds for int8"):  # next to an int8 bound
        gb.clip(x, 1000, np.int8(3))
    with pytest.raises(OverflowError, match=r"clip: min=<a Python int of 332 digits>: int too large"):  # for any float
        gb.clip(x, 2**1100, np.float16(1))
    got = gb.clip(x, -1000, 1000)
    assert got.dtype == np.int8 and got.tolist() == [0, 1, 2, 3, 4]
    # with a strong int64 bound the three promote to int64, where 1000 fits
    assert gb.clip(x, 1000, np.int64(2000)).tolist() == np.clip(x, 1000, np.int64(2000)).tolist() == [1000] * 5
    # a float16 array with a Python float next to a float32 bound: 0.1 is rounded to float32, not float16
    h = np.zeros(3, np.float16)
    assert np.array_equal(gb.clip(h, 0.1, np.float32(5)), np.clip(h, 0.1, np.float32(5)))
    assert gb.clip(h, 0.1, np.float32(5)).dtype == np.float32


def test_python_scalar_and_list_inputs():
    for x, lo, hi in ((5.0, np.float32(1), None), (5, 1000, None), ([1, 5], [2, 2], 3), (7, None, None)):
        assert_same_outcome(outcome(lambda: gb.clip(x, lo, hi)), outcome(lambda: np.clip(x, lo, hi)), (x, lo, hi))


def test_on_the_cuda_device(cupy):
    """The same bound forms on CuPy data (the real GPU or the virtual device), on a sample of the grid."""
    for name in ("int8", "uint8", "float32"):
        x = ARRAYS[name]
        for lo, hi in itertools.product(BOUNDS[::3], BOUNDS[1::4]):
            if differs_by_design(x, lo, hi) or isinstance(lo, np.ndarray) or isinstance(hi, np.ndarray):
                continue
            want = outcome(lambda: np.clip(x, lo, hi))
            got = outcome(lambda: cupy.asnumpy(gb.clip(cupy.asarray(x), lo, hi)))
            assert_same_outcome(got, want, f"cuda clip({name}, {lo!r}, {hi!r})")
