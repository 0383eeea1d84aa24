"""What the cache may touch (issue D1): ``python -m gpubcast cache --clear``/``--prune`` remove only
gpubcast's own entry files and the version and kind folders they leave empty, wherever
``GPUBCAST_CACHE_DIR`` points; ``/``, the home directory and the folders above it are refused; the
folders gpubcast creates are private (0700) and its root carries a ``CACHEDIR.TAG``.

Every check compares whole file trees before and after.  Nothing here runs against the real ``/``
or home directory: the refusals are checked with file system calls that fail the test if reached.
"""

from __future__ import annotations

import contextlib
import os
import stat
import subprocess
import sys
import warnings
from pathlib import Path

import pytest

from gpubcast import cache
from gpubcast.__main__ import main

from tests.support import ROOT

V = cache.__version__
HEX = "0123456789abcdef" * 2 + "01234567"            # 40 hex digits, as in an entry's name
SIGNATURE = "Signature: 8a477f597d28d172789f06886806bc55"

#: a user's files where GPUBCAST_CACHE_DIR points, some named or placed like gpubcast's
USER_FILES = {
    "notes.txt": b"buy milk\n",
    "Documents/thesis.tex": b"\\documentclass{article}\n" * 50,
    ".ssh/id_ed25519": b"-----BEGIN OPENSSH PRIVATE KEY-----\n",
    f"f-{HEX}.entry": b"named like an entry, in the root",
    f"{V}/notes-{HEX}.entry": b"named like an entry, in a version folder",
    f"{V}/numba/README": b"not an entry's name, in a kind folder",
    f"{V}/numba/f-{HEX}.entry.bak": b"an entry's name and more",
    f"{V}/numba/f-{HEX[:39]}.entry": b"39 hex digits",
    f"{V}/numba/f-{HEX}.entry.tmp-0123": b"a temporary file's name but 4 hex digits",
    f"{V}/mine/f-{HEX}.entry": b"an entry's name, in a folder that is no kind",
    f"photos/numba/f-{HEX}.entry": b"an entry's name, in a folder that is no version",
    f"0.0.1/numba/sub/f-{HEX}.entry": b"an entry's name, one folder too deep",
}


def _seed(base: Path, files: dict) -> None:
    for rel, data in files.items():
        p = base / rel
        p.parent.mkdir(parents=True, exist_ok=True)
        p.write_bytes(data)


def _tree(base: Path) -> dict:
    """Every file, folder and link under ``base``: bytes, "dir" or ("link", target); links not followed."""
    out = {}
    for dirpath, dirs, files in os.walk(base):
        for name in dirs + files:
            p = Path(dirpath) / name
            rel = str(p.relative_to(base))
            if p.is_symlink():
                out[rel] = ("link", os.readlink(p))
            elif p.is_dir():
                out[rel] = "dir"
            else:
                out[rel] = p.read_bytes()
    return out


@pytest.fixture
def fresh(monkeypatch):
    """The cache module's per-process memory of usable directories and warnings, emptied."""
    monkeypatch.setattr(cache, "_USABLE", {})
    monkeypatch.setattr(cache, "_WARNED", set())


def _gpubcast_entries(base: Path, monkeypatch) -> list[Path]:
    """Entries of every kind gpubcast writes under ``base`` (and another version's), each non-empty
    and old (so ``--prune --max-size 0`` takes every one): the paths written."""
    monkeypatch.setenv("GPUBCAST_CACHE_DIR", str(base))
    made = []
    for i, kind in enumerate(cache.KINDS):
        path = cache.entry_path(kind, f"f{i}<locals>", f"key {i}")
        assert cache.write(path, f"key {i}", bytes(100))
        made += [path, path.with_name(path.name + ".lock")]
        made[-1].write_bytes(b"x")
    lib = cache.entry_path("emulation", "copy", "key so", ".so")           # emulate.py's library ...
    assert cache.write_file(lib, b"\x7fELF" + bytes(60))
    stamp = lib.with_suffix(".sha256")                                      # ... its stamp ...
    assert cache.write(stamp, "key so", bytes(32))
    made += [lib, stamp, lib.with_name(lib.name + ".lock")]                 # ... and its lock
    made[-1].write_bytes(b"x")
    made.append(lib.with_name(lib.name + ".tmp-0123456789abcdef"))         # an interrupted write's
    made[-1].write_bytes(b"half")
    old = base / "0.0.1" / "nvrtc" / f"binary-sm_90-{HEX}.entry"            # another version's
    old.parent.mkdir(parents=True, exist_ok=True)
    old.write_bytes(cache.encode("old", b"cubin"))
    made.append(old)
    for j, p in enumerate(made):
        os.utime(p, (1000 + j, 1000 + j))
    return made


def _command(base: Path, *args: str, cwd: Path | None = None, home: Path | None = None, cache_dir=None):
    env = dict(os.environ, GPUBCAST_CACHE_DIR=str(base if cache_dir is None else cache_dir),
               PYTHONPATH=str(ROOT))
    if home is not None:
        env["HOME"] = str(home)
    return subprocess.run([sys.executable, "-m", "gpubcast", "cache", *args], capture_output=True, text=True,
                          env=env, cwd=cwd, timeout=300)


