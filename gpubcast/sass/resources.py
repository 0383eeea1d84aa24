"""Static resource report of the hot kernels: registers, spills, local memory, occupancy, the width
of every global access and instructions per element, read from the CUBIN -- no GPU needed.

Contract (``python -m gpubcast kernels --resources [--arch sm_80 sm_90]``):

- What is measured: the *hot* instantiations (``HOT``: float32 add with its contiguous kernel and
  general kernels with 32- and 64-bit indices, where on float32, copy of 4- and 16-byte elements,
  the variadic sum on float32, add on float16, float64 and complex128), each compiled alone, as the
  runtime compiles it (``compiler.options``: same source, same options), plus
  ``--ptxas-options=-v`` so that ptxas writes its report into NVRTC's log.  That option changes
  only the CUBIN's toolkit-info note (which records the command line), not the code
  (``tests/tooling/test_kernels_resources.py`` checks that the SASS is the same).  In a process that has
  compiled with ``--Ofast-compile`` (``kernels --check --fast``), NVRTC compiles later programs
  differently, so the kernels are then compiled in a fresh process.  The log and the CUBIN,
  and the tools' listings of it, are kept in gpubcast's cache (kind ``nvrtc``; ``cubins``).
- Where each number comes from: registers, stack and local memory from ``cuobjdump -res-usage``;
  static shared memory ("N bytes smem") and spill stores/loads (bytes) from ptxas's report
  (registers checked equal to cuobjdump's; its SHARED figure includes the 1 KiB reserved per
  block on sm_90, not on sm_80, so ptxas's is used); everything else from the SASS that
  ``nvdisasm -c -ndf`` prints.
- Occupancy at ``launch.BLOCK`` threads per block, from registers and static shared memory only
  (the general kernels of binary, ternary, copy and unary hold ``launch.SHARED_BYTES`` for their
  shared tiles, whether a launch takes them or not):
      regs_per_warp   = ceil(regs * 32 / 256) * 256              (allocation unit: 256 per warp)
      blocks_by_regs  = floor(65536 / (regs_per_warp * BLOCK / 32))
      blocks_by_smem  = floor(smem_per_sm / (shared + 1024))      (1 KiB reserved per block;
                        sm_80: 164 KiB, sm_90: 228 KiB per SM; no limit when shared is 0)
      blocks          = min(32, 2048 // BLOCK, blocks_by_regs, blocks_by_smem)
      occupancy       = blocks * BLOCK / 2048                     (resident threads / max threads)
  (sm_80 and sm_90 alike: 65536 registers, 2048 threads and 32 blocks per SM).
- Global accesses: every ``LDG``/``STG`` of the kernel by width (``.128`` -> 128, ``.64`` -> 64,
  ``.U8``/``.S8`` -> 8, ``.U16``/``.S16`` -> 16, none -> 32); generic ``LD``/``ST`` (addresses not
  known to be global) and local ``LDL``/``STL`` are counted apart.
- The steady-state loop: the kernel's grid-stride loop over (row) tiles, found in the SASS as the
  backward branch (a ``BRA`` to a lower address) whose span is the widest of those holding no
  barrier (the shared tiles' loop holds ``BAR.SYNC``: ``shared_loop``); its body is every
  instruction from the branch target to the branch (``NOP`` not counted).  Each pass handles one
  tile, ``ept`` elements per thread, so ``body / ept`` is the static count per element over
  every path of the body (scalar, strided and vector paths alike).  Branches are ``BRANCHES``
  (``BRA`` and kin); a ``BSSY`` (convergence barrier set-up) names a label but is no branch, so
  the paths below run the blocks between it and its ``BSYNC``.  ``prologue`` / ``epilogue``
  (``entry_exit``): the fewest instructions from the kernel's entry to the loop and from the
  loop's exit to ``EXIT``; a launch gives each thread one tile, so the path figures below add
  them once per pass (``tile_path``).  ``vector path / ept``: the
  path through the body (forward edges only: an inner loop, such as the general kernels' loop
  over dims, is entered at most once) that makes the most global accesses of the body's widest
  width (for "sum 4x f32": exactly 5 per 4 elements a thread, 4 loads and the store), and of those
  the shortest: what a
  thread runs on a full, aligned tile of contiguous operands, as a lower bound (a branch the
  path can skip is not counted; predicated instructions, such as the variadic fold, are).
- ``rank-6 strided instr/elem`` (general kernels): ``strided_path`` -- the path through the body
  that accesses every operand element by element (the most global accesses; "sum 4x f32": 4
  inputs and the output, 5 per element a thread), entering the offset calculation's loop over dims
  (the innermost loops inside the body holding one division), whose blocks count ``rank - 1`` = 5
  times, / ept: an estimate of what a thread runs at coalesced rank 6 with every operand strided
  and tiles within one innermost row.  Where the offset calculation is unrolled
  (kernels/offsets.cuh UNROLLED_LOCATE: the 32-bit path) there is no such loop, and the path
  takes the fewest dims: a lower bound.  Both path columns are marked ``(walk)``.
- ``(run)`` columns (sm_90): ``executed`` -- the same two layouts run, not walked: the kernel's SASS
  interpreted (``interpreter``) for every thread of a launch's middle block, on the argument
  ``launch`` packs for a (16, 4096) output of vector rows ("vector") and a rank-6 output of every
  operand strided ("strided"); "-" on sm_80 (the interpreter is checked on sm_90's SASS only) and
  where it does not run the kernel (an opcode or operand it does not know: the 64-bit path,
  half-precision arithmetic).
- Nothing here is measured on hardware: every number is static, from the compiler's report and
  the SASS.
"""

