"""gpubcast.fuse over time and depth: compiled code is found by a program's structure (a new scalar
value, a new ``gpubcast.fuse(f)``, a new ONNX ``prepare`` compile nothing), memory stays flat, and
chains of any depth trace, plan and run (passes of at most ``fusion.MAX_STEPS`` nodes).

The memory cases run in a fresh process each (``_flat``): resident memory after a warm-up and after
the calls, and the fused row functions compiled after the warm-up (none).
"""

import os
import re
import subprocess
import sys
import textwrap

import numpy as np
import pytest
from onnx import TensorProto, helper

import gpubcast as gb
import gpubcast.onnx as gbo
import gpubcast.onnx.backend as onnx_backend
from gpubcast import fusion
from gpubcast.backends.numba import backend as numba_backend
from gpubcast.backends.numba import fused as numba_fused
from gpubcast.cuda import fused as cuda_fused

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(gb.__file__)))
RNG = np.random.default_rng(7)

# --- memory: flat over many calls, no compile after the warm-up ----------------------------------------

HARNESS = """
import os, sys
import numpy as np
import gpubcast as gb
from gpubcast.backends.numba import fused as numba_fused

compiles = []
real = numba_fused.cfunc
numba_fused.cfunc = lambda *a, **k: compiles.append(1) or real(*a, **k)

def rss():
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")

{setup}

warm, n = {warm}, {n}
for i in range(warm):
    call(i)
before, compiled = rss(), len(compiles)
for i in range(warm, warm + n):
    call(i)
    if len(compiles) > compiled:
        print("compiled at call", i - warm)   # a new compile: stop here (old code compiled per call)
        break
print("result", (rss() - before) / 2**20, len(compiles) - compiled)
"""


def _flat(setup: str, warm: int, n: int):
    """Run ``setup`` (defining ``call(i)``) ``warm`` times, then ``n`` times in a fresh process: assert
    that the ``n`` calls compiled no fused row and grew resident memory by less than 40 MiB."""
    script = HARNESS.format(setup=textwrap.dedent(setup), warm=warm, n=n)
    env = dict(os.environ, PYTHONPATH=ROOT)
    child = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=600,
                           check=False)
    assert child.returncode == 0, child.stderr[-3000:]
    grown, compiled = child.stdout.split("result")[-1].split()
    assert int(compiled) == 0, child.stdout
    assert float(grown) < 40, child.stdout


needs_proc = pytest.mark.skipif(not os.path.exists("/proc/self/statm"), reason="reads /proc/self/statm")


@needs_proc
def test_distinct_scalar_values_compile_nothing():
    """10,000 calls, each with a new Python scalar: each retraces (Python), none compiles."""
    _flat("""
        x = np.ones((4, 8), np.float32)
        f = gb.fuse(lambda x, s: x * s + 1)
        def call(i):
            f(x, 1.0 + i)
        """, warm=300, n=10_000)


@needs_proc
def test_cycling_more_signatures_than_traces_kept():
    """300 shapes in turn (more than MAX_TRACES: every trace is dropped and made again), 4 cycles."""
    _flat("""
        xs, y = [np.ones((k + 1, 3), np.float32) for k in range(300)], np.ones(3, np.float32)
        f = gb.fuse(lambda x, y: x * y + 1)
        def call(i):
            f(xs[i % 300], y)
        """, warm=300, n=1200)


@needs_proc
def test_inline_fuse_compiles_once():
    """``gb.fuse(f)(x)`` written in a loop: a new fused function (and trace) per call, one compile."""
    _flat("""
        x = np.ones((4, 8), np.float32)
        def call(i):
            gb.fuse(lambda x: x * 2 + 1)(x)
        """, warm=100, n=600)


@needs_proc
def test_onnx_run_model_compiles_once():
    """``run_model`` of one 3-node model: a new rep (and fused chain) per call, one compile."""
    _flat("""
        from onnx import TensorProto, helper
        import gpubcast.onnx.backend as backend
        x = np.ones((4, 8), np.float32)
        io = [helper.make_tensor_value_info(n, TensorProto.FLOAT, [4, 8]) for n in "xy"]
        b = helper.make_tensor("b", TensorProto.FLOAT, [8], np.arange(8, dtype=np.float32))
        nodes = [helper.make_node("Add", ["x", "b"], ["t"]), helper.make_node("Mul", ["t", "x"], ["u"]),
                 helper.make_node("Relu", ["u"], ["y"])]
        model = helper.make_model(helper.make_graph(nodes, "g", io[:1], io[1:], [b]),
                                  opset_imports=[helper.make_opsetid("", 17)])
        def call(i):
            backend.run_model(model, [x])
        """, warm=100, n=1000)


# --- structural keys: the values of a new scalar are its own ---------------------------------------------

