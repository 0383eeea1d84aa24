"""A small SASS interpreter: runs a kernel's sm_90 SASS (as ``nvdisasm -c`` prints it) for chosen
threads on the CPU, over kernel parameters and memory given here, and counts the instructions each
thread executes.  No GPU: the count is what the SASS makes one thread run, found by running it.

Contract:

- Why: ``resources``' path walk *estimates* the instructions a thread runs from the SASS's control
  flow graph (which path it takes, how often the dims loop runs); this module *executes* the SASS,
  every branch decided by the values the thread computes from its launch's real parameters
  (``launch.pack``), so its count is an independent check of the walk (``model.executed``).
- What it runs: one thread at a time (``run_thread``), or every thread of some blocks
  (``run_blocks``: threads in turn, each up to its next ``BAR.SYNC`` or ``EXIT``, so shared memory
  and barriers work).  Integer, predicate, uniform-datapath, constant-bank, global and shared memory
  instructions are executed exactly as far as the kernels here use them; float32/float64 adds and
  multiplies with NumPy's rounding (data only: no branch of these kernels depends on them).  An
  opcode or operand form it does not know raises ``NotImplementedError`` when reached (decoding is
  lazy: unreached code never needs to be known).
- Warps: a thread runs alone; ``BSSY``/``BSYNC`` (convergence barriers) and ``NOP`` run as no-ops but
  count as instructions issued (``NOP`` is counted apart).  For threads of one warp on the same path
  (full tiles), a thread's count is the warp's issued count.
- Trust: ``tests/tooling/test_sass_interpreter.py`` runs the benchmark patterns' kernels at small shapes over whole
  blocks and compares every output element with NumPy: a wrong branch, address or predicate shows
  up as a wrong or missing element.
- Constant bank 0 (sm_90): blockDim at 0x0, gridDim at 0xc, kernel parameters from ``PARAM_BASE``.
"""

from __future__ import annotations

import bisect
import re
import struct
from dataclasses import dataclass, field

import numpy as np

from ..backends.reference import HostArrays
from ..cuda import launch
from ..testing import emulate
from . import cubins

M32 = 0xFFFFFFFF
PARAM_BASE = {"sm_90": 0x210, "sm_80": 0x160}
RZ, URZ, PT = 255, 63, 7


# ---- memory -----------------------------------------------------------------------------------

class Memory:
    """Global memory: NumPy byte buffers at chosen addresses; an access outside them raises."""

    def __init__(self):
        self.bases: list[int] = []
        self.bufs: list[np.ndarray] = []
        self.next = 0x7F0000000000

    def add(self, array: np.ndarray) -> int:
        """Place ``array``'s bytes (C-contiguous, shared, not copied) at a fresh 4 KiB-aligned address."""
        buf = np.ascontiguousarray(array).reshape(-1).view(np.uint8)
        base = self.next
        self.next += (buf.size + 0xFFFFF) // 0x1000 * 0x1000 + 0x100000
        i = bisect.bisect(self.bases, base)
        self.bases.insert(i, base)
        self.bufs.insert(i, buf)
        return base

    def _at(self, addr: int, n: int):
        i = bisect.bisect(self.bases, addr) - 1
        if i < 0 or addr + n > self.bases[i] + self.bufs[i].size:
            raise IndexError(f"global access of {n} bytes at {addr:#x} outside every buffer")
        if addr % n:
            raise IndexError(f"misaligned global access of {n} bytes at {addr:#x}")
        return self.bufs[i], addr - self.bases[i]

    def read(self, addr: int, n: int) -> bytes:
        buf, off = self._at(addr, n)
        return buf[off:off + n].tobytes()

    def write(self, addr: int, data: bytes):
        buf, off = self._at(addr, len(data))
        buf[off:off + len(data)] = np.frombuffer(data, np.uint8)


# ---- decoding -----------------------------------------------------------------------------------

_LINE = re.compile(r"^\s*/\*([0-9a-f]+)\*/\s+(?:\{\s*)?(?:@(!?)(U?P(?:T|\d))\s+)?([A-Z][A-Z0-9_.]*)\s*(.*?)\s*;")


