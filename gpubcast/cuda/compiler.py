"""NVRTC compilation of the kernels: no GPU needed (``cupy.cuda.nvrtc`` directly).

One NVRTC program per (family, instantiations, arch): the family's inlined source plus one
name expression per instantiation; the result is a CUBIN for ``sm_XX`` (or PTX for a
virtual ``compute_XX``) and the lowered (mangled) name of every instantiation.

Why not ``cupy.RawModule(code=...)``: CuPy appends ``-ftz=true`` to every NVRTC compile,
which flushes float32 subnormals to zero (NumPy keeps them), and it asks the device for its
architecture.  So gpubcast compiles here, with its own options, and keeps the CUBIN as an entry of
``gpubcast.cache`` (kind ``nvrtc``; key: a hash of the inlined source -- headers included, cupy
issue #941 --, the instantiation, the options, the NVRTC version and a hash of the CUDA headers),
proven before use; the backend loads the bytes with ``cupy.cuda.function.Module.load``.

The CUBIN is read through ``libnvrtc`` itself (``nvrtcGetCUBINSize`` / ``nvrtcGetCUBIN``):
CuPy 14's ``nvrtc.getCUBIN`` drops the last byte of the binary (it strips a trailing NUL as for
PTX), leaving an ELF file one byte short.
"""

from __future__ import annotations

import ctypes
import ctypes.util
import functools
import hashlib
import json
from dataclasses import dataclass

from .. import cache
from . import sources

#: NumPy-exact floating point: no FMA contraction, subnormals kept, IEEE division
BASE_OPTIONS = ("-std=c++17", "--fmad=false", "-ftz=false", "-prec-div=true", "-prec-sqrt=true")
#: for ``kernels --check --fast``: every instantiation through NVRTC, optimiser at its cheapest
FAST_OPTIONS = ("--Ofast-compile=max",)


#: whether this process has compiled with FAST_OPTIONS: NVRTC 13.5 keeps state across programs, and
#: every later program of the process compiles differently (seen: where f32 general64 for sm_90,
#: 79 registers in a fresh process, 85 after one --Ofast-compile=max program); ``compile_clean``
#: (the runtime kernels, gpubcast.sass.resources) compiles in a fresh process then
_fast_compiled = False


def fast_compiled() -> bool:
    """Whether a ``fast`` (``--Ofast-compile=max``) program was compiled in this process."""
    return _fast_compiled


class CompileError(RuntimeError):
    """NVRTC rejected a kernel source; the message holds NVRTC's log."""


@dataclass(frozen=True)
class Compiled:
    family: str
    arch: str                      # e.g. "sm_90" (CUBIN) or "compute_90" (PTX)
    binary: bytes                  # CUBIN or PTX
    lowered: dict                  # name expression -> mangled symbol
    log: str

    @property
    def kind(self) -> str:
        return "cubin" if self.arch.startswith("sm_") else "ptx"


def nvrtc_module():
    try:
        from cupy.cuda import nvrtc
        nvrtc.getVersion()
    except Exception as e:  # noqa: BLE001 - any failure means NVRTC is unusable
        raise RuntimeError(f"NVRTC is not usable ({type(e).__name__}: {e}); install gpubcast[cuda13] "
                           f"(CuPy and NVRTC for CUDA 13) or gpubcast[cuda12], or a CUDA toolkit") from None
    return nvrtc


def nvrtc_version() -> tuple[int, int]:
    return tuple(nvrtc_module().getVersion())


def supported_archs() -> tuple[int, ...]:
    """Real architectures this NVRTC compiles for (e.g. 75, 80, ..., 120)."""
    return tuple(int(a) for a in nvrtc_module().getSupportedArchs())


def options(arch: str, fast: bool = False) -> tuple[str, ...]:
    return (f"--gpu-architecture={arch}", *BASE_OPTIONS, f"-I{sources.cuda_include_dir()}",
            *(FAST_OPTIONS if fast else ()))


def compile_family(family: str, names, arch: str, *, fast: bool = False, extra_options=()) -> Compiled:
    """Compile ``names`` (name expressions) of ``family`` for ``arch`` in one NVRTC program
    (``extra_options`` appended, e.g. ``--ptxas-options=-v`` for ptxas's report in the log)."""
    global _fast_compiled
    nvrtc = nvrtc_module()
    names = list(names)
    _fast_compiled = _fast_compiled or fast
    prog = nvrtc.createProgram(sources.source(family), f"{family}.cu", [], [])
    try:
        for name in names:
            nvrtc.addNameExpression(prog, name)
        try:
            nvrtc.compileProgram(prog, [*options(arch, fast), *sources.extra_options(family), *extra_options])
        except nvrtc.NVRTCError as e:
            log = nvrtc.getProgramLog(prog)
            raise CompileError(f"NVRTC could not compile {family}.cu for {arch} ({e}):\n{log[-8000:]}") from None
        log = nvrtc.getProgramLog(prog)
        binary = _cubin(prog) if arch.startswith("sm_") else nvrtc.getPTX(prog)
        lowered = {name: nvrtc.getLoweredName(prog, name) for name in names}
    finally:
        nvrtc.destroyProgram(prog)
    return Compiled(family, arch, binary, lowered, log)


