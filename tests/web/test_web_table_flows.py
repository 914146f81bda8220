"""The flows around a table's play (issue 44, item 4) through the API and the WebSocket: the short
join code (made, unique among waiting tables, typed in any case, unknown 404, malformed 422), one's
own invite refused (409), *Resign* (the match over, both told, rated with the hand lost, the rating
change in both views) and the rematch (both ask, a new table with the seats swapped, opened by the
same tokens). Every message to each seat is checked for cards it may not see (``Seat``)."""

from __future__ import annotations

import random
import re

import pytest
from fastapi.testclient import TestClient
from test_web_ratings_api import exact, me, new_player
from test_web_tables import TOKEN, FakeClock, Seat, open_table, play_moves, running, views

from pasur.web import tables as tables_module
from pasur.web.limits import FAILURES_PER_WINDOW, FailureLimiter
from pasur.web.players import hand_scores
from pasur.web.ratings import Rating, rate
from pasur.web.store import get_table
from pasur.web.table_flows import CODE_ALPHABET, normalize_code


def _open(client, **body) -> dict:
    r = client.post("/api/tables", json=body)
    assert r.status_code == 201, r.text
    return r.json()


def test_a_waiting_table_has_a_join_code_that_joins_in_any_case(make_client):
    with running(make_client) as client:
        v = _open(client)
        code = v["join_code"]
        assert re.fullmatch(f"[{CODE_ALPHABET}]{{6}}", code) and not set(code) & set("0O1IL")
        a = Seat(client, v["id"], v["token"], 0)
        assert a.connect()["view"]["join_code"] == code  # a reloaded page shows it again
        # typed in small letters, with a dash or spaces: the same table
        for typed in (code.lower(), f"{code[:3]}-{code[3:]}", f" {code[:3]} {code[3:].lower()} "):
            r = client.get(f"/api/tables/by-code/{typed}")
            assert r.status_code == 200, r.text
            assert r.json() == {"id": v["id"], "invite": code, "rated": False}
        # the code joins as the invite does
        r = client.post(f"/api/tables/{v['id']}/join", json={"invite": code.lower()})
        assert r.status_code == 200, r.text
        b = Seat(client, v["id"], r.json()["token"], 1)
        b.check(r.json())
        assert r.json()["join_code"] is None and r.json()["status"] == "playing"
        got = a.receive()["view"]
        assert got["join_code"] is None and got["opponent"]["kind"] == "person"
        # spent with the wait: the code, and the link's invite, find nothing now
        assert client.get(f"/api/tables/by-code/{code}").status_code == 404
        assert client.post(f"/api/tables/{v['id']}/join", json={"invite": code}).status_code == 404
        assert client.post(f"/api/tables/{v['id']}/join", json={"invite": v["invite"]}).status_code == 404
        assert get_table(a.store, v["id"]).join_code is None
        a.close()


def test_unknown_and_malformed_codes(make_client):
    with running(make_client) as client:
        v = _open(client)
        free = next(c * 6 for c in CODE_ALPHABET if c * 6 != v["join_code"])
        r = client.get(f"/api/tables/by-code/{free}")
        assert r.status_code == 404 and r.json() == {"error": "no table waits with this code"}
        for bad in ("ABC", "ABCDEFG", "ABCDE0", "ABCDEO", "ABCDE1", "ABCDEI", "ABCDEL", "ABC DE", "ÄBCDEF", "A" * 40):
            r = client.get(f"/api/tables/by-code/{bad}")
            assert r.status_code == 422, (bad, r.status_code, r.text)
        assert client.get("/api/tables/by-code/AB/CDEF").status_code == 404  # no such route
        # a code of another table does not open this one
        w = _open(client)
        r = client.post(f"/api/tables/{v['id']}/join", json={"invite": w["join_code"]})
        assert r.status_code == 404
        # a table that got the AI, or was closed, is not found by its code any more
        client.post(f"/api/tables/{w['id']}/ai", json={"level": "greedy"}, headers={TOKEN: w["token"]})
        assert client.get(f"/api/tables/by-code/{w['join_code']}").status_code == 404
        client.post(f"/api/tables/{v['id']}/leave", headers={TOKEN: v["token"]})
        assert client.get(f"/api/tables/by-code/{v['join_code']}").status_code == 404


