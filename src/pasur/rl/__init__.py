"""Environments of the hidden-hand game for deep reinforcement learning (``pip install pasur[rl]``;
``docs/rl.md``): observations built from a player's information state only, one tensor for all of
them and for OpenSpiel (:mod:`pasur.hidden.encoding`), legal-action masks over OpenSpiel's action
ids, the final margin as the reward.

Front door (each name loaded when first named; torch on one thread unless
:func:`pasur.set_threads` says otherwise): :func:`aec_env` (PettingZoo AEC, agents ``"alex"`` and
``"bob"``), :func:`gym_env` (Gymnasium, one seat against any agent of
:func:`pasur.hidden.make_agent`), :class:`VectorEnv` (many games a call, tensors on a torch device,
returning a :class:`VectorStep`); the classes :class:`PasurAECEnv` and :class:`PasurGymEnv`.

>>> from pasur.rl import aec_env, gym_env
>>> env = aec_env(variant="micro", seed=0)
>>> env.reset()
>>> env.agent_selection, env.observe("alex")["observation"].shape
('alex', (540,))
>>> obs, info = gym_env(opponent="greedy", variant="tiny").reset(seed=1)
>>> obs.shape, info["action_mask"].shape
((540,), (12180,))
"""

from pasur import lazy_exports

#: name -> ``"module:attribute"``
EXPORTS = {
    "aec_env": "pasur.rl.aec:aec_env",
    "gym_env": "pasur.rl.single:gym_env",
    "VectorEnv": "pasur.rl.vector:VectorEnv",
    "VectorStep": "pasur.rl.vector:VectorStep",
    "PasurAECEnv": "pasur.rl.aec:PasurAECEnv",
    "PasurGymEnv": "pasur.rl.single:PasurGymEnv",
}
__all__ = list(EXPORTS)
__getattr__, __dir__ = lazy_exports(__name__, EXPORTS)
