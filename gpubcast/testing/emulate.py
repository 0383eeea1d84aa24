"""Host emulation: the real kernel bodies of ``kernels/*.cu``, compiled as host C++ and run on
the CPU over NumPy memory.

The same inlined source NVRTC compiles is built with g++ against the CUDA headers
(``sources.host_include_dirs``): ``__global__`` and friends expand to nothing (CUDA's own
host_defines.h), ``threadIdx / blockIdx / blockDim / gridDim`` are thread-local ``dim3``
variables, and a loop over the launch grid runs each block's threads as cooperative fibers
(one stack each, switched with ``_setjmp/_longjmp``: about 40 ns a thread here for a kernel
without barriers; started once per OS thread and shared by every library, so that memory maps
grow with threads, not with libraries).  ``__syncthreads()`` parks a thread
until every thread of its block has parked or exited; ``__shared__`` variables are
``static thread_local``, one per block (a block runs on one OS thread at a time).  Launches come
from ``gpubcast.cuda.launch`` exactly as the CUDA backend's do, with host pointers in place of
device pointers.  So the vector path, the scalar kernel arguments, the strided path, magic
division, the 64-bit path and the shared-memory tiles all run here as they will on a GPU.

Checked per launch (``Check``; the first fault is kept, ``FAULTS`` names them): global accesses
against allocation ranges (``GB_PTR``, when ranges are given: the virtual device); barrier
divergence (a thread exits while others wait at a barrier, or threads wait at different
``__syncthreads()`` calls: a hang or undefined behaviour on a GPU; the barrier is released
anyway so that the launch finishes); and shared-memory accesses made through ``GB_SMEM``
(kernels/indexing.cuh: every one of gpubcast's): in its buffer, no two threads touching a byte
in one barrier interval with one of them writing (a race: on a GPU their order is undefined),
no read of a byte not written since the block began or the kernel declared the buffer dead
(``GB_SMEM_DEAD``).  What it cannot see: warps (no warp-synchronous behaviour, shuffles or
votes are emulated; a kernel relying on lockstep within a warp is a race here), races on shared
memory accessed without ``GB_SMEM`` or on global memory, memory ordering and fences, dynamic
(``extern``) shared memory, NVRTC's optimiser (the host build is g++ -O0) and timing.

Shared libraries are built by ``gpubcast.hostbuild`` and kept in ``gpubcast.cache`` (kind
``emulation``), named by a hash of the translation unit (source and instantiations), the compiler
(path and ``--version``), its flags and include folders; beside each ``.so`` an entry holds its
SHA-256, checked before the library is loaded (a damaged or foreign ``.so`` is rebuilt, never
loaded).  One process builds a library while the others wait for it (a file lock).  Every build
includes ``harness()`` first (the harness and the system headers of ``kernels/``), which g++ reads
precompiled (``hostbuild.Header``): a small build (a fused chain, an ElementwiseKernel) takes
0.6 CPU-s instead of 1.0, most of it no longer CUDA's half and bfloat16 headers.
"""

from __future__ import annotations

import concurrent.futures
import ctypes
import dataclasses
import functools
import threading
from pathlib import Path

from .. import hostbuild
from ..backends.reference import HostArrays
from ..cuda import catalog, launch, sources

PURPOSE = "host emulation"   # who needs the C++ compiler, in hostbuild's errors
#: -O0 (with __forceinline__ made plain inline below): a build of 96 kernels takes 4 s, not 12;
#: no exceptions or unwind tables (the harness leaves a thread by _longjmp, never by unwinding): 25% less
CXX_FLAGS = ("-std=c++17", "-O0", "-fPIC", "-shared", "-ffp-contract=off", "-fno-strict-aliasing",
             "-fno-exceptions", "-fno-asynchronous-unwind-tables", "-w")
STACK_KIB = 256   # the stack of an emulated thread (a fiber), its lowest page a guard

