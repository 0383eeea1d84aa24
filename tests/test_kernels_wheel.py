"""The wheel ships the kernel sources, and an installed gpubcast finds and reads them."""

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

ROOT = Path(__file__).resolve().parent.parent


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
    return ""


pytestmark = pytest.mark.skipif(bool(_build_tools()), reason=_build_tools() or "")


def _copy_sources(dest: Path) -> None:
    """The files a build needs, so that building leaves no build/ or egg-info in the checkout."""
    for name in ("pyproject.toml", "setup.py", "MANIFEST.in", "README.md"):
        if (ROOT / name).exists():
            shutil.copy2(ROOT / name, dest / name)
    for folder in ("gpubcast", "kernels"):
        shutil.copytree(ROOT / folder, dest / folder, ignore=shutil.ignore_patterns("__pycache__"))


@pytest.fixture(scope="module")
def wheel(tmp_path_factory):
    src = tmp_path_factory.mktemp("src")
    _copy_sources(src)
    dist = tmp_path_factory.mktemp("dist")
    proc = subprocess.run([sys.executable, "-m", "pip", "wheel", str(src), "--no-deps", "--no-build-isolation",
                           "--no-index", "-q", "-w", str(dist)], capture_output=True, text=True, cwd=src)
    assert proc.returncode == 0, proc.stderr[-3000:]
    [whl] = dist.glob("gpubcast-*.whl")
    return whl


def test_wheel_contains_every_kernel_source(wheel):
    names = set(zipfile.ZipFile(wheel).namelist())
    sources = [*(ROOT / "kernels").glob("*.cu*"), *(ROOT / "kernels").glob("*.h")]   # *.h: ElementwiseKernel's CPU
    assert any(s.name == "elementwise_host.h" for s in sources)
    for source in sources:
        assert f"gpubcast/kernels/{source.name}" in names


def test_installed_package_finds_and_reads_its_kernels(wheel, tmp_path):
    venv = tmp_path / "venv"
    subprocess.run([sys.executable, "-m", "venv", "--without-pip", str(venv)], check=True)
    python = venv / "bin" / "python"
    # no PYTHONPATH: a checkout on it (with its egg-info) would make pip see gpubcast installed already
    env = {k: v for k, v in os.environ.items() if k not in ("PYTHONPATH", "PYTHONHOME")}
    proc = subprocess.run([sys.executable, "-m", "pip", "--python", str(python), "install", "--no-deps",
                           "--no-index", "-q", str(wheel)], capture_output=True, text=True, env=env)
    assert proc.returncode == 0, proc.stderr[-3000:]
    # numpy, ml_dtypes, ... from this interpreter's site-packages, after the fresh venv's own
    site = subprocess.run([str(python), "-c", "import sysconfig; print(sysconfig.get_paths()['purelib'])"],
                          capture_output=True, text=True, check=True).stdout.strip()
    Path(site, "_parent_packages.pth").write_text(sysconfig.get_paths()["purelib"] + "\n")
    probe = ("import gpubcast, gpubcast.cuda.sources as s; print(gpubcast.__file__); print(s.kernel_dir()); "
             "print(s.source_hash('binary')); print(len(s.source('variadic')))")
    out = subprocess.run([str(python), "-c", probe], capture_output=True, text=True, cwd=tmp_path, env=env)
    assert out.returncode == 0, out.stderr[-3000:]
    module, kernel_dir, digest, length = out.stdout.split("\n")[:4]
    assert Path(module).is_relative_to(venv) and Path(kernel_dir).is_relative_to(venv)
    assert Path(kernel_dir).name == "kernels" and Path(kernel_dir).parent.name == "gpubcast"

    from gpubcast.cuda import sources     # the checkout's, for comparison
    assert digest == sources.source_hash("binary") and int(length) > 1000
