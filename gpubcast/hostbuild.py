"""Host C++ builds: the system C++ compiler, and C++ text built into a shared library kept in
``gpubcast.cache``.

Used by gpubcast.ElementwiseKernel on NumPy arrays (``elementwise_build``, cache kind ``cpu``) and by
the host emulation of the CUDA kernels (``gpubcast.testing.emulate``, kind ``emulation``).  A library
is named by a hash of its text, the compiler (path and ``--version``), its flags and include folders;
beside each ``.so`` an entry holds its SHA-256, checked before the library is handed out to be loaded
(a damaged or foreign ``.so`` is rebuilt, never loaded).  One process builds a library while the
others wait for it (a file lock, held at most the build's timeout).

Every run of the compiler has a timeout (``external_tools``: ``VERSION_TIMEOUT_S`` for ``--version``,
``BUILD_TIMEOUT_S`` or the caller's for a build; ``$GPUBCAST_TOOL_TIMEOUT`` overrides them): a compiler
that never returns raises ``external_tools.ToolTimeout``, never hangs its caller.  Without a usable
cache directory a library is built privately: into a temporary folder of this process that
``release`` removes once the caller has loaded the library (the loaded library needs no file) and
that is removed at exit in any case, so private builds never pile up.

A build may come with a ``Header`` that its text includes: the header is written beside the text for
every build, and g++ is handed it precompiled (a ``.gch``, an entry of the same cache kind, proven
before use and copied beside the header), so that many small libraries sharing a large header
(the host emulation's harness and CUDA's headers) parse it once.  g++ ignores a ``.gch`` that does
not fit the build and reads the header's text instead: a build never depends on it.
"""

from __future__ import annotations

import atexit
import hashlib
import os
import shutil
import tempfile
import threading
from dataclasses import dataclass
from pathlib import Path

from . import cache, external_tools

#: seconds ``$CXX --version`` may take (it answers at once; a wrapper waiting on a network does not)
VERSION_TIMEOUT_S = 30
#: seconds one build may take by default (the host emulation's largest library: ~6 s on an idle
#: 2-core machine); ``$GPUBCAST_TOOL_TIMEOUT`` overrides it
BUILD_TIMEOUT_S = 300


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


_versions: dict = {}   # compiler -> its --version text, or the error asking for it raised (raised again)


def compiler_version(cxx: str) -> str:
    """What ``cxx --version`` prints; ``ToolTimeout`` when it does not answer within its timeout
    (remembered: asked again, the same error comes at once), OSError when it cannot run."""
    found = _versions.get(cxx)
    if found is None:
        try:
            found = external_tools.run([cxx, "--version"], timeout=external_tools.timeout(VERSION_TIMEOUT_S),
                                       what=f"{cxx} --version").stdout.strip()
        except external_tools.ToolTimeout as e:
            found = e
        _versions[cxx] = found
    if isinstance(found, Exception):
        raise found
    return found


@dataclass(frozen=True)
class Header:
    """A header a build's text includes (``#include "name"``, before its first C token to be read
    precompiled), written beside the text."""

    name: str
    text: str


def build_library(kind: str, label: str, text: str, flags, includes=(), *, purpose: str,
                  header: Header | None = None, timeout: float = BUILD_TIMEOUT_S) -> Path:
    """The shared library built from C++ ``text`` (with ``header`` beside it) with ``flags``: a proven
    entry of cache ``kind``, else built now (by one process at a time), each compiler run within
    ``timeout`` seconds (``$GPUBCAST_TOOL_TIMEOUT`` overrides it).  The key holds the text, the
    header, the compiler (path and ``--version``), the flags and the include folders.  Without a
    usable cache directory, a private build: ``release`` it once loaded.  ``BuildError`` when the
    compiler fails, ``external_tools.ToolTimeout`` when it runs over."""
    cxx = compiler(purpose)
    seconds = external_tools.timeout(timeout)
    texts = [text] if header is None else [text, header.name, header.text]
    key = "\0".join([kind, *(hashlib.sha256(t.encode()).hexdigest() for t in texts), cxx, compiler_version(cxx),
                     *flags, *includes])
    lib = cache.entry_path(kind, label, key, ".so")
    if lib is None:  # no usable cache directory: a private build
        folder = _private_folder(kind)
        try:
            _compile(cxx, flags, includes, text, folder / f"{label}.so", label, purpose, seconds, header)
        except BaseException:
            _remove_private(folder)
            raise
        return folder / f"{label}.so"
    stamp = lib.with_suffix(".sha256")
    if _proven(lib, stamp, key):
        return lib
    with cache.locked(lib, timeout=seconds):
        if not _proven(lib, stamp, key):  # another process may have built it meanwhile
            gch = None if header is None else precompiled(kind, header, cxx, flags, includes, purpose, seconds)
            _compile(cxx, flags, includes, text, lib, label, purpose, seconds, header, gch)
            cache.write(stamp, key, hashlib.sha256(lib.read_bytes()).digest())
    return lib


