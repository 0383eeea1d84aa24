"""``python -m gpubcast cache``: where the cache of compiled code is, its size and entries.

    (no option)          the root, and per gpubcast version and kind: entries and bytes
    --clear              remove every entry (every version and kind)
    --prune [--max-size SIZE]
                         remove the least recently used entries until the cache holds at most
                         SIZE (default 1G; K, M, G suffixes), and temporary files left by
                         interrupted writes

An entry is a regular file named as gpubcast names them, in ``<root>/<version>/<kind>/``
(``gpubcast.cache``): ``--clear`` and ``--prune`` remove such files only, then the version and kind
folders they leave empty, never the root or any other file or folder, so ``GPUBCAST_CACHE_DIR`` may
point at a folder that holds other files.  A root that is ``/``, the home directory or a folder
above it is refused (exit status 2).
"""

from __future__ import annotations

import re

from . import cache


def configure(parser) -> None:
    action = parser.add_mutually_exclusive_group()
    action.add_argument("--clear", action="store_true", help="remove every entry")
    action.add_argument("--prune", action="store_true", help="remove the least recently used entries over --max-size")
    parser.add_argument("--max-size", default="1G", metavar="SIZE",
                        help="--prune: the size to keep at most (default 1G; K, M, G suffixes)")


def parse_size(text: str) -> int:
    """Bytes of a size such as ``512M``, ``1G`` or ``4096``."""
    m = re.fullmatch(r"\s*(\d+(?:\.\d+)?)\s*([KMGT]?)i?B?\s*", text, re.IGNORECASE)
    if not m:
        raise ValueError(f"--max-size {text!r}: say a number of bytes with an optional K, M, G or T suffix")
    return int(float(m.group(1)) * 1024 ** " KMGT".index(m.group(2).upper() or " "))


def _human(n: float) -> str:
    for unit in ("B", "KiB", "MiB", "GiB"):
        if n < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n:.1f} GiB"


def run(args) -> int:
    base = cache.root()
    try:
        if args.clear:
            print(f"removed {cache.clear()} files from {base}")
            return 0
        if args.prune:
            try:
                limit = parse_size(args.max_size)
            except ValueError as e:
                print(f"error: {e}")
                return 2
            removed, freed = cache.prune(limit)
            print(f"removed {removed} files ({_human(freed)}) from {base}; at most {_human(limit)} kept")
            return 0
    except cache.CacheRootError as e:
        print(f"error: {e}")
        return 2
    found, other = cache.scan()
    print(f"cache root  {base}{'' if base.is_dir() else ' (not created yet)'}")
    why = cache.unsafe(base)
    if why:
        print(f"gpubcast neither writes nor cleans a cache here: {why}")
    else:
        print(f"this gpubcast writes under {base / cache.__version__}")
    groups: dict = {}
    for e in found:
        g = groups.setdefault((e.version, e.kind), [0, 0])
        g[0] += 1
        g[1] += e.size
    for (version, kind), (count, size) in sorted(groups.items()):
        print(f"  {version:10s} {kind:10s} {count:6d} files {_human(size):>10s}")
    print(f"total       {len(found)} files, {_human(sum(e.size for e in found))}")
    if other:
        print(f"other       {len(other)} files or folders beside them, not gpubcast's: left alone")
    return 0
