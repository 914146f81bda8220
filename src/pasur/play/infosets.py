"""Infoset features (the 58 columns of :mod:`pasur.solve.infoset`) of every game of a batch,
for agents that score the infoset each legal action leads to (XGBoost models).

:class:`InfosetTracker` keeps each game's ``t_cmp`` over all 52 cards (the tree keeps it over
the round's in-play cards only; the other cards get -127 or 0 in the features either way, so
the rows are the same) and updates it with the paper's codes on every move. The features follow
the tree mode the model was trained on: in ``paper`` mode the paper's (history codes, the score
inherited at the start of the round); in ``compact`` mode the compact tree's state features
(:func:`pasur.solve.infoset.to_state_features`: where each card is, the action's own codes, and
the decision's clubs, normalized once the bonus is clinched, and last capturer). Tests check the
rows against the strategy table's, every column, in both modes.
"""

from __future__ import annotations

import torch

from pasur.game.cards import CLUB_MASK
from pasur.solve.actions import LayerActions
from pasur.solve.card_codes import initial_cmp, update_cmp
from pasur.solve.infoset import CAPTURED_EARLIER, N_FEATURES, dealt_before, to_state_features
from pasur.solve.ops import popcount
from pasur.solve.tree import normalize_clubs

MODES = ("compact", "paper")


class InfosetTracker:
    """Per-game ``t_cmp`` [N, 52] of a :class:`pasur.play.selfplay.BatchState`, kept current by
    :meth:`BatchState.apply`."""

    def __init__(self, state, mode: str) -> None:
        if mode not in MODES:
            raise ValueError(f"unknown feature mode {mode!r} (choose from {', '.join(MODES)})")
        if state.turn != 0:
            raise ValueError("infoset features need the round's history: start the games at a round's first turn")
        self.mode = mode
        self.all_cards = torch.arange(52, dtype=torch.int64, device=state.pool.device)
        self.start_round(state)

    def start_round(self, state) -> None:
        """Codes at the start of ``state.round`` (hands 100/105, pool 110) and the round's context."""
        self.round = state.round
        self.cmp = initial_cmp(state.hands, state.pool, self.all_cards)
        dlt = dealt_before(state.deck, state.round)
        self.dealt = torch.tensor([(dlt >> c) & 1 for c in range(52)], dtype=torch.bool, device=state.pool.device)
        clubs = self._clubs(state)
        self.round_clubs = normalize_clubs(*clubs)
        self.round_last = state.last.clone()

    @staticmethod
    def _clubs(state) -> tuple[torch.Tensor, torch.Tensor]:
        return popcount(state.piles[0] & CLUB_MASK), popcount(state.piles[1] & CLUB_MASK)

    def _children_cmp(self, games: torch.Tensor, card, captured, player: int, turn: int) -> torch.Tensor:
        cmp = self.cmp[games]
        cap_rows = ((captured.unsqueeze(1) >> self.all_cards) & 1).to(torch.int8)
        return update_cmp(cmp, card, cap_rows, captured != 0, player, turn // 2)

    def children(self, state, actions: LayerActions) -> torch.Tensor:
        """[A, 58] int8: the features of the infoset each action of ``actions`` leads to."""
        p, t = state.player, state.turn
        games = actions.row
        cards = self._children_cmp(games, actions.card, actions.captured, p, t)
        cards[self.dealt.unsqueeze(0) & (cards == 0)] = CAPTURED_EARLIER
        out = torch.empty((games.shape[0], N_FEATURES), dtype=torch.int8, device=games.device)
        out[:, :52] = cards
        out[:, 55] = state.round
        out[:, 56] = t // 2
        out[:, 57] = p
        if self.mode == "compact":
            ca, cb = normalize_clubs(*self._clubs(state))
            decision = torch.stack([ca[games], cb[games], state.last[games]], 1)
            return to_state_features(out, actions.card, actions.captured, decision)
        out[:, 52] = self.round_clubs[0][games]
        out[:, 53] = self.round_clubs[1][games]
        out[:, 54] = self.round_last[games]
        return out

    def advance(self, state, card: torch.Tensor, captured: torch.Tensor) -> None:
        """Every game played ``card`` capturing ``captured`` (before ``state`` moves on)."""
        games = torch.arange(state.n, device=card.device)
        self.cmp = self._children_cmp(games, card, captured, state.player, state.turn)
