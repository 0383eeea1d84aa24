"""Whether a shared library file is whole, before anything loads it.

The dynamic loader maps a library's segments without comparing them with the file's size: a
truncated file (an interrupted install, a full disk) maps pages past its end, and the first touch
of one kills the process with SIGBUS, with no Python exception to catch.  ``damage`` reads the
file instead and says why it must not be loaded:

- where a wheel's RECORD lists the file (found as ``importlib.metadata`` would: the first
  ``<name>-*.dist-info`` on ``sys.path``), its size and sha256 must be the recorded ones;
- on ELF platforms (Linux), its header, program headers, section headers and every segment's bytes
  must lie inside the file: the structure a truncated or garbage file cannot have, RECORD or not.

Verdicts are kept in memory for the file's identity (device, inode, size, mtime): a second check in
the same process reads nothing.  The RECORD is read directly, not through ``importlib.metadata``,
whose import alone (13-35 ms here) costs more than the whole check.
"""

from __future__ import annotations

import binascii
import hashlib
import os
import struct
import sys

#: ``damage``'s answer for a file that does not exist and that no RECORD lists (nothing to load)
ABSENT = "is absent"

#: (path, device, inode, size, mtime_ns) -> ``damage``'s verdict for that file
_VERDICTS: dict = {}


def damage(path: str, distribution: str) -> str | None:
    """Why the library at ``path`` must not be loaded, as a phrase that follows its path ("is
    truncated: ..."), or None where it may be.  ``distribution``: the wheel that installs it, whose
    RECORD vouches for its size and sha256 where it lists ``path``.  ``ABSENT`` where the file does
    not exist and no RECORD lists it."""
    listed = record_entry(path, distribution)
    try:
        st = os.stat(path)
    except OSError:
        return ABSENT if listed is None else f"is missing (the {distribution} wheel installed it)"
    key = (path, st.st_dev, st.st_ino, st.st_size, st.st_mtime_ns)
    if key not in _VERDICTS:
        _VERDICTS[key] = _examine(path, st.st_size, listed, distribution)
    return _VERDICTS[key]


def _examine(path: str, size: int, listed: tuple | None, distribution: str) -> str | None:
    """``damage``'s verdict for an existing file of ``size`` bytes: the cheap checks first, the sha256 last."""
    digest, recorded_size = listed if listed is not None else (None, None)
    if recorded_size is not None and size != recorded_size:
        return f"is {size} bytes where the {distribution} wheel installed {recorded_size} (truncated or overwritten)"
    if size == 0:
        return "is empty"
    try:
        with open(path, "rb") as f:
            if sys.platform not in ("win32", "darwin"):
                why = elf_damage(f, size)
                if why is not None:
                    return why
            if digest is not None:
                f.seek(0)
                if record_digest(hashlib.file_digest(f, "sha256").digest()) != digest:
                    return f"differs from the file the {distribution} wheel installed (its sha256 is not the RECORD's)"
    except OSError as e:
        return f"cannot be read ({e.strerror or e})"
    return None


def record_digest(digest: bytes) -> str:
    """A sha256 digest as a wheel's RECORD writes it (urlsafe base64 without padding)."""
    return binascii.b2a_base64(digest, newline=False).decode().translate(_URLSAFE).rstrip("=")


_URLSAFE = str.maketrans("+/", "-_")

#: an ELF header after its 16 identification bytes, by class (1: 32-bit, 2: 64-bit): e_type, e_machine,
#: e_version, e_entry, e_phoff, e_shoff, e_flags, e_ehsize, e_phentsize, e_phnum, e_shentsize, e_shnum
_ELF_HEADER = {1: "HHIIIIIHHHHH", 2: "HHIQQQIHHHHH"}
#: a program header's (p_type, p_offset, p_filesz) and the size of one, by class
_SEGMENT = {1: ("II8xI", 32), 2: ("I4xQ16xQ", 56)}
_SEGMENT_NAMES = {1: "PT_LOAD", 2: "PT_DYNAMIC", 3: "PT_INTERP", 4: "PT_NOTE", 7: "PT_TLS"}


def elf_damage(f, size: int) -> str | None:
    """Why the ELF file open as ``f`` (``size`` bytes) is not whole (a phrase, as ``damage``), or None:
    its header, program headers and section headers and every segment's bytes lie inside it."""
    ident = f.read(16)
    if len(ident) < 16 or ident[:4] != b"\x7fELF":
        return "is not a shared library (no ELF header): damaged or overwritten"
    cls, order = ident[4], {1: "<", 2: ">"}.get(ident[5])
    if cls not in _ELF_HEADER or order is None:
        return "has a damaged ELF header"
    header = struct.Struct(order + _ELF_HEADER[cls])
    fields = f.read(header.size)
    if len(fields) < header.size:
        return f"is truncated: {size} bytes, less than an ELF header"
    _, _, _, _, phoff, shoff, _, _, phentsize, phnum, shentsize, shnum = header.unpack(fields)
    layout, entry = _SEGMENT[cls]
    if phnum == 0 or phentsize != entry:
        return "has a damaged ELF header (no program headers)"
    if phoff + phnum * entry > size:
        return f"is truncated: {size} bytes, its program headers end at byte {phoff + phnum * entry}"
    if shoff and shoff + shnum * shentsize > size:   # the section headers usually end the file
        return f"is truncated: {size} bytes, its section headers end at byte {shoff + shnum * shentsize}"
    f.seek(phoff)
    table = f.read(phnum * entry)
    segment = struct.Struct(order + layout)
    for k in range(phnum):
        kind, offset, filesz = segment.unpack_from(table, k * entry)
        if offset + filesz > size:
            name = _SEGMENT_NAMES.get(kind, f"type {kind:#x}")
            return f"is truncated: {size} bytes, its segment {k} ({name}) ends at byte {offset + filesz}"
    return None


def record_entry(path: str, distribution: str) -> tuple | None:
    """(sha256 as RECORD writes it or None, size or None) of ``path`` in the RECORD of the first
    ``<distribution>-*.dist-info`` on ``sys.path`` that lists it; None where none does."""
    prefix, base = f"{distribution.lower()}-", os.path.basename(path)
    target = None
    for folder in sys.path:
        try:
            names = [n for n in os.listdir(folder or ".") if n.lower().startswith(prefix) and n.endswith(".dist-info")]
        except OSError:  # not a folder (the standard library's zip), gone, unreadable
            continue
        for name in names:
            for where, digest, size in _record_lines(os.path.join(folder or ".", name, "RECORD")):
                if os.path.basename(where) != base:
                    continue
                target = target or os.path.normcase(os.path.realpath(path))
                if os.path.normcase(os.path.realpath(os.path.join(folder or ".", where))) == target:
                    return digest, size
    return None


def _record_lines(record: str):
    """(path, sha256 or None, size or None) of each line of a wheel's RECORD: a CSV file whose
    last two fields hold no comma; nothing where it cannot be read."""
    try:
        with open(record, encoding="utf-8") as f:
            lines = f.read().splitlines()
    except (OSError, UnicodeDecodeError):
        return
    for line in lines:
        head, _, size = line.rpartition(",")
        where, _, digest = head.rpartition(",")
        if len(where) > 1 and where[0] == where[-1] == '"':
            where = where[1:-1].replace('""', '"')
        yield (where, digest.removeprefix("sha256=") if digest.startswith("sha256=") else None,
               int(size) if size.isdigit() else None)
