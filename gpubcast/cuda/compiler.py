"""NVRTC compilation of the kernels: no GPU needed (``cupy.cuda.nvrtc`` directly).

One NVRTC program per (family, instantiations, arch): the family's inlined source plus one
name expression per instantiation; the result is a CUBIN for ``sm_XX`` (or PTX for a
virtual ``compute_XX``) and the lowered (mangled) name of every instantiation.

Why not ``cupy.RawModule(code=...)``: CuPy appends ``-ftz=true`` to every NVRTC compile,
which flushes float32 subnormals to zero (NumPy keeps them), and it asks the device for its
architecture.  So gpubcast compiles here, with its own options, caches the CUBIN on disk
(key: the inlined source -- headers included, cupy issue #941 --, the instantiations, the
options, the NVRTC version and a stamp of the CUDA headers), and loads it with ``cupy.RawModule(path=...)``.
"""

from __future__ import annotations

import functools
import hashlib
import json
import os
from dataclasses import dataclass
from pathlib import Path

from . import sources

#: NumPy-exact floating point: no FMA contraction, subnormals kept, IEEE division
BASE_OPTIONS = ("-std=c++17", "--fmad=false", "-ftz=false", "-prec-div=true", "-prec-sqrt=true")
#: for ``kernels --check --fast``: every instantiation through NVRTC, optimiser at its cheapest
FAST_OPTIONS = ("--Ofast-compile=max",)


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
                           f"(cupy-cuda13x with nvidia-cuda-nvrtc)") from None
    return nvrtc


def nvrtc_version() -> tuple[int, int]:
    return tuple(nvrtc_module().getVersion())


def supported_archs() -> tuple[int, ...]:
    """Real architectures this NVRTC compiles for (e.g. 75, 80, ..., 120)."""
    return tuple(int(a) for a in nvrtc_module().getSupportedArchs())


def options(arch: str, fast: bool = False) -> tuple[str, ...]:
    return (f"--gpu-architecture={arch}", *BASE_OPTIONS, f"-I{sources.cuda_include_dir()}",
            *(FAST_OPTIONS if fast else ()))


def compile_family(family: str, names, arch: str, *, fast: bool = False) -> Compiled:
    """Compile ``names`` (name expressions) of ``family`` for ``arch`` in one NVRTC program."""
    nvrtc = nvrtc_module()
    names = list(names)
    prog = nvrtc.createProgram(sources.source(family), f"{family}.cu", [], [])
    try:
        for name in names:
            nvrtc.addNameExpression(prog, name)
        try:
            nvrtc.compileProgram(prog, list(options(arch, fast)))
        except nvrtc.NVRTCError as e:
            log = nvrtc.getProgramLog(prog)
            raise CompileError(f"NVRTC could not compile {family}.cu for {arch} ({e}):\n{log[-8000:]}") from None
        log = nvrtc.getProgramLog(prog)
        binary = nvrtc.getCUBIN(prog) if arch.startswith("sm_") else nvrtc.getPTX(prog)
        lowered = {name: nvrtc.getLoweredName(prog, name) for name in names}
    finally:
        nvrtc.destroyProgram(prog)
    return Compiled(family, arch, binary, lowered, log)


def cache_dir() -> Path:
    root = os.environ.get("GPUBCAST_CACHE_DIR") or Path.home() / ".cache" / "gpubcast"
    return Path(root) / "nvrtc"


@functools.lru_cache(maxsize=None)
def cached_kernel(family: str, name: str, arch: str) -> tuple[Path, str]:
    """(path of the CUBIN/PTX holding ``name``, its mangled symbol), compiled once per cache."""
    opts = options(arch)
    key = hashlib.sha256("\0".join([sources.source(family), name, *opts, repr(nvrtc_version()),
                                    sources.cuda_headers_stamp()]).encode()).hexdigest()[:24]
    base = cache_dir() / f"{family}-{key}"
    binary_path = base.with_suffix(".cubin" if arch.startswith("sm_") else ".ptx")
    meta_path = base.with_suffix(".json")
    if binary_path.exists() and meta_path.exists():
        return binary_path, json.loads(meta_path.read_text())["lowered"]
    compiled = compile_family(family, [name], arch)
    base.parent.mkdir(parents=True, exist_ok=True)
    for path, data in ((binary_path, compiled.binary),
                       (meta_path, json.dumps({"name": name, "lowered": compiled.lowered[name]}).encode())):
        tmp = path.with_name(f"{path.name}.{os.getpid()}.tmp")
        tmp.write_bytes(data)
        os.replace(tmp, path)
    return binary_path, compiled.lowered[name]


def arch_for(compute_capability: str) -> str:
    """NVRTC target for a device of ``compute_capability`` (e.g. "90"): its own CUBIN when
    this NVRTC knows it, else PTX for the newest architecture it knows (the driver JITs it)."""
    cc = int(compute_capability)
    known = supported_archs()
    if cc in known:
        return f"sm_{cc}"
    return f"compute_{max(a for a in known if a <= cc)}"
