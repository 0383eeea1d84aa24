"""gpubcast's test suite, grouped by the layer each test file tests (docs/developer/testing.md):

``planner/``    the rule sets, the planner and its errors (the specifications' examples, properties)
``ops/``        each op's values and types through the NumPy-style functions, on the reference and
                Numba backends (math functions, unary ops, clip, activations)
``frontends/``  the public surface and the front ends: calling forms, ``out=``, array kinds, ONNX,
                OpenVINO, ``fuse``, ``ElementwiseKernel``, Dask
``numba/``      the Numba CPU backend: rows and drivers, float32 lanes, threads and forks
``cuda/``       the CUDA backend and runtime: kernels under host emulation and NVRTC, launch
                parameters, the compiled launch path, fused kernels, the GPU tests
``runtime/``    below the backends: the cache of compiled code, the host pool, the hot paths and the
                compiled hot path, external tools, the wheel
``tooling/``    the GPU-less test device, the SASS analysis, the layering contracts
``benchmark/``  the shipped benchmark (``python -m gpubcast bench``) and ``benchmarks/`` scripts
``docs/``       the documentation site builds and its examples run
``support/``    what several test files share: case generators, layouts, references, sampling

``conftest.py`` holds the fixtures and hooks every folder shares.
"""
