"""A damaged ``libtbb`` never kills ``import gpubcast``: it is checked before it is loaded, and a
damaged or missing one leaves Numba its other threading layers, with one warning.

Every case works on temporary copies of the ``tbb`` wheel's library; the environment's own file
is only read.  The whole-import cases run in a subprocess whose ``sys.prefix`` and ``sys.path``
point at a temporary environment laid out as the real one (``lib/libtbb.so.12``, the wheel's
``dist-info`` with its RECORD): a crash there fails the test, not the suite.
"""

import importlib.metadata
import json
import os
import shutil
import subprocess
import sys
import textwrap
from pathlib import Path

import pytest

from gpubcast.backends import library_check, threading_layer


def _real_library():
    """(the installed library, the tbb wheel's dist-info folder), or None."""
    try:
        files = importlib.metadata.files("tbb") or ()
    except importlib.metadata.PackageNotFoundError:
        return None
    library = next((Path(f.locate()) for f in files if f.name == threading_layer.LIBRARY), None)
    record = next((Path(f.locate()) for f in files if f.name == "RECORD"), None)
    if library is None or record is None or not library.is_file():
        return None
    return library, record.parent


REAL = _real_library()
pytestmark = pytest.mark.skipif(REAL is None or not sys.platform.startswith("linux"),
                                reason="needs the tbb wheel's libtbb.so.12 (Linux)")

