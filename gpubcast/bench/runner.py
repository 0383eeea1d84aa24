"""Runs the pattern suite over the peers and returns the records.

For each pattern, size and device: one set of host operands, the NumPy result
as the reference (a sample of it), the input sets in the device's array module,
then for each peer on that device: bind and a first call (timed on its own),
a check of the result against the reference, and the timing.  A peer that
fails or computes a wrong result is skipped with the reason; it never stops
the run.
"""

from __future__ import annotations

import time
from dataclasses import dataclass
from collections.abc import Callable

import ml_dtypes
import numpy as np

from . import measure
from .patterns import Case, Pattern, host_operands, make_cases
from .peers import numpy_peer

#: how many elements of a result are compared with the reference
SAMPLE = 4096


@dataclass(frozen=True)
class Settings:
    repeat: int            # samples per case
    min_sample_s: float    # calls per sample are chosen so one sample lasts at least this
    sets: int              # input sets rotated per case

    @classmethod
    def preset(cls, quick: bool) -> Settings:
        return cls(repeat=5, min_sample_s=0.002, sets=2) if quick else cls(repeat=15, min_sample_s=0.02, sets=3)


class WrongResult(Exception):
    pass


def sample(x) -> np.ndarray:
    """About ``SAMPLE`` evenly spaced elements of ``x`` (NumPy, CuPy or torch), on the host."""
    flat = x.reshape(-1)
    picked = flat[::max(1, flat.shape[0] // SAMPLE)]
    if hasattr(picked, "get"):   # CuPy
        return picked.get()
    if hasattr(picked, "cpu"):   # torch
        return picked.cpu().numpy()
    return np.asarray(picked)


def agrees(got: np.ndarray, expected: np.ndarray) -> bool:
    """Exact for integers and bools; within 16 ulp-ish (relative) for floating types."""
    if got.shape != expected.shape or got.dtype != expected.dtype:
        return False
    if expected.dtype.kind in "biu":
        return bool(np.array_equal(got, expected))
    rtol = 16 * float(ml_dtypes.finfo(expected.dtype).eps)
    return bool(np.allclose(got.astype(np.complex128), expected.astype(np.complex128), rtol=rtol, atol=0,
                            equal_nan=True))


def reference(pattern: Pattern, shapes, dtype, host) -> np.ndarray:
    """A sample of NumPy's result for ``host`` operands: what every peer must reproduce."""
    case = make_cases(pattern, shapes, dtype, np, sets=1, host=host)[0]
    call, _ = numpy_peer().bind(pattern, shapes, case)
    return sample(call())


def run_case(peer, pattern: Pattern, shapes, cases: list[Case], expected: np.ndarray,
             settings: Settings) -> tuple[float, measure.Timing, str | None]:
    """(first-call seconds including bind, timing, footnote) of ``peer`` on ``cases``."""
    t0 = time.perf_counter()
    call, note = peer.bind(pattern, shapes, cases[0])
    result = call()
    measure.synchronize(peer.device)
    first = time.perf_counter() - t0
    if not agrees(sample(result), expected):
        raise WrongResult(f"{peer.label} computes a result that differs from NumPy's on {pattern.name}")
    calls = [call] + [peer.bind(pattern, shapes, c)[0] for c in cases[1:]]
    timer = measure.time_cuda if peer.device == "gpu" else measure.time_host
    return first, timer(calls, repeat=settings.repeat, min_sample_s=settings.min_sample_s), note


def run_suite(patterns, sizes, peers, dtype, settings: Settings, ceilings: dict,
              progress: Callable[[str], None] = lambda text: None) -> tuple[list[dict], list[dict]]:
    """(records, skipped) for every pattern x size x peer; ``progress(text)`` before each peer runs."""
    dtype = np.dtype(dtype)
    records, skipped = [], []
    for pattern in patterns:
        for size in sizes:
            for device in ("cpu", "gpu"):
                group = [p for p in peers if p.device == device]
                if not group:
                    continue
                shapes = pattern.shapes(size, device)
                for peer, outcome in run_group(pattern, shapes, group, dtype, settings,
                                               lambda peer: progress(f"{pattern.name} {size} {peer.label}")):
                    if isinstance(outcome, str):
                        skipped.append({"pattern": pattern.name, "backend": peer.name, "size": size,
                                        "reason": outcome})
                    else:
                        records.append(_record(pattern, peer, size, dtype, shapes, *outcome,
                                               ceilings.get(device, {}).get("gbps")))
    add_speedups(records)
    return records, skipped


def run_group(pattern: Pattern, shapes, group, dtype, settings: Settings, progress=lambda peer: None) -> list[tuple]:
    """``pattern`` at ``shapes`` on each peer of ``group`` (one device: the input sets are made in the
    first peer's array module): ``(peer, (first, timing, note))``, or ``(peer, why it did not run)``;
    ``progress(peer)`` before each peer runs.  The device's memory pool is emptied after."""
    try:
        host = host_operands(pattern, shapes, dtype)
        expected = reference(pattern, shapes, dtype, host)
        cases = make_cases(pattern, shapes, dtype, group[0].xp, sets=settings.sets, host=host)
    except Exception as e:  # noqa: BLE001 - e.g. a dtype NumPy or CuPy cannot hold
        cases, setup_failed = [], f"{type(e).__name__}: {e}"
    else:
        setup_failed = None
    outcomes = []
    for peer in group:
        progress(peer)
        try:
            if setup_failed:
                raise RuntimeError(f"no inputs: {setup_failed}")
            outcomes.append((peer, run_case(peer, pattern, shapes, cases, expected, settings)))
        except Exception as e:  # noqa: BLE001 - report, and go on with the others
            outcomes.append((peer, f"{type(e).__name__}: {e}"))
    del cases
    _release(group[0].device)
    return outcomes


def _record(pattern, peer, size, dtype, shapes, first, timing, note, ceiling) -> dict:
    nbytes = pattern.traffic(shapes, dtype)
    bandwidth = measure.gbps(nbytes, timing.median_s)
    return {
        "pattern": pattern.name, "backend": peer.name, "label": peer.label, "device": peer.device,
        "size": size, "dtype": str(dtype), "shape": list(pattern.out_shape(shapes)),
        "operands": [list(s) for s in shapes], "bytes": nbytes,
        "seconds_median": timing.median_s, "seconds_samples": list(timing.samples),
        "calls_per_sample": timing.calls_per_sample, "first_call_seconds": first,
        "gbps": bandwidth, "fraction_of_ceiling": measure.fraction(bandwidth, ceiling), "note": note,
    }


def add_speedups(records: list[dict]) -> None:
    """``speedup_vs_numpy`` / ``speedup_vs_cupy`` on each record: its bandwidth over theirs for the
    same pattern, size and dtype (the time ratio where the shapes are equal; the GPU's large
    shapes are larger than the CPU's, so across devices bandwidth is what compares)."""
    by_key = {(r["pattern"], r["size"], r["dtype"], r["backend"]): r for r in records}
    for r in records:
        for peer in ("numpy", "cupy"):
            base = by_key.get((r["pattern"], r["size"], r["dtype"], peer))
            r[f"speedup_vs_{peer}"] = r["gbps"] / base["gbps"] if base else None


def _release(device: str) -> None:
    if device == "gpu":
        import cupy
        cupy.get_default_memory_pool().free_all_blocks()
