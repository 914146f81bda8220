"""The tree builder's memory guard against the memory each layer really takes.

For every layer the guard checks (pasur.common.memory.MemoryGuard), its estimate (kept plus
transient bytes) beside the peak resident set above what the build held when the check ran,
sampled every 5 ms until the next check; one thread, CPU. The guard refuses a tree whose estimate
passes the limit, so an estimate far above the real peak refuses trees that fit (the paper's
deck 49 was), and one below it lets a build be killed.

    python benchmarks/bench_build_memory.py DECK_FILE DECK_ID [--tree paper] [--min-nodes 500000]
"""

from __future__ import annotations

import argparse
import threading
import time

import torch
from bench_strategy_table import trimmed_rss

from pasur.common import memory
from pasur.common.memory import MemoryGuard, used_bytes
from pasur.game.cards import read_deck_file
from pasur.game.state import GameState
from pasur.solve.tree import build_tree

CPU = torch.device("cpu")


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("deck_file")
    ap.add_argument("deck_id")
    ap.add_argument("--tree", default="paper", choices=("paper", "compact"))
    ap.add_argument("--min-nodes", type=int, default=500_000, help="print layers of at least this many new nodes")
    args = ap.parse_args()
    torch.set_num_threads(1)
    nd = next((d for d in read_deck_file(args.deck_file) if d.id == args.deck_id), None)
    if nd is None:
        ap.error(f"no deck {args.deck_id!r} in {args.deck_file}")

    peak = [0]
    stop = threading.Event()

    def sample() -> None:
        while not stop.is_set():
            peak[0] = max(peak[0], used_bytes(CPU))
            time.sleep(0.005)

    rows: list[dict] = []

    def close_layer() -> None:
        if rows:
            rows[-1]["peak"] = peak[0] - rows[-1]["held"]

    check = MemoryGuard.check

    def measured_check(self, r, t, n_gt, n_fgm, mode, m, history):
        close_layer()
        now = used_bytes(CPU)
        rows.append(
            {
                "r": r,
                "t": t,
                "gt": n_gt,
                "fgm": n_fgm,
                "held": now,
                "estimate": self.estimate(t, n_gt, n_fgm, mode, m, history),
            }
        )
        peak[0] = now
        return check(self, r, t, n_gt, n_fgm, mode, m, history)

    memory.MemoryGuard.check = measured_check
    before = trimmed_rss()
    sampler = threading.Thread(target=sample, daemon=True)
    sampler.start()
    tree = build_tree(GameState.initial(nd.deck), args.tree, infosets=True, memory_limit=2**50)
    close_layer()
    stop.set()
    size = f"{tree.n_nodes:,} nodes, {tree.nbytes() / 2**30:.2f} GiB"
    print(f"{nd.id}, {args.tree} tree: {size}; RSS before {before / 2**30:.2f} GiB")
    head = ["round", "turn", "GT nodes", "FGT nodes", "guard's estimate MiB", "measured peak MiB", "estimate / peak"]
    print("| " + " | ".join(head) + " |")
    print("|---" * len(head) + "|")
    for x in rows:
        if max(x["gt"], x["fgm"]) >= args.min_nodes:
            ratio = f"{x['estimate'] / x['peak']:.2f}" if x["peak"] > 0 else "-"  # (0: the layer reused freed memory)
            cells = [
                x["r"],
                x["t"],
                f"{x['gt']:,}",
                f"{x['fgm']:,}",
                f"{x['estimate'] >> 20:,}",
                f"{x['peak'] >> 20:,}",
            ]
            print("| " + " | ".join(map(str, [*cells, ratio])) + " |")


if __name__ == "__main__":
    main()
