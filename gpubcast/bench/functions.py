"""The math-function table of ``python -m gpubcast bench`` (issue #22): every new unary math
function and activation, and a broadcast ``hypot`` / ``arctan2``, gpubcast's CPU backend against
the way a NumPy user computes the same thing, with the issue's speed goal per row marked met or not.

A row (``Function``) names gpubcast's op, the NumPy expression of ``x`` (and ``y``) a NumPy user
writes for it (the ufunc with ``out=o`` where NumPy has one; else a composition of ufuncs, which
allocates), the interval its seeded inputs are drawn from (inside the function's domain), the
operand layout and, through the layout, the goal:

``unary``  ``x`` of (N,):                      gpubcast at least 1.5x NumPy;
``outer``  ``x`` (M, 1) with ``y`` (1, K):       at least 2x NumPy;
``row``    ``x`` (M, K) with ``y`` (K,):         at least 2x NumPy.

Sizes: ``tiny`` (a check that every row runs), ``large`` (2**23 elements, 32 MiB of float32 per
operand or output: the input sets rotated exceed the last-level cache); ``--quick`` takes a quarter
of the large elements and marks no goal (the goals are for the large size).  Before a row is
timed, gpubcast's result and NumPy's are compared (a row whose NumPy expression computes something
else is skipped with the reason).  Timing: ``measure.time_host`` medians over input sets rotated,
as the pattern suite; the speed-up is NumPy's median over gpubcast's.
"""

from __future__ import annotations

import functools
import math
import time
from dataclasses import dataclass

import numpy as np

from . import measure
from .fused import GELU_C, GELU_K
from .runner import sample

#: layout -> operand shapes at tiny, quick-large and large
LAYOUTS = {
    "unary": {"tiny": ((64,),), "quick": ((2**21,),), "large": ((2**23,),)},
    "outer": {"tiny": ((4, 1), (1, 8)), "quick": ((1024, 1), (1, 2048)), "large": ((2048, 1), (1, 4096))},
    "row": {"tiny": ((4, 8), (8,)), "quick": ((1024, 2048), (2048,)), "large": ((2048, 4096), (4096,))},
}
#: layout -> the least speed-up over NumPy issue #22 asks for (large float32 arrays, 2 threads)
GOALS = {"unary": 1.5, "outer": 2.0, "row": 2.0}

ALLOCATES = "NumPy composition: allocates its temporaries and its result (no out=)"
GELU_TANH = f"0.5 * x * (1 + np.tanh({GELU_C} * (x + {GELU_K} * x**3)))"


@dataclass(frozen=True)
class Function:
    name: str                           # the row (``--patterns math-NAME``)
    op: str                             # the op of gpubcast.ops it measures
    numpy: str                          # NumPy's expression of x (and y), writing o where it takes out=
    domain: tuple = (-4.0, 4.0)         # inputs drawn uniformly from [low, high)
    layout: str = "unary"
    call: str | None = None             # gpubcast's function when it is not ``op`` (gelu_tanh: gelu)
    kwargs: tuple = ()                  # its keyword arguments, (name, value) pairs
    rtol: float = 1e-5                  # gpubcast and NumPy agree within rtol (and atol = rtol)
    note: str | None = None

    @property
    def goal(self) -> float:
        return GOALS[self.layout]

    @property
    def arity(self) -> int:
        return len(LAYOUTS[self.layout]["tiny"])

    @property
    def title(self) -> str:
        args = ["x", "y"][:self.arity] + [f"{k}={v!r}" for k, v in self.kwargs]
        return f"{self.call or self.op}({', '.join(args)})"

    def shapes(self, size: str, quick: bool = False) -> tuple:
        if size not in ("tiny", "large"):
            raise ValueError(f"unknown size {size!r}; choose tiny or large")
        return LAYOUTS[self.layout]["quick" if quick and size == "large" else size]

    def numpy_call(self):
        """NumPy's expression as a function ``(x, y, o) -> result``."""
        return _compiled(self.numpy)

    def gpubcast_call(self, backend: str | None = None):
        """gpubcast's function as ``(*operands, out) -> result``: the user's call (no ``backend=``)
        when ``backend`` is None, else forced onto ``backend``."""
        import gpubcast as gb
        f, kwargs = getattr(gb, self.call or self.op), dict(self.kwargs)
        if backend is not None:
            kwargs["backend"] = backend
        return lambda *xs, out=None: f(*xs, out=out, **kwargs)