def test_wrong_codes_are_limited_per_client(make_client):
    clock = FakeClock()
    with running(make_client, clock=clock) as client:
        v = _open(client)
        wrong = [c * 6 for c in CODE_ALPHABET if c * 6 != v["join_code"]]
        for code in wrong[: FAILURES_PER_WINDOW - 1]:
            assert client.get(f"/api/tables/by-code/{code}").status_code == 404
        r = client.post(f"/api/tables/{v['id']}/join", json={"invite": wrong[-1]})  # a wrong join counts too
        assert r.status_code == 404
        # over the limit: 429 with Retry-After, before any lookup (even the right code waits)
        for path in (f"/api/tables/by-code/{wrong[0]}", f"/api/tables/by-code/{v['join_code']}"):
            r = client.get(path)
            assert r.status_code == 429 and 1 <= int(r.headers["Retry-After"]) <= 60, r.text
            assert r.json() == {"error": "too many wrong codes: wait a minute and try again"}
        r = client.post(f"/api/tables/{v['id']}/join", json={"invite": v["join_code"]})
        assert r.status_code == 429
        # another client is not held back: the right code finds and joins the table
        other = TestClient(client.app, client=("203.0.113.7", 40000))
        assert other.get(f"/api/tables/by-code/{v['join_code'].lower()}").json()["id"] == v["id"]
        # the first client may try again once a token is back
        clock.now += int(r.headers["Retry-After"])
        assert client.get(f"/api/tables/by-code/{wrong[0]}").status_code == 404
        assert client.get(f"/api/tables/by-code/{wrong[1]}").status_code == 429
        r = other.post(f"/api/tables/{v['id']}/join", json={"invite": v["join_code"]})
        assert r.status_code == 200, r.text
        Seat(client, v["id"], r.json()["token"], 1).check(r.json())


def test_the_failure_limiter_forgets_refilled_clients_and_stays_under_its_cap():
    clock = FakeClock()
    limiter = FailureLimiter(per_window=3, window_s=60, max_clients=100, clock=clock)
    for _ in range(3):
        assert limiter.retry_after("a") is None
        limiter.failed("a")
    assert limiter.retry_after("a") == 20  # one token comes back every 60 / 3 s
    clock.now += 19.5
    assert limiter.retry_after("a") == 1
    # many distinct clients (a scan from many addresses): never more than the cap remembered
    for i in range(5000):
        limiter.failed(f"10.0.{i // 256}.{i % 256}")
        assert len(limiter) <= 100
    # an entry expires: after a window a client is forgotten and starts with a full bucket
    clock.now += 61
    limiter.failed("b")
    assert limiter.retry_after("10.0.19.135") is None
    for _ in range(60):
        limiter.failed("b")  # each call drops refilled buckets from the oldest end
    assert len(limiter) == 1 and limiter.retry_after("b") is not None


def test_codes_are_unique_among_waiting_tables(make_client, monkeypatch):
    drawn = iter(["ABCDEF", "ABCDEF", "ABCDEF", "XYZ234", "ABCDEF"])
    monkeypatch.setattr(tables_module, "draw_code", lambda: next(drawn))
    with running(make_client) as client:
        first = _open(client)
        second = _open(client)  # drew ABCDEF twice more (taken), then XYZ234
        assert (first["join_code"], second["join_code"]) == ("ABCDEF", "XYZ234")
        assert client.get("/api/tables/by-code/abcdef").json()["id"] == first["id"]
        assert client.get("/api/tables/by-code/xyz234").json()["id"] == second["id"]
        # once the first table is joined, its code is free for a new table
        j = client.post(f"/api/tables/{first['id']}/join", json={"invite": first["invite"]})
        assert j.status_code == 200
        third = _open(client)
        assert third["join_code"] == "ABCDEF"
        assert client.get("/api/tables/by-code/ABCDEF").json()["id"] == third["id"]


def test_normalize_code():
    assert normalize_code("ab-cd ef") == "ABCDEF"
    assert normalize_code("abcdef") == "ABCDEF"
    assert normalize_code("abcde") is None and normalize_code("abcdeo") is None