from __future__ import annotations

import dataclasses
import functools
import math
import re
from dataclasses import dataclass

import numpy as np

from .. import dispatch
from .. import ops as _ops
from ..cuda import catalog, launch
from ..cuda.sources import FAMILIES
from ..plan import c_strides
from . import cubins, interpreter

REGS_PER_SM = 65536
THREADS_PER_SM = 2048
MAX_BLOCKS_PER_SM = 32
REG_UNIT = 256                                   # registers allocated per warp in units of 256
SMEM_PER_SM = {"sm_80": 164 * 1024, "sm_90": 228 * 1024}
SMEM_RESERVED_PER_BLOCK = 1024


@dataclass(frozen=True)
class Hot:
    """One hot instantiation: a readable label and the catalog's name expression."""
    label: str
    family: str
    name: str
    ept: int
    float32: bool          # a float32 binary / where / copy kernel (the occupancy threshold applies)
    contiguous: bool
    accesses: int | None = None   # operands the vector path accesses, 4-byte elements (None: the most possible)
    op: str = ""                  # the op, its loop dtypes and output dtype (``executed``; fused: none)
    dtypes: tuple = ()
    out: str = ""
    inputs: int = 0


def _kernels(op, dtypes, out):
    return catalog.kernels_for(_ops.get(op), tuple(np.dtype(t) for t in dtypes), np.dtype(out))


#: (label, op, loop dtypes, output dtype, float32 kernel of binary/where/copy, vector-path accesses)
HOT_SETS = (
    ("add f32", "add", ("f4", "f4"), "f4", True, None),
    ("where f32", "where", ("?", "f4", "f4"), "f4", True, None),
    ("copy 4 B", "copy", ("f4",), "f4", True, None),
    ("copy 16 B", "copy", ("c16",), "c16", False, None),
    ("sum 4x f32", "sum", ("f4",), "f4", False, 5),      # operands accessed: 4 inputs (of 8 possible), the output
    ("add f16", "add", ("f2", "f2"), "f2", False, None),
    ("add f64", "add", ("f8", "f8"), "f8", False, None),
    ("add c128", "add", ("c16", "c16"), "c16", False, None),
    ("where f64", "where", ("?", "f8", "f8"), "f8", False, None),
    ("copy 8 B", "copy", ("f8",), "f8", False, None),
    ("sum 4x f64", "sum", ("f8",), "f8", False, None),
)


@functools.lru_cache(maxsize=1)
def hot() -> tuple[Hot, ...]:
    """Every hot instantiation: each set's contiguous kernel and general kernels (32/64-bit), then
    the contiguous and 32-bit general kernels generated for the benchmark's fused chains (float32)."""
    found = []
    for label, op, dtypes, out, f32, accesses in HOT_SETS:
        k = _kernels(op, dtypes, out)
        inputs = 4 if k.family == "variadic" else len(dtypes)      # "sum 4x"
        for bits, kind in ((None, "contig"), (32, "general32"), (64, "general64")):
            found.append(Hot(f"{label} {kind}", k.family, k.name(bits), k.ept(bits), f32, bits is None, accesses,
                             op, dtypes, out, inputs))
    return tuple(found) + _fused_hot()


def _fused_hot() -> tuple[Hot, ...]:
    import gpubcast as gb
    from ..bench import fused as chains
    from ..cuda import fused
    found = []
    for chain in chains.CHAINS:
        [program] = gb.fuse(chain.make(gb))._trace([np.ones(s, np.float32) for s in chain.tiny]).programs
        k = fused.kernel(program, np.dtype(np.float32))
        for bits, kind in ((None, "contig"), (32, "general32")):
            found.append(Hot(f"fused {chain.name} f32 {kind}", k.family, k.name(bits), k.ept(bits), True,
                             bits is None))
    return tuple(found)


# ---- parsing --------------------------------------------------------------------------------------