_PRELUDE = """\
// gpubcast host emulation harness (generated): included first by every host build of kernels
// __shared__ before CUDA's host_defines.h (which keeps a definition made outside __CUDACC__): one
// variable per OS thread, which runs one block at a time, so one per block, shared by its fibers.
#define __shared__ static thread_local
#include <vector_types.h>
// plain inline, not CUDA's always_inline: g++ -O0 then builds the harness about 3x faster
#undef __forceinline__
#define __forceinline__ inline
#include <string.h>
#include <stdlib.h>
#include <setjmp.h>
#include <ucontext.h>
#include <sys/mman.h>
#include <unistd.h>
#define __launch_bounds__(...)
thread_local dim3 threadIdx, blockIdx, blockDim, gridDim;

// Checks.  With a gb_check_t set for the launch: (memory, unless memory_off) every global access
// (kernels/access.cuh GB_PTR) must lie inside the allocation its operand's pointer points into
// and be aligned to its type; every shared access (GB_SMEM) must lie in its buffer and not race
// with another thread's in the same barrier interval; every __syncthreads() must be reached by
// every thread of the block, at the same call.  The first fault is recorded; a faulting access is
// redirected to scratch memory.
struct gb_check_t {{
  const unsigned long long* ranges;   // sorted [begin, end) pairs of live allocations
  unsigned long long nranges;
  unsigned long long faults;          // number of faults
  unsigned long long kind;            // first fault (emulate.FAULTS): 1 outside, 2 misaligned, 3 base in no
                                      // allocation, 4 exit at a barrier, 5 different barriers, 6 shared
                                      // race, 7 shared read unwritten, 8 shared outside its buffer
  unsigned long long addr, bytes, align, base, is_write, block, thread;
  unsigned long long memory_off;      // in: 1 = no global-memory checks (no allocation ranges)
  unsigned long long other;           // kinds 4-6: the other thread
}};
static thread_local gb_check_t* gb_check_state = 0;
alignas(64) static thread_local unsigned char gb_scratch[64];

static void gb_fault(unsigned long long kind, unsigned long long addr, unsigned long long bytes,
                     unsigned long long align, unsigned long long base, bool is_write, unsigned thread,
                     unsigned long long other) {{
  gb_check_t* c = gb_check_state;
  if (c->faults++ == 0) {{
    c->kind = kind; c->addr = addr; c->bytes = bytes; c->align = align; c->base = base;
    c->is_write = is_write; c->block = blockIdx.x; c->thread = thread; c->other = other;
  }}
}}

static const unsigned long long* gb_range_of(unsigned long long a) {{
  const gb_check_t* c = gb_check_state;
  unsigned long long lo = 0, hi = c->nranges;            // last range with begin <= a
  while (lo < hi) {{
    unsigned long long mid = (lo + hi) / 2;
    if (c->ranges[2 * mid] <= a) lo = mid + 1; else hi = mid;
  }}
  if (lo == 0) return 0;
  const unsigned long long* r = c->ranges + 2 * (lo - 1);
  return a < r[1] ? r : 0;
}}

static bool gb_access_ok(const void* p, unsigned long long bytes, unsigned long long align,
                         const void* base, bool is_write) {{
  const unsigned long long a = (unsigned long long)p;
  const unsigned long long* r = gb_range_of((unsigned long long)base);
  unsigned long long kind = 0;
  if (!r) kind = 3;
  else if (a < r[0] || a + bytes > r[1]) kind = 1;
  else if (a % align) kind = 2;
  if (!kind) return true;
  gb_fault(kind, a, bytes, align, (unsigned long long)base, is_write, threadIdx.x, 0);
  return false;
}}

template <typename P> static P gb_checked(P p, const void* base, bool is_write) {{
  if (!gb_check_state || gb_check_state->memory_off ||
      gb_access_ok((const void*)p, sizeof(*p), alignof(decltype(*p)), base, is_write))
    return p;
  return (P)(void*)gb_scratch;
}}
#define GB_PTR(p, base, is_write) gb_checked((p), (const void*)(base), (is_write))

// ---- a block's threads as fibers -----------------------------------------------------------
// Each thread of a block runs on its own stack (ucontext, started once, switched with
// _setjmp/_longjmp: no system call per switch).  __syncthreads() parks the thread; when every
// thread of the block has parked or exited, the barrier is released (a fault when some exited or
// they parked at different calls), the next barrier interval begins, and the parked threads
// resume in the launch's thread order.
// The fibers form a team, one per OS thread for the whole process, shared by every emulation
// library it loads: one mapping holds the team and its stacks (each one's lowest page a guard), so
// a process's memory maps grow with its threads, not with its libraries (the kernel caps a
// process at vm.max_map_count maps, and a guard page costs two).  A team is made by gb_team_new
// of any library; each launch is passed its thread's team, and a fiber calls whatever the
// launching library set, so any library drives fibers another started (none is ever unloaded).
enum {{ GB_READY = 0, GB_WAITING = 1, GB_DONE = 2 }};
struct gb_fiber_t {{ jmp_buf jb; unsigned tid; int state; void* site; }};
struct gb_team_t {{
  jmp_buf main;                       // the scheduler, while a fiber runs
  gb_fiber_t* cur;
  void (*call)(const void*);          // runs the kernel as thread threadIdx (set by the launching library)
  const void* arg;
  unsigned long long gen;             // barrier intervals begun on this OS thread (blocks and barriers)
  unsigned long long block_gen;       // gen at the current block's start
  unsigned long long bytes;           // of the team's mapping
  unsigned nfibers;
  gb_fiber_t* fibers;                 // one per thread of a block, in visiting order
}};
static const size_t GB_STACK = {stack_kib} * 1024;   // per fiber
static thread_local gb_team_t* gb_team = 0;         // the running launch's team (set by gb_run)

static void gb_fiber_main() {{
  gb_team_t* t = gb_team;                           // a local: later launches may come from any library
  gb_fiber_t* f = t->cur;
  for (;;) {{
    if (!_setjmp(f->jb)) _longjmp(t->main, 1);     // parked until it runs a thread
    t->call(t->arg);
    f->state = GB_DONE;
  }}
}}

extern "C" void gb_team_free(gb_team_t* t) {{ munmap(t, t->bytes); }}

extern "C" gb_team_t* gb_team_new(unsigned n) {{   // n fibers started on this OS thread; 0: no memory
  const size_t page = sysconf(_SC_PAGESIZE);
  const size_t head = (sizeof(gb_team_t) + n * sizeof(gb_fiber_t) + page - 1) / page * page;
  const size_t bytes = head + (size_t)n * GB_STACK;
  void* m = mmap(0, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
  if (m == MAP_FAILED) return 0;
  gb_team_t* t = (gb_team_t*)m;                     // mmap's memory is zeroed
  t->bytes = bytes;
  t->nfibers = n;
  t->fibers = (gb_fiber_t*)(t + 1);
  t->gen = t->block_gen = 1;
  gb_team_t* running = gb_team;
  gb_team = t;                                      // read by each fiber as it starts
  for (unsigned i = 0; i < n; ++i) {{
    char* stack = (char*)m + head + (size_t)i * GB_STACK;
    if (mprotect(stack, page, PROT_NONE)) {{ gb_team = running; munmap(m, bytes); return 0; }}
    ucontext_t uc, back;
    getcontext(&uc);
    uc.uc_stack.ss_sp = stack;
    uc.uc_stack.ss_size = GB_STACK;
    uc.uc_link = 0;
    makecontext(&uc, gb_fiber_main, 0);
    t->cur = &t->fibers[i];
    if (!_setjmp(t->main)) swapcontext(&back, &uc);   // runs to its first park
  }}
  gb_team = running;
  return t;
}}

__attribute__((noinline)) static void gb_syncthreads() {{
  gb_team_t& s = *gb_team;
  gb_fiber_t* f = s.cur;
  f->state = GB_WAITING;
  f->site = __builtin_return_address(0);           // the call: threads must wait at the same one
  if (!_setjmp(f->jb)) _longjmp(s.main, 1);
}}
#define __syncthreads() gb_syncthreads()

// ---- shared memory checks (kernels/shared_tiles.cuh GB_SMEM, GB_SMEM_DEAD) -----------------------
// Per byte of a shared buffer: the interval and thread of its last write and last read(s).  Two
// threads touching a byte in one interval, one of them writing, race (on a GPU their order is
// undefined); a read of a byte not written since the block began, or since the kernel declared
// the buffer's contents dead (GB_SMEM_DEAD), reads garbage.
struct gb_shadow_t {{ unsigned long long wgen, rgen; unsigned wtid, rtid; }};
struct gb_smem_t {{ const unsigned char* base; unsigned long long bytes, dead; gb_shadow_t* shadow; }};
static thread_local gb_smem_t gb_smem_bufs[16];
static thread_local unsigned gb_smem_count = 0;
static const unsigned GB_MANY = 0xffffffffu;         // rtid: more than one reader

static gb_smem_t* gb_smem_buf(const void* base, unsigned long long bytes) {{
  for (unsigned i = 0; i < gb_smem_count; ++i)
    if (gb_smem_bufs[i].base == base) return &gb_smem_bufs[i];
  if (gb_smem_count == 16) return 0;
  gb_smem_t* b = &gb_smem_bufs[gb_smem_count++];
  b->base = (const unsigned char*)base; b->bytes = bytes; b->dead = 0;
  b->shadow = (gb_shadow_t*)calloc(bytes, sizeof(gb_shadow_t));
  return b;
}}

template <typename P> static P gb_smem_check(P p, const void* base, unsigned long long bytes, bool is_write) {{
  if (!gb_check_state) return p;
  gb_smem_t* b = gb_smem_buf(base, bytes);
  if (!b || !b->shadow) return p;
  const gb_team_t& s = *gb_team;
  const unsigned tid = threadIdx.x;
  const unsigned long long n = sizeof(*p), a = (unsigned long long)(const unsigned char*)p;
  const unsigned long long off = a - (unsigned long long)b->base;
  if (a < (unsigned long long)b->base || off + n > b->bytes || a % alignof(decltype(*p))) {{
    gb_fault(8, a, n, alignof(decltype(*p)), (unsigned long long)b->base, is_write, tid, 0);
    return (P)(void*)gb_scratch;
  }}
  const unsigned long long fresh = b->dead > s.block_gen ? b->dead : s.block_gen;
  for (unsigned long long i = off; i < off + n; ++i) {{
    gb_shadow_t& e = b->shadow[i];
    unsigned long long kind = 0, other = 0;
    if (is_write) {{
      if (e.wgen == s.gen && e.wtid != tid) kind = 6, other = e.wtid;
      else if (e.rgen == s.gen && e.rtid != tid) kind = 6, other = e.rtid;
      e.wgen = s.gen; e.wtid = tid;
    }} else {{
      if (e.wgen < fresh) kind = 7;
      else if (e.wgen == s.gen && e.wtid != tid) kind = 6, other = e.wtid;
      if (e.rgen == s.gen && e.rtid != tid) e.rtid = GB_MANY;
      else if (e.rgen != s.gen) e.rgen = s.gen, e.rtid = tid;
    }}
    if (kind) {{
      gb_fault(kind, a, n, alignof(decltype(*p)), (unsigned long long)b->base, is_write, tid, other);
      break;
    }}
  }}
  return p;
}}

static void gb_smem_dead(const void* base, unsigned long long bytes) {{
  if (!gb_check_state) return;
  gb_smem_t* b = gb_smem_buf(base, bytes);
  if (b) b->dead = gb_team->gen;                   // writes from here on (this interval) count
}}
#define GB_SMEM(p, base, bytes, is_write) gb_smem_check((p), (const void*)(base), (bytes), (is_write))
#define GB_SMEM_DEAD(base, bytes) gb_smem_dead((const void*)(base), (bytes))
"""

