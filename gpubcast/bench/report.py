"""The benchmark's outputs: the terminal table, the JSON document (checked against the
shipped ``schema.json``), a PNG bar chart of GB/s with the measured ceilings, and the size
sweep's tables and PNG (``sweep_tables``, ``plot_sweep``)."""

from __future__ import annotations

import json
import math
from importlib import resources

from .patterns import BY_NAME, SIZES

FOOTNOTE_MARKS = "¹²³⁴⁵⁶⁷⁸⁹"


def schema() -> dict:
    return json.loads(resources.files("gpubcast.bench").joinpath("schema.json").read_text())


def validate(document: dict) -> None:
    """Raise ``jsonschema.ValidationError`` where ``document`` does not follow ``schema.json``."""
    import jsonschema
    jsonschema.validate(document, schema())


def write_json(document: dict, path) -> None:
    """Validate, then write ``document`` to ``path``."""
    validate(document)
    with open(path, "w") as f:
        json.dump(document, f, indent=1)
        f.write("\n")


def seconds_text(s: float) -> str:
    for unit, scale in (("s", 1.0), ("ms", 1e-3), ("µs", 1e-6)):
        if s >= scale:
            return f"{s / scale:.3g} {unit}"
    return f"{s * 1e9:.3g} ns"


def shapes_text(shapes, transposed=()) -> str:
    """``(2,4).T + (4,)``: the operand shapes, a transposed operand marked .T."""
    return " + ".join(str(tuple(s)).replace(" ", "") + (".T" if i in transposed else "")
                      for i, s in enumerate(shapes))


def _mark(note: str | None, footnotes: dict[str, int]) -> str:
    """The footnote mark for ``note`` (numbered in order of first use), '' for no note."""
    if not note:
        return ""
    return " " + FOOTNOTE_MARKS[footnotes.setdefault(note, len(footnotes)) % len(FOOTNOTE_MARKS)]


def _ratio(x) -> str:
    return "—" if x is None else f"{x:.2f}×"


def tables(document: dict):
    """One rich Table per size (patterns as sections, a row per backend), and the footnotes."""
    from rich.table import Table

    records, gpu = document["records"], document["device"]["gpu"] is not None
    footnotes: dict[str, int] = {}
    out = []
    for size in SIZES:
        rows = [r for r in records if r["size"] == size]
        if not rows:
            continue
        table = Table(title=f"{size} ({'per-call latency' if size == 'tiny' else 'bandwidth'}), "
                            f"{rows[0]['dtype']}", title_justify="left")
        for name, justify in (("pattern", "left"), ("operands", "left"), ("backend", "left"),
                              ("median", "right"), ("GB/s", "right"), ("of ceiling", "right"),
                              ("vs NumPy", "right"), *((("vs CuPy", "right"),) if gpu else ()),
                              ("first call", "right")):
            table.add_column(name, justify=justify)
        for pattern in dict.fromkeys(r["pattern"] for r in rows):
            table.add_section()
            previous = None
            for r in (r for r in rows if r["pattern"] == pattern):
                mark = _mark(r.get("note"), footnotes)
                operands = shapes_text(r["operands"], BY_NAME[pattern].transposed if pattern in BY_NAME else ())
                fraction = r["fraction_of_ceiling"]
                table.add_row(
                    pattern if previous is None else "", operands if operands != previous else "",
                    r.get("label", r["backend"]) + mark, seconds_text(r["seconds_median"]), f"{r['gbps']:.3g}",
                    "—" if fraction is None else f"{fraction:.0%}", _ratio(r.get("speedup_vs_numpy")),
                    *((_ratio(r.get("speedup_vs_cupy")),) if gpu else ()),
                    seconds_text(r["first_call_seconds"]) if "first_call_seconds" in r else "—")
                previous = operands
        out.append(table)
    notes = [f"{_mark(text, footnotes).strip()} {text}" for text in footnotes]
    return out, notes


