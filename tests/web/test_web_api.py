"""The web API through FastAPI's test client: whole hands and matches, the secrets kept, the
errors with the right status, resuming on the same database."""

from __future__ import annotations

import random
import re

import pytest

from pasur.game.cards import ALL_CARDS, Deck, format_card, format_cards, mask_of, parse_card
from pasur.game.rules import Action
from pasur.game.state import GameState
from pasur.web.service import hand_game

CARD = re.compile(r"(?<![A-Za-z0-9_\-])(10|[A2-9TJQK])([CDHS♣♦♥♠])(?![A-Za-z0-9_\-])")
#: keys that would carry what a player may not see before the replay
SECRET_KEYS = {"deck", "deal", "seed", "sample_seed", "token_sha256", "hands_open", "undealt"}


def start(client, **body):
    r = client.post("/api/games", json={"level": "greedy", **body})
    assert r.status_code == 201, r.text
    view = r.json()
    return view, {"X-Pasur-Token": view["token"]}


def move(client, view, headers, action: dict, **extra):
    body = {"card": action["card"], "captured": action["captured"], **extra}
    return client.post(f"/api/games/{view['id']}/moves", json=body, headers=headers)


def play_hand(client, view, headers, rng=None) -> dict:
    """Play the person's moves (first legal, or random with ``rng``) to the end of the hand."""
    while view["status"] == "playing":
        legal = view["hand"]["legal"]
        r = move(client, view, headers, rng.choice(legal) if rng else legal[0])
        assert r.status_code == 200, r.text
        view = r.json()
    return view


# -- a whole hand ---------------------------------------------------------------------------------


@pytest.mark.allow_seeds
def test_a_whole_hand_through_the_api(client):
    view, h = start(client, seed=5)
    assert view["status"] == "playing" and view["hand_number"] == 1 and view["match"]["target"] is None
    assert view["hand"]["seat"] == "Alex" and view["hand"]["to_move"] == "you" and view["steps"] == []
    deck = Deck.from_seed(5)
    assert {parse_card(c) for c in view["hand"]["hand"]} == set(deck.hand(0, 0))
    assert {parse_card(c) for c in view["hand"]["pool"]} == set(deck.pool)
    # the same game on the engine, move by move: the greedy AI answers every move of ours
    state = GameState.initial(deck)
    while view["status"] == "playing":
        a = view["hand"]["legal"][0]
        r = move(client, view, h, a, moves_played=view["hand"]["moves_played"])
        assert r.status_code == 200, r.text
        out = r.json()
        assert out["steps"][0]["by"] == "you" and all(s["by"] == "ai" for s in out["steps"][1:])
        for s in out["steps"]:
            state = state.apply(Action(parse_card(s["move"]["card"]), mask_of(map(parse_card, s["move"]["captured"]))))
            assert s["state"]["moves_played"] == len(s["state"]["history"])
        view = out
    assert state.is_terminal and view["status"] == "over" and view["hand"]["over"]
    res = view["result"]
    assert res["points"] == list(state.points) == res["spec_points"]
    assert view["match"]["totals"] == {"you": state.points[0], "ai": state.points[1]}
    assert view["match"]["winner"] == (
        None if state.points[0] == state.points[1] else "you" if state.utility() > 0 else "ai"
    )
    assert view["hand"]["players"]["you"]["points"] == state.points[0]
    # the finished game reads back the same, and its replay opens every card
    again = client.get(f"/api/games/{view['id']}", headers=h).json()
    assert again["result"] == res and again["hand"]["history"] == view["hand"]["history"]
    rep = client.get(f"/api/games/{view['id']}/replay", headers=h)
    assert rep.status_code == 200, rep.text
    rep = rep.json()
    assert rep["deal"]["deck"] == str(deck) and len(rep["moves"]) == 48
    assert [m["by"] for m in rep["moves"][:8]] == ["you", "ai"] * 4
    assert all(m["cost"] >= 0 and m["best_value"] >= m["value"] for m in rep["moves"])
    assert rep["your_cost"] == pytest.approx(sum(m["cost"] for m in rep["moves"] if m["by"] == "you"))


