"""The learned belief over the opponent's hand (issue 27, part 1): its input holds nothing hidden,
its worlds are consistent, its distribution over hands is exact, and training lowers held-out loss."""

from __future__ import annotations

import itertools
import json
import math
import random

import numpy as np
import pytest
import torch

from pasur.common.errors import PasurInputError
from pasur.game.cards import Deck, cards_of
from pasur.game.state import GameState
from pasur.hidden.belief import (
    DEFAULT_WEIGHTS,
    BeliefModel,
    BeliefNet,
    check_consistent,
    features,
    log_esp,
    marginals,
    sample_hands,
)
from pasur.hidden.belief_eval import soft_greedy, uniform
from pasur.hidden.belief_train import informative, mean_nll, play_games, samples, train
from pasur.hidden.game import HiddenGame, play_hidden
from pasur.hidden.inference import opponent_weights
from pasur.hidden.weights import card_path, sha256
from pasur.hidden.worlds import every_hand, sample_worlds, world_deck, world_state


def _game(seed: int, steps: int) -> HiddenGame:
    rng = random.Random(seed)
    g = HiddenGame(Deck.from_seed(seed))
    for _ in range(steps):
        g.apply(rng.choice(g.state.legal_actions()))
    return g


def _sharp_model(seed: int = 0) -> BeliefModel:
    """A random network with large weights: far from uniform, so sampling is really tested."""
    torch.manual_seed(seed)
    net = BeliefNet(16)
    with torch.no_grad():
        for p in net.parameters():
            p.mul_(4)
    return BeliefModel(net)


POSITIONS = [(s, st) for s in range(1, 13) for st in (0, 3, 9, 14, 22, 27, 33, 38, 44)]


@pytest.mark.parametrize("seed,steps", POSITIONS)
def test_belief_worlds_replay_every_move(seed, steps):
    """Each world drawn from the belief, as a deck, replays the real moves (every move legal where
    it was played) to the observer's exact position, with the opponent's hand of the right size."""
    g = _game(seed, steps)
    model = _sharp_model(seed)
    for p in (0, 1):
        info = g.observation(p)
        w = model.sample_worlds(info, 12, seed=seed)
        check_consistent(info, w)
        for k in range(w.k):
            ws = world_state(info, w, k)
            s = GameState.initial(ws.deck)
            for m in g.moves:
                s = s.apply(m.action)  # raises on a move illegal in that world
            assert s == ws and s.hands[p] == info.hand
            assert s.hands[1 - p].bit_count() == info.opponent_hand_size
            assert (s.hands[1 - p] | s.undealt()) == info.unseen


def test_a_world_that_breaks_the_rules_is_caught():
    """check_consistent can fail: a hand holding a seen card, or one card short."""
    g = _game(2, 9)
    info = g.observation(0)
    w = sample_worlds(info, 3, seed=0)
    bad = w.opp_hand.copy()
    bad[0] = (int(bad[0]) & (int(bad[0]) - 1)) | (info.hand & -info.hand)  # a card of the observer's hand
    with pytest.raises(AssertionError):
        check_consistent(info, type(w)(bad, w.undealt, w.weight))
    short = w.opp_hand.copy()
    short[1] = int(short[1]) & (int(short[1]) - 1)
    with pytest.raises(AssertionError):
        check_consistent(info, type(w)(short, w.undealt, w.weight))


@pytest.mark.parametrize("seed,steps", [(3, 5), (4, 13), (5, 21), (6, 30), (7, 37)])
def test_the_input_holds_no_hidden_card(seed, steps):
    """Two full games the observer cannot tell apart (another opponent hand and other undealt
    cards, the same moves) give the same input; the true hands differ."""
    g = _game(seed, steps)
    for p in (0, 1):
        info = g.observation(p)
        w = sample_worlds(info, 6, seed=seed)
        hands = set()
        for k in range(w.k):
            deck = world_deck(info, int(w.opp_hand[k]), [int(c) for c in w.undealt[k]])
            other = HiddenGame(deck)
            for m in g.moves:
                other.apply(m.action)
            twin = other.observation(p)
            hands.add(other.state.hands[1 - p])
            for a, b in zip(features(twin), features(info), strict=True):
                assert np.array_equal(a, b)
        assert len(hands) > 1 or info.opponent_hand_size == 0 or info.unseen.bit_count() == info.opponent_hand_size


