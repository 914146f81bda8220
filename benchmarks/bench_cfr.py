"""Benchmark of round-by-round CFR on the tensor tree.

1. Cost of one iteration per full-game-tree node: every round of each deck, ``--iterations``
   DCFR iterations timed alone (no exploitability checks), summed over rounds.
2. Time to reach an exploitability of ``--target`` points (whole game, exact best responses)
   on ``--deck-id`` (default ref0) with DCFR, for each tree mode: per-round targets of
   target / 6, checked every 10 iterations; the whole-game exploitability is then measured.

    python benchmarks/bench_cfr.py [--threads 1] [--device cpu] [--updates alternating]
"""

from __future__ import annotations

import argparse
import platform
import time
from datetime import date
from pathlib import Path

import torch

from pasur.game.cards import read_deck_file
from pasur.game.state import GameState
from pasur.solve.cfr import CFRParams, RoundCFR, solve_cfr
from pasur.solve.exact import solve_exact
from pasur.solve.tree import build_tree

REPO = Path(__file__).resolve().parent.parent
DEFAULT_DECKS = REPO.parent / "shared" / "decks" / "reference-decks.json"
if not DEFAULT_DECKS.exists():
    DEFAULT_DECKS = REPO / "tests" / "data" / "reference-decks.json"


def per_iteration(tree, params: CFRParams, iterations: int, device) -> tuple[float, int]:
    """Seconds per iteration of the whole tree, and its node count."""
    total = 0.0
    for rt in tree.rounds:
        terminal = rt.terminal_value if rt.terminal_value is not None else torch.zeros(rt.n_nodes(8))
        solver = RoundCFR(rt, terminal, params, device)
        solver.iterate()  # warm-up: first touches of the buffers
        t0 = time.perf_counter()
        for _ in range(iterations):
            solver.iterate()
        if device.type == "cuda":
            torch.cuda.synchronize()
        total += (time.perf_counter() - t0) / iterations
        del solver
    return total, tree.n_nodes


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--deck-file", type=Path, default=DEFAULT_DECKS)
    ap.add_argument("--deck-id", default="ref0")
    ap.add_argument("--iterations", type=int, default=5)
    ap.add_argument("--target", type=float, default=0.01)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--updates", default="alternating")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    dev = torch.device(args.device)
    decks = read_deck_file(args.deck_file)
    print(
        f"CFR, {date.today()}, {platform.machine()}, torch {torch.__version__}, device {dev}, "
        f"{args.threads} thread(s), {args.updates} updates\n"
    )
    print("| deck | tree | nodes | DCFR s per iteration | ns per node per iteration |")
    print("|---|---|---|---|---|")
    for nd in decks:
        for mode in ("compact", "paper"):
            tree = build_tree(GameState.initial(nd.deck), mode, dev, infosets=False)
            sec, nodes = per_iteration(tree, CFRParams(method="dcfr", updates=args.updates), args.iterations, dev)
            print(f"| {nd.id} | {mode} | {nodes:,} | {sec:.4f} | {sec / nodes * 1e9:.1f} |", flush=True)
            del tree
    nd = next(d for d in decks if d.id == args.deck_id)
    print(f"\nTime to exploitability {args.target} points on {nd.id} (DCFR, per-round target {args.target / 6:.4g}):\n")
    print("| tree | iterations per round (0..5) | seconds | value | exact | exploitability |")
    print("|---|---|---|---|---|---|")
    for mode in ("compact", "paper"):
        tree = build_tree(GameState.initial(nd.deck), mode, dev, infosets=False)
        params = CFRParams(
            method="dcfr", iterations=None, target_exploitability=args.target / 6, check_every=10, updates=args.updates
        )
        t0 = time.perf_counter()
        res = solve_cfr(tree, params, dev)
        sec = time.perf_counter() - t0
        its = " / ".join(str(res.iterations[r]) for r in sorted(res.iterations))
        exact = solve_exact(tree, keep_values=False).game_value()
        print(
            f"| {mode} | {its} | {sec:.1f} | {res.game_value():+.4f} | {exact:+g} | {res.exploitability:.4f} |",
            flush=True,
        )
        del tree, res


if __name__ == "__main__":
    main()
