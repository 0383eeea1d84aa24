"""How the polynomials of ``backends/numba/float32_math.py`` and ``float32_trig.py`` were made:
discrete minimax fits of a relative error by linear programming, coefficients rounded to float32 one
at a time (lowest power first), the others refitted after each (a poor man's fpminimax).

Run ``python tools/minimax.py [name ...]`` (needs SciPy and mpmath, not dependencies of
gpubcast): prints each fit's coefficients and its relative error.  Targets are computed with mpmath
at 120 bits; the LP is solved on the residual of a least-squares start, rescaled, for a few rounds
(HiGHS' tolerances are absolute).
"""

from __future__ import annotations

import sys

import numpy as np


def minimax(target, basis, weight=None, fixed=None, rounds=3):
    """Coefficients c minimising max_i |weight_i (sum_j c_j basis_j(x_i) - target_i)|, with c_j =
    fixed[j] where given; returns (c, the max weighted error)."""
    basis = np.asarray(basis, np.float64)
    w = np.ones(basis.shape[1]) if weight is None else np.asarray(weight, np.float64)
    fixed = fixed or {}
    free = [j for j in range(len(basis)) if j not in fixed]
    rest = np.asarray(target, np.float64) - sum(v * basis[j] for j, v in fixed.items())
    c = np.zeros(len(basis))
    c[free] = np.linalg.lstsq((basis[free] * w).T, rest * w, rcond=None)[0]
    for _ in range(rounds):
        resid = rest - c[free] @ basis[free]
        scale = np.max(np.abs(resid * w)) or 1.0
        c[free] += _lp(resid / scale, basis[free], w) * scale
    for j, v in fixed.items():
        c[j] = v
    return c, float(np.max(np.abs((c @ basis - target) * w)))


def _lp(target, basis, w):
    from scipy.optimize import linprog
    cols = (basis * w).T
    norm = np.abs(cols).max(axis=0)
    norm[norm == 0] = 1.0
    a = cols / norm
    n, k = a.shape
    ones = np.ones((n, 1))
    res = linprog(np.r_[np.zeros(k), 1.0], A_ub=np.vstack([np.hstack([a, -ones]), np.hstack([-a, -ones])]),
                  b_ub=np.r_[target * w, -target * w], bounds=[(None, None)] * (k + 1), method="highs")
    if res.status != 0:
        raise RuntimeError(res.message)
    return res.x[:k] / norm


def minimax_float32(target, basis, weight=None):
    """``minimax`` with float32 coefficients: each rounded in turn, lowest power first."""
    fixed = {}
    for j in range(len(basis)):
        fixed[j] = float(np.float32(minimax(target, basis, weight, fixed)[0][j]))
    c, err = minimax(target, basis, weight, fixed)
    return c.astype(np.float32), err


