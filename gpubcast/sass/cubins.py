"""One kernel compiled alone, as the runtime compiles it, and the CUDA tools' listings of its CUBIN:
what the SASS analysis (``resources``, ``interpreter``) reads.  No GPU needed.

Contract:

- ``compiled(family, name, arch)``: the CUBIN, its mangled symbol and NVRTC's log of the kernel
  compiled by ``compiler.compile_clean`` with the runtime's options plus ``VERBOSE``
  (``--ptxas-options=-v``: ptxas writes its report into the log; it changes only the CUBIN's
  toolkit-info note, not the code).
- ``listings(family, name, arch)``: that, plus ``cuobjdump -res-usage`` and ``nvdisasm -c -ndf`` of
  the CUBIN.  Both are kept in gpubcast's cache (kind ``nvrtc``), the tools' output keyed by the
  CUBIN's key and the tools' versions.
- The tools: the pip wheels' (nvidia-cuda-cuobjdump, nvidia-cuda-nvdisasm), a toolkit's
  (``$CUDA_PATH``, ``$CUDA_HOME``, /usr/local/cuda) or on PATH; ``unavailable()`` says why they or
  NVRTC cannot be used here ("" when they can).  Each run is stopped after ``TOOL_TIMEOUT_S``
  (``$GPUBCAST_TOOL_TIMEOUT`` overrides it).
"""

from __future__ import annotations

import functools
import json
import os
import shutil
import tempfile
from pathlib import Path

from .. import cache, external_tools
from ..cuda import compiler

VERBOSE = ("--ptxas-options=-v",)
#: seconds cuobjdump or nvdisasm may take on one CUBIN (they take well under one); ``--version``'s
#: (``$GPUBCAST_TOOL_TIMEOUT`` overrides both)
TOOL_TIMEOUT_S = 120
VERSION_TIMEOUT_S = 60


# ---- tools ----------------------------------------------------------------------------------------

def _tool_dirs() -> list[Path]:
    import importlib.util
    dirs = []
    spec = importlib.util.find_spec("nvidia")
    for base in (spec.submodule_search_locations or []) if spec else []:
        dirs += [Path(base) / "cu13" / "bin", Path(base) / "cu12" / "bin",
                 Path(base) / "cuda_cuobjdump" / "bin", Path(base) / "cuda_nvdisasm" / "bin"]
    for var in ("CUDA_PATH", "CUDA_HOME"):
        if os.environ.get(var):
            dirs.append(Path(os.environ[var]) / "bin")
    dirs.append(Path("/usr/local/cuda/bin"))
    return dirs


@functools.cache
def tool(name: str) -> str | None:
    """Path of CUDA tool ``name`` (cuobjdump, nvdisasm): the pip wheel's, a toolkit's, or on PATH."""
    for d in _tool_dirs():
        if (d / name).is_file() and os.access(d / name, os.X_OK):
            return str(d / name)
    return shutil.which(name)


def unavailable() -> str:
    """Why the report cannot be made here ("" when it can)."""
    try:
        compiler.nvrtc_module()
    except RuntimeError as e:
        return str(e)
    missing = [t for t in ("cuobjdump", "nvdisasm") if tool(t) is None]
    if missing:
        return (f"{' and '.join(missing)} not found: install the nvidia-cuda-cuobjdump and nvidia-cuda-nvdisasm "
                f"wheels (gpubcast[test]) or set CUDA_PATH to a CUDA toolkit")
    return ""


def _run_tool(name: str, args, cubin: bytes) -> str:
    with tempfile.TemporaryDirectory(prefix="gpubcast-res-") as d:
        path = Path(d) / "k.cubin"
        path.write_bytes(cubin)
        done = external_tools.run([tool(name), *args, str(path)], timeout=external_tools.timeout(TOOL_TIMEOUT_S),
                                  what=f"the resource report ({name} {' '.join(args)})")
    if done.returncode:
        raise RuntimeError(f"{name} {' '.join(args)} failed ({done.returncode}): {done.stderr.strip()[-2000:]}")
    return done.stdout


# ---- compiling (cached) ---------------------------------------------------------------------------

def _compile_key(family: str, name: str, arch: str) -> str:
    return "\0".join([compiler.cache_key(family, name, arch), "resources", *VERBOSE])


def clean_compile(family: str, name: str, arch: str, extra_options=VERBOSE) -> bytes:
    """JSON (symbol, NVRTC log) + NUL + CUBIN of one kernel, compiled by ``compiler.compile_clean``."""
    c = compiler.compile_clean(family, name, arch, tuple(extra_options))
    return json.dumps({"symbol": c.lowered[name], "log": c.log}).encode() + b"\0" + c.binary


def compiled(family: str, name: str, arch: str) -> tuple[bytes, str, str]:
    """(CUBIN, mangled symbol, NVRTC log with ptxas's report) of one kernel, compiled alone with
    the runtime options plus ``VERBOSE`` (``clean_compile``); from gpubcast's cache when a proven
    entry is there."""
    meta, _, cubin = cache.get_or_make("nvrtc", f"{family}-{arch}-resources", _compile_key(family, name, arch),
                                       lambda: clean_compile(family, name, arch)).partition(b"\0")
    info = json.loads(meta)
    return cubin, info["symbol"], info["log"]


@functools.cache
def tool_version(name: str) -> str:
    """The last line of ``name --version`` (e.g. ``Build cuda_13.5.r13.5/compiler.39125733_0``)."""
    done = external_tools.run([tool(name), "--version"], timeout=external_tools.timeout(VERSION_TIMEOUT_S),
                              what=f"{name} --version")
    return (done.stdout.strip().splitlines() or [""])[-1]


def listings(family: str, name: str, arch: str) -> tuple[bytes, str, str, str, str]:
    """(CUBIN, symbol, ptxas log, ``cuobjdump -res-usage`` text, ``nvdisasm -c -ndf`` text) of one
    kernel; the tools' output is cached too (keyed by the CUBIN's key and the tools' versions)."""
    cubin, symbol, log = compiled(family, name, arch)
    key = "\0".join([_compile_key(family, name, arch), "listings",
                     tool_version("cuobjdump"), tool_version("nvdisasm")])

    def make():
        return json.dumps({"res_usage": _run_tool("cuobjdump", ["-res-usage"], cubin),
                           "sass": _run_tool("nvdisasm", ["-c", "-ndf"], cubin)}).encode()
    info = json.loads(cache.get_or_make("nvrtc", f"{family}-{arch}-sass", key, make))
    return cubin, symbol, log, info["res_usage"], info["sass"]
