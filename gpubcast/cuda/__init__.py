"""The CUDA side of gpubcast, below the backend: kernel sources, what to instantiate, how to pack a
launch, NVRTC compilation and the kernels generated for fused programs.

``sources``   read ``gpubcast/kernels/*.cu`` (package data) and find the CUDA headers
``catalog``   C++ types of dtypes, every kernel instantiation the dispatcher can request
``launch``    turn (op, plan, operands) into kernel launches: name, packed arguments, grid
``compiler``  compile with NVRTC (no GPU needed), cache CUBINs on disk
``fused``     one generated kernel for a fused program (``gpubcast.fusion``)

The tooling around them is ``gpubcast.testing`` (host emulation, virtual device, cases) and
``gpubcast.sass`` (SASS report, interpreter, model); nothing here imports either.  Nothing here
imports CuPy at module import time (``compiler`` imports ``cupy.cuda.nvrtc`` when it first
compiles), so the host emulation works wherever g++ and the headers do.
"""
