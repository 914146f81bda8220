"""Issue 46, item 2: a rated match cannot hang for ever. A rated table always has a clock (a
default the opener may change within its bounds); a player who loses two hands in a row by the
clock has abandoned the match: they forfeit it, rated as lost, the other is told and the table
closes. A table nobody joins closes. The clock is injectable: no test sleeps."""

from __future__ import annotations

import sqlite3

from test_web_ratings_api import me, new_player
from test_web_tables import TOKEN, FakeClock, Seat, open_table, running, views

from pasur.web.tables import JOIN_TTL, RATED_CLOCK


def rated_table(client, clock_s: int | None = None) -> tuple[Seat, Seat, str, str]:
    ta, tb = new_player(client, "Arash"), new_player(client, "Bahar")
    body = {"rules": {"target": 62}, "rated": True, "player_token": ta}
    if clock_s is not None:
        body["clock_s"] = clock_s
    v = client.post("/api/tables", json=body).json()
    j = client.post(f"/api/tables/{v['id']}/join", json={"invite": v["invite"], "player_token": tb}).json()
    a, b = Seat(client, v["id"], v["token"], 0), Seat(client, v["id"], j["token"], 1)
    client.seats += [a, b]
    return a, b, ta, tb


def test_a_rated_table_has_a_clock_by_default_and_the_opener_may_change_it(make_client):
    with running(make_client) as client:
        a, b, _, _ = rated_table(client)
        va, _ = views(a, b)
        assert va["clock"]["per_move_s"] == RATED_CLOCK == 120
        tp = new_player(client, "Cyrus")
        v = client.post("/api/tables", json={"rules": {"target": 62}, "rated": True, "player_token": tp, "clock_s": 30})
        assert v.json()["clock"]["per_move_s"] == 30
        for bad in (4, 3601):
            r = client.post(
                "/api/tables", json={"rules": {"target": 62}, "rated": True, "player_token": tp, "clock_s": bad}
            )
            assert r.status_code == 422


def test_a_player_absent_for_two_hands_forfeits_the_rated_match(make_client):
    """Arash walks away. The clock forfeits his hand; Bahar deals the next and plays; the clock
    forfeits his second hand: the match is Bahar's, both are told, both ratings are updated (his
    down, hers up) and the table takes no more moves."""
    clock = FakeClock()
    with running(make_client, clock=clock, sweep_every=0) as client:
        hub = client.app.state.hub
        a, b, ta, tb = rated_table(client, clock_s=30)
        va, _ = views(a, b)
        assert va["clock"]["to_move"] == "you"  # Arash is Alex in hand 1
        clock.now += 31
        assert client.portal.call(hub.sweep) == 1
        ga, gb = a.receive()["view"], b.receive()["view"]
        assert ga["status"] == "hand_over" and ga["result"]["timeout"] == "you" and not gb["match"]["over"]
        r = b.http("POST", "/next")  # Bahar is Alex in hand 2: she moves, then Arash's clock runs
        assert r.status_code == 200, r.text
        a.receive()
        b.receive()
        m = r.json()["hand"]["legal"][0]
        b.send(type="move", card=m["card"], captured=m["captured"])
        a.receive()
        assert b.receive()["view"]["clock"]["to_move"] == "ai"
        clock.now += 31
        assert client.portal.call(hub.sweep) == 1
        ga, gb = a.receive()["view"], b.receive()["view"]
        assert ga["status"] == gb["status"] == "over"
        assert gb["match"] == {**gb["match"], "over": True, "winner": "you", "abandoned": "ai"}
        assert ga["match"]["winner"] == "ai" and ga["match"]["abandoned"] == "you"
        assert ga["result"]["abandoned"] == "you" and gb["result"]["abandoned"] == "ai"
        arash, bahar = me(client, ta), me(client, tb)
        assert arash["games"] == bahar["games"] == 2
        assert arash["rating"] < 1500 < bahar["rating"]
        assert b.http("POST", "/next").status_code == 409  # closed: no more hands
        assert client.portal.call(hub.sweep) == 0


def test_forfeits_that_are_not_in_a_row_by_one_player_do_not_end_the_match(make_client):
    clock = FakeClock()
    with running(make_client, clock=clock, sweep_every=0) as client:
        hub = client.app.state.hub
        a, b, _, _ = rated_table(client, clock_s=30)
        views(a, b)
        clock.now += 31  # Arash (Alex in hand 1) out of time
        assert client.portal.call(hub.sweep) == 1
        a.receive(), b.receive()
        a.http("POST", "/next")
        a.receive(), b.receive()
        clock.now += 31  # Bahar (Alex in hand 2) out of time: one forfeit each
        assert client.portal.call(hub.sweep) == 1
        ga = a.receive()["view"]
        b.receive()
        assert ga["status"] == "hand_over" and ga["result"]["timeout"] == "ai"
        assert ga["match"]["abandoned"] is None and not ga["match"]["over"]


def test_a_table_nobody_joins_closes(make_client):
    clock = FakeClock()
    with running(make_client, clock=clock, sweep_every=0) as client:
        hub = client.app.state.hub
        r = client.post("/api/tables", json={})
        v = r.json()
        assert v["clock"]["left_s"] is None  # the wait for the invited person is not a move clock
        clock.now += JOIN_TTL - 1
        assert client.portal.call(hub.sweep) == 0
        clock.now += 2
        assert client.portal.call(hub.sweep) == 1
        got = client.get(f"/api/tables/{v['id']}", headers={TOKEN: v["token"]}).json()
        assert got["status"] == "over"
        r = client.post(f"/api/tables/{v['id']}/join", json={"invite": v["invite"]})
        assert r.status_code == 404
        with sqlite3.connect(client.app.state.tables.store.path) as conn:
            assert conn.execute("SELECT deadline FROM tables WHERE id = ?", (v["id"],)).fetchone() == (None,)
        open_table(client)  # other tables open as before
