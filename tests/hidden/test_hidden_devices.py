"""The hidden-hand agents on an accelerator: on every device of ``helpers.accelerators()`` the
shipped policy, belief and boundary networks give the CPU's outputs, and agents built for the
device (``make_agent(..., device=)``) run there, play only legal moves in full games, and choose
what the same agent on the CPU chooses.

Without an accelerator they run on the CPU device (comparing the CPU with itself: each path still
runs through its ``device`` argument and must be deterministic); none is skipped."""

from __future__ import annotations

import random

import numpy as np
import pytest
import torch

from helpers import boundary_inputs, device_param, no_tf32, on_device
from pasur.game.cards import Deck
from pasur.hidden.belief import BeliefModel, check_consistent, informative
from pasur.hidden.boundary import BoundaryNet, ClubsBoundary, LearnedBoundary
from pasur.hidden.game import HiddenGame, play_hidden
from pasur.hidden.heuristic import HeuristicAgent
from pasur.hidden.optimal import OptimalAgent
from pasur.hidden.policy import PolicyAgent, PolicyModel
from pasur.hidden.registry import make_agent

pytestmark = device_param

# The networks are float32. A CUDA matrix product adds in another order than the CPU's (about
# 6e-8 relative rounding per addition), and a few layers of 64 to 300 inputs stay well inside
# 1e-5 relative; 1e-4 leaves margin. Margins and values are in points (tens at most), so their
# absolute floor is 1e-4 points; probabilities (at most 1) take 1e-5. Measured on an H100:
# probabilities 1e-7, values 1e-6 points, belief logits 1e-6, boundary values 3e-6 points.
RTOL = 1e-4
ATOL_POINTS = 1e-4
ATOL_PROB = 1e-5
# A search's action values are means over worlds of float32 solves whose leaves are the boundary
# network's values: 1e-3 points bounds what the network's rounding can move them.
ATOL_SEARCH = 1e-3


#: (deck seed, random moves played): positions in every round, most after the opponent has
#: moved this round (what the belief reads)
POSITIONS = [(3, 0), (4, 5), (5, 13), (6, 21), (7, 30), (8, 37), (9, 42), (10, 47), (11, 1), (12, 11), (13, 27)]


def _infos() -> list:
    """The mover's information state at each of :data:`POSITIONS`."""
    out = []
    for seed, steps in POSITIONS:
        rng = random.Random(seed)
        g = HiddenGame(Deck.from_seed(seed))
        for _ in range(steps):
            g.apply(rng.choice(g.state.legal_actions()))
        out.append(g.observation(g.mover))
    return out


# ---------------------------------------------------------------------------- the networks


@no_tf32()
def test_the_policy_network_gives_the_cpus_outputs(device):
    """The shipped policy-value network on the device: the same legal actions, probabilities,
    action values and state values for a batch of information states."""
    cpu = PolicyModel.load(device="cpu")
    dev = PolicyModel.load(device=device)
    on_device(device, *dev.net.parameters())
    infos = _infos()
    for (a0, p0, q0, v0), (a1, p1, q1, v1) in zip(cpu.evaluate(infos), dev.evaluate(infos), strict=True):
        assert a1 == a0
        np.testing.assert_allclose(p1, p0, rtol=RTOL, atol=ATOL_PROB)
        assert p1.sum() == pytest.approx(1.0, abs=1e-9)
        np.testing.assert_allclose(q1, q0, rtol=RTOL, atol=ATOL_POINTS)
        assert v1 == pytest.approx(v0, rel=RTOL, abs=ATOL_POINTS)


@no_tf32()
def test_the_belief_network_gives_the_cpus_outputs(device):
    """The shipped belief network on the device: the same logits and card marginals (returned on
    the CPU), and worlds drawn from it consistent with what the observer has seen."""
    cpu = BeliefModel.load(device="cpu")
    dev = BeliefModel.load(device=device)
    on_device(device, *dev.net.parameters())
    infos = _infos()
    assert sum(informative(i) for i in infos) >= 6
    lg0, m0, n0 = cpu.logits(infos)
    lg1, m1, n1 = dev.logits(infos)
    assert torch.equal(m1, m0) and torch.equal(n1, n0)
    assert bool((lg0 != 0).any())  # the opponent's moves moved the belief somewhere
    np.testing.assert_allclose(lg1.numpy(), lg0.numpy(), rtol=RTOL, atol=ATOL_PROB)
    np.testing.assert_allclose(dev.marginals(infos), cpu.marginals(infos), rtol=RTOL, atol=ATOL_PROB)
    for info, worlds in zip(infos, dev.worlds_batch(infos, 6, seed=1), strict=True):
        check_consistent(info, worlds)


def _boundary_inputs(n: int = 256):
    """Random boundary positions, with clubs up to 7 (clinched)."""
    return boundary_inputs(n, clubs_up_to=7)


