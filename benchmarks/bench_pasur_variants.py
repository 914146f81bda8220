"""Pasur's round CFR with each variant to a whole-game exploitability target (issue 26, part 3):
solver seconds (the tree built beforehand, not counted), iterations over all rounds and the
exploitability reached, per reference deck, tree mode, method and target; one torch thread.

    python benchmarks/bench_pasur_variants.py --deck-ids ref0,ref1,ref2 --trees compact \\
        --methods dcfr,pcfr+,pdcfr+,sapcfr+ --targets 0.01,0.001 --csv results/predictive-cfr/pasur.csv

Prints a Markdown table (also written with ``--csv`` as CSV).
"""

from __future__ import annotations

import argparse
import csv

import torch

from pasur.game.cards import read_deck_file
from pasur.game.state import GameState
from pasur.solve.cfr import CFRParams
from pasur.solve.rounds import solve_cfr
from pasur.solve.tree import build_tree


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--deck-file", default="../shared/decks/reference-decks.json")
    ap.add_argument("--deck-ids", default="ref0,ref1,ref2")
    ap.add_argument("--trees", default="compact")
    ap.add_argument("--methods", default="dcfr,pcfr+,pdcfr+,sapcfr+")
    ap.add_argument("--targets", default="0.01,0.001")
    ap.add_argument("--csv")
    a = ap.parse_args()
    torch.set_num_threads(1)
    decks = {d.id: d for d in read_deck_file(a.deck_file)}
    rows = []
    print("| deck | tree | target | method | solver seconds | iterations | exploitability | value |")
    print("|---|---|---|---|---|---|---|---|")
    for deck_id in a.deck_ids.split(","):
        for mode in a.trees.split(","):
            tree = build_tree(GameState.initial(decks[deck_id].deck), mode)
            for target in (float(x) for x in a.targets.split(",")):
                for method in a.methods.split(","):
                    res = solve_cfr(tree, CFRParams(method=method, iterations=None, target_exploitability=target))
                    row = {
                        "deck": deck_id,
                        "tree": mode,
                        "target": target,
                        "method": method,
                        "seconds": round(res.seconds, 3),
                        "iterations": sum(res.iterations.values()),
                        "exploitability": res.exploitability,
                        "value": res.game_value(),
                    }
                    rows.append(row)
                    print(
                        f"| {deck_id} | {mode} | {target:g} | {method} | {row['seconds']:.2f} | {row['iterations']} | "
                        f"{row['exploitability']:.2e} | {row['value']:.4f} |",
                        flush=True,
                    )
            del tree
    if a.csv:
        with open(a.csv, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)


if __name__ == "__main__":
    main()
