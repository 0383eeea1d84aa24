"""Kernel sources (``gpubcast/kernels/*.cu``) and the CUDA headers they include.

The sources live in the package, ``gpubcast/kernels/`` (package data: the same folder in a checkout
and in an installed wheel).  ``source(family)`` returns a family's
translation unit with gpubcast's own headers inlined, so that a hash of the text (the
compile cache key) changes whenever any header does.  The CUDA headers (cuda_fp16.h,
cuda_bf16.h, vector_types.h) are found the same way for NVRTC, for the host emulation
harness and on a GPU machine: the nvidia-cuda-runtime wheel, then $CUDA_PATH, $CUDA_HOME,
then /usr/local/cuda.
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import os
import re
from dataclasses import dataclass
from pathlib import Path

@dataclass(frozen=True)
class Family:
    """A kernel family: its file in ``kernels/``, the op kinds (``ops.Op.kind``) it computes and the
    input slots of its kernel argument (``launch``'s head)."""
    file: str
    kinds: tuple
    nin: int


#: every kernel family, the one table of their facts (``catalog``, ``launch`` and ``fused`` read it)
FAMILIES = {
    "unary": Family("unary.cu", ("unary",), 1),
    "binary": Family("binary.cu", ("binary",), 2),
    "ternary": Family("ternary.cu", ("ternary",), 3),
    "variadic": Family("variadic.cu", ("variadic", "quaternary", "parametric"), 8),   # kernels/variadic.cu MAX_IN
    "copy": Family("copy.cu", ("move",), 1),
}
#: op kind -> the family computing it
FAMILY_OF_KIND = {kind: name for name, f in FAMILIES.items() for kind in f.kinds}

_INCLUDE = re.compile(r'^\s*#\s*include\s+"([^"]+)"\s*$')


@functools.lru_cache(maxsize=1)
def kernel_dir() -> Path:
    """The folder holding the ``.cu`` files: the package's ``kernels/``."""
    folder = Path(__file__).resolve().parent.parent / "kernels"          # .../gpubcast/kernels
    if not (folder / "indexing.cuh").is_file():
        raise FileNotFoundError(f"gpubcast's CUDA kernel sources are missing from {folder}; reinstall gpubcast")
    return folder


def _inline(path: Path, seen: set) -> list[str]:
    if path.name in seen:       # every header is #pragma once
        return []
    seen.add(path.name)
    lines = [f"// ---- {path.name} ----"]
    for line in path.read_text().splitlines():
        m = _INCLUDE.match(line)
        if m:
            lines.extend(_inline(path.parent / m.group(1), seen))
        elif line.strip() != "#pragma once":
            lines.append(line)
    return lines


def source(family: str) -> str:
    """The family's translation unit, gpubcast's headers inlined (CUDA's stay #include <...>)."""
    generated = _GENERATED.get(family)
    if generated is not None:
        return generated[0]
    return _family_source(family)


@functools.cache
def _family_source(family: str) -> str:
    if family not in FAMILIES:
        raise ValueError(f"unknown kernel family {family!r}; families: {', '.join(FAMILIES)}")
    return "\n".join(_inline(kernel_dir() / FAMILIES[family].file, set())) + "\n"


def inline_headers(text: str) -> str:
    """``text`` (a generated translation unit) with gpubcast's headers (``#include "x.cuh"``) inlined."""
    lines, seen = [], set()
    for line in text.splitlines():
        m = _INCLUDE.match(line)
        lines.extend(_inline(kernel_dir() / m.group(1), seen) if m else [line])
    return "\n".join(lines) + "\n"


#: generated families (gpubcast.ElementwiseKernel): name -> (inlined source, name expressions, NVRTC options)
_GENERATED: dict[str, tuple[str, tuple[str, ...], tuple[str, ...]]] = {}


def register(family: str, text: str, names, options=()) -> None:
    """Make a generated translation unit a family: ``source(family)`` returns it (headers inlined),
    so the NVRTC compiler, its cache and the host emulation build it like ``kernels/*.cu``.
    ``family`` must name its text (e.g. a hash of it): one name, one source."""
    adopt(family, (inline_headers(text), tuple(names), tuple(options)))


def generated_entry(family: str):
    """The registered entry of generated family ``family`` (None for the families of kernels/), which
    ``adopt`` registers in another process."""
    return _GENERATED.get(family)


def adopt(family: str, entry) -> None:
    """Register ``entry`` (inlined source, name expressions, options) as generated family ``family``."""
    if _GENERATED.setdefault(family, entry) != entry:
        raise ValueError(f"generated kernel family {family!r} is registered with another source")


def system_includes(text: str) -> list[str]:
    """The ``#include <...>`` lines of ``text`` (comments dropped), in order, each once: what a host
    build's precompiled header includes for it."""
    return list(dict.fromkeys(line.split("//")[0].strip() for line in text.splitlines()
                              if line.startswith("#include <")))


def defines(options) -> list[str]:
    """The ``#define`` lines of the ``-DNAME[=VALUE]`` options among NVRTC ``options`` (host builds of a
    generated family take its definitions this way)."""
    return [f"#define {o[2:].partition('=')[0]} {o[2:].partition('=')[2] or 1}" for o in options
            if o.startswith("-D")]


def generated_names(family: str) -> tuple[str, ...] | None:
    """The name expressions of generated family ``family`` (None for the families of kernels/)."""
    entry = _GENERATED.get(family)
    return None if entry is None else entry[1]


def extra_options(family: str) -> tuple[str, ...]:
    """NVRTC options a generated family asks for (ElementwiseKernel's ``options=``)."""
    entry = _GENERATED.get(family)
    return () if entry is None else entry[2]


def source_hash(family: str) -> str:
    return hashlib.sha256(source(family).encode()).hexdigest()[:16]


def _candidate_roots() -> list[Path]:
    roots = []
    spec = importlib.util.find_spec("nvidia")
    for base in (spec.submodule_search_locations or []) if spec else []:
        roots += [Path(base) / "cu13" / "include", Path(base) / "cu12" / "include",
                  Path(base) / "cuda_runtime" / "include"]
    for var in ("CUDA_PATH", "CUDA_HOME"):
        if os.environ.get(var):
            roots.append(Path(os.environ[var]) / "include")
    roots.append(Path("/usr/local/cuda/include"))
    return roots


def _first_with(relative: str, roots) -> Path | None:
    for root in roots:
        for d in (root, root / "cccl"):
            if (d / relative).is_file():
                return d
    return None


@functools.lru_cache(maxsize=1)
def cuda_include_dir() -> Path:
    """The folder with cuda_fp16.h / cuda_bf16.h / vector_types.h (all NVRTC needs)."""
    found = _first_with("cuda_fp16.h", _candidate_roots())
    if found is None:
        raise FileNotFoundError(
            "CUDA headers (cuda_fp16.h) not found: install gpubcast[cuda13] (or [cuda12]), which brings "
            "the nvidia-cuda-runtime wheel, or set CUDA_PATH to a CUDA toolkit; looked in "
            + ", ".join(map(str, _candidate_roots())))
    return found


@functools.lru_cache(maxsize=1)
def cuda_headers_stamp() -> str:
    """A hash of the CUDA headers the kernels include (for cache keys: a new CUDA runtime wheel or
    toolkit retires every kernel built against the old headers)."""
    inc = cuda_include_dir()
    h = hashlib.sha256()
    for name in ("cuda_fp16.h", "cuda_fp16.hpp", "cuda_bf16.h", "cuda_bf16.hpp", "vector_types.h"):
        path = inc / name
        h.update(name.encode() + b"\0" + (path.read_bytes() if path.exists() else b"-"))
    return h.hexdigest()


@functools.lru_cache(maxsize=1)
def host_include_dirs() -> tuple[Path, ...]:
    """Include folders for compiling the kernels as host C++ (g++): the NVRTC folder plus
    where crt/host_defines.h and nv/target live (a CUDA toolkit, or the nvidia-cuda-crt
    and nvidia-cuda-cccl wheels)."""
    roots = _candidate_roots()
    dirs = [cuda_include_dir()]
    for relative in ("crt/host_defines.h", "nv/target"):
        found = _first_with(relative, [dirs[0]] + roots)
        if found is None:
            raise FileNotFoundError(
                f"host emulation needs {relative} from a CUDA toolkit (or the nvidia-cuda-crt / "
                f"nvidia-cuda-cccl wheels); looked in {', '.join(map(str, roots))}")
        if found not in dirs:
            dirs.append(found)
    return tuple(dirs)
