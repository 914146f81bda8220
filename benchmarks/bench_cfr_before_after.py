"""The round CFR's time per whole-game iteration with the code of two checkouts, alternating in
one run (issue 43, item 2 on the CPU): each repetition runs ``bench_cfr.per_iteration`` of each
checkout in a child process (its own ``src`` on ``PYTHONPATH``), one thread, and the table keeps
per checkout, deck and tree the fastest repetition (wall and CPU seconds, each the sum over rounds
of the fastest of ``--iterations`` timed iterations).

    git archive <commit> | tar -x -C /tmp/before
    nice python benchmarks/bench_cfr_before_after.py /tmp/before . --json out.json
"""

from __future__ import annotations

import argparse
import json
import os
import subprocess
import sys
from pathlib import Path

CHILD = """
import json, sys, torch
sys.path.insert(0, sys.argv[1] + "/benchmarks")
from bench_cfr import DEFAULT_DECKS, per_iteration
from pasur.game.cards import read_deck_file
from pasur.game.state import GameState
from pasur.solve.cfr import CFRParams
from pasur.solve.tree import build_tree
torch.set_num_threads(1)
decks = {d.id: d for d in read_deck_file(DEFAULT_DECKS)}
for run in sys.argv[3].split(","):
    deck, mode = run.split(":")
    tree = build_tree(GameState.initial(decks[deck].deck), mode, "cpu", infosets=False)
    wall, cpu, nodes = per_iteration(tree, CFRParams(method="dcfr"), int(sys.argv[2]), torch.device("cpu"))
    print(json.dumps({"deck": deck, "tree": mode, "nodes": nodes, "wall_s": wall, "cpu_s": cpu}), flush=True)
"""


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("checkouts", nargs=2, type=Path, help="the code before and after (folders with src/)")
    ap.add_argument("--runs", default="ref0:compact,ref1:compact,ref2:compact,ref1:paper,ref2:paper")
    ap.add_argument("--iterations", type=int, default=10)
    ap.add_argument("--repeats", type=int, default=3)
    ap.add_argument("--json", type=Path)
    args = ap.parse_args()
    for c in args.checkouts:
        if not (c / "src" / "pasur").is_dir() or not (c / "benchmarks" / "bench_cfr.py").is_file():
            sys.exit(f"error: {c} has no src/pasur or benchmarks/bench_cfr.py")
    best: dict[tuple[str, str, str], dict] = {}
    for rep in range(args.repeats):
        for label, c in zip(("before", "after"), args.checkouts, strict=True):
            env = {**os.environ, "PYTHONPATH": str(c.resolve() / "src"), "OMP_NUM_THREADS": "1"}
            cmd = [sys.executable, "-c", CHILD, str(c.resolve()), str(args.iterations), args.runs]
            out = subprocess.run(cmd, env=env, capture_output=True, text=True, check=True).stdout
            for line in out.splitlines():
                row = json.loads(line)
                key = (label, row["deck"], row["tree"])
                if key not in best or row["cpu_s"] < best[key]["cpu_s"]:
                    best[key] = {**row, "code": label}
            print(f"repetition {rep + 1} {label} done", file=sys.stderr, flush=True)
    print("| deck | tree | nodes | before CPU s | after CPU s | before ns/node | after ns/node | speed-up (CPU) |")
    print("|---|---|---|---|---|---|---|---|")
    for run in args.runs.split(","):
        deck, mode = run.split(":")
        b, a = best[("before", deck, mode)], best[("after", deck, mode)]
        n = a["nodes"]
        print(
            f"| {deck} | {mode} | {n:,} | {b['cpu_s']:.4f} | {a['cpu_s']:.4f} | {b['cpu_s'] / n * 1e9:.1f} "
            f"| {a['cpu_s'] / n * 1e9:.1f} | {b['cpu_s'] / a['cpu_s']:.2f} |"
        )
    if args.json is not None:
        args.json.write_text(json.dumps(list(best.values()), indent=2) + "\n")


if __name__ == "__main__":
    main()