@functools.cache
def _compiled(expression: str):
    """``(x, y, o) -> result``; an expression that writes o and returns None (``np.copyto``) gives o."""
    f = eval(f"lambda x, y, o: {expression}", {"np": np})  # this module's own expressions only
    return lambda x, y, o: (lambda r: o if r is None else r)(f(x, y, o))


def _ufunc(name: str, domain=(-4.0, 4.0), **kw) -> Function:
    return Function(name, name, f"np.{name}(x, out=o)", domain, **kw)


def _composed(name: str, numpy: str, **kw) -> Function:
    """An activation: NumPy has no function for it; its default parameters, inputs in [-6, 6)."""
    return Function(name, name, numpy, (-6.0, 6.0), note=kw.pop("note", ALLOCATES), **kw)


FUNCTIONS: tuple[Function, ...] = (
    _ufunc("sin"), _ufunc("cos"), _ufunc("tan", (-1.5, 1.5)),
    _ufunc("arcsin", (-0.999, 0.999)), _ufunc("arccos", (-0.999, 0.999)), _ufunc("arctan"),
    _ufunc("sinh", (-8.0, 8.0)), _ufunc("cosh", (-8.0, 8.0)), _ufunc("arcsinh", (-100.0, 100.0)),
    _ufunc("arccosh", (1.0, 100.0)), _ufunc("arctanh", (-0.999, 0.999)),
    _ufunc("exp2", (-20.0, 20.0)), _ufunc("expm1"), _ufunc("log1p", (-0.9, 100.0)),
    _ufunc("log2", (0.001, 1000.0)), _ufunc("log10", (0.001, 1000.0)), _ufunc("cbrt", (-100.0, 100.0)),
    _ufunc("deg2rad", (-360.0, 360.0)), _ufunc("rad2deg"),
    _ufunc("square"), _ufunc("trunc"), _ufunc("positive"),
    Function("conj", "conj", "np.conjugate(x, out=o)"),
    Function("real", "real", "np.copyto(o, np.real(x))",
             note="np.real of a real array is a view: the NumPy row copies it into o, as gpubcast.real returns a copy"),
    Function("imag", "imag", "np.copyto(o, np.imag(x))"),
    _ufunc("isnan"), _ufunc("isinf"), _ufunc("isfinite"), _ufunc("signbit"),
    _composed("leaky_relu", "np.where(x >= 0, x, 0.01 * x)"),
    _composed("elu", "np.where(x > 0, x, np.expm1(x))"),
    _composed("selu", "1.0507010221481323 * np.where(x > 0, x, 1.6732631921768188 * np.expm1(x))"),
    _composed("celu", "np.maximum(x, 0) + np.minimum(0, np.expm1(x))"),
    _composed("hard_sigmoid", "np.clip(0.2 * x + 0.5, 0, 1)"),
    _composed("hsigmoid", "np.clip(x + 3, 0, 6) / 6"),
    _composed("hard_swish", "x * np.clip(x / 6 + 0.5, 0, 1)"),
    _composed("softplus", "np.logaddexp(x, 0, out=o)", note=None),
    _composed("softsign", "x / (1 + np.abs(x))"),
    _composed("mish", "x * np.tanh(np.logaddexp(x, 0))"),
    _composed("gelu", GELU_TANH, rtol=1e-3,
              note="NumPy has no erf: the NumPy row is the tanh approximation (within 1e-3 of the exact GELU); "
                   "it allocates its temporaries"),
    _composed("gelu_tanh", GELU_TANH, call="gelu", kwargs=(("approximate", "tanh"),)),
    _composed("swish", "x / (1 + np.exp(-x))"),
    _composed("thresholded_relu", "np.where(x > 1, x, 0)"),
    _composed("shrink", "np.where(np.abs(x) > 0.5, x, 0)",
              note="bias 0 (the default): |x| > lambd keeps x; the NumPy composition allocates"),
    Function("hypot-outer", "hypot", "np.hypot(x, y, out=o)", layout="outer"),
    Function("arctan2-outer", "arctan2", "np.arctan2(x, y, out=o)", layout="outer"),
    Function("hypot-row", "hypot", "np.hypot(x, y, out=o)", layout="row"),
    Function("arctan2-row", "arctan2", "np.arctan2(x, y, out=o)", layout="row"),
)

BY_NAME = {f.name: f for f in FUNCTIONS}


