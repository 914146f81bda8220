"""Issue 46, item 6: the server tried as a hostile user would. Every answer is 4xx (the test
client raises any server exception, so a 500 fails here), no answer carries a card the player may
not see, and no move is lost or played twice, whether sent again, sent twice at once or sent by
the wrong player."""

from __future__ import annotations

import threading

from test_web_tables import Seat, open_table, running, views

from conftest import cards_named, referee_hidden
from pasur.game.cards import parse_card
from pasur.web.service import hand_game
from pasur.web.store import get_table

TOKEN = "X-Pasur-Token"
JSON = {"content-type": "application/json"}


def at_once(n: int, call) -> list:
    """``call()`` in ``n`` threads released together; their answers."""
    gate, out, lock = threading.Barrier(n), [], threading.Lock()

    def run() -> None:
        gate.wait()
        r = call()
        with lock:
            out.append(r)

    threads = [threading.Thread(target=run) for _ in range(n)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return out


def test_bodies_ids_and_tokens_a_hostile_client_sends_are_4xx(client):
    view = client.post("/api/games", json={"level": "greedy"}).json()
    gid, h = view["id"], {TOKEN: view["token"]}
    bodies = [
        b'{"level": "greedy"',  # cut short
        b"[" * 7000 + b"]" * 7000,  # deep
        b'{"level": "\\ud800"}',  # a lone surrogate
        b'{"level": "\xff\xfe"}',  # not UTF-8
        b'{"level": NaN}',
        b'{"level": "greedy", "seed": ' + b"9" * 5000 + b"}",
        b"null",
        b"x" * 20_000,  # over the limit
    ]
    for body in bodies:
        for path in ("/api/games", f"/api/games/{gid}/moves", "/api/tables", "/api/players"):
            r = client.post(path, content=body, headers={**JSON, **h})
            assert 400 <= r.status_code < 500, (path, body[:30], r.text)
    for token in ("wrong", "", "x" * 300, view["token"] + " "):
        assert client.get(f"/api/games/{gid}", headers={TOKEN: token}).status_code in (404, 422)
    assert client.get(f"/api/games/{gid}", headers={TOKEN: b"\xff\xfe"}).status_code == 404
    for bad_id in ("z" * 3000, "..%2F..%2Fetc%2Fpasswd", "%00", "' OR 1=1 --"):
        for path in (f"/api/games/{bad_id}", f"/api/tables/{bad_id}", f"/api/games/{bad_id}/hint"):
            assert client.get(path, headers=h).status_code == 404, path
    # a game's id and token do not open a table, nor a player
    assert client.get(f"/api/tables/{gid}", headers=h).status_code == 404
    assert client.get("/api/players/me", headers=h).status_code == 404


def test_a_move_sent_again_or_twice_at_once_is_played_once(client):
    view = client.post("/api/games", json={"level": "greedy", "seat": "alex"}).json()
    gid, h = view["id"], {TOKEN: view["token"]}
    a = view["hand"]["legal"][0]
    body = {"card": a["card"], "captured": a["captured"], "moves_played": view["hand"]["moves_played"]}
    answers = at_once(4, lambda: client.post(f"/api/games/{gid}/moves", json=body, headers=h))
    assert sorted(r.status_code for r in answers) == [200, 409, 409, 409]
    after = next(r for r in answers if r.status_code == 200).json()
    again = client.post(f"/api/games/{gid}/moves", json=body, headers=h)  # the same move replayed
    assert again.status_code == 409 and "reload" in again.json()["error"]
    store = client.app.state.service.store
    moves = store.get(gid).hands[0]["moves"]
    assert len(moves) == after["hand"]["moves_played"] == 2  # the move once, and the AI's reply
    assert moves[0][0] == parse_card(a["card"])
    # without moves_played, four copies at once: one is played; the others find the card gone
    # from the hand (409), never played twice
    b = after["hand"]["legal"][0]
    loose = {"card": b["card"], "captured": b["captured"]}
    answers = at_once(4, lambda: client.post(f"/api/games/{gid}/moves", json=loose, headers=h))
    assert sorted(r.status_code for r in answers) == [200, 409, 409, 409]
    hand = store.get(gid).hands[0]
    assert len(hand["moves"]) == 4
    hidden = referee_hidden(hand, hand_game(hand))
    for r in answers:  # no answer names a card the player may not see
        assert not cards_named(r.json()) & hidden, r.text


def test_at_a_table_the_wrong_player_and_copies_of_a_move_change_nothing(make_client):
    with running(make_client) as client:
        a, b, _ = open_table(client)
        va, _vb = views(a, b)
        mover, other = (a, b) if va["hand"]["to_move"] == "you" else (b, a)
        m = (va if mover is a else _vb)["hand"]["legal"][0]
        body = {"card": m["card"], "captured": m["captured"], "moves_played": 0}
        assert other.http("POST", "/moves", json=body).status_code == 409  # not their turn
        answers = at_once(3, lambda: mover.http("POST", "/moves", json=body))
        assert sorted(r.status_code for r in answers) == [200, 409, 409]
        row = get_table(a.store, a.table_id)
        assert len(row.hands[0]["moves"]) == 1
        # every push each player got: the one move, once, with nothing hidden (Seat checks each)
        assert mover.receive()["steps"][0]["n"] == 1 and other.receive()["steps"][0]["n"] == 1
        # a spent invite, a game's hello, a player token as a table token
        assert client.post(f"/api/tables/{a.table_id}/join", json={"invite": "x"}).status_code == 404
        with client.websocket_connect(f"/api/tables/{a.table_id}/live") as ws:
            ws.send_json({"type": "hello", "token": "not the table's"})
            assert ws.receive_json()["status"] == 404
        ghost = Seat(client, a.table_id, "x" * 256, 0)
        assert ghost.http("GET", "").status_code == 404
