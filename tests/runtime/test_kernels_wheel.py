"""The wheel ships the kernel sources and the built extension modules: an installed gpubcast finds
and reads its kernels, and runs the compiled hot path in an environment with no C/C++ compiler."""

import importlib.metadata
import importlib.util
import os
import shutil
import subprocess
import sys
import sysconfig
import zipfile
from pathlib import Path

import pytest

from tests.support import ROOT

#: compilers a build could call; none may be reachable where the installed wheel runs
COMPILERS = ("cc", "c++", "gcc", "g++", "clang", "clang++")


def _build_tools() -> str:
    """'' when this interpreter can build the wheel without network (test extras), else why not."""
    try:
        major, minor = (int(p) for p in importlib.metadata.version("setuptools").split(".")[:2])
    except importlib.metadata.PackageNotFoundError:
        return "setuptools is not installed"
    if (major, minor) < (69, 0):
        return f"setuptools {major}.{minor} < 69 (pyproject's build requirement)"
    if (major, minor) < (70, 1) and importlib.util.find_spec("wheel") is None:
        return "setuptools < 70.1 needs the wheel package to build wheels"
    if not (shutil.which("g++") or shutil.which("c++")):
        return "no C++ compiler to build the extension modules"
    return ""


pytestmark = pytest.mark.skipif(bool(_build_tools()), reason=_build_tools() or "")


def _copy_sources(dest: Path) -> None:
    """What a fresh clone holds (no built extension module, no __pycache__), so that building
    leaves no build/ or egg-info in the checkout."""
    for name in ("pyproject.toml", "setup.py", "MANIFEST.in", "README.md"):
        if (ROOT / name).exists():
            shutil.copy2(ROOT / name, dest / name)
    shutil.copytree(ROOT / "gpubcast", dest / "gpubcast", ignore=shutil.ignore_patterns("__pycache__", "*.so"))


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    src = tmp_path_factory.mktemp("src")
    _copy_sources(src)
    dist = tmp_path_factory.mktemp("dist")
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", str(src), "--no-deps", "--no-build-isolation",
                           "--no-index", "-q", "-w", str(dist)], capture_output=True, text=True, cwd=src, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    [whl] = dist.glob("gpubcast-*.whl")
    return whl


@pytest.fixture(scope="module")
def installed(wheel, tmp_path_factory):
    """(python, env) of a fresh venv with the wheel installed; its other dependencies (numpy, numba,
    ...) from this interpreter's site-packages, after the venv's own.  ``env``: no PYTHONPATH (a
    checkout on it, with its egg-info, would make pip see gpubcast installed already), no CC or CXX,
    and a PATH holding the venv's bin/ alone: no compiler."""
    venv = tmp_path_factory.mktemp("venv")
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True, timeout=120)
    python = venv / "bin" / "python"
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME", "CC", "CXX")}
    proc = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps",
                           "--no-index", "-q", str(wheel)], capture_output=True, text=True, env=env, timeout=300)
    assert proc.returncode == 0, proc.stderr[-3000:]
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True, timeout=60).stdout.strip()
    Path(site, "_parent_packages.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    return python, {**env, "PATH": str(python.parent), "GPUBCAST_CACHE_DIR": str(venv / "cache")}


def test_wheel_contains_every_kernel_source_and_the_built_extension(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    kernels = ROOT / "gpubcast" / "kernels"
    sources = [*kernels.glob("*.cu*"), *kernels.glob("*.h")]   # *.h: ElementwiseKernel's CPU
    assert any(s.name == "elementwise_host.h" for s in sources) and len(sources) >= 9
    for source in sources:
        assert f"gpubcast/kernels/{source.name}" in names
    suffix = sysconfig.get_config_var("EXT_SUFFIX")
    for name in ("hot_call", "cuda_launch"):        # the compiled hot path, the compiled CUDA launch path
        assert f"gpubcast/native/{name}{suffix}" in names and f"gpubcast/native/{name}.cpp" in names
    assert not [n for n in names if n.startswith("kernels/")]   # one place for the sources


def test_installed_package_finds_and_reads_its_kernels(installed, tmp_path):
    python, env = installed
    probe = ("import gpubcast, gpubcast.cuda.sources as s; print(gpubcast.__file__); print(s.kernel_dir()); "
             "print(s.source_hash('binary')); print(len(s.source('variadic')))")
    out = subprocess.run([str(python), "-c", probe], capture_output=True, text=True, cwd=tmp_path, env=env,
                         timeout=120)
    assert out.returncode == 0, out.stderr[-3000:]
    module, kernel_dir, digest, length = out.stdout.split("\n")[:4]
    venv = python.parent.parent
    assert Path(module).is_relative_to(venv) and Path(kernel_dir).is_relative_to(venv)
    assert Path(kernel_dir).name == "kernels" and Path(kernel_dir).parent.name == "gpubcast"

    from gpubcast.cuda import sources     # the checkout's, for comparison
    assert digest == sources.source_hash("binary") and int(length) > 1000


#: repeated small calls, then one with the general path made to fail: only the compiled path can answer it
COMPILED_PROBE = f"""
import shutil, warnings
import numpy as np
import gpubcast as gb, gpubcast.api as api, gpubcast.compiled_calls as c
assert not [t for t in {COMPILERS!r} if shutil.which(t)], "a compiler on PATH"
warnings.simplefilter("error")      # a run-time build or an unavailable hot path would warn
x = np.arange(8.0)
for v in (1.0, 2.0, 3.0):
    gb.add(x, v)
def general_path(*args, **kwargs):
    raise AssertionError("this call left the compiled path")
api.apply = general_path
assert (gb.add(x, 5.0) == x + 5.0).all() and (gb.add(x, -1.5) == x - 1.5).all()
print(c.describe())
print(c.call.__self__.__file__)
"""


def test_installed_wheel_runs_the_compiled_hot_path_without_a_compiler(installed, tmp_path):
    python, env = installed
    out = subprocess.run([str(python), "-c", COMPILED_PROBE], capture_output=True, text=True, cwd=tmp_path,
                         env=env, timeout=300)
    assert out.returncode == 0, out.stderr[-3000:]
    how, module = out.stdout.splitlines()[-2:]
    assert how.startswith("gpubcast.native.hot_call, built with the package"), how
    assert Path(module).is_relative_to(python.parent.parent / "lib") and Path(module).parent.name == "native"