def ptxas_report(log: str) -> dict[str, dict]:
    """symbol -> {registers, smem, stack, spill_stores, spill_loads} from ptxas's ``-v`` report."""
    found: dict[str, dict] = {}
    current = None
    for line in log.splitlines():
        m = re.search(r"Function properties for (\S+)", line)
        if m:
            current = found.setdefault(m.group(1), {})
            continue
        if current is None:
            continue
        m = re.search(r"(\d+) bytes stack frame, (\d+) bytes spill stores, (\d+) bytes spill loads", line)
        if m:
            current.update(stack=int(m.group(1)), spill_stores=int(m.group(2)), spill_loads=int(m.group(3)))
        m = re.search(r"Used (\d+) registers", line)
        if m:
            current["registers"] = int(m.group(1))
            m = re.search(r"(\d+) bytes smem", line)
            current["smem"] = int(m.group(1)) if m else 0
    return found


def res_usage(text: str) -> dict[str, dict]:
    """symbol -> {REG, STACK, SHARED, LOCAL, ...} from ``cuobjdump -res-usage``."""
    found, current = {}, None
    for line in text.splitlines():
        m = re.match(r"\s*Function (\S+):\s*$", line)
        if m:
            current = m.group(1)
            continue
        if current and "REG:" in line:
            found[current] = {k: int(v) for k, v in re.findall(r"(\w+(?:\[\d+\])?):(\d+)", line)}
            current = None
    return found


@dataclass(frozen=True)
class Instr:
    addr: int
    opcode: str          # e.g. "LDG.E.128"
    text: str
    target: str | None   # branch target label (BRANCHES only)


#: opcodes that transfer control to their label.  ``BSSY B, label`` (a convergence barrier's
#: set-up) also names a label -- where ``BSYNC`` reconverges -- but control goes on to the next
#: instruction: it is not a branch, and its label is no edge of the control-flow graph.
BRANCHES = ("BRA", "BRX", "JMP", "JMX", "CALL")

_INSTR = re.compile(r"^\s*/\*([0-9a-f]+)\*/\s+(?:\{\s*)?(@!?U?P\w+\s+)?([A-Z][A-Z0-9_.]*)(.*?)\s*;")
_LABEL = re.compile(r"^(\.L_x_\d+):")


def sass_functions(text: str) -> dict[str, tuple[list[Instr], dict[str, int], list[int]]]:
    """symbol -> (instructions, label -> address, addresses that are predicated) from ``nvdisasm -c``."""
    funcs: dict = {}
    instrs = labels = predicated = None
    pending: list[str] = []
    for line in text.splitlines():
        m = re.match(r"^\.text\.(\S+):\s*$", line)
        if m:
            instrs, labels, predicated, pending = [], {}, [], []
            funcs[m.group(1)] = (instrs, labels, predicated)
            continue
        if instrs is None:
            continue
        m = _LABEL.match(line)
        if m:
            pending.append(m.group(1))
            continue
        m = _INSTR.match(line)
        if m:
            addr = int(m.group(1), 16)
            for name in pending:
                labels[name] = addr
            pending = []
            t = re.search(r"`\((\.L_x_\d+)\)", m.group(4))
            branch = m.group(3).split(".")[0] in BRANCHES      # BSSY names a label too: no edge
            instrs.append(Instr(addr, m.group(3), m.group(0).strip(), t.group(1) if t and branch else None))
            if (m.group(2) and m.group(2).strip() != "@PT") or re.match(r"\s*!?U?P\d", m.group(4)):
                predicated.append(addr)
    return funcs


def _width(opcode: str) -> int:
    parts = opcode.split(".")[1:]
    for p, w in (("128", 128), ("64", 64), ("U16", 16), ("S16", 16), ("U8", 8), ("S8", 8)):
        if p in parts:
            return w
    return 32


@dataclass(frozen=True)
class Loop:
    start: int
    end: int
    body: int             # instructions in the body (NOP excluded)
    vector_path: int | None
    prologue: int = 0     # instructions run before the loop is entered (``entry_exit``)
    epilogue: int = 0     # instructions run after it is left, to EXIT

    @property
    def once(self) -> int:
        """Instructions a thread runs once per launch around the loop: a launch gives each thread one
        tile (``launch`` grids ceil(size / (BLOCK * ept)) blocks), so they count per tile."""
        return self.prologue + self.epilogue