# --- only gpubcast's entries ----------------------------------------------------------------------------

@pytest.mark.parametrize("args", [("--clear",), ("--prune", "--max-size", "0")])
def test_cache_commands_remove_only_gpubcast_entries_beside_user_files(tmp_path, monkeypatch, fresh, args):
    base = tmp_path / "shared"
    _seed(base, USER_FILES)
    before = _tree(base)
    made = _gpubcast_entries(base, monkeypatch)
    assert all(p.is_file() for p in made)
    proc = _command(base, *args)
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"removed {len(made)} files" in proc.stdout, proc.stdout
    assert _tree(base) == before     # the user's files byte for byte; gpubcast's entries and folders gone


def test_clear_with_the_cache_dir_the_working_directory(tmp_path, monkeypatch, fresh):
    _seed(tmp_path, USER_FILES)
    before = _tree(tmp_path)
    made = _gpubcast_entries(tmp_path, monkeypatch)
    proc = _command(tmp_path, "--clear", cwd=tmp_path, cache_dir=".")
    assert proc.returncode == 0, proc.stdout + proc.stderr
    assert f"removed {len(made)} files" in proc.stdout
    assert _tree(tmp_path) == before


def test_a_symlink_in_a_kind_folder_is_not_followed(tmp_path, monkeypatch, fresh):
    """A link named like an entry, and a version folder that is a link: neither the link nor what it
    points to is removed."""
    base, elsewhere = tmp_path / "cache", tmp_path / "elsewhere"
    _seed(elsewhere, {"notes.txt": b"mine", f"numba/f-{HEX}.entry": b"mine too"})
    made = _gpubcast_entries(base, monkeypatch)
    (made[0].parent / f"link-{HEX}.entry").symlink_to(elsewhere / "notes.txt")
    (base / "0.0.2").symlink_to(elsewhere)
    outside = _tree(elsewhere)
    for args in (("--prune", "--max-size", "0"), ("--clear",)):
        proc = _command(base, *args)
        assert proc.returncode == 0, proc.stdout + proc.stderr
        assert _tree(elsewhere) == outside
    assert (made[0].parent / f"link-{HEX}.entry").is_symlink() and (base / "0.0.2").is_symlink()
    assert not any(p.exists() for p in made)


def test_listing_counts_only_gpubcast_entries(tmp_path, monkeypatch, fresh, capsys):
    base = tmp_path / "shared"
    _seed(base, USER_FILES)
    made = _gpubcast_entries(base, monkeypatch)
    assert main(["cache"]) == 0
    out = capsys.readouterr().out
    assert f"total       {len(made)} files" in out, out
    assert "left alone" in out and "mine" not in out and "photos" not in out


# --- roots that are refused -----------------------------------------------------------------------------

@pytest.mark.parametrize("where", ["home", "above home"])
@pytest.mark.parametrize("args", [("--clear",), ("--prune", "--max-size", "0")])
def test_the_home_directory_and_folders_above_it_are_refused(tmp_path, monkeypatch, fresh, where, args):
    home = tmp_path / "home" / "someone"
    _seed(home, USER_FILES)
    base = home if where == "home" else tmp_path
    made = _gpubcast_entries(base, monkeypatch)     # a cache an older gpubcast wrote there
    before = _tree(tmp_path)
    proc = _command(base, *args, home=home)
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert str(base) in proc.stdout and "GPUBCAST_CACHE_DIR" in proc.stdout, proc.stdout
    assert _tree(tmp_path) == before and all(p.exists() for p in made)


@contextlib.contextmanager
def _no_file_system_walk(monkeypatch):
    """Every call that lists, creates or removes files fails the test (the refusal must come first)."""
    def reached(*args, **kw):
        raise AssertionError(f"reached the file system: {args}")
    with monkeypatch.context() as m:
        for name in ("walk", "scandir", "listdir", "unlink", "remove", "rmdir", "mkdir", "makedirs"):
            m.setattr(os, name, reached)
        yield


@pytest.mark.parametrize("args", [["--clear"], ["--prune", "--max-size", "0"]])
def test_the_file_system_root_is_refused_before_any_walk(monkeypatch, fresh, capsys, args):
    monkeypatch.setenv("GPUBCAST_CACHE_DIR", "/")
    with _no_file_system_walk(monkeypatch):
        code = main(["cache", *args])
    out = capsys.readouterr().out
    assert code == 2 and "/" in out and "GPUBCAST_CACHE_DIR" in out, out
    with _no_file_system_walk(monkeypatch), pytest.raises(cache.CacheRootError):
        cache.clear(Path("/"))


