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
``CacheWarning`` says so once.  Nor is a root that is ``/``, the home directory or a folder above
it: gpubcast neither writes a cache there nor cleans one.

The folders gpubcast creates (the root, its version and kind folders) are mode 0700 whatever the
umask: they hold code gpubcast loads.  A root whose version folder gpubcast creates gets a
``CACHEDIR.TAG`` (https://bford.info/cachedir/) unless it holds something else (a tag marks the
whole folder as disposable) or has one already.

Upkeep (``clear``, ``prune``) removes gpubcast's entry files only: regular files (never a link)
named ``<label>-<40 hex digits><suffix>`` (a suffix in ``SUFFIXES``), or such a name plus ``.lock``
or ``.tmp-<16 hex digits>``, lying in ``<root>/<version>/<kind>/`` with a kind in ``KINDS`` and a
version folder named like a version; then those version and kind folders when left empty.  It never
removes the root, ``CACHEDIR.TAG`` or anything else, and refuses the roots gpubcast never writes.
"""

from __future__ import annotations

import contextlib
import hashlib
import os
import re
import struct
import time
import uuid
import warnings
from dataclasses import dataclass
from pathlib import Path

from .version import __version__

KINDS = ("numba", "nvrtc", "emulation", "cpu")
#: entry files' suffixes: ``write``'s entries, hostbuild.py's shared libraries and their stamps
SUFFIXES = (".entry", ".so", ".sha256")
#: ``--prune``'s default size cap
DEFAULT_MAX_BYTES = 1 << 30
#: seconds a process waits for another one's build of the same entry before it builds it itself
LOCK_TIMEOUT_S = 600

_MAGIC = b"GBCACHE1"
_HEADER = struct.Struct("<8sI32sQ")  # magic, key length, sha256(key + payload), payload length

#: a version folder's name (PEP 440, with a local part)
_VERSION_NAME = re.compile(r"\d+(\.\d+)*((a|b|rc)\d+)?(\.post\d+)?(\.dev\d+)?(\+[A-Za-z0-9.]+)?")
#: the names of ``entry_path``'s files, their ``locked`` lock files and ``write_file``'s temporary files
_ENTRY_NAME = re.compile(r"[\w.-]{0,80}-[0-9a-f]{40}(" + "|".join(map(re.escape, SUFFIXES))
                         + r")(\.lock|\.tmp-[0-9a-f]{16})?")
TAG = "CACHEDIR.TAG"
_TAG_TEXT = ("Signature: 8a477f597d28d172789f06886806bc55\n"
             "# This file is a cache directory tag created by gpubcast: the folder holds compiled code\n"
             "# that gpubcast makes again when it is missing (python -m gpubcast cache --clear).\n"
             "# For information about cache directory tags, see https://bford.info/cachedir/\n")


class CacheWarning(UserWarning):
    """The cache directory cannot be used; gpubcast compiles in memory instead."""


class CacheRootError(ValueError):
    """The cache root is one gpubcast never cleans (``/``, the home directory or a folder above it)."""


def root() -> Path:
    """The cache's root: ``$GPUBCAST_CACHE_DIR``, else the user's cache directory."""
    env = os.environ.get("GPUBCAST_CACHE_DIR")
    if env:
        return Path(env).expanduser()
    import platformdirs
    return Path(platformdirs.user_cache_dir("gpubcast", appauthor=False))


def unsafe(base: Path) -> str | None:
    """Why gpubcast must neither write nor clean a cache rooted at ``base`` (``/``, the home
    directory or a folder above it); None when it may."""
    where = Path(os.path.realpath(base))
    if where == Path(where.anchor):
        return "it is the file system's root"
    for home in _homes():
        if where == home:
            return "it is your home directory"
        if where in home.parents:
            return f"it holds your home directory {home}"
    return None


def _homes() -> set:
    """The user's home directory: ``$HOME`` and the password database's (they may differ)."""
    homes = set()
    with contextlib.suppress(RuntimeError, KeyError):
        homes.add(Path.home())
    with contextlib.suppress(ImportError, KeyError):
        import pwd
        homes.add(Path(pwd.getpwuid(os.getuid()).pw_dir))
    return {Path(os.path.realpath(h)) for h in homes if h.is_absolute()}


def _refusal(base: Path, why: str) -> str:
    """A message saying which root was refused, why, and where it came from."""
    env = os.environ.get("GPUBCAST_CACHE_DIR")
    source = f"GPUBCAST_CACHE_DIR={env}" if env else "GPUBCAST_CACHE_DIR is not set"
    return (f"cache root {base} ({source}): {why}. Set GPUBCAST_CACHE_DIR to a folder for gpubcast's "
            f"cache alone, such as ~/.cache/gpubcast")


_WARNED: set = set()
_USABLE: dict = {}


def _warn_once(path: Path, why: str) -> None:
    """One ``CacheWarning`` per process and cache root."""
    if str(root()) not in _WARNED:
        _WARNED.add(str(root()))
        warnings.warn(f"gpubcast: cache directory {path} cannot be used ({why}); compiled code is kept in "
                      f"memory only. Set GPUBCAST_CACHE_DIR to a writable folder of its own to cache it.",
                      CacheWarning, stacklevel=3)


def directory(kind: str) -> Path | None:
    """The directory of ``kind``'s entries for this gpubcast version, created on first use; None
    (after one ``CacheWarning``) when it neither exists nor can be created, or the root is
    ``unsafe``.  A directory that exists but cannot be written still serves its entries (writes
    then warn once)."""
    if kind not in KINDS:
        raise ValueError(f"cache kind {kind!r} is not one of {KINDS} (the only folders upkeep cleans)")
    base = root()
    path = base / __version__ / kind
    ok = _USABLE.get(path)
    if ok is None:
        why = unsafe(base)
        if why:
            ok = False
            _warn_once(base, f"{why}; GPUBCAST_CACHE_DIR={os.environ.get('GPUBCAST_CACHE_DIR', '')}")
        else:
            try:
                _make_kind_dir(path)
                ok = True
            except OSError as e:
                ok = path.is_dir()
                if not ok:
                    _warn_once(path, f"{type(e).__name__}: {e.strerror or e}")
        _USABLE[path] = ok
    return path if ok else None


def _make_kind_dir(path: Path) -> None:
    """Create kind folder ``path`` and the folders above it that are missing, each 0700 whatever
    the umask; tag the root when its version folder is created here."""
    created = []
    missing = [p for p in (path, *path.parents) if not p.is_dir()]
    for p in reversed(missing):
        try:
            p.mkdir(mode=0o700)
        except FileExistsError:
            if not p.is_dir():
                raise
            continue  # made by another process meanwhile: it sets the mode
        os.chmod(p, 0o700)  # mkdir's mode is masked by the umask
        created.append(p)
    if path.parent in created:
        _tag(path.parent.parent)


def _tag(base: Path) -> None:
    """Write ``base``'s CACHEDIR.TAG unless it has one or holds anything but version folders."""
    try:
        with os.scandir(base) as it:
            if any(not _is_version_dir(e) for e in it):
                return  # a tag would mark the user's files as disposable to backup tools
        with open(base / TAG, "x") as f:  # "x": never overwrites
            f.write(_TAG_TEXT)
    except OSError:
        pass  # the tag is a courtesy to backup tools; the cache works without it


