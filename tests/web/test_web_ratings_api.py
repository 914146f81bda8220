"""Rated players and the ladder through the API and the WebSocket (issue 28, part 3): a rated
match between two people moves both ratings exactly as ``ratings.rate`` computes from the match's
hands, a rated match against an AI level moves the person only, hints are refused at rated tables,
names are unique, the ladder, the migration of a schema-2 file, and bad requests answered 4xx."""

from __future__ import annotations

import random
import sqlite3

import pytest
from test_web_tables import TOKEN, FakeClock, Seat, open_table, play_moves, running, views

from conftest import FAST
from pasur.web.level_card import ARENA_FOLDERS, load_card
from pasur.web.players import hand_scores
from pasur.web.ratings import Rating, rate
from pasur.web.store import SCHEMA_VERSION, StaleWrite, Store, get_table, update_table


def new_player(client, name: str) -> str:
    r = client.post("/api/players", json={"name": name})
    assert r.status_code == 201, r.text
    got = r.json()
    assert got["name"] == name and got["games"] == 0 and (got["rating"], got["rd"]) == (1500.0, 350.0)
    return got["token"]


def me(client, token: str) -> dict:
    r = client.get("/api/players/me", headers={TOKEN: token})
    assert r.status_code == 200, r.text
    return r.json()


def set_rating(client, token: str, rating: float, rd: float, volatility: float = 0.06) -> None:
    from pasur.web.service import token_hash

    with sqlite3.connect(client.app.state.service.store.path) as conn:
        conn.execute(
            "UPDATE players SET rating = ?, rd = ?, volatility = ? WHERE token_sha256 = ?",
            (rating, rd, volatility, token_hash(token)),
        )


def play_match(a: Seat, b: Seat, rng: random.Random) -> dict:
    """Both connected: every hand played with random legal moves, the next dealt, to the end."""
    while True:
        end = play_moves([a, b], rng)
        if end["match"]["over"]:
            return end
        a.send(type="next")
        a.receive()
        b.receive()


def exact(player: dict, expected: Rating) -> None:
    assert player["rating"] == round(expected.rating, 1)
    assert player["rd"] == round(expected.rd, 1)
    assert player["volatility"] == round(expected.volatility, 6)


def test_a_rated_match_between_two_people_moves_both_ratings_as_rate_computes(make_client):
    with running(make_client) as client:
        ta, tb = new_player(client, "Alice"), new_player(client, "Babak")
        set_rating(client, ta, 1600.0, 200.0)  # not the default: each is rated against the other's old rating
        r = client.post("/api/tables", json={"rules": {"target": 30}, "rated": True, "player_token": ta})
        v = r.json()
        assert r.status_code == 201 and v["rated"] is True and v["names"] == {"you": "Alice", "ai": None}
        assert client.post(f"/api/tables/{v['id']}/join", json={"invite": v["invite"]}).status_code == 422
        bad = client.post(f"/api/tables/{v['id']}/join", json={"invite": v["invite"], "player_token": ta})
        assert bad.status_code == 409  # not against oneself
        j = client.post(f"/api/tables/{v['id']}/join", json={"invite": v["invite"], "player_token": tb})
        assert j.status_code == 200, j.text
        a, b = Seat(client, v["id"], v["token"], 0), Seat(client, v["id"], j.json()["token"], 1)
        va, vb = views(a, b)
        assert va["names"] == {"you": "Alice", "ai": "Babak"} and vb["names"] == {"you": "Babak", "ai": "Alice"}
        play_match(a, b, random.Random(11))
        row = get_table(a.store, a.table_id)
        assert row.status == "over" and row.rated
        sa, sb = hand_scores(row.hands, 0), hand_scores(row.hands, 1)
        assert len(sa) == len(row.hands) >= 2 and [1 - s for s in sa] == sb
        old_a, old_b = Rating(1600.0, 200.0), Rating()
        want_a = rate(old_a, [(old_b.rating, old_b.rd, s) for s in sa])
        want_b = rate(old_b, [(old_a.rating, old_a.rd, s) for s in sb])
        pa, pb = me(client, ta), me(client, tb)
        exact(pa, want_a)
        exact(pb, want_b)
        assert pa["games"] == pb["games"] == len(row.hands)
        # the events, with the exact numbers before and after
        with sqlite3.connect(a.store.path) as conn:
            events = conn.execute(
                "SELECT opponent, games, score, rating_before, rd_before, rating_after, rd_after, volatility_after "
                "FROM rating_events WHERE table_id = ? ORDER BY player_id",
                (a.table_id,),
            ).fetchall()
        assert events == [
            ("Babak", len(sa), sum(sa), 1600.0, 200.0, want_a.rating, want_a.rd, want_a.volatility),
            ("Alice", len(sb), sum(sb), 1500.0, 350.0, want_b.rating, want_b.rd, want_b.volatility),
        ]
        # touching the finished table again rates nothing twice
        a.send(type="sync")
        a.receive()
        assert me(client, ta) == pa
        a.close()
        b.close()


