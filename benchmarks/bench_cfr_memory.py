"""Peak memory of a whole-game CFR solve above the held tree, per edge of its largest round.

A round's solver holds a fixed number of bytes per edge (indices, rewards, regrets, sums, the
current strategy, work buffers) while the round runs, so the largest round sets the peak; on the
paper's tail decks (up to 324 M nodes) this is what decides whether a deck fits a machine. The
resident set is sampled every 5 ms (``/proc/self/statm``) during ``solve_cfr`` (DCFR with the
Figure 14 sweep's tremble 1e-3, one thread, CPU).

    python benchmarks/bench_cfr_memory.py DECK_FILE DECK_ID [--iterations 20] [--tree paper]
"""

from __future__ import annotations

import argparse
import time

import torch
from bench_strategy_table import PeakSampler, trimmed_rss

from pasur.game.cards import read_deck_file
from pasur.game.state import GameState
from pasur.solve.cfr import CFRParams
from pasur.solve.rounds import solve_cfr
from pasur.solve.tree import build_tree


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("deck_file")
    ap.add_argument("deck_id")
    ap.add_argument("--iterations", type=int, default=20)
    ap.add_argument("--tree", default="paper", choices=("paper", "compact"))
    args = ap.parse_args()
    torch.set_num_threads(1)
    nd = next((d for d in read_deck_file(args.deck_file) if d.id == args.deck_id), None)
    if nd is None:
        ap.error(f"no deck {args.deck_id!r} in {args.deck_file}")
    tree = build_tree(GameState.initial(nd.deck), args.tree, infosets=True)
    largest = max(sum(int(rt.edges(t)[0].shape[0]) for t in range(rt.start_turn, 8)) for rt in tree.rounds)
    before = trimmed_rss()
    sampler = PeakSampler()
    sampler.start()
    t0 = time.perf_counter()
    solve_cfr(tree, CFRParams(method="dcfr", iterations=args.iterations, tremble=0.001))
    secs = time.perf_counter() - t0
    sampler.stop.set()
    sampler.join()
    extra = sampler.peak - before
    head = ["deck", "nodes", "largest round, edges", "tree MiB", "RSS before MiB", "CFR peak MiB"]
    head += ["CFR peak above it MiB"]
    head += ["bytes per edge of the largest round", "seconds"]
    print("| " + " | ".join(head) + " |")
    print("|---" * len(head) + "|")
    print(
        f"| {nd.id} | {tree.n_nodes:,} | {largest:,} | {tree.nbytes() / 2**20:,.0f} | {before / 2**20:,.0f} "
        f"| {sampler.peak / 2**20:,.0f} | {extra / 2**20:,.0f} | {extra / largest:.1f} | {secs:.1f} |"
    )


if __name__ == "__main__":
    main()