def _libnvrtc():
    """The NVRTC library CuPy has loaded (found by its soname among the loaded libraries)."""
    major = nvrtc_version()[0]
    try:
        return ctypes.CDLL(f"libnvrtc.so.{major}")
    except OSError:
        name = ctypes.util.find_library("nvrtc")
        if name is None:
            raise RuntimeError(f"libnvrtc.so.{major} not found") from None
        return ctypes.CDLL(name)


def _cubin(prog) -> bytes:
    """The whole CUBIN of compiled program ``prog`` (a CuPy ``nvrtcProgram`` handle)."""
    lib = _libnvrtc()
    size = ctypes.c_size_t()
    handle = ctypes.c_void_p(prog)
    if lib.nvrtcGetCUBINSize(handle, ctypes.byref(size)):
        raise CompileError("nvrtcGetCUBINSize failed")
    buf = ctypes.create_string_buffer(size.value)
    if lib.nvrtcGetCUBIN(handle, buf):
        raise CompileError("nvrtcGetCUBIN failed")
    return buf.raw


def compile_clean(family: str, name: str, arch: str, extra_options=()) -> Compiled:
    """``compile_family`` of one instantiation with the runtime options (plus ``extra_options``):
    in this process, or in a fresh one once this process has compiled a ``fast`` program, so that
    what is cached never depends on what the process compiled before."""
    if not _fast_compiled:
        return compile_family(family, [name], arch, extra_options=extra_options)
    return _fresh_pool().submit(_compile_generated, family, sources.generated_entry(family), name, arch,
                                tuple(extra_options)).result()


def _compile_generated(family: str, entry, name: str, arch: str, extra_options) -> Compiled:
    """``compile_family`` in the fresh process, a generated family registered there first (its entry
    comes from the parent: the fresh process has never seen it)."""
    if entry is not None:
        sources.adopt(family, entry)
    return compile_family(family, [name], arch, extra_options=extra_options)


@functools.lru_cache(maxsize=1)
def _fresh_pool():
    """One spawned worker process (started on first need) for ``compile_clean``."""
    import atexit
    import concurrent.futures
    import multiprocessing
    pool = concurrent.futures.ProcessPoolExecutor(1, mp_context=multiprocessing.get_context("spawn"))
    atexit.register(pool.shutdown)    # before interpreter teardown (else its weakref callback fails there)
    return pool


def cache_key(family: str, name: str, arch: str) -> str:
    """The cache key of instantiation ``name`` of ``family`` for ``arch``: everything its binary
    is made from."""
    return _program_key(family, (name,), arch)


def _program_key(family: str, names, arch: str, fast: bool = False) -> str:
    """Everything the program of ``names`` of ``family`` for ``arch`` is made from."""
    source = hashlib.sha256(sources.source(family).encode()).hexdigest()
    return "\0".join(["nvrtc fast" if fast else "nvrtc", family, *names, arch, *options(arch, fast),
                      *sources.extra_options(family), repr(nvrtc_version()), sources.cuda_headers_stamp(), source])


@functools.lru_cache(maxsize=4096)    # a kernel dropped here is read again from the disk cache
def cached_kernel(family: str, name: str, arch: str) -> tuple[bytes, str]:
    """(CUBIN or PTX holding ``name``, its mangled symbol): from the cache when a proven entry is
    there, else compiled (by one process at a time) and stored."""
    def make():
        compiled = compile_clean(family, name, arch)
        return compiled.lowered[name].encode() + b"\0" + compiled.binary

    payload = cache.get_or_make("nvrtc", f"{family}-{arch}", cache_key(family, name, arch), make)
    lowered, _, binary = payload.partition(b"\0")
    return binary, lowered.decode()


def fast_program(family: str, names: tuple, target: str) -> tuple[bytes, dict]:
    """(PTX, name expression -> mangled symbol) of one ``fast`` program of ``names`` for virtual
    architecture ``target`` (``compute_XX``): from the cache when a proven entry is there, else
    compiled (by one process at a time) and stored.  ``kernels --check --fast`` and the virtual CUDA
    device ask for the same programs (``catalog.fast_programs``): whichever runs first compiles them."""
    key = _program_key(family, names, target, fast=True)

    def make():
        compiled = compile_family(family, names, target, fast=True)
        return json.dumps(compiled.lowered).encode() + b"\0" + compiled.binary

    lowered, _, ptx = cache.get_or_make("nvrtc", f"{family}-{target}-fast", key, make).partition(b"\0")
    return ptx, json.loads(lowered)


def arch_for(compute_capability: str) -> str:
    """NVRTC target for a device of ``compute_capability`` (e.g. "90"): its own CUBIN when
    this NVRTC knows it, else PTX for the newest architecture it knows (the driver JITs it)."""
    cc = int(compute_capability)
    known = supported_archs()
    if cc in known:
        return f"sm_{cc}"
    return f"compute_{max(a for a in known if a <= cc)}"