def test_log_esp_and_marginals_against_enumeration():
    rng = np.random.default_rng(0)
    logw = torch.tensor(rng.normal(size=(3, 9)) * 2)
    mask = torch.tensor(rng.random((3, 9)) < 0.8)
    mask[:, :4] = True
    n = torch.tensor([1, 2, 3])
    got = log_esp(logw, mask, n)
    marg = marginals(logw, mask, n)
    for b in range(3):
        idx = [i for i in range(9) if mask[b, i]]
        hands = list(itertools.combinations(idx, int(n[b])))
        ws = np.array([math.exp(float(logw[b, list(h)].sum())) for h in hands])
        assert math.isclose(float(got[b]), math.log(ws.sum()), rel_tol=1e-9)
        want = np.zeros(9)
        for h, w in zip(hands, ws, strict=True):
            want[list(h)] += w / ws.sum()
        assert np.allclose(marg[b].numpy(), want, atol=1e-9)


def test_sampled_hands_follow_the_distribution():
    """Exact sampling: over 200,000 draws each card's frequency is its marginal (±5 sd)."""
    logw = np.random.default_rng(1).normal(size=12) * 1.5
    draws = sample_hands(logw, 3, 200_000, np.random.default_rng(2))
    assert all(len(set(h)) == 3 for h in draws[:1000].tolist())
    freq = np.bincount(draws.ravel(), minlength=12) / len(draws)
    want = marginals(torch.tensor(logw)[None], torch.ones(1, 12, dtype=torch.bool), torch.tensor([3]))[0].numpy()
    sd = np.sqrt(want * (1 - want) / len(draws))
    assert np.all(np.abs(freq - want) < 5 * sd + 1e-6)


@pytest.mark.parametrize("seed,steps", [(1, 2), (2, 11), (3, 21), (4, 36), (5, 43)])
def test_probabilities_sum_to_the_opponent_hand_size(seed, steps):
    g = _game(seed, steps)
    model = _sharp_model(seed)
    infos = [g.observation(0), g.observation(1)]
    for info, m in zip(infos, model.marginals(infos), strict=True):
        assert math.isclose(m.sum(), info.opponent_hand_size, abs_tol=1e-6)
        assert np.all(m >= -1e-12) and np.all(m <= 1 + 1e-9)
        seen = [c for c in range(52) if not info.unseen >> c & 1]
        assert np.all(m[seen] == 0)


def test_exhaustive_worlds_are_weighted_by_the_belief():
    g = _game(6, 37)
    info = g.observation(0)
    model = _sharp_model(6)
    w = model.sample_worlds(info, 20, seed=0, exhaustive=10_000)
    check_consistent(info, w)
    assert w.k == math.comb(info.unseen.bit_count(), info.opponent_hand_size)
    lg, _, _ = model.logits([info])
    prod = np.array([math.exp(float(lg[0, cards_of(int(h))].sum())) for h in w.opp_hand])
    assert np.allclose(w.weight / w.weight.sum(), prod / prod.sum())


def test_save_and_load_give_the_same_outputs(tmp_path):
    model = _sharp_model(3)
    path = tmp_path / "b.pt"
    model.save(path, {"note": "test"})
    assert json.loads(card_path(path).read_text())["fit"] == {"note": "test"}
    again = BeliefModel.load(path)
    infos = [_game(s, 2 * s + 1).observation(s % 2) for s in range(1, 8)]
    assert torch.equal(model.logits(infos)[0], again.logits(infos)[0])
    data = bytearray(path.read_bytes())
    data[-10] ^= 0xFF
    path.write_bytes(bytes(data))
    with pytest.raises(PasurInputError, match="SHA-256"):
        BeliefModel.load(path)
    card_path(path).unlink()
    with pytest.raises(PasurInputError, match=r"card b\.card\.json is missing"):
        BeliefModel.load(path)


def test_the_shipped_weights_match_their_card():
    card = json.loads(card_path(DEFAULT_WEIGHTS).read_text())
    assert card["file"] == DEFAULT_WEIGHTS.name and card["sha256"] == sha256(DEFAULT_WEIGHTS)
    assert card["kind"] == "pasur belief model" and card["fit"]["held_out"]["all"]["positions"] > 0
    BeliefModel.load()  # raises on a mismatch


