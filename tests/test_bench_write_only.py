"""bench/write_only.py, the write-only probe for the next GPU (issue 23), run on the virtual CUDA device:
each row launches the kernel it names and writes what NumPy computes (the script checks the values)."""

import importlib.util
from pathlib import Path

import pytest

from gpubcast.devtools import emulate

pytestmark = pytest.mark.skipif(bool(emulate.available()), reason=f"needs the host emulation: {emulate.available()}")


def _script():
    path = Path(__file__).resolve().parents[1] / "bench" / "write_only.py"
    spec = importlib.util.spec_from_file_location("write_only", path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_each_row_runs_its_kernel_and_writes_numpys_values(tmp_path):
    lines = []
    rows = {r["row"]: r for r in _script().main(["--virtual", "--json", str(tmp_path / "rows.json")], out=lines.append)}
    assert list(rows) == ["fill", "add outer", "copy column", "copy row", "expand", "explicit"]   # no memset there
    assert rows["fill"]["kernels"] == ["gb::copy_contig<gb::Copy, gb::Bytes<4>>"]
    assert rows["add outer"]["kernels"] == ["gb::binary_general<gb::Add, float, float, gb::u32>"]
    for name in ("copy column", "copy row", "expand", "explicit"):
        assert rows[name]["kernels"] == ["gb::copy_general<gb::Copy, gb::Bytes<4>, gb::u32>"], name
    assert all(r["gbps_written"] is None for r in rows.values())            # not timed on the virtual device
    assert len(lines) == 1 + len(rows) and (tmp_path / "rows.json").stat().st_size > 0