@dataclass
class Op:
    """A decoded operand.  kind: r (register), ur, p, up, imm, fimm, c (constant bank), mem, sr, b, label."""
    kind: str
    idx: int = 0
    neg: bool = False
    inv: bool = False       # ~R / !P
    absv: bool = False
    text: str = ""
    reg: Op | None = None   # c[][R+x] / [R+x]: the index register
    off: int = 0
    wide: bool = False      # [R.64]
    off_reg: Op | None = None   # [R+UR]: a register offset


def _int(s: str) -> int:
    return int(s, 16) if s.lower().startswith(("0x", "-0x")) else int(s)


def _operand(s: str) -> Op:
    s = s.strip().replace(".reuse", "")
    if s.startswith("`("):
        return Op("label", text=s[2:-1])
    m = re.fullmatch(r"c\[(0x[0-9a-f]+)\]\[(.+)\]", s)
    if m:
        inner = m.group(2)
        if "+" in inner or inner[:1] in "RU":
            reg, _, off = inner.partition("+")
            return Op("c", reg=_operand(reg), off=_int(off) if off else 0)
        return Op("c", off=_int(inner))
    m = re.fullmatch(r"(?:desc\[\w+\])?\[(.+)\]", s)
    if m:
        inner = m.group(1)
        reg, _, off = inner.partition("+")
        if reg.startswith("0x") or reg.startswith("-"):
            return Op("mem", reg=Op("r", RZ), off=_int(reg))
        wide = reg.endswith(".64")
        if off[:1] in ("R", "U"):
            return Op("mem", reg=_operand(reg.replace(".64", "")), wide=wide, off_reg=_operand(off))
        return Op("mem", reg=_operand(reg.replace(".64", "")), off=_int(off) if off else 0, wide=wide)
    neg = s.startswith("-")
    inv = s.startswith(("~", "!"))
    body = s[1:] if neg or inv else s
    absv = body.startswith("|")
    body = body.strip("|")
    if body in ("RZ", "URZ"):
        return Op("r" if body == "RZ" else "ur", RZ if body == "RZ" else URZ, neg, inv, absv)
    m = re.fullmatch(r"(U?)R(\d+)", body)
    if m:
        return Op("ur" if m.group(1) else "r", int(m.group(2)), neg, inv, absv)
    m = re.fullmatch(r"(U?)P(T|\d)", body)
    if m:
        return Op("up" if m.group(1) else "p", PT if m.group(2) == "T" else int(m.group(2)), inv=inv)
    if body.startswith("SR"):
        return Op("sr", text=body)
    m = re.fullmatch(r"B(\d+)", body)
    if m:
        return Op("b", int(m.group(1)))
    if re.fullmatch(r"0x[0-9a-f]+|\d+", body):
        v = _int(body)
        return Op("imm", v, neg, inv, text=s)
    if body in ("PR", "UPR"):
        return Op("pr", text=body)
    try:
        float(s.replace("INF", "inf"))
    except ValueError:
        return Op("unknown", text=s)              # raises when an executed instruction reads it
    return Op("fimm", text=s)


def _split(args: str) -> list[str]:
    out, depth, cur = [], 0, ""
    for ch in args:
        if ch == "[":
            depth += 1
        elif ch == "]":
            depth -= 1
        if ch == "," and depth == 0:
            out.append(cur)
            cur = ""
        else:
            cur += ch
    return [x.strip() for x in out + [cur] if x.strip()]


@dataclass
class Ins:
    addr: int
    opcode: str
    guard: tuple | None        # (uniform, index, negated)
    ops: list
    text: str


def decode(sass_text_lines) -> tuple[list[Ins], dict[str, int]]:
    """Instructions and label -> address of one function's ``nvdisasm -c`` listing lines."""
    instrs, labels, pending = [], {}, []
    for line in sass_text_lines:
        m = re.match(r"^(\.L_x_\d+):", line)
        if m:
            pending.append(m.group(1))
            continue
        m = _LINE.match(line)
        if not m:
            continue
        addr = int(m.group(1), 16)
        for name in pending:
            labels[name] = addr
        pending = []
        guard = None
        if m.group(3):
            g = m.group(3)
            guard = (g.startswith("U"), PT if g.endswith("T") else int(g[-1]), m.group(2) == "!")
        instrs.append(Ins(addr, m.group(4), guard, [_operand(x) for x in _split(m.group(5))] if m.group(5) else [],
                          line.strip()))
    return instrs, labels


