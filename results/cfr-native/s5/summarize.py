"""The before/after table of docs/benchmarks.md ("The native kernel, fewer operations a node") from
the benchmark's records in this folder: per deck and tree, CPU ns per node per whole-game DCFR
iteration of the fused torch path, the kernel before (``native@REV``) and after (``native``), all
timed alternating in one process (blocks of consecutive iterations), the speed-up, the compulsory
bytes' share of the bandwidth bound at the new kernel's time, whether the earlier kernel left the
same state bit for bit, and the 30-iteration solves' exploitability.

    python results/cfr-native/s5/summarize.py > results/cfr-native/s5/summary.md
"""

from __future__ import annotations

import sys
from pathlib import Path

HERE = Path(__file__).resolve().parent
sys.path.insert(0, str(HERE.parent))
from summarize import table  # noqa: E402  (results/cfr-native/summarize.py)

HEADER = (
    "| deck and tree | nodes | fused ns/node | native before ns/node | native ns/node | native vs before "
    "| native vs fused | compulsory B/node | native share (compulsory) | state as before "
    "| exploitability torch / native |"
)


def rows(record: dict) -> list[str]:
    bandwidth = record["bandwidth"]["add_GBps"] * 1e9
    out = []
    for run in record["runs"]:
        t, n = run["timing"], run["nodes"]
        before_name = next(p for p in t if p.startswith("native@"))
        fused, before, native = (t[p]["cpu_min_s"] for p in ("fused", before_name, "native"))
        share = t["native"]["compulsory_bytes"] / bandwidth / native
        s = run["solves"]
        out.append(
            f"| {run['deck']} {run['tree']} | {n:,} | {fused / n * 1e9:.1f} | {before / n * 1e9:.1f} "
            f"| {native / n * 1e9:.1f} | {before / native:.2f} | {fused / native:.2f} "
            f"| {t['native']['compulsory_bytes'] / n:.0f} | {100 * share:.0f} % | {t[before_name]['same_state']} "
            f"| {s['layers']['exploitability']:.6f} / {s['native']['exploitability']:.6f} |"
        )
    return out


def main() -> None:
    print(table(HERE, HEADER, rows))


if __name__ == "__main__":
    main()