def select(names) -> tuple[Function, ...]:
    """The rows called ``names`` (all when empty), in table order; a clear error for unknown names."""
    unknown = [n for n in names if n not in BY_NAME]
    if unknown:
        raise ValueError(f"unknown math function(s) {', '.join(unknown)}; choose from "
                         f"math (all), {', '.join('math-' + n for n in BY_NAME)}")
    return tuple(f for f in FUNCTIONS if not names or f.name in names)


def operands(function: Function, shapes, dtype, seed: int = 0) -> tuple[np.ndarray, ...]:
    """Seeded operands of ``shapes``, uniform in the function's domain, in ``dtype``."""
    rng = np.random.default_rng(seed)
    low, high = function.domain
    return tuple((low + (high - low) * rng.random(s)).astype(dtype) for s in shapes)


def agree(got, expected, rtol: float) -> bool:
    got, expected = np.asarray(got), np.asarray(expected)
    if got.shape != expected.shape or got.dtype != expected.dtype:
        return False
    if got.dtype.kind == "b":
        return bool(np.array_equal(got, expected))
    return bool(np.allclose(got, expected, rtol=rtol, atol=rtol, equal_nan=True))


def _xyo(xs, o):
    """NumPy's expression's arguments (x, y, o): y None for a unary row."""
    return xs[0], xs[1] if len(xs) > 1 else None, o


def run(size: str, *, dtype=np.float32, quick: bool = False, backend: str | None = None, repeat: int = 5,
        sets: int = 2, min_sample_s: float = 0.05, functions=FUNCTIONS, progress=None) -> tuple[list, list]:
    """(records, skipped): one record per row, gpubcast's and NumPy's medians on the same operands;
    gpubcast called as a user calls it (``backend`` None: the backend it picks, named in the records'
    ``backend``), or forced onto ``backend``."""
    from gpubcast import backends

    records, skipped = [], []
    label = f"gpubcast-{backend or backends.default_cpu().name}"
    for f in functions:
        if progress:
            progress(f"math {f.name} {size}")
        shapes = f.shapes(size, quick)
        host = operands(f, shapes, dtype)
        ins = [tuple(h.copy() for h in host) for _ in range(sets)]
        ours, theirs = f.gpubcast_call(backend), f.numpy_call()
        try:
            t0 = time.perf_counter()
            first = ours(*ins[0])          # compiles, loads
            first_s = time.perf_counter() - t0
            outs = [np.empty_like(first) for _ in ins]
            reference = theirs(*_xyo(ins[0], outs[0]))
            if not agree(sample(first), sample(reference), f.rtol):
                raise ValueError(f"gpubcast's {f.title} differs from NumPy's {f.numpy} beyond rtol {f.rtol}")
            t_ours = measure.time_host([lambda xs=xs, o=o: ours(*xs, out=o) for xs, o in zip(ins, outs)],
                                       repeat=repeat, min_sample_s=min_sample_s).median_s
            t_theirs = measure.time_host([lambda xs=xs, o=o: theirs(*_xyo(xs, o)) for xs, o in zip(ins, outs)],
                                         repeat=repeat, min_sample_s=min_sample_s).median_s
        except Exception as e:  # noqa: BLE001 - report the row, and go on with the others
            skipped.append({"pattern": f"math-{f.name}", "backend": label, "size": size,
                            "reason": f"{type(e).__name__}: {e}"})
            continue
        finally:
            del ins
        at_goal_size = size == "large" and not quick
        records.append({
            "function": f.name, "call": f.title, "layout": f.layout, "size": size, "dtype": str(np.dtype(dtype)),
            "operands": [list(s) for s in shapes], "elements": math.prod(first.shape), "backend": label,
            "gpubcast_s": t_ours, "numpy_s": t_theirs, "first_s": first_s, "speedup": t_theirs / t_ours,
            "goal": f.goal, "met": t_theirs / t_ours >= f.goal if at_goal_size else None, "numpy": f.numpy,
            "note": f.note,
        })
    return records, skipped


def goal_lines(records) -> list[str]:
    """One line per layout kind: how many rows meet issue #22's goal (rows measured at its size)."""
    lines = []
    for kind, layouts in (("unary", ("unary",)), ("broadcast hypot/arctan2", ("outer", "row"))):
        rows = [r for r in records if r["met"] is not None and r["layout"] in layouts]
        if rows:
            met = [r["function"] for r in rows if r["met"]]
            missed = [r["function"] for r in rows if not r["met"]]
            lines.append(f"math goal, {kind} >= {rows[0]['goal']:g}x NumPy: {len(met)} of {len(rows)} met"
                         + (f"; not met: {', '.join(missed)}" if missed else ""))
    return lines
