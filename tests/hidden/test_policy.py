"""The policy-value network (issue 27, part 2): its input holds nothing hidden, its policy is a
distribution over the legal actions only, training lowers the loss and resumes, the agent plays
legal games, and the command refuses bad input in one line."""

from __future__ import annotations

import json
import random

import numpy as np
import pytest
import torch
from typer.testing import CliRunner

from pasur.cli import app
from pasur.common.errors import PasurInputError
from pasur.game.cards import Deck
from pasur.hidden.game import HiddenGame, play_hidden
from pasur.hidden.policy import (
    ACTION_IN,
    DEFAULT_WEIGHTS,
    STATE_IN,
    PolicyAgent,
    PolicyModel,
    PolicyNet,
    expand,
    features,
)
from pasur.hidden.policy_train import batch, play_games, samples, train
from pasur.hidden.registry import make_agent
from pasur.hidden.weights import card_path, sha256
from pasur.hidden.worlds import sample_worlds, world_deck


def _game(seed: int, steps: int) -> HiddenGame:
    rng = random.Random(seed)
    g = HiddenGame(Deck.from_seed(seed))
    for _ in range(steps):
        g.apply(rng.choice(g.state.legal_actions()))
    return g


def _model(seed: int = 0) -> PolicyModel:
    """A random network with large weights: sharp outputs, so that any leak would show."""
    torch.manual_seed(seed)
    net = PolicyNet(32, 16)
    with torch.no_grad():
        for p in net.parameters():
            p.mul_(3)
    return PolicyModel(net)


POSITIONS = [(3, 0), (4, 5), (5, 13), (6, 21), (7, 30), (8, 37), (9, 42), (10, 47)]


@pytest.mark.parametrize("seed,steps", [*POSITIONS[:6], (9, 34), (10, 39)])  # rounds 0-4: something is hidden
def test_the_input_and_output_hold_no_hidden_card(seed, steps):
    """Two full games the mover cannot tell apart (another opponent hand and other undealt
    cards, the same moves) give identical features and identical policies and values; the true
    hands differ."""
    g = _game(seed, steps)
    p = g.mover
    info = g.observation(p)
    model = _model(seed)
    want = model.evaluate([info])[0]
    w = sample_worlds(info, 6, seed=seed)
    hands = set()
    for k in range(w.k):
        deck = world_deck(info, int(w.opp_hand[k]), [int(c) for c in w.undealt[k]])
        other = HiddenGame(deck)
        for m in g.moves:
            other.apply(m.action)
        twin = other.observation(p)
        hands.add((other.state.hands[1 - p], other.state.deck.cards))
        for a, b in zip(features(twin)[:4], features(info)[:4], strict=True):
            assert np.array_equal(a, b)
        got = model.evaluate([twin])[0]
        assert got[0] == want[0] and got[3] == want[3]
        assert np.array_equal(got[1], want[1]) and np.array_equal(got[2], want[2])
    assert len(hands) > 1


@pytest.mark.parametrize("seed,steps", POSITIONS)
def test_the_policy_is_a_distribution_over_the_legal_actions(seed, steps):
    g = _game(seed, steps)
    info = g.observation(g.mover)
    actions, p, q, v = _model(seed + 1).evaluate([info])[0]
    assert actions == info.legal_actions()  # one probability per legal action, nothing else
    assert np.all(p >= 0) and abs(p.sum() - 1) < 1e-9 and len(q) == len(actions) and np.isfinite(v)
    s = expand(*(x[None] for x in features(info)[:2]))
    assert s.shape == (1, STATE_IN) and expand(*features(info)[2:4]).shape == (len(actions), ACTION_IN)


def test_a_batch_gives_what_one_at_a_time_gives():
    model = _model(2)
    infos = [_game(s, st).observation(_game(s, st).mover) for s, st in POSITIONS]
    together = model.evaluate(infos)
    for info, got in zip(infos, together, strict=True):
        alone = model.evaluate([info])[0]
        assert got[0] == alone[0] and np.allclose(got[1], alone[1]) and np.allclose(got[2], alone[2])


def test_the_agent_chooses_the_most_probable_action_or_samples_from_it():
    model = _model(4)
    greedy_agent, sampler = PolicyAgent(model), PolicyAgent(model, sample=True, seed=1)
    for s, st in POSITIONS * 3:
        info = _game(s, st).observation(_game(s, st).mover)
        probs = greedy_agent.policy(info)
        best = max(p for _, p in probs)
        assert greedy_agent.choose(info) == next(a for a, p in probs if p == best)
        drawn = sampler.choose(info)
        assert drawn in info.legal_actions() and sampler.choose(info) == drawn  # seeded by the state
        assert [a for a, _ in greedy_agent.action_values(info)] == info.legal_actions()


