"""A user's own agent for ``--agents papercut_agent:FirstLegal`` (tests/test_papercuts.py)."""

from __future__ import annotations

from pasur.hidden.agents import HiddenAgent


class FirstLegal(HiddenAgent):
    """Plays the first legal action; counts its decisions (so a test sees it was the one playing)."""

    decisions = 0

    def __init__(self, seed: int = 0) -> None:
        self.seed = seed

    def action_values(self, info):
        return [(a, 0.0) for a in info.legal_actions()]

    def choose(self, info):
        FirstLegal.decisions += 1
        return info.legal_actions()[0]


class NoChoose:
    """Not an agent: no ``choose``."""
