"""The Numba CPU backend (``backend.NumbaBackend``): compiled, parallel row functions and drivers."""
