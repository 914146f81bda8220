"""Throughput of batched self-play: games per second for batch sizes 1, 100 and 10,000.

python benchmarks/bench_selfplay.py [--threads 1] [--device cpu]
"""

from __future__ import annotations

import argparse
import platform
import time
from datetime import date

import torch

from pasur.cards import Deck
from pasur.selfplay import BatchGreedy, BatchRandom, play_batch


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--seed", type=int, default=0)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    deck = Deck.from_seed(args.seed)
    print(
        f"batched self-play, {date.today()}, {platform.machine()}, torch {torch.__version__}, "
        f"device {args.device}, {args.threads} thread(s), deck seed {args.seed}\n"
    )
    print("| Alex | Bob | games per batch | seconds | games per second |")
    print("|---|---|---|---|---|")
    for alex, bob in (("random", "random"), ("greedy", "random")):
        for n in (1, 100, 10_000):
            make = {"random": lambda s: BatchRandom(seed=s), "greedy": lambda s: BatchGreedy()}
            play_batch(deck, make[alex](1), make[bob](2), n_games=min(n, 100), device=args.device)  # warm-up
            t0 = time.perf_counter()
            play_batch(deck, make[alex](1), make[bob](2), n_games=n, device=args.device)
            sec = time.perf_counter() - t0
            print(f"| {alex} | {bob} | {n:,} | {sec:.3f} | {n / sec:,.0f} |", flush=True)


if __name__ == "__main__":
    main()
