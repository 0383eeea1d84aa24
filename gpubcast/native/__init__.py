"""The package's C/C++ extension modules, built with the package (setup.py ``EXTENSIONS``), each
from its source here (``<name>.cpp`` -> ``gpubcast.native.<name>``):

``hot_call``      the compiled hot path's C call (loaded by ``gpubcast.compiled_calls``, which builds it
                  at run time in a source tree that was not built)
``cuda_launch``   the compiled CUDA launch path (loaded the same way by ``gpubcast.cuda.compiled_launch``;
                  libcuda is opened at run time, never linked)
"""
