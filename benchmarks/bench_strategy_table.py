"""Memory and time of writing a strategy table (``write_strategy_table``) on a deck's tree.

The writer runs after CFR, with the tree and the strategy held, so its transient memory sits on
top of a deck's largest resident set; on the paper's tail decks (100 M rows and more) it was
where the sweep was killed. This measures, for one deck: the tree's nodes and its largest layer,
the process's resident memory before the write, the peak above that during it (sampled every
5 ms from ``/proc/self/statm``), the seconds, and the rows written. The strategy is uniform per
decision (CFR's values do not change the writer's work).

    python benchmarks/bench_strategy_table.py [--deck-file F --deck-id ID | --seed S] [--tree paper]
        [--keep FILE]
"""

from __future__ import annotations

import argparse
import platform
import shutil
import tempfile
import threading
import time
from datetime import date
from pathlib import Path

import torch

from pasur.common.memory import used_bytes
from pasur.game.cards import Deck, read_deck_file
from pasur.game.state import GameState
from pasur.solve.strategy_io import write_strategy_table
from pasur.solve.tree import build_tree


def rss() -> int:
    return used_bytes(torch.device("cpu"))  # the resident set (/proc/self/statm)


def trimmed_rss() -> int:
    """The resident set after glibc has given back the freed memory it kept (``malloc_trim``), so
    that a version's transients are not hidden in what an earlier step left to the allocator.
    (Not ``pasur.common.memory.release_freed``: the benchmark also runs older versions.)"""
    import contextlib
    import ctypes
    import gc

    gc.collect()
    with contextlib.suppress(OSError, AttributeError):  # (not glibc: nothing to trim)
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    return rss()


class PeakSampler(threading.Thread):
    """The largest resident set seen while running (every ``every`` seconds)."""

    def __init__(self, every: float = 0.005) -> None:
        super().__init__(daemon=True)
        self.every, self.peak, self.stop = every, rss(), threading.Event()

    def run(self) -> None:
        while not self.stop.is_set():
            self.peak = max(self.peak, rss())
            time.sleep(self.every)


def uniform(tree) -> dict:
    out = {}
    for rt in tree.rounds:
        for t in range(rt.start_turn, 8):
            parent = rt.edges(t)[0]
            out[(rt.round, t)] = (1.0 / torch.bincount(parent)[parent].float()).cpu()
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--deck-file", type=Path)
    ap.add_argument("--deck-id")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--tree", default="paper", choices=("paper", "compact"))
    ap.add_argument("--keep", type=Path, help="copy the table written there (to compare two versions' files)")
    args = ap.parse_args()
    torch.set_num_threads(1)
    if args.deck_file:
        nd = next((d for d in read_deck_file(args.deck_file) if d.id == args.deck_id), None)
        if nd is None:
            ap.error(f"no deck {args.deck_id!r} in {args.deck_file}")
        deck, name = nd.deck, nd.id
    else:
        deck, name = Deck.from_seed(args.seed), f"seed-{args.seed}"
    tree = build_tree(GameState.initial(deck), args.tree, infosets=True)
    strategy = uniform(tree)
    largest = max(int(rt.edges(t)[0].shape[0]) for rt in tree.rounds for t in range(rt.start_turn, 8))
    with tempfile.TemporaryDirectory() as tmp:
        before = trimmed_rss()
        sampler = PeakSampler()
        sampler.start()
        t0 = time.perf_counter()
        rows = write_strategy_table(Path(tmp) / "s.parquet", tree, strategy, name)
        secs = time.perf_counter() - t0
        sampler.stop.set()
        sampler.join()
        size = (Path(tmp) / "s.parquet").stat().st_size
        if args.keep:
            shutil.copyfile(Path(tmp) / "s.parquet", args.keep)
    print(f"strategy table, {date.today()}, {platform.machine()}, torch {torch.__version__}, one thread\n")
    head = ["deck", "tree", "rows", "largest layer", "RSS before MiB", "peak MiB", "peak above it MiB"]
    head += ["bytes per row of the largest layer", "seconds", "file MiB"]
    print("| " + " | ".join(head) + " |")
    print("|---" * len(head) + "|")
    extra = sampler.peak - before
    print(
        f"| {name} | {args.tree} | {rows:,} | {largest:,} | {before / 2**20:,.0f} | {sampler.peak / 2**20:,.0f} "
        f"| {extra / 2**20:,.0f} "
        f"| {extra / largest:.0f} | {secs:.1f} | {size / 2**20:,.0f} |"
    )


if __name__ == "__main__":
    main()
