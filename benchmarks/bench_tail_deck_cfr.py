"""One deck's paper tree and its DCFR solve with the Figure 14 sweep's settings (300 iterations per
round, tremble 1e-3), timed on one device, with the tree's size and the device's peak memory: the
tail decks of the paper's deck file (100 M to 324 M nodes) are where a sweep's time and memory go.

    python benchmarks/bench_tail_deck_cfr.py DECK_FILE DECK_ID [DECK_ID ...] [--device cuda]
"""

from __future__ import annotations

import argparse
import time

import torch

from pasur.common.memory import peak_bytes
from pasur.game.cards import read_deck_file
from pasur.game.state import GameState
from pasur.solve.cfr import CFRParams
from pasur.solve.rounds import solve_cfr
from pasur.solve.tree import build_tree


def peak_gib(dev: torch.device) -> float:
    return peak_bytes(dev) / 2**30


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("deck_file")
    ap.add_argument("deck_ids", nargs="+")
    ap.add_argument("--device", default="cuda")
    ap.add_argument("--iterations", type=int, default=300)
    ap.add_argument(
        "--solver-gib",
        type=float,
        nargs="*",
        default=[None],
        help="memory a round's solver may take, GiB, one solve each (default: 80 %% of the free memory); "
        "a round that needs more is solved in parts of its roots",
    )
    args = ap.parse_args()
    dev = torch.device(args.device)
    sync = torch.cuda.synchronize if dev.type == "cuda" else (lambda: None)
    decks = {d.id: d for d in read_deck_file(args.deck_file)}
    if unknown := [d for d in args.deck_ids if d not in decks]:
        ap.error(f"no deck {', '.join(unknown)} in {args.deck_file}")
    for deck_id in args.deck_ids:
        nd = decks[deck_id]
        if dev.type == "cuda":
            torch.cuda.reset_peak_memory_stats(dev)
        t0 = time.perf_counter()
        tree = build_tree(GameState.initial(nd.deck), "paper", dev, infosets=True)
        sync()
        t1 = time.perf_counter()
        print(
            f"{nd.id}: {tree.n_nodes:,} nodes, built in {t1 - t0:.1f} s, tree {tree.nbytes() / 2**30:.2f} GiB, "
            f"peak {peak_gib(dev):.2f} GiB",
            flush=True,
        )
        params = CFRParams(method="dcfr", iterations=args.iterations, tremble=0.001)
        for gib in args.solver_gib:
            if dev.type == "cuda":
                torch.cuda.reset_peak_memory_stats(dev)
            t1 = time.perf_counter()
            res = solve_cfr(tree, params, dev, solver_memory=None if gib is None else int(gib * 2**30))
            sync()
            parts = ", ".join(f"round {tr.round}: {tr.parts}" for tr in res.traces if tr.parts > 1) or "none"
            print(
                f"DCFR {args.iterations} per round, tremble 1e-3, solver memory "
                f"{'default' if gib is None else f'{gib:g} GiB'} (parts: {parts}): {time.perf_counter() - t1:.1f} s "
                f"(solver {res.seconds:.1f} s), value {res.game_value():+.4f}, NashConv {res.nash_conv:.2e}, "
                f"peak {peak_gib(dev):.2f} GiB",
                flush=True,
            )
            del res
        del tree


if __name__ == "__main__":
    main()
