"""Solve a deck of Pasur exactly and by Discounted CFR, write the CFR strategy as a table, read it
back, and show the first decision of the game with the table's probabilities.

    python examples/solve_deck.py [--seed 7] [--out DIR]

The strategy table (``strategy.parquet``) has one row per edge of the game tree: the decision's
round, turn and player, its node, the action (``action_card``, a card index 0-51, rank * 4 + suit;
``action_captured``, a bit mask of the cards it takes) and the average strategy's probability.
"""

from __future__ import annotations

import argparse
import tempfile
from pathlib import Path

import pyarrow.parquet as pq

import pasur
from pasur.game.cards import format_card, format_cards


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seed", type=int, default=7, help="the deck's seed (as pasur deal --seed)")
    parser.add_argument("--out", type=Path, default=None, help="where the table goes (default: a temporary folder)")
    args = parser.parse_args()
    out = args.out or Path(tempfile.mkdtemp(prefix="pasur-example-"))
    out.mkdir(parents=True, exist_ok=True)

    deck = pasur.Deck.from_seed(args.seed)
    tree = pasur.build_tree(pasur.GameState.initial(deck))  # the compact open-hand tree, one torch thread
    exact = pasur.solve_exact(tree)
    print(f"deck {args.seed}: {tree.n_nodes:,} nodes, exact value {exact.game_value():+.0f} (Alex - Bob)")

    params = pasur.CFRParams(method="dcfr", iterations=None, target_exploitability=0.05)
    result = pasur.solve_cfr(tree, params)
    print(f"dcfr: value {result.game_value():+.3f}, exploitability {result.exploitability:.4f} (target 0.05)")

    path = out / "strategy.parquet"
    rows = pasur.write_strategy_table(path, tree, result.strategy, deck_id=str(args.seed))
    back = pasur.read_strategy_table(path, tree)
    same = all(bool((back[key] == p).all()) for key, p in result.strategy.items())
    print(f"table: {rows:,} rows ({tree.n_edges:,} edges), read back {'identical' if same else 'DIFFERENT'}")
    print(f"exploitability of the table read back: {pasur.exploitability(tree, back):.4f}")

    columns = ["round", "turn", "player", "node", "action_card", "action_captured", "probability"]
    first = pq.read_table(
        path, columns=columns, filters=[("round", "=", 0), ("turn", "=", 0), ("player", "=", 0), ("node", "=", 0)]
    )
    start = pasur.GameState.initial(deck)
    print(f"first decision: Alex holds {format_cards(start.hands[0])}, the pool is {format_cards(start.pool)}")
    for row in sorted(first.to_pylist(), key=lambda r: -r["probability"]):
        taken = format_cards(row["action_captured"]) or "nothing"
        print(f"  play {format_card(row['action_card'])} taking {taken}: {row['probability']:.3f}")
    print(f"  total {sum(first.column('probability').to_pylist()):.3f}")


if __name__ == "__main__":
    main()
