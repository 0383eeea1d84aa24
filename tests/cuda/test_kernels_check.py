"""Every kernel instantiation the dispatcher can request compiles with NVRTC (no GPU needed)."""

import re

import numpy as np
import pytest

from gpubcast import ops
from gpubcast.cuda import catalog, compiler, sources

try:
    compiler.nvrtc_module()
    NVRTC = ""
except RuntimeError as e:
    NVRTC = str(e)

pytestmark = pytest.mark.skipif(bool(NVRTC), reason=NVRTC)


def test_check_compiles_every_instantiation_for_sm80_and_sm90(capsys):
    from gpubcast import kernels_cli
    assert kernels_cli.check(["sm_80", "sm_90"], fast=True, jobs=2) == 0
    out = capsys.readouterr().out
    every = catalog.every_instantiation()
    for family, kernels in every.items():
        for arch in ("compute_80", "compute_90"):
            row = re.search(rf"^{family}\s+{arch}\s+(\d+)\s+(\d+)", out, re.M)
            assert row, out
            assert (int(row.group(1)), int(row.group(2))) == (3 * len(kernels), 0)


def test_runtime_options_compile_a_cubin_for_each_family():
    # what a GPU compiles on first use: the full optimiser and ptxas, for one kernel per family
    picks = {
        "binary": catalog.kernels_for(ops.get("power"), (np.dtype("c8"), np.dtype("c8")), np.dtype("c8")),
        "ternary": catalog.kernels_for(ops.get("where"), (np.dtype("?"), np.dtype("f8"), np.dtype("f8")),
                                       np.dtype("f8")),
        "variadic": catalog.kernels_for(ops.get("mean"), (np.dtype("f2"),), np.dtype("f2")),
        "copy": catalog.kernels_for(ops.get("copy"), (np.dtype("c16"),), np.dtype("c16")),
    }
    for family, k in picks.items():
        compiled = compiler.compile_family(family, k.names(), "sm_90")
        assert compiled.kind == "cubin" and compiled.binary[:4] == b"\x7fELF"
        assert set(compiled.lowered) == set(k.names())
        assert all(sym.startswith("_Z") for sym in compiled.lowered.values())


def test_compile_errors_are_reported_with_the_log(monkeypatch):
    monkeypatch.setattr(sources, "source", lambda family: "this is not C++;\n")
    with pytest.raises(compiler.CompileError, match=r"NVRTC could not compile copy\.cu for compute_90"):
        compiler.compile_family("copy", ["gb::copy_contig<gb::Copy, gb::Bytes<1>>"], "compute_90", fast=True)

    from gpubcast import kernels_cli
    lines = []
    assert kernels_cli.check(["sm_90"], ["copy"], fast=True, jobs=1, out=lines.append) == 1
    assert any("failed" in line for line in lines)


def test_check_rejects_a_bad_arch_name():
    from gpubcast import kernels_cli
    lines = []
    assert kernels_cli.check(["ampere"], fast=True, out=lines.append) == 2
    assert "sm_80" in lines[0]


def test_emit_writes_ptx(tmp_path):
    from gpubcast import kernels_cli
    assert kernels_cli.check(["sm_90"], ["copy"], fast=True, emit=str(tmp_path), jobs=1, out=lambda s: None) == 0
    ptx = list(tmp_path.glob("copy-compute_90-*.ptx"))
    assert ptx and b".target sm_90" in ptx[0].read_bytes()


def test_sources_inline_headers_so_the_cache_key_sees_them():
    text = sources.source("binary")
    assert '#include "' not in text and "struct OffsetCalc" in text and "GB_FN T floor_divide" in text
    assert sources.source_hash("binary") != sources.source_hash("copy")
    assert (sources.cuda_include_dir() / "cuda_fp16.h").is_file()


def test_store_path_variants_compile_and_store_as_they_say():
    """benchmarks/write_only.py's store paths (kernels/launch.cuh Path) compile for sm_80 and sm_90 in every family
    that takes them, and their row tiles store as named (sm_90 SASS): streaming stores (STG.E.EF), 8-byte
    pieces, and a block size that NVRTC records (.maxntid); the default path names the catalog's kernels."""
    from gpubcast.sass import cubins
    f4 = np.dtype("f4")
    families = {"binary": catalog.kernels_for(ops.get("add"), (f4, f4), f4),
                "ternary": catalog.kernels_for(ops.get("where"), (np.dtype("?"), f4, f4), f4),
                "copy": catalog.kernels_for(ops.get("copy"), (f4,), f4)}
    assert all(k.on(catalog.Path()).names() == k.names() for k in families.values())
    paths = [catalog.Path(stream=True, span=4), catalog.Path(store=8, chunk=8, threads=512, ept=16)]
    for k in families.values():
        names = [n for p in paths for n in k.on(p).names()]
        for arch in ("sm_80", "sm_90"):
            compiled = compiler.compile_family(k.family, names, arch)
            assert compiled.binary[:4] == b"\x7fELF" and "error" not in compiled.log
    with pytest.raises(ValueError, match="unary kernels take no store path"):
        catalog.kernels_for(ops.get("negative"), (f4,), f4).on(paths[0])
    if cubins.unavailable():
        return
    stores = {p: set(re.findall(r"\bSTG\S*", cubins.listings("copy", families["copy"].on(p).name(32), "sm_90")[4]))
              for p in (catalog.Path(), *paths)}
    assert "STG.E.EF.128" in stores[paths[0]] and not any(".EF" in s for s in stores[catalog.Path()])
    assert "STG.E.64" in stores[paths[1]] and "STG.E.64" not in stores[catalog.Path()]
    ptx = compiler.compile_family("copy", [families["copy"].on(paths[1]).name(32)], "compute_90").binary
    assert re.search(rb"\.maxntid 512, 1, 1", ptx)
