"""The cache of compiled code (``gpubcast.cache``): every entry proven before use, damaged or
foreign entries rebuilt, never used; processes filling one cache together; an unwritable cache;
``python -m gpubcast cache``.

Processes that share a cache run as subprocesses with their own ``GPUBCAST_CACHE_DIR`` (a fresh
temporary directory), so nothing here depends on what an earlier run left behind.
"""

from __future__ import annotations

import json
import os
import struct
import subprocess
import sys
import textwrap
from pathlib import Path

import filelock
import pytest
from numba.core import serialize

from gpubcast import cache
from gpubcast.backends.numba import cache as numba_cache
from gpubcast.backends.numba.memory import I64, load

from tests.support import ROOT


# --- entries --------------------------------------------------------------------------------------------

KEY = "numba\0gpubcast.backends.numba.drivers.run2\0(array(float32, 1d, C),)"
PAYLOAD = bytes(range(256)) * 9


def test_an_entry_reads_back_only_whole_and_under_its_own_key():
    data = cache.encode(KEY, PAYLOAD)
    assert cache.decode(data, KEY) == PAYLOAD
    assert cache.decode(data, KEY + "x") is None                       # another key
    assert cache.decode(data, KEY[:-1]) is None
    for n in list(range(0, 64)) + list(range(64, len(data), 97)):      # truncated anywhere
        assert cache.decode(data[:n], KEY) is None, n
    for i in list(range(0, len(data), 53)) + [len(data) - 1]:          # any byte flipped
        flipped = bytearray(data)
        flipped[i] ^= 0x40
        assert cache.decode(bytes(flipped), KEY) is None, i
    assert cache.decode(data + b"\0", KEY) is None                     # trailing bytes
    assert cache.decode(os.urandom(len(data)), KEY) is None            # garbage
    assert cache.decode(cache.encode("other", PAYLOAD), KEY) is None   # another entry's bytes


def test_read_removes_a_damaged_entry(tmp_path, monkeypatch):
    monkeypatch.setenv("GPUBCAST_CACHE_DIR", str(tmp_path))
    path = cache.entry_path("numba", "label<locals>", KEY)
    assert path.parent == tmp_path / cache.__version__ / "numba" and "<" not in path.name
    assert cache.write(path, KEY, PAYLOAD) and cache.read(path, KEY) == PAYLOAD
    assert not list(path.parent.glob("*.tmp-*"))                      # the temporary file was renamed
    path.write_bytes(path.read_bytes()[:-1])
    assert cache.read(path, KEY) is None and not path.exists()


# --- the Numba backend's entries, across processes -----------------------------------------------------

#: computes cases of the kinds that went wrong with Numba's own cache (issue 11) against NumPy; prints
#: the row functions' and drivers' cache hits and misses
CHECK = textwrap.dedent("""
    import sys, warnings
    import numpy as np, gpubcast as gb
    from gpubcast.backends.numba import cache as numba_cache, drivers as K
    if len(sys.argv) > 1 and sys.argv[1] == "other-source":
        numba_cache.SOURCE_HASH = "an edited scalars/arithmetic.py"
    if len(sys.argv) > 1 and sys.argv[1] == "other-version":
        import gpubcast.cache
        gpubcast.cache.__version__ = "0.0.0+other"
    a = np.arange(6, dtype=np.int64).reshape(2, 3) + 5
    u = np.arange(33 * 17, dtype=np.uint32)
    cases = [
        (gb.bitwise_and(a, np.array([3, 6, 12])), np.bitwise_and(a, [3, 6, 12])),
        (gb.add(np.array(3, np.uint32), np.array(2, np.uint32)), np.uint32(5)),
        (gb.logical_and(u[:33].reshape(33, 1) % 3, u[:17] % 2), np.logical_and(u[:33].reshape(33, 1) % 3, u[:17] % 2)),
        (gb.multiply(np.float32([[1.5], [2]]), np.float32([3, -4, 0.25])),
         np.float32([[1.5], [2]]) * np.float32([3, -4, 0.25])),
        (gb.minimum(np.uint8([7, 200, 3]), np.uint8([9])), np.minimum(np.uint8([7, 200, 3]), np.uint8(9))),
        (gb.where(np.array([True, False]), np.float64([1, 2]), np.float64(7)), np.float64([1, 7])),
    ]
    for got, want in cases * 2:
        assert got.dtype == np.asarray(want).dtype and np.array_equal(got, want), (got, want)
    hits = sum(f._cache.hits for f in vars(K).values() if hasattr(getattr(f, "_cache", None), "hits"))
    rows = [s._row._cache for s in gb.backends.get("numba")._specs.values() if s is not None and s._row is not None]
    print("ok", hits, sum(c.hits for c in rows), sum(c.misses for c in rows))
""")


