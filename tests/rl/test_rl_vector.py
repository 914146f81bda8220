"""``pasur.rl.VectorEnv``: many games stepped at once give, row by row, the scalar environment's
observation and legal mask, and every game replays in the scalar engine to its reward."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from helpers import device_param, on_device
from pasur.game.state import GameState
from pasur.hidden.encoding import action_id, encode, legal_mask
from pasur.rl import VectorEnv


def _random_legal(mask: torch.Tensor, gen: torch.Generator) -> torch.Tensor:
    """One uniformly random legal id per row (0 where a row has none)."""
    noise = torch.rand(mask.shape, generator=gen, device=mask.device)
    return torch.where(mask, noise, -1.0).argmax(1)


@pytest.mark.parametrize("variant", ["standard", "mini", "duo"])
def test_every_row_is_the_scalar_observation_and_every_game_replays(variant):
    env = VectorEnv(6, variant=variant, seed=2, autoreset=False)
    step, gen = env.reset(), torch.Generator().manual_seed(0)
    while not env.all_over:
        for i, t in enumerate(env.tables):
            if t.is_terminal:
                assert not step.action_mask[i].any()
                continue
            info = t.info(t.mover)
            assert int(step.player[i]) == t.mover
            assert torch.equal(step.observation[i], torch.from_numpy(encode(info)))
            assert torch.equal(step.action_mask[i], torch.from_numpy(legal_mask(info)).bool())
        step = env.step(_random_legal(step.action_mask, gen))
        for i in step.terminated.nonzero().flatten().tolist():
            u = env.tables[i].utility()
            assert step.reward[i].tolist() == [u, -u]
    for i, t in enumerate(env.tables):  # replay each game's deck and moves in the scalar engine
        s = GameState.initial(t.deck)
        for mv in t.game.moves:
            s = s.apply(mv.action)
        assert s.is_terminal and env.returns[i].tolist() == [s.utility(), -s.utility()]
    assert env.games_finished == 6


def test_autoreset_deals_again_and_seeds_reproduce():
    def run(seed):
        env = VectorEnv(3, variant="tiny", seed=seed)
        step, gen, ends = env.reset(), torch.Generator().manual_seed(1), []
        for _ in range(20):  # a tiny game is 8 moves: every row ends and starts again
            step = env.step(_random_legal(step.action_mask, gen))
            ends.append(step.reward.clone())
            assert step.action_mask.any(1).all()  # the new game's first mover can play
        return env, torch.stack(ends)

    env, rewards = run(5)
    assert env.games_finished >= 6
    assert torch.equal(rewards, run(5)[1])
    assert [t.deck for t in env.tables] != [t.deck for t in run(6)[0].tables]


def test_an_illegal_action_is_refused_before_any_game_moves():
    env = VectorEnv(2, variant="micro", seed=0, autoreset=False)
    step = env.reset()
    legal = step.action_mask.int().argmax(1)
    illegal = int((~step.action_mask[1]).nonzero()[0])
    with pytest.raises(ValueError, match="game 1"):
        env.step(torch.tensor([int(legal[0]), illegal]))
    assert all(len(t.game.moves) == 0 for t in env.tables)
    assert action_id(env.tables[0].game.state.legal_actions()[0]) == int(legal[0])


@device_param
def test_on_each_device_the_same_games_and_tensors_there(device):
    """The same seeds and actions on ``device`` as on the CPU: equal tensors, living on the device
    (where torch sees no GPU this compares the CPU with itself, through the ``device`` argument)."""
    envs = [VectorEnv(4, device=d, variant="tiny", seed=9) for d in ("cpu", device)]
    steps = [e.reset() for e in envs]
    gen = torch.Generator().manual_seed(3)
    for _ in range(12):
        on_device(device, steps[1].observation, steps[1].action_mask, steps[1].reward, steps[1].player)
        for name in ("observation", "action_mask", "player", "reward", "terminated"):
            assert torch.equal(getattr(steps[0], name), getattr(steps[1], name).cpu())
        actions = _random_legal(steps[0].action_mask, gen)
        steps = [e.step(actions.to(e.device)) for e in envs]
    assert steps[1].observation.dtype == torch.float32 and np.isclose(float(steps[1].observation.max()), 1.0)
