"""The designs for small calls, measured side by side (issue 21): what one warm, repeated call costs
in each, on (4, 8) float32 operands, against NumPy's same call.

  numpy             NumPy's own ufunc call
  general path      gpubcast.dispatch.apply with no prepared runner (plan cached, types resolved,
                    the backend executes the plan)
  python hot path   dispatch.apply finding its prepared runner (the signature built in Python from
                    dtype/shape/strides, a Python runner calling the Numba-compiled serial driver)
  lean python       the leanest Python wrapper: the signature as one tuple, one dict lookup, the same
                    runner (the floor of any design written in Python around Numba's dispatcher)
  numba ufunc       NumPy's ufunc machinery carrying a Numba-built loop (``numba.vectorize``, one
                    signature): NumPy's per-call cost, NumPy's broadcasting and type resolution
  compiled          what gpubcast ships: the NumPy-style function calling hot_call.cpp, which keys
                    the call from the arrays' C fields and calls the driver (gpubcast.compiled_calls)

Run: .venv/bin/python benchmarks/call_designs.py   (prints a table; docs/reports/cpu-vm.md quotes one run)
"""

from __future__ import annotations

import timeit

import numba
import numpy as np

import gpubcast as gb
from gpubcast import dispatch, ops
from gpubcast.hot_calls import HotCalls

X = np.random.default_rng(0).standard_normal((4, 8)).astype(np.float32)
B = np.random.default_rng(1).standard_normal(8).astype(np.float32)


def _best(f, number=20000, repeat=7) -> float:
    for _ in range(5):
        f()
    return min(timeit.repeat(f, number=number, repeat=repeat)) / number


def _general(op, args):
    def call():
        dispatch.HOT = HotCalls(4096)     # no runner: every call plans (cached) and executes
        return dispatch.apply(op, args)
    saved = dispatch.HOT
    try:
        return _best(call, number=2000) - _best(lambda: HotCalls(4096), number=2000)
    finally:
        dispatch.HOT = saved


def _lean(op, args):
    for _ in range(3):
        dispatch.apply(op, args)
    runner = next(r for k, r in dispatch.HOT.runners.items() if k[0] == op.name and hasattr(r, "keep"))
    table = {tuple((a.dtype, a.shape, a.strides) for a in args): runner}
    nd = np.ndarray

    def lean(*xs):
        if all(type(a) is nd for a in xs):
            run = table.get(tuple((a.dtype, a.shape, a.strides) for a in xs))
            if run is not None:
                return run(xs, None)
        return None
    return _best(lambda: lean(*args))


def main() -> None:
    add = numba.vectorize(["float32(float32, float32)"])(lambda a, b: a + b).ufunc
    tanh = numba.vectorize(["float32(float32)"])(lambda a: np.tanh(a)).ufunc
    cases = [("add(x, b)", ops.get("add"), (X, B), np.add, add, gb.add),
             ("tanh(x)", ops.get("tanh"), (X,), np.tanh, tanh, gb.tanh)]
    print(f"{'call':12} {'numpy':>8} {'general':>8} {'py hot':>8} {'lean py':>8} {'nb ufunc':>8} {'compiled':>8}  (us)")
    for label, op, args, ref, ufunc, ours in cases:
        row = [_best(lambda: ref(*args)), _general(op, args), _best(lambda: dispatch.apply(op, args)),
               _lean(op, args), _best(lambda: ufunc(*args)), _best(lambda: ours(*args))]
        print(f"{label:12} " + " ".join(f"{t * 1e6:8.2f}" for t in row))


if __name__ == "__main__":
    main()