def _check(cache_dir, *args):
    """Run CHECK in a fresh process over ``cache_dir``: (driver hits, row hits, row misses)."""
    env = dict(os.environ, GPUBCAST_CACHE_DIR=str(cache_dir), PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, "-c", CHECK, *args], capture_output=True, text=True, env=env,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    line = proc.stdout.split()
    assert line[0] == "ok"
    return tuple(map(int, line[1:]))


@pytest.fixture(scope="module")
def warm_cache(tmp_path_factory, worker_id):
    """A cache filled by one process running CHECK; (directory, its numba entries' bytes).  Under
    pytest-xdist the first worker to ask fills it in this run's temporary root, the others read it."""
    if worker_id == "master":
        d = tmp_path_factory.mktemp("warm")
        _check(d)
    else:
        d = tmp_path_factory.getbasetemp().parent / "warm-numba-cache"   # this run's, shared by its workers
        with filelock.FileLock(f"{d}.lock"):
            if not (d / "filled").exists():
                _check(d)
                (d / "filled").touch()
    entries = {p.name: p.read_bytes() for p in (d / cache.__version__ / "numba").glob("*.entry")}
    assert len(entries) > 10
    return d, entries


def _copy(warm, tmp_path):
    d, entries = warm
    target = tmp_path / cache.__version__ / "numba"
    target.mkdir(parents=True)
    for name, data in entries.items():
        (target / name).write_bytes(data)
    return target


def test_a_warm_cache_is_used(warm_cache, tmp_path):
    _copy(warm_cache, tmp_path)
    drivers, row_hits, row_misses = _check(tmp_path)
    assert drivers > 0 and row_hits > 0 and row_misses == 0


#: one call of each kind of compiled function the Numba backend makes (a row of each factory, the
#: vectorised unary loop, a fused chain), checked against NumPy; prints every cache load as JSON:
#: [identity, hit]
EVERY_KIND = textwrap.dedent("""
    import json
    import numpy as np, gpubcast as gb
    from gpubcast.backends.numba import cache as numba_cache
    loads = []
    load = numba_cache.VerifiedCache.load_overload
    def counted(self, sig, context):
        result = load(self, sig, context)
        loads.append([self._identity, result is not None])
        return result
    numba_cache.VerifiedCache.load_overload = counted
    x = np.linspace(-3, 3, 40, dtype=np.float32).reshape(5, 8)
    i = np.arange(-20, 20, dtype=np.int16).reshape(5, 8)
    close = lambda got, want: np.testing.assert_allclose(got, want, rtol=2e-6, atol=0)
    np.testing.assert_array_equal(gb.negative(i), -i)
    close(gb.sin(x), np.sin(x))
    close(gb.add(x, x[0]), x + x[0])
    close(gb.leaky_relu(x, 0.25), np.where(x >= 0, x, x * np.float32(0.25)))
    close(gb.hard_sigmoid(x, 0.25, 0.5), np.clip(x * np.float32(0.25) + np.float32(0.5), 0, 1))
    close(gb.where(x > 0, x, np.float32(7)), np.where(x > 0, x, np.float32(7)))
    close(gb.onnx.Sum(x, x[0], x[:, :1]), x + x[0] + x[:, :1])
    close(gb.fuse(lambda v: v * gb.sigmoid(v))(x), x / (1 + np.exp(-x)))
    print(json.dumps(loads))
""")


