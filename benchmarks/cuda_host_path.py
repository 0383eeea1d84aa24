"""The CUDA backend's host path with the kernel launch stubbed (issue 42): what a warm, repeated call
costs gpubcast on the host, without a GPU, on ``gpubcast.bench.calls``' stand-in for CuPy (launches
do nothing; arrays are plain attributes).  Best and median over 31 samples of >= 20 ms each.

  compiled        the compiled launch path (gpubcast.cuda.compiled_launch: the call answered in C,
                  the no-op launcher)
  Python runner   the backend's prepared Python runner (``CudaBackend(compiled=False)``): the path a
                  repeated call took before the compiled one

``--before-src DIR`` times a source tree of an older gpubcast instead (e.g. ``git archive <rev> | tar
-x -C DIR``), which has only the Python runner, so that one run on one machine gives both sides.

Run: .venv/bin/python benchmarks/cuda_host_path.py [--before-src DIR]
"""

from __future__ import annotations

import argparse
import inspect
import os
import sys


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--before-src", metavar="DIR", help="time the gpubcast source tree in DIR instead")
    args = parser.parse_args(argv)
    if args.before_src:   # that tree first: an editable install's import hook would win over sys.path
        sys.meta_path[:] = [f for f in sys.meta_path if "editable" not in (type(f).__module__ + repr(f)).lower()]
        sys.path.insert(0, os.path.abspath(args.before_src))
    import numpy as np

    import gpubcast as gb
    from gpubcast import backends
    from gpubcast.backends.cuda import CudaBackend
    from gpubcast.bench import calls, fused, measure

    affine = fused.CHAINS[0]
    scale_shift = gb.fuse(affine.make(gb))
    stub = calls._HostOnlyArray
    if not hasattr(stub, "ndim"):   # an older stand-in lacks what gb.fuse reads
        stub.ndim = property(lambda self: len(self.shape))
        stub.itemsize = property(lambda self: self.dtype.itemsize)
    at = stub.at if hasattr(stub, "at") else (lambda shape, dtype, k: stub(shape, dtype))
    if "compiled" in inspect.signature(CudaBackend).parameters:
        from gpubcast.cuda import compiled_launch
        variants = [("compiled", lambda: CudaBackend(calls._host_only_cupy(), compiled_launch.noop())),
                    ("Python runner", lambda: CudaBackend(calls._host_only_cupy(), compiled=False))]
    else:
        variants = [("Python runner (before)", lambda: CudaBackend(calls._host_only_cupy()))]
    print(f"gpubcast from {os.path.dirname(gb.__file__)}; load average {os.getloadavg()}")
    for label, make in variants:
        with backends.registered("cuda", make()):
            x, b = (at(a.shape, a.dtype, k) for k, a in enumerate(calls._operands()))
            o = at(x.shape, x.dtype, 2)
            chain = [at(s, np.float32, 3 + k) for k, s in enumerate(affine.shapes("tiny", "gpu"))]
            rows = [("add(x, b)", lambda: gb.add(x, b)), ("add(x, b, out=o)", lambda: gb.add(x, b, out=o)),
                    ("multiply(x, 2.0)", lambda: gb.multiply(x, 2.0)),
                    (f"{affine.name} chain, gb.fuse", lambda: scale_shift(*chain))]
            for name, call in rows:
                for _ in range(5):
                    call()
                t = measure.time_host([call], repeat=31, min_sample_s=0.02)
                print(f"  {label:24s} {name:24s} best {min(t.samples) * 1e6:6.2f} us   median "
                      f"{t.median_s * 1e6:6.2f} us", flush=True)


if __name__ == "__main__":
    main()
