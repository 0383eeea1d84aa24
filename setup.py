"""The package's native code, built when gpubcast is built (a wheel, ``pip install .``, an editable
install): each C/C++ extension module in ``EXTENSIONS``, from its source in ``gpubcast/native/``;
everything else is configured in pyproject.toml.

An extension ``gpubcast.native.<name>`` is built from ``gpubcast/native/<name>.cpp`` with NumPy's
headers (a build requirement) and ``GB_SOURCE_SHA256``, the SHA-256 of that text, which the module
exposes so that the runtime never takes a module built from another text (a checkout changed
since its install).  Another extension is one more ``native(...)`` line.
"""

import hashlib
from pathlib import Path

from setuptools import Extension, setup
from setuptools.command.build_ext import build_ext

NATIVE = Path("gpubcast") / "native"   # relative: setuptools wants the sources' paths relative to this file


def native(name: str, *, libraries=(), extra_compile_args=()) -> Extension:
    """Extension ``gpubcast.native.<name>`` from ``gpubcast/native/<name>.cpp`` (C++17)."""
    source = NATIVE / f"{name}.cpp"
    digest = hashlib.sha256((Path(__file__).resolve().parent / source).read_bytes()).hexdigest()
    return Extension(f"gpubcast.native.{name}", [source.as_posix()], language="c++",
                     define_macros=[("GB_SOURCE_SHA256", f'"{digest}"')], libraries=list(libraries),
                     extra_compile_args=["-std=c++17", *extra_compile_args])


#: every extension module of the package
EXTENSIONS = [
    native("hot_call"),   # the compiled hot path (gpubcast.compiled_calls)
    native("cuda_launch", libraries=["dl"]),   # the compiled CUDA launch path (gpubcast.cuda.compiled_launch)
]


class BuildExtWithNumpy(build_ext):
    """build_ext with NumPy's headers on the include path (NumPy imported only when building)."""

    def finalize_options(self):
        super().finalize_options()
        import numpy
        self.include_dirs.append(numpy.get_include())


setup(ext_modules=EXTENSIONS, cmdclass={"build_ext": BuildExtWithNumpy})