def plot(document: dict, path) -> None:
    """A PNG bar chart, one panel per size, bars per pattern (groups) and backend: GB/s at the
    large size with each measured ceiling drawn as a horizontal line, time per call at tiny."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    records = document["records"]
    sizes = [s for s in SIZES if any(r["size"] == s for r in records)] or ["large"]
    backends = list(dict.fromkeys(r.get("label", r["backend"]) for r in records))
    fig, axes = plt.subplots(len(sizes), 1, figsize=(14, 4.5 * len(sizes)), squeeze=False)
    for ax, size in zip(axes[:, 0], sizes):
        rows = [r for r in records if r["size"] == size]
        value = (lambda r: r["gbps"]) if size == "large" else (lambda r: r["seconds_median"] * 1e6)
        patterns = list(dict.fromkeys(r["pattern"] for r in rows))
        width = 0.8 / max(1, len(backends))
        for k, backend in enumerate(backends):
            values = {r["pattern"]: value(r) for r in rows if r.get("label", r["backend"]) == backend}
            xs = [i + (k - (len(backends) - 1) / 2) * width for i, p in enumerate(patterns) if p in values]
            ax.bar(xs, [values[p] for p in patterns if p in values], width, label=backend)
        if size == "large":
            for device, style in (("cpu", "--"), ("gpu", ":")):
                ceiling = document["ceilings"].get(device)
                if ceiling:
                    ax.axhline(ceiling["gbps"], color="black", linestyle=style, linewidth=1,
                               label=f"{device.upper()} ceiling {ceiling['gbps']:.3g} GB/s")
            ax.set_ylabel("effective GB/s")
            ax.set_title("large: bandwidth (distinct bytes read + bytes written, per second; higher is better)")
        else:
            ax.set_ylabel("µs per call")
            ax.set_title("tiny: per-call latency (lower is better)")
        ax.set_xticks(range(len(patterns)), patterns, rotation=30, ha="right")
        positive = [value(r) for r in rows if value(r) > 0]
        if positive and max(positive) / min(positive) > 50:
            ax.set_yscale("log")
        ax.legend(fontsize="small", loc="upper left", bbox_to_anchor=(1.01, 1.0))
    fig.tight_layout()
    fig.savefig(path, format="png", dpi=100)
    plt.close(fig)


SWEEP_CAPTION = "best of samples; speed: the fastest other library's time / gpubcast's (red: below 1)"


def sweep_tables(sweep: dict):
    """One rich Table per device of the size sweep (``sweep.py``): a row per (pattern, size); the
    CPU's ns per element, the GPU's µs and GB/s, per library, and gpubcast's speed against the
    fastest other library (below 1: that library is ahead, the row in red)."""
    from rich.table import Table

    from .sweep import GPUBCAST, size_text

    out = []
    for device in ("cpu", "gpu"):
        rows = [r for r in sweep["records"] if r["device"] == device]
        if not rows:
            continue
        names = list(dict.fromkeys(name for r in rows for name in r["seconds"]))
        names = [GPUBCAST, *(n for n in names if n != GPUBCAST)] if GPUBCAST in names else names
        unit = "ns per element" if device == "cpu" else "µs per call, GB/s"
        table = Table(title=f"Size sweep {device.upper()} ({sweep['dtype']}): {unit}", title_justify="left",
                      caption=SWEEP_CAPTION, caption_justify="left")
        table.add_column("pattern")
        table.add_column("elements" if device == "cpu" else "output", justify="right")
        for name in names:
            table.add_column(name, justify="right")
        table.add_column("fastest other", justify="left")
        table.add_column("speed", justify="right")
        previous = None
        for r in rows:
            if r["pattern"] != previous:
                table.add_section()
            cells = []
            for name in names:
                s = r["seconds"].get(name)
                cells.append("—" if s is None else f"{s / r['elements'] * 1e9:.3g}" if device == "cpu"
                             else f"{s * 1e6:.3g} µs, {r['gbps'][name]:.3g}")
            speed = r["speedup_vs_best_peer"]
            table.add_row(r["pattern"] if r["pattern"] != previous else "", size_text(r["elements"], device), *cells,
                          r["best_peer"] or "—", _ratio(speed),
                          style="red" if speed is not None and speed < 1.0 else None)
            previous = r["pattern"]
        out.append(table)
    return out


def plot_sweep(sweep: dict, path) -> None:
    """A PNG of the size sweep: per device, one panel per pattern (the CPU's ns per element, the
    GPU's GB/s, a line per library, both axes logarithmic) and a panel of gpubcast's speed against
    the fastest other library per pattern, with the line at 1 (the crossover)."""
    import matplotlib
    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    from .sweep import size_text

    devices = [d for d in ("cpu", "gpu") if any(r["device"] == d for r in sweep["records"])]
    panels = {d: list(dict.fromkeys(r["pattern"] for r in sweep["records"] if r["device"] == d)) for d in devices}
    cols = 5
    rows = sum(math.ceil((len(panels[d]) + 1) / cols) for d in devices) or 1
    fig, axes = plt.subplots(rows, cols, figsize=(4 * cols, 3.2 * rows), squeeze=False)
    flat = list(axes.flat)
    k = 0
    for device in devices:
        records = [r for r in sweep["records"] if r["device"] == device]
        value = ((lambda r, name: r["seconds"][name] / r["elements"] * 1e9) if device == "cpu"
                 else (lambda r, name: r["gbps"][name]))
        for pattern in panels[device]:
            ax, k = flat[k], k + 1
            points = [r for r in records if r["pattern"] == pattern]
            for name in dict.fromkeys(n for r in points for n in r["seconds"]):
                xs = [r["elements"] for r in points if name in r["seconds"]]
                ax.plot(xs, [value(r, name) for r in points if name in r["seconds"]], marker="o", markersize=3,
                        label=name)
            _size_axis(ax, points, device, size_text)
            _log_y(ax)
            ax.set_ylabel("ns per element" if device == "cpu" else "GB/s")
            ax.set_title(f"{device.upper()} {pattern}", fontsize="small")
            ax.legend(fontsize="x-small")
        ax, k = flat[k], k + 1
        for pattern in panels[device]:
            points = [r for r in records if r["pattern"] == pattern and r["speedup_vs_best_peer"] is not None]
            ax.plot([r["elements"] for r in points], [r["speedup_vs_best_peer"] for r in points], marker="o",
                    markersize=3, label=pattern)
        ax.axhline(1.0, color="black", linewidth=1)
        _size_axis(ax, records, device, size_text)
        _log_y(ax)
        ax.set_ylabel("gpubcast speed / fastest other")
        ax.set_title(f"{device.upper()}: above 1, gpubcast is ahead", fontsize="small")
        ax.legend(fontsize="xx-small", ncol=2)
        k += -k % cols                                   # each device starts a row
    for ax in flat[k:]:
        ax.set_visible(False)
    fig.tight_layout()
    fig.savefig(path, format="png", dpi=90)
    plt.close(fig)


def _log_y(ax) -> None:
    """A log y axis labelled in plain numbers at 1, 2, 5 of each decade."""
    from matplotlib.ticker import FormatStrFormatter, LogLocator, NullFormatter
    ax.set_yscale("log")
    ax.yaxis.set_major_locator(LogLocator(subs=(1.0, 2.0, 5.0)))
    ax.yaxis.set_major_formatter(FormatStrFormatter("%g"))
    ax.yaxis.set_minor_formatter(NullFormatter())
    ax.tick_params(axis="y", which="both", labelsize="x-small")


def _size_axis(ax, records, device: str, size_text) -> None:
    sizes = sorted({r["elements"] for r in records})
    ax.set_xscale("log")
    ax.set_xticks(sizes, [size_text(n, device) for n in sizes], rotation=45, fontsize="x-small")
    ax.minorticks_off()
    ax.set_xlabel("elements" if device == "cpu" else "output (float32)", fontsize="x-small")
