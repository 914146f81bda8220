"""A strategy table of the exact hidden-hand solver (:mod:`pasur.hidden.exact_cfr`) as an
OpenSpiel policy of ``python_pasur`` with the same variant (:mod:`pasur.hidden.openspiel`), so
OpenSpiel's own algorithms (``exploitability``, ``CFRSolver``) can check ours on the same game.

An OpenSpiel state knows its player's :class:`~pasur.hidden.infostate.InfoState`; its
:func:`~pasur.hidden.history_tree.seen_key` finds the row of the table. OpenSpiel deals card by
card, so its tree has more histories (every order of the cards of a hand) but the same
information sets.
"""

from __future__ import annotations

import numpy as np

from pasur.hidden.history_tree import HistoryTree, seen_key
from pasur.hidden.openspiel import action_id, require_pyspiel


def row_index(tree: HistoryTree) -> dict[tuple[int, tuple], int]:
    """``(player, seen key)`` -> row of the solver's table (Alex's rows first)."""
    out, offset = {}, 0
    for p in (0, 1):
        for i in range(tree.n_infosets[p]):
            out[p, tuple(tree.seen(p, i))] = offset + i
        offset += tree.n_infosets[p]
    return out


def as_openspiel_policy(game, tree: HistoryTree, table):
    """``table`` (``[rows, actions]``, a tensor or an array) as an ``open_spiel`` policy of ``game``:
    each state's legal action ids with the table's probabilities of its information set."""
    require_pyspiel()
    from open_spiel.python import policy as os_policy

    rows = row_index(tree)
    probs = np.asarray(table.detach().cpu() if hasattr(table, "detach") else table, dtype=np.float64)

    class TablePolicy(os_policy.Policy):
        def action_probabilities(self, state, player_id=None):
            p = state.current_player() if player_id is None else player_id
            info = state.info(p)
            row = rows[p, seen_key(info)]
            acts = tree.actions[p][row - (0 if p == 0 else tree.n_infosets[0])]
            return {action_id(a): float(probs[row, k]) for k, a in enumerate(acts)}

    return TablePolicy(game, [0, 1])