def _fits():
    import mpmath as mp
    mp.mp.prec = 120
    m = lambda f, xs: np.array([float(f(mp.mpf(float(v)))) for v in xs])

    def exp():        # e^r - 1 - r = r^2 P(r), |r| <= ln2/2, relative to e^r
        r = np.linspace(-np.log(2) / 2, np.log(2) / 2, 4001)
        r = r[r != 0]
        return m(lambda v: (mp.expm1(v) - v) / v ** 2, r), [r ** j for j in range(5)], r ** 2 / np.exp(r)

    def exp2():       # 2^f - 1 = f P(f), |f| <= 1/2, relative to 2^f
        f = np.linspace(-0.5, 0.5, 4001)
        f = f[f != 0]
        return m(lambda v: (mp.power(2, v) - 1) / v, f), [f ** j for j in range(6)], np.abs(f) / 2.0 ** f

    def expm1():      # e^x - 1 - x = x^2 P(x), |x| <= ln 2, relative to e^x - 1
        x = np.linspace(-np.log(2), np.log(2), 4001)
        x = x[x != 0]
        return m(lambda v: (mp.expm1(v) - v) / v ** 2, x), [x ** j for j in range(8)], \
            np.abs(m(lambda v: v ** 2 / mp.expm1(v), x))

    def log():        # log(1+f) - f + f^2/2 = f^3 P(f), f in [sqrt(1/2) - 1, sqrt(2) - 1], relative
        f = np.linspace(np.sqrt(0.5) - 1, np.sqrt(2) - 1, 4001)
        f = f[np.abs(f) > 1e-9]
        return m(lambda v: (mp.log1p(v) - v + v * v / 2) / v ** 3, f), [f ** j for j in range(8)], \
            np.abs(m(lambda v: v ** 3 / mp.log1p(v), f))

    def tanh():       # tanh a - a = a^3 P(a^2), a in (0, 0.625], relative
        a = np.linspace(0.625 / 2000, 0.625, 2000)
        return m(lambda v: (mp.tanh(v) / v - 1) / v ** 2, a), [(a * a) ** j for j in range(5)], \
            m(lambda v: v ** 3 / mp.tanh(v), a)

    def erf():        # erf x - x = x P(x^2), x in (0, 0.921875], relative
        x = np.linspace(0.921875 / 3000, 0.921875, 3000)
        return m(lambda v: mp.erf(v) / v - 1, x), [(x * x) ** j for j in range(7)], m(lambda v: v / mp.erf(v), x)

    def erfc():       # erfc(a) e^(a^2) = u P(u), u = 1 / (1 + a/2), a in [0.25, 10.5], relative
        a = np.linspace(0.25, 10.5, 4000)
        big_r = m(lambda v: mp.erfc(v) * mp.exp(v * v), a)
        u = 1 / (1 + a / 2)
        return big_r / u, [u ** j for j in range(11)], u / big_r

    def odd(f, end, samples, terms):   # f(v) - v = v^3 P(v^2), v in (0, end], relative to f(v)
        v = np.linspace(end / samples, end, samples)
        return m(lambda x: (f(x) - x) / x ** 3, v), [(v * v) ** j for j in range(terms)], m(lambda x: x ** 3 / f(x), v)

    def cos():        # cos r - 1 + r^2/2 = r^4 P(r^2), r in (0, 0.835], relative
        r = np.linspace(0.835 / 3000, 0.835, 3000)
        return m(lambda v: (mp.cos(v) - 1 + v * v / 2) / v ** 4, r), [(r * r) ** j for j in range(3)], \
            m(lambda v: v ** 4 / mp.cos(v), r)

    # the odd ones: (0, 0.835] is float32_trig's reduced range, (0, 1] atan's, (0, 0.5] the small ranges of
    # asin and of float32_inverse_hyperbolic
    sin = lambda: odd(mp.sin, 0.835, 3000, 4)
    tan = lambda: odd(mp.tan, 0.835, 3000, 8)
    asinh = lambda: odd(mp.asinh, 0.5, 3000, 5)
    atanh = lambda: odd(mp.atanh, 0.5, 3000, 6)
    atan = lambda: odd(mp.atan, 1.0, 4000, 9)
    asin = lambda: odd(mp.asin, 0.5, 3000, 6)

    def atan_share():  # 1 / (1 + z), z in [0, 1] (the weight of atan's low part), relative
        z = np.linspace(0.0, 1.0, 2001)
        return 1 / (1 + z), [z ** j for j in range(3)], 1 + z
    return {"exp": exp, "exp2": exp2, "expm1": expm1, "log": log, "tanh": tanh, "erf": erf, "erfc": erfc,
            "sin": sin, "cos": cos, "tan": tan, "atan": atan, "asin": asin, "atan_share": atan_share,
            "asinh": asinh, "atanh": atanh}


def main(names) -> None:
    fits = _fits()
    for name in names or fits:
        coefficients, err = minimax_float32(*fits[name]())
        print(f"{name}: relative error 2^{np.log2(err):.1f}\n    " + ", ".join(repr(float(c)) for c in coefficients))


if __name__ == "__main__":
    main(sys.argv[1:])