@pytest.mark.allow_seeds
def test_the_ai_leads_when_you_are_bob_and_moves_one_at_a_time(client):
    view, h = start(client, seat="bob", seed=11)
    assert view["hand"]["seat"] == "Bob" and len(view["steps"]) == 1 and view["steps"][0]["by"] == "ai"
    assert view["hand"]["moves_played"] == 1 and view["hand"]["to_move"] == "you"
    r = move(client, view, h, view["hand"]["legal"][0]).json()
    assert [s["by"] for s in r["steps"]] == ["you", "ai"]
    assert [s["state"]["moves_played"] for s in r["steps"]] == [2, 3]
    view = play_hand(client, r, h)
    assert view["hand"]["moves_played"] == 48 and view["status"] == "over"


@pytest.mark.allow_seeds
def test_hint_gives_every_legal_move_a_value(make_client):
    client = make_client(hint_level="heuristic")
    view, h = start(client, seed=3)
    hint = client.get(f"/api/games/{view['id']}/hint", headers=h)
    assert hint.status_code == 200, hint.text
    hint = hint.json()
    assert hint["level"] == "heuristic" and hint["agent"] == "heuristic"
    got = sorted((m["card"], m["captured"]) for m in hint["moves"])
    assert got == sorted((m["card"], m["captured"]) for m in view["hand"]["legal"])
    best = [m for m in hint["moves"] if m["best"]]
    assert best and all(m["value"] <= best[0]["value"] for m in hint["moves"])
    assert hint["moves"][0]["best"]  # sorted best first


