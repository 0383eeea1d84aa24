"""gpubcast's one on-disk cache of compiled code: where it is, how an entry is written and proven
before use, and its upkeep (``python -m gpubcast cache``).

Layout: ``<root>/<gpubcast version>/<kind>/<entry files>``.  ``root`` is ``$GPUBCAST_CACHE_DIR``, or
the user's cache directory (platformdirs: ``~/.cache/gpubcast`` on Linux), never the package's own
directory (installed packages are often read-only).  Kinds: ``numba`` (the CPU backend's compiled
functions), ``nvrtc`` (CUBIN/PTX of the CUDA kernels), ``emulation`` (host builds of the kernels),
``cpu`` (host builds of ``gpubcast.ElementwiseKernel`` user kernels for NumPy arrays).

An entry is one file: a header (magic, length of the key, SHA-256 of key and payload, length of the
payload), the key, the payload.  The key is a text naming everything the payload was made from
(sources, versions, target); the file's name is a digest of the key.  So:

- a reader proves an entry before it uses a byte of it: the key must equal the one asked for and
  the digest must match.  Anything else (truncated, garbage, another entry's bytes, an old format)
  is a miss: the file is removed and the caller compiles again;
- a writer writes a temporary file in the same directory and renames it over the entry
  (``os.replace``): readers see a whole old file or a whole new one, never a part;
- there is no index shared by entries, so processes writing at once never write one file with
  different contents (one key, one meaning).

A cache directory that cannot be written is not an error: callers compile in memory, and a
``CacheWarning`` says so once.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import struct
import time
import uuid
import warnings
from dataclasses import dataclass
from pathlib import Path

from .version import __version__

KINDS = ("numba", "nvrtc", "emulation", "cpu")
#: ``--prune``'s default size cap
DEFAULT_MAX_BYTES = 1 << 30

_MAGIC = b"GBCACHE1"
_HEADER = struct.Struct("<8sI32sQ")  # magic, key length, sha256(key + payload), payload length


class CacheWarning(UserWarning):
    """The cache directory cannot be used; gpubcast compiles in memory instead."""


def root() -> Path:
    """The cache's root: ``$GPUBCAST_CACHE_DIR``, else the user's cache directory."""
    env = os.environ.get("GPUBCAST_CACHE_DIR")
    if env:
        return Path(env).expanduser()
    import platformdirs
    return Path(platformdirs.user_cache_dir("gpubcast", appauthor=False))


_WARNED: set = set()
_USABLE: dict = {}


def _warn_once(path: Path, why: str) -> None:
    """One ``CacheWarning`` per process and cache root."""
    if str(root()) not in _WARNED:
        _WARNED.add(str(root()))
        warnings.warn(f"gpubcast: cache directory {path} cannot be used ({why}); compiled code is kept in "
                      f"memory only. Set GPUBCAST_CACHE_DIR to a writable directory to cache it.",
                      CacheWarning, stacklevel=3)


def directory(kind: str) -> Path | None:
    """The directory of ``kind``'s entries for this gpubcast version, created on first use; None
    (after one ``CacheWarning``) when it neither exists nor can be created.  A directory that
    exists but cannot be written still serves its entries (writes then warn once)."""
    path = root() / __version__ / kind
    ok = _USABLE.get(path)
    if ok is None:
        try:
            path.mkdir(parents=True, exist_ok=True)
            ok = True
        except OSError as e:
            ok = path.is_dir()
            if not ok:
                _warn_once(path, f"{type(e).__name__}: {e.strerror or e}")
        _USABLE[path] = ok
    return path if ok else None


def entry_path(kind: str, label: str, key: str, suffix: str = ".entry") -> Path | None:
    """Where the entry of ``key`` lives (``label``: a readable prefix for the file name)."""
    d = directory(kind)
    if d is None:
        return None
    digest = hashlib.sha256(key.encode()).hexdigest()[:40]
    safe = "".join(c if c.isalnum() or c in "._-" else "_" for c in label)[:80]
    return d / f"{safe}-{digest}{suffix}"


def _digest(key: bytes, payload: bytes) -> bytes:
    h = hashlib.sha256(key)
    h.update(payload)
    return h.digest()


def encode(key: str, payload: bytes) -> bytes:
    """An entry's bytes."""
    k = key.encode()
    return _HEADER.pack(_MAGIC, len(k), _digest(k, payload), len(payload)) + k + payload


def decode(data: bytes, key: str) -> bytes | None:
    """The payload of entry bytes ``data`` if they are a whole entry of ``key``, else None."""
    if len(data) < _HEADER.size:
        return None
    magic, klen, digest, plen = _HEADER.unpack_from(data)
    k = key.encode()
    if magic != _MAGIC or klen != len(k) or _HEADER.size + klen + plen != len(data):
        return None
    stored_key = data[_HEADER.size:_HEADER.size + klen]
    payload = data[_HEADER.size + klen:]
    if stored_key != k or _digest(stored_key, payload) != digest:
        return None
    return payload