_RUNNER = """
// One launch: blocks in the order b -> (b * bmul + badd) % grid, threads t -> (t * tmul + tadd) % block
// (permutations when the multipliers are coprime with the counts), each block's threads as fibers.
template <typename P> static int gb_run(void (*kernel)(P), const void* params, unsigned long long nbytes,
                                        unsigned grid, unsigned block, unsigned long long bmul,
                                        unsigned long long badd, unsigned tmul, unsigned tadd,
                                        gb_check_t* check, gb_team_t* team) {{
  if (nbytes != sizeof(P)) return -1;
  if (block > team->nfibers) return -3;
  gb_team = team;
  gb_team_t& s = *team;
  P p;
  memcpy(&p, params, sizeof(P));
  struct Call {{
    void (*kernel)(P);
    const P* p;
    static void run(const void* c) {{ ((const Call*)c)->kernel(*((const Call*)c)->p); }}
  }} call = {{kernel, &p}};
  s.call = &Call::run;
  s.arg = &call;
  gridDim = dim3(grid, 1, 1);
  blockDim = dim3(block, 1, 1);
  gb_check_state = check;
  for (unsigned long long b = 0; b < grid; ++b) {{
    blockIdx = dim3((unsigned)((b * bmul + badd) % grid), 1, 1);
    s.block_gen = ++s.gen;
    for (unsigned t = 0; t < block; ++t) {{
      s.fibers[t].tid = (unsigned)(((unsigned long long)t * tmul + tadd) % block);
      s.fibers[t].state = GB_READY;
    }}
    for (;;) {{                                     // one barrier interval per pass
      gb_fiber_t *waiting = 0, *done = 0, *elsewhere = 0;
      for (unsigned t = 0; t < block; ++t) {{
        gb_fiber_t* f = &s.fibers[t];
        if (f->state == GB_READY) {{
          threadIdx = dim3(f->tid, 1, 1);
          s.cur = f;
          if (!_setjmp(s.main)) _longjmp(f->jb, 1);
        }}
        if (f->state == GB_DONE) done = f;
        else if (!waiting) waiting = f;
        else if (f->site != waiting->site) elsewhere = f;
      }}
      if (!waiting) break;                          // every thread exited
      if (check && done) gb_fault(4, 0, 0, 0, 0, false, done->tid, waiting->tid);
      else if (check && elsewhere) gb_fault(5, 0, 0, 0, 0, false, elsewhere->tid, waiting->tid);
      ++s.gen;                                      // released (after a fault too: the launch runs on)
      for (unsigned t = 0; t < block; ++t)
        if (s.fibers[t].state == GB_WAITING) s.fibers[t].state = GB_READY;
    }}
  }}
  gb_check_state = 0;
  return 0;
}}
template <typename P> static unsigned long long gb_param_size(void (*)(P)) {{ return sizeof(P); }}
"""

