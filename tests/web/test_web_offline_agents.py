"""The page's offline AI against the Python engine and agents (issue 44, item 2): games dealt from
seeded decks and played by a mix of the heuristic player and seeded random moves are recorded by
Python; Node replays each with ``static/offline/rules.js`` and, at every position, gives the legal
moves, the heuristic player's values and move (``agents.js``) and the policy network's logits and
move (the exported weights). The Python engine, ``HeuristicAgent`` and ``PolicyAgent`` must agree
at each of the positions (over 500), and at the end of each game the piles, Surs and points must
be the referee's. Skipped where Node is missing, except under CI."""

from __future__ import annotations

import json
import os
import random
import shutil
import subprocess
from pathlib import Path

import numpy as np
import pytest
import torch

import pasur.web
from pasur.game.cards import Deck
from pasur.game.rules import Action
from pasur.hidden.game import HiddenGame
from pasur.hidden.heuristic import HeuristicAgent
from pasur.hidden.policy import DEFAULT_WEIGHTS, PolicyAgent, default_policy, expand, features
from pasur.hidden.weights import sha256
from pasur.web.offline_export import EXPORT, export_json

OFFLINE = Path(pasur.web.__file__).with_name("static") / "offline"
GAMES = 12  # 48 positions each: 576

#: replays each recorded game with rules.js and asks agents.js at every position; prints JSON
RUNNER = r"""
const R = require(process.argv[1] + "/rules.js");
const A = require(process.argv[1] + "/agents.js");
const fs = require("fs");
const net = A.loadNetwork(JSON.parse(fs.readFileSync(process.argv[1] + "/policy-weights.json", "utf8")));
const games = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
const act = (a) => [a.card, a.captured.toString()];
const out = games.map((g) => {
  let s = R.initialState(g.deck);
  const positions = [];
  for (const [card, captured] of g.moves) {
    const info = R.observe(s, R.mover(s));
    const hv = A.heuristicValues(info);
    const nv = A.networkOutputs(net, info);
    positions.push({
      legal: R.stateLegal(s).map(act),
      heuristic: act(A.heuristicChoose(info)),
      heuristic_values: hv.map(([, v]) => v),
      network: act(A.networkChoose(net, info)),
      logits: nv.map((o) => o.logit),
      values: nv.map((o) => o.value),
    });
    s = R.applyAction(s, { card, captured: BigInt(captured) });
  }
  return { positions, terminal: R.isTerminal(s), piles: s.piles.map(String), surs: s.surs,
           points: R.points(s.piles, s.surs), clubs: R.clubsOf(s.piles), card_points: R.cardPointsWithBonus(s.piles) };
});
console.log(JSON.stringify(out));
"""


def node() -> str:
    found = shutil.which("node") or shutil.which("nodejs")
    if found is None:
        if os.environ.get("CI"):  # scripts/bootstrap.sh installs it: under CI it must be there
            pytest.fail("Node.js is missing (scripts/bootstrap.sh installs the nodejs package)")
        pytest.skip("Node.js is missing")
    return found


def run_js(games: list[dict], tmp: Path) -> list[dict]:
    path = tmp / "games.json"
    path.write_text(json.dumps(games))
    out = subprocess.run(
        [node(), "-e", RUNNER, str(OFFLINE), str(path)], capture_output=True, text=True, timeout=300, check=True
    )
    return json.loads(out.stdout)


def logits(info) -> np.ndarray:
    """The network's logit of each legal action (policy.py's forward pass, float32)."""
    model = default_policy()
    masks, dense, am, ad, _ = features(info)
    s = torch.from_numpy(expand(masks[None], dense[None]))
    a = torch.from_numpy(expand(am, ad))
    with torch.no_grad():
        out, _, _ = model.net(s, a, torch.zeros(len(am), dtype=torch.long))
    return out.double().numpy()


