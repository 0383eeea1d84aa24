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
