"""How far strategy tables are from subgame perfect, and how they play against random (issue 29).

For each table (``pasur solve --out DIR`` writes ``DIR/strategy.parquet``) of one deck: the
largest difference over every node of the tree between the node's value under the table and its
minimax value (:func:`pasur.solve.exact.subgame_gap`), the table's NashConv (points: Alex's
best response minus Bob's) and exploitability (NashConv / 2, docs/conventions.md), and, with
``--games N``, the table's mean points against the random agent as Alex and as Bob (N games
each, the random agent seeded with ``--sample-seed``).

    python benchmarks/subgame_gap.py --deck-file ../shared/decks/reference-decks.json --deck-id ref2 \\
        --tree paper --games 4000 plain=runs/ref2-plain/strategy.parquet tremble=runs/ref2-t3/strategy.parquet

Prints a Markdown table, one row per table.
"""

from __future__ import annotations

import argparse

from pasur.game.cards import read_deck_file
from pasur.game.state import ALEX, GameState
from pasur.play.selfplay import BatchRandom, BatchStrategy, play_batch
from pasur.solve.exact import nash_conv, solve_exact, subgame_gap
from pasur.solve.strategy_io import read_strategy_table
from pasur.solve.tree import build_tree


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--deck-file", required=True)
    ap.add_argument("--deck-id", required=True)
    ap.add_argument("--tree", default="paper", choices=["paper", "compact"])
    ap.add_argument("--games", type=int, default=0)
    ap.add_argument("--sample-seed", type=int, default=0)
    ap.add_argument("tables", nargs="+", help="NAME=PATH of a strategy.parquet")
    a = ap.parse_args()
    (nd,) = [d for d in read_deck_file(a.deck_file) if d.id == a.deck_id]
    tree = build_tree(GameState.initial(nd.deck), a.tree)
    exact = solve_exact(tree)
    print("| table | subgame gap | NashConv | exploitability | as Alex vs random | as Bob vs random |")
    print("|---|---|---|---|---|---|")
    for item in a.tables:
        name, path = item.split("=", 1)
        strategy = read_strategy_table(path, tree)
        nash = nash_conv(tree, strategy)
        row = [name, f"{subgame_gap(tree, strategy, exact):.4f}", f"{nash:.2e}", f"{nash / 2:.2e}"]
        for seat in (ALEX, 1 - ALEX):
            if not a.games:
                row.append("-")
                continue
            table = BatchStrategy(strategy, seed=a.sample_seed)
            rnd = BatchRandom(seed=a.sample_seed + 1)
            agents = (table, rnd) if seat == ALEX else (rnd, table)
            final = play_batch(nd.deck, *agents, a.games, tree=tree)
            row.append(f"{float(final.utility().double().mean()):+.2f}")
        print("| " + " | ".join(row) + " |", flush=True)


if __name__ == "__main__":
    main()