def _loads(cache_dir) -> list:
    """Run EVERY_KIND in a fresh process over ``cache_dir``: its cache loads, [identity, hit]."""
    env = dict(os.environ, GPUBCAST_CACHE_DIR=str(cache_dir), PYTHONPATH=str(ROOT))
    proc = subprocess.run([sys.executable, "-c", EVERY_KIND], capture_output=True, text=True, env=env,
                          timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return json.loads(proc.stdout.splitlines()[-1])


def test_every_kind_of_compiled_function_is_loaded_by_the_next_process(tmp_path):
    """A key is the same in every process.  A unary row holds its contiguous loop, whose globals
    hold Numba intrinsics, which Numba pickles under a uuid drawn per process: that key changed
    with every process, and every new process compiled every unary op again."""
    first, second = _loads(tmp_path), _loads(tmp_path)
    made = {identity for identity, _ in first}
    assert not any(hit for _, hit in first)
    for factory in ("unary_row-", "binary_row-", "where_row-", "parametric_row-", "variadic_row-", "fused_row-",
                    "gpubcast.backends.numba.drivers."):
        assert any(identity.startswith(factory) for identity in made), (factory, made)
    assert any("unary_vector_sin" in identity for identity in made)
    # the drivers' walk is one compiled function that every driver calls, not one copy in each; these
    # small calls (nothing transposed or streamed) need only the plain walk
    walks = [identity for identity, _ in first if identity.endswith("chunk_runner")]
    assert walks == ["gpubcast.backends.numba.drivers._plain_chunk_runner"], walks
    assert {identity for identity, _ in second} == made
    assert [identity for identity, hit in second if not hit] == []


def _closure(value):
    def contiguous():
        return load(value, 0, I64)     # a global intrinsic: Numba pickles it with its uuid

    def row():
        return contiguous(), value
    return row


def test_a_closure_digest_names_the_values_not_the_objects():
    """Numba's pickle of a closure holds each intrinsic's uuid (drawn per process); a key's does not."""
    cells = tuple(c.cell_contents for c in _closure(3).__closure__)
    assert load._uuid.encode() in serialize.dumps(cells)
    assert load._uuid.encode() not in numba_cache.key_bytes(cells)
    assert numba_cache.closure_digest(_closure(3)) == numba_cache.closure_digest(_closure(3))
    assert numba_cache.closure_digest(_closure(3)) != numba_cache.closure_digest(_closure(4))
    assert numba_cache.closure_digest(test_a_closure_digest_names_the_values_not_the_objects) == ""


DAMAGES = ("truncated", "garbage", "another entry's bytes", "empty", "one byte flipped")


def _damaged(kind: str, data: bytes, other: bytes) -> bytes:
    if kind == "one byte flipped":
        return data[:100] + bytes([data[100] ^ 1]) + data[101:]
    return {"truncated": data[: len(data) // 2], "garbage": os.urandom(len(data)),
            "another entry's bytes": other, "empty": b""}[kind]


def test_damaged_entries_give_right_values_and_are_rebuilt(warm_cache, tmp_path):
    """Every entry damaged, each file one of DAMAGES in turn (one process compiles them all)."""
    target = _copy(warm_cache, tmp_path)
    files = sorted(target.glob("*.entry"))
    datas = [f.read_bytes() for f in files]
    for i, f in enumerate(files):
        f.write_bytes(_damaged(DAMAGES[i % len(DAMAGES)], datas[i], datas[(i + 1) % len(files)]))
    drivers, row_hits, row_misses = _check(tmp_path)
    assert drivers == 0 and row_hits == 0 and row_misses > 0    # nothing damaged was used
    drivers, row_hits, row_misses = _check(tmp_path)            # ... and it was rebuilt
    assert drivers > 0 and row_hits > 0 and row_misses == 0


@pytest.mark.parametrize("change", ["other-source", "other-version"])
def test_an_entry_from_other_sources_or_another_version_is_never_used(warm_cache, tmp_path, change):
    _copy(warm_cache, tmp_path)
    drivers, row_hits, row_misses = _check(tmp_path, change)
    assert drivers == 0 and row_hits == 0 and row_misses > 0


def test_the_source_hash_covers_every_numba_source(tmp_path):
    """Every module of the Numba backend's package is part of the key: an edit of any one of them
    (here each in turn, then one op's semantics) retires every entry."""
    package = Path(numba_cache.__file__).parent
    sources = {f.relative_to(package).as_posix(): f.read_bytes() for f in package.rglob("*.py")}
    assert {"__init__.py", "backend.py", "cache.py", "scalars/__init__.py", "scalars/arithmetic.py"} <= set(sources)
    for name, text in sources.items():
        (tmp_path / name).parent.mkdir(exist_ok=True)
        (tmp_path / name).write_bytes(text)
    assert numba_cache.sources_hash(str(tmp_path)) == numba_cache.SOURCE_HASH
    for name, text in sources.items():
        (tmp_path / name).write_bytes(text + b"#\n")
        assert numba_cache.sources_hash(str(tmp_path)) != numba_cache.SOURCE_HASH, name
        (tmp_path / name).write_bytes(text)
    arithmetic = tmp_path / "scalars" / "arithmetic.py"
    arithmetic.write_text(arithmetic.read_text().replace('"add": add,', '"add": sub,'))
    assert numba_cache.sources_hash(str(tmp_path)) != numba_cache.SOURCE_HASH


def test_foreign_files_in_the_cache_are_ignored(warm_cache, tmp_path):
    target = _copy(warm_cache, tmp_path)
    (target / "README").write_text("not an entry")
    (target / "x.entry.tmp-0123").write_bytes(os.urandom(100))
    (target.parent / "nvrtc").mkdir()
    assert _check(tmp_path)[2] == 0


def test_an_unusable_cache_directory_compiles_in_memory_and_warns_once(tmp_path):
    blocker = tmp_path / "a-file"
    blocker.write_text("")
    env = dict(os.environ, GPUBCAST_CACHE_DIR=str(blocker / "cache"), PYTHONPATH=str(ROOT))
    script = textwrap.dedent("""
        import numpy as np, gpubcast as gb
        assert np.array_equal(gb.add(np.arange(3), 1), [1, 2, 3])
        assert np.array_equal(gb.subtract(np.float32([5]), np.float32([[1], [2]])), [[4], [3]])
        print("ok")
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr[-3000:]
    assert proc.stderr.count("CacheWarning") == 1, proc.stderr
    assert "cannot be used" in proc.stderr and "GPUBCAST_CACHE_DIR" in proc.stderr


def test_a_read_only_cache_serves_its_entries_and_warns_once_on_writes(warm_cache, tmp_path):
    """Writes refused as on a read-only file system (the tests run as root, so ``chmod`` would not
    refuse them): the warm entries are used, new code stays in memory, one warning."""
    _copy(warm_cache, tmp_path)
    env = dict(os.environ, GPUBCAST_CACHE_DIR=str(tmp_path), PYTHONPATH=str(ROOT))
    script = textwrap.dedent("""
        import builtins, numpy as np
        real_open = builtins.open
        def read_only(file, mode="r", *args, **kw):
            if any(c in mode for c in "wax+") and ".tmp-" in str(file):
                raise PermissionError(30, "Read-only file system", str(file))
            return real_open(file, mode, *args, **kw)
        builtins.open = read_only
        import gpubcast as gb
        assert np.array_equal(gb.bitwise_and(np.arange(6).reshape(2, 3) + 5, np.array([3, 6, 12])),
                              [[1, 6, 4], [0, 0, 8]])                           # a warm entry
        assert np.array_equal(gb.power(np.int16([2, 3]), np.int16(3)), [8, 27])     # compiled anew
        assert np.array_equal(gb.left_shift(np.int8([1, 3]), np.int8(2)), [4, 12])  # compiled anew
        print("ok")
    """)
    proc = subprocess.run([sys.executable, "-c", script], capture_output=True, text=True, env=env, timeout=600)
    assert proc.returncode == 0 and proc.stdout.strip() == "ok", proc.stderr[-3000:]
    assert proc.stderr.count("CacheWarning") == 1 and "Read-only file system" in proc.stderr, proc.stderr


def test_processes_filling_an_empty_cache_together_compute_right_values():
    """The short version of ``benchmarks/cache_stress.py`` (one spawn round, one fork round)."""
    proc = subprocess.run([sys.executable, str(ROOT / "benchmarks" / "cache_stress.py"), "--rounds", "2",
                           "--procs", "2", "--cases", "3", "--seed", "11"],
                          capture_output=True, text=True, timeout=900, env=dict(os.environ, PYTHONPATH=str(ROOT)))
    assert proc.returncode == 0, proc.stdout[-3000:] + proc.stderr[-3000:]
    assert "0 wrong values, 0 unexpected exceptions, 0 hung" in proc.stdout, proc.stdout


# --- NVRTC binaries and emulation builds --------------------------------------------------------------

def _nvrtc_or_skip():
    from gpubcast.cuda import compiler
    try:
        compiler.nvrtc_version()
    except RuntimeError as e:
        pytest.skip(str(e))
    return compiler


def elf_extent(b: bytes) -> int:
    """Bytes an ELF64 file spans: its headers, sections and segments."""
    assert b[:4] == b"\x7fELF" and b[4] == 2, "not an ELF64 file"
    phoff, shoff = struct.unpack_from("<QQ", b, 0x20)
    phentsize, phnum, shentsize, shnum = struct.unpack_from("<HHHH", b, 0x36)
    end = max(phoff + phentsize * phnum, shoff + shentsize * shnum)
    for i in range(shnum):
        sh_type, = struct.unpack_from("<I", b, shoff + i * shentsize + 4)
        offset, size = struct.unpack_from("<QQ", b, shoff + i * shentsize + 0x18)
        if sh_type != 8:  # SHT_NOBITS occupies no bytes of the file
            end = max(end, offset + size)
    for i in range(phnum):
        offset, = struct.unpack_from("<Q", b, phoff + i * phentsize + 8)
        filesz, = struct.unpack_from("<Q", b, phoff + i * phentsize + 0x20)
        end = max(end, offset + filesz)
    return end


@pytest.fixture
def one_kernel(tmp_path, monkeypatch):
    compiler = _nvrtc_or_skip()
    from gpubcast.cuda import catalog
    monkeypatch.setenv("GPUBCAST_CACHE_DIR", str(tmp_path))
    compiler.cached_kernel.cache_clear()
    yield compiler, "binary", catalog.every_instantiation()["binary"][0].names()[0]
    compiler.cached_kernel.cache_clear()


def test_a_cached_cubin_is_a_whole_elf_file(one_kernel, tmp_path):
    compiler, family, name = one_kernel
    binary, lowered = compiler.cached_kernel(family, name, "sm_90")
    assert len(binary) == elf_extent(binary)   # CuPy's getCUBIN drops the last byte
    assert lowered.startswith("_Z")
    (entry,) = (tmp_path / cache.__version__ / "nvrtc").glob("*.entry")
    assert binary in entry.read_bytes()


@pytest.mark.parametrize("damage", ["truncated", "garbage"])
def test_a_damaged_nvrtc_entry_is_compiled_again(one_kernel, tmp_path, damage):
    compiler, family, name = one_kernel
    binary, lowered = compiler.cached_kernel(family, name, "sm_90")
    (entry,) = (tmp_path / cache.__version__ / "nvrtc").glob("*.entry")
    data = entry.read_bytes()
    entry.write_bytes(data[: len(data) - 7] if damage == "truncated" else os.urandom(len(data)))
    compiler.cached_kernel.cache_clear()
    again, lowered_again = compiler.cached_kernel(family, name, "sm_90")
    # compiled anew: NVRTC names internal symbols per compile (a process id), so compare the shape
    assert lowered_again == lowered and len(again) == len(binary) == elf_extent(again)
    assert cache.decode(entry.read_bytes(), compiler.cache_key(family, name, "sm_90")) is not None


def test_a_damaged_emulation_library_is_rebuilt_not_loaded(tmp_path, monkeypatch):
    from gpubcast.cuda import catalog
    from gpubcast.testing import emulate
    if emulate.available():
        pytest.skip(emulate.available())
    monkeypatch.setenv("GPUBCAST_CACHE_DIR", str(tmp_path))
    names = list(catalog.every_instantiation()["copy"][0].names())[:1]
    lib = emulate.build("copy", names)
    good = lib.read_bytes()
    lib.write_bytes(good[: len(good) // 2])                  # a truncated .so would crash dlopen
    assert emulate.build("copy", names) == lib and lib.read_bytes() == good
    assert names[0] in emulate.Emulator([("copy", names[0])]).names()


def _harness_precompiled():
    from gpubcast import hostbuild
    from gpubcast.cuda import sources
    from gpubcast.testing import emulate
    if emulate.available():
        pytest.skip(emulate.available())
    cxx = hostbuild.compiler("test")
    includes = [f"-I{d}" for d in sources.host_include_dirs()]
    return emulate.harness(), cxx, includes, lambda: hostbuild.precompiled(
        "emulation", emulate.harness(), cxx, emulate.CXX_FLAGS, includes)


def _reads_precompiled(tmp_path, kind, header, flags, includes, text):
    """Whether g++ -H marks the cached .gch of ``header`` used ('!', not 'x': rejected) for ``text``."""
    from gpubcast import hostbuild
    cxx = hostbuild.compiler("test")
    gch = hostbuild.precompiled(kind, header, cxx, flags, includes)
    assert gch[:4] == b"gpch"
    (tmp_path / header.name).write_text(header.text)
    (tmp_path / f"{header.name}.gch").write_bytes(gch)
    (tmp_path / "tu.cpp").write_text(text)
    proc = subprocess.run([cxx, *flags, *includes, "-H", str(tmp_path / "tu.cpp"), "-o", str(tmp_path / "tu.so")],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    return f"! {tmp_path / header.name}.gch" in proc.stderr.splitlines()


def test_emulation_builds_read_the_harness_precompiled(tmp_path, monkeypatch):
    """The cached .gch fits the emulation's flags, for a text made as ``emulate.translation_unit`` makes it."""
    from gpubcast.cuda import catalog
    from gpubcast.testing import emulate
    monkeypatch.setenv("GPUBCAST_CACHE_DIR", str(tmp_path / "cache"))
    header, _, includes, _ = _harness_precompiled()
    text = emulate.translation_unit("copy", list(catalog.every_instantiation()["copy"][0].names())[:1])
    assert _reads_precompiled(tmp_path, "emulation", header, emulate.CXX_FLAGS, includes, text)


def test_elementwise_kernel_cpu_builds_read_their_header_precompiled(tmp_path, monkeypatch):
    import numpy as np

    from gpubcast import elementwise_build as eb
    from gpubcast.elementwise_kernel import ElementwiseKernel
    monkeypatch.setenv("GPUBCAST_CACHE_DIR", str(tmp_path / "cache"))
    k = ElementwiseKernel("float32 x, float32 y", "float32 z", "z = x * y + 1", "pch_check", options=("-DSCALE=2",))
    sig = k.signature((np.dtype(np.float32),) * 3, (), ("array",) * 3)
    text = sig.cpu_source((1, 1, 1))
    assert text.startswith("#define SCALE 2\n")              # the user's -D options before everything, as NVRTC
    assert _reads_precompiled(tmp_path, "cpu", eb.host_header(), eb.HOST_FLAGS, [], text)


def test_a_damaged_precompiled_harness_is_compiled_again(tmp_path, monkeypatch):
    monkeypatch.setenv("GPUBCAST_CACHE_DIR", str(tmp_path))
    _, _, _, precompiled = _harness_precompiled()
    assert precompiled()[:4] == b"gpch"
    (entry,) = (tmp_path / cache.__version__ / "emulation").glob("gb_emulation.h-gch-*.entry")
    data = entry.read_bytes()
    damaged = data[:-100] + bytes(b ^ 0xFF for b in data[-100:])          # the same size, other bytes
    entry.write_bytes(damaged)
    again = precompiled()
    assert again[:4] == b"gpch" and not damaged.endswith(again[-100:]) and entry.read_bytes() != damaged


def test_without_a_cache_directory_nothing_is_precompiled(monkeypatch):
    from gpubcast import hostbuild
    monkeypatch.setattr(cache, "directory", lambda kind: None)
    assert hostbuild.precompiled("emulation", hostbuild.Header("h.h", "int x;\n"), "g++", ("-O0",)) is None


# --- python -m gpubcast cache ---------------------------------------------------------------------------

def test_the_cache_command_shows_prunes_and_clears(tmp_path, monkeypatch, capsys):
    from gpubcast.__main__ import main
    monkeypatch.setenv("GPUBCAST_CACHE_DIR", str(tmp_path))
    for i in range(4):
        path = cache.entry_path("numba", f"f{i}", f"key {i}")
        cache.write(path, f"key {i}", bytes(1000))
        os.utime(path, (1000 + i, 1000 + i))  # f0 is the least recently used
    assert main(["cache"]) == 0
    shown = capsys.readouterr().out
    assert str(tmp_path) in shown and "numba" in shown and "4 files" in shown
    assert main(["cache", "--prune", "--max-size", "2200"]) == 0
    assert "removed 2 files" in capsys.readouterr().out
    left = sorted(p.name.split("-")[0] for p in (tmp_path / cache.__version__ / "numba").iterdir())
    assert left == ["f2", "f3"]
    assert main(["cache", "--clear"]) == 0
    assert "removed 2 files" in capsys.readouterr().out and cache.entries() == []
    assert main(["cache", "--prune", "--max-size", "lots"]) == 2
