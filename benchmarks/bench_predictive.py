"""The CFR family on the poker games, the predictive variants beside CFR+ and DCFR (issue 26):
exact exploitability (NashConv / 2, chips; mb/g with the game's big blind) of the average
strategy against iterations and against solver seconds (measures excluded), one torch thread;
OpenSpiel's C++ CFR+ (``pyspiel.CFRPlusSolver``) in the same run where it is installed.

    python benchmarks/bench_predictive.py --games kuhn,leduc,leduc5 --iterations 10000 \
        --out results/predictive-cfr/curves

The scheduled methods (``hs-pcfr+``, ``hs-dcfr``: Zhang, McAleer and Sandholm 2026's HS(30))
run their schedule over ``--iterations`` (their horizon), so their points before the last are
those of a run planned for ``--iterations``, not of a shorter run: run again with a smaller
``--iterations`` for those.

    python benchmarks/bench_predictive.py --games leduc --iterations 1000 \
        --methods cfr+,dcfr,pcfr+,hs-pcfr+,hs-dcfr --out results/predictive-cfr/hs-leduc/1000

Writes ``OUT/traces.csv`` (game, method, iteration, seconds, exploitability, nash_conv, mbg),
``OUT/final.md`` (the last point of every curve, as a Markdown table, also printed) and
``OUT/convergence.png`` (per game: exploitability against iterations and against seconds).
"""

from __future__ import annotations

import argparse
import csv
import time
from pathlib import Path

import torch

from pasur.poker.engine import Engine
from pasur.poker.games import get_game
from pasur.poker.measures import evaluate
from pasur.poker.run import make_solver
from pasur.poker.solvers import CFRConfig

METHODS = ("cfr+", "dcfr", "pcfr+", "pdcfr+", "sapcfr+")
#: the methods whose parameters follow a schedule over the run's length
SCHEDULED = ("hs-pcfr+", "hs-dcfr")


def checkpoints(n: int) -> list[int]:
    """1, 2, 5, 10, 20, 50, ... up to ``n`` (and ``n``)."""
    out, k = [], 1
    while k < n:
        out += [x for x in (k, 2 * k, 5 * k) if x < n]
        k *= 10
    return [*sorted(set(out)), n]


def run_ours(game, engine, method: str, n: int) -> list[dict]:
    solver = make_solver(engine, CFRConfig(method=method, horizon=n if method in SCHEDULED else None))
    rows, spent, done = [], 0.0, 0
    for c in checkpoints(n):
        t0 = time.perf_counter()
        solver.iterate(c - done)
        spent += time.perf_counter() - t0
        done = c
        ev = evaluate(engine, solver.average_policy())
        rows.append(_row(game, method, c, spent, ev.exploitability, ev.nash_conv))
    return rows


