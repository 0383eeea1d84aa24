"""The SASS interpreter (gpubcast.sass.interpreter) and the executed counts the model takes from it.

The interpreter is trusted as far as these tests reach: a hand-counted listing; and the kernels of
every benchmark pattern (float32 and float64), run from their sm_90 SASS over whole blocks at small
shapes (tiles crossing rows, partial tiles, shared tiles with barriers), must write every output
element NumPy computes -- a wrong branch, address, predicate or carry shows up there.  No GPU:
nothing here is measured on hardware."""

import numpy as np
import pytest

import gpubcast as gb
from gpubcast import ops
from gpubcast.dispatch import apply
from gpubcast.sass import cubins, interpreter as sx, model
from gpubcast.testing import emulate

WHY = cubins.unavailable()
needs_tools = pytest.mark.skipif(bool(WHY), reason=f"the SASS comes from NVRTC and nvdisasm: {WHY}")

#: a loop run c[0x0][0x210] times, each instruction's fate known
LOOP_SASS = """
        /*0000*/                   S2R R0, SR_TID.X ;
        /*0010*/                   LDC R2, c[0x0][0x210] ;
        /*0020*/                   MOV R3, RZ ;
.L_x_1:
        /*0030*/                   IADD3 R3, R3, 0x1, RZ ;
        /*0040*/                   ISETP.GE.AND P0, PT, R3, R2, PT ;
        /*0050*/              @!P0 BRA `(.L_x_1) ;
        /*0060*/               @P0 IADD3 R4, R0, R3, RZ ;
        /*0070*/                   EXIT ;
        /*0080*/                   BRA `(.L_x_2);
        /*0090*/                   NOP;
"""


@pytest.mark.parametrize("n", [1, 5])
def test_hand_counted_loop(n):
    instrs, labels = sx.decode(LOOP_SASS.splitlines())
    m = sx.Machine(instrs, labels, np.int32(n).tobytes(), 1, 32, sx.Memory())
    t = sx.run_thread(m, 0, 7)
    # 3 before the loop, 3 per pass, then the predicated add (run) and EXIT
    assert t.executed == 3 + 3 * n + 2 and t.nops == 0
    assert (t.r[3], t.r[4]) == (n, 7 + n) and t.counts[0x30] == n


def test_carries_and_negation():
    # 64-bit subtract as the compiler writes it: a - b with -b = ~b + 1 (carry out when a >= b)
    instrs, labels = sx.decode("""
        /*0000*/                   IADD3 R4, P0, R0, -R2, RZ ;
        /*0010*/                   IADD3.X R5, R1, ~R3, RZ, P0, !PT ;
        /*0020*/                   EXIT ;
    """.splitlines())
    m = sx.Machine(instrs, labels, b"", 1, 1, sx.Memory())
    for a, b in ((5 << 32, 1), (7, 7), (1, 2)):
        t = m.thread(0, 0)
        t.r[0:4] = [a & sx.M32, a >> 32, b & sx.M32, b >> 32]
        m.run(t)
        assert t.r[4] | t.r[5] << 32 == (a - b) % 2**64


def _r(rng, *shape, dt):
    return rng.standard_normal(shape).astype(dt)