def _blocks(instrs, labels, predicated):
    """Basic blocks as (first index, last index) and their successors (block indices)."""
    addr_of = {i.addr: k for k, i in enumerate(instrs)}
    leaders = {0}
    for k, i in enumerate(instrs):
        if i.target is not None or i.opcode in ("EXIT", "RET", "BRX", "JMX"):
            leaders.add(k + 1)
        if i.target is not None and i.target in labels:
            leaders.add(addr_of[labels[i.target]])
    leaders = sorted(x for x in leaders if x < len(instrs))
    spans = [(s, (leaders[n + 1] if n + 1 < len(leaders) else len(instrs)) - 1) for n, s in enumerate(leaders)]
    block_of = {s: n for n, (s, _) in enumerate(spans)}
    succ = []
    pset = set(predicated)
    for n, (_, e) in enumerate(spans):
        last = instrs[e]
        out = []
        if last.target is not None and last.target in labels:
            out.append(block_of[addr_of[labels[last.target]]])
        ends = last.opcode in ("EXIT", "RET", "BRX", "JMX") or (last.target is not None and last.opcode == "BRA")
        if (not ends or last.addr in pset) and n + 1 < len(spans):
            out.append(n + 1)
        succ.append(out)
    return spans, succ


def _cheapest(spans, succ, instrs, first: int, done, allowed) -> int | None:
    """Fewest instructions (NOP excluded) over forward edges from block ``first`` (counted) to a block
    for which ``done(n)`` holds (that block counted too), through blocks ``allowed(n)``; None when
    there is no such path."""
    def size(n):
        return sum(1 for k in range(spans[n][0], spans[n][1] + 1) if instrs[k].opcode != "NOP")
    cost = {first: size(first)}
    found = None
    for n in range(first, len(spans)):
        if n not in cost:
            continue
        if done(n):
            found = cost[n] if found is None else min(found, cost[n])
            continue
        for m in succ[n]:
            if m > n and allowed(m) and cost[n] + size(m) < cost.get(m, math.inf):
                cost[m] = cost[n] + size(m)
    return found


def entry_exit(instrs, labels, predicated, start: int, end: int) -> tuple[int, int]:
    """(prologue, epilogue) of the loop [start, end]: the fewest instructions a thread runs from the
    kernel's entry to the loop's first instruction (forward edges, blocks before the loop), and from
    the instruction after the loop's branch back to an ``EXIT`` (forward edges).  Convergence
    barriers (``BSSY``/``BSYNC``) and a predicated ``EXIT`` (not taken) count as the instructions
    they are.  0 where there is no such path."""
    spans, succ = _blocks(instrs, labels, predicated)
    addr = [instrs[s].addr for s, _ in spans]
    head = next((n for n, a in enumerate(addr) if a == start), None)
    latch = next((n for n, (s, e) in enumerate(spans) if instrs[s].addr <= end <= instrs[e].addr), None)
    pro = epi = 0
    if head:
        pro = _cheapest(spans, succ, instrs, 0, lambda n: head in succ[n] or n + 1 == head,
                        lambda n: n < head) or 0
    if latch is not None and latch + 1 < len(spans) and latch + 1 in succ[latch]:
        exits = {n for n, (_, e) in enumerate(spans) if instrs[e].opcode == "EXIT" and instrs[e].addr not in
                 set(predicated)}
        epi = _cheapest(spans, succ, instrs, latch + 1, lambda n: n in exits, lambda n: True) or 0
    return pro, epi


def _back_edges(instrs, labels, barrier: bool) -> list[tuple[int, int]]:
    """Backward branches as (target, branch) address, those whose span holds a barrier (``BAR``:
    the shared tiles' loop) or those whose span holds none."""
    bars = [i.addr for i in instrs if i.opcode.split(".")[0] == "BAR"]
    back = [(labels[i.target], i.addr) for i in instrs
            if i.target is not None and i.target in labels and labels[i.target] < i.addr]
    return [(a, b) for a, b in back if any(a <= x <= b for x in bars) == barrier]


def steady_loop(instrs, labels, predicated, accesses: int | None = None) -> Loop | None:
    """The widest backward branch's loop that holds no barrier (see the module docstring: the row
    tiles' loop), or None without one.  ``accesses``: how many of the widest global accesses the
    vector path makes (None: the most any path through the body makes)."""
    back = _back_edges(instrs, labels, False)
    if not back:
        return None
    start, end = max(back, key=lambda b: b[1] - b[0])
    body = [i for i in instrs if start <= i.addr <= end and i.opcode != "NOP"]
    spans, succ = _blocks(instrs, labels, predicated)
    inside = [n for n, (s, e) in enumerate(spans) if start <= instrs[s].addr <= end]
    mem = [i for i in body if i.opcode.split(".")[0] in ("LDG", "STG")]
    if not mem:
        return Loop(start, end, len(body), None, *entry_exit(instrs, labels, predicated, start, end))
    wide = max(_width(i.opcode) for i in mem)

    def weight(n):
        run = [instrs[k] for k in range(spans[n][0], spans[n][1] + 1) if instrs[k].opcode != "NOP"]
        return len(run), sum(1 for i in run if i.opcode.split(".")[0] in ("LDG", "STG") and _width(i.opcode) == wide)

    # longest-in-accesses, then shortest-in-instructions paths over forward edges (address order)
    best: dict = {inside[0]: {weight(inside[0])[1]: weight(inside[0])[0]}}
    for n in inside:
        for m in succ[n]:
            if n < m <= inside[-1] and n in best:
                cost, acc = weight(m)
                states = best.setdefault(m, {})
                for a, c in best[n].items():
                    if c + cost < states.get(a + acc, math.inf):
                        states[a + acc] = c + cost
    at_latch = best.get(inside[-1], {})
    want = max(at_latch, default=None) if accesses is None else accesses
    return Loop(start, end, len(body), at_latch.get(want), *entry_exit(instrs, labels, predicated, start, end))


