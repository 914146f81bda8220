"""Many hidden-hand games stepped at once, for self-play training (the pgx form): every call takes
one action id per game (the action of that game's player to move) and returns, as tensors on
``device``, the observation of each game's player to move, its legal-action mask, who that is, the
rewards of both players and which games just ended.

What is batched, and what is not: the rules run game by game in the scalar engine (a Python loop
over the games; a tensor step of the hidden-hand game does not exist yet), and each game's
information state gives its 10 card sets and 20 numbers. Turning those into the observation
tensor (the 52 bits of every card set at once, on ``device``) and the legal masks (one scatter)
is one batched operation per step, as is moving the actions off the device.

>>> import torch
>>> env = VectorEnv(4, variant="micro", seed=0, autoreset=False)
>>> step = env.reset()
>>> step.observation.shape, step.action_mask.shape, step.action_mask.sum(1).min().item() > 0
(torch.Size([4, 540]), torch.Size([4, 12180]), True)
>>> while not env.all_over:
...     step = env.step(step.action_mask.int().argmax(1))
>>> [float(r[0]) == t.utility() for r, t in zip(env.returns, env.tables)]
[True, True, True, True]
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import torch

from pasur.game.variants import Variant
from pasur.hidden.encoding import N_ACTIONS, N_PLANES, N_SCALARS, OBS_SIZE, action_id, plane_masks, scalars
from pasur.rl.table import Table


@dataclass(frozen=True)
class VectorStep:
    """What one step (or reset) returns, a row per game, on the env's device: ``observation``
    float32 ``[n, 540]`` and ``action_mask`` bool ``[n, 12180]`` of the player to move
    (``player`` int64 ``[n]``, 0 Alex, 1 Bob); ``reward`` float32 ``[n, 2]`` (the final margin of
    Alex and of Bob in a game that ended at this step, else 0); ``terminated`` bool ``[n]``
    (ended at this step; with ``autoreset`` its row already shows the next game's first move)."""

    observation: torch.Tensor
    action_mask: torch.Tensor
    player: torch.Tensor
    reward: torch.Tensor
    terminated: torch.Tensor


class VectorEnv:
    """``n_games`` games of ``variant``; game ``i``'s deals come from seed ``(seed, i)``. With
    ``autoreset`` a finished game is dealt again at once; without it, a finished game stays over
    (its row's mask is all False and its action is ignored) until :meth:`reset`."""

    def __init__(
        self,
        n_games: int,
        device: str | torch.device = "cpu",
        *,
        variant: str | Variant = "standard",
        seed: int = 0,
        autoreset: bool = True,
    ) -> None:
        if n_games < 1:
            raise ValueError(f"n_games must be at least 1, got {n_games}")
        self.n_games, self.device, self.autoreset = n_games, torch.device(device), autoreset
        self.tables = [Table(variant) for _ in range(n_games)]
        self.variant = self.tables[0].variant
        self._rngs = [np.random.default_rng((seed, i)) for i in range(n_games)]
        self._shifts = torch.arange(52, device=self.device, dtype=torch.int64)
        self.returns = torch.zeros(n_games, 2)  # the last finished game's margins, per row
        self.games_finished = 0
        self._legal: list[dict] = [{} for _ in range(n_games)]  # per game: legal id -> action, as last observed

    @property
    def all_over(self) -> bool:
        return all(t.is_terminal for t in self.tables)

    def reset(self, seed: int | None = None) -> VectorStep:
        if seed is not None:
            self._rngs = [np.random.default_rng((seed, i)) for i in range(self.n_games)]
        for t, rng in zip(self.tables, self._rngs, strict=True):
            t.deal(rng)
        zeros = torch.zeros(self.n_games, dtype=torch.bool)
        return self._batch(torch.zeros(self.n_games, 2), zeros)

    def step(self, actions: torch.Tensor | list[int]) -> VectorStep:
        """Play ``actions[i]`` in game ``i`` (an action id of its player to move); an illegal one
        is refused (``ValueError`` naming the game) before any game moves."""
        ids = actions.tolist() if isinstance(actions, torch.Tensor) else list(actions)
        live = [i for i, t in enumerate(self.tables) if not t.is_terminal]
        moves = {i: self._legal_move(i, int(ids[i])) for i in live}
        reward = torch.zeros(self.n_games, 2)
        ended = torch.zeros(self.n_games, dtype=torch.bool)
        for i, action in moves.items():
            t = self.tables[i]
            t.game.apply(action)
            if t.is_terminal:
                u = float(t.utility())
                reward[i] = torch.tensor([u, -u])
                self.returns[i], ended[i] = reward[i], True
                self.games_finished += 1
                if self.autoreset:
                    t.deal(self._rngs[i])
        return self._batch(reward, ended)

    def _legal_move(self, i: int, aid: int):
        """Game ``i``'s action of id ``aid``, from the legal actions its last observation listed."""
        action = self._legal[i].get(aid)
        if action is None:
            raise ValueError(f"game {i}: action id {aid} is not legal at {self.tables[i].game.state.stage}")
        return action

    def _batch(self, reward: torch.Tensor, ended: torch.Tensor) -> VectorStep:
        """Each game's information state of its player to move, as tensors on the device."""
        n = self.n_games
        masks = np.zeros((n, N_PLANES), np.int64)
        numbers = np.zeros((n, N_SCALARS), np.float32)
        players = np.zeros(n, np.int64)
        rows, cols = [], []
        for i, t in enumerate(self.tables):
            if t.is_terminal:
                continue
            info = t.info(t.mover)
            masks[i], numbers[i], players[i] = plane_masks(info), scalars(info), info.player
            self._legal[i] = {action_id(a): a for a in info.legal_actions()}
            rows += [i] * len(self._legal[i])
            cols += self._legal[i]
        bits = (torch.from_numpy(masks).to(self.device).unsqueeze(-1) >> self._shifts) & 1
        obs = torch.cat([bits.reshape(n, -1).float(), torch.from_numpy(numbers).to(self.device)], dim=1)
        legal = torch.zeros(n, N_ACTIONS, dtype=torch.bool, device=self.device)
        index = torch.tensor([rows, cols], dtype=torch.int64, device=self.device)
        legal[index[0], index[1]] = True
        assert obs.shape[1] == OBS_SIZE
        return VectorStep(
            obs, legal, torch.from_numpy(players).to(self.device), reward.to(self.device), ended.to(self.device)
        )