def function_lines(text: str, symbol: str) -> list[str]:
    """The lines of ``symbol``'s section in an ``nvdisasm -c`` listing."""
    out, inside = [], False
    for line in text.splitlines():
        m = re.match(r"^\.text\.(\S+):\s*$", line)
        if m:
            inside = m.group(1) == symbol
            continue
        if inside:
            out.append(line)
    return out


# ---- execution ------------------------------------------------------------------------------------

def _f32(x: int) -> np.float32:
    return np.frombuffer(struct.pack("<I", x & M32), np.float32)[0]


def _bits32(f) -> int:
    return struct.unpack("<I", np.float32(f).tobytes())[0]


def _f64(x: int) -> np.float64:
    return np.frombuffer(struct.pack("<Q", x), np.float64)[0]


def _bits64(f) -> int:
    return struct.unpack("<Q", np.float64(f).tobytes())[0]


def _lut(lut: int, a: int, b: int, c: int, mask: int) -> int:
    r = 0
    for k in range(8):
        if lut >> k & 1:
            r |= (a if k & 4 else ~a) & (b if k & 2 else ~b) & (c if k & 1 else ~c)
    return r & mask


def _s32(x: int) -> int:
    x &= M32
    return x - (1 << 32) if x >> 31 else x


_CMP = {"EQ": lambda a, b: a == b, "NE": lambda a, b: a != b, "LT": lambda a, b: a < b,
        "LE": lambda a, b: a <= b, "GT": lambda a, b: a > b, "GE": lambda a, b: a >= b}
_BOOL = {"AND": lambda a, b: a and b, "OR": lambda a, b: a or b, "XOR": lambda a, b: a != b}


@dataclass
class Thread:
    block: int
    thread: int
    r: list = field(default_factory=lambda: [0] * 256)
    ur: list = field(default_factory=lambda: [0] * 64)
    p: list = field(default_factory=lambda: [False] * 7 + [True])
    up: list = field(default_factory=lambda: [False] * 7 + [True])
    pc: int = 0                   # index into the instructions
    executed: int = 0             # instructions executed (NOP excluded), predicated-off ones included
    nops: int = 0
    done: bool = False
    counts: dict = field(default_factory=dict)   # address -> times executed
    pending: dict = field(default_factory=dict)  # register -> (id, bytes) of a global load not yet waited on
    inflight: int = 0             # most bytes of global loads outstanding at once (``_wait``)
    accesses: list = field(default_factory=list)  # global accesses: (instruction, its run count, address,
                                                  # bytes, is_store), in order (``traffic``)


