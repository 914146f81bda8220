"""Tables for two people through the API and the WebSocket (FastAPI's test client): two seats,
every message to each checked for cards it may not see, wrong tokens and moves out of turn,
reconnection, a restart from the database file, the AI taking a seat, the move clock (an
injectable clock, no sleeps), the replay for both, and the schema migration."""

from __future__ import annotations

import contextlib
import random
import sqlite3

import pytest

from conftest import table_leaks
from pasur.web.store import Store, get_table
from pasur.web.tables import seat_of

TOKEN = "X-Pasur-Token"


class FakeClock:
    """The tables' clock, moved by hand."""

    def __init__(self) -> None:
        self.now = 1_000_000.0

    def __call__(self) -> float:
        return self.now


class Seat:
    """One player: their token, their socket, and every message they got (each checked for
    leaks against the table as stored when it arrives)."""

    def __init__(self, client, table_id: str, token: str, player: int) -> None:
        self.client, self.table_id, self.token, self.player = client, table_id, token, player
        self.messages: list[dict] = []
        self.ws = None
        self._cm = None
        client.seats.append(self)

    @property
    def store(self) -> Store:
        return self.client.app.state.service.store

    def check(self, message: dict) -> dict:
        row = get_table(self.store, self.table_id)
        problems = table_leaks(message, row.hands, self.player)
        assert problems == [], problems
        self.messages.append(message)
        return message

    def connect(self) -> dict:
        self._cm = self.client.websocket_connect(f"/api/tables/{self.table_id}/live")
        self.ws = self._cm.__enter__()
        self.ws.send_json({"type": "hello", "token": self.token})
        return self.receive()

    def close(self) -> None:
        if self._cm is not None:
            self._cm.__exit__(None, None, None)
            self._cm = self.ws = None

    def receive(self) -> dict:
        return self.check(self.ws.receive_json())

    def send(self, **message) -> None:
        self.ws.send_json(message)

    def http(self, method: str, path: str, **kw):
        r = self.client.request(method, f"/api/tables/{self.table_id}{path}", headers={TOKEN: self.token}, **kw)
        assert r.status_code < 500, r.text
        if r.status_code < 300 and "hand" in r.json():
            self.check(r.json())
        return r


@contextlib.contextmanager
def running(make_client, **kwargs):
    """A test client with its lifespan (one event loop for every socket); every seat's socket is
    closed before it stops, even when the test fails."""
    client = make_client(**kwargs)
    client.seats = []
    with client:
        try:
            yield client
        finally:
            for seat in client.seats:
                with contextlib.suppress(Exception):
                    seat.close()


def open_table(client, *, before_join=None, **body) -> tuple[Seat, Seat | None, dict]:
    """Open a table with ``body`` and join it with the invite (``before_join(opener, view)``
    runs while the second seat waits)."""
    r = client.post("/api/tables", json=body)
    assert r.status_code == 201, r.text
    v = r.json()
    opener = 0 if body.get("seat", "alex") == "alex" else 1
    a = Seat(client, v["id"], v["token"], opener)
    a.check(v)
    if v["invite"] is None:
        return a, None, v
    if before_join is not None:
        before_join(a, v)
    r = client.post(f"/api/tables/{v['id']}/join", json={"invite": v["invite"]})
    assert r.status_code == 200, r.text
    j = r.json()
    b = Seat(client, v["id"], j["token"], 1 - opener)
    b.check(j)
    return a, b, v


def views(*seats: Seat) -> list[dict]:
    return [s.connect()["view"] for s in seats]


def play_moves(seats: list[Seat], rng: random.Random, limit: int = 1000) -> dict:
    """Both connected; the player to move plays a random legal move over the socket, both receive
    its update; until the hand is over (or ``limit`` moves). Returns the last view of seats[0]."""
    last = [s.messages[-1]["view"] if "view" in s.messages[-1] else s.messages[-1] for s in seats]
    for _ in range(limit):
        if last[0]["status"] != "playing":
            break
        mover = 0 if last[0]["hand"]["to_move"] == "you" else 1
        assert last[1 - mover]["hand"]["to_move"] == "ai"
        legal = last[mover]["hand"]["legal"]
        a = rng.choice(legal)
        n = last[mover]["hand"]["moves_played"]
        seats[mover].send(type="move", card=a["card"], captured=a["captured"], moves_played=n)
        for i, s in enumerate(seats):
            got = s.receive()
            assert got["type"] == "update", got
            assert [(st["n"], st["by"]) for st in got["steps"]] == [(n + 1, "you" if i == mover else "ai")]
            assert got["steps"][0]["move"]["card"] == a["card"]
            last[i] = got["view"]
    return last[0]