@pytest.fixture
def compiles(monkeypatch):
    """The fused row functions compiled during the test."""
    made, real = [], numba_fused.cfunc
    monkeypatch.setattr(numba_fused, "cfunc", lambda *a, **k: made.append(1) or real(*a, **k))
    return made


def _bits(x):
    x = np.asarray(x)
    return x.dtype, x.shape, x.tobytes()


def test_new_scalar_values_run_the_compiled_code_with_their_own_values(compiles):
    """A structurally equal program compiles nothing, and its constants are read at run time: power's
    fast path (a decision on the exponent's value) included."""
    x = np.abs(RNG.standard_normal((5, 7))).astype(np.float32) + 0.5
    f = gb.fuse(lambda x, s: x ** s + s)
    f(x, 2.0)
    compiles.clear()
    for s in (0.5, 2.0, 3.0, -1.0, 1.0, 0.0, 2.5, 1e-3):
        assert _bits(f(x, s)) == _bits(gb.add(gb.power(x, s), s)), s
        assert _bits(f(x, s)) == _bits(f(x, s))                  # the hot path's runner too
    assert not compiles


def test_scalar_values_that_change_the_graph_still_do():
    """A value the function's Python inspects, an int that does not fit the loop dtype (OverflowError)
    and an out-of-range int in a comparison (+-inf in float64) give the unfused chain's results."""
    x = np.array([-128, -5, 0, 7, 127], np.int8)
    greater = gb.fuse(lambda x, s: x > s)
    for s in (5, 1000, -1000, 100, 127, 128):
        assert _bits(greater(x, s)) == _bits(gb.greater(x, s)), s
    add = gb.fuse(lambda x, s: x + s)
    assert _bits(add(x, 3)) == _bits(gb.add(x, 3))
    with pytest.raises(OverflowError):
        add(x, 300)
    branch = gb.fuse(lambda x, s: x * (s * 2) if s > 0 else x - s)
    for s in (3, -3, 2):
        assert _bits(branch(x, s)) == _bits(gb.multiply(x, s * 2) if s > 0 else gb.subtract(x, s)), s


def test_programs_compare_by_structure_not_constants():
    x = np.ones((3, 4), np.float32)
    f = gb.fuse(lambda x, s: x * s - 1)
    [p2], [p3], [p64] = (f._trace([a, s]).programs for a, s in ((x, 2.0), (x, 3.0), (x.astype(np.float64), 2.0)))
    assert p2 == p3 and hash(p2) == hash(p3) and p2 is not p3
    assert p2.constant_block.tobytes() != p3.constant_block.tobytes()
    assert p2 != p64
    assert cuda_fused.kernel(p2, np.dtype(np.float32)) is cuda_fused.kernel(p3, np.dtype(np.float32))


def test_row_functions_are_kept_by_source_text_in_a_bounded_lru(monkeypatch):
    monkeypatch.setattr(numba_fused, "MAX_ROWS", 2)
    monkeypatch.setattr(numba_fused, "_ROWS", type(numba_fused._ROWS)())
    numba_backend._fused_spec.cache_clear()
    x = np.ones((3, 4), np.float32)
    for n in (1, 2, 3):     # three structures, three source texts
        assert _bits(gb.fuse(lambda x, n=n: _adds(x, n))(x)) == _bits(x + n)
    assert len(numba_fused._ROWS) == 2
    assert numba_backend._fused_spec.cache_info().maxsize == numba_backend.MAX_FUSED_SPECS


def _adds(x, n):
    for _ in range(n):
        x = x + 1.0
    return x


# --- depth: no recursion anywhere, passes of at most MAX_STEPS nodes ----------------------------------------

DEPTH = 3000


def _chain(x, b, s, n=DEPTH, backend=None):
    """Add, Mul, Neg, Relu in turn (the ONNX chain below), each a gpubcast call."""
    for i in range(n):
        k = i % 4
        x = (gb.add(x, b, backend=backend) if k == 0 else gb.multiply(x, s, backend=backend) if k == 1
             else gb.negative(x, backend=backend) if k == 2 else gb.relu(x, backend=backend))
    return x


def _chain_args():
    return (RNG.standard_normal((4, 8)).astype(np.float32), RNG.uniform(-0.1, 0.1, 8).astype(np.float32),
            RNG.uniform(0.9, 1.1, 8).astype(np.float32))


