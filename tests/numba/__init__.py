"""The Numba CPU backend: rows and drivers, float32 lanes, threads and forks."""