_ENTRY = """
extern "C" int gb_run_{i}(const void* params, unsigned long long nbytes, unsigned grid, unsigned block,
                          unsigned long long bmul, unsigned long long badd, unsigned tmul, unsigned tadd,
                          gb_check_t* check, gb_team_t* team) {{
  return gb_run(&{name}, params, nbytes, grid, block, bmul, badd, tmul, tadd, check, team);
}}
extern "C" int gb_ept_{i}() {{ return {ept}; }}
extern "C" unsigned long long gb_size_{i}() {{ return gb_param_size(&{name}); }}
"""


def _ept_expr(name: str) -> str:
    """``gb::binary_contig<A, B>`` -> ``gb::binary_contig_ept<A, B>`` (the kernel's EPT constant)."""
    head, _, rest = name.partition("<")
    return f"{head}_ept<{rest}"


@functools.cache
def harness() -> hostbuild.Header:
    """The header every host build of kernels includes first: the harness, then the system headers
    ``kernels/`` include (CUDA's half and bfloat16 ones are most of a small build's time; g++ reads
    it all precompiled)."""
    includes = sources.system_includes("\n".join(sources.source(family) for family in sources.FAMILIES))
    text = _PRELUDE.format(stack_kib=STACK_KIB) + _RUNNER.format() + "".join(f"{line}\n" for line in includes)
    return hostbuild.Header("gb_emulation.h", text)


