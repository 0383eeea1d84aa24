"""Which cases ``make test`` runs and which it leaves to ``make test-all`` (marked ``slow``): samples
that rotate through the dtypes so that together the tests still run each one."""

import zlib

import pytest


def sampled(cases, keep, ids, active=True):
    """``cases`` as pytest params; where ``active``, those not ``keep(i, case)`` are marked ``slow``
    (``make test`` runs the sample, ``make test-all`` every case)."""
    return [pytest.param(*c, id=i, marks=() if not active or keep(k, c) else pytest.mark.slow)
            for k, (c, i) in enumerate(zip(cases, ids))]


def rotating_dtype(cases) -> dict:
    """op name -> one of its dtypes among (op name, dtype) ``cases``, rotating through them op by op
    (sorted by name), so that together the ops pick every dtype."""
    names = sorted({n for n, _ in cases})
    mine = {n: [t for m, t in cases if m == n] for n in names}
    return {n: mine[n][k % len(mine[n])] for k, n in enumerate(names)}


def one_dtype_per_op(cases, every_dtype=()):
    """A ``keep`` for ``sampled`` over (op name, dtype) cases: each op with its ``rotating_dtype``,
    and the ops ``every_dtype`` with all."""
    pick = rotating_dtype(cases)
    assert set(every_dtype) <= set(pick), f"not among the cases: {set(every_dtype) - set(pick)}"

    def keep(k, case):
        name, dtype = case[:2]
        return name in every_dtype or dtype == pick[name]
    return keep


#: (backend, part) params of a test that runs an op on every dtype: NumPy's reference on all of them;
#: the Numba backend (a compiled row per (op, dtype)) on half of them in ``make test`` ("sample") and
#: the other half in ``make test-all`` ("rest", marked slow)
BACKEND_PARTS = [pytest.param("numpy", "all", id="numpy"), pytest.param("numba", "sample", id="numba"),
                 pytest.param("numba", "rest", id="numba-rest", marks=pytest.mark.slow)]


def dtypes_part(dtypes, name: str, part: str) -> list:
    """``dtypes`` ("all"), or op ``name``'s half of them ("sample": every other one, starting where the
    op's name says, so that the ops together pick each dtype) or the other half ("rest")."""
    if part == "all":
        return list(dtypes)
    start = zlib.crc32(name.encode()) % 2
    return [dt for k, dt in enumerate(dtypes) if (k % 2 == start) == (part == "sample")]
