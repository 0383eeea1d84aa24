"""The shipped benchmark (python -m gpubcast bench) and the scripts of benchmarks/."""