@pytest.mark.parametrize("where", ["/", "home", "above home"])
def test_gpubcast_writes_no_cache_in_a_refused_root(tmp_path, monkeypatch, fresh, where):
    home = tmp_path / "home" / "someone"
    _seed(home, {"notes.txt": b"mine"})
    monkeypatch.setenv("HOME", str(home))
    base = {"/": Path("/"), "home": home, "above home": tmp_path}[where]
    monkeypatch.setenv("GPUBCAST_CACHE_DIR", str(base))
    before = _tree(tmp_path)
    with warnings.catch_warnings(record=True) as caught, _no_file_system_walk(monkeypatch):
        warnings.simplefilter("always")
        assert cache.directory("numba") is None and cache.entry_path("nvrtc", "x", "key") is None
    assert [w.category for w in caught] == [cache.CacheWarning], caught
    assert str(base) in str(caught[0].message) and "GPUBCAST_CACHE_DIR" in str(caught[0].message)
    assert _tree(tmp_path) == before


# --- private folders and CACHEDIR.TAG -------------------------------------------------------------------

def _mode(p: Path) -> int:
    return stat.S_IMODE(p.stat().st_mode)


@contextlib.contextmanager
def _umask(mask: int):
    old = os.umask(mask)
    try:
        yield
    finally:
        os.umask(old)


@pytest.mark.parametrize("mask", [0o022, 0o002, 0o277], ids=oct)
def test_folders_gpubcast_creates_are_private_whatever_the_umask(tmp_path, monkeypatch, fresh, mask):
    existing = tmp_path / "existing"
    existing.mkdir(mode=0o755)
    os.chmod(existing, 0o755)
    base = existing / "new" / "cache"
    monkeypatch.setenv("GPUBCAST_CACHE_DIR", str(base))
    with _umask(mask):
        path = cache.entry_path("numba", "f", "key")
        assert cache.write(path, "key", b"payload")
        made = [existing / "new", base, base / V, base / V / "numba"]
        assert [oct(_mode(d)) for d in made] == [oct(0o700)] * 4
        assert _mode(existing) == 0o755                     # a folder that was there keeps its mode
        assert cache.clear() == 1 and not (base / V).exists() and base.is_dir()
        assert cache.write(path, "key", b"payload")         # folders made again after a --clear
        assert _mode(base / V) == _mode(base / V / "numba") == 0o700


def test_the_root_gpubcast_creates_carries_a_cachedir_tag(tmp_path, monkeypatch, fresh):
    base = tmp_path / "cache"
    monkeypatch.setenv("GPUBCAST_CACHE_DIR", str(base))
    assert cache.write(cache.entry_path("numba", "f", "key"), "key", b"payload")
    lines = (base / "CACHEDIR.TAG").read_text().splitlines()
    assert lines[0] == SIGNATURE and len(lines) > 1
    assert all(line.startswith("#") for line in lines[1:]) and "gpubcast" in " ".join(lines[1:])
    assert (base / "CACHEDIR.TAG").read_bytes().startswith(SIGNATURE.encode() + b"\n")
    assert cache.clear() == 1 and _tree(base) == {"CACHEDIR.TAG": (base / "CACHEDIR.TAG").read_bytes()}


def test_an_existing_cachedir_tag_is_kept(tmp_path, monkeypatch, fresh):
    mine = f"{SIGNATURE}\n# my own tag\n".encode()
    _seed(tmp_path, {"CACHEDIR.TAG": mine})
    monkeypatch.setenv("GPUBCAST_CACHE_DIR", str(tmp_path))
    assert cache.write(cache.entry_path("numba", "f", "key"), "key", b"payload")
    assert (tmp_path / "CACHEDIR.TAG").read_bytes() == mine


def test_a_root_holding_user_files_gets_no_cachedir_tag(tmp_path, monkeypatch, fresh):
    """A tag marks its whole folder as disposable (backup tools skip it), so a folder that holds
    anything but gpubcast's is not tagged."""
    _seed(tmp_path, {"notes.txt": b"mine"})
    monkeypatch.setenv("GPUBCAST_CACHE_DIR", str(tmp_path))
    assert cache.write(cache.entry_path("numba", "f", "key"), "key", b"payload")
    assert not (tmp_path / "CACHEDIR.TAG").exists()


def test_entries_in_an_existing_cache_stay_valid(tmp_path, monkeypatch, fresh):
    """A cache written before the folders were private and tagged: read as before, left as it was."""
    kind_dir = tmp_path / V / "numba"
    kind_dir.mkdir(parents=True)
    os.chmod(kind_dir, 0o755)
    monkeypatch.setenv("GPUBCAST_CACHE_DIR", str(tmp_path))
    path = cache.entry_path("numba", "f", "key")
    assert path.parent == kind_dir
    path.write_bytes(cache.encode("key", b"payload"))
    assert cache.read(path, "key") == b"payload"
    assert _mode(kind_dir) == 0o755 and not (tmp_path / "CACHEDIR.TAG").exists()
    assert [e.path for e in cache.entries()] == [path]


def test_entry_names_are_ones_the_upkeep_recognises():
    assert cache._VERSION_NAME.fullmatch(V) and cache._VERSION_NAME.fullmatch("0.0.0+other")
    with pytest.raises(ValueError, match="suffix"):
        cache.entry_path("numba", "f", "key", ".bin")
    with pytest.raises(ValueError, match="kind"):
        cache.directory("elsewhere")