@pytest.mark.parametrize("seed,steps", [(3, 37), (4, 38), (5, 13), (6, 29), (8, 20)])
def test_exact_soft_greedy_is_the_inference_model(seed, steps):
    """The evaluation's exact soft-greedy posterior is :func:`opponent_weights` over every hand."""
    g = _game(seed, steps)
    for p in (0, 1):
        info = g.observation(p)
        if not informative(info):
            continue
        hand = g.state.hands[1 - p]
        w = opponent_weights(info, every_hand(info, np.random.default_rng(0)))
        post = w.weight / w.weight.sum()
        ll, marg = soft_greedy(info, hand)
        assert math.isclose(ll, math.log(post[list(w.opp_hand).index(hand)]), rel_tol=1e-9)
        assert math.isclose(marg.sum(), info.opponent_hand_size, rel_tol=1e-9)
        assert math.isclose(uniform(info)[0], -math.log(len(post)))


def test_training_lowers_held_out_loss():
    """A tiny run on heuristic and greedy games: the loss on held-out games falls below the
    untrained network's (same initial weights) and below the uniform prior's."""
    train_games = play_games(list(range(30)), [("heuristic", "greedy"), ("greedy", "heuristic")] * 15)
    test_games = play_games(list(range(500, 510)), [("heuristic", "greedy")] * 10)
    data, held = samples(train_games), samples(test_games)
    uniform_nll = np.mean(
        [math.log(math.comb(int(m.sum()), int(n))) for m, n in zip(held["mask"], held["n"], strict=True)]
    )
    torch.manual_seed(0)
    before = mean_nll(BeliefNet(64), held)
    model, report = train(data, epochs=4, seed=0, lr=3e-3)
    after = mean_nll(model.net, held)
    assert after < before - 0.05 and after < uniform_nll - 0.05, (before, after, uniform_nll)
    assert report["best_epoch"] >= 1 and len(report["history"]) == 4


@pytest.mark.parametrize("name", ["pimc:4:belief", "ispimc:4:belief"])
def test_belief_agents_play_legal_full_games(name):
    """The referee checks every move: a full game each way against the heuristic player."""
    from pasur.hidden.heuristic import HeuristicAgent
    from pasur.hidden.registry import make_agent

    agent = make_agent(name)
    for seats in ((agent, HeuristicAgent()), (HeuristicAgent(), agent)):
        result = play_hidden(Deck.from_seed(11), seats)
        assert result.state.is_terminal and len(result.moves) == 48


def test_belief_and_infer_are_not_combined():
    from pasur.hidden.registry import make_agent

    with pytest.raises(PasurInputError, match="belief"):
        make_agent("pimc:20:infer:belief")
    assert make_agent("ispimc:20:belief:exact").belief is not None


def test_the_command_refuses_options_of_the_other_network(tmp_path):
    from typer.testing import CliRunner

    from pasur.cli import app

    runner = CliRunner()
    for args, msg in (
        (["belief", "--deals", "3"], "--deals: only for hidden-train boundary"),
        (["boundary", "--seed", "3"], "--seed: only for hidden-train belief"),
        (["nets"], "unknown network 'nets'"),
        (["belief", "--seed", "899999", "--games", "10"], "reaches the held-out seeds"),
    ):
        r = runner.invoke(app, ["hidden-train", *args, "--out", str(tmp_path / "x")])
        assert r.exit_code == 2 and msg in r.output, r.output
    assert not (tmp_path / "x").exists()


def test_self_play_games_use_the_model_given():
    """The second generation's games: the belief agents sample from the model passed in (here a
    sharp random one, so the games differ from those of the shipped weights), and play legally."""
    seats = [("pimc:3:belief", "greedy"), ("greedy", "ispimc:3:belief")]
    shipped = play_games([21, 22], seats)
    other = play_games([21, 22], seats, belief=_sharp_model(5))
    assert other["moves"].shape == (2, 48, 2) and list(other["seats"][1]) == ["greedy", "ispimc:3:belief"]
    assert not np.array_equal(shipped["moves"], other["moves"])
