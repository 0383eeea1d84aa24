"""Compares two pytest-json-report reports of the Array API suite (``ci/array-api-tests``): NumPy's
and gpubcast's.  Prints the table (passed / failed / skipped per namespace, as Markdown) and the
tests that fail for gpubcast but pass for NumPy, with the first line of each one's error.

    python ci/array_api_compare.py NUMPY_REPORT.json GPUBCAST_REPORT.json

Exit status 1 when there is such a test (the Done-when of issue #22: none).
"""

from __future__ import annotations

import json
import sys
from collections import Counter

OUTCOMES = ("passed", "failed", "skipped")


def outcomes(path: str) -> dict[str, dict]:
    """test id (the suite's own, without its folder) -> the report's record of it."""
    with open(path) as f:
        tests = json.load(f)["tests"]
    return {t["nodeid"].split("array_api_tests/", 1)[-1]: t for t in tests}


def first_error_line(test: dict) -> str:
    crash = (test.get("call") or {}).get("crash") or {}
    return crash.get("message", "").strip().splitlines()[0][:160] if crash.get("message") else ""


def main(numpy_report: str, gpubcast_report: str) -> int:
    runs = {"numpy": outcomes(numpy_report), "gpubcast": outcomes(gpubcast_report)}
    print("| namespace | tests | passed | failed | skipped |\n|---|---|---|---|---|")
    for name, tests in runs.items():
        counts = Counter("failed" if t["outcome"] == "error" else t["outcome"] for t in tests.values())
        print(f"| {name} | {len(tests)} | " + " | ".join(str(counts[o]) for o in OUTCOMES) + " |")
    worse = sorted(n for n, t in runs["gpubcast"].items()
                   if t["outcome"] in ("failed", "error") and runs["numpy"].get(n, {}).get("outcome") == "passed")
    print(f"\nfailing for gpubcast, passing for NumPy: {len(worse)}")
    for n in worse:
        print(f"- {n}: {first_error_line(runs['gpubcast'][n])}")
    return 1 if worse else 0


if __name__ == "__main__":
    sys.exit(main(*sys.argv[1:]))