def interleaved_timing(engine, methods: list[str], n: int, rounds: int, chunk: int = 100) -> dict[str, float]:
    """Seconds per iteration of each method, measured in turns: ``rounds`` times, each method's
    solver runs ``chunk`` more iterations (one solver per method, horizon ``n``), so load from
    other jobs falls on all methods alike; the median over the rounds."""
    solvers = {m: make_solver(engine, CFRConfig(method=m, horizon=n if m in SCHEDULED else None)) for m in methods}
    times: dict[str, list[float]] = {m: [] for m in methods}
    for _ in range(rounds):
        for m, solver in solvers.items():
            t0 = time.perf_counter()
            solver.iterate(chunk)
            times[m].append((time.perf_counter() - t0) / chunk)
    return {m: sorted(v)[len(v) // 2] for m, v in times.items()}


def run_openspiel(game, n: int) -> list[dict]:
    import pyspiel

    g = pyspiel.load_game(game.openspiel)
    solver = pyspiel.CFRPlusSolver(g)
    rows, spent, done = [], 0.0, 0
    for c in checkpoints(n):
        t0 = time.perf_counter()
        for _ in range(c - done):
            solver.evaluate_and_update_policy()
        spent += time.perf_counter() - t0
        done = c
        expl = pyspiel.exploitability(g, solver.average_policy())
        rows.append(_row(game, "openspiel cfr+ (C++)", c, spent, expl, 2 * expl))
    return rows


def _row(game, method, iteration, seconds, expl, nash_conv) -> dict:
    return {
        "game": game.name,
        "method": method,
        "iteration": iteration,
        "seconds": round(seconds, 4),
        "exploitability": expl,
        "nash_conv": nash_conv,
        "mbg": game.mbg(expl),
    }


def plot(rows: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    games = list(dict.fromkeys(r["game"] for r in rows))
    fig, axes = plt.subplots(len(games), 2, figsize=(10, 3.4 * len(games)), squeeze=False)
    for gi, g in enumerate(games):
        for method in dict.fromkeys(r["method"] for r in rows if r["game"] == g):
            pts = [r for r in rows if r["game"] == g and r["method"] == method]
            y = [max(r["exploitability"], 1e-16) for r in pts]
            axes[gi][0].loglog([r["iteration"] for r in pts], y, label=method)
            axes[gi][1].loglog([max(r["seconds"], 1e-4) for r in pts], y, label=method)
        axes[gi][0].set(title=f"{g}: against iterations", xlabel="iterations", ylabel="exploitability (chips)")
        axes[gi][1].set(title=f"{g}: against solver seconds", xlabel="seconds")
        axes[gi][0].legend(fontsize=7)
    fig.tight_layout()
    fig.savefig(path, dpi=100)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--games", default="kuhn,leduc")
    ap.add_argument("--methods", default=",".join(METHODS))
    ap.add_argument("--iterations", type=int, default=1000)
    ap.add_argument("--out", required=True)
    ap.add_argument("--no-openspiel", action="store_true")
    ap.add_argument(
        "--timing-rounds",
        type=int,
        default=0,
        help="also time the methods in turns, ROUNDS x 100 iterations each (OUT/timing.md; median per iteration)",
    )
    a = ap.parse_args()
    torch.set_num_threads(1)
    out = Path(a.out)
    out.mkdir(parents=True, exist_ok=True)
    rows = []
    for name in a.games.split(","):
        game = get_game(name)
        engine = Engine(game)
        for method in a.methods.split(","):
            rows += run_ours(game, engine, method, a.iterations)
            print(rows[-1], flush=True)
        if not a.no_openspiel and game.openspiel:
            try:
                rows += run_openspiel(game, a.iterations)
                print(rows[-1], flush=True)
            except ImportError:
                pass
    with open(out / "traces.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(rows[0]))
        w.writeheader()
        w.writerows(rows)
    last = [
        r
        for i, r in enumerate(rows)
        if i + 1 == len(rows) or rows[i + 1]["method"] != r["method"] or rows[i + 1]["game"] != r["game"]
    ]
    md = [
        "| game | method | iterations | exploitability (chips) | mb/g | solver seconds | ms / iteration |",
        "|---|---|---|---|---|---|---|",
    ]
    md += [
        f"| {r['game']} | {r['method']} | {r['iteration']} | {r['exploitability']:.3e} | {r['mbg']:.4g} | "
        f"{r['seconds']:.2f} | {r['seconds'] / r['iteration'] * 1e3:.2f} |"
        for r in last
    ]
    (out / "final.md").write_text("\n".join(md) + "\n")
    print("\n".join(md))
    plot(rows, out / "convergence.png")
    if a.timing_rounds:
        methods = a.methods.split(",")
        tm = ["| game | method | ms / iteration (median) | times CFR+ |", "|---|---|---|---|"]
        for name in a.games.split(","):
            t = interleaved_timing(Engine(get_game(name)), methods, a.iterations, a.timing_rounds)
            base = t.get("cfr+")
            tm += [
                f"| {name} | {m} | {t[m] * 1e3:.3f} | {t[m] / base:.2f} |"
                if base
                else f"| {name} | {m} | {t[m] * 1e3:.3f} | - |"
                for m in methods
            ]
        (out / "timing.md").write_text("\n".join(tm) + "\n")
        print("\n".join(tm))


if __name__ == "__main__":
    main()