class Machine:
    """One kernel (decoded SASS) with its constant bank, global memory and launch shape."""

    def __init__(self, instrs, labels, params: bytes, grid: int, block: int, memory: Memory, arch: str = "sm_90"):
        self.instrs, self.labels, self.memory, self.grid, self.block_dim = instrs, labels, memory, grid, block
        self.index = {i.addr: k for k, i in enumerate(instrs)}
        base = PARAM_BASE[arch]
        bank = bytearray(base + len(params) + 64)
        struct.pack_into("<6I", bank, 0, block, 1, 1, grid, 1, 1)
        struct.pack_into("<I", bank, 0x28, 0xFFFC00)          # stack pointer (unused: no local memory)
        bank[base:base + len(params)] = params
        self.bank = bytes(bank)
        self.shared: dict = {}

    # -- operand access --
    def _reg(self, t: Thread, o: Op) -> int:
        if o.kind == "r":
            return 0 if o.idx == RZ else t.r[o.idx]
        if o.kind == "ur":
            return 0 if o.idx == URZ else t.ur[o.idx]
        raise NotImplementedError(f"register operand {o}")

    def _pair(self, t: Thread, o: Op) -> int:
        if o.kind in ("r", "ur") and o.idx in (RZ, URZ):
            return 0
        regs = t.r if o.kind == "r" else t.ur
        return regs[o.idx] | regs[o.idx + 1] << 32

    def _cbank(self, t: Thread, o: Op, n: int) -> int:
        addr = o.off + (self._reg(t, o.reg) if o.reg is not None else 0)
        return int.from_bytes(self.bank[addr:addr + n].ljust(n, b"\0"), "little")

    def val(self, t: Thread, o: Op) -> int:
        """A 32-bit source operand, negation and inversion applied (mod 2**32)."""
        if o.kind in ("r", "ur"):
            v = self._reg(t, o)
        elif o.kind == "imm":
            v = o.idx & M32
        elif o.kind == "c":
            v = self._cbank(t, o, 4)
        else:
            raise NotImplementedError(f"source operand {o}")
        if o.inv:
            v = ~v & M32
        if o.neg:
            v = -v & M32
        return v

    def add_term(self, t: Thread, o: Op) -> int:
        """An operand as a term of an integer add: -x is ~x + 1 (carries as the hardware's)."""
        if o.neg:
            v = self.val(t, Op(o.kind, o.idx, False, o.inv, False, o.text, o.reg, o.off))
            return (~v & M32) + 1
        return self.val(t, o)

    def pred(self, t: Thread, o: Op) -> bool:
        v = (t.p if o.kind == "p" else t.up)[o.idx]
        return (not v) if o.inv else v

    def fval(self, t: Thread, o: Op) -> np.float32:
        if o.kind == "fimm":
            return np.float32(float(o.text.replace("INF", "inf")))
        v = _f32(self.val(t, Op(o.kind, o.idx, False, False, False, o.text, o.reg, o.off)))
        if o.absv:
            v = abs(v)
        return -v if o.neg else v

    def dval(self, t: Thread, o: Op) -> np.float64:
        if o.kind == "fimm":
            return np.float64(float(o.text.replace("INF", "inf")))
        if o.kind == "c":
            v = _f64(self._cbank(t, o, 8))
        else:
            v = _f64(self._pair(t, o))
        if o.absv:
            v = abs(v)
        return -v if o.neg else v

    def set(self, t: Thread, o: Op, v: int):
        if o.kind == "r":
            if o.idx != RZ:
                t.r[o.idx] = v & M32
        elif o.kind == "ur":
            if o.idx != URZ:
                t.ur[o.idx] = v & M32
        else:
            raise NotImplementedError(f"destination {o}")

    def set_wide(self, t: Thread, o: Op, v: int, words: int):
        for k in range(words):
            self.set(t, Op(o.kind, o.idx + k if o.idx not in (RZ, URZ) else o.idx), v >> (32 * k))

    def set_pred(self, t: Thread, o: Op, v: bool):
        if o.idx != PT:
            (t.p if o.kind == "p" else t.up)[o.idx] = bool(v)

    def address(self, t: Thread, o: Op) -> int:
        base = self._pair(t, o.reg) if o.wide else self._reg(t, o.reg)
        off = self._reg(t, o.off_reg) if o.off_reg is not None else o.off
        return (base + off) & ((1 << 64) - 1)

    # -- running --
    def thread(self, block: int, thread: int) -> Thread:
        return Thread(block, thread)

    def run(self, t: Thread, limit: int = 1_000_000) -> str:
        """Run ``t`` until ``EXIT`` ("exit") or a barrier ("bar"); raises past ``limit`` instructions."""
        while True:
            if t.executed > limit:
                raise RuntimeError(f"thread ({t.block}, {t.thread}) ran past {limit} instructions")
            i = self.instrs[t.pc]
            t.pc += 1
            name = i.opcode.split(".")[0]
            if name == "NOP":
                t.nops += 1
                continue
            t.executed += 1
            t.counts[i.addr] = t.counts.get(i.addr, 0) + 1
            if t.pending:                         # the wait is the instruction's, whatever its guard
                _wait(t, i, name)
            if i.guard is not None:
                uni, idx, negated = i.guard
                g = (t.up if uni else t.p)[idx]
                if g == negated:
                    continue
            out = self.step(t, i, name)
            if out:
                return out

    def step(self, t: Thread, i: Ins, name: str):   # one case per opcode
        o, parts = i.ops, i.opcode.split(".")
        flags = set(parts[1:])
        uni = name.startswith("U")
        if uni:
            name = name[1:]                        # the uniform datapath's twin (UIADD3: IADD3 on URs)
        if name in ("BSSY", "BSYNC", "WARPSYNC", "DEPBAR"):
            return None
        if name == "EXIT":
            t.done = True
            return "exit"
        if name == "BAR":
            return "bar"
        if name == "BRA":
            if len(o) == 2 and not self.pred(t, o[0]):
                return None
            t.pc = self.index[self.labels[o[-1].text]]
            return None
        if name in ("MOV", "R2UR"):
            self.set(t, o[0], self.val(t, o[1]))
        elif name in ("S2R", "S2UR"):
            sr = o[1].text
            v = {"SR_TID.X": t.thread, "SR_CTAID.X": t.block, "SR_CgaCtaId": 0, "SR_TID.Y": 0, "SR_TID.Z": 0,
                 "SR_CTAID.Y": 0, "SR_CTAID.Z": 0, "SR_LANEID": t.thread % 32}.get(sr)
            if v is None:
                raise NotImplementedError(f"special register {sr}")
            self.set(t, o[0], v)
        elif name == "CS2R":
            if o[1].text != "SRZ":
                raise NotImplementedError(i.text)
            self.set_wide(t, o[0], 0, 2)
        elif name == "LDC":
            n = {"64": 8, "U8": 1, "U16": 2}.get(parts[-1], 4)
            self.set_wide(t, o[0], self._cbank(t, o[1], n), max(1, n // 4))
        elif name == "IMAD":
            a, b = self.val(t, o[1]), self.val(t, o[2])
            signed = "U32" not in flags
            if "WIDE" in flags:
                if signed:
                    a, b = _s32(a), _s32(b)
                c = self._pair(t, o[3])
                if o[3].neg:
                    c = -c
                v = a * b + c + (int(self.pred(t, o[4])) if "X" in flags else 0)
                self.set_wide(t, o[0], v, 2)
            elif "HI" in flags:
                if signed:
                    a, b = _s32(a), _s32(b)
                self.set(t, o[0], (a * b + self._pair(t, o[3])) >> 32)     # a 64-bit addend (c+1:c)
            else:
                c = self.val(t, o[3])
                self.set(t, o[0], a * b + c + (int(self.pred(t, o[4])) if "X" in flags else 0))
        elif name == "IADD3":
            dst, rest = o[0], o[1:]
            couts = []
            while rest[0].kind in ("p", "up"):
                couts.append(rest.pop(0))
            srcs, cins = rest[:3], rest[3:]
            v = sum(self.add_term(t, s) for s in srcs)
            if "X" in flags:
                v += sum(int(self.pred(t, c)) for c in cins)
            self.set(t, dst, v)
            carry = v >> 32
            for k, c in enumerate(couts):
                self.set_pred(t, c, carry > k)
        elif name == "VIADD":
            self.set(t, o[0], self.add_term(t, o[1]) + self.add_term(t, o[2]))
        elif name == "VIADDMNMX":
            s = (self.add_term(t, o[1]) + self.add_term(t, o[2])) & M32
            c = self.val(t, o[3])
            key = (lambda x: x) if "U32" in flags else _s32
            self.set(t, o[0], (min if self.pred(t, o[4]) else max)(s, c, key=key))
        elif name == "LEA":
            rest = o[1:]
            cout = rest.pop(0) if rest[0].kind in ("p", "up") else None
            if "HI" in flags:
                a = self.val(t, rest[0])
                if "SX32" in flags:
                    b, sh = self.val(t, rest[1]), rest[2].idx
                    hi = M32 if a >> 31 else 0
                    cin = rest[3] if len(rest) > 3 else None
                else:
                    b, hi, sh = self.val(t, rest[1]), self.val(t, rest[2]), rest[3].idx
                    cin = rest[4] if len(rest) > 4 else None
                v = b + ((hi << 32 | a) >> (32 - sh) & M32)
                if "X" in flags and cin is not None:
                    v += int(self.pred(t, cin))
            else:
                a, b, sh = self.val(t, rest[0]), self.val(t, rest[1]), rest[2].idx
                v = (a << sh & M32) + b
                if "X" in flags:
                    v += int(self.pred(t, rest[3]))
            self.set(t, o[0], v)
            if cout is not None:
                self.set_pred(t, cout, v >> 32)
        elif name == "SHF":
            lo, sh, hi = self.val(t, o[1]), self.val(t, o[2]), self.val(t, o[3])
            width = 64 if "U64" in flags or "S64" in flags else 32
            sh = min(sh, width) if width == 32 else sh & 63
            if "L" in flags:
                v = (hi << 32 | lo) << sh
            else:
                v = hi << 32 | lo
                if "S32" in flags or "S64" in flags:
                    v = v - (1 << 64) if hi >> 31 else v
                v >>= sh
            self.set(t, o[0], v >> 32 if "HI" in flags else v)
        elif name == "LOP3":
            if o[0].kind in ("p", "up"):
                pd, dst, srcs, lut = o[0], o[1], o[2:5], o[5].idx
            else:
                pd, dst, srcs, lut = None, o[0], o[1:4], o[4].idx
            v = _lut(lut, *(self.val(t, s) for s in srcs), M32)
            self.set(t, dst, v)
            if pd is not None:
                self.set_pred(t, pd, v != 0)
        elif name == "PLOP3":
            a, b, c = (int(self.pred(t, x)) for x in o[2:5])
            self.set_pred(t, o[0], _lut(o[5].idx, a, b, c, 1))
            self.set_pred(t, o[1], _lut(o[6].idx, a, b, c, 1))
        elif name == "SEL":
            self.set(t, o[0], self.val(t, o[1]) if self.pred(t, o[3]) else self.val(t, o[2]))
        elif name == "ISETP":
            cmp_, bop = parts[1], parts[-2] if "EX" in flags else parts[-1]
            a, b = self.val(t, o[2]), self.val(t, o[3])
            if "U32" not in flags:
                a, b = _s32(a), _s32(b)
            r = _CMP[cmp_](a, b)
            if "EX" in flags:
                prev = self.pred(t, o[5])
                r = (r and prev) if cmp_ == "EQ" else (r or prev) if cmp_ == "NE" else (prev if a == b else r)
            c = self.pred(t, o[4])
            self.set_pred(t, o[0], _BOOL[bop](r, c))
            self.set_pred(t, o[1], _BOOL[bop](not r, c))
        elif name in ("P2R", "P2UR"):
            mask = self.val(t, o[3])
            bits = sum(int(v) << k for k, v in enumerate((t.up if uni else t.p)[:7]))
            self.set(t, o[0], (bits & mask) | (self.val(t, o[2]) & ~mask))
        elif name == "PRMT":
            a, sel, b = self.val(t, o[1]), self.val(t, o[2]), self.val(t, o[3])
            src = (b << 32 | a).to_bytes(8, "little")
            out = 0
            for k in range(4):
                n = sel >> (4 * k) & 0xF
                byte = src[n & 7]
                if n & 8:
                    byte = 0xFF if byte & 0x80 else 0
                out |= byte << (8 * k)
            self.set(t, o[0], out)
        elif name == "HFMA2" and all(x.kind == "r" and x.idx == RZ for x in o[1:3]):    # a move of 2 halves
            h = [np.float16(float(x.text)).view(np.uint16) for x in o[3:5]]
            self.set(t, o[0], int(h[0]) << 16 | int(h[1]))
        elif name in ("FADD", "FMUL", "FFMA", "FMNMX"):
            a, b = self.fval(t, o[1]), self.fval(t, o[2])
            with np.errstate(all="ignore"):
                if name == "FADD":
                    v = np.float32(a + b)
                elif name == "FMUL":
                    v = np.float32(a * b)
                elif name == "FFMA":
                    v = np.float32(np.float64(a) * np.float64(b) + np.float64(self.fval(t, o[3])))
                else:
                    v = np.fmin(a, b) if self.pred(t, o[3]) else np.fmax(a, b)
            self.set(t, o[0], _bits32(v))
        elif name in ("DADD", "DMUL"):
            a, b = self.dval(t, o[1]), self.dval(t, o[2])
            with np.errstate(all="ignore"):
                v = a + b if name == "DADD" else a * b
            self.set_wide(t, o[0], _bits64(v), 2)
        elif name == "I2F" and flags >= {"U32", "RP"}:
            a = self.val(t, o[1])
            f = np.float32(a)
            if float(f) < a:
                f = np.nextafter(f, np.float32(np.inf))
            self.set(t, o[0], _bits32(f))
        elif name == "MUFU" and "RCP" in flags:
            with np.errstate(all="ignore"):
                self.set(t, o[0], _bits32(np.float32(1) / self.fval(t, o[1])))
        elif name == "F2I" and flags >= {"U32", "TRUNC"}:
            f = float(self.fval(t, o[1]))
            self.set(t, o[0], 0 if not f > 0 else min(M32, int(f)))
        elif name in ("LDG", "LDS", "LD"):
            width = {"128": 16, "64": 8, "U8": 1, "S8": 1, "U16": 2, "S16": 2}.get(parts[-1], 4)
            addr = self.address(t, o[1])
            if name == "LDS":
                data = bytes(self.shared.get(addr + k, 0) for k in range(width))
            else:
                data = self.memory.read(addr, width)
                t.accesses.append((i.addr, t.counts[i.addr], addr, width, False))
            v = int.from_bytes(data, "little")
            if parts[-1] in ("S8", "S16") and data[-1] & 0x80:
                v -= 1 << (8 * width)
            self.set_wide(t, o[0], v, max(1, width // 4))
            if name == "LDG" and o[0].idx != RZ:     # outstanding until an instruction reads it (_wait)
                load = (t.executed, width)
                t.pending.update({o[0].idx + k: load for k in range(max(1, width // 4))})
                t.inflight = max(t.inflight, sum(b for _, b in set(t.pending.values())))
        elif name in ("STG", "STS", "ST"):
            width = {"128": 16, "64": 8, "U8": 1, "S8": 1, "U16": 2, "S16": 2}.get(parts[-1], 4)
            addr = self.address(t, o[0])
            words = max(1, width // 4)
            v = sum(self._reg(t, Op(o[1].kind, o[1].idx + k if o[1].idx != RZ else RZ)) << (32 * k)
                    for k in range(words))
            data = (v & ((1 << (8 * width)) - 1)).to_bytes(width, "little")
            if name == "STS":
                for k, byte in enumerate(data):
                    self.shared[addr + k] = byte
            else:
                self.memory.write(addr, data)
                t.accesses.append((i.addr, t.counts[i.addr], addr, width, True))
        else:
            raise NotImplementedError(f"SASS instruction not interpreted: {i.text}")
        return None


_STORES = ("STG", "STS", "ST", "RED", "ATOM", "ATOMG")


def _wait(t: Thread, i: Ins, name: str):
    """Retire the global loads whose registers ``i`` reads (the scoreboard wait before it): a thread's
    loads are outstanding from their ``LDG`` to their first reader, which is how ``inflight`` counts
    the bytes a thread keeps in flight (a fold that adds each input as it comes holds one input's
    loads; a kernel that loads every input first holds them all).  Sources: every register operand
    but a non-store's first (its destination), and the index registers of address operands; a
    64-bit operand (``D*`` opcodes, ``.64``/``.WIDE`` forms, ``[R.64]``) reads its register pair."""
    pair = name.startswith("D") or any(f in ("64", "WIDE") for f in i.opcode.split(".")[1:])
    read = set()
    for k, o in enumerate(i.ops):
        if o.kind == "r" and (k > 0 or name in _STORES):
            read.update((o.idx, o.idx + 1) if pair else (o.idx,))
        for reg in (o.reg, o.off_reg):
            if reg is not None and reg.kind == "r":
                read.update((reg.idx, reg.idx + 1) if o.wide else (reg.idx,))
    done = {t.pending[r] for r in read if r in t.pending}
    if done:
        t.pending = {r: load for r, load in t.pending.items() if load not in done}


def run_thread(machine: Machine, block: int, thread: int) -> Thread:
    """Run one thread of the launch to ``EXIT`` (a barrier is an error here: ``run_blocks``)."""
    t = machine.thread(block, thread)
    if machine.run(t) != "exit":
        raise RuntimeError("a barrier: run the whole block (run_blocks)")
    return t


def run_blocks(machine: Machine, blocks) -> list[Thread]:
    """Run every thread of each of ``blocks``, in turn up to each barrier; shared memory per block."""
    done = []
    for b in blocks:
        machine.shared = {}
        threads = [machine.thread(b, x) for x in range(machine.block_dim)]
        live = threads
        while live:
            states = [machine.run(t) for t in live]
            if any(s == "bar" for s in states) and not all(s == "bar" for s in states):
                raise RuntimeError(f"block {b}: some threads exited while others wait at a barrier")
            live = [t for t, s in zip(live, states) if s == "bar"]
        done += threads
    return done


# ---- memory traffic of the threads run --------------------------------------------------------------

LINE, SECTOR, WARP = 128, 32, 32


@dataclass(frozen=True)
class Traffic:
    """The global accesses of some warps, as the L1 sees them: one request per warp instruction run
    (the same instruction's n-th run by each lane of the warp), each touching the distinct 128-byte
    lines and 32-byte sectors its lanes' bytes fall in."""
    requests: int
    lines: int
    sectors: int
    bytes: int

    @property
    def sector_fill(self) -> float:
        """Bytes used of the sectors touched (1.0: every sector written or read in full)."""
        return self.bytes / (SECTOR * self.sectors) if self.sectors else 0.0


def traffic(threads, stores: bool, within=None) -> Traffic:
    """The loads (``stores`` False) or stores of ``threads`` (``run_blocks``' or ``run_thread``'s), warp by
    warp (thread // 32); ``within``: (start, end) byte addresses, only the accesses there (an operand's
    buffer)."""
    requests: dict = {}
    for t in threads:
        for ins, count, addr, width, is_store in t.accesses:
            if is_store == stores and (within is None or within[0] <= addr < within[1]):
                requests.setdefault((t.block, t.thread // WARP, ins, count), []).append((addr, width))
    lines = sectors = nbytes = 0
    for lanes in requests.values():
        lines += len({a // LINE for addr, w in lanes for a in (addr, addr + w - 1)})
        sectors += len({a // SECTOR for addr, w in lanes for a in range(addr - addr % SECTOR, addr + w, SECTOR)})
        nbytes += sum(w for _, w in lanes)
    return Traffic(len(requests), lines, sectors, nbytes)


# ---- kernels and launches ---------------------------------------------------------------------------

def _root(x: np.ndarray) -> np.ndarray:
    while isinstance(x.base, np.ndarray):
        x = x.base
    return x if x.flags.c_contiguous else x.T


def host_memory(arrays) -> Memory:
    """Global memory holding the NumPy arrays ``arrays`` (their whole allocations) at their own addresses."""
    mem = Memory()
    for x in arrays:
        root = _root(x)
        base = root.__array_interface__["data"][0]
        if base in mem.bases:
            continue
        buf = root.reshape(-1).view(np.uint8)
        i = bisect.bisect(mem.bases, base)
        mem.bases.insert(i, base)
        mem.bufs.insert(i, buf)
    return mem


def machine(family: str, name: str, params: bytes, grid: int, memory: Memory, arch: str = "sm_90") -> Machine:
    """A ``Machine`` for kernel ``name`` of ``family`` as NVRTC compiles it (``cubins.listings``)."""
    return Machine(*_decoded(family, name, arch), params, grid, 256, memory, arch)


_DECODED: dict = {}


def _decoded(family: str, name: str, arch: str):
    key = (family, name, arch)
    if key not in _DECODED:
        _, symbol, _, _, sass = cubins.listings(family, name, arch)
        _DECODED[key] = decode(function_lines(sass, symbol))
    return _DECODED[key]


class SassBackend(HostArrays):
    """A backend computing NumPy arrays by interpreting the kernels' sm_90 SASS (every block, every
    thread): as slow as it sounds, for small arrays in tests.  ``threads``: every thread run, per launch."""

    name = "cuda-sass"

    def __init__(self, arch: str = "sm_90"):
        self.arch = arch
        self.launches: list = []
        self.threads: list = []

    def execute(self, op, p, inputs, out):
        operands = [emulate.operand(x) for x in inputs]
        memory = host_memory([x for x in inputs if x.ndim] + [out])
        for lc in launch.plan_launches(op, p, operands, emulate.operand(out, output=True)):
            self.launches.append(lc)
            m = machine(lc.family, lc.name, lc.params, lc.grid, memory, self.arch)
            self.threads.append(run_blocks(m, range(lc.grid)))