def test_a_rated_match_against_an_ai_level_moves_only_the_person(make_client):
    with running(make_client, levels={**FAST, "pimc": "pimc:60"}) as client:
        tp = new_player(client, "Parisa")
        # pimc:60 plays in no committed arena (the card's pimc is pimc:20): this server's pimc
        # level has no rating, and cannot be a rated opponent
        r = client.post(
            "/api/tables", json={"rules": {"target": 20}, "rated": True, "player_token": tp, "ai_level": "pimc"}
        )
        assert r.status_code == 422 and "no rating" in r.json()["error"]
        r = client.post(
            "/api/tables", json={"rules": {"target": 20}, "rated": True, "player_token": tp, "ai_level": "heuristic"}
        )
        assert r.status_code == 201, r.text
        v = r.json()
        assert v["invite"] is None and v["names"] == {"you": "Parisa", "ai": None}
        p = Seat(client, v["id"], v["token"], 0)
        view = p.connect()["view"]
        rng = random.Random(12)
        while not view["match"]["over"]:
            if view["status"] == "hand_over":
                p.send(type="next")
            else:
                m = rng.choice(view["hand"]["legal"])
                p.send(type="move", card=m["card"], captured=m["captured"])
            view = p.receive()["view"]
        row = get_table(p.store, p.table_id)
        level = client.app.state.tables.board.rating("heuristic")
        assert level is not None and level.se_robust > 0
        scores = hand_scores(row.hands, 0)
        want = rate(Rating(), [(level.rating, level.se_robust, s) for s in scores])
        got = me(client, tp)
        exact(got, want)
        assert got["games"] == len(row.hands)
        with sqlite3.connect(p.store.path) as conn:
            assert conn.execute("SELECT player_id, opponent FROM rating_events").fetchall() == [(1, "ai:heuristic")]
        # the level's rating did not move
        assert client.app.state.tables.board.rating("heuristic") == level
        # an open seat of a rated table goes only to a rated level
        r = client.post("/api/tables", json={"rules": {"target": 20}, "rated": True, "player_token": tp})
        w = r.json()
        r = client.post(f"/api/tables/{w['id']}/ai", json={"level": "pimc"}, headers={TOKEN: w["token"]})
        assert r.status_code == 422
        r = client.post(f"/api/tables/{w['id']}/ai", json={"level": "greedy"}, headers={TOKEN: w["token"]})
        assert r.status_code == 200 and r.json()["rated"] is True
        p.close()


def test_hints_are_given_only_where_no_other_person_plays(make_client):
    """Issue 46, item 5: at an unrated table of two people the page hid the hint button, but
    ``GET .../hint`` answered 200, so one friend could use the AI in secret. Now the server refuses
    it there (409) and both players' views say hints are off; at an unrated table against an AI
    they are on, and at a rated table off."""
    with running(make_client) as client:
        a, b, _v = open_table(client)
        va, vb = views(a, b)
        assert va["hints"] is False and vb["hints"] is False
        mover, other = (a, b) if va["hand"]["to_move"] == "you" else (b, a)
        r = mover.http("GET", "/hint")
        assert r.status_code == 409 and r.json() == {"error": "hints are off at a table of two people"}
        assert other.http("GET", "/hint").status_code == 409
        assert client.get(f"/api/tables/{a.table_id}/hint").status_code == 404  # no token
        a.close()
        b.close()
        solo, _, sv = open_table(client, ai_level="greedy", seat="bob")
        assert sv["hints"] is True
        view = solo.connect()["view"]
        assert view["hints"] is True and view["hand"]["to_move"] == "you"
        r = solo.http("GET", "/hint")
        assert r.status_code == 200, r.text
        hint = r.json()
        assert hint["level"] == "greedy" and len(hint["moves"]) == len(view["hand"]["legal"])
        assert sum(m["best"] for m in hint["moves"]) >= 1
        solo.close()
        tp = new_player(client, "Hamid")
        r = client.post(
            "/api/tables", json={"rules": {"target": 20}, "rated": True, "player_token": tp, "ai_level": "greedy"}
        )
        v = r.json()
        assert v["hints"] is False
        r = client.get(f"/api/tables/{v['id']}/hint", headers={TOKEN: v["token"]})
        assert r.status_code == 409 and "rated" in r.json()["error"]


