"""Throughput of batched self-play: games per second for batch sizes 1, 100 and 10,000, for
the random and greedy agents, the strategy-table agent (a DCFR solve of the deck) and the
XGBoost model agent (fitted to that table with the paper's settings).

python benchmarks/bench_selfplay.py [--threads 1] [--device cpu] [--seed 0]
"""

from __future__ import annotations

import argparse
import platform
import tempfile
import time
from datetime import date
from pathlib import Path

import torch

from pasur.game.cards import Deck
from pasur.game.state import GameState
from pasur.learn.models import BatchModel, ModelParams, fit_model
from pasur.play.selfplay import BatchGreedy, BatchRandom, BatchStrategy, play_batch
from pasur.solve.cfr import CFRParams, solve_cfr
from pasur.solve.tables import write_strategy_table
from pasur.solve.tree import build_tree


def solved(deck: Deck, device: str):
    """The deck's compact tree, a DCFR strategy (exploitability 0.05) and a model of it."""
    tree = build_tree(GameState.initial(deck), "compact", device, infosets=True)
    strategy = solve_cfr(tree, CFRParams(iterations=None, target_exploitability=0.05)).strategy
    with tempfile.TemporaryDirectory() as tmp:
        path = Path(tmp) / "strategy.parquet"
        write_strategy_table(path, tree, strategy, "bench")
        t0 = time.perf_counter()
        model = fit_model([path], ModelParams())
        print(f"model fitted in {time.perf_counter() - t0:.1f} s on {model.card['training']['rows_used']:,} rows\n")
    return tree, strategy, model


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
    tree, strategy, model = solved(deck, args.device)
    make = {
        "random": lambda s: BatchRandom(seed=s),
        "greedy": lambda s: BatchGreedy(),
        "table": lambda s: BatchStrategy(strategy, s),
        "model": lambda s: BatchModel(model, s),
    }
    print("| Alex | Bob | games per batch | seconds | games per second |")
    print("|---|---|---|---|---|")
    pairs = (("random", "random"), ("greedy", "random"), ("table", "table"), ("model", "model"), ("model", "random"))
    for alex, bob in pairs:
        for n in (1, 100, 10_000):
            t = tree if "table" in (alex, bob) else None
            play_batch(deck, make[alex](1), make[bob](2), n_games=min(n, 100), device=args.device, tree=t)  # warm-up
            t0 = time.perf_counter()
            play_batch(deck, make[alex](1), make[bob](2), n_games=n, device=args.device, tree=t)
            sec = time.perf_counter() - t0
            print(f"| {alex} | {bob} | {n:,} | {sec:.3f} | {n / sec:,.0f} |", flush=True)


if __name__ == "__main__":
    main()
