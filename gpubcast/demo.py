"""``python -m gpubcast demo``: a few broadcasts of every rule set, with shapes, backend and timing."""

from __future__ import annotations

import time

import numpy as np


def configure(parser) -> None:
    parser.add_argument("--backend", default=None, help="force a backend: numpy | numba | cuda")


def _cases(rng):
    import gpubcast as g

    a = rng.standard_normal((64, 32, 28, 28), dtype=np.float32)
    return [  # (rule, what the call does, the call on backend be)
        ("numpy", "add (64,32,28,28) + (1,32,1,1)",
         lambda be: g.add(a, rng.standard_normal((1, 32, 1, 1), dtype=np.float32), backend=be)),
        ("numpy", "where (28,28) ? (64,32,28,28) : 0",
         lambda be: g.where(a[0, 0] > 0, a, 0.0, backend=be)),
        ("pdpd", "multiply (64,32,28,28) * (32,28) axis=1",
         lambda be: g.multiply(a, np.ones((32, 28), np.float32), broadcast="pdpd", axis=1, backend=be)),
        ("unidirectional", "prelu (64,32,28,28), slope (32,1,1)",
         lambda be: g.prelu(a, np.full((32, 1, 1), 0.1, np.float32), backend=be)),
        ("bidirectional", "expand (32,1) with (64,1,28)",
         lambda be: g.expand(np.ones((32, 1), np.float32), (64, 1, 28), backend=be)),
        ("explicit", "broadcast_to (32,) -> (64,32,28,28) axes_mapping=[1]",
         lambda be: g.broadcast_to(np.ones(32, np.float32), (64, 32, 28, 28), mode="explicit", axes_mapping=[1],
                                   backend=be)),
        ("numpy_to", "broadcast_to (28,1) -> (64,28,28)",
         lambda be: g.broadcast_to(np.ones((28, 1), np.float32), (64, 28, 28), backend=be)),
        ("none", "subtract (64,32,28,28) - (64,32,28,28)",
         lambda be: g.subtract(a, a, broadcast="none", backend=be)),
    ]


def run(args) -> int:
    from gpubcast import backends

    rng = np.random.default_rng(0)
    backend = args.backend or backends.DEFAULT_CPU
    print(f"{'rule':15s} {'call':55s} {'out shape':18s} {'backend':8s} {'first call':>11s} {'median':>10s}")
    for rule, text, call in _cases(rng):
        t0 = time.perf_counter()
        out = call(backend)
        first = time.perf_counter() - t0
        times = []
        for _ in range(5):
            t0 = time.perf_counter()
            call(backend)
            times.append(time.perf_counter() - t0)
        print(f"{rule:15s} {text:55s} {str(tuple(out.shape)):18s} {backend:8s} "
              f"{first * 1e3:9.2f}ms {np.median(times) * 1e3:8.2f}ms")
    return 0