#: damage done to a copy of the library: what the file holds afterwards
DAMAGE = {
    "truncated": lambda good: good[:4096],
    "half": lambda good: good[: len(good) // 2],
    "one byte short": lambda good: good[:-1],
    "garbage of the same size": lambda good: bytes((i * 7 + 3) % 251 for i in range(len(good))),
    "empty": lambda good: b"",
}


@pytest.mark.parametrize("kind", DAMAGE)
def test_the_structure_check_refuses_a_damaged_copy_that_no_record_vouches_for(tmp_path, kind):
    good = REAL[0].read_bytes()
    copy = tmp_path / threading_layer.LIBRARY
    copy.write_bytes(DAMAGE[kind](good))
    why = library_check.damage(str(copy), "tbb")        # no RECORD lists the copy: the ELF structure alone
    assert why is not None and why != library_check.ABSENT
    assert why.startswith(("is truncated", "is not a shared library", "is empty")), why


def test_a_whole_copy_passes_and_an_absent_file_is_absent(tmp_path):
    copy = tmp_path / threading_layer.LIBRARY
    shutil.copyfile(REAL[0], copy)
    assert library_check.damage(str(copy), "tbb") is None
    assert library_check.damage(str(tmp_path / "nothing.so"), "tbb") == library_check.ABSENT
    assert library_check.damage(str(REAL[0]), "tbb") is None        # the installed file, against its RECORD


def _environment(tmp_path, content: bytes | None, record: bool = True) -> Path:
    """A temporary environment laid out as the real one: the library (``content``; None: no file)
    in ``lib/`` and, with ``record``, the tbb wheel's dist-info with the real RECORD."""
    library, dist_info = REAL
    env = tmp_path / "env"
    site = env / os.path.relpath(dist_info.parent, sys.prefix)
    site.mkdir(parents=True)
    if record:
        shutil.copytree(dist_info, site / dist_info.name)
    lib = env / os.path.relpath(library, sys.prefix)
    lib.parent.mkdir(parents=True, exist_ok=True)
    if content is not None:
        lib.write_bytes(content)
    return env


def test_the_record_vouches_for_size_and_sha256(tmp_path, monkeypatch):
    good = REAL[0].read_bytes()
    env = _environment(tmp_path, good)
    site = env / os.path.relpath(REAL[1].parent, sys.prefix)
    copy = str(env / os.path.relpath(REAL[0], sys.prefix))
    monkeypatch.syspath_prepend(str(site))
    assert library_check.record_entry(copy, "tbb")[1] == len(good)
    assert library_check.damage(copy, "tbb") is None
    Path(copy).write_bytes(good[:-1] + bytes([good[-1] ^ 1]))        # same size, valid ELF, another sha256
    assert "sha256" in library_check.damage(copy, "tbb")
    Path(copy).write_bytes(good[:4096])
    assert library_check.damage(copy, "tbb").startswith(f"is 4096 bytes where the tbb wheel installed {len(good)}")
    os.remove(copy)
    assert library_check.damage(copy, "tbb").startswith("is missing")


HARNESS = textwrap.dedent("""
    import json, sys, warnings
    env, site, hide = sys.argv[1], sys.argv[2], sys.argv[3] == "hide"
    sys.prefix = env                                  # the environment whose lib/ holds the library
    sys.path.insert(0, site)                          # whose dist-info comes first, as importlib.metadata finds it
    if hide:                                          # no tbb distribution anywhere: the structure check alone
        import importlib.metadata as md
        def files(name):
            raise md.PackageNotFoundError(name)
        md.files = files
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")               # a second warning would be recorded too
        import gpubcast as gb
        from gpubcast.backends import threading_layer
        line = threading_layer.describe()             # preload again, then Numba picks its layer
    import numba, numpy as np
    rows = np.linspace(-3, 3, 512 * 1024, dtype=np.float32).reshape(512, 1024)
    row = np.linspace(1, 2, 1024, dtype=np.float32)
    ok = all(np.array_equal(gb.multiply(rows, row), rows * row) for _ in range(2))   # the parallel drivers
    maps = open("/proc/self/maps").read()
    print(json.dumps({"warnings": [(w.category.__name__, str(w.message)) for w in caught], "ok": ok,
                      "layer": numba.threading_layer(), "copy loaded": env in maps, "line": line}))
""")


def _import_in(tmp_path, env: Path, hide: bool = False) -> dict:
    script = tmp_path / "harness.py"
    script.write_text(HARNESS)
    site = env / os.path.relpath(REAL[1].parent, sys.prefix)
    run = subprocess.run([sys.executable, str(script), str(env), str(site), "hide" if hide else "show"],
                         capture_output=True, text=True, timeout=180,
                         env={k: v for k, v in os.environ.items() if k != "NUMBA_THREADING_LAYER"})
    assert run.returncode == 0, f"rc {run.returncode}: {run.stderr[-3000:]}"
    return json.loads(run.stdout.splitlines()[-1])


CASES = {
    "truncated to 4096 bytes": (lambda good: good[:4096], "is 4096 bytes where the tbb wheel installed"),
    "garbage": (DAMAGE["garbage of the same size"], "is not a shared library"),
    "empty": (lambda good: b"", "is 0 bytes where the tbb wheel installed"),
    "another sha256": (lambda good: good[:-1] + bytes([good[-1] ^ 1]), "sha256"),
    "missing": (lambda good: None, "is missing"),
}


@pytest.mark.parametrize("case", CASES)
def test_import_with_a_damaged_library_warns_once_and_parallel_ops_run_on_another_layer(tmp_path, case):
    make, phrase = CASES[case]
    good = REAL[0].read_bytes()
    env = _environment(tmp_path, make(good))
    report = _import_in(tmp_path, env)
    assert [category for category, _ in report["warnings"]] == ["DamagedLibraryWarning"], report["warnings"]
    message = report["warnings"][0][1]
    assert str(env / os.path.relpath(REAL[0], sys.prefix)) in message and phrase in message
    assert "pip install --force-reinstall tbb" in message
    assert report["ok"] and report["layer"] in ("omp", "workqueue") and not report["copy loaded"]


def test_import_with_a_truncated_library_that_no_record_lists_warns_once(tmp_path):
    env = _environment(tmp_path, REAL[0].read_bytes()[:4096], record=False)
    report = _import_in(tmp_path, env, hide=True)
    assert [category for category, _ in report["warnings"]] == ["DamagedLibraryWarning"], report["warnings"]
    assert "is truncated" in report["warnings"][0][1]
    assert report["ok"] and report["layer"] in ("omp", "workqueue")


@pytest.mark.parametrize("record", [True, False], ids=["with its RECORD", "without a RECORD"])
def test_import_with_a_whole_library_loads_tbb_from_it(tmp_path, record):
    env = _environment(tmp_path, REAL[0].read_bytes(), record=record)
    report = _import_in(tmp_path, env, hide=not record)
    assert report["warnings"] == [] and report["ok"]
    assert report["layer"] == "tbb" and report["copy loaded"] and report["line"].startswith("tbb")