def test_ones_own_invite_is_refused(make_client):
    with running(make_client) as client:
        v = _open(client)
        for invite in (v["invite"], v["join_code"]):
            r = client.post(f"/api/tables/{v['id']}/join", json={"invite": invite}, headers={TOKEN: v["token"]})
            assert r.status_code == 409, r.text
            assert r.json() == {"error": "you already sit at this table: the invite is for your friend"}
        # the seat is still the friend's
        r = client.post(f"/api/tables/{v['id']}/join", json={"invite": v["invite"]})
        assert r.status_code == 200
        friend = r.json()["token"]
        # after the join, either seat's token gets 409 rather than 404 (they sit there)
        for token in (v["token"], friend):
            r = client.post(f"/api/tables/{v['id']}/join", json={"invite": v["invite"]}, headers={TOKEN: token})
            assert r.status_code == 409
        # a token of another table is no seat here: the spent invite is the usual 404
        w = _open(client)
        r = client.post(f"/api/tables/{v['id']}/join", json={"invite": v["invite"]}, headers={TOKEN: w["token"]})
        assert r.status_code == 404


def _rated_pair(client, names=("Shirin", "Kaveh"), target=62) -> tuple[Seat, Seat, str, str]:
    ta, tb = new_player(client, names[0]), new_player(client, names[1])
    v = _open(client, rules={"target": target}, rated=True, player_token=ta)
    j = client.post(f"/api/tables/{v['id']}/join", json={"invite": v["join_code"], "player_token": tb})
    assert j.status_code == 200, j.text
    return Seat(client, v["id"], v["token"], 0), Seat(client, v["id"], j.json()["token"], 1), ta, tb


def test_resign_ends_the_match_and_is_rated_as_a_loss(make_client):
    with running(make_client) as client:
        a, b, ta, tb = _rated_pair(client)
        views(a, b)
        play_moves([a, b], random.Random(3), limit=7)  # a hand in play
        assert b.http("POST", "/resign").status_code == 200
        ga, gb = a.receive()["view"], b.receive()["view"]
        assert ga["status"] == gb["status"] == "over"
        assert ga["match"]["over"] and ga["match"]["winner"] == "you" and ga["match"]["resigned"] == "ai"
        assert gb["match"]["winner"] == "ai" and gb["match"]["resigned"] == "you"
        assert gb["result"]["resigned"] == "you" and gb["result"]["timeout"] is None
        assert gb["result"]["points"][0] == 0 and gb["result"]["points"][1] >= 1  # the hand is lost
        row = get_table(a.store, a.table_id)
        scores = hand_scores(row.hands, 1)
        assert scores == [0.0]
        want_b = rate(Rating(), [(1500.0, 350.0, s) for s in scores])
        want_a = rate(Rating(), [(1500.0, 350.0, 1 - s) for s in scores])
        exact(me(client, tb), want_b)
        exact(me(client, ta), want_a)
        # both views say what the match did to both ratings
        assert gb["rating_change"] == {
            "you": {"before": 1500.0, "after": round(want_b.rating, 1)},
            "ai": {"before": 1500.0, "after": round(want_a.rating, 1)},
        }
        assert ga["rating_change"] == {"you": gb["rating_change"]["ai"], "ai": gb["rating_change"]["you"]}
        # over: nothing more to resign, or to play
        assert a.http("POST", "/resign").status_code == 409
        a.send(type="resign")
        assert a.receive() == {"type": "error", "status": 409, "error": "the match is over"}
        a.close()
        b.close()


def test_resign_between_hands_loses_the_next_hand(make_client):
    with running(make_client) as client:
        a, b, ta, _tb = _rated_pair(client, ("Roya", "Dara"))
        views(a, b)
        end = play_moves([a, b], random.Random(5))
        assert end["status"] == "hand_over"
        a.send(type="resign")  # over the socket
        ga, gb = a.receive()["view"], b.receive()["view"]
        assert ga["hand_number"] == 2 and ga["match"]["resigned"] == "you" and gb["match"]["winner"] == "you"
        row = get_table(a.store, a.table_id)
        scores = hand_scores(row.hands, 0)
        assert len(scores) == 2 and scores[1] == 0.0
        exact(me(client, ta), rate(Rating(), [(1500.0, 350.0, s) for s in scores]))
        a.close()
        b.close()


def test_resign_is_refused_where_there_is_no_match(make_client):
    with running(make_client) as client:
        v = _open(client)
        r = client.post(f"/api/tables/{v['id']}/resign", headers={TOKEN: v["token"]})
        assert r.status_code == 409
        for headers in ({}, {TOKEN: "x" * 43}):
            assert client.post(f"/api/tables/{v['id']}/resign", headers=headers).status_code == 404
            assert client.post(f"/api/tables/{v['id']}/rematch", headers=headers).status_code == 404
        assert client.post("/api/tables/nope/resign", headers={TOKEN: v["token"]}).status_code == 404
        r = client.post(f"/api/tables/{v['id']}/rematch", headers={TOKEN: v["token"]})
        assert r.status_code == 409  # nothing is over yet