def _onnx_chain(n=DEPTH):
    """A chain of ``n`` nodes: Add, Mul (with small (8,) initializers), Neg, Relu in turn on x (4, 8)."""
    nodes, inits, prev = [], [], "x"
    for k in range(n):
        out, op = ("y" if k == n - 1 else f"t{k}"), ("Add", "Mul", "Neg", "Relu")[k % 4]
        inputs = [prev]
        if op in ("Add", "Mul"):
            values = RNG.uniform(-0.1, 0.1, 8) if op == "Add" else RNG.uniform(0.9, 1.1, 8)
            inits.append(helper.make_tensor(f"c{k}", TensorProto.FLOAT, [8], values.astype(np.float32)))
            inputs.append(f"c{k}")
        nodes.append(helper.make_node(op, inputs, [out]))
        prev = out
    io = [helper.make_tensor_value_info(n, TensorProto.FLOAT, [4, 8]) for n in "xy"]
    return helper.make_model(helper.make_graph(nodes, "chain", io[:1], io[1:], inits),
                             opset_imports=[helper.make_opsetid("", 17)])


def test_fuse_of_a_3000_op_loop_traces_and_plans_in_passes():
    """Traced, split and planned without recursion; run op by op on the reference backend (no
    compile): the unfused chain's values."""
    args = _chain_args()
    f = gb.fuse(_chain)
    got = f(*args, backend="numpy")
    assert _bits(got) == _bits(_chain(*args, backend="numpy"))
    [trace] = f._traces.values()
    passes = [*trace.stages, *trace.programs]
    assert len(passes) >= DEPTH // fusion.MAX_STEPS
    assert all(len(p.steps) <= fusion.MAX_STEPS for p in passes)
    assert sum(len(p.steps) for p in passes) == DEPTH


def test_passes_serve_every_output_out_and_dask():
    """Two outputs past MAX_STEPS and one reading both: each stage reads the earlier ones, on arrays
    (into out=) and on Dask arrays."""
    da = pytest.importorskip("dask.array")

    def f(x, y, backend=None):
        a, on = x, {"backend": backend}
        for i in range(300):
            a = gb.add(gb.multiply(a, 0.99, **on), y, **on) if i % 2 else gb.tanh(a, **on)
        b = a
        for i in range(200):
            b = gb.subtract(b, x, **on) if i % 3 else gb.abs(b, **on)
        return a, b, gb.where(gb.greater(a, b, **on), a, b, **on)
    x, y = RNG.standard_normal((6, 5)).astype(np.float32), RNG.standard_normal(5).astype(np.float32)
    want = [_bits(w) for w in f(x, y, backend="numpy")]
    fused = gb.fuse(f)
    outs = tuple(np.empty((6, 5), np.float32) for _ in want)
    assert fused(x, y, out=outs, backend="numpy") == outs
    assert [_bits(o) for o in outs] == want
    lazy = fused(da.from_array(x, chunks=(3, 5)), y)       # chunks on the default backend (tanh's ulps)
    assert [_bits(r.compute()) for r in lazy] == [_bits(w) for w in f(x, y)]
    assert len(next(iter(fused._traces.values())).stages) >= 3


def test_onnx_chain_of_3000_nodes_groups_and_runs():
    """Grouped as one fused chain without recursion (split into passes by gpubcast.fuse); run on the
    reference backend (no compile): the values of fuse=False."""
    model, x = _onnx_chain(), RNG.standard_normal((4, 8)).astype(np.float32)
    rep = onnx_backend.prepare(model, gpubcast_backend="numpy")
    assert [s.op_type for s in rep._steps] == ["fused"]
    want = onnx_backend.prepare(model, gpubcast_backend="numpy", fuse=False).run([x])[0]
    assert _bits(rep.run([x])[0]) == _bits(want)


def _nesting(text: str) -> int:
    depth = deepest = 0
    for c in re.sub(r"[^()]", "", text):
        depth += 1 if c == "(" else -1
        deepest = max(deepest, depth)
    return deepest


def test_a_variadic_of_many_inputs_generates_flat_code():
    """Sum of 300 inputs: one statement per input (Python and C++ compilers limit nesting)."""
    x = np.ones((3, 4), np.float32)
    [p] = gb.fuse(lambda x: gbo.Sum(*[x] * 300))._trace([x]).programs
    text, _ = numba_fused.source(p, np.dtype(np.float32), "uu", numba_backend._raw)
    compile(text, "<row>", "exec")
    assert _nesting(text) < 10
    assert _nesting(cuda_fused.source(p, np.float32)) < 10


@pytest.mark.slow
def test_3000_deep_chains_run_fused_on_numba():
    """End to end on the Numba backend (compiles a few passes): gb.fuse of the loop equals the unfused
    chain, the ONNX chain equals fuse=False, bit for bit."""
    args = _chain_args()
    assert _bits(gb.fuse(_chain)(*args)) == _bits(_chain(*args))
    model, x = _onnx_chain(), args[0]
    want = onnx_backend.prepare(model, fuse=False).run([x])[0]
    assert _bits(onnx_backend.prepare(model).run([x])[0]) == _bits(want)
