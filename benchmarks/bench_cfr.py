"""Benchmark of round-by-round CFR on the tensor tree.

1. Cost of one iteration per full-game-tree node: every round of each deck, ``--iterations``
   DCFR iterations timed alone (no exploitability checks), summed over rounds; the minimum
   over the timed iterations of each round, as wall time and as this process's CPU time (on a
   shared machine the CPU time leaves out the time other processes held the core).
2. Time to a whole-game exploitability (NashConv / 2, docs/conventions.md) of ``--target`` points
   (exact best responses; default 0.005, the NashConv 0.01 of docs/benchmarks.md's runs) on
   ``--deck-id`` (default ref0) with DCFR, for each tree mode: the tree built without infosets,
   then ``solve_cfr`` with the whole-game target (checked every 10 iterations).

Every line ends with the load average (``/proc/loadavg``) when it was measured.

    python benchmarks/bench_cfr.py [--threads 1] [--device cpu] [--updates alternating] [--modes compact,paper]
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
from pasur.solve.cfr import CFRParams, RoundCFR
from pasur.solve.exact import solve_exact
from pasur.solve.rounds import solve_cfr
from pasur.solve.tree import build_tree

REPO = Path(__file__).resolve().parent.parent
DEFAULT_DECKS = REPO.parent / "shared" / "decks" / "reference-decks.json"
if not DEFAULT_DECKS.exists():
    DEFAULT_DECKS = REPO / "tests" / "data" / "reference-decks.json"


def load() -> str:
    return Path("/proc/loadavg").read_text().split()[0]


def per_iteration(tree, params: CFRParams, iterations: int, device) -> tuple[float, float, int]:
    """Seconds per iteration of the whole tree (wall, CPU), and its node count."""
    wall = cpu = 0.0
    for rt in tree.rounds:
        terminal = rt.terminal_value if rt.terminal_value is not None else torch.zeros(rt.n_nodes(8))
        solver = RoundCFR(rt, terminal, params, device)
        solver.iterate()  # warm-up: first touches of the buffers
        walls, cpus = [], []
        for _ in range(iterations):
            t0, c0 = time.perf_counter(), time.process_time()
            solver.iterate()
            if device.type == "cuda":
                torch.cuda.synchronize()
            walls.append(time.perf_counter() - t0)
            cpus.append(time.process_time() - c0)
        wall += min(walls)
        cpu += min(cpus)
        del solver
    return wall, cpu, tree.n_nodes


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--deck-file", type=Path, default=DEFAULT_DECKS)
    ap.add_argument("--deck-id", default="ref0")
    ap.add_argument("--iterations", type=int, default=5)
    ap.add_argument("--target", type=float, default=0.005, help="whole-game exploitability (NashConv / 2)")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--updates", default="alternating")
    ap.add_argument("--modes", default="compact,paper")
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    dev = torch.device(args.device)
    decks = read_deck_file(args.deck_file)
    print(
        f"CFR, {date.today()}, {platform.machine()}, torch {torch.__version__}, device {dev}, "
        f"{args.threads} thread(s), {args.updates} updates\n"
    )
    modes = args.modes.split(",")
    print(
        "| deck | tree | nodes | DCFR s per iteration | ns per node per iteration "
        "| CPU ns per node per iteration | load |"
    )
    print("|---|---|---|---|---|---|---|")
    for nd in decks:
        for mode in modes:
            tree = build_tree(GameState.initial(nd.deck), mode, dev, infosets=False)
            sec, cpu, nodes = per_iteration(tree, CFRParams(method="dcfr", updates=args.updates), args.iterations, dev)
            print(
                f"| {nd.id} | {mode} | {nodes:,} | {sec:.4f} | {sec / nodes * 1e9:.1f} | {cpu / nodes * 1e9:.1f} "
                f"| {load()} |",
                flush=True,
            )
            del tree
    nd = next(d for d in decks if d.id == args.deck_id)
    print(f"\nTime to whole-game exploitability {args.target} points on {nd.id} (DCFR, build included):\n")
    print(
        "| tree | iterations per round (0..5) | build s | CFR s | total s | CPU s | value | exact "
        "| exploitability | NashConv | met | load |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|")
    for mode in modes:
        t0, c0 = time.perf_counter(), time.process_time()
        tree = build_tree(GameState.initial(nd.deck), mode, dev, infosets=False)
        t1 = time.perf_counter()
        params = CFRParams(
            method="dcfr", iterations=None, target_exploitability=args.target, check_every=10, updates=args.updates
        )
        res = solve_cfr(tree, params, dev)
        t2, c2 = time.perf_counter(), time.process_time()
        its = " / ".join(str(res.iterations[r]) for r in sorted(res.iterations))
        exact = solve_exact(tree, keep_values=False).game_value()
        print(
            f"| {mode} | {its} | {t1 - t0:.1f} | {t2 - t1:.1f} | {t2 - t0:.1f} | {c2 - c0:.1f} "
            f"| {res.game_value():+.4f} | {exact:+g} | {res.exploitability:.4f} | {res.nash_conv:.4f} "
            f"| {res.target_met} | {load()} |",
            flush=True,
        )
        del tree, res


if __name__ == "__main__":
    main()