def test_a_rematch_is_offered_to_both_and_swaps_the_seats(make_client):
    with running(make_client) as client:
        a, b, _ta, _tb = _rated_pair(client, ("Mina", "Arash"), target=30)
        va, _vb = views(a, b)
        assert va["hand"]["seat"] == "Alex"
        assert a.http("POST", "/rematch").status_code == 409  # the match is not over
        a.send(type="resign")
        a.receive(), b.receive()
        r = a.http("POST", "/rematch")
        assert r.status_code == 200 and r.json()["rematch"] == {"you": True, "ai": False, "id": None}
        a.receive()
        offer = b.receive()["view"]["rematch"]
        assert offer == {"you": False, "ai": True, "id": None}  # the friend is offered it
        b.send(type="rematch")
        new_a, new_b = a.receive()["view"]["rematch"], b.receive()["view"]["rematch"]
        assert new_a["id"] == new_b["id"] is not None and new_a["you"] and new_a["ai"]
        # asking again changes nothing
        assert a.http("POST", "/rematch").json()["rematch"]["id"] == new_a["id"]
        a.receive(), b.receive()
        # the same tokens open the new table, each in the other's seat; still rated, the same names
        a2, b2 = Seat(client, new_a["id"], a.token, 1), Seat(client, new_a["id"], b.token, 0)
        na, nb = views(a2, b2)
        assert na["status"] == nb["status"] == "playing" and na["rated"] and na["match"]["target"] == 30
        assert na["hand"]["seat"] == "Bob" and nb["hand"]["seat"] == "Alex"
        assert na["names"] == {"you": "Mina", "ai": "Arash"} and na["join_code"] is None
        assert na["rematch"] is None and na["match"]["totals"] == {"you": 0, "ai": 0}
        end = play_moves([b2, a2], random.Random(9), limit=4)
        assert end["hand"]["moves_played"] == 4
        for s in (a, b, a2, b2):
            s.close()


def test_a_rematch_against_the_ai_starts_at_once(make_client):
    with running(make_client) as client:
        v = _open(client, rules={"target": 5}, ai_level="greedy")
        assert v["join_code"] is None and v["invite"] is None
        p = Seat(client, v["id"], v["token"], 0)
        p.connect()
        p.send(type="resign")
        assert p.receive()["view"]["match"]["resigned"] == "you"
        r = p.http("POST", "/rematch")
        new_id = r.json()["rematch"]["id"]
        assert new_id is not None
        q = Seat(client, new_id, v["token"], 1)
        got = q.connect()["view"]
        assert got["opponent"] == {"kind": "ai", "level": "greedy"} and got["hand"]["seat"] == "Bob"
        # the AI leads as Alex: its first move was played before the person's turn
        assert got["hand"]["to_move"] == "you" and got["hand"]["moves_played"] == 1
        p.close()
        q.close()


@pytest.mark.parametrize("message", [{"type": "resign", "x": 1}, {"type": "rematch", "please": True}])
def test_malformed_flow_messages_are_400(make_client, message):
    with running(make_client) as client:
        a, b, _v = open_table(client)
        views(a, b)
        a.send(**message)
        assert a.receive() == {"type": "error", "status": 400, "error": "unknown message"}
        a.close()
        b.close()


def test_the_flows_words_in_persian():
    """The page's words for the flows in Persian (``strings.js``, run under Node): the server's new
    refusals and a failed request translated, the rating change with Persian digits."""
    from test_web_page_script import call_js

    from pasur.web.table_flows import BAD_CODE, NO_CODE

    sent = [tables_module.OWN_SEAT, BAD_CODE, NO_CODE, "the match is over", "Failed to fetch"]
    out = call_js(
        ("useLang", ["fa"]),
        *[("serverText", [m]) for m in sent],
        ("t", ["table.rating_you", {"before": 1500, "after": 1662, "delta": "+162"}]),
    )
    for text in out[1:-1]:
        assert re.search(r"[\u0600-\u06FF]", text) and not re.search(r"[A-Za-z]", text), text
    assert out[-1] == "ریتینگ شما: ۱۵۰۰ ← ۱۶۶۲ (+162)."