def record(seed: int) -> tuple[dict, list[dict], HiddenGame]:
    """A game of deck ``seed``: each move the heuristic player's, or a seeded random one (a third
    of the time), with what Python's engine and agents say at every position."""
    rng = random.Random(seed)
    heuristic, network = HeuristicAgent(), PolicyAgent()
    game = HiddenGame(Deck.from_seed(seed))
    moves, expected = [], []
    while not game.is_terminal:
        info = game.observation(game.mover)
        legal = game.state.legal_actions()
        values = heuristic.action_values(info)
        expected.append(
            {
                "legal": [[a.card, str(a.captured)] for a in legal],
                "heuristic": heuristic.choose(info),
                "heuristic_values": [v for _, v in values],
                "network": network.choose(info),
                "logits": logits(info),
                "values": [v for _, v in network.action_values(info)],
            }
        )
        action = rng.choice(legal) if rng.random() < 1 / 3 else heuristic.choose(info)
        moves.append([action.card, str(action.captured)])
        game.apply(action)
    return {"deck": list(game.state.deck.cards), "moves": moves}, expected, game


@pytest.fixture(scope="module")
def played(tmp_path_factory):
    records = [record(1000 + g) for g in range(GAMES)]
    js = run_js([r[0] for r in records], tmp_path_factory.mktemp("offline"))
    return records, js


def _act(pair: list) -> Action:
    return Action(int(pair[0]), int(pair[1]))


def test_the_js_rules_give_the_engines_legal_moves_and_scores(played):
    records, js = played
    positions = 0
    for (_, expected, game), got in zip(records, js, strict=True):
        assert [p["legal"] for p in got["positions"]] == [e["legal"] for e in expected]
        positions += len(expected)
        s = game.state
        assert got["terminal"] and s.is_terminal
        assert [int(m) for m in got["piles"]] == list(s.piles)
        assert got["surs"] == list(s.surs) and got["points"] == list(s.points) and got["clubs"] == list(s.clubs)
        w = s.clubs_winner
        assert got["card_points"] == [s.card_points[p] + (7 if w == p else 0) for p in (0, 1)]
    assert positions >= 500


def test_the_js_heuristic_plays_the_python_heuristics_moves(played):
    records, js = played
    n = 0
    for (_, expected, _), got in zip(records, js, strict=True):
        for e, g in zip(expected, got["positions"], strict=True):
            assert _act(g["heuristic"]) == e["heuristic"], (e["legal"], g["heuristic_values"], e["heuristic_values"])
            assert g["heuristic_values"] == pytest.approx(e["heuristic_values"], abs=1e-9)
            n += 1
    assert n >= 500


def test_the_js_network_plays_the_python_networks_moves(played):
    records, js = played
    n = 0
    for (_, expected, _), got in zip(records, js, strict=True):
        for e, g in zip(expected, got["positions"], strict=True):
            assert g["logits"] == pytest.approx(list(e["logits"]), abs=1e-4)
            assert g["values"] == pytest.approx(e["values"], abs=1e-3)
            assert _act(g["network"]) == e["network"], (e["legal"], g["logits"], list(e["logits"]))
            n += 1
    assert n >= 500


def test_the_committed_export_is_the_shipped_network():
    """The page's weights are policy-weights.pt's: same file hash, and the export written again is
    the committed file byte for byte (python -m pasur.web.offline_export after retraining)."""
    doc = json.loads(EXPORT.read_text(encoding="utf-8"))
    assert doc["sha256"] == sha256(DEFAULT_WEIGHTS)
    assert EXPORT.read_text(encoding="utf-8") == export_json()


def test_the_export_command_refuses_a_missing_file(tmp_path, capsys):
    from pasur.web.offline_export import main

    assert main([str(tmp_path / "none.pt"), str(tmp_path / "out.json")]) == 2
    err = capsys.readouterr().err
    assert err.startswith("error: ") and "no such weights file" in err and len(err.strip().splitlines()) == 1
    assert not (tmp_path / "out.json").exists()