def translation_unit(family: str, names: list[str]) -> str:
    """Host C++ of ``names`` of ``family``, ``harness()`` included first (after a generated family's
    -D options, which NVRTC defines before every line of its source too)."""
    defines = sources.defines(sources.extra_options(family))
    parts = [*(d + "\n" for d in defines), f'#include "{harness().name}"\n',
             f"// the kernels of {family}.cu as host C++\n", sources.source(family)]
    for i, name in enumerate(names):
        parts.append(_ENTRY.format(i=i, name=name, ept=_ept_expr(name)))
    return "".join(parts)


def build(family: str, names: list[str]) -> Path:
    """The shared library holding ``names`` of ``family``: a proven cached build, else built now."""
    includes = [f"-I{d}" for d in sources.host_include_dirs()]
    return hostbuild.build_library("emulation", family, translation_unit(family, names), CXX_FLAGS, includes,
                                   purpose=PURPOSE, header=harness())


CHUNK = 96    # instantiations per shared library: parallel g++ runs, smaller rebuilds


@functools.lru_cache(maxsize=len(sources.FAMILIES))   # the catalog's families only (``_libraries``)
def _catalog_chunks(family: str) -> tuple[tuple[tuple[str, ...], ...], dict[str, int]]:
    """The catalog's instantiations of ``family`` cut into libraries of ``CHUNK`` (catalog order),
    and each name's library: every Emulator asking for any of them builds the same libraries, so
    they are built once (and cached once) whichever subset a caller wants."""
    chunks = catalog.groups(family, CHUNK)
    return chunks, {n: i for i, chunk in enumerate(chunks) for n in chunk}


