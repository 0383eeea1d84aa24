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
"""

_RUNNER = """
template <typename P> static int gb_run(void (*kernel)(P), const void* params, unsigned long long nbytes,
                                        unsigned grid) {{
  if (nbytes != sizeof(P)) return -1;
  P p;
  memcpy(&p, params, sizeof(P));
  gridDim = dim3(grid, 1, 1);
  blockDim = dim3(gb::BLOCK, 1, 1);
  for (unsigned b = 0; b < grid; ++b) {{
    blockIdx = dim3(b, 1, 1);
    for (unsigned t = 0; t < (unsigned)gb::BLOCK; ++t) {{
      threadIdx = dim3(t, 1, 1);
      kernel(p);
    }}
  }}
  return 0;
}}
template <typename P> static unsigned long long gb_param_size(void (*)(P)) {{ return sizeof(P); }}
"""

_ENTRY = """
extern "C" int gb_run_{i}(const void* params, unsigned long long nbytes, unsigned grid) {{
  return gb_run(&{name}, params, nbytes, grid);
}}
extern "C" int gb_ept_{i}() {{ return {ept}; }}
extern "C" unsigned long long gb_size_{i}() {{ return gb_param_size(&{name}); }}
"""


def compiler() -> str:
    cxx = os.environ.get("CXX") or shutil.which("g++") or shutil.which("c++")
    if not cxx:
        raise RuntimeError("host emulation needs a C++ compiler (g++); none found on PATH")
    return cxx


def _ept_expr(name: str) -> str:
    """``gb::binary_contig<A, B>`` -> ``gb::binary_contig_ept<A, B>`` (the kernel's EPT constant)."""
    head, _, rest = name.partition("<")
    return f"{head}_ept<{rest}"


def translation_unit(family: str, names: list[str]) -> str:
    parts = [_PRELUDE.format(family=family), sources.source(family), _RUNNER.format()]
    for i, name in enumerate(names):
        parts.append(_ENTRY.format(i=i, name=name, ept=_ept_expr(name)))
    return "".join(parts)


@functools.lru_cache(maxsize=None)
def _compiler_version(cxx: str) -> str:
    proc = subprocess.run([cxx, "--version"], capture_output=True, text=True)
    return proc.stdout.strip()


def build(family: str, names: list[str]) -> Path:
    """The shared library holding ``names`` of ``family``: a proven cached build, else built now."""
    cxx = compiler()
    includes = [f"-I{d}" for d in sources.host_include_dirs()]
    text = translation_unit(family, names)
    key = "\0".join(["emulation", hashlib.sha256(text.encode()).hexdigest(), cxx, _compiler_version(cxx),
                     *CXX_FLAGS, *includes])
    lib = cache.entry_path("emulation", family, key, ".so")
    if lib is None:  # no usable cache directory: a private build, removed with the process's temp files
        lib = Path(tempfile.mkdtemp(prefix="gpubcast-emulation-")) / f"{family}.so"
        _compile(cxx, includes, text, lib, family)
        return lib
    stamp = lib.with_suffix(".sha256")
    if _proven(lib, stamp, key):
        return lib
    with cache.locked(lib):
        if not _proven(lib, stamp, key):  # another process may have built it meanwhile
            _compile(cxx, includes, text, lib, family)
            cache.write(stamp, key, hashlib.sha256(lib.read_bytes()).digest())
    return lib


def _proven(lib: Path, stamp: Path, key: str) -> bool:
    """Whether ``lib`` is the library ``stamp`` (an entry of ``key``) vouches for."""
    digest = cache.read(stamp, key)
    try:
        return digest is not None and hashlib.sha256(lib.read_bytes()).digest() == digest
    except OSError:
        return False


def _compile(cxx, includes, text, lib: Path, family: str) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / f"{family}_emulated.cpp"
        src.write_text(text)
        out = Path(tmp) / "build.so"
        proc = subprocess.run([cxx, *CXX_FLAGS, *includes, str(src), "-o", str(out)],
                              capture_output=True, text=True)
        if proc.returncode:
            raise RuntimeError(f"host emulation build of {family}.cu failed ({cxx}):\n{proc.stderr[-6000:]}")
        if not cache.write_file(lib, out.read_bytes()):
            raise RuntimeError(f"host emulation: cannot write {lib}")


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
                run.argtypes = [ctypes.c_char_p, ctypes.c_ulonglong, ctypes.c_uint]
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
        rc = self._entry(lc.name)[0](lc.params, len(lc.params), grid or lc.grid)
        if rc:
            raise RuntimeError(f"{lc.name}: argument of {len(lc.params)} bytes, the kernel takes "
                               f"{self.param_size(lc.name)}")


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