def moves_seen(seat: Seat) -> list[tuple[int, int]]:
    return [(st["hand_number"], st["n"]) for m in seat.messages for st in m.get("steps", [])]


def test_two_people_play_a_hand_and_see_only_their_own_cards(make_client, db):
    with running(make_client) as client:

        def waiting(opener, v):
            assert v["status"] == "waiting" and v["opponent"]["kind"] == "open"
            legal = v["hand"]["legal"][0]  # the waiting table refuses moves
            r = opener.http("POST", "/moves", json={"card": legal["card"], "captured": legal["captured"]})
            assert r.status_code == 409 and "still empty" in r.json()["error"]

        a, b, v = open_table(client, before_join=waiting)
        va, vb = views(a, b)
        assert va["status"] == vb["status"] == "playing"
        assert va["hand"]["seat"] == "Alex" and vb["hand"]["seat"] == "Bob"
        assert va["opponent"] == {"kind": "person", "level": None}
        assert set(va["hand"]["hand"]).isdisjoint(vb["hand"]["hand"])
        # the replay is closed while the hand is played
        assert a.http("GET", "/replay").status_code == 409
        end = play_moves([a, b], random.Random(1))
        assert end["status"] == "over" and end["hand"]["moves_played"] == 48
        # each saw every move once, in order
        assert moves_seen(a) == moves_seen(b) == [(1, n) for n in range(1, 49)]
        ra, rb = a.messages[-1]["view"]["result"], b.messages[-1]["view"]["result"]
        assert ra["points"] == rb["points"][::-1] and ra["timeout"] is None
        row = get_table(a.store, a.table_id)
        assert row.status == "over" and row.hands[0]["result"]["points"] == ra["points"]
        # the replay, every card open, told from each side
        pa, pb = a.http("GET", "/replay").json(), b.http("GET", "/replay").json()
        assert len(pa["moves"]) == len(pb["moves"]) == 48
        assert pa["open_value"] == -pb["open_value"]
        assert pa["deal"]["rounds"][0]["you"] == pb["deal"]["rounds"][0]["ai"] == va["hand"]["hand"]
        assert [m["by"] for m in pa["moves"]][:2] == ["you", "ai"] and pb["moves"][0]["by"] == "ai"
        assert pa["your_cost"] == pb["ai_cost"] and pa["result"]["points"] == pb["result"]["points"][::-1]
        # the tokens and the invite are stored as hashes only
        files = b"".join(p.read_bytes() for p in db.parent.iterdir() if p.name.startswith(db.name))
        for secret in (a.token, b.token, v["invite"]):
            assert secret.encode() not in files
        a.close()
        b.close()


def test_neither_can_act_for_the_other(make_client):
    with running(make_client) as client:
        a, b, v = open_table(client)
        va, vb = views(a, b)
        tid = a.table_id
        legal = va["hand"]["legal"][0]
        body = {"card": legal["card"], "captured": legal["captured"]}
        # Bob's token cannot move out of turn (Alex leads); Bob's own cards are not Alex's
        assert b.http("POST", "/moves", json=body).status_code == 409
        b.send(type="move", **body)
        err = b.receive()
        assert err == {"type": "error", "status": 409, "error": "it is not your turn"}
        # a wrong or missing token, an unknown table: one 404
        for headers in ({TOKEN: "x" * 43}, {}, {TOKEN: a.token + "x"}):
            r = client.post(f"/api/tables/{tid}/moves", json=body, headers=headers)
            assert r.status_code == 404 and r.json() == {"error": "no such table"}
        r = client.post("/api/tables/nope/moves", json=body, headers={TOKEN: a.token})
        assert r.status_code == 404 and r.json() == {"error": "no such table"}
        assert client.get(f"/api/tables/{tid}", headers={TOKEN: "y" * 300}).status_code == 422
        # the invite is spent once used; a wrong one is the same 404
        assert client.post(f"/api/tables/{tid}/join", json={"invite": v["invite"]}).status_code == 404
        assert client.post(f"/api/tables/{tid}/join", json={"invite": "guess"}).status_code == 404
        # malformed bodies and messages: 4xx, never 500
        for bad in ({"card": 7}, {"card": "ZZ"}, {"card": "7C", "captured": ["7C", "7C"]}, {"card": "7C", "x": 1}):
            r = a.http("POST", "/moves", json=bad)
            assert 400 <= r.status_code < 500, (bad, r.text)
        for bad in ({"rules": {"target": 0}}, {"clock_s": 1}, {"ai_level": "nope"}, {"seed": 3}, {"seat": "carol"}):
            r = client.post("/api/tables", json=bad)
            assert r.status_code == 422, (bad, r.text)
        a.ws.send_text("not json")
        assert a.receive()["status"] == 400
        a.ws.send_text("x" * 20_000)
        assert a.receive()["status"] == 400
        a.send(type="move", card="ZZ")
        assert a.receive()["status"] == 422
        a.send(type="dance")
        assert a.receive()["status"] == 400
        a.send(type="next")
        assert a.receive()["status"] == 409
        # Alex's illegal move: 409 with the reason; Bob hears nothing of it
        a.send(type="move", card=vb["hand"]["hand"][0], captured=[])
        err = a.receive()
        assert err["status"] == 409 and "not in your hand" in err["error"]
        # a socket with a wrong token is told 404 and closed
        with client.websocket_connect(f"/api/tables/{tid}/live") as ws:
            ws.send_json({"type": "hello", "token": "wrong"})
            assert ws.receive_json()["status"] == 404
        # the state is untouched: Alex's legal move still goes through, and both hear of it
        a.send(type="move", **body)
        assert a.receive()["steps"][0]["by"] == "you" and b.receive()["steps"][0]["by"] == "ai"
        a.close()
        b.close()