def test_names_are_unique_and_checked(make_client):
    client = make_client()
    token = new_player(client, "Shirin")
    for taken in ("Shirin", "shirin", "  SHIRIN "):
        r = client.post("/api/players", json={"name": taken})
        assert r.status_code == 409 and "taken" in r.json()["error"]
    new_player(client, "شیرین")  # any script
    new_player(client, "نیک\u200cنام")  # with Persian's zero-width non-joiner
    for bad in (
        "ab",
        "x" * 25,
        "7C",
        "Ali 7c",
        "10d",
        "<script>",
        "a\u0000bc",
        "   ",
        "ab\u200b",
        "a/b/c",
        "...",
        "123",
    ):
        r = client.post("/api/players", json={"name": bad})
        assert r.status_code == 422, (bad, r.text)
    # the token is returned once, stored hashed; it opens only its player
    assert me(client, token)["name"] == "Shirin"
    assert client.get("/api/players/me", headers={TOKEN: "nope"}).status_code == 404
    assert client.get("/api/players/me").status_code == 404
    with sqlite3.connect(client.app.state.service.store.path) as conn:
        stored = conn.execute("SELECT * FROM players").fetchall()
    assert token not in repr(stored)


def test_the_ladder_lists_players_by_rating_and_the_ai_levels(make_client):
    client = make_client()
    tokens = {name: new_player(client, name) for name in ("Dara", "Elham", "Farid")}
    set_rating(client, tokens["Dara"], 1450.0, 120.0)
    set_rating(client, tokens["Farid"], 1720.5, 80.0)
    with sqlite3.connect(client.app.state.service.store.path) as conn:  # the ladder lists who played a rated hand
        conn.execute("UPDATE players SET games = 1")
    r = client.get("/api/ladder")
    assert r.status_code == 200
    ladder = r.json()
    assert [(p["rank"], p["name"], p["rating"], p["rd"]) for p in ladder["players"]] == [
        (1, "Farid", 1720.5, 80.0),
        (2, "Elham", 1500.0, 350.0),
        (3, "Dara", 1450.0, 120.0),
    ]
    assert [p["name"] for p in client.get("/api/ladder?limit=1").json()["players"]] == ["Farid"]
    ai = ladder["ai"]
    levels = {x["level"]: x for x in ai["levels"]}
    assert list(levels) == ["random", "greedy", "heuristic"] and ai["unrated"] == []  # the test levels
    assert levels["greedy"]["rating"] == 1500.0 and levels["greedy"]["rd"] == 0.0  # the anchor
    assert levels["random"]["rating"] < 1500.0 < levels["heuristic"]["rating"] and levels["heuristic"]["hands"] > 0
    shipped = {r["level"]: r for r in load_card()["levels"]}  # read from the card shipped with the package
    assert all(levels[n]["rating"] == round(shipped[n]["rating"], 1) for n in levels)
    assert ai["source"]["anchor"] == "greedy" and ai["source"]["error"] is None
    assert ai["source"]["folders"] == list(ARENA_FOLDERS)


def test_a_schema_2_file_is_migrated_and_keeps_its_tables(make_client, db):
    client = make_client()
    g = client.post("/api/games", json={"level": "greedy"}).json()
    t = client.post("/api/tables", json={"ai_level": "greedy"}).json()
    client.app.state.service.store.close_all()
    with sqlite3.connect(db) as conn:  # make it a schema-2 file, as the last release wrote it
        conn.execute("DROP TABLE players")
        conn.execute("DROP TABLE rating_events")
        conn.execute("ALTER TABLE tables DROP COLUMN rated")
        conn.execute("UPDATE meta SET value = '2' WHERE key = 'schema'")
    client = make_client()
    assert client.get(f"/api/games/{g['id']}", headers={TOKEN: g["token"]}).status_code == 200
    r = client.get(f"/api/tables/{t['id']}", headers={TOKEN: t["token"]})
    assert r.status_code == 200 and r.json()["rated"] is False
    token = new_player(client, "Kaveh")
    r = client.post(
        "/api/tables", json={"rules": {"target": 20}, "rated": True, "player_token": token, "ai_level": "greedy"}
    )
    assert r.status_code == 201
    with sqlite3.connect(db) as conn:
        assert conn.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone() == (str(SCHEMA_VERSION),)
        assert SCHEMA_VERSION == 3
        assert conn.execute("SELECT rated FROM tables ORDER BY created_at").fetchall() == [(0,), (1,)]
    Store(db)  # reopened: nothing to migrate