def entry_path(kind: str, label: str, key: str, suffix: str = ".entry") -> Path | None:
    """Where the entry of ``key`` lives (``label``: a readable prefix for the file name)."""
    if suffix not in SUFFIXES:
        raise ValueError(f"entry suffix {suffix!r} is not one of {SUFFIXES} (the only names upkeep cleans)")
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
        if not path.parent.is_dir():
            _make_kind_dir(path.parent)  # removed by a ``cache --clear`` meanwhile
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
def locked(path: Path | None, timeout: float = LOCK_TIMEOUT_S):
    """Hold an inter-process lock on ``path`` (one process compiles an entry, the others wait for
    it, at most ``timeout`` seconds, and then read it).  Without a usable directory (``path`` None)
    or past the timeout, no lock (entries are written atomically)."""
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


def get_or_make(kind: str, label: str, key: str, make, lock_timeout: float = LOCK_TIMEOUT_S) -> bytes:
    """The payload of ``key``: a proven entry, else ``make()`` (by one process at a time: the
    others wait, at most ``lock_timeout`` seconds, then read its entry), stored."""
    path = entry_path(kind, label, key)
    payload = read(path, key)
    if payload is None:
        with locked(path, lock_timeout):
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


def scan(base: Path | None = None) -> tuple[list[Entry], list[Path]]:
    """gpubcast's entry files under the cache root (every version and kind), oldest first, and the
    other things found beside them (files or folders, not descended into: left alone)."""
    base = root() if base is None else base
    found, other = [], []
    for top in _children(base):
        if not _is_version_dir(top):
            if top.name != TAG:
                other.append(Path(top.path))
            continue
        for kind in _children(top.path):
            if kind.name not in KINDS or not kind.is_dir(follow_symlinks=False):
                other.append(Path(kind.path))
                continue
            for f in _children(kind.path):
                try:
                    if _ENTRY_NAME.fullmatch(f.name) and f.is_file(follow_symlinks=False):
                        st = f.stat(follow_symlinks=False)
                        found.append(Entry(Path(f.path), st.st_size, st.st_mtime))
                        continue
                except OSError:
                    continue  # removed meanwhile
                other.append(Path(f.path))
    return sorted(found, key=lambda e: e.mtime), other


def entries(base: Path | None = None) -> list[Entry]:
    """gpubcast's entry files under the cache root (every version and kind), oldest first."""
    return scan(base)[0]


def _children(path) -> list:
    try:
        with os.scandir(path) as it:
            return list(it)
    except OSError:
        return []


def _is_version_dir(e: os.DirEntry) -> bool:
    """Whether ``e`` is a version folder (a folder, not a link to one)."""
    return (e.name == __version__ or bool(_VERSION_NAME.fullmatch(e.name))) and e.is_dir(follow_symlinks=False)


def _checked(base: Path | None) -> Path:
    """The root to clean; ``CacheRootError`` when it is ``unsafe``."""
    base = root() if base is None else base
    why = unsafe(base)
    if why:
        raise CacheRootError(f"refusing to clean {_refusal(base, why)}")
    return base


def clear(base: Path | None = None) -> int:
    """Remove every entry file (every version and kind), then the version and kind folders left
    empty; the number of files removed."""
    base = _checked(base)
    found = entries(base)
    for e in found:
        discard(e.path)
    _remove_empty_dirs(base)
    return len(found)


def prune(max_bytes: int = DEFAULT_MAX_BYTES, base: Path | None = None) -> tuple[int, int]:
    """Remove the least recently used entry files until the cache holds at most ``max_bytes``, and
    leftover temporary files more than an hour old (lock files only then too): (files removed,
    bytes removed)."""
    base = _checked(base)
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
    _remove_empty_dirs(base)
    return removed, freed


def _remove_empty_dirs(base: Path) -> None:
    """Remove the kind and version folders (not links) that are empty; never ``base`` itself."""
    for version in _children(base):
        if _is_version_dir(version):
            for kind in _children(version.path):
                if kind.name in KINDS and kind.is_dir(follow_symlinks=False):
                    with contextlib.suppress(OSError):
                        os.rmdir(kind.path)
            with contextlib.suppress(OSError):
                os.rmdir(version.path)