@no_tf32()
def test_the_boundary_values_are_the_cpus(device):
    """The shipped learned boundary (one network per round) and the closed form on the device:
    the CPU's values, from inputs on the device (values there) or on the CPU (values back there)."""
    cpu = LearnedBoundary.load(device="cpu")
    dev = LearnedBoundary.load(device=device)
    on_device(device, *dev.net.parameters())
    assert isinstance(dev.net, BoundaryNet)
    x = _boundary_inputs()
    xd = tuple(t.to(device) for t in x)
    clubs = ClubsBoundary()
    for r in range(5):
        want = cpu(r, *x)
        got = dev(r, *xd)
        on_device(device, got)
        torch.testing.assert_close(got.cpu(), want, rtol=RTOL, atol=ATOL_POINTS)
        back = dev(r, *x)
        assert back.device.type == "cpu"
        torch.testing.assert_close(back, want, rtol=RTOL, atol=ATOL_POINTS)
        torch.testing.assert_close(clubs(r, *xd).cpu(), clubs(r, *x), rtol=1e-6, atol=1e-6)


# ---------------------------------------------------------------------------- agents


def _scores(agent, info) -> list:
    """What ``agent`` maximizes at ``info``, per legal action: the policy's probability, the
    search's value, or a combined agent's score (its value plus its prior)."""
    if isinstance(agent, PolicyAgent):
        return agent.policy(info)
    if hasattr(agent, "scores_batch"):
        return agent.scores_batch([info])[0]
    return agent.action_values(info)


def _placed(agent) -> list[torch.Tensor]:
    """The parameters of every network ``agent`` holds (each must be on the agent's device)."""
    nets = [getattr(agent, "model", None), getattr(agent, "policy", None), getattr(agent, "boundary", None)]
    return [p for m in nets if hasattr(m, "net") for p in m.net.parameters()]


#: the agents with networks or tensor searches (``best``'s kind: IS-PIMC with the policy's prior)
SPECS = {"policy": ATOL_PROB, "pimc:4": ATOL_SEARCH, "ispimc:4:infer:pl0.5": ATOL_SEARCH, "pimc:3:belief": ATOL_SEARCH}


@pytest.mark.parametrize("spec", SPECS)
@no_tf32()
def test_agents_on_the_device_play_legal_games_and_the_cpus_choices(device, spec):
    """Two full games against the heuristic player (one from each seat): every move of the agent
    built for the device is legal, its scores at each of its decisions are the CPU agent's, and
    it chooses what the CPU agent chooses (or, where two actions' scores are within the
    tolerance of each other on the CPU, one of those)."""
    tol = SPECS[spec]
    dev = make_agent(spec, seed=1, device=device)
    cpu = make_agent(spec, seed=1, device="cpu")
    assert type(dev) is type(cpu) and dev.name == cpu.name
    placed = _placed(dev)
    assert placed
    on_device(device, *placed)
    decisions = 0
    for seat in (0, 1):

        def check(info, action, seat=seat):
            nonlocal decisions
            if info.player != seat:
                return
            legal = info.legal_actions()
            assert action in legal
            want = _scores(cpu, info)
            got = _scores(dev, info)
            assert [a for a, _ in got] == [a for a, _ in want] == legal
            np.testing.assert_allclose([s for _, s in got], [s for _, s in want], rtol=RTOL, atol=tol)
            best = max(s for _, s in want)
            assert dict(want)[action] >= best - 2 * tol, (action, want)
            decisions += len(legal) > 1

        seats = (dev, HeuristicAgent()) if seat == 0 else (HeuristicAgent(), dev)
        result = play_hidden(Deck.from_seed(12 + seat), seats, on_move=check)
        assert result.state.is_terminal and len(result.moves) == 48
    assert decisions >= 20  # the checks ran on real choices


def test_the_belief_agent_runs_its_belief_network_on_the_device(device):
    """``:belief`` agents built for a device evaluate their belief network there too (they loaded
    it on the CPU whatever their device until 2026-11-27)."""
    agent = make_agent("pimc:3:belief", seed=1, device=device)
    on_device(device, *agent.belief.net.parameters())


@pytest.mark.parametrize("seed", [11, 12])
def test_the_open_hand_optimal_player_plays_the_cpus_game(device, seed):
    """The open-hand optimal player solves the whole game exactly on the device (the compact tree
    built and solved there): integer values, so the very same game as on the CPU."""
    dev = OptimalAgent(device)
    cpu = OptimalAgent("cpu")
    deck = Deck.from_seed(seed)
    got = play_hidden(deck, (dev, dev))
    want = play_hidden(deck, (cpu, cpu))
    assert got.moves == want.moves and got.utility == want.utility
    tree, sol = dev._solution(deck)
    parent, child, gt_edge = tree.round(0).edges(0)
    on_device(device, parent, child, gt_edge, sol.best_edge[(0, 0)])
