"""Soaks of the web server side by side (issue 46): from each run folder's ``samples.csv`` (and
``smaps.csv`` if it has one, ``benchmarks/soak_web_smaps.py``) the requests and errors, the
resident memory at minute 15 and at the end, and its growth per quarter hour after minute 15 (the
least-squares slope over the samples taken after a pause: the first quarter hour is warm-up, when
the database's and the sockets' buffers first fill), and the same slope of the thread arenas'
resident memory over the smaps samples. Writes a Markdown table (``--out``):

    python benchmarks/soak_web_compare.py results/web-soak/{no-trim,trim,mmap-threshold,fixed} \
        --out results/web-soak/compare.md
"""

from __future__ import annotations

import argparse
import csv
import sys
from pathlib import Path

WARM_UP_S = 15 * 60


def slope_per_quarter_hour(points: list[tuple[float, float]]) -> float:
    """Least-squares slope of (seconds, KiB) points, in MiB per quarter hour."""
    n = len(points)
    mean_t = sum(t for t, _ in points) / n
    mean_v = sum(v for _, v in points) / n
    var = sum((t - mean_t) ** 2 for t, _ in points)
    cov = sum((t - mean_t) * (v - mean_v) for t, v in points)
    return cov / var * 900 / 1024 if var else 0.0


def run_row(folder: Path) -> dict:
    """One run's figures (see the module docstring)."""
    with (folder / "samples.csv").open() as f:
        samples = list(csv.DictReader(f))
    paused = [r for r in samples if r["when"] == "paused"]
    after = [(float(r["t_s"]), float(r["rss_kib"])) for r in paused if float(r["t_s"]) >= WARM_UP_S]
    at_15 = min(paused, key=lambda r: abs(float(r["t_s"]) - WARM_UP_S))
    row = {
        "run": folder.name,
        "minutes": round(float(samples[-1]["t_s"]) / 60, 1),
        "requests": int(samples[-1]["requests"]),
        "errors": int(samples[-1]["errors"]),
        "rss_15": float(at_15["rss_kib"]) / 1024,
        "rss_end": float(paused[-1]["rss_kib"]) / 1024,
        "rss_slope": slope_per_quarter_hour(after) if len(after) > 1 else None,
        "arenas_slope": None,
        "smaps_minutes": None,
    }
    smaps = folder / "smaps.csv"
    if smaps.is_file():
        with smaps.open() as f:
            rows = list(csv.DictReader(f))
        row["arenas_slope"] = slope_per_quarter_hour([(float(r["t_s"]), float(r["thread_arenas"])) for r in rows])
        row["smaps_minutes"] = round(float(rows[-1]["t_s"]) / 60)
    return row


def table(rows: list[dict]) -> str:
    """The Markdown table of :func:`run_row`'s rows."""
    fmt = lambda x: "–" if x is None else f"{x:+.2f}"  # noqa: E731
    lines = [
        "| run | minutes | requests | errors | resident at minute 15 (MiB) | at the end (MiB) "
        "| growth after minute 15 (MiB a quarter hour) | thread arenas' growth (MiB a quarter hour) "
        "| minutes of smaps |",
        "|---|---|---|---|---|---|---|---|---|",
    ]
    for r in rows:
        lines.append(
            f"| {r['run']} | {r['minutes']} | {r['requests']:,} | {r['errors']} | {r['rss_15']:.1f} | "
            f"{r['rss_end']:.1f} | {fmt(r['rss_slope'])} | {fmt(r['arenas_slope'])} | "
            f"{'–' if r['smaps_minutes'] is None else r['smaps_minutes']} |"
        )
    return "\n".join(lines) + "\n"


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("runs", nargs="+", type=Path)
    p.add_argument("--out", type=Path, required=True)
    a = p.parse_args(argv)
    missing = [r for r in a.runs if not (r / "samples.csv").is_file()]
    if missing:
        print(f"error: no samples.csv in {', '.join(map(str, missing))}", file=sys.stderr)
        return 2
    text = table([run_row(r) for r in a.runs])
    a.out.write_text(text)
    print(text, end="")
    return 0


if __name__ == "__main__":
    sys.exit(main())
