"""The OpenSpiel game ``python_pasur`` for deep methods: registered by importing
``pasur.hidden.openspiel``, its information-state and observation tensors are the RL environments'
observation, and OpenSpiel's own policy-gradient agents (PyTorch) train a few episodes on it."""

from __future__ import annotations

import subprocess
import sys

import numpy as np
import pytest

from pasur.hidden.encoding import OBS_SIZE, encode
from pasur.rl.table import Table


def test_importing_the_module_registers_the_game():
    code = (
        "import pyspiel, pasur.hidden.openspiel\n"
        "g = pyspiel.load_game('python_pasur')\n"
        "m = pyspiel.load_game('python_pasur', {'variant': 'mini'})\n"
        "print(g.information_state_tensor_shape(), g.observation_tensor_shape(), m.get_parameters()['variant'])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.split() == [f"[{OBS_SIZE}]", f"[{OBS_SIZE}]", "mini"]


def test_without_openspiel_the_environments_work_and_the_module_still_imports():
    """The RL extra does not need OpenSpiel: with ``pyspiel`` and ``open_spiel`` unimportable, the
    environments play and ``pasur.hidden.openspiel`` imports (registering nothing), while an
    OpenSpiel agent is refused in one line."""
    code = (
        "import sys\n"
        "sys.modules['pyspiel'] = sys.modules['open_spiel'] = None\n"
        "from pasur import rl\n"
        "env = rl.aec_env(variant='micro', seed=0)\n"
        "env.reset()\n"
        "import pasur.hidden.openspiel\n"
        "from pasur.hidden.registry import make_agent\n"
        "try:\n"
        "    make_agent('ismcts:5')\n"
        "except Exception as e:\n"
        "    print(type(e).__name__, str(e).splitlines()[0][:26])\n"
    )
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, timeout=120, check=True)
    assert out.stdout.strip() == "PasurInputError OpenSpiel is not installed"


@pytest.mark.parametrize("variant", ["standard", "mini"])
def test_the_tensors_are_the_rl_observation_of_the_same_information_state(variant):
    """A random OpenSpiel game: at every decision both players' information-state and observation
    tensors are non-empty and equal what the RL environment shows that player after the same
    deal and moves."""
    from pasur.hidden import openspiel as ops

    rng = np.random.default_rng(0)
    state = ops.load_game(variant).new_initial_state()
    tensors = []
    while not state.is_terminal():
        if state.is_chance_node():
            cards, probs = zip(*state.chance_outcomes(), strict=True)
            state.apply_action(int(rng.choice(cards, p=probs)))
            continue
        tensors.append([np.array(state.information_state_tensor(p)) for p in (0, 1)])
        assert all(np.array_equal(t, np.array(state.observation_tensor(p))) for p, t in enumerate(tensors[-1]))
        state.apply_action(int(rng.choice(state.legal_actions())))
    table = Table(variant)
    table.deck = state.gs.deck
    from pasur.hidden.game import HiddenGame

    table.game = HiddenGame(table.deck)
    for k, mv in enumerate(state.moves):
        for p in (0, 1):
            assert tensors[k][p].any()
            assert np.array_equal(tensors[k][p], table.observe(p)["observation"])
            assert np.array_equal(tensors[k][p], encode(table.info(p)))
        table.game.apply(mv.action)


def test_openspiel_policy_gradient_trains_on_the_game():
    """OpenSpiel's PyTorch policy-gradient agents (advantage actor-critic), a few episodes of
    self-play on ``micro`` through OpenSpiel's ``rl_environment``, which feeds them the
    information-state tensor: they act legally and both networks take gradient steps."""
    import torch
    from open_spiel.python import rl_environment
    from open_spiel.python.pytorch import policy_gradient

    import pasur.hidden.openspiel  # noqa: F401  (registers python_pasur)

    torch.manual_seed(0)
    env = rl_environment.Environment("python_pasur", variant="micro")
    env.seed(0)
    size, n_actions = env.observation_spec()["info_state"][0], env.action_spec()["num_actions"]
    assert size == OBS_SIZE
    agents = [
        policy_gradient.PolicyGradient(
            p, size, n_actions, loss_str="a2c", hidden_layers_sizes=[16], batch_size=4, num_critic_before_pi=1
        )
        for p in (0, 1)
    ]
    before = [p.detach().clone() for p in agents[0]._net_torso.parameters()]
    for _ in range(12):
        step = env.reset()
        while not step.last():
            player = step.observations["current_player"]
            out = agents[player].step(step)
            assert out.action in step.observations["legal_actions"][player]
            step = env.step([out.action])
        for agent in agents:
            agent.step(step)
    for agent in agents:  # (critic, policy) losses of the last update
        assert all(loss is not None and torch.isfinite(loss).all() for loss in agent.loss)
    after = list(agents[0]._net_torso.parameters())
    assert any(not torch.equal(b, a) for b, a in zip(before, after, strict=True))
