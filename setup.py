"""Ships the CUDA kernel sources (top-level ``kernels/``, their source of truth) inside the wheel as
``gpubcast/kernels/``; everything else is configured in pyproject.toml."""

import shutil
from pathlib import Path

from setuptools import setup
from setuptools.command.build_py import build_py

KERNELS = Path(__file__).resolve().parent / "kernels"


class BuildPyWithKernels(build_py):
    def run(self):
        super().run()
        target = Path(self.build_lib) / "gpubcast" / "kernels"
        target.mkdir(parents=True, exist_ok=True)
        for pattern in ("*.cu*", "*.h"):      # *.h: the CPU skeleton of ElementwiseKernel
            for source in sorted(KERNELS.glob(pattern)):
                shutil.copy2(source, target / source.name)


setup(cmdclass={"build_py": BuildPyWithKernels})
