"""The hidden-hand game as a Gymnasium environment for one learner: it plays seat ``seat`` (0 Alex,
1 Bob) and the opponent is any agent of :func:`pasur.hidden.registry.make_agent` (a spec such as
``"greedy"`` or ``"pimc:20"``, or an agent object), which moves from its own information state.

The observation is the learner's information-state tensor (a ``Box`` of :data:`OBS_SIZE` floats in
[0, 1], :mod:`pasur.hidden.encoding`); the legal actions are ``info["action_mask"]`` (int8, one per
action id) and :meth:`PasurGymEnv.action_masks` (bool, the form of sb3-contrib's ``MaskablePPO``). The
reward is 0 until the game ends, then the learner's final margin (its points minus the
opponent's). An illegal action ends the game with ``illegal_reward``.

>>> env = PasurGymEnv(opponent="random", seat=1, variant="micro")
>>> obs, info = env.reset(seed=0)
>>> done = False
>>> while not done:
...     obs, reward, done, truncated, info = env.step(int(info["action_mask"].nonzero()[0][0]))
>>> reward == env.table.utility() * -1   # Bob's margin
True
"""

from __future__ import annotations

from typing import ClassVar

import gymnasium
import numpy as np
from gymnasium import spaces

from pasur.game.variants import Variant
from pasur.hidden.encoding import N_ACTIONS, OBS_SIZE
from pasur.rl.table import ILLEGAL_REWARD, Table


class PasurGymEnv(gymnasium.Env):
    """One seat against a fixed opponent; ``seed`` seeds the deals when :meth:`reset` is given none."""

    metadata: ClassVar[dict] = {"render_modes": ["ansi"]}

    def __init__(
        self,
        opponent="greedy",
        seat: int = 0,
        variant: str | Variant = "standard",
        seed: int | None = None,
        *,
        opponent_seed: int = 0,
        illegal_reward: float = ILLEGAL_REWARD,
        device: str = "cpu",
        render_mode: str | None = None,
    ) -> None:
        from pasur.hidden.registry import make_agent

        if seat not in (0, 1):
            raise ValueError(f"seat must be 0 (Alex) or 1 (Bob), got {seat!r}")
        if render_mode not in (None, "ansi"):
            raise ValueError(f"render_mode {render_mode!r}: only 'ansi'")
        self.opponent = (
            make_agent(opponent, seed=opponent_seed, device=device) if isinstance(opponent, str) else opponent
        )
        self.seat = seat
        self.table = Table(variant)
        self.variant = self.table.variant
        self.illegal_reward = float(illegal_reward)
        self.render_mode = render_mode
        self.observation_space = spaces.Box(0.0, 1.0, (OBS_SIZE,), np.float32)
        self.action_space = spaces.Discrete(N_ACTIONS)
        self._first_seed = seed

    def reset(self, *, seed: int | None = None, options: dict | None = None):
        if seed is None and self._np_random is None:
            seed = self._first_seed
        super().reset(seed=seed)
        self.table.deal(self.np_random)
        self._opponent_moves()
        return self._observe()

    def step(self, action):
        if not self.table.play(int(action)):
            obs, info = self._observe()
            return obs, self.illegal_reward, True, False, {**info, "illegal_action": True}
        self._opponent_moves()
        obs, info = self._observe()
        if not self.table.is_terminal:
            return obs, 0.0, False, False, info
        u = float(self.table.utility())
        return obs, (u if self.seat == 0 else -u), True, False, info

    def _opponent_moves(self) -> None:
        t = self.table
        while not t.is_terminal and t.mover != self.seat:
            t.play_agent(self.opponent)

    def _observe(self) -> tuple[np.ndarray, dict]:
        obs = self.table.observe(self.seat)
        return obs["observation"], {"action_mask": obs["action_mask"]}

    def action_masks(self) -> np.ndarray:
        """The legal actions now, as bools (sb3-contrib's ``MaskablePPO`` reads this method)."""
        return self.table.observe(self.seat)["action_mask"].astype(bool)

    def render(self) -> str | None:
        return self.table.render() if self.render_mode == "ansi" else None


def gym_env(
    opponent="greedy", seat: int = 0, variant: str | Variant = "standard", seed: int | None = None, **kwargs
) -> PasurGymEnv:
    """The Gymnasium environment of seat ``seat`` (0 Alex, 1 Bob) against ``opponent`` (an agent spec
    of :func:`pasur.hidden.registry.make_agent`, or an agent); ``kwargs``: ``opponent_seed``,
    ``illegal_reward``, ``device`` (the opponent's), ``render_mode="ansi"``."""
    return PasurGymEnv(opponent, seat, variant, seed, **kwargs)
