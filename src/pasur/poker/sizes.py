"""Sizes of a game: information sets, public nodes, hands per round, memory of a solve.

``public nodes`` count (betting history, board) pairs over every actual board (decision and
terminal nodes); ``infosets`` count, per player, (betting history, board, private hand) at the
player's decision nodes: the rows of a lossless strategy. ``solve_bytes`` estimates what a
CFR solve holds: five tables (regrets, average strategy, current strategy and the two
per-pass sums) over the engine's listed boards, plus one chunk of the traversal.
"""

from __future__ import annotations

import math

from pasur.poker.boards import RoundBoards
from pasur.poker.games import PokerGame
from pasur.poker.tree import DECISION, N_ACTIONS, BettingTree

TABLES = 5


def game_info(game: PokerGame, iso: bool | None = None, n_keys: list[int] | None = None, itemsize: int = 8) -> dict:
    """A dict of sizes (see the module docstring); ``n_keys``: an abstraction's keys per round."""
    if iso is None:
        iso = sum(game.board_cards) >= 2 and game.n_suits > 1
    t = BettingTree(game)
    b = RoundBoards(game, iso=iso)
    actual = [b.n_actual(r) for r in range(game.n_rounds)]
    hands = [b.hand_ids[r].shape[1] for r in range(game.n_rounds)]
    listed = [len(x) for x in b.boards]
    infosets = [0, 0]
    public = 0
    public_decision = 0
    for n in range(t.n_nodes):
        r = int(t.round[n])
        public += actual[r]
        if t.kind[n] == DECISION:
            public_decision += actual[r]
            infosets[int(t.actor[n])] += actual[r] * hands[r]
    keys = n_keys or [listed[r] * hands[r] for r in range(game.n_rounds)]
    rows = [len(d) for d in t.round_decisions]
    table_entries = sum(rows[r] * N_ACTIONS * keys[r] for r in range(game.n_rounds))
    last = game.n_rounds - 1
    nodes_last = int(((t.round == last) | (t.round == last - 1)).sum()) if last else t.n_nodes
    per_board = nodes_last * hands[last] * 6 * itemsize
    chunk = min(listed[last], max(1, (384 * 2**20) // per_board)) * per_board
    return {
        "game": game.name,
        "description": game.description,
        "cards": game.n_cards,
        "rounds": game.n_rounds,
        "betting_sequences": int(t.n_nodes),
        "decision_nodes": int(t.n_decision),
        "public_nodes": public,
        "public_decision_nodes": public_decision,
        "infosets": infosets,
        "infosets_total": sum(infosets),
        "hands_per_round": [actual[r] * hands[r] for r in range(game.n_rounds)],
        "boards_per_round": actual,
        "listed_boards_per_round": listed,
        "suit_isomorphism": iso,
        "strategy_entries": table_entries,
        "solve_bytes": TABLES * table_entries * itemsize + chunk,
        "openspiel": game.openspiel,
    }


#: what a solve holds beyond its tables (the interpreter, torch, the engine's index tensors),
#: measured on numeral211-r5 (1.41 GiB peak for 1.00 GiB of tables in float64, 0.85 for 0.50 in
#: float32; docs/benchmarks.md)
BASE_BYTES = 400 * 2**20


def solve_estimate(game: PokerGame, iso: bool | None = None, n_keys: list[int] | None = None, itemsize: int = 8) -> int:
    """Bytes a solve's process is expected to peak at: the tables (:func:`game_info`'s
    ``solve_bytes``) plus :data:`BASE_BYTES`. Needs only the game, so a solve that cannot fit is
    refused before anything large is built."""
    return game_info(game, iso=iso, n_keys=n_keys, itemsize=itemsize)["solve_bytes"] + BASE_BYTES


def human_bytes(n: int) -> str:
    if n < 1024:
        return f"{n} B"
    e = min(int(math.log(n, 1024)), 4)
    return f"{n / 1024**e:.1f} {'BKMGT'[e]}{'iB' if e else ''}"
