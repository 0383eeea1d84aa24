"""The SASS analysis lab: what the kernels' compiled code (sm_80/sm_90 SASS, read from the CUBIN
without a GPU) says about them.  Tooling: it may import anything below it, the test device
(``gpubcast.testing``) included, and nothing in the runtime or the test device imports it.

``listings``     one kernel compiled alone as the runtime compiles it, and the CUDA tools' listings
                 of its CUBIN (``cuobjdump -res-usage``, ``nvdisasm``), cached
``interpreter``  a small SASS interpreter: runs a kernel's sm_90 SASS for chosen threads and counts
                 what they execute (``SassBackend`` computes NumPy arrays with it)
``resources``    static resource report of the hot kernels from their SASS (``kernels --resources``)
``model``        a static bandwidth model of the benchmark patterns on an H100 (``kernels --model``)
"""
