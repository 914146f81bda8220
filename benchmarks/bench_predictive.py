"""The CFR family on the poker games, the predictive variants beside CFR+ and DCFR (issue 26):
exact exploitability (NashConv / 2, chips and mb/g) of the average strategy after N iterations,
and seconds of solver time (measures excluded), one torch thread.

    python benchmarks/bench_predictive.py --games kuhn,leduc --iterations 1000 --csv results/predictive-cfr/leduc.csv

Prints a Markdown table; ``--csv`` writes the rows too.
"""

from __future__ import annotations

import argparse
import csv
import platform
import time

import torch

from pasur.poker.engine import Engine
from pasur.poker.games import get_game
from pasur.poker.measures import evaluate
from pasur.poker.run import make_solver
from pasur.poker.solvers import CFRConfig

METHODS = ("cfr+", "dcfr", "pcfr+", "pdcfr+", "sapcfr+")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--games", default="kuhn,leduc")
    ap.add_argument("--methods", default=",".join(METHODS))
    ap.add_argument("--iterations", type=int, default=1000)
    ap.add_argument("--csv")
    a = ap.parse_args()
    torch.set_num_threads(1)
    rows = []
    print("| game | method | iterations | exploitability (chips) | mb/g | solver seconds | s / iteration |")
    print("|---|---|---|---|---|---|---|")
    for name in a.games.split(","):
        game = get_game(name)
        engine = Engine(game)
        for method in a.methods.split(","):
            solver = make_solver(engine, CFRConfig(method=method))
            t0 = time.perf_counter()
            solver.iterate(a.iterations)
            seconds = time.perf_counter() - t0
            ev = evaluate(engine, solver.average_policy())
            row = {
                "game": name,
                "method": method,
                "iterations": a.iterations,
                "exploitability": ev.exploitability,
                "nash_conv": ev.nash_conv,
                "mbg": game.mbg(ev.exploitability),
                "seconds": round(seconds, 3),
                "machine": f"{platform.processor() or platform.machine()}, torch {torch.__version__}",
            }
            rows.append(row)
            print(
                f"| {name} | {method} | {a.iterations} | {ev.exploitability:.3e} | {row['mbg']:.4f} | "
                f"{seconds:.2f} | {seconds / a.iterations * 1e3:.2f} ms |",
                flush=True,
            )
    if a.csv:
        with open(a.csv, "w", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(rows[0]))
            w.writeheader()
            w.writerows(rows)


if __name__ == "__main__":
    main()