_private: dict = {}   # this process's private build folders -> the process id that made them
_private_lock = threading.Lock()   # held for a dict update only, never while a tool runs


def _private_folder(kind: str) -> Path:
    """A new temporary folder for one private build, removed by ``release`` or at exit."""
    folder = Path(tempfile.mkdtemp(prefix=f"gpubcast-{kind}-"))
    with _private_lock:
        _private[folder] = os.getpid()
    return folder


def release(lib: Path) -> None:
    """Remove ``lib``'s folder if it is a private build (a loaded library needs no file); a cache
    entry stays."""
    if lib.parent in _private:
        _remove_private(lib.parent)


def _remove_private(folder: Path) -> None:
    with _private_lock:
        owner = _private.pop(folder, None)
    if owner == os.getpid():   # a forked child leaves its parent's folders alone
        shutil.rmtree(folder, ignore_errors=True)


@atexit.register
def _remove_every_private() -> None:
    for folder in list(_private):
        _remove_private(folder)


def precompiled(kind: str, header: Header, cxx: str, flags, includes=(), purpose: str = "",
                timeout: float = BUILD_TIMEOUT_S) -> bytes | None:
    """``header`` precompiled by ``cxx`` for ``flags``: a proven entry of cache ``kind``, else compiled
    now (by one process at a time, within ``timeout`` seconds); None without a cache directory (a
    build would compile it each time) or when the compiler cannot precompile it (the build that
    includes it then reports why).  ``external_tools.ToolTimeout`` when it runs over."""
    if cache.directory(kind) is None:
        return None
    key = "\0".join(["precompiled header", kind, header.name, hashlib.sha256(header.text.encode()).hexdigest(),
                     cxx, compiler_version(cxx), *flags, *includes])
    try:
        return cache.get_or_make(kind, f"{header.name}-gch", key,
                                 lambda: _compile_header(cxx, flags, includes, header, purpose, timeout),
                                 lock_timeout=timeout)
    except BuildError:
        return None


def _compile_header(cxx, flags, includes, header: Header, purpose: str, timeout: float) -> bytes:
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / header.name
        src.write_text(header.text)
        proc = external_tools.run([cxx, *flags, *includes, "-x", "c++-header", str(src), "-o", f"{src}.gch"],
                                  timeout=timeout, what=f"{purpose} build of {header.name} (precompiled)")
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


def _compile(cxx, flags, includes, text, lib: Path, label: str, purpose: str, timeout: float,
             header: Header | None = None, gch: bytes | None = None) -> None:
    with tempfile.TemporaryDirectory() as tmp:
        src = Path(tmp) / f"{label}.cpp"
        src.write_text(text)
        if header is not None:  # found first: the folder of the text including it
            (Path(tmp) / header.name).write_text(header.text)
            if gch is not None:  # a private copy of the proven bytes
                (Path(tmp) / f"{header.name}.gch").write_bytes(gch)
        out = Path(tmp) / "build.so"
        proc = external_tools.run([cxx, *flags, *includes, str(src), "-o", str(out)], timeout=timeout,
                                  what=f"{purpose} build of {label}")
        if proc.returncode:
            raise BuildError(f"{purpose} build of {label} failed ({cxx}):\n{proc.stderr[-6000:]}", proc.stderr)
        if not cache.write_file(lib, out.read_bytes()):
            raise RuntimeError(f"{purpose}: cannot write {lib}")
