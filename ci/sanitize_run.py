"""Every CUDA kernel family once on a GPU, small, for ``compute-sanitizer --tool memcheck``.

Covers the contiguous kernels (vector and element paths: aligned and misaligned pointers,
tails), kernel-argument scalars and device scalars, the general kernels with strided,
transposed, negative-stride and broadcast operands and strided outputs, the 64-bit index
path (forced), chained variadic launches, data movement of every element size, and
gpubcast.ElementwiseKernel's generated kernels (broadcast, strided, raw, size=; both index paths) and
gpubcast.fuse's (contiguous, broadcast, transposed, 15 leaves; both index paths).
Each result is checked against the NumPy reference; exit status 1 on any mismatch.

    compute-sanitizer --tool memcheck --error-exitcode 1 python ci/sanitize_run.py
"""

from __future__ import annotations

import dataclasses
import sys

import numpy as np

from gpubcast import backends, ops
from gpubcast.testing import checks


def main() -> int:
    rng = np.random.default_rng(0)
    cases = (checks.benchmark_patterns(rng) + checks.benchmark_patterns(rng, np.float64)
             + checks.benchmark_patterns(rng, np.int8) + checks.random_cases(rng, 60))
    for dtype in (np.int8, np.float16, np.float32, np.complex128):
        for layout, inputs in checks.binary_layouts(rng, dtype, "add").items():
            cases.append(checks.Case(f"add {np.dtype(dtype)} {layout}", ops.get("add"), list(inputs)))
    be = backends.get("cuda")
    cupy = be.xp      # CuPy (or the virtual CUDA device's stand-in, tests/cuda/test_fusion_cuda.py)
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
            rtol = checks.tolerance(case.op.name, dtype, device=True)
            if not checks.agree(case.op.name, got, want, rtol):
                failures += 1
                why = checks._difference(got, want, rtol, case.op.name)
                print(f"MISMATCH {'64-bit ' if force64 else ''}{case.name}: {why}")
    be.execute = execute
    failures += elementwise_kernels(rng)
    failures += fused_kernels(rng, be)
    cupy.cuda.Device().synchronize()
    print(f"sanitize run: {2 * len(cases)} calls, the ElementwiseKernel and fused runs, {failures} mismatches")
    return 1 if failures else 0


def elementwise_kernels(rng) -> int:
    """User kernels (gpubcast.ElementwiseKernel) on both index paths, each against NumPy; mismatches."""
    import gpubcast as gb
    from gpubcast import elementwise_kernel
    cupy = backends.get("cuda").xp

    def axpb(*args, **kwargs):    # new kernel objects each time: no hot path keeps the other index width
        return gb.ElementwiseKernel("T x, T a, T b", "T z", "z = a * x + b", "axpb")(*args, **kwargs)

    def reverse(*args):
        return gb.ElementwiseKernel("T x, raw T y", "T z", "z = x + y[_ind.size() - i - 1]", "add_reverse")(*args)

    def iota(size):
        return gb.ElementwiseKernel("", "int64 y", "y = i", "iota")(size=size)

    x = rng.standard_normal((7, 33, 65)).astype(np.float32)
    a, b = rng.standard_normal(33).astype(np.float32), rng.standard_normal((33, 1)).astype(np.float32)
    xt = x.transpose(2, 1, 0)[::-1]
    runs = [
        (lambda: axpb(cupy.asarray(x), cupy.asarray(a)[:, None], cupy.asarray(b)), a[:, None] * x + b),
        (lambda: axpb(cupy.asarray(x), cupy.asarray(a), cupy.asarray(b), broadcast="pdpd", axis=1),
         a[:, None] * x + b),
        (lambda: axpb(cupy.asarray(x).transpose(2, 1, 0)[::-1], cupy.asarray(a)[:, None], cupy.asarray(b)),
         a[:, None] * xt + b),
        (lambda: reverse(cupy.asarray(x), cupy.asarray(x)), x + x.reshape(-1)[::-1].reshape(x.shape)),
        (lambda: iota(size=1000), np.arange(1000)),
    ]
    failures, limit = 0, elementwise_kernel.INT32_LIMIT
    for force64 in (False, True):
        elementwise_kernel.INT32_LIMIT = 10 if force64 else limit
        for k, (run, want) in enumerate(runs):
            got = cupy.asnumpy(run())
            if got.shape != want.shape or not np.allclose(got, want, rtol=1e-6, atol=1e-6):
                failures += 1
                print(f"MISMATCH {'64-bit ' if force64 else ''}ElementwiseKernel run {k}")
    elementwise_kernel.INT32_LIMIT = limit
    return failures


def fused_kernels(rng, be) -> int:
    """gpubcast.fuse's generated kernels (contiguous, broadcast, transposed: shared-memory tiles, negative
    strides, 15 leaves; both index paths), each against the chain on the NumPy reference; mismatches."""
    import gpubcast as gb
    from gpubcast import fusion
    cupy = be.xp

    def chain(*xs):
        acc = xs[0]
        for x in xs[1:]:
            acc = acc * 1.5 + x
        return acc
    gelu = gb.fuse(lambda x, b: 0.5 * (x + b) * (1 + gb.tanh(0.79788456 * ((x + b) + 0.044715 * (x + b) ** 3))))
    where = gb.fuse(lambda x, t, s: gb.where(x > t, x * s, 0))
    x = rng.standard_normal((7, 33, 65)).astype(np.float32)
    t, s = rng.standard_normal(65).astype(np.float32), rng.standard_normal((33, 1)).astype(np.float32)
    many = [rng.standard_normal((33, 65) if k % 2 else (65,)).astype(np.float32) for k in range(15)]
    d = cupy.asarray
    runs = [(gelu, [d(x), d(t)], [x, t]), (where, [d(x), d(t), d(s)], [x, t, s]),
            (where, [d(x).transpose(0, 2, 1)[:, ::-1], d(s.T), d(t[:, None])],
             [x.transpose(0, 2, 1)[:, ::-1], s.T, t[:, None]]),
            (gb.fuse(chain), [d(a) for a in many], many)]
    execute = be.execute_fused
    failures = 0
    for force64 in (False, True):
        if force64:
            be.execute_fused = lambda program, p, inputs, out: execute(program, dataclasses.replace(p, index_bits=64),
                                                                       inputs, out)
        for k, (f, dev, host) in enumerate(runs):
            got = cupy.asnumpy(f(*dev))
            [program] = f._trace(host).programs
            want = fusion.evaluate(program, host, backend="numpy")
            if got.shape != want.shape or not np.allclose(got, want, rtol=1e-5, atol=1e-6):  # tanh: CUDA's
                failures += 1
                print(f"MISMATCH {'64-bit ' if force64 else ''}fused run {k}: {checks._difference(got, want)}")
    be.execute_fused = execute
    return failures


if __name__ == "__main__":
    sys.exit(main())
