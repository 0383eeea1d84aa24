"""The CUDA backend and runtime: kernels under host emulation and NVRTC, launch parameters, the compiled
launch path, fused kernels, and the tests that need a GPU."""
