"""External-sampling MCCFR against DCFR: exploitability against wall time, on the same tree.

Part 1 (a fixed subgame): round 4 of each reference deck, its terminal nodes valued exactly
(round 5 solved), each root with reach 1, as round-by-round CFR sees it. Both methods iterate
for ``--seconds`` of solver time; at checkpoints (iterations 1, 2, 3, 5, 8, ... growing by about
half) the round's NashConv (twice its exploitability, docs/conventions.md) is measured outside
the timed region: the worst root and the mean over roots. Writes ``--out``/es_vs_dcfr.csv and
.png and prints, per deck and tree, the solver time each method needs to reach a few NashConv levels (mean over roots).

Part 2 (the whole game, ``--whole``): ``solve_cfr`` with whole-game targets, DCFR and
ES-MCCFR, wall time including the checks, on the compact tree of ``--deck-id``.

    python benchmarks/bench_es.py [--seconds 20] [--modes compact paper] [--whole]
"""

from __future__ import annotations

import argparse
import csv
import platform
import time
from datetime import date
from pathlib import Path

import torch

from pasur.game.cards import read_deck_file
from pasur.game.state import GameState
from pasur.solve.cfr import CFRParams
from pasur.solve.exact import solve_exact
from pasur.solve.rounds import round_solver, solve_cfr
from pasur.solve.tree import build_tree

REPO = Path(__file__).resolve().parent.parent
DEFAULT_DECKS = REPO.parent / "shared" / "decks" / "reference-decks.json"
if not DEFAULT_DECKS.exists():
    DEFAULT_DECKS = REPO / "tests" / "data" / "reference-decks.json"
LEVELS = (1.0, 0.3, 0.1, 0.03, 0.01)


def checkpoints():
    k = 1
    while True:
        yield k
        k = max(k + 1, int(k * 1.5))


def curve(rt, terminal, method: str, seconds: float, seed: int) -> list[dict]:
    """(iteration, solver seconds, worst-root and mean NashConv) at the checkpoints."""
    solver = round_solver(rt, terminal, CFRParams(method=method, seed=seed), torch.device("cpu"))
    rows, spent = [], 0.0
    for k in checkpoints():
        t0 = time.perf_counter()
        while solver.it < k:
            solver.iterate()
        spent += time.perf_counter() - t0
        e = solver.nash_conv()
        rows.append({"iteration": k, "seconds": spent, "worst": float(e.max()), "mean": float(e.mean())})
        if spent >= seconds:
            return rows
    return rows


def first_time(rows: list[dict], level: float) -> str:
    hit = next((r for r in rows if r["mean"] <= level), None)
    return "-" if hit is None else f"{hit['seconds']:.2f} ({hit['iteration']})"


def plot(records: list[dict], path: Path) -> None:
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    panels = sorted({(r["deck"], r["tree"]) for r in records})
    fig, axes = plt.subplots(1, len(panels), figsize=(4.2 * len(panels), 3.8), squeeze=False)
    for ax, (deck, tree) in zip(axes[0], panels, strict=True):
        for method, style in (("dcfr", "-"), ("es-mccfr", "--")):
            rows = [r for r in records if (r["deck"], r["tree"], r["method"]) == (deck, tree, method)]
            ax.plot([r["seconds"] for r in rows], [max(r["mean"], 1e-6) for r in rows], style, label=method)
        ax.set(xscale="log", yscale="log", xlabel="solver seconds (one thread)", title=f"{deck}, {tree} tree, round 4")
        ax.grid(True, alpha=0.3)
    axes[0][0].set_ylabel("NashConv = 2 x exploitability (points, mean over roots)")
    axes[0][0].legend()
    fig.tight_layout()
    fig.savefig(path, dpi=110)
    plt.close(fig)


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--deck-file", type=Path, default=DEFAULT_DECKS)
    ap.add_argument("--deck-id", default="ref0", help="deck of part 2")
    ap.add_argument("--seconds", type=float, default=20.0)
    ap.add_argument("--modes", nargs="+", default=["compact", "paper"])
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--whole", action="store_true")
    ap.add_argument("--out", type=Path, default=REPO / "benchmarks" / "results")
    args = ap.parse_args()
    torch.set_num_threads(1)
    decks = read_deck_file(args.deck_file)
    args.out.mkdir(parents=True, exist_ok=True)
    print(f"ES-MCCFR vs DCFR, {date.today()}, {platform.machine()}, torch {torch.__version__}, CPU, one thread\n")
    records = []
    print(
        "| deck | tree | round-4 edges | method | iterations in budget | "
        + " | ".join(f"s to {x:g}" for x in LEVELS)
        + " |"
    )
    print("|---|---|---|---|---|" + "---|" * len(LEVELS))
    for nd in decks:
        for mode in args.modes:
            tree = build_tree(GameState.initial(nd.deck), mode, infosets=False)
            sol = solve_exact(tree)
            rt = tree.round(4)
            terminal = sol.values[(5, 0)][rt.link.long()]
            edges = sum(int(rt.edges(t)[0].shape[0]) for t in range(rt.start_turn, 8))
            for method in ("dcfr", "es-mccfr"):
                rows = curve(rt, terminal, method, args.seconds, args.seed)
                records += [{"deck": nd.id, "tree": mode, "method": method, **r} for r in rows]
                cells = " | ".join(first_time(rows, x) for x in LEVELS)
                print(f"| {nd.id} | {mode} | {edges:,} | {method} | {rows[-1]['iteration']} | {cells} |", flush=True)
            del tree, sol
    with open(args.out / "es_vs_dcfr.csv", "w", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(records[0]))
        w.writeheader()
        w.writerows(records)
    plot(records, args.out / "es_vs_dcfr.png")
    print(f"\nwrote {args.out / 'es_vs_dcfr.csv'} and es_vs_dcfr.png")
    if not args.whole:
        return
    nd = next(d for d in decks if d.id == args.deck_id)
    tree = build_tree(GameState.initial(nd.deck), "compact", infosets=False)
    print(f"\nWhole game, {nd.id}, compact tree (wall time including the checks):\n")
    print(
        "| method | target (exploitability) | check every | seconds | iterations per round (0..5) "
        "| exploitability | NashConv | met |"
    )
    print("|---|---|---|---|---|---|---|---|")
    for method, check, cap in (("dcfr", 10, 2000), ("es-mccfr", 100, 2000)):
        for target in (0.1, 0.025):  # (the NashConv 0.2 and 0.05 of before docs/conventions.md)
            params = CFRParams(
                method=method, iterations=None, target_exploitability=target, check_every=check, max_iterations=cap
            )
            t0 = time.perf_counter()
            res = solve_cfr(tree, params)
            sec = time.perf_counter() - t0
            its = " / ".join(str(res.iterations[r]) for r in sorted(res.iterations))
            print(
                f"| {method} | {target} | {check} | {sec:.1f} | {its} | {res.exploitability:.4f} "
                f"| {res.nash_conv:.4f} | {res.target_met} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