def _libraries(wanted: dict[str, list[str]]) -> list[tuple[str, list[str]]]:
    """(family, names) of each library holding ``wanted``: the catalog's libraries holding its names
    (``_catalog_chunks``), the other names (a generated family's, ...) in libraries of their own."""
    out = []
    for family, names in wanted.items():
        chunks, where = _catalog_chunks(family) if family in sources.FAMILIES else ((), {})
        out += [(family, list(chunks[i])) for i in sorted({where[n] for n in names if n in where})]
        rest = [n for n in names if n not in where]
        out += [(family, rest[i:i + CHUNK]) for i in range(0, len(rest), CHUNK)]
    return out


class Emulator:
    """Runs launches of the kernels it was built with on the CPU.

    ``kernels``: iterable of ``catalog.Kernels`` (all three variants of each are built) or
    of (family, name expression) pairs; a catalog kernel comes with the others of its library
    (``_libraries``).  Libraries are built ``jobs`` at a time.
    """

    def __init__(self, kernels, *, jobs: int = 2):
        wanted: dict[str, list[str]] = {}
        for k in kernels:
            if isinstance(k, catalog.Kernels):
                pairs = [(k.family, n) for n in k.names()]
            else:
                pairs = [tuple(k)]
            for family, name in pairs:
                if name not in wanted.setdefault(family, []):
                    wanted[family].append(name)
        self._entries: dict[str, tuple] = {}
        chunks = _libraries(wanted)
        with concurrent.futures.ThreadPoolExecutor(max(1, jobs)) as pool:
            libs = list(pool.map(lambda chunk: build(*chunk), chunks))
        for (_, names), lib in zip(chunks, libs):
            dll = ctypes.CDLL(str(lib))
            hostbuild.release(lib)   # a private build (no cache directory): its file removed once loaded
            for i, name in enumerate(names):
                run = getattr(dll, f"gb_run_{i}")
                run.argtypes = [ctypes.c_char_p, ctypes.c_ulonglong, ctypes.c_uint, ctypes.c_uint,
                                ctypes.c_ulonglong, ctypes.c_ulonglong, ctypes.c_uint, ctypes.c_uint,
                                ctypes.POINTER(Check), ctypes.c_void_p]
                run.restype = ctypes.c_int
                ept = getattr(dll, f"gb_ept_{i}")
                ept.restype = ctypes.c_int
                size = getattr(dll, f"gb_size_{i}")
                size.restype = ctypes.c_ulonglong
                self._entries[name] = (run, ept(), size(), dll)

    def names(self):
        return tuple(self._entries)

    def ept(self, name: str) -> int:
        return self._entry(name)[1]

    def param_size(self, name: str) -> int:
        return self._entry(name)[2]

    def _entry(self, name):
        try:
            return self._entries[name]
        except KeyError:
            raise KeyError(f"kernel {name} is not in this emulation build; build the Emulator with it") from None

    def run(self, lc: launch.Launch, grid: int | None = None, order: tuple = (1, 0, 1, 0)) -> None:
        """Execute one launch (``grid`` overrides the launch's block count: any >= 1 is valid;
        ``order`` as in ``run_raw``)."""
        self.run_raw(lc.name, lc.params, grid or lc.grid, order=order)

    def run_raw(self, name: str, params: bytes, grid: int, block: int = launch.BLOCK,
                order: tuple = (1, 0, 1, 0), check: Check | None = None) -> None:
        """Run kernel ``name`` on argument bytes ``params`` with ``grid`` blocks of ``block`` threads,
        blocks and threads visited in the order ``order`` = (bmul, badd, tmul, tadd) gives (block b
        runs as (b * bmul + badd) % grid, likewise threads).  With ``check``, every global access is
        checked against its allocation ranges (unless ``check.memory_off``) and the first fault of
        any kind is left in it for the caller; without, barriers and shared memory are checked and
        a fault raises ``Fault``."""
        mine = check is None
        if mine:
            check = Check(memory_off=1)
        run, _, _, dll = self._entry(name)
        rc = run(params, len(params), grid, block, *order, ctypes.byref(check), _team(dll, block).address)
        if rc == -1:
            raise RuntimeError(f"{name}: argument of {len(params)} bytes, the kernel takes "
                               f"{self.param_size(name)}")
        if rc:
            raise RuntimeError(f"{name}: {block} threads a block, more than this thread's team of fibers")
        if mine and check.faults:
            raise Fault(f"{name}: {describe(check)}")