def tile_loops(instrs, labels) -> list[tuple[int, int]]:
    """(first, last) address of every row-tile loop of a kernel, the shortest first: the backward
    branches holding no barrier that lie inside no other loop.  One in most kernels; the variadic
    general kernel has two, one per variant (kernels/variadic.cu FEW_VARIADIC: the shorter one,
    for launches of few inputs, locates fewer argument slots)."""
    back = _back_edges(instrs, labels, False)
    every = _back_edges(instrs, labels, True) + back
    top = [(a, b) for a, b in back if not any(c <= a and b <= d and (c, d) != (a, b) for c, d in every)]
    return sorted(top, key=lambda x: x[1] - x[0])


def shared_loop(instrs, labels) -> tuple[int, int] | None:
    """(first, last) address of a general kernel's shared-tile loop (kernels/launch.cuh
    SHARED_TILES): the widest backward branch whose span holds a barrier (``BAR.SYNC``), or None
    without one (tests/tooling/test_kernels_model.py checks which loop is which)."""
    back = _back_edges(instrs, labels, True)
    return max(back, key=lambda b: b[1] - b[0]) if back else None


#: the coalesced rank of the strided-path estimate (``strided_path``)
STRIDED_RANK = 6


def _loops_inside(instrs, labels, start: int, end: int) -> list[tuple[int, int]]:
    """Every loop strictly inside the steady loop [start, end], as (first, last) address."""
    return [(labels[i.target], i.addr) for i in instrs
            if i.target is not None and i.target in labels and start < labels[i.target] < i.addr < end]


def _multiply_highs(instrs, a: int, b: int) -> int:
    return sum(1 for i in instrs if a <= i.addr <= b and ".HI" in i.opcode
               and i.opcode.split(".")[0] in ("IMAD", "IMUL"))


def _inner_loops(instrs, labels, start: int, end: int) -> list[tuple[int, int]]:
    """The loops over dims strictly inside the steady loop [start, end]: backward branches that hold
    no other backward branch and one division (a multiply-high: the general kernels' offset loops
    over dims), as (first, last) address.  A loop holding several is a row loop of unrolled offset
    calculations (kernels/offsets.cuh UNROLLED_LOCATE: a tile crossing rows, located row by row)."""
    loops = _loops_inside(instrs, labels, start, end)
    return [(a, b) for a, b in loops if not any(a <= c and d <= b and (c, d) != (a, b) for c, d in loops)
            and _multiply_highs(instrs, a, b) <= 2]


def strided_path(instrs, labels, predicated, start: int, end: int, rank: int = STRIDED_RANK,
                 accesses: int | None = None) -> int | None:
    """Instructions a thread runs per pass of the steady loop [start, end] when every operand is
    accessed element by element (all strided) at coalesced rank ``rank``: the path through the
    body over forward edges that makes the most global accesses of any width (``accesses``: exactly
    that many), and of those the one through the most blocks of innermost inner loops (the
    offset calculation's loop over dims, entered rather than skipped), then the shortest; each
    block of an innermost inner loop counted ``rank - 1`` times (its passes at that rank: one per
    dim but the outermost; a loop's exit test, run once more, is not added).  An estimate from
    the SASS, not a measurement."""
    at_latch = _path_states(instrs, labels, predicated, start, end, rank, None)
    want = max(at_latch, default=None) if accesses is None else (accesses,)
    return at_latch[want][1] if want in at_latch else None