def test_a_websocket_from_another_site_is_refused(make_client):
    from starlette.websockets import WebSocketDisconnect

    with running(make_client) as client:
        a, _, _ = open_table(client)
        for headers in ({"origin": "http://evil.example"}, {"host": "evil.example"}):
            with (
                pytest.raises(WebSocketDisconnect),
                client.websocket_connect(f"/api/tables/{a.table_id}/live", headers=headers) as ws,
            ):
                ws.receive_json()


def test_a_dropped_socket_reconnects_to_the_whole_view(make_client):
    with running(make_client) as client:
        a, b, _ = open_table(client)
        views(a, b)
        play_moves([a, b], random.Random(2), limit=4)
        b.close()  # Bob's connection drops; Alex plays on
        last = a.messages[-1]["view"]
        assert last["hand"]["to_move"] == "you"
        m = last["hand"]["legal"][0]
        a.send(type="move", card=m["card"], captured=m["captured"])
        last = a.receive()["view"]
        back = b.connect()["view"]  # the reload: the whole view at once
        assert back["hand"]["moves_played"] == last["hand"]["moves_played"] == 5
        assert back["hand"]["history"] == [
            {**h, "by": "ai" if h["by"] == "you" else "you"} for h in last["hand"]["history"]
        ]
        b.send(type="sync")
        assert b.receive()["view"] == back
        end = play_moves([a, b], random.Random(3))
        assert end["status"] == "over"
        a.close()
        b.close()


def test_a_restarted_server_resumes_the_match(make_client):
    with running(make_client) as client:
        a, b, _v = open_table(client, rules={"target": 30})
        views(a, b)
        end = play_moves([a, b], random.Random(4))
        assert end["status"] == "hand_over" or end["match"]["over"]
        a.close()
        b.close()
        tokens, tid = (a.token, b.token), a.table_id
    # the app and its store closed (checkpointed); a new app on the same file
    with running(make_client) as client:
        a, b = Seat(client, tid, tokens[0], 0), Seat(client, tid, tokens[1], 1)
        va, vb = views(a, b)
        assert va["hand_number"] == 1 and va["result"]["points"] == vb["result"]["points"][::-1]
        hands = 1
        while not va["match"]["over"]:
            (b if hands % 2 else a).send(type="next")
            va, vb = a.receive()["view"], b.receive()["view"]
            hands += 1
            assert va["hand_number"] == hands and va["status"] == "playing"
            # the seats alternate: player 0 is Bob in even hands
            assert va["hand"]["seat"] == ("Bob" if hands % 2 == 0 else "Alex")
            va = play_moves([a, b], random.Random(hands))
            vb = b.messages[-1]["view"]
            if hands == 2:  # a second restart mid-match, between hands
                a.close()
                b.close()
                break
        a.close()
        b.close()
    with running(make_client) as client:
        a, b = Seat(client, tid, tokens[0], 0), Seat(client, tid, tokens[1], 1)
        va, vb = views(a, b)
        while not va["match"]["over"]:
            a.send(type="next")
            a.receive()
            b.receive()
            va = play_moves([a, b], random.Random(va["hand_number"]))
        vb = b.messages[-1]["view"]
        totals = va["match"]["totals"]
        assert max(totals.values()) >= 30 and totals["you"] != totals["ai"]
        assert vb["match"]["winner"] == ("ai" if va["match"]["winner"] == "you" else "you")
        row = get_table(a.store, tid)
        assert row.status == "over" and len(row.hands) == va["hand_number"]
        assert all(len(h["moves"]) == 48 for h in row.hands)
        assert [h["alex"] for h in row.hands] == [i % 2 for i in range(len(row.hands))]
        a.close()
        b.close()


