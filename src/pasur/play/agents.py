"""Agents: one small interface (``choose(state) -> Action``) and the built-in players.

Agents know nothing of who they play for: the state says whose turn it is. They read no input and
print nothing: a person at a terminal is an agent of the front end (:mod:`pasur.web.prompt`).

>>> from pasur.game.cards import Deck
>>> log = play_game(Deck.from_seed(5), GreedyAgent(), RandomAgent(seed=1))
>>> log.final.is_terminal
True
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Protocol

from pasur.common.errors import PasurInputError
from pasur.game.cards import Deck, clubs_in
from pasur.game.gamelog import GameLog
from pasur.game.rules import Action, immediate_points
from pasur.game.state import GameState
from pasur.solve.reference import ReferenceSolver


class Agent(Protocol):
    name: str

    def choose(self, state: GameState) -> Action:
        """One legal action for the player to move in ``state``."""
        ...


class RandomAgent:
    """Uniform over legal actions, from its own seeded generator."""

    name = "random"

    def __init__(self, seed: int | None = None) -> None:
        self.rng = random.Random(seed)

    def choose(self, state: GameState) -> Action:
        return self.rng.choice(state.legal_actions())


class GreedyAgent:
    """Best immediate points; ties go to more clubs taken, then more cards taken,
    then the first action in legal order (lowest card, then lowest captured set)."""

    name = "greedy"

    def choose(self, state: GameState) -> Action:
        def score(a: Action) -> tuple[int, int, int]:
            taken = a.captured | (1 << a.card) if a.captured else 0
            return immediate_points(a, state.pool, state.round), clubs_in(taken), taken.bit_count()

        actions = state.legal_actions()
        best = max(score(a) for a in actions)
        return next(a for a in actions if score(a) == best)


class ExactAgent:
    """Optimal play from the exact reference solver (deterministic ties: first in legal order)."""

    name = "exact"

    def __init__(self) -> None:
        self._solvers: dict[Deck, ReferenceSolver] = {}

    def solver(self, deck: Deck) -> ReferenceSolver:
        if deck not in self._solvers:
            self._solvers[deck] = ReferenceSolver(deck)
        return self._solvers[deck]

    def choose(self, state: GameState) -> Action:
        return self.solver(state.deck).best_action(state)


AGENT_NAMES = ("random", "greedy", "exact")


def make_agent(name: str, *, seed: int | None = None) -> Agent:
    factories: dict[str, Callable[[], Agent]] = {
        "random": lambda: RandomAgent(seed),
        "greedy": GreedyAgent,
        "exact": ExactAgent,
    }
    if name not in factories:
        raise PasurInputError(f"unknown agent {name!r} (choose from {', '.join(AGENT_NAMES)})")
    return factories[name]()


def play_game(
    deck: Deck,
    alex: Agent,
    bob: Agent,
    start: GameState | None = None,
    on_move: Callable[[GameState, Action], None] | None = None,
) -> GameLog:
    """Play to the end and return the log; an agent's illegal action is a bug and raises.

    ``on_move(state, action)`` is called after each choice (to show a human the other side's plays)."""
    state = start or GameState.initial(deck)
    actions = []
    agents = (alex, bob)
    while not state.is_terminal:
        a = agents[state.player].choose(state)
        if on_move is not None:
            on_move(state, a)
        state = state.apply(a)
        actions.append(a)
    return GameLog(deck, tuple(actions), start)
