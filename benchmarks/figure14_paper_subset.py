"""Figure 14 beside the paper's recorded self-play, on some of a run's decks (issue 29): the
decks done so far of a sweep still running, or the decks that were fresh for a pre-registered
plan. Reads the run folder (``pasur experiment figure14 ... --out RUN``), writes
``figure14-paper.csv`` / ``.md`` and ``summary.json`` into ``--out``.

    python benchmarks/figure14_paper_subset.py --run runs/figure14-paper-100-v2 --paper MM.csv \\
        --first 3 --out results/figure14-paper-100/fresh
"""

from __future__ import annotations

import argparse
import json
from pathlib import Path

import numpy as np

from pasur.study.experiments import _deck_index, compare_with_paper, read_paper_results
from pasur.study.sweep import read_records


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--run", required=True, help="the figure14 output folder (holding sweep/)")
    ap.add_argument("--paper", required=True, help="the paper's MM.csv")
    ap.add_argument("--first", type=int, default=0, help="only the paper's decks from this index on")
    ap.add_argument("--last", type=int, default=10**9, help="only the paper's decks up to this index")
    ap.add_argument("--out", required=True)
    a = ap.parse_args()
    run, out = Path(a.run), Path(a.out)
    records = [
        r
        for r in read_records(run / "sweep")
        if (k := _deck_index(r["deck_id"])) is not None and a.first <= k <= a.last
    ]
    out.mkdir(parents=True, exist_ok=True)
    paper = read_paper_results(Path(a.paper))
    avg = compare_with_paper(records, paper, run, write_to=out)
    # The thresholds are the paper's means over every deck of the range in MM.csv, the
    # decks this run failed included; compare_with_paper compares on the decks done. Both kept.
    in_range = [k for k in paper if a.first <= k <= a.last]
    fixed = {c: float(np.mean([paper[k][c] for k in in_range])) for c in ("MR", "RM", "MM", "RR")}
    fixed_checks = {
        f"MR at least the paper's mean over its {len(in_range)} decks ({fixed['MR']:+.2f})": avg["MR"]["ours"]
        >= fixed["MR"],
        f"RM at most the paper's mean over its {len(in_range)} decks ({fixed['RM']:+.2f})": avg["RM"]["ours"]
        <= fixed["RM"],
    }
    summary = {
        "run": str(run),
        "decks": [r["deck_id"] for r in records],
        "paper": avg,
        "paper_over_range": {"decks": len(in_range), "means": fixed, "checks": fixed_checks},
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    md = (out / "figure14-paper.md").read_text()
    md += "".join(f"| {c} | {'yes' if ok else 'no'} |\n" for c, ok in fixed_checks.items())
    (out / "figure14-paper.md").write_text(md)
    print(md)


if __name__ == "__main__":
    main()
