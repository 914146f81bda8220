"""The hidden-hand game at a terminal (``pasur play --hidden``): a person sees only their own
information state, asks for hints with ``?``, and gets the open-hand replay at the end.

The person is an agent like the others (:class:`TerminalPlayer`), handed an
:class:`~pasur.hidden.infostate.InfoState` and nothing more; what it prints comes from
:mod:`pasur.web.views`, so it cannot show the AI's hand or the undealt cards. It asks through the
prompt loop of :mod:`pasur.web.prompt`, the same as the open game's.
"""

from __future__ import annotations

import sys
from collections.abc import Callable
from typing import TextIO

from pasur.game.cards import format_cards, mask_of, parse_card
from pasur.game.rules import Action, is_sur
from pasur.game.state import FINAL_ROUND, PLAYER_NAMES
from pasur.hidden.agents import HiddenAgent
from pasur.hidden.infostate import InfoState
from pasur.web.prompt import Prompt
from pasur.web.views import describe_json, table_lines

PROMPT = "choose (number, card, or card + cards taken; ? for a hint, q to quit): "


class TerminalPlayer(HiddenAgent):
    """A person at the terminal. ``hints``: makes the agent whose estimates ``?`` shows."""

    name = "human"

    def __init__(
        self,
        hints: Callable[[], HiddenAgent],
        stdin: TextIO | None = None,
        stdout: TextIO | None = None,
        *,
        unicode: bool = True,
    ) -> None:
        self.hints = hints
        self.unicode = unicode
        self._hint_agent: HiddenAgent | None = None
        self.prompt = Prompt(stdin, stdout, unicode=unicode)

    def choose(self, info: InfoState) -> Action:
        actions = info.legal_actions()
        self.prompt.say()
        for line in table_lines(info, unicode=self.unicode):
            self.prompt.say(line)
        self.prompt.show_actions(actions)
        return self.prompt.ask(actions, PROMPT, hint=lambda: self._hint(info, actions))

    def _hint(self, info: InfoState, actions: list[Action]) -> None:
        self._hint_agent = self._hint_agent or self.hints()
        values = dict(self._hint_agent.action_values(info))
        best = max(values.values())
        self.prompt.say(f"  hint ({self._hint_agent.name}): your final margin expected after each move")
        for i, a in enumerate(actions, start=1):
            mark = "  <- best" if values[a] == best else ""
            self.prompt.say(f"  {i:2d}. {a.describe(unicode=self.unicode):<28} {values[a]:+7.2f}{mark}")


def announce(human: int | None, names: tuple[str, str], stdout: TextIO | None = None, *, unicode: bool = True):
    """An ``on_move`` callback that prints each move as the person saw it."""
    out = stdout or sys.stdout

    def on_move(info: InfoState, action: Action) -> None:
        if human is None:
            return
        who = "you" if info.mover == human else names[info.mover]
        sur = action.captured and is_sur(action, info.pool, info.round, final_round=FINAL_ROUND)
        text = f"  -> {who} ({PLAYER_NAMES[info.mover]}): {action.describe(unicode=unicode)}"
        print(text + ("  SUR!" if sur else ""), file=out, flush=True)

    return on_move


def replay_lines(replay: dict, *, unicode: bool = True) -> list[str]:
    """The replay as text: each of the person's moves beside the open-hand optimal one."""
    say = lambda move: describe_json(move, unicode=unicode)  # noqa: E731
    cards = lambda cs: format_cards(mask_of(parse_card(c) for c in cs), unicode=unicode)  # noqa: E731
    out = [
        "Replay with every card open (open-hand optimal play from each of your positions):",
        f"  the deal is worth {replay['open_value']:+g} to you with both sides playing open-hand optimally",
    ]
    for m in replay["moves"]:
        if m["by"] != "you":
            continue
        verdict = "optimal" if m["cost"] <= 0 else f"cost {m['cost']:g}: best was {say(m['best'])}"
        hands = f"you {cards(m['hands']['you'])} | AI {cards(m['hands']['ai'])}"
        out.append(f"  [{m['stage']}] {say(m['move']):<26} {verdict}   ({hands})")
    out.append(
        f"  your moves cost {replay['your_cost']:g} points in all ({replay['your_mistakes']} not optimal); "
        f"the AI's cost {replay['ai_cost']:g}"
    )
    return out