def _path_states(instrs, labels, predicated, start, end, rank, widths, avoid_rows=True) -> dict:
    """Paths through the body of the steady loop [start, end] over forward edges, at its latch:
    accesses -> (-(blocks of innermost inner loops entered), instructions), the best per accesses
    (most inner-loop blocks, then fewest instructions; those blocks count ``rank - 1`` times).
    accesses: a tuple of global access counts, one per width of ``widths`` (None: one total)."""
    spans, succ = _blocks(instrs, labels, predicated)
    inside = [n for n, (s, e) in enumerate(spans) if start <= instrs[s].addr <= end]
    if not inside:
        return {}
    loops = _inner_loops(instrs, labels, start, end)
    # the other loops inside the body (a tile crossing innermost rows, row by row: they hold a loop
    # over dims, or unrolled offset calculations): left out when a path can avoid them (a tile
    # within one row); in older kernels every offset loop lay inside such a loop
    rows = [(a, b) for a, b in _loops_inside(instrs, labels, start, end) if (a, b) not in loops]
    if rows and avoid_rows:
        inside = [n for n in inside if not any(a <= instrs[spans[n][0]].addr <= b for a, b in rows)]
        if not inside or inside[0] != min(n for n, (s, e) in enumerate(spans) if start <= instrs[s].addr <= end):
            return {}

    def weight(n):
        run = [instrs[k] for k in range(spans[n][0], spans[n][1] + 1) if instrs[k].opcode != "NOP"]
        looped = any(a <= instrs[spans[n][0]].addr <= b for a, b in loops)
        acc = [0] * (len(widths) if widths else 1)
        for i in run:
            if i.opcode.split(".")[0] in ("LDG", "STG"):
                acc[widths.index(_width(i.opcode)) if widths else 0] += 1
        return len(run) * ((rank - 1) if looped else 1), tuple(acc), int(looped)

    c0, a0, l0 = weight(inside[0])
    best: dict = {inside[0]: {a0: (-l0, c0)}}
    for n in inside:
        for m in succ[n]:
            if n < m <= inside[-1] and n in best:
                cost, acc, looped = weight(m)
                states = best.setdefault(m, {})
                for a, (nl, c) in best[n].items():
                    total = tuple(x + y for x, y in zip(a, acc))
                    cand = (nl - looped, c + cost)
                    if cand < states.get(total, (math.inf, math.inf)):
                        states[total] = cand
    found = best.get(inside[-1], {})
    if not found and rows and avoid_rows:
        return _path_states(instrs, labels, predicated, start, end, rank, widths, False)
    return found


def access_path(instrs, labels, predicated, start: int, end: int, rank: int, accesses: dict) -> int | None:
    """Instructions a thread runs per pass of the steady loop [start, end] on the path through
    the body (forward edges) that makes exactly ``accesses`` global accesses ({width in bits:
    count}, e.g. {128: 2, 32: 4}: two vector accesses, four 32-bit element accesses), through
    the most blocks of innermost inner loops (the offset loops over dims) when ``rank`` > 1,
    then the shortest; each block of an innermost inner loop counts ``rank - 1`` times, as in
    ``strided_path``.  A predicated access the path passes over counts too (the vector store
    shares its block with the branch back: an element-wise path passes it), so where no path
    makes exactly those accesses, the path making at least as many of each width with the
    fewest extra is taken; None when there is none.  An estimate from the SASS (what
    ``gpubcast.sass.model`` charges a benchmark pattern), not a measurement."""
    widths = sorted(set(accesses) | {_width(i.opcode) for i in instrs
                                     if i.opcode.split(".")[0] in ("LDG", "STG")})
    want = tuple(accesses.get(w, 0) for w in widths)
    ends = [(sum(a) - sum(want), nl, c)
            for a, (nl, c) in _path_states(instrs, labels, predicated, start, end, rank, widths).items()
            if all(x >= w for x, w in zip(a, want))]
    return min(ends)[2] if ends else None


def tile_path(instrs, labels, predicated, start: int, end: int, rank: int, accesses: dict) -> int | None:
    """Instructions a thread runs for one tile: ``access_path`` through one pass of the loop
    [start, end] plus the loop's prologue and epilogue (``entry_exit``), which a thread runs once
    per launch -- and a launch gives each thread one tile.  None where ``access_path`` is."""
    path = access_path(instrs, labels, predicated, start, end, rank, accesses)
    return None if path is None else path + sum(entry_exit(instrs, labels, predicated, start, end))


def sass_of(k: Hot, arch: str):
    """(instructions, labels, predicated addresses) of hot kernel ``k``'s SASS on ``arch``."""
    _, symbol, _, _, sass = cubins.listings(k.family, k.name, arch)
    return sass_functions(sass)[symbol]


# ---- the report -----------------------------------------------------------------------------------

@dataclass(frozen=True)
class Resources:
    kernel: Hot
    arch: str
    symbol: str
    registers: int
    spill_stores: int
    spill_loads: int
    stack: int
    local: int
    shared: int
    blocks_per_sm: int
    occupancy: float
    loads: dict            # width in bits -> count of LDG
    stores: dict           # width -> count of STG
    generic: int           # LD / ST (generic addressing) instructions
    local_ops: int         # LDL / STL instructions
    loop: Loop | None
    strided: int | None = None   # general kernels: strided_path at STRIDED_RANK (instructions per pass)

    @property
    def per_element(self) -> float | None:
        return self.loop.body / self.kernel.ept if self.loop else None

    @property
    def strided_per_element(self) -> float | None:
        """The rank-6 strided path per element, with the loop's prologue and epilogue (once per tile)."""
        return (self.strided + self.loop.once) / self.kernel.ept if self.strided else None

    @property
    def vector_per_element(self) -> float | None:
        """The vector path per element, with the loop's prologue and epilogue (once per tile)."""
        if not (self.loop and self.loop.vector_path):
            return None
        return (self.loop.vector_path + self.loop.once) / self.kernel.ept