def test_a_match_alternates_seats_and_ends_at_its_target(client):
    view, h = start(client, level="random", rules={"target": 25, "sur_cancellation": True, "fifty_point_rule": True})
    seats, totals = [], [0, 0]
    while True:
        seats.append(view["hand"]["seat"])
        view = play_hand(client, view, h)
        res = view["result"]
        totals = [totals[0] + res["points"][0], totals[1] + res["points"][1]]
        assert view["match"]["totals"] == {"you": totals[0], "ai": totals[1]}
        assert res["points"][0] - res["points"][1] == res["spec_points"][0] - res["spec_points"][1]  # cancellation
        if view["status"] == "over":
            break
        assert view["status"] == "hand_over" and not view["match"]["over"]
        assert client.post(f"/api/games/{view['id']}/moves", json={"card": "AC"}, headers=h).status_code == 409
        r = client.post(f"/api/games/{view['id']}/next", headers=h)
        assert r.status_code == 200, r.text
        view = r.json()
        assert view["hand_number"] == len(seats) + 1 and view["result"] is None
    assert max(totals) >= 25 and totals[0] != totals[1]
    assert view["match"]["winner"] == ("you" if totals[0] > totals[1] else "ai")
    assert seats == ["Alex", "Bob"] * (len(seats) // 2) + ["Alex"] * (len(seats) % 2)
    assert len(view["match"]["hands"]) == len(seats)
    assert client.post(f"/api/games/{view['id']}/next", headers=h).status_code == 409
    # every hand's replay, by number
    for n in range(1, len(seats) + 1):
        rep = client.get(f"/api/games/{view['id']}/replay", params={"hand": n}, headers=h).json()
        assert rep["hand_number"] == n and rep["seat"] == seats[n - 1]


# -- secrets --------------------------------------------------------------------------------------


def _walk(x, key=None):
    """Every (key, string) in a JSON value; dict keys count as strings too."""
    if isinstance(x, dict):
        for k, v in x.items():
            yield None, k
            yield from _walk(v, k)
    elif isinstance(x, list):
        for v in x:
            yield from _walk(v, key)
    elif isinstance(x, str):
        yield key, x


def assert_no_secrets(payload: dict, client, game_id: str, echo: int = 0) -> None:
    """No card of the AI's hand or of the undealt ones, anywhere in ``payload``, and no key that
    could carry them (checked against the referee's state after the request). ``echo``: cards
    the request named itself (an error message may repeat them)."""
    row = client.app.state.service.store.get(game_id)
    hand = row.hands[-1]
    info = hand_game(hand).observation(hand["seat"])
    hidden = ALL_CARDS & ~info.seen
    keys = set()
    shown = 0
    for key, s in _walk(payload):
        if key is None:
            keys.add(s)
        if key in ("id", "token"):
            continue
        for rank_, suit_ in CARD.findall(s):
            shown |= 1 << parse_card(rank_ + suit_)
    shown &= ~echo
    assert not shown & hidden, f"hidden cards sent: {format_cards(shown & hidden)}"
    assert not keys & SECRET_KEYS, keys & SECRET_KEYS
    assert len(str(hand["deck"])) > 100 and str(hand["deck"]) not in str(payload)


def test_no_response_ever_contains_a_hidden_card(client, leak_watch):
    """Twenty games of random requests (random deals: this app refuses seeds), each response
    checked after its request, and every payload checked by the watch as it is built."""
    rng = random.Random(2026)
    for g in range(20):
        body = {"level": rng.choice(["random", "greedy", "heuristic"]), "seat": rng.choice(["alex", "bob"])}
        if g % 3 == 0:
            body["rules"] = {"target": 12, "sur_cancellation": bool(g % 2)}
        r = client.post("/api/games", json=body)
        assert r.status_code == 201
        view = r.json()
        gid, h = view["id"], {"X-Pasur-Token": view["token"]}
        assert_no_secrets(view, client, gid)
        while True:
            echo = 0
            if view["status"] == "hand_over":
                r = client.post(f"/api/games/{gid}/next", headers=h)
            elif view["status"] == "over":
                break
            else:
                what, echo = rng.random(), 0
                if what < 0.1:
                    r = client.get(f"/api/games/{gid}/hint", headers=h)
                elif what < 0.15:
                    r = client.get(f"/api/games/{gid}", headers=h)
                elif what < 0.2:  # an illegal one: its message tells nothing either, but what it was sent
                    r = move(client, view, h, {"card": "KS", "captured": ["QS"]})
                    echo = mask_of([parse_card("KS"), parse_card("QS")])
                else:
                    r = move(client, view, h, rng.choice(view["hand"]["legal"]))
            assert r.status_code in (200, 409), r.text
            assert_no_secrets(r.json(), client, gid, echo if r.status_code == 409 else 0)
            if r.status_code == 200 and "hand" in r.json():
                view = r.json()
    # the watch saw each step inside the requests: views after the person's moves and the AI's
    assert leak_watch.checked > 1000 and not leak_watch.leaks
    assert {"step by you", "step by ai", "game view", "hint"} <= set(leak_watch.where)


@pytest.mark.allow_seeds
def test_the_searching_levels_leak_nothing_either(make_client, leak_watch):
    """One hand against each searching agent (few worlds, to stay fast), a hint at every turn:
    the searches see only information states, and their answers show no hidden card (after each
    request, and in every payload as it is built)."""
    client = make_client(levels={"pimc": "pimc:2", "best": "ispimc:2:infer"}, hint_level="best")
    for level in ("pimc", "best"):
        r = client.post("/api/games", json={"level": level, "seed": 11})
        view = r.json()
        gid, h = view["id"], {"X-Pasur-Token": view["token"]}
        assert_no_secrets(view, client, gid)
        while view["status"] == "playing":
            hint = client.get(f"/api/games/{gid}/hint", headers=h)
            assert hint.status_code == 200, hint.text
            assert_no_secrets(hint.json(), client, gid)
            r = move(client, view, h, view["hand"]["legal"][0])
            assert r.status_code == 200, r.text
            assert_no_secrets(r.json(), client, gid)
            view = r.json()
    assert leak_watch.checked > 100 and "hint" in leak_watch.where


@pytest.mark.allow_seeds
def test_a_test_that_would_catch_a_leak(client):
    """The checker itself: the AI's hand put into a response is found."""
    view, _ = start(client, seed=9)
    ai_card = format_card(Deck.from_seed(9).hand(1, 0)[0])
    leaked = {**view, "hand": {**view["hand"], "pool": [*view["hand"]["pool"], ai_card]}}
    with pytest.raises(AssertionError, match=f"hidden cards sent: .*{re.escape(ai_card)}"):
        assert_no_secrets(leaked, client, view["id"])
    with pytest.raises(AssertionError, match="'deck'"):
        assert_no_secrets({**view, "deck": "x"}, client, view["id"])


def test_the_watch_catches_a_leak_at_a_step_inside_a_request(client, leak_watch, monkeypatch):
    """A leak planted in the view of the person's own step: the card the AI is about to play. It is
    hidden when that step is built and played (so seen) by the end of the same request, so the
    check after the request passes it; the watch catches it at the step it was put in."""
    from pasur.web import service as service_module
    from pasur.web.service import GameService

    view, h = start(client)
    opened = {}
    real_open, real_hand_view = GameService._open, service_module.hand_view

    def remember(self, game_id, token):
        turn = real_open(self, game_id, token)
        opened.update(service=self, turn=turn)
        return turn

    def peeking_hand_view(info, score=None):
        out = real_hand_view(info, score)
        turn = opened.get("turn")
        g = turn.game if turn else None
        if g is not None and not g.is_terminal and g.mover != turn.seat:  # the AI moves next: peek at its card
            nxt = opened["service"]._agent(turn.row).choose(g.observation(g.mover))
            opened["planted"] = format_card(nxt.card)
            out = {**out, "pool": [*out["pool"], opened["planted"]]}
        return out

    monkeypatch.setattr(GameService, "_open", remember)
    monkeypatch.setattr(service_module, "hand_view", peeking_hand_view)
    # strict: the leak fails the request at the step
    with pytest.raises(AssertionError, match=r"^hand view, move 1 \(after 1 moves\): hidden cards"):
        move(client, view, h, view["hand"]["legal"][0])
    assert len(leak_watch.leaks) == 1 and opened["planted"] in leak_watch.leaks[0]
    leak_watch.leaks.clear()
    # recorded only: the response goes out with the planted card in the person's step, the AI then
    # plays it, and the check after the request finds nothing hidden in the response
    leak_watch.strict = False
    view = client.get(f"/api/games/{view['id']}", headers=h).json()
    r = move(client, view, h, view["hand"]["legal"][0])
    assert r.status_code == 200, r.text
    out = r.json()
    assert opened["planted"] in out["steps"][0]["state"]["pool"]
    assert [s["by"] for s in out["steps"]] == ["you", "ai"] and out["steps"][1]["move"]["card"] == opened["planted"]
    assert_no_secrets(out, client, view["id"])  # the check after the request misses it
    # found where it was put: the view of the person's step, then that step
    assert [x.split(" (")[0] for x in leak_watch.leaks] == ["hand view, move 1", "step by you"], leak_watch.leaks
    assert all(f"hidden cards {opened['planted']}" in x for x in leak_watch.leaks)
    leak_watch.leaks.clear()


def test_a_seeded_deal_is_refused_unless_the_server_allows_seeds(make_client):
    """Whoever knows a deal's seed knows every card: a server deals seeded decks only when told to;
    the test apps refuse them too unless a test asks (``allow_seeds``)."""
    for public in (make_client(allow_seeds=False), make_client()):
        r = public.post("/api/games", json={"level": "greedy", "seed": 3})
        assert r.status_code == 422 and "--allow-seeds" in r.json()["error"]
        assert public.post("/api/games", json={"level": "greedy"}).status_code == 201
    assert make_client(allow_seeds=True).post("/api/games", json={"level": "greedy", "seed": 3}).status_code == 201


def test_ids_and_tokens_are_unguessable_and_tokens_are_not_stored(client, db):
    views = [start(client)[0] for _ in range(5)]
    assert len({v["id"] for v in views}) == 5 and len({v["token"] for v in views}) == 5
    assert all(len(v["id"]) >= 24 and len(v["token"]) >= 43 for v in views)  # 144 and 256 random bits
    raw = b"".join(p.read_bytes() for p in db.parent.glob(db.name + "*"))
    assert not any(v["token"].encode() in raw for v in views)


# -- errors ---------------------------------------------------------------------------------------


def test_a_foreign_or_unknown_game_is_404_and_the_same(client):
    a, ha = start(client)
    _, hb = start(client)
    answers = [
        client.get(f"/api/games/{a['id']}", headers=hb),  # b's token on a's game
        client.get(f"/api/games/{a['id']}"),  # no token
        client.get(f"/api/games/{a['id']}", headers={"X-Pasur-Token": ""}),
        client.get("/api/games/nosuchgame", headers=ha),
        client.get(f"/api/games/{a['id']}x", headers=ha),
        move(client, a, hb, a["hand"]["legal"][0]),
        client.get(f"/api/games/{a['id']}/hint", headers=hb),
        client.get(f"/api/games/{a['id']}/replay", headers=hb),
        client.post(f"/api/games/{a['id']}/next", headers=hb),
        client.get("/api/games/" + "x" * 500, headers=ha),
    ]
    assert [r.status_code for r in answers] == [404] * len(answers)
    assert {r.text for r in answers} == {'{"error":"no such game"}'}
    # and b's own token still works, a's game is unchanged
    assert client.get(f"/api/games/{a['id']}", headers=ha).json()["hand"]["moves_played"] == 0


@pytest.mark.allow_seeds
def test_illegal_moves_are_409_with_a_message(client):
    view, h = start(client, seed=5)  # Alex holds 4 cards; the pool has 4
    mine = {parse_card(c) for c in view["hand"]["hand"]}
    pool = mask_of(map(parse_card, view["hand"]["pool"]))
    absent = next(c for c in range(52) if c not in mine and not (1 << c) & pool)
    r = move(client, view, h, {"card": format_card(absent), "captured": []})
    assert r.status_code == 409 and "not in your hand" in r.json()["error"]
    capture = next((a for a in view["hand"]["legal"] if a["captured"]), None)
    if capture is not None:  # laying a card that can capture
        r = move(client, view, h, {"card": capture["card"], "captured": []})
        assert r.status_code == 409 and "cannot be laid" in r.json()["error"]
    # a card of the hand that the rules do not let take the whole pool (whether another can or not)
    whole = sorted(view["hand"]["pool"])
    takes_all = {a["card"] for a in view["hand"]["legal"] if sorted(a["captured"]) == whole}
    card = next(c for c in view["hand"]["hand"] if c not in takes_all)
    r = move(client, view, h, {"card": card, "captured": view["hand"]["pool"]})
    assert r.status_code == 409 and "illegal move" in r.json()["error"], r.text
    r = move(client, view, h, view["hand"]["legal"][0], moves_played=7)
    assert r.status_code == 409 and "reload" in r.json()["error"]
    assert client.get(f"/api/games/{view['id']}/replay", headers=h).status_code == 409
    assert client.post(f"/api/games/{view['id']}/next", headers=h).status_code == 409
    # nothing of that moved the game
    assert client.get(f"/api/games/{view['id']}", headers=h).json()["hand"]["moves_played"] == 0
    view = play_hand(client, view, h)
    assert move(client, view, h, {"card": "AC", "captured": []}).status_code == 409
    assert client.get(f"/api/games/{view['id']}/hint", headers=h).status_code == 409
    assert client.get(f"/api/games/{view['id']}/replay", params={"hand": 2}, headers=h).status_code == 409


MALFORMED_CREATE = [
    b"",
    b"{",
    b"null",
    b"[]",
    b'"greedy"',
    b"1e999",
    b"\xff\xfe\x00",
    b'{"level": "nosuch"}',
    b'{"level": 3}',
    b'{"level": ""}',
    b'{"level": "' + b"g" * 100 + b'"}',
    b'{"level": "greedy", "extra": 1}',
    b'{"seat": "carol"}',
    b'{"seat": 0}',
    b'{"seed": -1}',
    b'{"seed": 1.5}',
    b'{"seed": "7"}',
    b'{"seed": 99999999999999999999999999}',
    b'{"seed": NaN}',
    b'{"rules": 62}',
    b'{"rules": {"target": 0}}',
    b'{"rules": {"target": 1001}}',
    b'{"rules": {"target": "62"}}',
    b'{"rules": {"target": null, "fifty_point_rule": true}}',
    b'{"rules": {"sur_cancellation": "yes"}}',
    b'{"rules": {"target": 62, "bonus": 1}}',
    b"[" * 5000 + b"]" * 5000,
    b'{"a":' * 2000 + b"1" + b"}" * 2000,
    b'{"level": "greedy"}{"level": "greedy"}',
    b'{"level": "gr\\ud800eedy"}',
]

MALFORMED_MOVE = [
    b"",
    b"{}",
    b"[1, 2]",
    b'{"card": 7}',
    b'{"card": "ZZ"}',
    b'{"card": "7C7C7C7C7C"}',
    b'{"card": ""}',
    b'{"card": "7C", "captured": "AS"}',
    b'{"card": "7C", "captured": [1]}',
    b'{"card": "7C", "captured": ["XX"]}',
    b'{"card": "7C", "captured": ["AS", "AS"]}',
    b'{"card": "7C", "captured": ' + b'["AS"' + b', "AS"' * 60 + b"]}",
    b'{"card": "7C", "captured": [], "moves_played": -1}',
    b'{"card": "7C", "captured": [], "moves_played": 49}',
    b'{"card": "7C", "captured": [], "moves_played": "0"}',
    b'{"card": "7C", "captured": [], "moves_played": true}',
    b'{"card": "7C", "take": []}',
    b'{"card": null}',
    b'{"card": "\\u0000"}',
    b'{"card": "7\xc3\x28"}',
    '{"card": "K\u212aS"}'.encode(),
    b"[" * 5000 + b"]" * 5000,
]


def test_malformed_requests_are_400_or_422_never_500(client):
    view, h = start(client)
    gid = view["id"]
    for body in MALFORMED_CREATE:
        r = client.post("/api/games", content=body, headers={"Content-Type": "application/json"})
        assert r.status_code in (400, 422), (body[:60], r.status_code, r.text)
        assert "error" in r.json()
    for body in MALFORMED_MOVE:
        r = client.post(f"/api/games/{gid}/moves", content=body, headers={**h, "Content-Type": "application/json"})
        assert r.status_code in (400, 422), (body[:60], r.status_code, r.text)
    for params in ({"hand": "x"}, {"hand": "0"}, {"hand": "-3"}, {"hand": "1" * 40}):
        assert client.get(f"/api/games/{gid}/replay", params=params, headers=h).status_code == 422
    # the wrong content type, a form, a token too long
    assert client.post("/api/games", content=b"level=greedy", headers={"Content-Type": "text/plain"}).status_code == 422
    assert client.post("/api/games", data={"level": "greedy"}).status_code == 422
    assert client.get(f"/api/games/{gid}", headers={"X-Pasur-Token": "t" * 1000}).status_code == 422
    # unknown routes and methods
    assert client.get("/api/nothing").status_code == 404
    assert client.delete(f"/api/games/{gid}", headers=h).status_code == 405
    assert client.put("/api/games", json={}).status_code == 405
    # none of it touched the game
    assert client.get(f"/api/games/{gid}", headers=h).json()["hand"]["moves_played"] == 0


def test_random_bodies_never_give_500(client):
    """Random bytes and random JSON values on every endpoint that takes a body."""
    from hypothesis import HealthCheck, given, settings
    from hypothesis import strategies as st

    view, h = start(client)
    gid = view["id"]
    json_values = st.recursive(
        st.none() | st.booleans() | st.integers() | st.floats() | st.text(max_size=10),
        lambda inner: (
            st.lists(inner, max_size=4)
            | st.dictionaries(
                st.sampled_from(["card", "captured", "level", "rules", "seat", "seed", "target", "moves_played", "x"]),
                inner,
                max_size=4,
            )
        ),
        max_leaves=12,
    )

    @settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck), derandomize=True)
    @given(st.one_of(st.binary(max_size=200), json_values), st.sampled_from(["create", "move"]))
    def check(body, where):
        url = "/api/games" if where == "create" else f"/api/games/{gid}/moves"
        if isinstance(body, bytes):
            r = client.post(url, content=body, headers={**h, "Content-Type": "application/json"})
        else:
            r = client.post(url, json=body, headers=h)
        assert r.status_code in (201, 400, 409, 422), (body, r.status_code, r.text)
        if r.status_code == 201:
            assert "token" in r.json()

    check()


