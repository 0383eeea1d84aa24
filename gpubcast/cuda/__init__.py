"""The CUDA side of gpubcast, below the backend: kernel sources, what to instantiate, how to pack a
launch, NVRTC compilation and a host emulation harness.

``sources``   find ``kernels/*.cu`` (installed wheel or checkout) and the CUDA headers
``catalog``   C++ types of dtypes, every kernel instantiation the dispatcher can request
``launch``    turn (op, plan, operands) into kernel launches: name, packed arguments, grid
``nvrtc``     compile with NVRTC (no GPU needed), cache CUBINs on disk
``emulate``   run the same kernels on the CPU: g++ + ctypes, a loop over the launch grid

Nothing here imports CuPy at module import time except ``nvrtc`` (which needs
``cupy.cuda.nvrtc``), so the emulation harness works wherever g++ and the headers do.
"""
