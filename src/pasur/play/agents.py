"""Agents: one small interface (``choose(state) -> Action``) and the built-in players.

Agents know nothing of who they play for: the state says whose turn it is.

>>> from pasur.game.cards import Deck
>>> log = play_game(Deck.from_seed(5), GreedyAgent(), RandomAgent(seed=1))
>>> log.final.is_terminal
True
"""

from __future__ import annotations

import random
import sys
from collections.abc import Callable
from typing import Protocol, TextIO

from pasur.common.errors import PasurInputError
from pasur.game.cards import Deck, clubs_in, format_cards, parse_cards, points_in
from pasur.game.gamelog import GameLog
from pasur.game.rules import Action, is_sur
from pasur.game.state import FINAL_ROUND, PLAYER_NAMES, GameState
from pasur.solve.reference import ReferenceSolver


class Agent(Protocol):
    name: str

    def choose(self, state: GameState) -> Action:
        """One legal action for the player to move in ``state``."""
        ...


class GameAborted(Exception):
    """A human player quit (or input ended) before the game was over."""


class RandomAgent:
    """Uniform over legal actions, from its own seeded generator."""

    name = "random"

    def __init__(self, seed: int | None = None) -> None:
        self.rng = random.Random(seed)

    def choose(self, state: GameState) -> Action:
        return self.rng.choice(state.legal_actions())


def immediate_points(state: GameState, action: Action) -> int:
    """Points an action banks at once: the card points it captures (played card included) and a Sur."""
    if not action.captured:
        return 0
    sur = is_sur(action, state.pool, state.round, final_round=FINAL_ROUND)
    return points_in(action.captured | (1 << action.card)) + (5 if sur else 0)


class GreedyAgent:
    """Best immediate points; ties go to more clubs taken, then more cards taken,
    then the first action in legal order (lowest card, then lowest captured set)."""

    name = "greedy"

    def choose(self, state: GameState) -> Action:
        def score(a: Action) -> tuple[int, int, int]:
            taken = a.captured | (1 << a.card) if a.captured else 0
            return immediate_points(state, a), clubs_in(taken), taken.bit_count()

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


class HumanAgent:
    """A person at the terminal: lists the legal actions and asks for one.

    Accepts the action's number, a card (``7C``) when that card has one action, or a
    card and the cards it takes (``7C AS 3D``). Bad input is rejected and asked again;
    ``q`` or the end of input abort the game.
    """

    name = "human"

    def __init__(self, stdin: TextIO | None = None, stdout: TextIO | None = None, *, unicode: bool = True) -> None:
        self.stdin = stdin or sys.stdin
        self.stdout = stdout or sys.stdout
        self.unicode = unicode

    def _say(self, text: str) -> None:
        print(text, file=self.stdout, flush=True)

    def choose(self, state: GameState) -> Action:
        actions = state.legal_actions()
        u = self.unicode
        me = state.player
        self._say(
            f"\n[{state.stage}] {PLAYER_NAMES[me]} to play.  Points: Alex {state.points[0]}, Bob {state.points[1]}"
        )
        self._say(f"  pool: {format_cards(state.pool, unicode=u) or '(empty)'}")
        self._say(f"  your hand: {format_cards(state.hands[me], unicode=u)}")
        self._say(f"  {PLAYER_NAMES[1 - me]}'s hand: {format_cards(state.hands[1 - me], unicode=u)}")
        for i, a in enumerate(actions, start=1):
            self._say(f"  {i:2d}. {a.describe(unicode=u)}")
        while True:
            print("choose (number, card, or card + captured cards; q to quit): ", end="", file=self.stdout, flush=True)
            line = self.stdin.readline()
            if not line:
                raise GameAborted("input ended")
            answer = line.strip()
            if answer.lower() in ("q", "quit", "exit"):
                raise GameAborted("player quit")
            try:
                return parse_choice(answer, actions)
            except PasurInputError as e:
                self._say(f"  not understood: {e}")


def parse_choice(answer: str, actions: list[Action]) -> Action:
    """Read a human's choice among ``actions`` (see :class:`HumanAgent`)."""
    if not answer:
        raise PasurInputError("empty answer")
    if answer.isdigit():
        i = int(answer)
        if 1 <= i <= len(actions):
            return actions[i - 1]
        raise PasurInputError(f"no action number {i} (1..{len(actions)})")
    cards = parse_cards(answer)
    card, taken = cards[0], sum(1 << c for c in cards[1:])
    matching = [a for a in actions if a.card == card]
    if not matching:
        raise PasurInputError(f"{answer.split()[0]} is not a card you can play")
    if len(cards) == 1:
        if len(matching) == 1:
            return matching[0]
        raise PasurInputError("that card has several actions: give its number or the cards it takes")
    for a in matching:
        if a.captured == taken:
            return a
    raise PasurInputError("that card cannot take exactly those cards")


AGENT_NAMES = ("random", "greedy", "exact", "human")


def make_agent(name: str, *, seed: int | None = None) -> Agent:
    factories: dict[str, Callable[[], Agent]] = {
        "random": lambda: RandomAgent(seed),
        "greedy": GreedyAgent,
        "exact": ExactAgent,
        "human": HumanAgent,
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
