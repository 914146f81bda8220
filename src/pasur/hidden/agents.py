"""Agents of the hidden-hand game behind one interface, and the simple ones.

An agent gets an :class:`~pasur.hidden.infostate.InfoState` and returns a legal action; it also
gives each legal action's estimated value (for a hint button): the final margin, the observer's
points minus the opponent's, that it expects after the action. Ties go to the first action in
legal order, so play is reproducible. ``choose_batch`` decides many games at once; agents that
search (PIMC) batch their solves there, the others loop.

>>> from pasur.game.cards import Deck
>>> from pasur.hidden.game import HiddenGame
>>> info = HiddenGame(Deck.from_seed(0)).observation(0)
>>> GreedyAgent().choose(info) in info.legal_actions()
True
"""

from __future__ import annotations

from collections.abc import Sequence

from pasur.game.rules import Action, immediate_points
from pasur.hidden.infostate import InfoState
from pasur.hidden.worlds import info_seed


class HiddenAgent:
    """The interface: ``action_values`` (estimated final margin after each legal action, in legal
    order), ``choose`` (the best; first on ties) and ``choose_batch`` (many games at once)."""

    name = "agent"
    #: only the open-hand optimal player sees the full state (the arena's upper bound)
    omniscient = False

    def action_values(self, info: InfoState) -> list[tuple[Action, float]]:
        raise NotImplementedError

    def choose(self, info: InfoState) -> Action:
        vals = self.action_values(info)
        best = max(v for _, v in vals)
        return next(a for a, v in vals if v == best)

    def choose_batch(self, infos: Sequence[InfoState]) -> list[Action]:
        return [self.choose(i) for i in infos]

    def __repr__(self) -> str:
        return f"<{type(self).__name__} {self.name}>"


class RandomAgent(HiddenAgent):
    """Uniform over legal actions; seeded by its seed and the information state."""

    name = "random"

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed

    def action_values(self, info: InfoState) -> list[tuple[Action, float]]:
        return [(a, float(info.margin)) for a in info.legal_actions()]

    def choose(self, info: InfoState) -> Action:
        actions = info.legal_actions()
        return actions[int(info_seed(info, self.seed).integers(len(actions)))]


class GreedyAgent(HiddenAgent):
    """Most points now; ties to more clubs, then more cards taken, then legal order (the same
    player as :class:`pasur.play.agents.GreedyAgent`, from the information state)."""

    name = "greedy"

    def _key(self, info: InfoState, a: Action) -> tuple[int, int, int]:
        taken = a.captured | (1 << a.card) if a.captured else 0
        return _points_now(info, a), (taken & info.variant.club_mask).bit_count(), taken.bit_count()

    def action_values(self, info: InfoState) -> list[tuple[Action, float]]:
        return [(a, float(info.margin + _points_now(info, a))) for a in info.legal_actions()]

    def choose(self, info: InfoState) -> Action:
        actions = info.legal_actions()
        keys = [self._key(info, a) for a in actions]
        return actions[keys.index(max(keys))]


def _points_now(info: InfoState, a: Action) -> int:
    """What ``a`` wins at once under the information state's rules (the standard game's or a
    variant's: :mod:`pasur.game.variants`)."""
    v = info.variant
    return immediate_points(a, info.pool, info.round, final_round=v.final_round, variant=v)
