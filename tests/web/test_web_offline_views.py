"""The offline page's game views against the server's (issue 44, item 2): games against the AI
are played through the API (single hands and matches, both seats, Sur cancellation, the 50-point
rule), and after every answer the game as stored (each hand's deck, seat and moves) is handed to
``static/offline/offline.js`` under Node, which scores it with ``rules.js`` and builds the view
the page would show offline. It must be the server's view, key for key (hands, pools, piles,
points under the match rules, Surs made and scored, history with Surs, the final sweep, the legal
moves with their ``why`` for the guide, each hand's result, the match totals, status and winner).
Skipped where Node is missing, except under CI."""

from __future__ import annotations

import json
import random
import subprocess

import pytest
from test_web_offline_agents import OFFLINE, node

from pasur.game.cards import parse_deck

#: offline.js in a bare context (its two sibling scripts, an empty localStorage), then each game
#: record given scored and shown: viewOfPlayed
RUNNER = r"""
const vm = require("vm");
const fs = require("fs");
const store = {};
const ctx = { console, localStorage: { getItem: (k) => store[k] ?? null, setItem: (k, v) => (store[k] = String(v)) } };
vm.createContext(ctx);
const read = (f) => fs.readFileSync(process.argv[1] + "/" + f, "utf8");
for (const f of ["rules.js", "agents.js", "offline.js"]) vm.runInContext(read(f), ctx);
const records = JSON.parse(fs.readFileSync(process.argv[2], "utf8"));
ctx.records = records;
console.log(JSON.stringify(vm.runInContext("records.map((g) => Offline.viewOfPlayed(g))", ctx)));
"""

GAMES = [  # (seat, target, Sur cancellation, 50-point rule, seed)
    ("alex", None, False, False, 3),
    ("bob", None, True, False, 4),
    ("bob", 40, True, False, 5),
    ("alex", 75, False, True, 6),
    ("alex", 75, True, True, 7),
]


def record(client, game_id: str) -> dict:
    """The game as stored, in the shape offline.js keeps its own games."""
    row = client.app.state.service.store.get(game_id)
    hands = [
        {"deck": list(parse_deck(h["deck"]).cards), "seat": h["seat"], "moves": [[c, str(m)] for c, m in h["moves"]]}
        for h in row.hands
    ]
    return {"id": row.id, "level": row.level, "rules": row.rules, "first_seat": row.first_seat, "hands": hands}


def served(view: dict) -> dict:
    """The server's answer less the steps (the AI's moves, shown one at a time) and the token."""
    return {k: v for k, v in view.items() if k not in ("steps", "token")}


@pytest.mark.allow_seeds
def test_the_offline_views_are_the_servers(client, tmp_path):
    rng = random.Random(44)
    records, expected = [], []
    for seat, target, cancel, fifty, seed in GAMES:
        rules = {"target": target, "sur_cancellation": cancel, "fifty_point_rule": fifty}
        r = client.post("/api/games", json={"level": "greedy", "seat": seat, "rules": rules, "seed": seed})
        assert r.status_code == 201, r.text
        view = r.json()
        headers = {"X-Pasur-Token": view["token"]}
        while True:
            records.append(record(client, view["id"]))
            expected.append(served(view))
            if view["status"] == "over":
                break
            if view["status"] == "hand_over":
                r = client.post(f"/api/games/{view['id']}/next", headers=headers)
            else:
                a = rng.choice(view["hand"]["legal"])
                body = {"card": a["card"], "captured": a["captured"], "moves_played": view["hand"]["moves_played"]}
                r = client.post(f"/api/games/{view['id']}/moves", json=body, headers=headers)
            assert r.status_code == 200, r.text
            view = r.json()
    hands = [len(e["match"]["hands"]) for e in expected if e["status"] == "over"]
    assert len(hands) == len(GAMES) and max(hands) >= 3  # matches of several hands were played
    results = [h for e in expected if e["status"] == "over" for h in e["match"]["hands"]]
    for rule in ("surs_cancelled", "surs_void"):  # both house rules took effect somewhere
        assert any(sum(h[rule]) for h in results), rule
    path = tmp_path / "records.json"
    path.write_text(json.dumps(records))
    out = subprocess.run(
        [node(), "-e", RUNNER, str(OFFLINE), str(path)], capture_output=True, text=True, timeout=300, check=True
    )
    got = json.loads(out.stdout)
    assert len(got) == len(expected) > 100
    for g, e in zip(got, expected, strict=True):
        assert g.pop("offline") is True
        assert g == e, (len(e["match"]["hands"]), e["hand"]["moves_played"], e["hand_number"])
