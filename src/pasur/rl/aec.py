"""The hidden-hand game as a PettingZoo AEC environment (agents ``"alex"`` and ``"bob"``), in the
form of PettingZoo's classic card games: each observation is a dict of ``"observation"`` (the
information state's tensor, :mod:`pasur.hidden.encoding`) and ``"action_mask"`` (int8, one per
action id); rewards come at the end of the game: the final margin, Alex's points minus Bob's for
``"alex"`` and its opposite for ``"bob"`` (zero-sum). An illegal action ends the game:
``illegal_reward`` to the player who made it, its opposite to the other.

>>> env = PasurAECEnv("micro", seed=0)
>>> env.reset()
>>> while env.agents:
...     obs, reward, terminated, truncated, info = env.last()
...     action = None if terminated else int(obs["action_mask"].nonzero()[0][0])
...     env.step(action)
>>> sorted(env.rewards)   # every agent has left the game
[]
"""

from __future__ import annotations

from typing import ClassVar

import numpy as np
from gymnasium import spaces
from pettingzoo import AECEnv

from pasur.game.variants import Variant
from pasur.hidden.encoding import N_ACTIONS, OBS_SIZE
from pasur.rl.table import AGENTS, ILLEGAL_REWARD, Table


def observation_space() -> spaces.Dict:
    """A seat's observation: the information state's tensor and the legal-action mask."""
    return spaces.Dict(
        {
            "observation": spaces.Box(0.0, 1.0, (OBS_SIZE,), np.float32),
            "action_mask": spaces.Box(0, 1, (N_ACTIONS,), np.int8),
        }
    )


class PasurAECEnv(AECEnv):
    """Two seats take turns; ``seed`` seeds the deals when :meth:`reset` is given none."""

    metadata: ClassVar[dict] = {"name": "pasur_v0", "render_modes": ["ansi"], "is_parallelizable": False}

    def __init__(
        self,
        variant: str | Variant = "standard",
        seed: int | None = None,
        *,
        illegal_reward: float = ILLEGAL_REWARD,
        render_mode: str | None = None,
    ) -> None:
        super().__init__()
        if render_mode not in (None, "ansi"):
            raise ValueError(f"render_mode {render_mode!r}: only 'ansi'")
        self.table = Table(variant)
        self.variant = self.table.variant
        self.illegal_reward = float(illegal_reward)
        self.render_mode = render_mode
        self.possible_agents = list(AGENTS)
        self.observation_spaces = {a: observation_space() for a in AGENTS}
        self.action_spaces = {a: spaces.Discrete(N_ACTIONS) for a in AGENTS}
        self._rng = np.random.default_rng(seed)

    def observation_space(self, agent: str) -> spaces.Dict:
        return self.observation_spaces[agent]

    def action_space(self, agent: str) -> spaces.Discrete:
        return self.action_spaces[agent]

    def reset(self, seed: int | None = None, options: dict | None = None) -> None:
        if seed is not None:
            self._rng = np.random.default_rng(seed)
        self.table.deal(self._rng)
        self.agents = list(AGENTS)
        self.rewards = {a: 0.0 for a in AGENTS}
        self._cumulative_rewards = {a: 0.0 for a in AGENTS}
        self.terminations = {a: False for a in AGENTS}
        self.truncations = {a: False for a in AGENTS}
        self.infos = {a: {} for a in AGENTS}
        self.agent_selection = AGENTS[self.table.mover]

    def observe(self, agent: str) -> dict[str, np.ndarray]:
        return self.table.observe(AGENTS.index(agent))

    def step(self, action) -> None:
        agent = self.agent_selection
        if self.terminations[agent] or self.truncations[agent]:
            self._was_dead_step(action)
            return
        self._cumulative_rewards[agent] = 0.0
        seat = AGENTS.index(agent)
        if not self.table.play(int(action)):
            self._end({agent: self.illegal_reward, AGENTS[1 - seat]: -self.illegal_reward}, illegal=agent)
        elif self.table.is_terminal:
            u = float(self.table.utility())
            self._end({"alex": u, "bob": -u})
        else:
            self.rewards = {a: 0.0 for a in AGENTS}
            self.agent_selection = AGENTS[self.table.mover]
        self._accumulate_rewards()

    def _end(self, rewards: dict[str, float], illegal: str | None = None) -> None:
        self.rewards = rewards
        self.terminations = {a: True for a in AGENTS}
        if illegal is not None:
            self.infos = {a: {"illegal_action": a == illegal} for a in AGENTS}

    def render(self) -> str | None:
        if self.render_mode == "ansi":
            return self.table.render()
        return None

    def close(self) -> None:
        pass


def aec_env(variant: str | Variant = "standard", seed: int | None = None, **kwargs) -> PasurAECEnv:
    """The PettingZoo AEC environment of the game of ``variant`` (a row of
    :data:`pasur.game.variants.VARIANTS`), agents ``"alex"`` and ``"bob"``; ``seed`` seeds the deals
    when ``reset`` gets none; ``kwargs``: ``illegal_reward``, ``render_mode="ansi"``."""
    return PasurAECEnv(variant, seed, **kwargs)
