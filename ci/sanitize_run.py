"""Every CUDA kernel family once on a GPU, small, for ``compute-sanitizer --tool memcheck``.

Covers the contiguous kernels (vector and element paths: aligned and misaligned pointers,
tails), kernel-argument scalars and device scalars, the general kernels with strided,
transposed, negative-stride and broadcast operands and strided outputs, the 64-bit index
path (forced), chained variadic launches and data movement of every element size.
Each result is checked against the NumPy reference; exit status 1 on any mismatch.

    compute-sanitizer --tool memcheck --error-exitcode 1 python ci/sanitize_run.py
"""

from __future__ import annotations

import dataclasses
import sys

import cupy
import numpy as np

from gpubcast import backends, ops
from gpubcast.cuda import checks


def main() -> int:
    rng = np.random.default_rng(0)
    cases = (checks.benchmark_patterns(rng) + checks.benchmark_patterns(rng, np.float64)
             + checks.benchmark_patterns(rng, np.int8) + checks.random_cases(rng, 60))
    for dtype in (np.int8, np.float16, np.float32, np.complex128):
        for layout, inputs in checks.binary_layouts(rng, dtype, "add").items():
            cases.append(checks.Case(f"add {np.dtype(dtype)} {layout}", ops.get("add"), list(inputs)))
    be = backends.get("cuda")
    execute = be.execute
    failures = 0
    for force64 in (False, True):
        if force64:   # the 64-bit index path on small arrays
            be.execute = lambda op, p, inputs, out: execute(op, dataclasses.replace(p, index_bits=64), inputs, out)
        for case in cases:
            want = checks.run(case, "numpy")
            got = checks.run(case, None, inputs=[checks.device_like(x, cupy) for x in case.inputs])
            got = got.get() if isinstance(got, cupy.ndarray) else np.asarray(got)
            dtype = case.meta.get("dtype") or np.asarray(want).dtype
            if not checks.agree(case.op.name, got, want, checks.tolerance(case.op.name, dtype, device=True)):
                failures += 1
                print(f"MISMATCH {'64-bit ' if force64 else ''}{case.name}: {checks._difference(got, want)}")
    be.execute = execute
    cupy.cuda.Device().synchronize()
    print(f"sanitize run: {2 * len(cases)} calls, {failures} mismatches")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
