"""The AI levels a person can play against, by name, and the agent that gives hints.

A level names an agent spec of :mod:`pasur.hidden.registry`. ``best`` is the strongest hidden-hand
agent that decides within about a second per move on one CPU core (``docs/hidden.md``); change
the mapping here, and both the page and the terminal game follow.

>>> list(LEVELS)
['random', 'greedy', 'heuristic', 'network', 'pimc', 'best']
>>> make_level("greedy").name
'greedy'
"""

from __future__ import annotations

from typing import TYPE_CHECKING

from pasur.common.errors import PasurInputError
from pasur.hidden.registry import BEST

if TYPE_CHECKING:  # the agents load numpy and torch: only when a level is made
    from pasur.hidden.agents import HiddenAgent

#: level name -> agent spec (``pasur.hidden.registry.make_agent``)
LEVELS: dict[str, str] = {
    "random": "random",
    "greedy": "greedy",
    "heuristic": "heuristic",
    "network": "policy",
    "pimc": "pimc:20",
    "best": BEST,
}
#: the level whose estimates the hint button shows (whatever the opponent's level)
HINT_LEVEL = "best"
DEFAULT_LEVEL = "best"


def check_level(name: str, levels: dict[str, str] | None = None) -> str:
    levels = LEVELS if levels is None else levels
    if name not in levels:
        raise PasurInputError(f"unknown level {name!r} (choose from {', '.join(levels)})")
    return name


def make_level(name: str, *, seed: int = 0, levels: dict[str, str] | None = None) -> HiddenAgent:
    """The agent of level ``name``; ``seed`` seeds what it samples (a random player's choices,
    PIMC's worlds)."""
    from pasur.hidden.registry import make_agent

    levels = LEVELS if levels is None else levels
    return make_agent(levels[check_level(name, levels)], seed=seed)
