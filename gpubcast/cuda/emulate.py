"""Host emulation: the real kernel bodies of ``kernels/*.cu``, compiled as host C++ and run on
the CPU over NumPy memory.

The same inlined source NVRTC compiles is built with g++ against the CUDA headers
(``sources.host_include_dirs``): ``__global__`` and friends expand to nothing (CUDA's own
host_defines.h), ``threadIdx / blockIdx / blockDim / gridDim`` are thread-local ``dim3``
variables, and a loop over the launch grid calls the kernel once per (block, thread).
Launches come from ``gpubcast.cuda.launch`` exactly as the CUDA backend's do, with host
pointers in place of device pointers.  So the vector path, the scalar kernel arguments, the
strided path, magic division and the 64-bit path all run here as they will on a GPU
(warps, memory ordering and NVRTC's optimiser excepted).

Shared libraries are kept in ``gpubcast.cache`` (kind ``emulation``), named by a hash of the
translation unit (source and instantiations), the compiler (path and ``--version``), its flags and
include folders; beside each ``.so`` an entry holds its SHA-256, checked before the library is
loaded (a damaged or foreign ``.so`` is rebuilt, never loaded).  One process builds a library while
the others wait for it (a file lock).
"""

from __future__ import annotations

import concurrent.futures
import contextlib
import ctypes
import dataclasses
import functools
import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from .. import cache
from ..backends.reference import HostArrays
from . import catalog, launch, sources

CXX_FLAGS = ("-std=c++17", "-O0", "-fPIC", "-shared", "-ffp-contract=off", "-fno-strict-aliasing",
             "-w")

_PRELUDE = """\
// gpubcast host emulation harness (generated): the kernels of {family}.cu as host C++
#include <vector_types.h>
#include <string.h>
#define __launch_bounds__(...)
thread_local dim3 threadIdx, blockIdx, blockDim, gridDim;

// Access checking (kernels/indexing.cuh GB_PTR): with a gb_check_t set for the launch, every
// global access must lie inside the allocation its operand's pointer points into and be aligned
// to its type; a faulting access is recorded and redirected to scratch memory.
struct gb_check_t {{
  const unsigned long long* ranges;   // sorted [begin, end) pairs of live allocations
  unsigned long long nranges;
  unsigned long long faults;          // number of faulting accesses
  unsigned long long kind;            // first fault: 1 outside, 2 misaligned, 3 base in no allocation
  unsigned long long addr, bytes, align, base, is_write, block, thread;
}};
static thread_local gb_check_t* gb_check_state = 0;
alignas(64) static thread_local unsigned char gb_scratch[64];

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
  gb_check_t* c = gb_check_state;
  if (c->faults++ == 0) {{
    c->kind = kind; c->addr = a; c->bytes = bytes; c->align = align;
    c->base = (unsigned long long)base; c->is_write = is_write;
    c->block = blockIdx.x; c->thread = threadIdx.x;
  }}
  return false;
}}

template <typename P> static P gb_checked(P p, const void* base, bool is_write) {{
  if (!gb_check_state || gb_access_ok((const void*)p, sizeof(*p), alignof(decltype(*p)), base, is_write))
    return p;
  return (P)(void*)gb_scratch;
}}
#define GB_PTR(p, base, is_write) gb_checked((p), (const void*)(base), (is_write))
"""

_RUNNER = """
// One launch: blocks in the order b -> (b * bmul + badd) % grid, threads t -> (t * tmul + tadd) % block
// (permutations when the multipliers are coprime with the counts).
template <typename P> static int gb_run(void (*kernel)(P), const void* params, unsigned long long nbytes,
                                        unsigned grid, unsigned block, unsigned long long bmul,
                                        unsigned long long badd, unsigned tmul, unsigned tadd,
                                        gb_check_t* check) {{
  if (nbytes != sizeof(P)) return -1;
  P p;
  memcpy(&p, params, sizeof(P));
  gridDim = dim3(grid, 1, 1);
  blockDim = dim3(block, 1, 1);
  gb_check_state = check;
  for (unsigned long long b = 0; b < grid; ++b) {{
    blockIdx = dim3((unsigned)((b * bmul + badd) % grid), 1, 1);
    for (unsigned t = 0; t < block; ++t) {{
      threadIdx = dim3((unsigned)(((unsigned long long)t * tmul + tadd) % block), 1, 1);
      kernel(p);
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
                          gb_check_t* check) {{
  return gb_run(&{name}, params, nbytes, grid, block, bmul, badd, tmul, tadd, check);
}}
extern "C" int gb_ept_{i}() {{ return {ept}; }}
extern "C" unsigned long long gb_size_{i}() {{ return gb_param_size(&{name}); }}
"""