def occupancy(registers: int, shared: int, arch: str, block: int = launch.BLOCK) -> tuple[int, float]:
    """(resident blocks per SM, occupancy) by the formula of the module docstring."""
    regs_per_warp = math.ceil(registers * 32 / REG_UNIT) * REG_UNIT
    limits = [MAX_BLOCKS_PER_SM, THREADS_PER_SM // block]
    if regs_per_warp:
        limits.append(REGS_PER_SM // (regs_per_warp * (block // 32)))
    if shared:
        limits.append(SMEM_PER_SM.get(arch, SMEM_PER_SM["sm_90"]) // (shared + SMEM_RESERVED_PER_BLOCK))
    blocks = min(limits)
    return blocks, blocks * block / THREADS_PER_SM


@functools.cache
def measure(k: Hot, arch: str) -> Resources:
    """The static resources of hot kernel ``k`` on ``arch`` (an ``sm_XX``)."""
    _, symbol, log, usage_text, sass = cubins.listings(k.family, k.name, arch)
    usage = res_usage(usage_text)[symbol]
    report = ptxas_report(log).get(symbol, {})
    if report.get("registers", usage["REG"]) != usage["REG"]:
        raise RuntimeError(f"{k.name} on {arch}: ptxas reports {report['registers']} registers, "
                           f"cuobjdump {usage['REG']}")
    instrs, labels, predicated = sass_functions(sass)[symbol]
    loads: dict = {}
    stores: dict = {}
    for i in instrs:
        op = i.opcode.split(".")[0]
        if op in ("LDG", "STG"):
            side = loads if op == "LDG" else stores
            side[_width(i.opcode)] = side.get(_width(i.opcode), 0) + 1
    shared = report.get("smem", usage.get("SHARED", 0))     # sm_90's cuobjdump adds the reserved 1 KiB
    blocks, occ = occupancy(usage["REG"], shared, arch)
    # 16-byte accesses of 4-byte elements: one an operand per 4 elements a thread
    loop = steady_loop(instrs, labels, predicated, k.accesses * max(1, k.ept // 4) if k.accesses else None)
    strided = None
    if loop is not None and not k.contiguous:
        strided = strided_path(instrs, labels, predicated, loop.start, loop.end, STRIDED_RANK,
                               k.accesses * k.ept if k.accesses else None)
    return Resources(
        k, arch, symbol, usage["REG"], report.get("spill_stores", 0), report.get("spill_loads", 0),
        usage.get("STACK", 0), usage.get("LOCAL", 0), shared, blocks, occ, loads, stores,
        sum(1 for i in instrs if i.opcode.split(".")[0] in ("LD", "ST")),
        sum(1 for i in instrs if i.opcode.split(".")[0] in ("LDL", "STL")),
        loop, strided)


def report(arches=("sm_80", "sm_90"), kernels=None, jobs: int = 2) -> list[Resources]:
    """``measure`` of every kernel (default: ``hot()``) on every arch, ``jobs`` at a time."""
    import concurrent.futures
    tasks = [(k, arch) for arch in arches for k in (kernels or hot())]
    with concurrent.futures.ThreadPoolExecutor(max(1, jobs)) as pool:
        return list(pool.map(lambda t: measure(*t), tasks))


def _widths(d: dict) -> str:
    return " ".join(f"{w}x{d[w]}" for w in sorted(d, reverse=True)) or "-"


def table(rows: list[Resources]) -> str:
    """The report as a Markdown table (one row per kernel and architecture)."""
    out = ["| arch | kernel | regs | spill st/ld B | stack/local B | shared B | blocks/SM | occupancy | LDG bits x n "
           "| STG bits x n | LD/ST generic | loop instr | ept | instr/elem | vector path instr/elem (walk) "
           f"| rank-{STRIDED_RANK} strided instr/elem (walk) | vector instr/elem (run) "
           f"| rank-{STRIDED_RANK} strided instr/elem (run) |",
           "|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
    for r in rows:
        loop = r.loop
        run = [executed_or_none(r.kernel, r.arch, layout) for layout in LAYOUTS]
        out.append(
            f"| {r.arch} | {r.kernel.label} | {r.registers} | {r.spill_stores}/{r.spill_loads} "
            f"| {r.stack}/{r.local} | {r.shared} | {r.blocks_per_sm} | {r.occupancy:.1%} | {_widths(r.loads)} "
            f"| {_widths(r.stores)} | {r.generic} | {loop.body if loop else '-'} | {r.kernel.ept} "
            f"| {f'{r.per_element:.1f}' if loop else '-'} "
            f"| {f'{r.vector_per_element:.1f}' if r.vector_per_element else '-'} "
            f"| {f'{r.strided_per_element:.1f}' if r.strided_per_element else '-'} "
            + "".join(f"| {f'{x:.1f}' if x else '-'} " for x in run) + "|")
    return "\n".join(out)


# ---- executed counts --------------------------------------------------------------------------------

#: the layouts ``executed`` runs a hot kernel on, by output shape: "vector", input 1 contiguous and
#: the others rows (K,) of a (16, K) output (a general kernel's vector loads and stores; the
#: contiguous kernel: every input contiguous); "strided", every operand (the output too) strided at
#: rank 6, innermost stride 2 (each a view of a larger array: no dim coalesces) -- the estimate of
#: issue 12, run.
LAYOUTS = {"vector": (16, 4096), "strided": (2, 3, 2, 3, 2, 64)}


class Array:
    """What the planner reads of an array: shape, byte strides, itemsize (no memory); ``nbytes``, the
    span of memory its elements lie in (``model`` plans the benchmark patterns with it too)."""

    def __init__(self, shape, strides, itemsize):
        self.shape, self.strides, self.itemsize = tuple(shape), tuple(strides), itemsize
        self.nbytes = sum((n - 1) * abs(s) for n, s in zip(self.shape, self.strides)) + itemsize


def _layout_array(shape, dt, strided: bool) -> Array:
    """A C-ordered array of ``shape``, or (``strided``) a view [..., ::2] of one larger in every outer dim."""
    big = tuple(n + 1 for n in shape[:-1]) + (2 * shape[-1],) if strided else shape
    strides = tuple(s * dt.itemsize for s in c_strides(big))
    return Array(shape, strides[:-1] + (2 * dt.itemsize,) if strided else strides, dt.itemsize)


@functools.cache
def executed(k: Hot, arch: str, layout: str) -> float | None:
    """Instructions per element hot kernel ``k``'s SASS on ``arch`` executes on ``layout``
    (``LAYOUTS``): every thread of the launch's middle block (its tiles full) run by
    ``interpreter`` on the launch's own argument, instructions run / ept, averaged (as
    ``model.executed``).  None for a kernel the layout does not launch (fused kernels; the
    contiguous kernels on "strided") and on other architectures than sm_90."""
    if not k.op or (k.contiguous and layout == "strided") or arch != "sm_90":
        return None                  # (the interpreter is checked against NumPy on sm_90's SASS only)
    shape = LAYOUTS[layout]
    dts = [np.dtype(t) for t in k.dtypes] * (k.inputs if len(k.dtypes) == 1 else 1)
    out_dt = np.dtype(k.out)
    strided = layout == "strided"
    if strided:
        ins = [_layout_array(shape, dt, True) for dt in dts]
    elif k.contiguous:
        ins = [_layout_array(shape, dt, False) for dt in dts]
    else:                            # input 1 contiguous, the others rows (a copy: its one input a row)
        ins = [_layout_array(shape if i == 0 and len(dts) > 1 else shape[-1:], dt, False)
               for i, dt in enumerate(dts)]
    out = _layout_array(shape, out_dt, strided)
    target = shape if k.op == "copy" else None
    p = dispatch.plan_for(ins, "numpy", 0, None, out if strided else None, 0, target)
    if k.name.endswith(catalog.INDEX_TYPES[64] + ">"):
        p = dataclasses.replace(p, index_bits=64)
    templates = launch.templates_for(k.op, p, tuple(dts), out_dt, (False,) * len(dts))
    if len(templates) != 1 or templates[0].name != k.name:
        return None
    (t,) = templates
    memory = interpreter.Memory()
    ptrs = [memory.add(np.zeros(a.nbytes, np.uint8)) for a in (out, *ins)]
    operands = [launch.Operand(dt, ptr) for dt, ptr in zip((out_dt, *dts), ptrs)]
    m = interpreter.machine(t.family, t.name, launch.pack(t, operands, FAMILIES[t.family].nin), t.grid, memory, arch)
    threads = interpreter.run_blocks(m, [t.grid // 2])
    return sum(x.executed for x in threads) / len(threads) / t.ept


def executed_or_none(k: Hot, arch: str, layout: str) -> float | None:
    """``executed``, or None where the interpreter does not run the kernel (an opcode or operand it
    does not know: the 64-bit path, half-precision arithmetic)."""
    try:
        return executed(k, arch, layout)
    except NotImplementedError:
        return None