def test_stored_values_are_the_search_agent_s_and_training_lowers_the_loss_and_resumes(tmp_path):
    """Games with a searching seat store one value per legal action of each of its decisions;
    a short training run lowers the loss, and a run stopped after an epoch resumes to the same end."""
    seats = [("pimc:3", "greedy"), ("heuristic", "pimc:3")] * 3
    games = play_games(list(range(6)), seats)
    assert games["moves"].shape == (6, 48, 2) and games["qcount"].shape == (6, 48)
    assert (games["qcount"] > 0).sum() == 6 * 24 and games["qcount"].sum() == len(games["qvals"])
    data = samples(games)
    assert len(data["count"]) == 6 * 48 and data["searched"].sum() == 6 * 24
    pi = batch(data, np.arange(len(data["count"])))[3].numpy()
    assert abs(pi.sum() - data["searched"].sum()) < 1e-3  # a distribution per searched decision
    full_ckpt, part_ckpt = tmp_path / "full.pt", tmp_path / "part.pt"
    _, full = train(data, epochs=4, seed=0, hidden=32, checkpoint=full_ckpt, lr=3e-3)
    hist = full["history"]
    assert hist[-1]["train_ce"] < hist[0]["train_ce"] and hist[-1]["train_value"] < hist[0]["train_value"]
    train(data, epochs=1, seed=0, hidden=32, checkpoint=part_ckpt, lr=3e-3)
    _, again = train(data, epochs=4, seed=0, hidden=32, checkpoint=part_ckpt, lr=3e-3)
    assert [r["epoch"] for r in again["history"]] == [1, 2, 3, 4]
    assert again["history"] == hist  # the same epochs as the uninterrupted run


def test_save_and_load_give_the_same_outputs(tmp_path):
    model = _model(6)
    path = tmp_path / "p.pt"
    model.save(path, {"note": "test"})
    card = json.loads(card_path(path).read_text())
    assert card["sha256"] == sha256(path) and card["fit"] == {"note": "test"}
    info = _game(3, 9).observation(_game(3, 9).mover)
    a, b = model.evaluate([info])[0], PolicyModel.load(path).evaluate([info])[0]
    assert np.array_equal(a[1], b[1]) and np.array_equal(a[2], b[2])
    path.write_bytes(path.read_bytes()[:-3] + b"xyz")
    with pytest.raises(PasurInputError, match="SHA-256"):
        PolicyModel.load(path)


def test_the_shipped_weights_match_their_card():
    card = json.loads(card_path(DEFAULT_WEIGHTS).read_text())
    assert card["file"] == DEFAULT_WEIGHTS.name and card["sha256"] == sha256(DEFAULT_WEIGHTS)
    assert card["kind"] == "pasur policy-value network" and card["fit"]["games"] > 0
    assert {"ce", "agree", "value_rmse", "q_rmse"} <= set(card["fit"]["held_out"])
    PolicyModel.load()  # raises on a mismatch


@pytest.mark.parametrize("name", ["policy", "policy:sample"])
def test_the_agents_play_legal_full_games(name):
    """The referee checks every move: a full game each way against the heuristic player."""
    from pasur.hidden.heuristic import HeuristicAgent

    agent = make_agent(name, seed=3)
    assert isinstance(agent, PolicyAgent) and agent.name == name and agent.sample == (name != "policy")
    for seats in ((agent, HeuristicAgent()), (HeuristicAgent(), agent)):
        result = play_hidden(Deck.from_seed(12), seats)
        assert result.state.is_terminal and len(result.moves) == 48


def test_the_arena_plays_the_policy(tmp_path):
    out = tmp_path / "arena"
    r = CliRunner().invoke(
        app, ["arena", "--agents", "policy,greedy", "--deals", "2", "--engine", "inline", "--out", str(out), "--json"]
    )
    assert r.exit_code == 0, r.output
    res = json.loads((out / "results.json").read_text())
    (pair,) = res["pairs"]
    assert (pair["a"], pair["b"], pair["deals"]) == ("policy", "greedy", 2)


@pytest.mark.parametrize(
    ("args", "message"),
    [
        (["policy", "--test-games", "20"], "--test-games: only for hidden-train belief"),
        (["policy", "--self-play", "20"], "--self-play: only for hidden-train belief"),
        (["policy", "--deals", "3"], "--deals: only for hidden-train boundary"),
        (["boundary", "--seed", "3"], "--seed: only for hidden-train belief or policy or selfplay"),
        (["policy", "--device", "tpu9"], "error: "),
        (["policy", "--generations", "2"], "--generations: only for hidden-train selfplay"),
        (["policy", "--gate-deals", "20"], "--gate-deals: only for hidden-train selfplay"),
        (["selfplay", "--epochs", "2"], "--epochs: only for hidden-train boundary or belief or policy"),
        (["selfplay", "--start", "/no/such/weights.pt"], "--start /no/such/weights.pt: no such weights file"),
        (["selfplay", "--gate-deals", "5"], "error: "),
    ],
)
def test_the_command_refuses_bad_input_in_one_line(tmp_path, args, message):
    r = CliRunner().invoke(app, ["hidden-train", *args, "--out", str(tmp_path / "x")])
    assert r.exit_code == 2 and message in r.output, r.output
    assert r.output.strip().count("\n") == 0 and r.output.startswith("error: ")
    assert not (tmp_path / "x").exists()


def test_the_command_refuses_a_folder_of_other_options(tmp_path):
    out = tmp_path / "run"
    out.mkdir()
    (out / "policy.json").write_text(json.dumps({"games": 5}))
    r = CliRunner().invoke(app, ["hidden-train", "policy", "--out", str(out), "--games", "10", "--epochs", "1"])
    assert r.exit_code == 2 and r.output.startswith("error: ") and "other options" in r.output, r.output


def test_bad_agent_options_are_refused():
    with pytest.raises(PasurInputError, match="policy takes no option but :sample"):
        make_agent("policy:fast")
