"""The table of docs/benchmarks.md ("A native CPU kernel for the round CFR") from the benchmark's
records: per deck and tree, CPU ns per node per whole-game DCFR iteration of the three paths
(measured alternating in one process), the native path's speed-up, the compulsory bytes per node
and their share of the bandwidth bound at the native path's time, and the 30-iteration solves'
exploitability and bit-for-bit check.

    python results/cfr-native/summarize.py > results/cfr-native/summary.md
"""

from __future__ import annotations

import json
from pathlib import Path

HERE = Path(__file__).resolve().parent
HEADER = (
    "| deck and tree | nodes | per-layer ns/node | fused ns/node | native ns/node | native vs fused "
    "| native vs per-layer | compulsory B/node | native share (compulsory) | exploitability torch / native "
    "| bit for bit |"
)


def rows(record: dict) -> list[str]:
    bandwidth = record["bandwidth"]["add_GBps"] * 1e9
    out = []
    for run in record["runs"]:
        t, n = run["timing"], run["nodes"]
        layers, fused, native = (t[p]["cpu_min_s"] for p in ("layers", "fused", "native"))
        share = t["native"]["compulsory_bytes"] / bandwidth / native
        s = run["solves"]
        out.append(
            f"| {run['deck']} {run['tree']} | {n:,} | {layers / n * 1e9:.1f} | {fused / n * 1e9:.1f} "
            f"| {native / n * 1e9:.1f} | {fused / native:.2f} | {layers / native:.2f} "
            f"| {t['native']['compulsory_bytes'] / n:.0f} | {100 * share:.0f} % "
            f"| {s['layers']['exploitability']:.6f} / {s['native']['exploitability']:.6f} "
            f"| {s['native']['bit_for_bit'] and s['fused']['bit_for_bit']} |"
        )
    return out


def table(folder: Path, header: str, rows_of) -> str:
    """The markdown table of ``folder``'s records (``compact/`` then ``paper/``), a row per run."""
    lines = [header, "|" + "---|" * header.count(" | ") + "---|"]
    for tree in ("compact", "paper"):
        path = folder / tree / "fixed_costs.json"
        if path.exists():
            lines += rows_of(json.loads(path.read_text(encoding="utf-8")))
    return "\n".join(lines)


def main() -> None:
    print(table(HERE, HEADER, rows))


if __name__ == "__main__":
    main()