def test_the_ai_takes_a_seat_and_a_player_leaves_to_the_ai(make_client):
    with running(make_client) as client:
        # an AI level in the second seat from the start: it leads as Alex, the opener is Bob
        _a, none, v = open_table(client, seat="bob", ai_level="greedy")
        assert none is None and v["invite"] is None and v["opponent"] == {"kind": "ai", "level": "greedy"}
        assert v["hand"]["moves_played"] == 1 and v["steps"][0]["by"] == "ai"
        # an empty seat given to the AI while waiting
        a2, b2, v2 = open_table(client)
        c = Seat(client, v2["id"], v2["token"], 0)
        r = client.post(f"/api/tables/{v2['id']}/ai", json={"level": "random"}, headers={TOKEN: c.token})
        assert r.status_code == 409  # b2 joined already: both seats are taken
        r = client.post("/api/tables", json={})
        lone = Seat(client, r.json()["id"], r.json()["token"], 0)
        first = lone.connect()["view"]
        assert first["status"] == "waiting"
        lone.http("POST", "/ai", json={"level": "greedy"})
        got = lone.receive()["view"]
        assert got["status"] == "playing" and got["opponent"]["kind"] == "ai"
        # leaving over HTTP: the AI plays on alone, the token opens nothing any more
        r = lone.http("POST", "/leave", json={"level": "random"})
        assert r.status_code == 200 and r.json() == {"left": True, "player": 0}
        assert lone.http("GET", "").status_code == 404
        row = get_table(lone.store, lone.table_id)
        assert [s["kind"] for s in row.seats] == ["ai", "ai"] and row.status == "over"
        assert len(row.hands[0]["moves"]) == 48  # the two AIs played the hand out
        # a player leaves mid-hand: the AI plays their turns, the other plays on alone
        _va, _vb = views(a2, b2)
        play_moves([a2, b2], random.Random(6), limit=3)
        b2.send(type="leave", level="heuristic")
        got = a2.receive()
        assert got["view"]["opponent"] == {"kind": "ai", "level": "heuristic"}
        assert all(s["by"] == "ai" for s in got["steps"])
        assert got["view"]["hand"]["to_move"] in ("you", None)
        assert client.get(f"/api/tables/{a2.table_id}", headers={TOKEN: b2.token}).status_code == 404
        view = got["view"]
        rng = random.Random(7)
        while view["status"] == "playing":
            m = rng.choice(view["hand"]["legal"])
            a2.send(type="move", card=m["card"], captured=m["captured"])
            view = a2.receive()["view"]
        assert view["status"] == "over" and view["hand"]["moves_played"] == 48
        for s in (a2, b2, lone):
            s.close()


def test_the_clock_forfeits_the_hand_of_a_player_out_of_time(make_client):
    clock = FakeClock()
    with running(make_client, clock=clock, sweep_every=0) as client:
        a, b, _ = open_table(client, clock_s=30)
        va, vb = views(a, b)
        assert va["clock"] == {"per_move_s": 30, "left_s": 30.0, "to_move": "you"}
        assert vb["clock"]["to_move"] == "ai"
        play_moves([a, b], random.Random(8), limit=2)  # each move restarts the clock
        clock.now += 29.5
        b.send(type="sync")
        assert b.receive()["view"]["clock"]["left_s"] == 0.5  # not yet
        clock.now += 1
        b.send(type="sync")  # any touch of the table applies the forfeit; both hear of it
        ga, gb = a.receive()["view"], b.receive()["view"]
        assert ga["status"] == gb["status"] == "over"
        assert ga["result"]["timeout"] == "you" and gb["result"]["timeout"] == "ai"
        assert ga["result"]["points"][0] == 0 and ga["result"]["points"][1] >= 1
        assert ga["match"]["winner"] == "ai" and gb["match"]["winner"] == "you"
        assert ga["clock"]["left_s"] is None
        # the forfeited hand's replay opens for both
        assert len(a.http("GET", "/replay").json()["moves"]) == 2
        # the hub's sweep applies a forfeit without any request
        c, d, _ = open_table(client, clock_s=10)
        views(c, d)
        clock.now += 11
        assert client.portal.call(client.app.state.hub.sweep) == 1
        assert c.receive()["view"]["result"]["timeout"] == "you"
        assert d.receive()["view"]["result"]["timeout"] == "ai"
        assert client.portal.call(client.app.state.hub.sweep) == 0
        for s in (a, b, c, d):
            s.close()