class BuildError(RuntimeError):
    """The host C++ compiler rejected a translation unit; ``log`` holds its messages."""

    def __init__(self, message: str, log: str):
        super().__init__(message)
        self.log = log


def compiler(purpose: str = "host emulation") -> str:
    """The host C++ compiler: $CXX, else g++ or c++ on PATH."""
    cxx = os.environ.get("CXX") or shutil.which("g++") or shutil.which("c++")
    if not cxx:
        raise RuntimeError(f"{purpose} needs a C++ compiler (g++ or c++ on PATH, or $CXX); none found. "
                           f"Install one (e.g. apt-get install g++, dnf install gcc-c++, or conda install gxx)")
    return cxx


def _ept_expr(name: str) -> str:
    """``gb::binary_contig<A, B>`` -> ``gb::binary_contig_ept<A, B>`` (the kernel's EPT constant)."""
    head, _, rest = name.partition("<")
    return f"{head}_ept<{rest}"


def translation_unit(family: str, names: list[str]) -> str:
    defines = sources.defines(sources.extra_options(family))      # a generated family's NVRTC -D options
    parts = [_PRELUDE.format(family=family), *(d + "\n" for d in defines),
             sources.source(family), _RUNNER.format()]
    for i, name in enumerate(names):
        parts.append(_ENTRY.format(i=i, name=name, ept=_ept_expr(name)))
    return "".join(parts)


@functools.lru_cache(maxsize=None)
def compiler_version(cxx: str) -> str:
    proc = subprocess.run([cxx, "--version"], capture_output=True, text=True)
    return proc.stdout.strip()


def build(family: str, names: list[str]) -> Path:
    """The shared library holding ``names`` of ``family``: a proven cached build, else built now."""
    includes = [f"-I{d}" for d in sources.host_include_dirs()]
    return build_library("emulation", family, translation_unit(family, names), CXX_FLAGS, includes)


def build_library(kind: str, label: str, text: str, flags, includes=(), purpose: str = "host emulation") -> Path:
    """The shared library built from C++ ``text`` with ``flags``: a proven entry of cache ``kind``,
    else built now (by one process at a time).  The key holds the text, the compiler (path and
    ``--version``), the flags and the include folders.  ``BuildError`` when the compiler fails."""
    cxx = compiler(purpose)
    key = "\0".join([kind, hashlib.sha256(text.encode()).hexdigest(), cxx, compiler_version(cxx), *flags,
                     *includes])
    lib = cache.entry_path(kind, label, key, ".so")
    if lib is None:  # no usable cache directory: a private build, removed with the process's temp files
        lib = Path(tempfile.mkdtemp(prefix=f"gpubcast-{kind}-")) / f"{label}.so"
        _compile(cxx, flags, includes, text, lib, label, purpose)
        return lib
    stamp = lib.with_suffix(".sha256")
    if _proven(lib, stamp, key):
        return lib
    with cache.locked(lib):
        if not _proven(lib, stamp, key):  # another process may have built it meanwhile
            _compile(cxx, flags, includes, text, lib, label, purpose)
            cache.write(stamp, key, hashlib.sha256(lib.read_bytes()).digest())
    return lib


def _proven(lib: Path, stamp: Path, key: str) -> bool:
    """Whether ``lib`` is the library ``stamp`` (an entry of ``key``) vouches for."""
    digest = cache.read(stamp, key)
    try:
        return digest is not None and hashlib.sha256(lib.read_bytes()).digest() == digest
    except OSError:
        return False


