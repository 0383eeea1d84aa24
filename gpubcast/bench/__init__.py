"""``python -m gpubcast bench``: gpubcast against NumPy, onnxruntime, CuPy and torch.

patterns.py  the pattern suite (one definition for the CLI and ``pytest bench/``)
peers.py     the compared implementations, each written the way its users write a pattern
measure.py   timing (host clock / CUDA events), bandwidth arithmetic, machine ceilings
runner.py    runs the suite: reference results, input sets, first calls, timings, records
report.py    the terminal table, the JSON document (checked against schema.json), the plot
cli.py       the subcommand
"""
