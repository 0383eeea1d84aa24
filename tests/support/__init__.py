"""What several test files share (one place for them):

``numba_cases``    input values with edge cases per dtype, and comparison of a backend with the NumPy
                   reference (``run_both``, ``mismatch``, ``tolerance``)
``layouts``        the same values in different memory (``LAYOUTS``)
``math_cases``     the math functions' sweeps with special values, distances in ulps
``float32_cases``  the float32-lane functions, their float64 references and error in ulps
``naive_rules``    each rule set written the naive way: the planner's oracle
``fused_chains``   random fused programs and their unfused oracle
``sampling``       which cases ``make test`` runs and which only ``make test-all`` (``slow``)

``ROOT`` is the repository's folder.
"""

from pathlib import Path

#: the repository's folder (the one holding ``tests/``)
ROOT = Path(__file__).resolve().parents[2]