def test_the_ratings_are_written_with_the_last_move_or_not_at_all(make_client):
    client = make_client()
    t = client.post("/api/tables", json={"ai_level": "greedy"}).json()
    store = client.app.state.service.store
    row = get_table(store, t["id"])

    def fails(db):
        db.execute(
            "INSERT INTO rating_events (player_id, table_id, opponent, games, score, rating_before, "
            "rd_before, volatility_before, rating_after, rd_after, volatility_after, at) "
            "VALUES (1, 'x', 'y', 1, 1, 1, 1, 1, 1, 1, 1, 1)"
        )
        raise RuntimeError("boom")

    row.status = "over"
    with pytest.raises(RuntimeError):
        update_table(store, row, fails)
    again = get_table(store, t["id"])
    assert again.version == row.version and again.status != "over"
    with sqlite3.connect(store.path) as conn:
        assert conn.execute("SELECT COUNT(*) FROM rating_events").fetchone() == (0,)
    row.version -= 1
    with pytest.raises(StaleWrite):
        update_table(store, row, fails)  # a stale row: the rating update never runs


@pytest.mark.allow_seeds
def test_bad_rating_requests_are_4xx(make_client):
    with running(make_client) as client:
        tp, tq = new_player(client, "Nima"), new_player(client, "Omid")
        match = {"target": 20}
        bad_tables = [
            {"rated": True, "player_token": tp},  # a single hand
            {"rules": match, "rated": True},  # no player
            {"rules": match, "rated": True, "player_token": "nobody"},  # unknown player
            {"rules": match, "player_token": tp},  # a token at an unrated table
            {"rules": match, "rated": "yes", "player_token": tp},
            {"rules": match, "rated": True, "player_token": ""},
            {"rules": match, "rated": True, "player_token": tp, "seed": 3},
            {"rules": match, "rated": True, "player_token": tp, "ai_level": "nope"},
            {"rules": match, "rated": True, "player_token": ["x"]},
        ]
        for body in bad_tables:
            r = client.post("/api/tables", json=body)
            assert 400 <= r.status_code < 500, (body, r.text)
        for body in ({}, {"name": 5}, {"name": "Okay", "x": 1}, {"name": ""}, {"name": "z" * 65}):
            r = client.post("/api/players", json=body)
            assert 400 <= r.status_code < 500, (body, r.text)
        for q in ("limit=0", "limit=1001", "limit=x"):
            assert client.get(f"/api/ladder?{q}").status_code == 422
        # an unrated table's join refuses a player token; a rated match cannot be left to the AI
        r = client.post("/api/tables", json={})
        u = r.json()
        r = client.post(f"/api/tables/{u['id']}/join", json={"invite": u["invite"], "player_token": tp})
        assert r.status_code == 422
        r = client.post("/api/tables", json={"rules": match, "rated": True, "player_token": tp})
        w = r.json()
        j = client.post(f"/api/tables/{w['id']}/join", json={"invite": w["invite"], "player_token": tq}).json()
        for token in (w["token"], j["token"]):
            r = client.post(f"/api/tables/{w['id']}/leave", json={"level": "greedy"}, headers={TOKEN: token})
            assert r.status_code == 409 and "rated" in r.json()["error"]
        # a rated table still waiting may be closed by its opener
        r = client.post("/api/tables", json={"rules": match, "rated": True, "player_token": tp})
        x = r.json()
        assert client.post(f"/api/tables/{x['id']}/leave", headers={TOKEN: x["token"]}).status_code == 200


def test_a_rated_match_ended_by_the_clock_is_rated_by_the_sweep(make_client):
    clock = FakeClock()
    with running(make_client, clock=clock, sweep_every=0) as client:
        ta, tb = new_player(client, "Golnar"), new_player(client, "Hooman")
        r = client.post("/api/tables", json={"rules": {"target": 1}, "rated": True, "player_token": ta, "clock_s": 10})
        v = r.json()
        j = client.post(f"/api/tables/{v['id']}/join", json={"invite": v["invite"], "player_token": tb}).json()
        a, b = Seat(client, v["id"], v["token"], 0), Seat(client, v["id"], j["token"], 1)
        va, _vb = views(a, b)
        assert va["clock"]["to_move"] == "you"
        clock.now += 11  # Golnar runs out of time: the hand, and so the match to 1, is Hooman's
        assert client.portal.call(client.app.state.hub.sweep) == 1
        ga, gb = a.receive()["view"], b.receive()["view"]
        assert ga["match"]["over"] and ga["match"]["winner"] == "ai" and gb["match"]["winner"] == "you"
        exact(me(client, ta), rate(Rating(), [(1500.0, 350.0, 0.0)]))
        exact(me(client, tb), rate(Rating(), [(1500.0, 350.0, 1.0)]))
        a.close()
        b.close()
