"""Self-play improvement of the policy network (``pasur.hidden.policy_selfplay``, issue 27 item 2):
the games record what the search with the incumbent's prior did, the gate's numbers are the
arena's on the same deals, a candidate is kept exactly when the gate says so, and a rerun resumes."""

from __future__ import annotations

import json
import statistics

import numpy as np
import pytest
import torch

from pasur.game.cards import Deck
from pasur.hidden import policy_selfplay as sp
from pasur.hidden.game import play_hidden
from pasur.hidden.policy import DEFAULT_WEIGHTS, PolicyAgent, PolicyModel, default_policy
from pasur.hidden.policy_train import replay


@pytest.fixture(scope="module")
def run(tmp_path_factory):
    """Two generations with the gate's verdicts fixed, the first candidate kept and the second not
    (the gate's measures are its own; its rule is checked on its own below), so that both ways a
    generation ends are run: a kept candidate becomes the next incumbent, and the final weights
    are the last kept candidate, not the last one trained."""
    out = tmp_path_factory.mktemp("selfplay")
    real = sp.gate

    def verdict(candidate, incumbent, deals, seed):
        return {**real(candidate, incumbent, deals, seed), "kept": seed == 600}

    with pytest.MonkeyPatch.context() as patch:
        patch.setattr(sp, "gate", verdict)
        rows = sp.run_selfplay(out, generations=2, games=10, gate_deals=12, seed=500, gate_seed=600)
    return out, rows


def _same(a: PolicyModel, b: PolicyModel) -> bool:
    sa, sb = a.net.state_dict(), b.net.state_dict()
    return sa.keys() == sb.keys() and all(torch.equal(sa[k], sb[k]) for k in sa)


def test_the_games_are_the_search_with_the_incumbents_prior(run):
    """Every decision of a ``selfplay`` seat in generation 1: the stored margins are the search's
    (with the shipped network as prior) and the move is the one that agent chooses."""
    out, _ = run
    data = dict(np.load(sorted((out / "gen-01" / "games").glob("selfplay-*.npz"))[0]))
    agent = sp.search_agent(default_policy(), sample_seed=0)
    at, checked = 0, 0
    for j in range(3):
        seats = data["seats"][j]
        steps = list(replay(data["decks"][j], data["moves"][j]))
        for k, (info, mover) in enumerate(steps[:-1]):
            n = int(data["qcount"][j][k])
            if seats[mover] == "selfplay":
                assert n == len(info.legal_actions())
                stored = data["qvals"][at : at + n]
                [values], [action] = agent.decide_batch([info])
                assert np.allclose(stored, [v for _, v in values], atol=1e-5)
                assert (action.card, action.captured) == tuple(data["moves"][j][k])
                checked += 1
            else:
                assert n == 0
            at += n
    assert checked > 20


def test_the_gate_is_the_duplicate_margin_and_its_z(run, monkeypatch):
    """The gate's numbers from its 12 deals played one game at a time (``play_hidden``, not the
    arena's batched duplicates): the candidate's margin per deal is half its game as Alex minus
    the incumbent's game as Alex; the candidate is kept exactly when that margin is ``GATE_Z``
    standard errors above 0 (tried on both sides of the measured z)."""
    out, rows = run
    start = PolicyModel.load(DEFAULT_WEIGHTS)
    cand = PolicyModel.load(out / "gen-01" / "candidate.pt")
    a, b = PolicyAgent(cand, name="c"), PolicyAgent(start, name="s")
    margins = []
    for i in range(12):
        deck = Deck.from_seed(600 + i)
        margins.append((play_hidden(deck, [a, b]).utility - play_hidden(deck, [b, a]).utility) / 2)
    mean, sd = statistics.mean(margins), statistics.stdev(margins)
    assert sd > 0  # the candidate plays otherwise than the incumbent somewhere
    half = 1.959964 * sd / 12**0.5
    g = rows[0]["gate"]
    assert (g["deals"], g["seeds"]) == (12, "600..611") and rows[1]["gate"]["seeds"] == "612..623"
    assert g["margin"] == pytest.approx(mean, abs=1e-4) and g["sd"] == pytest.approx(sd, abs=1e-4)
    assert g["ci95"] == pytest.approx([mean - half, mean + half], abs=1e-3)
    assert rows[1]["games"] == "seeds 510..519"
    z = mean / (sd / 12**0.5)
    for threshold, kept in ((z - 1e-3, True), (z + 1e-3, False)):
        monkeypatch.setattr(sp, "GATE_Z", threshold)
        assert sp.gate(cand, start, 12, 600)["kept"] is kept, (z, threshold)


def test_a_network_against_itself_is_not_kept():
    """Duplicate deals cancel the cards: the same deterministic network on both sides ties every deal."""
    model = default_policy()
    g = sp.gate(model, model, deals=6, seed=700)
    assert g["margin"] == 0 and g["sd"] == 0 and not g["kept"]


def test_the_final_weights_are_the_last_kept_candidate(run):
    out, rows = run
    assert [r["gate"]["kept"] for r in rows] == [True, False]
    final = PolicyModel.load(out / "policy-weights.pt")
    assert _same(final, PolicyModel.load(out / "gen-01" / "candidate.pt"))
    assert not _same(final, PolicyModel.load(out / "gen-02" / "candidate.pt")) and not _same(final, default_policy())
    assert [r["against_generation"] for r in rows] == [0, 1]
    card = json.loads((out / "policy-weights.card.json").read_text())
    assert card["fit"]["generation"] == 1
    assert rows == json.loads((out / "generations.json").read_text())


def test_a_rerun_resumes_without_playing_again(run):
    out, rows = run
    chunks = sorted(out.glob("gen-*/games/*.npz"))
    stamps = [p.stat().st_mtime_ns for p in chunks]
    again = sp.run_selfplay(out, generations=2, games=10, gate_deals=12, seed=500, gate_seed=600)
    assert again == rows
    assert [p.stat().st_mtime_ns for p in chunks] == stamps


def test_an_agent_spec_names_a_weights_file(tmp_path):
    """``SPEC@FILE``: the policy, and the search's prior, are that file's network."""
    from pasur.common.errors import PasurInputError
    from pasur.hidden.game import HiddenGame
    from pasur.hidden.policy import PolicyNet
    from pasur.hidden.registry import make_agent

    torch.manual_seed(3)
    other = PolicyModel(PolicyNet())
    path = tmp_path / "w.pt"
    other.save(path)
    agent, combo = make_agent(f"policy@{path}"), make_agent(f"ispimc:3:infer:pl0.5@{path}")
    assert agent.name == f"policy@{path}" and _same(agent.model, other) and _same(combo.policy, other)
    game, differs = HiddenGame(Deck.from_seed(4)), 0
    while not game.is_terminal:
        info = game.observation(game.mover)
        mine = agent.choose(info)
        assert mine == PolicyAgent(other).choose(info)
        differs += mine != PolicyAgent(default_policy()).choose(info)
        game.apply(mine)
    assert differs > 0
    for bad, says in [
        (f"pimc:3@{path}", "only for policy and a search with"),
        ("policy@/no/such.pt", "no weights file"),
        (f"greedy@{path}", "only for policy"),
    ]:
        with pytest.raises(PasurInputError, match=says):
            make_agent(bad)
    path.write_bytes(path.read_bytes() + b"x")  # no longer the file its card describes
    with pytest.raises(PasurInputError, match="does not match its card"):
        make_agent(f"policy@{path}")
