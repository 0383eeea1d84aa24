"""Random fused chains: a Hypothesis strategy of programs over gpubcast's ops (``chains``) and the
Python function that runs one unfused (``program``), the oracle ``gpubcast.fuse`` is held to on
every backend (tests/frontends/test_fusion.py, tests/cuda/test_fusion_cuda.py)."""

import ml_dtypes
import numpy as np
from hypothesis import strategies as st

import gpubcast as gb

_RNG = np.random.default_rng(11)

DTYPES = (np.bool_, np.int8, np.uint8, np.int32, np.int64, np.float16, np.float32, np.float64,
          np.complex64, ml_dtypes.bfloat16)
BINARY = ("add", "subtract", "multiply", "divide", "floor_divide", "remainder", "maximum", "minimum",
          "power", "greater", "equal", "logical_and", "bitwise_xor", "left_shift")
UNARY = ("negative", "abs", "sqrt", "exp", "tanh", "floor", "sign", "relu", "logical_not", "erf")
SCALARS = (2, -1, 0.5, 3.0, True, 1 + 1j, 200, np.float16(1.5), np.int8(-3))


@st.composite
def chains(draw):
    """A random program over 1-3 array arguments (mutually broadcastable shapes, any of DTYPES,
    strided layouts) and Python / NumPy scalars: a list of (op, operand references) steps."""
    out = draw(st.lists(st.integers(1, 4), min_size=0, max_size=3))
    n = draw(st.integers(1, 3))
    args = []
    for _ in range(n):
        shape = tuple(d if draw(st.booleans()) else 1 for d in out)[draw(st.integers(0, len(out))):]
        dt = draw(st.sampled_from(DTYPES))
        x = (_RNG.standard_normal(shape) * 4)
        x = (x + 1j * _RNG.standard_normal(shape)).astype(dt) if np.dtype(dt).kind == "c" else x.astype(dt)
        if x.ndim and draw(st.booleans()):
            x = np.flip(x, -1)
        args.append(x)
    steps = []
    for _ in range(draw(st.integers(1, 6))):
        kind = draw(st.sampled_from(("binary", "unary", "where", "cast", "clip")))
        ref = lambda: ("ref", draw(st.integers(0, n + len(steps) - 1)))
        if kind == "binary":
            other = draw(st.one_of(st.builds(lambda i: ("ref", i), st.integers(0, n + len(steps) - 1)),
                                   st.sampled_from(SCALARS)))
            steps.append((draw(st.sampled_from(BINARY)), ref(), other))
        elif kind == "unary":
            steps.append((draw(st.sampled_from(UNARY)), ref()))
        elif kind == "where":
            steps.append(("where", ref(), ref(), draw(st.sampled_from(SCALARS[:4]))))
        elif kind == "cast":
            steps.append(("cast", ref(), draw(st.sampled_from((np.int16, np.float32, np.float16, np.bool_)))))
        else:
            steps.append(("clip", ref(), -1.0, 2))
    return args, steps


def program(steps):
    """The chain ``steps`` (``chains``) as a Python function of the arrays: each step a gpubcast call."""
    def f(*args):
        values = list(args)
        pick = lambda r: values[r[1]] if type(r) is tuple else r
        for name, *operands in steps:
            if name == "where":
                c, x, y = operands
                values.append(gb.where(pick(c) != 0, pick(x), y))
            elif name == "cast":
                values.append(gb.cast(pick(operands[0]), operands[1]))
            elif name == "clip":
                values.append(gb.clip(pick(operands[0]), operands[1], operands[2]))
            else:
                values.append(getattr(gb, name)(*[pick(r) for r in operands]))
        return values[-1]
    return f