def test_an_old_database_is_migrated_and_keeps_its_games(make_client, db):
    client = make_client()
    g = client.post("/api/games", json={"level": "greedy"}).json()
    client.app.state.service.store.close_all()
    with sqlite3.connect(db) as conn:  # make it a schema-1 file, as the last release wrote it
        conn.execute("DROP TABLE tables")
        conn.execute("UPDATE meta SET value = '1' WHERE key = 'schema'")
    client = make_client()
    assert client.get(f"/api/games/{g['id']}", headers={TOKEN: g["token"]}).status_code == 200
    assert client.post("/api/tables", json={}).status_code == 201
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone() == ("3",)


def test_seat_of_alternates():
    assert [seat_of({"alex": h % 2}, 0) for h in range(4)] == [0, 1, 0, 1]


def test_the_leak_check_finds_a_planted_card(make_client):
    """The check the other tests rely on: the other seat's card, an undealt card or the deck in a
    message is found; the same message without it passes."""
    from pasur.game.cards import format_card, parse_deck

    with running(make_client) as client:
        a, b, _ = open_table(client)
        view = a.connect()
        hand = get_table(a.store, a.table_id).hands[0]
        deck = parse_deck(hand["deck"])
        assert table_leaks(view, [hand], 0) == []
        theirs = format_card(next(iter(_cards(deck.hand_mask(1, 0)))))
        undealt = format_card(next(iter(_cards(deck.hand_mask(0, 3)))))
        for planted in (theirs, undealt):
            bad = {**view, "view": {**view["view"], "hand": {**view["view"]["hand"], "note": planted}}}
            assert "hidden cards" in table_leaks(bad, [hand], 0)[0]
        assert "a deck" in table_leaks({**view, "extra": hand["deck"]}, [hand], 0)
        # Bob's own cards are no leak to Bob, but they are to Alex
        bobs = b.connect()
        assert table_leaks(bobs, [hand], 1) == [] and table_leaks(bobs, [hand], 0) != []


def _cards(mask: int):
    from pasur.game.cards import cards_of

    return cards_of(mask)


def test_random_junk_on_the_socket_gets_4xx_answers(make_client):
    """Messages of every wrong shape: each is answered with a 4xx error to its sender, and the
    socket and the table go on."""
    rng = random.Random(9)
    # no atom names a card alone, so no message is a legal move
    atoms = [None, True, 0, -1, 10**20, 1.5, "", "ZZ", "move", [], {}, ["7C"], {"a": 1}, "x" * 300]
    with running(make_client) as client:
        a, b, _ = open_table(client)
        va, _ = views(a, b)
        for _ in range(150):
            msg = {k: rng.choice(atoms) for k in rng.sample(["type", "card", "captured", "moves_played", "level"], 3)}
            if rng.random() < 0.5:
                msg["type"] = rng.choice(["move", "next", "sync", "hello", "leave", 7])
            if msg.get("type") in ("sync", "leave"):
                continue  # valid messages of their own (tested above)
            a.ws.send_json(msg)
            got = a.receive()
            assert got["type"] == "error" and 400 <= got["status"] < 500, (msg, got)
        m = va["hand"]["legal"][0]
        a.send(type="move", card=m["card"], captured=m["captured"])
        assert a.receive()["type"] == "update" and b.receive()["steps"][0]["by"] == "ai"


def test_a_damaged_table_record_is_never_a_500(make_client, db):
    """A table whose row cannot be read is a 404 (logged); one whose stored moves the rules
    refuse is a 409 to its players; the other tables are served as before."""
    with running(make_client) as client:
        a, _, _ = open_table(client)
        c, _, _ = open_table(client)
        store = a.store
        with store.transaction() as conn:
            conn.execute("UPDATE tables SET hands = '[{broken' WHERE id = ?", (a.table_id,))
        assert a.http("GET", "").status_code == 404
        row = get_table(store, c.table_id)
        row.hands[0]["moves"] = [[0, 0], [0, 0]]  # the same card twice: the rules refuse it
        from pasur.web.store import update_table

        update_table(store, row)
        r = c.http("GET", "")
        assert r.status_code == 409 and r.json() == {"error": "this game's record is damaged"}
        assert c.http("POST", "/moves", json={"card": "7C"}).status_code == 409
        fresh, _, _ = open_table(client)
        assert fresh.http("GET", "").status_code == 200