def read(path: Path | None, key: str) -> bytes | None:
    """The payload of the entry at ``path`` if it is a whole entry of ``key``; None (and the file
    removed) otherwise."""
    if path is None:
        return None
    try:
        data = path.read_bytes()
    except OSError:
        return None
    payload = decode(data, key)
    if payload is None:
        discard(path)
        return None
    with contextlib.suppress(OSError):
        os.utime(path)  # recently used: pruned last
    return payload


def write(path: Path | None, key: str, payload: bytes) -> bool:
    """Write the entry of ``key`` at ``path`` atomically; False (after one warning) if it cannot be
    written."""
    if path is None:
        return False
    return write_file(path, encode(key, payload))


def write_file(path: Path, data: bytes) -> bool:
    """Write ``data`` to ``path`` atomically (a temporary file renamed over it)."""
    tmp = path.with_name(f"{path.name}.tmp-{uuid.uuid4().hex[:16]}")
    try:
        path.parent.mkdir(parents=True, exist_ok=True)  # removed by a ``cache --clear`` meanwhile
        with open(tmp, "wb") as f:
            f.write(data)
        os.replace(tmp, path)
        return True
    except OSError as e:
        with contextlib.suppress(OSError):
            tmp.unlink()
        _warn_once(path.parent, f"{type(e).__name__}: {e.strerror or e}")
        return False


def discard(path: Path) -> None:
    with contextlib.suppress(OSError):
        path.unlink()


@contextlib.contextmanager
def locked(path: Path | None, timeout: float = 600):
    """Hold an inter-process lock on ``path`` (one process compiles an entry, the others wait for
    it and then read it).  Without a usable directory (``path`` None), no lock."""
    if path is None:
        yield
        return
    import filelock
    lock = filelock.FileLock(f"{path}.lock", timeout=timeout)
    try:
        lock.acquire()
    except (OSError, filelock.Timeout):
        yield  # cannot lock: compile anyway (entries are written atomically)
        return
    try:
        yield
    finally:
        lock.release()


def get_or_make(kind: str, label: str, key: str, make) -> bytes:
    """The payload of ``key``: a proven entry, else ``make()`` (by one process at a time: the
    others wait, then read its entry), stored."""
    path = entry_path(kind, label, key)
    payload = read(path, key)
    if payload is None:
        with locked(path):
            payload = read(path, key)  # another process may have made it meanwhile
            if payload is None:
                payload = make()
                write(path, key, payload)
    return payload


# --- upkeep ------------------------------------------------------------------------------------------

@dataclass(frozen=True)
class Entry:
    path: Path
    size: int
    mtime: float

    @property
    def version(self) -> str:
        return self.path.parent.parent.name

    @property
    def kind(self) -> str:
        return self.path.parent.name


def entries(base: Path | None = None) -> list[Entry]:
    """Every file under the cache root (every version and kind), oldest first."""
    base = root() if base is None else base
    found = []
    if not base.is_dir():
        return found
    for dirpath, _, files in os.walk(base):
        for name in files:
            p = Path(dirpath) / name
            try:
                st = p.stat()
            except OSError:
                continue
            found.append(Entry(p, st.st_size, st.st_mtime))
    return sorted(found, key=lambda e: e.mtime)


def clear(base: Path | None = None) -> int:
    """Remove every entry; the number of files removed."""
    found = entries(base)
    for e in found:
        discard(e.path)
    _remove_empty_dirs(root() if base is None else base)
    return len(found)


def prune(max_bytes: int = DEFAULT_MAX_BYTES, base: Path | None = None) -> tuple[int, int]:
    """Remove the least recently used files until the cache holds at most ``max_bytes``, and
    leftover temporary files more than an hour old (lock files only then too): (files removed,
    bytes removed)."""
    found = entries(base)
    total = sum(e.size for e in found)
    removed = freed = 0
    stale = time.time() - 3600
    for e in found:
        if e.path.suffix == ".lock" and e.mtime >= stale:
            continue  # maybe held right now: removing it would let a second process in
        if total - freed > max_bytes or (".tmp-" in e.path.name and e.mtime < stale):
            discard(e.path)
            removed += 1
            freed += e.size
    _remove_empty_dirs(root() if base is None else base)
    return removed, freed


def _remove_empty_dirs(base: Path) -> None:
    for dirpath, _, _ in sorted(os.walk(base), key=lambda t: -len(t[0])):
        if Path(dirpath) != base:
            with contextlib.suppress(OSError):
                os.rmdir(dirpath)