class _Team:
    """An OS thread's team of fibers (the harness's ``gb_team_t``, made by ``gb_team_new`` of any
    emulation library): the stacks every launch on the thread runs its block's threads on.  One
    per thread for the process, freed with the thread (``_teams``)."""

    def __init__(self, dll: ctypes.CDLL, fibers: int):
        new, self._free = dll.gb_team_new, dll.gb_team_free
        new.argtypes, new.restype = [ctypes.c_uint], ctypes.c_void_p
        self._free.argtypes, self._free.restype = [ctypes.c_void_p], None
        self.fibers, self.address = fibers, new(fibers)
        if not self.address:
            raise MemoryError(f"no memory for the stacks of {fibers} emulated threads ({fibers} x "
                              f"{STACK_KIB} KiB of address space and {2 * fibers} memory maps)")

    def __del__(self):
        if getattr(self, "address", None):
            self._free(self.address)


_teams = threading.local()


def _team(dll: ctypes.CDLL, fibers: int) -> _Team:
    """This thread's team, with at least ``fibers`` fibers (a smaller one is freed first)."""
    team = getattr(_teams, "team", None)
    if team is None or team.fibers < fibers:
        _teams.team = team = None
        _teams.team = team = _Team(dll, max(fibers, launch.BLOCK))
    return team


class Fault(RuntimeError):
    """What a GPU would do wrong or leave undefined (a hang, a race) in an emulated launch."""


#: gb_check_t::kind
FAULTS = {1: "outside the allocation of its operand", 2: "misaligned",
          3: "through an operand pointer in no allocation",
          4: "barrier divergence: a thread exited while others wait at __syncthreads()",
          5: "barrier divergence: threads wait at different __syncthreads() calls",
          6: "shared memory race: two threads access a byte in one barrier interval, one writing",
          7: "shared memory read of a byte not written since the block began (or since GB_SMEM_DEAD)",
          8: "shared memory access outside its buffer or misaligned"}