def _compile(cxx, flags, includes, text, lib: Path, label: str, purpose: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / f"{label}.cpp"
        src.write_text(text)
        out = Path(tmp) / "build.so"
        proc = subprocess.run([cxx, *flags, *includes, str(src), "-o", str(out)],
                              capture_output=True, text=True)
        if proc.returncode:
            raise BuildError(f"{purpose} build of {label} failed ({cxx}):\n{proc.stderr[-6000:]}", proc.stderr)
        if not cache.write_file(lib, out.read_bytes()):
            raise RuntimeError(f"{purpose}: cannot write {lib}")


CHUNK = 96    # instantiations per shared library: parallel g++ runs, smaller rebuilds


class Emulator:
    """Runs launches of the kernels it was built with on the CPU.

    ``kernels``: iterable of ``catalog.Kernels`` (all three variants of each are built) or
    of (family, name expression) pairs.  Libraries are built ``jobs`` at a time.
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
        chunks = [(family, names[i:i + CHUNK]) for family, names in wanted.items()
                  for i in range(0, len(names), CHUNK)]
        with concurrent.futures.ThreadPoolExecutor(max(1, jobs)) as pool:
            libs = list(pool.map(lambda chunk: build(*chunk), chunks))
        for (family, names), lib in zip(chunks, libs):
            dll = ctypes.CDLL(str(lib))
            for i, name in enumerate(names):
                run = getattr(dll, f"gb_run_{i}")
                run.argtypes = [ctypes.c_char_p, ctypes.c_ulonglong, ctypes.c_uint, ctypes.c_uint,
                                ctypes.c_ulonglong, ctypes.c_ulonglong, ctypes.c_uint, ctypes.c_uint,
                                ctypes.POINTER(Check)]
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

    def run(self, lc: launch.Launch, grid: int | None = None) -> None:
        """Execute one launch (``grid`` overrides the launch's block count: any >= 1 is valid)."""
        self.run_raw(lc.name, lc.params, grid or lc.grid)

    def run_raw(self, name: str, params: bytes, grid: int, block: int = launch.BLOCK,
                order: tuple = (1, 0, 1, 0), check: "Check | None" = None) -> None:
        """Run kernel ``name`` on argument bytes ``params`` with ``grid`` blocks of ``block`` threads,
        blocks and threads visited in the order ``order`` = (bmul, badd, tmul, tadd) gives (block b
        runs as (b * bmul + badd) % grid, likewise threads), accesses checked against ``check``."""
        rc = self._entry(name)[0](params, len(params), grid, block, *order,
                                  ctypes.byref(check) if check is not None else None)
        if rc:
            raise RuntimeError(f"{name}: argument of {len(params)} bytes, the kernel takes "
                               f"{self.param_size(name)}")


class Check(ctypes.Structure):
    """The harness's gb_check_t: allocation ranges in, the first faulting access out."""
    _fields_ = [(f, ctypes.c_void_p if f == "ranges" else ctypes.c_ulonglong)
                for f in ("ranges", "nranges", "faults", "kind", "addr", "bytes", "align", "base",
                          "is_write", "block", "thread")]


class EmulatedBackend(HostArrays):
    """A backend computing NumPy arrays with the CUDA kernels under host emulation.

    It plugs into ``gpubcast.dispatch.apply`` like any backend (register it in
    ``gpubcast.backends._instances``), so the whole path -- type resolution, casts, plans,
    out= and overlap handling, operand classes, packing, kernels -- runs without a GPU.
    NumPy arrays play device memory; 0-d inputs are host scalars (kernel arguments).
    ``grid``: launch this many blocks instead of the computed count (grid-stride check).
    ``index64_above``: take the 64-bit index path for outputs larger than this (the real
    threshold is 2**31 elements; a small one runs the 64-bit path on small arrays).
    """

    name = "cuda-emulated"

    def __init__(self, emulator: Emulator, grid: int | None = None, index64_above: int | None = None):
        self.emulator = emulator
        self.grid = grid
        self.index64_above = index64_above
        self.launches: list[launch.Launch] = []     # every launch made, for tests

    def execute(self, op, p, inputs, out):
        if self.index64_above is not None and p.size > self.index64_above:
            p = dataclasses.replace(p, index_bits=64)
        operands = [operand(x) for x in inputs]
        for lc in launch.plan_launches(op, p, operands, operand(out, output=True)):
            self.launches.append(lc)
            self.emulator.run(lc, self.grid)

    def execute_fused(self, program, p, inputs, out) -> bool:
        """A fused program's generated kernel (``gpubcast.cuda.fused``), as ``CudaBackend.execute_fused``."""
        from . import fused
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
        compiler()
        sources.host_include_dirs()
    except (RuntimeError, FileNotFoundError) as e:
        return str(e)
    return ""


@contextlib.contextmanager
def registered(backend: EmulatedBackend):
    """``backend`` reachable as ``backend=backend.name`` in every gpubcast call, for the block."""
    from .. import backends
    previous = backends._instances.get(backend.name)
    backends._instances[backend.name] = backend
    try:
        yield backend
    finally:
        if previous is None:
            backends._instances.pop(backend.name, None)
        else:
            backends._instances[backend.name] = previous
