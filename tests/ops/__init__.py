"""Each op's values and types through the NumPy-style functions, on the reference and Numba backends."""