def describe(check: Check) -> str:
    """The first fault ``check`` recorded, in words, with the count."""
    k = check.kind
    if k in (4, 5):
        what = (f"thread {check.thread} exited while thread {check.other} waits" if k == 4 else
                f"threads {check.thread} and {check.other} wait at different calls")
        text = f"{FAULTS[k]} (block {check.block}: {what})"
    else:
        access = f"{'write' if check.is_write else 'read'} of {check.bytes} bytes at {check.addr:#x}"
        space = "shared buffer" if k >= 6 else "operand"
        what = FAULTS[k] + (f" (needs {check.align} bytes)" if k == 2 else "")
        other = f" and thread {check.other}" if k == 6 else ""
        text = f"{access} ({space} {check.base:#x}) by block {check.block}, thread {check.thread}{other}: {what}"
    return f"{text}; {check.faults} faults in the launch"


class Check(ctypes.Structure):
    """The harness's gb_check_t: allocation ranges in, the first fault out."""
    _fields_ = [(f, ctypes.c_void_p if f == "ranges" else ctypes.c_ulonglong)
                for f in ("ranges", "nranges", "faults", "kind", "addr", "bytes", "align", "base",
                          "is_write", "block", "thread", "memory_off", "other")]


class EmulatedBackend(HostArrays):
    """A backend computing NumPy arrays with the CUDA kernels under host emulation.

    It plugs into ``gpubcast.dispatch.apply`` like any backend (``registered``: under its name in
    ``gpubcast.backends``), so the whole path -- type resolution, casts, plans, out= and overlap
    handling, operand classes, packing, kernels -- runs without a GPU.
    NumPy arrays play device memory; 0-d inputs are host scalars (kernel arguments).
    ``grid``: launch this many blocks instead of the computed count (grid-stride check).
    ``index64_above``: take the 64-bit index path for outputs larger than this (the real
    threshold is 2**31 elements; a small one runs the 64-bit path on small arrays).
    ``order``: blocks and threads in this order (``Emulator.run_raw``; a block multiplier
    coprime with every grid, such as a large prime, makes it a permutation).
    Barrier divergence and shared-memory races raise ``Fault``.
    """

    name = "cuda-emulated"

    def __init__(self, emulator: Emulator, grid: int | None = None, index64_above: int | None = None,
                 order: tuple = (1, 0, 1, 0)):
        self.emulator = emulator
        self.grid = grid
        self.index64_above = index64_above
        self.order = order
        self.launches: list[launch.Launch] = []     # every launch made, for tests

    def execute(self, op, p, inputs, out):
        if self.index64_above is not None and p.size > self.index64_above:
            p = dataclasses.replace(p, index_bits=64)
        operands = [operand(x) for x in inputs]
        for lc in launch.plan_launches(op, p, operands, operand(out, output=True)):
            self.launches.append(lc)
            self.emulator.run(lc, self.grid, self.order)

    def execute_fused(self, program, p, inputs, out) -> bool:
        """A fused program's generated kernel (``gpubcast.cuda.fused``), as ``CudaBackend.execute_fused``."""
        from ..cuda import fused
        if not fused.fits(program):
            return False
        if self.index64_above is not None and p.size > self.index64_above:
            p = dataclasses.replace(p, index_bits=64)
        for lc in fused.launches(program, p, [operand(x) for x in inputs], operand(out, output=True)):
            self.launches.append(lc)
            generated_emulator(lc.family).run(lc, self.grid)
        return True


@functools.lru_cache(maxsize=64)
def generated_emulator(family: str) -> Emulator:
    """Host builds of every name expression of generated family ``family`` (``sources.register``)."""
    return Emulator([(family, name) for name in sources.generated_names(family)])


def operand(x, output: bool = False) -> launch.Operand:
    """A NumPy array as a launch operand: 0-d inputs are host values, others host memory."""
    if x.ndim == 0 and not output:
        return launch.Operand(x.dtype, 0, x.tobytes())
    return launch.Operand(x.dtype, x.__array_interface__["data"][0])


@functools.lru_cache(maxsize=1)
def available() -> str:
    """'' when the harness can build here, else why not."""
    try:
        hostbuild.compiler(PURPOSE)
        sources.host_include_dirs()
    except (RuntimeError, FileNotFoundError) as e:
        return str(e)
    return ""


def registered(backend: EmulatedBackend):
    """``backend`` reachable as ``backend=backend.name`` in every gpubcast call, for the block."""
    from .. import backends
    return backends.registered(backend.name, backend)
