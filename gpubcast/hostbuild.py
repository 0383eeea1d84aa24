"""Host C++ builds: the system C++ compiler, and C++ text built into a shared library kept in
``gpubcast.cache``.

Used by gpubcast.ElementwiseKernel on NumPy arrays (``elementwise_build``, cache kind ``cpu``) and by
the host emulation of the CUDA kernels (``gpubcast.devtools.emulate``, kind ``emulation``).  A library
is named by a hash of its text, the compiler (path and ``--version``), its flags and include folders;
beside each ``.so`` an entry holds its SHA-256, checked before the library is handed out to be loaded
(a damaged or foreign ``.so`` is rebuilt, never loaded).  One process builds a library while the
others wait for it (a file lock).

A build may come with a ``Header`` that its text includes: the header is written beside the text for
every build, and g++ is handed it precompiled (a ``.gch``, an entry of the same cache kind, proven
before use and copied beside the header), so that many small libraries sharing a large header
(the host emulation's harness and CUDA's headers) parse it once.  g++ ignores a ``.gch`` that does
not fit the build and reads the header's text instead: a build never depends on it.
"""

from __future__ import annotations

import functools
import hashlib
import os
import shutil
import subprocess
import tempfile
from dataclasses import dataclass
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


@dataclass(frozen=True)
class Header:
    """A header a build's text includes (``#include "name"``, before its first C token to be read
    precompiled), written beside the text."""

    name: str
    text: str


def build_library(kind: str, label: str, text: str, flags, includes=(), *, purpose: str,
                  header: Header | None = None) -> Path:
    """The shared library built from C++ ``text`` (with ``header`` beside it) with ``flags``: a proven
    entry of cache ``kind``, else built now (by one process at a time).  The key holds the text, the
    header, the compiler (path and ``--version``), the flags and the include folders.  ``BuildError``
    when the compiler fails."""
    cxx = compiler(purpose)
    texts = [text] if header is None else [text, header.name, header.text]
    key = "\0".join([kind, *(hashlib.sha256(t.encode()).hexdigest() for t in texts), cxx, compiler_version(cxx),
                     *flags, *includes])
    lib = cache.entry_path(kind, label, key, ".so")
    if lib is None:  # no usable cache directory: a private build, removed with the process's temp files
        lib = Path(tempfile.mkdtemp(prefix=f"gpubcast-{kind}-")) / f"{label}.so"
        _compile(cxx, flags, includes, text, lib, label, purpose, header)
        return lib
    stamp = lib.with_suffix(".sha256")
    if _proven(lib, stamp, key):
        return lib
    with cache.locked(lib):
        if not _proven(lib, stamp, key):  # another process may have built it meanwhile
            gch = None if header is None else precompiled(kind, header, cxx, flags, includes, purpose)
            _compile(cxx, flags, includes, text, lib, label, purpose, header, gch)
            cache.write(stamp, key, hashlib.sha256(lib.read_bytes()).digest())
    return lib


def precompiled(kind: str, header: Header, cxx: str, flags, includes=(), purpose: str = "") -> bytes | None:
    """``header`` precompiled by ``cxx`` for ``flags``: a proven entry of cache ``kind``, else compiled
    now (by one process at a time); None without a cache directory (a build would compile it each
    time) or when the compiler cannot precompile it (the build that includes it then reports why)."""
    if cache.directory(kind) is None:
        return None
    key = "\0".join(["precompiled header", kind, header.name, hashlib.sha256(header.text.encode()).hexdigest(),
                     cxx, compiler_version(cxx), *flags, *includes])
    try:
        return cache.get_or_make(kind, f"{header.name}-gch", key,
                                 lambda: _compile_header(cxx, flags, includes, header, purpose))
    except BuildError:
        return None


def _compile_header(cxx, flags, includes, header: Header, purpose: str) -> bytes:
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / header.name
        src.write_text(header.text)
        proc = subprocess.run([cxx, *flags, *includes, "-x", "c++-header", str(src), "-o", f"{src}.gch"],
                              capture_output=True, text=True)
        if proc.returncode:
            raise BuildError(f"{purpose} build of {header.name} (precompiled) failed ({cxx}):\n{proc.stderr[-6000:]}",
                             proc.stderr)
        return Path(f"{src}.gch").read_bytes()


def _proven(lib: Path, stamp: Path, key: str) -> bool:
    """Whether ``lib`` is the library ``stamp`` (an entry of ``key``) vouches for."""
    digest = cache.read(stamp, key)
    try:
        return digest is not None and hashlib.sha256(lib.read_bytes()).digest() == digest
    except OSError:
        return False


def _compile(cxx, flags, includes, text, lib: Path, label: str, purpose: str, header: Header | None = None,
             gch: bytes | None = None) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / f"{label}.cpp"
        src.write_text(text)
        if header is not None:  # found first: the folder of the text including it
            (Path(tmp) / header.name).write_text(header.text)
            if gch is not None:  # a private copy of the proven bytes
                (Path(tmp) / f"{header.name}.gch").write_bytes(gch)
        out = Path(tmp) / "build.so"
        proc = subprocess.run([cxx, *flags, *includes, str(src), "-o", str(out)],
                              capture_output=True, text=True)
        if proc.returncode:
            raise BuildError(f"{purpose} build of {label} failed ({cxx}):\n{proc.stderr[-6000:]}", proc.stderr)
        if not cache.write_file(lib, out.read_bytes()):
            raise RuntimeError(f"{purpose}: cannot write {lib}")
