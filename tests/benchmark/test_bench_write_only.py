"""benchmarks/write_only.py, the store-path microbenchmark for the next GPU (issue 42), without one: on the virtual
CUDA device every (pattern, variant) row launches the kernel it names, gpubcast's own call launches the
default row's kernel with the same argument, and each row writes what NumPy computes (the script checks
the values and raises otherwise); ``--static`` runs rows' SASS; the ratios and the table from given numbers."""

import importlib.util
import json
import sys

import pytest

from gpubcast.sass import cubins
from gpubcast.testing import emulate

from tests.support import ROOT

pytestmark = pytest.mark.skipif(bool(emulate.available()), reason=f"needs the host emulation: {emulate.available()}")


def _script():
    path = ROOT / "benchmarks" / "write_only.py"
    spec = importlib.util.spec_from_file_location("write_only", path)
    module = importlib.util.module_from_spec(spec)
    sys.modules.setdefault("write_only", module)          # its dataclasses look their module up
    spec.loader.exec_module(module)
    return module


DEFAULT_KERNELS = {
    "fill": "gb::copy_contig<gb::Copy, gb::Bytes<4>>",
    "copy column": "gb::copy_general<gb::Copy, gb::Bytes<4>, gb::u32>",
    "copy row": "gb::copy_general<gb::Copy, gb::Bytes<4>, gb::u32>",
    "expand": "gb::copy_general<gb::Copy, gb::Bytes<4>, gb::u32>",
    "explicit": "gb::copy_general<gb::Copy, gb::Bytes<4>, gb::u32>",
    "outer": "gb::binary_general<gb::Add, float, float, gb::u32>",
    "row": "gb::binary_general<gb::Add, float, float, gb::u32>", "same": "gb::binary_contig<gb::Add, float, float>",
    "where": "gb::ternary_general<gb::Where, gb::Bytes<4>, gb::u32>", "axpb": "::axpb<gb::u32>",
}


def test_every_row_runs_its_kernel_and_writes_numpys_values(tmp_path):
    wo = _script()
    lines = []
    rows = wo.main(["--virtual", "--json", str(tmp_path / "rows.json")], out=lines.append)
    assert [(r["pattern"], r["variant"]) for r in rows] == [(p.name, v.name) for p in wo.PATTERNS for v in wo.VARIANTS]
    for r in rows:
        assert r["launched"] == [r["kernel"]], r                              # one launch, of the row's kernel
        assert r["gbps_written"] is None and r["of_memset"] is None          # nothing timed on the virtual device
        path = wo.VARIANT_NAMES[r["variant"]].path(8)
        if r["variant"] in ("default", "resident grid"):
            assert r["kernel"].endswith(DEFAULT_KERNELS[r["pattern"]]), r
        else:
            assert ", gb::Path<" in r["kernel"] and r["block"] == path.threads, r
    by = {(r["pattern"], r["variant"]): r for r in rows}
    assert by["expand", "span4"]["grid"] < by["expand", "default"]["grid"]  # a block takes 4 tiles
    assert by["same", "ept/2"]["kernel"].endswith("gb::Path<16, false, 1, 256, 2, 0>>")   # contig: 4 -> 2
    assert by["outer", "ept*2"]["kernel"].endswith("gb::Path<16, false, 1, 256, 16, 0>>")  # general: 8 -> 16
    assert json.loads((tmp_path / "rows.json").read_text())["device"] == "virtual"
    assert len(lines) == 1 + len(rows)


@pytest.mark.skipif(bool(cubins.unavailable()), reason=f"needs NVRTC and nvdisasm: {cubins.unavailable()}")
def test_static_rows_see_the_stores_each_variant_makes():
    """At the GPU shapes: expand's default stores are full lane chunks (one request per 128 elements, sectors
    written whole); store4 splits them (4x the requests, a quarter of each sector per request); chunk4 makes
    narrow chunks (4x the requests, sectors whole)."""
    wo = _script()
    rows = {r["variant"]: r for r in wo.main(["--static", "--patterns", "expand", "--variants",
                                              "default,store4,chunk4"], out=lambda line: None)}
    assert rows["default"]["store_sector_fill"] == 1.0 and rows["chunk4"]["store_sector_fill"] == 1.0
    assert rows["store4"]["store_sector_fill"] == 0.25
    assert rows["default"]["store_requests_per_elem"] == 1 / 128
    assert rows["store4"]["store_requests_per_elem"] == rows["chunk4"]["store_requests_per_elem"] == 4 / 128


def test_ratios_and_table_from_timed_rows():
    wo = _script()
    rows = [{"pattern": "p", "variant": v, "kernel": k, "grid": 8, "block": 256, "blocks_per_sm": b,
             "gbps_written": w, "gbps_moved": m} for v, k, b, w, m in
            (("memset", "", None, 2000.0, 2000.0), ("memcpy", "", None, 1500.0, 3000.0),
             ("default", "gb::copy_general<gb::Copy, gb::Bytes<4>, gb::u32>", 6, 1000.0, 1001.0))]
    wo.ratios(rows)
    assert rows[2]["of_memset"] == 0.5 and rows[2]["of_memcpy"] == 1001.0 / 3000.0
    assert rows[0]["of_memset"] == 1.0 and rows[1]["of_memcpy"] == 1.0
    lines = []
    wo.table(rows, lines.append)
    assert lines[3].split() == ["p", "default", "8", "256", "6", "1000", "0.500", "1001", "0.334",
                                "copy_general<Copy,", "Bytes<4>,", "u32>"]
    with pytest.raises(SystemExit, match="unknown variant 'nope'"):
        wo.main(["--virtual", "--variants", "default,nope"])


@pytest.mark.skipif(bool(cubins.unavailable()), reason=f"needs NVRTC: {cubins.unavailable()}")
def test_precompile_fills_the_runtime_cache_from_worker_processes(monkeypatch):
    """The GPU run compiles every row's kernel in spawned NVRTC processes first (a user kernel's generated
    family registered there too); the launches then find them in the cache, compiling nothing."""
    from gpubcast.cuda import compiler
    wo = _script()
    a = wo.Arrays(wo._Memory(), wo.BY_NAME["axpb"], True, wo._Memory().empty)
    kernels = [wo.launch_of(a, wo.VARIANT_NAMES[v])[:2] for v in ("span4", "chunk8")]
    a = wo.Arrays(wo._Memory(), wo.BY_NAME["expand"], True, wo._Memory().empty)
    kernels.append(wo.launch_of(a, wo.VARIANT_NAMES["stream"])[:2])
    assert wo.precompile(kernels, "sm_90", 2) > 0
    compiler.cached_kernel.cache_clear()

    def compiles(*args, **kwargs):
        raise AssertionError("compiled again: not in the cache")
    monkeypatch.setattr(compiler, "compile_clean", compiles)
    for family, name in kernels:
        binary, lowered = compiler.cached_kernel(family, name, "sm_90")
        assert binary[:4] == b"\x7fELF" and lowered
