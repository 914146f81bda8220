"""The exact reference solver of the open-hand game: memoized minimax.

The open-hand game has perfect information, so its value is found by plain
backward induction. States are memoized on a key that keeps only what the rest
of the game depends on, so transpositions merge:

* the round and both hands (the turn follows from the hand sizes; the deck fixes
  everything still to be dealt), and the pool;
* the clubs of each player while nobody has clinched the bonus, or who has;
* the last capturer (it receives the final sweep).

Accumulated points are *not* in the key: the solver returns the *future* point
difference from a state, and the value of a state is its points so far plus that.
This is the oracle every faster solver is tested against, so it stays simple.

>>> from pasur.game.cards import Deck
>>> from pasur.game.state import GameState
>>> deck = Deck.from_seed(11)  # a deck of the fast half (the time to solve one is heavy-tailed)
>>> solver = ReferenceSolver(deck)
>>> s = GameState.initial(deck)
>>> line = solver.optimal_line(s)
>>> for a in line:
...     s = s.apply(a)
>>> s.utility() == solver.value(GameState.initial(deck))
True
"""

from __future__ import annotations

import sys
from collections.abc import Callable

from pasur.game.cards import CLUBS_FOR_BONUS, Deck
from pasur.game.rules import Action
from pasur.game.state import ALEX, GameState

ClubKey = tuple[int, int]


def club_key(clubs: tuple[int, int], need: int = CLUBS_FOR_BONUS) -> ClubKey:
    """Clubs as far as the future is concerned: counts while undecided; (7, 0) or (0, 7) once
    clinched (``need``: the clubs a bonus takes, 7 in the standard game)."""
    ca, cb = clubs
    if ca >= need:
        return (need, 0)
    if cb >= need:
        return (0, need)
    return (ca, cb)


def future_key(state: GameState) -> tuple:
    """Everything the rest of the game depends on (see the module docstring)."""
    return (
        state.round,
        state.hands[0],
        state.hands[1],
        state.pool,
        club_key(state.clubs, state.variant.clubs_for_bonus),
        state.last_capturer,
    )


def banked_diff(state: GameState) -> int:
    """Alex minus Bob of the points that can no longer change: card points and Surs.

    The clubs bonus is left to the future part, since it is paid at the end."""
    ca, cb = state.card_points
    return ca - cb + state.variant.sur_points * (state.surs[0] - state.surs[1])


def _terminal_future(state: GameState) -> int:
    w, bonus = state.clubs_winner, state.variant.clubs_bonus
    return 0 if w is None else (bonus if w == ALEX else -bonus)


class ReferenceSolver:
    """Exact values and optimal actions for the open-hand game of one deck."""

    def __init__(self, deck: Deck) -> None:
        self.deck = deck
        self._memo: dict[tuple, int] = {}
        #: called with the number of states solved so far, every ``progress_every`` new states
        self.on_progress: Callable[[int], None] | None = None
        self.progress_every = 20_000

    @property
    def n_states(self) -> int:
        """Distinct (merged) non-terminal states solved so far."""
        return len(self._memo)

    def _future(self, state: GameState) -> int:
        """Optimal future point difference (Alex minus Bob) from ``state``."""
        if state.is_terminal:
            return _terminal_future(state)
        key = future_key(state)
        v = self._memo.get(key)
        if v is not None:
            return v
        base = banked_diff(state)
        best = None
        maximize = state.player == ALEX
        for a in state.legal_actions():
            child = state.apply(a, check=False)
            v = banked_diff(child) - base + self._future(child)
            if best is None or (v > best if maximize else v < best):
                best = v
        assert best is not None
        self._memo[key] = best
        if self.on_progress is not None and len(self._memo) % self.progress_every == 0:
            self.on_progress(len(self._memo))
        return best

    def value(self, state: GameState) -> int:
        """Exact game value (Alex's final points minus Bob's) from ``state`` under optimal play."""
        if state.deck != self.deck:
            raise ValueError("state belongs to another deck")
        limit = sys.getrecursionlimit()
        if limit < 1000:
            sys.setrecursionlimit(1000)
        return banked_diff(state) + self._future(state)

    def action_values(self, state: GameState) -> list[tuple[Action, int]]:
        """Each legal action with the exact game value after it, in legal-action order."""
        return [(a, self.value(state.apply(a, check=False))) for a in state.legal_actions()]

    def best_action(self, state: GameState) -> Action:
        """An optimal action; ties go to the first in legal-action order (card, then captured set)."""
        if state.is_terminal:
            raise ValueError("no action at a terminal state")
        vals = self.action_values(state)
        pick = max if state.player == ALEX else min
        target = pick(v for _, v in vals)
        return next(a for a, v in vals if v == target)

    def optimal_line(self, state: GameState) -> list[Action]:
        """The actions of one optimal game from ``state`` to the end."""
        line = []
        while not state.is_terminal:
            a = self.best_action(state)
            line.append(a)
            state = state.apply(a, check=False)
        return line


def solve_deck(deck: Deck) -> tuple[int, ReferenceSolver]:
    """Exact value of a whole deck, and the solver (with its memo) that found it."""
    solver = ReferenceSolver(deck)
    return solver.value(GameState.initial(deck)), solver
