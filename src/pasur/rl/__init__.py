"""Environments of the hidden-hand game for deep reinforcement learning (``pip install pasur[rl]``):
a PettingZoo AEC environment of both seats, a Gymnasium environment of one seat against any agent
of :func:`pasur.hidden.registry.make_agent`, and :class:`VectorEnv`, many games stepped at once on a
torch device. Observations are built from a player's information state only, one tensor for all of
them and for OpenSpiel (:mod:`pasur.hidden.encoding`); ``docs/rl.md`` describes them.

>>> env = aec_env(variant="micro", seed=0)
>>> env.reset()
>>> env.agent_selection, env.observe("alex")["observation"].shape
('alex', (540,))
>>> obs, info = gym_env(opponent="greedy", variant="tiny").reset(seed=1)
>>> obs.shape, info["action_mask"].shape
((540,), (12180,))
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    from pasur.rl.aec import PasurAECEnv
    from pasur.rl.single import PasurGymEnv
    from pasur.rl.vector import VectorEnv, VectorStep

__all__ = ["PasurAECEnv", "PasurGymEnv", "VectorEnv", "VectorStep", "aec_env", "gym_env"]


def aec_env(variant: str = "standard", seed: int | None = None, **kwargs) -> PasurAECEnv:
    """The PettingZoo AEC environment of the game of ``variant`` (a row of
    :data:`pasur.game.variants.VARIANTS`), agents ``"alex"`` and ``"bob"``; ``seed`` seeds the deals
    when ``reset`` gets none; ``kwargs``: ``illegal_reward``, ``render_mode="ansi"``."""
    from pasur.rl.aec import PasurAECEnv

    return PasurAECEnv(variant, seed, **kwargs)


def gym_env(
    opponent="greedy", seat: int = 0, variant: str = "standard", seed: int | None = None, **kwargs
) -> PasurGymEnv:
    """The Gymnasium environment of seat ``seat`` (0 Alex, 1 Bob) against ``opponent`` (an agent spec
    of :func:`pasur.hidden.registry.make_agent`, or an agent); ``kwargs``: ``opponent_seed``,
    ``illegal_reward``, ``device`` (the opponent's), ``render_mode="ansi"``."""
    from pasur.rl.single import PasurGymEnv

    return PasurGymEnv(opponent, seat, variant, seed, **kwargs)


def __getattr__(name: str):
    """The classes, imported when first named (gymnasium, pettingzoo and torch load only then)."""
    modules = {"PasurAECEnv": "aec", "PasurGymEnv": "single", "VectorEnv": "vector", "VectorStep": "vector"}
    if name not in modules:
        raise AttributeError(f"module 'pasur.rl' has no attribute {name!r}")
    import importlib

    return getattr(importlib.import_module(f"pasur.rl.{modules[name]}"), name)