CASES = {
    "same": lambda r, dt: (gb.add, (r(1000, dt=dt), r(1000, dt=dt)), np.add),
    "scalar": lambda r, dt: (gb.add, (r(1000, dt=dt), r(1, dt=dt)), np.add),
    "row": lambda r, dt: (gb.add, (r(5, 37, dt=dt), r(37, dt=dt)), np.add),        # tiles cross rows
    "column": lambda r, dt: (gb.add, (r(5, 64, dt=dt), r(5, 1, dt=dt)), np.add),
    "nchw": lambda r, dt: (gb.add, (r(2, 3, 8, 8, dt=dt), r(1, 3, 1, 1, dt=dt)), np.add),
    "outer": lambda r, dt: (gb.add, (r(16, 1, dt=dt), r(1, 64, dt=dt)), np.add),
    "rank6": lambda r, dt: (gb.add, (r(2, 1, 3, 1, 4, 8, dt=dt), r(1, 2, 1, 3, 4, 1, dt=dt)), np.add),
    "transposed": lambda r, dt: (gb.add, (r(64, 32, dt=dt).T, r(32, 64, dt=dt)), np.add),   # shared tiles
    "where": lambda r, dt: (gb.where, (r(16, 1, dt=dt) > 0, r(16, 64, dt=dt), r(1, 64, dt=dt)), np.where),
    "sum4": lambda r, dt: (lambda *xs, **k: apply(ops.get("sum"), xs, **k),
                           (r(2, 3, 8, 8, dt=dt), r(1, 3, 1, 1, dt=dt), r(2, 1, 8, 8, dt=dt), r(8, dt=dt)),
                           lambda *xs: ((xs[0] + xs[1]) + xs[2]) + xs[3]),
    "expand": lambda r, dt: (lambda x, **k: gb.broadcast_to(x, (4, 16, 64), **k), (r(16, 1, dt=dt),),
                             lambda x: np.broadcast_to(x, (4, 16, 64))),
}


@pytest.fixture(scope="module")
def backend():
    be = sx.SassBackend()
    with emulate.registered(be):
        yield be


@needs_tools
@pytest.mark.parametrize("dtype", ["float32", "float64"])
@pytest.mark.parametrize("name", sorted(CASES))
def test_interpreted_kernels_compute_what_numpy_does(name, dtype, backend):
    rng = np.random.default_rng(len(name))
    f, xs, ref = CASES[name](lambda *s, dt: _r(rng, *s, dt=dt), np.dtype(dtype))
    got = f(*xs, backend=backend.name)
    assert np.array_equal(got, ref(*xs))
    assert backend.threads[-1] and all(t.done for t in backend.threads[-1])


def test_loads_in_flight_until_their_first_reader():
    # two 16-byte loads and a 4-byte one in flight before the first add reads one of them; a 64-bit
    # add reads its pair; a store reads the value it stores
    instrs, labels = sx.decode("""
        /*0000*/                   LDG.E.128 R4, desc[UR4][R2.64] ;
        /*0010*/                   LDG.E.128 R8, desc[UR4][R2.64+0x10] ;
        /*0020*/                   LDG.E R12, desc[UR4][R2.64+0x20] ;
        /*0030*/                   FADD R16, R5, R0 ;
        /*0040*/                   LDG.E.64 R20, desc[UR4][R2.64+0x30] ;
        /*0050*/                   DADD R22, R20, R20 ;
        /*0060*/                   LDG.E R24, desc[UR4][R2.64+0x40] ;
        /*0070*/                   STG.E desc[UR4][R2.64+0x50], R12 ;
        /*0080*/                   EXIT ;
    """.splitlines())
    mem = sx.Memory()
    base = mem.add(np.zeros(32, np.float32))
    m = sx.Machine(instrs, labels, b"", 1, 1, mem)
    t = m.thread(0, 0)
    t.r[2:4] = [base & sx.M32, base >> 32]
    assert m.run(t) == "exit"
    assert t.inflight == 16 + 16 + 4                                  # before the FADD
    assert sorted(t.pending) == [8, 9, 10, 11, 24]                    # R4's and R20's loads read, R12's stored


@needs_tools
def test_rank6_all_strided_runs_at_most_40_instructions_per_element(backend):
    # issue 12's goal, executed: every operand (the output too) strided at coalesced rank 6,
    # innermost stride 2, tiles within one innermost row
    rng = np.random.default_rng(6)
    shape = (2, 3, 2, 3, 2, 64)

    def strided():
        big = rng.standard_normal(tuple(n + 1 for n in shape[:-1]) + (2 * shape[-1],)).astype(np.float32)
        return big[tuple(slice(0, n) for n in shape[:-1]) + (slice(None, None, 2),)]
    a, b, out = strided(), strided(), strided()
    gb.add(a, b, out=out, backend=backend.name)
    assert np.array_equal(out, a + b)
    lc, threads = backend.launches[-1], backend.threads[-1]
    assert lc.name == "gb::binary_general<gb::Add, float, float, gb::u32>"
    full = [t.executed for t in threads if t.block == 0]          # block 0: 256 full tiles
    assert len(full) == 256 and np.mean(full) / lc.ept <= 40, np.mean(full) / lc.ept


