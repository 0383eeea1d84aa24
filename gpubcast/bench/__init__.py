"""``python -m gpubcast bench``: gpubcast against NumPy, onnxruntime, CuPy and torch.

patterns.py  the pattern suite (one definition for the CLI and ``pytest benchmarks/``)
peers.py     the compared implementations, each written the way its users write a pattern
measure.py   timing (host clock / CUDA events), bandwidth arithmetic, machine ceilings
runner.py    runs the suite: reference results, input sets, first calls, timings, records
fused.py     the fused chains (gpubcast.fuse against op by op, numexpr, onnxruntime) and their goals
functions.py the math table: each new math function and activation against NumPy (issue #22)
calls.py     the small calls: every calling form against NumPy's closest call
sweep.py     the size sweep: CPU 1K-16M elements against NumPy, PyTorch, JAX; GPU 4 KB-1 GB against CuPy, torch
report.py    the terminal table, the JSON document (checked against schema.json), the plot
cli.py       the subcommand
"""
