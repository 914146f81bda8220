"""A person at a terminal choosing moves: the one prompt loop of the open game (``pasur play
--alex human``, :class:`HumanAgent`) and of the hidden-hand game (``pasur play --hidden``,
:class:`pasur.web.terminal.TerminalPlayer`), and how an answer is read (:func:`parse_choice`).

The layers below read no input and print nothing: their agents are handed a state and return an
action; the person's agent, which talks, lives here with the other front ends.

>>> import io
>>> from pasur.game.cards import Deck
>>> from pasur.game.state import GameState
>>> state = GameState.initial(Deck.from_seed(5))
>>> out = io.StringIO()
>>> HumanAgent(io.StringIO("9\\n1\\n"), out).choose(state) == state.legal_actions()[0]
True
>>> "not understood: no action number 9" in out.getvalue()
True
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TextIO

from pasur.common.errors import PasurInputError
from pasur.game.cards import format_cards, parse_cards
from pasur.game.rules import Action
from pasur.game.state import PLAYER_NAMES, GameState
from pasur.play import agents as scalar

#: the open game's agents by name: the scalar ones and ``human``, a person at this terminal
AGENT_NAMES = (*scalar.AGENT_NAMES, "human")
QUIT = ("q", "quit", "exit")


class GameAborted(Exception):
    """A human player quit (or input ended) before the game was over."""


def parse_choice(answer: str, actions: list[Action]) -> Action:
    """Read a person's choice among ``actions``: the action's number (from 1), a card (``7C``) when
    that card has one action, or a card and the cards it takes (``7C AS 3D``)."""
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


class Prompt:
    """A terminal: lines read from ``stdin`` (default the process's), text written to ``stdout``,
    cards with suit symbols when ``unicode``."""

    def __init__(self, stdin: TextIO | None = None, stdout: TextIO | None = None, *, unicode: bool = True) -> None:
        self.stdin = stdin or sys.stdin
        self.stdout = stdout or sys.stdout
        self.unicode = unicode

    def say(self, text: str = "", end: str = "\n") -> None:
        print(text, end=end, file=self.stdout, flush=True)

    def show_actions(self, actions: list[Action]) -> None:
        """The actions numbered from 1, as :func:`parse_choice` reads the numbers."""
        for i, a in enumerate(actions, start=1):
            self.say(f"  {i:2d}. {a.describe(unicode=self.unicode)}")

    def ask(self, actions: list[Action], question: str, *, hint: Callable[[], None] | None = None) -> Action:
        """Ask ``question`` until the answer names one of ``actions``; a bad answer is told why and
        asked again, ``?`` calls ``hint`` (when there is one) and asks again, and ``q`` or the end
        of input raise :class:`GameAborted`."""
        while True:
            self.say(question, end="")
            line = self.stdin.readline()
            if not line:
                raise GameAborted("input ended")
            answer = line.strip()
            if answer.lower() in QUIT:
                raise GameAborted("player quit")
            if hint is not None and answer == "?":
                hint()
                continue
            try:
                return parse_choice(answer, actions)
            except PasurInputError as e:
                self.say(f"  not understood: {e}")


class HumanAgent(Prompt):
    """A person at the terminal in the open game (both hands shown): lists the legal actions and
    asks for one (see :func:`parse_choice` and :meth:`Prompt.ask`)."""

    name = "human"
    QUESTION = "choose (number, card, or card + captured cards; q to quit): "

    def choose(self, state: GameState) -> Action:
        actions = state.legal_actions()
        u = self.unicode
        me = state.player
        self.say(
            f"\n[{state.stage}] {PLAYER_NAMES[me]} to play.  Points: Alex {state.points[0]}, Bob {state.points[1]}"
        )
        self.say(f"  pool: {format_cards(state.pool, unicode=u) or '(empty)'}")
        self.say(f"  your hand: {format_cards(state.hands[me], unicode=u)}")
        self.say(f"  {PLAYER_NAMES[1 - me]}'s hand: {format_cards(state.hands[1 - me], unicode=u)}")
        self.show_actions(actions)
        return self.ask(actions, self.QUESTION)


def make_agent(name: str, *, seed: int | None = None) -> scalar.Agent:
    """An agent of the open game by name (:data:`AGENT_NAMES`): ``human`` is a person at this
    terminal, the others are :func:`pasur.play.agents.make_agent`'s."""
    if name == "human":
        return HumanAgent()
    if name not in AGENT_NAMES:
        raise PasurInputError(f"unknown agent {name!r} (choose from {', '.join(AGENT_NAMES)})")
    return scalar.make_agent(name, seed=seed)
