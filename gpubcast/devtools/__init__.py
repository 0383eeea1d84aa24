"""Tooling for gpubcast's CUDA side, and its checks against other suites: it may import anything
(dispatcher, backends, benchmark), and nothing in the runtime imports it.

``emulate``    the kernels of ``kernels/*.cu`` built as host C++ and run on the CPU, barriers and
               shared memory checked; ``EmulatedBackend`` computes NumPy arrays with them
``virtual``    a virtual CUDA device: a stand-in for the CuPy calls gpubcast makes under its real CUDA
               backend, every launch checked and run by ``emulate``
``device``     the one switch between a GPU and the virtual device (``GPUBCAST_VIRTUAL_CUDA``)
``resources``  static resource report of the hot kernels from their SASS (``kernels --resources``)
``checks``     cases (benchmark patterns, random ones) that run the kernels against the NumPy reference
``sass_exec``  a small SASS interpreter: runs a kernel's sm_90 SASS for chosen threads and counts what
               they execute (``SassBackend`` computes NumPy arrays with it)
``model``      a static bandwidth model of the benchmark patterns on an H100 (``kernels --model``)
``minimax``    how the float32 math kernels' polynomials were fitted (discrete minimax by linear
               programming, float32 coefficients; needs SciPy and mpmath)
``array_api_namespace``  the Array API namespace of gpubcast's elementwise functions (NumPy's for the
               rest) that ``ci/array-api-tests`` runs the Array API test suite against
"""
