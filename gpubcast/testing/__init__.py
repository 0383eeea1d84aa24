"""The GPU-less test device: what the tests (and ``kernels --emulate``, ``ci/``) run gpubcast's CUDA
side and its Array API functions on where no GPU is.  Tooling: it may import anything below it
(dispatcher, backends, the CUDA runtime), and nothing in the runtime imports it.

``emulate``    the kernels of ``gpubcast/kernels/*.cu`` built as host C++ and run on the CPU, barriers
               and shared memory checked; ``EmulatedBackend`` computes NumPy arrays with them
``virtual``    a virtual CUDA device: a stand-in for the CuPy calls gpubcast makes under its real CUDA
               backend, every launch checked and run by ``emulate``
``virtual_torch``  a stand-in for the few torch calls gpubcast makes, over the virtual device
``device``     the one switch between a GPU and the virtual device (``GPUBCAST_VIRTUAL_CUDA``)
``checks``     cases (benchmark patterns, random ones) that run the kernels against the NumPy reference
``array_api_namespace``  the Array API namespace of gpubcast's elementwise functions (NumPy's for the
               rest) that ``ci/array-api-tests`` runs the Array API test suite against
"""
