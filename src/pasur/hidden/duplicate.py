"""Duplicate games of one pair of agents, played in lockstep so that searching agents decide many
games in one batch.

Every deck is played twice, seats swapped: in the first game agent A is Alex, in the second B is.
The luck of the deal cancels out of A's *margin per deal*, the mean of A's points minus B's over
the two games. All games are at the same (round, turn) at every step, so each agent gets the
information states of all the games where it moves at once (``choose_batch``).

>>> from pasur.game.cards import Deck
>>> from pasur.hidden.agents import GreedyAgent, RandomAgent
>>> rec = play_duplicates([Deck.from_seed(0)], GreedyAgent(), RandomAgent())[0]
>>> rec["margin"] == (rec["a_as_alex"] - rec["b_as_alex"]) / 2
True
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence

from pasur.game.cards import Deck
from pasur.game.state import TURNS_PER_ROUND
from pasur.hidden.game import HiddenGame, sees_everything

N_STEPS = 6 * TURNS_PER_ROUND


def play_duplicates(
    decks: Sequence[Deck],
    a,
    b,
    timing: dict | None = None,
    on_step: Callable[[int], None] | None = None,
    keep: bool = False,
) -> list[dict]:
    """Play each deck twice (A as Alex, then B as Alex) and return one record per deck:
    ``a_as_alex`` and ``b_as_alex`` (Alex minus Bob of each game) and A's ``margin`` per game.
    ``timing`` collects, per agent name, seconds and decisions by round; ``keep`` leaves what
    agents prepared for these decks (the open-hand player's solved trees) for another pair."""
    games = [HiddenGame(d) for d in decks for _ in (0, 1)]
    seats = [(a, b) if i % 2 == 0 else (b, a) for i in range(len(games))]
    for agent in {id(a): a, id(b): b}.values():
        if sees_everything(agent):  # the open-hand player solves the decks: counted in round 0
            t0 = time.perf_counter()
            agent.prepare(list(decks))
            if timing is not None:
                _record(timing, agent.name, 0, time.perf_counter() - t0, 0)
    for step in range(N_STEPS):
        mover = games[0].mover
        by_agent: dict[int, list[int]] = {}
        for i in range(len(games)):
            by_agent.setdefault(id(seats[i][mover]), []).append(i)
        for idxs in by_agent.values():
            agent = seats[idxs[0]][mover]
            t0 = time.perf_counter()
            if sees_everything(agent):
                actions = [agent.choose_open(games[i].state, games[i].moves) for i in idxs]
            else:
                actions = agent.choose_batch([games[i].observation(mover) for i in idxs])
            if timing is not None:
                _record(timing, agent.name, games[idxs[0]].state.round, time.perf_counter() - t0, len(idxs))
            for i, act in zip(idxs, actions, strict=True):
                games[i].apply(act)
        if on_step is not None:
            on_step(step)
    out = []
    for j in range(len(decks)):
        u1, u2 = games[2 * j].state.utility(), games[2 * j + 1].state.utility()
        out.append({"a_as_alex": u1, "b_as_alex": u2, "margin": (u1 - u2) / 2})
    for agent in {id(a): a, id(b): b}.values():
        if hasattr(agent, "forget") and not keep:
            agent.forget()
    return out


def _record(timing: dict, name: str, round_: int, seconds: float, decisions: int) -> None:
    t = timing.setdefault(name, {"seconds": [0.0] * 6, "decisions": [0] * 6})
    t["seconds"][round_] += seconds
    t["decisions"][round_] += decisions
