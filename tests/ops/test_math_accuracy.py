"""The accuracy contract of the math functions (#22, ``gpubcast.ops.MATH_FUNCTION_ULPS``): on the
NumPy reference (NumPy's own loops) and the Numba backend, every result is within the stated ulps of
NumPy's float64 result rounded once to the dtype, over dense sweeps and the special values (±0,
±inf, NaN, subnormals, the poles and branch points), for float16, bfloat16, float32 and float64.
Exact functions (bound 0) equal NumPy's own loop for the dtype bit for bit, zero signs included."""

import warnings

import ml_dtypes
import numpy as np
import pytest

from gpubcast import ops
from gpubcast.dispatch import apply

from tests.support.math_cases import FLOATS, SPECIAL, sweep, truth, ulps

BACKENDS = ("numpy", "numba")
REAL = sorted(n for n, op in ops.REGISTRY.items() if "math" in op.tags and "f" in op.accepts)
#: ops whose result is not the float64 result rounded (their truth is NumPy's own loop for the dtype)
IN_DTYPE = ("nextafter", "fmax", "fmin")   # fmax/fmin: ties of ±0 keep the operand NumPy's loop for the dtype keeps
#: cancelling near a 0 result (NumPy's own formula): bound in ulps of max(|result|, 1)
CANCELLING = ("logaddexp", "logaddexp2")


def _operands(name, dt):
    x = sweep(dt, 1501)
    if ops.get(name).kind == "unary":
        return (x,)
    rng = np.random.default_rng(3)
    special = np.array(SPECIAL, np.float64)
    with warnings.catch_warnings():
        warnings.simplefilter("ignore")
        pairs = np.array(np.meshgrid(special, special)).reshape(2, -1).astype(dt)   # every special pair
    return (np.concatenate([x, rng.permutation(x), pairs[0]]), np.concatenate([rng.permutation(x), x, pairs[1]]))


def _errors(name, got, want, xs):
    if name not in CANCELLING:
        return ulps(got, want)
    g, w = got.astype(np.float64), want.astype(np.float64)
    eps = float(ml_dtypes.finfo(got.dtype).eps)
    with np.errstate(invalid="ignore"):
        e = np.abs(g - w) / (eps * np.maximum(np.abs(w), 1.0))
    return np.where((g == w) | np.isnan(g) & np.isnan(w), 0, np.where(np.isnan(e), 1 << 40, e))


@pytest.mark.parametrize("backend", BACKENDS)
@pytest.mark.parametrize("name", REAL)
def test_within_the_stated_ulps(name, backend):
    op = ops.get(name)
    for dt in FLOATS:
        xs = _operands(name, dt)
        want = apply(op, xs, backend="numpy") if name in IN_DTYPE else truth(name, *xs)
        with warnings.catch_warnings():
            warnings.simplefilter("ignore")
            got = apply(op, xs, backend=backend)
        bound = ops.math_ulps(name, dt)
        err = _errors(name, got, want, xs)
        worst = int(np.argmax(err))
        assert err.max() <= bound, (f"{name} {dt} on {backend}: {float(err.max())} ulps > {bound} at "
                                    f"{[x[worst] for x in xs]}: {got[worst]} vs {want[worst]}")


def test_the_bounds_table_is_complete():
    """Every real math function has a bound (0: exact), and the documented table is the one tested."""
    for name in REAL:
        for dt in FLOATS:
            assert ops.math_ulps(name, dt) >= 0
    assert set(ops.MATH_FUNCTION_ULPS) <= set(REAL)
    assert ops.math_ulps("sin", np.float32) == 3 and ops.math_ulps("copysign", np.float32) == 0
    assert ops.math_ulps("sin", np.complex64) == ops.MATH_COMPLEX_ULPS
    assert ops.math_rtol("hypot", np.float32) == 2 * 4 * np.finfo(np.float32).eps   # two backends, 4 ulps each
    assert ops.math_rtol("isnan", np.float32) == 0.0


def test_ulps_measures_what_it_says():
    """The ruler itself: neighbours are 1 ulp apart, across zero too; NaN vs a number is huge."""
    one = np.float32(1)
    assert ulps(np.float32([np.nextafter(one, 2)]), np.float32([1]))[0] == 1
    tiny = np.float32(1e-45)
    assert ulps(np.float32([tiny]), np.float32([-tiny]))[0] == 2
    assert ulps(np.float32([0.0]), np.float32([-0.0]))[0] == 1
    assert ulps(np.float16([np.nan]), np.float16([np.nan]))[0] == 0
    assert ulps(np.float16([np.nan]), np.float16([1]))[0] > 1e9
    b = np.array([1.0, 1.0078125], ml_dtypes.bfloat16)
    assert ulps(b[1:], b[:1])[0] == 1


def test_device_comparison_of_logaddexp_is_absolute_near_its_zero_crossing():
    """The GPU tests' ruler (``checks.agree`` with the device tolerance): logaddexp's error is
    absolute where its result nears 0 (x1 + log1p(...) cancels), so it is measured against
    max(|want|, 1) there, and against |want| for every other op."""
    from gpubcast.testing import checks
    rtol = checks.tolerance("logaddexp", np.float64, device=True)
    assert rtol == 2 * ops.math_ulps("logaddexp", np.float64) * np.finfo(np.float64).eps
    want = np.array([1e-13, -0.5, 8.0])
    near = want + np.array([0.9, 0.9, 0.5 * 8]) * rtol      # within rtol of max(|want|, 1)
    far = want + np.array([1.1, 0.0, 0.0]) * rtol
    assert checks.agree("logaddexp", near, want, rtol) and checks.agree("logaddexp2", near, want, rtol)
    assert not checks.agree("logaddexp", far, want, rtol)
    assert not checks.agree("multiply", near, want, rtol)  # relative to 1e-13, 0.9 rtol is 8e-3
    assert "1 of 3 disagree" in checks._difference(far, want, rtol, "logaddexp")