def test_bodies_over_the_limit_are_413(client):
    view, h = start(client)
    big = b'{"card": "' + b"x" * 20_000 + b'"}'
    r = client.post(f"/api/games/{view['id']}/moves", content=big, headers={**h, "Content-Type": "application/json"})
    assert r.status_code == 413 and "over" in r.json()["error"]

    def chunks():  # no Content-Length: the body is counted as it comes
        for _ in range(40):
            yield b" " * 1000

    r = client.post("/api/games", content=chunks(), headers={"Content-Type": "application/json"})
    assert r.status_code == 413
    r = client.post("/api/games", content=b"{}", headers={"Content-Length": "abc", "Content-Type": "application/json"})
    assert r.status_code == 400


def test_headers_page_and_levels(client):
    page = client.get("/")
    assert page.status_code == 200 and "text/html" in page.headers["content-type"]
    assert "default-src 'self'" in page.headers["content-security-policy"]
    assert page.headers["x-content-type-options"] == "nosniff" and page.headers["x-frame-options"] == "DENY"
    assert "/static/app.js" in page.text
    for f in ("app.js", "style.css"):
        assert client.get(f"/static/{f}").status_code == 200
    levels = client.get("/api/levels")
    assert levels.headers["cache-control"] == "no-store"
    assert levels.json()["levels"] == ["random", "greedy", "heuristic"] and levels.json()["default"] == "random"
    assert set(levels.json()["presets"]) == {"hand", "match", "classic"}


# -- resume ---------------------------------------------------------------------------------------


@pytest.mark.allow_seeds
def test_a_game_resumes_after_the_app_is_recreated(make_client):
    first = make_client()
    view, h = start(first, seat="bob", rules={"target": 30}, seed=21)
    for _ in range(5):
        view = move(first, view, h, view["hand"]["legal"][-1]).json()
    before = first.get(f"/api/games/{view['id']}", headers=h).json()
    first.close()
    second = make_client()  # a new app on the same file: a restarted server
    after = second.get(f"/api/games/{view['id']}", headers=h).json()
    assert after == before and after["hand"]["moves_played"] == 11
    view = play_hand(second, after, h)
    assert view["status"] in ("hand_over", "over")
    if view["status"] == "hand_over":
        third = make_client()
        nxt = third.post(f"/api/games/{view['id']}/next", headers=h).json()
        assert nxt["hand_number"] == 2 and nxt["hand"]["seat"] == "Alex"
        assert make_client().get(f"/api/games/{view['id']}", headers=h).json() == {
            k: v for k, v in nxt.items() if k != "steps"
        }
