"""Throughput of batched self-play: games per second for batch sizes 1, 100 and 10,000, for
the random and greedy agents, the strategy-table agent (a DCFR solve of the deck) and the
XGBoost model agent (fitted to that table with the paper's settings).

Each row is the median (and best) of ``--repeat`` batches after one warm-up batch, with the load
average (``/proc/loadavg``) when it was measured. Agents that play from the tree (table and random,
when a table plays) walk the tree's edges instead of searching legal actions.

python benchmarks/bench_selfplay.py [--threads 1] [--device cpu] [--seed 0] [--repeat 3]
    [--pairs table-table,table-random]   (default: all pairs, which fits a model)
    [--sizes 1,100,10000]                (games per batch; a GPU wants 1,000,000 too)
"""

from __future__ import annotations

import argparse
import platform
import statistics
import tempfile
import time
from datetime import date
from pathlib import Path

import torch

from pasur.game.cards import Deck
from pasur.game.state import GameState
from pasur.learn.models import BatchModel, ModelParams, fit_model
from pasur.play.selfplay import BatchGreedy, BatchRandom, BatchStrategy, play_batch
from pasur.solve.cfr import CFRParams
from pasur.solve.rounds import solve_cfr
from pasur.solve.strategy_io import write_strategy_table
from pasur.solve.tree import build_tree


def solved(deck: Deck, device: str, model: bool = True):
    """The deck's compact tree, a DCFR strategy (exploitability 0.025, NashConv 0.05) and a model of it."""
    tree = build_tree(GameState.initial(deck), "compact", device, infosets=True)
    strategy = solve_cfr(tree, CFRParams(iterations=None, target_exploitability=0.025)).strategy
    if not model:
        return tree, strategy, None
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
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--pairs", default="random-random,greedy-random,table-table,model-model,model-random")
    ap.add_argument("--sizes", default="1,100,10000", help="games per batch, comma-separated")
    args = ap.parse_args()
    try:
        sizes = [int(x) for x in args.sizes.split(",")]
    except ValueError:
        ap.error(f"--sizes: whole numbers separated by commas, not {args.sizes!r}")
    if any(n < 1 for n in sizes):
        ap.error("--sizes: each batch holds at least one game")
    sync = torch.cuda.synchronize if args.device.startswith("cuda") else (lambda: None)
    pairs = [tuple(x.split("-")) for x in args.pairs.split(",")]
    torch.set_num_threads(args.threads)
    deck = Deck.from_seed(args.seed)
    print(
        f"batched self-play, {date.today()}, {platform.machine()}, torch {torch.__version__}, "
        f"device {args.device}, {args.threads} thread(s), deck seed {args.seed}\n"
    )
    tree, strategy, model = solved(deck, args.device, any("model" in p for p in pairs))
    make = {
        "random": lambda s: BatchRandom(seed=s),
        "greedy": lambda s: BatchGreedy(),
        "table": lambda s: BatchStrategy(strategy, s),
        "model": lambda s: BatchModel(model, s),
    }
    print("| Alex | Bob | games per batch | median s | games per second (median) | best | load |")
    print("|---|---|---|---|---|---|---|")
    for alex, bob in pairs:
        for n in sizes:
            t = tree if "table" in (alex, bob) else None
            play_batch(deck, make[alex](1), make[bob](2), n_games=min(n, 100), device=args.device, tree=t)  # warm-up
            secs = []
            for _ in range(args.repeat):
                t0 = time.perf_counter()
                play_batch(deck, make[alex](1), make[bob](2), n_games=n, device=args.device, tree=t)
                sync()
                secs.append(time.perf_counter() - t0)
            med = statistics.median(secs)
            load = Path("/proc/loadavg").read_text().split()[0]
            print(
                f"| {alex} | {bob} | {n:,} | {med:.3f} | {n / med:,.0f} | {n / min(secs):,.0f} | {load} |", flush=True
            )


if __name__ == "__main__":
    main()
