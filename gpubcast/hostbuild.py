"""Host C++ builds: the system C++ compiler, and C++ text built into a shared library kept in
``gpubcast.cache``.

Used by gpubcast.ElementwiseKernel on NumPy arrays (``elementwise_build``, cache kind ``cpu``) and by
the host emulation of the CUDA kernels (``gpubcast.devtools.emulate``, kind ``emulation``).  A library
is named by a hash of its text, the compiler (path and ``--version``), its flags and include folders;
beside each ``.so`` an entry holds its SHA-256, checked before the library is handed out to be loaded
(a damaged or foreign ``.so`` is rebuilt, never loaded).  One process builds a library while the
others wait for it (a file lock).
"""

from __future__ import annotations

import functools
import hashlib
import os
import shutil
import subprocess
import tempfile
from pathlib import Path

from . import cache


class BuildError(RuntimeError):
    """The host C++ compiler rejected a translation unit; ``log`` holds its messages."""

    def __init__(self, message: str, log: str):
        super().__init__(message)
        self.log = log


def compiler(purpose: str) -> str:
    """The host C++ compiler: $CXX, else g++ or c++ on PATH (``purpose``: who needs it, for the error)."""
    cxx = os.environ.get("CXX") or shutil.which("g++") or shutil.which("c++")
    if not cxx:
        raise RuntimeError(f"{purpose} needs a C++ compiler (g++ or c++ on PATH, or $CXX); none found. "
                           f"Install one (e.g. apt-get install g++, dnf install gcc-c++, or conda install gxx)")
    return cxx


@functools.cache
def compiler_version(cxx: str) -> str:
    proc = subprocess.run([cxx, "--version"], capture_output=True, text=True)
    return proc.stdout.strip()


def build_library(kind: str, label: str, text: str, flags, includes=(), *, purpose: str) -> Path:
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