@needs_tools
@pytest.mark.parametrize("dtype", ["float32", "float64"])
def test_model_counts_what_runs_and_the_walk_is_a_lower_bound(dtype):
    for p in model.patterns():
        r = model.predict(p.name, dtype)
        assert r.instr_per_elem == model.executed(p.name, dtype)
        assert r.walk is not None and r.walk <= r.instr_per_elem, (p.name, r.walk, r.instr_per_elem)
        assert r.inflight_bytes == model.inflight_bytes(p.name, dtype) > 0


@needs_tools
def test_a_fold_keeps_one_input_in_flight_and_a_binary_kernel_both():
    # the bytes a thread keeps in flight, as the kernels load: the contiguous add loads both inputs'
    # ept elements before adding; the variadic fold (sum4) one input's lane tile at a time, with the
    # per-channel scalar, on the lanes of a padded row that work (28 of 32)
    same = model.predict("same", "float32")
    assert same.inflight_bytes == 2 * same.ept * 4
    row = model.predict("row", "float32")
    assert row.inflight_bytes == 2 * row.ept * 4
    s = model.predict("sum4", "float32")
    assert s.inflight_bytes == (s.ept * 4 + 4) * model.working_lanes("sum4", "float32") / 32


def test_traffic_counts_lines_sectors_and_fill_per_warp_request():
    """One warp's request: 32 lanes x 16 bytes 32 bytes apart (a consecutive row tile's first vector) touch 8
    lines and 32 sectors, each half used; the same bytes 16 apart (lane chunks) 4 lines, sectors full."""
    def warp(step, width=16, store=True):
        threads = []
        for lane in range(32):
            t = sx.Thread(0, lane)
            t.accesses.append((0x40, 1, 0x1000 + lane * step, width, store))
            threads.append(t)
        return threads
    spread = sx.traffic(warp(32), True)
    assert (spread.requests, spread.lines, spread.sectors, spread.bytes) == (1, 8, 32, 512)
    assert spread.sector_fill == 0.5
    dense = sx.traffic(warp(16), True)
    assert (dense.lines, dense.sectors, dense.sector_fill) == (4, 16, 1.0)
    assert sx.traffic(warp(16), False).requests == 0                        # stores only, not loads
    assert sx.traffic(warp(16), True, (0x1000, 0x1100)).bytes == 256         # within a buffer's bytes
    second = warp(16)
    for t in second:                                                         # the instruction's second run
        t.accesses.append((0x40, 2, t.accesses[0][2] + 512, 16, True))
    assert sx.traffic(second, True).requests == 2 and sx.traffic(second, True).lines == 8


@needs_tools
def test_user_kernels_run_the_built_in_kernels_paths():
    """ElementwiseKernel's tile path on the benchmark's shapes: a user kernel with the built-in add's operands
    executes the built-in's instructions per element (+1: its per-tile branch) and looks up the same L1 lines;
    axpb never reads its output (the loads of it are dead code); the element path ran 4x the instructions."""
    rows = {r.label.split(" (")[0] + (" element" if "element" in r.label else ""): r for r in model.user_kernel_rows()}
    builtin, user = rows["add nchw"], rows["z = x + a"]
    assert builtin.instr_per_elem <= user.instr_per_elem <= builtin.instr_per_elem + 1
    assert user.l1_lines_per_elem == builtin.l1_lines_per_elem and user.elements == builtin.elements
    assert rows["axpb"].output_load_bytes == 0 and rows["axpb"].l1_lines_per_elem < 1.05 * builtin.l1_lines_per_elem
    assert rows["axpb"].instr_per_elem < builtin.instr_per_elem + 8 < rows["axpb element"].instr_per_elem / 3
