"""Names that cannot impersonate (issue 44, item 5): a name is stored normalized (NFKC, invisible
characters removed, spaces collapsed), refused when it looks like a name already taken (the
confusables skeleton of Unicode's UTS #39), and a player who never played a rated hand is not on
the ladder."""

from __future__ import annotations

import sqlite3
import threading

import pytest

from pasur.web.players import create_player
from pasur.web.service import Conflict
from pasur.web.store import Store

TAKEN = "Nasrin68574"


def post(client, name: str):
    return client.post("/api/players", json={"name": name})


def test_the_three_impersonations_are_refused(make_client):
    """The issue's three forms: the same name, with a zero-width non-joiner, with a Cyrillic а."""
    client = make_client()
    assert post(client, TAKEN).status_code == 201
    forms = {
        TAKEN: TAKEN,
        "Nasrin\u200c68574": TAKEN,  # zero-width non-joiner: removed, so it is the same name
        "N\u0430srin68574": "N\u0430srin68574",  # Cyrillic а: kept as written, but it looks the same
    }
    for sent, shown in forms.items():
        r = post(client, sent)
        assert r.status_code == 409, (sent, r.text)
        assert r.json()["error"] == f"the name {shown!r} is taken"


@pytest.mark.parametrize(
    "look_alike",
    [
        "Nasrin\u200d68574",  # zero-width joiner
        "Nasrin\u200b68574",  # zero-width space
        "\ufeffNasrin68574",  # byte order mark
        "\u202eNasrin68574",  # right-to-left override
        "Nasrin68574\ufe0f",  # variation selector 16
        "NASRIN68574",  # another case
        "N\u0410SRIN68574",  # another case and a Cyrillic capital А
        "Nasr\u0456n68574",  # Cyrillic і
        "Ｎａｓｒｉｎ６８５７４",  # fullwidth forms
        "Nasrin\u00a068574",  # a no-break space: the spaced name created first
    ],
)
def test_other_look_alikes_are_refused(make_client, look_alike):
    client = make_client()
    assert post(client, TAKEN).status_code == 201
    assert post(client, "Nasrin 68574").status_code == 201  # a space is seen: another name
    r = post(client, look_alike)
    assert r.status_code == 409 and "is taken" in r.json()["error"], (look_alike, r.text)


def test_an_ordinary_different_name_is_accepted(make_client):
    client = make_client()
    for name in (TAKEN, "Nasrin68575", "Nasim", "Nasrin", "نسرین", "Dara Kia"):
        r = post(client, name)
        assert r.status_code == 201, (name, r.text)
        assert r.json()["name"] == name


def test_persian_letters_of_two_keyboards_are_one_name(make_client):
    """Persian ی and ک and the Arabic keyboard's ي and ك look alike (confusables.txt maps both yehs
    to ى and both kafs to ك): a name written with the other keyboard's letters is refused, and so
    is one that differs only by Persian's zero-width non-joiner."""
    client = make_client()
    for name in ("علی", "کاوه", "نیک\u200cنام"):
        assert post(client, name).status_code == 201, name
    for look_alike in ("علي", "كاوه", "نیکنام"):
        r = post(client, look_alike)
        assert r.status_code == 409 and "is taken" in r.json()["error"], (look_alike, r.text)


def test_a_name_is_stored_in_its_nfkc_form(make_client):
    client = make_client()
    stored = {
        "Ｄａｒｉｕｓ": "Darius",  # fullwidth letters
        "\ufb01ruzeh": "firuzeh",  # the ligature fi
        "  Mina \u00a0  Rad ": "Mina Rad",  # spaces collapsed and trimmed
        "Ro\u200bya": "Roya",  # a zero-width space removed
        "\u202bشیوا\u202c": "شیوا",  # bidi controls removed
        "\ufeb3\ufe98\ufe8e\ufead\ufeea": "ستاره",  # Arabic presentation forms: the letters
        "بی\u200cبی\u200c\u200c": "بی\u200cبی",  # a non-joiner kept between Persian letters only
    }
    for sent, name in stored.items():
        r = post(client, sent)
        assert r.status_code == 201, (sent, r.text)
        assert r.json()["name"] == name
        with sqlite3.connect(client.app.state.service.store.path) as conn:
            assert conn.execute("SELECT COUNT(*) FROM players WHERE name = ?", (name,)).fetchone() == (1,)


def _create(store: Store, name: str, start: threading.Barrier, outcomes: list[str]) -> None:
    start.wait()
    try:
        create_player(store, name)
        outcomes.append("created")
    except Conflict:
        outcomes.append("refused")


def test_two_look_alikes_created_at_once_one_wins(tmp_path):
    """The check runs in the creating transaction (BEGIN IMMEDIATE): of two look-alike names
    created at the same moment by two threads, exactly one is kept."""
    store = Store(tmp_path / "names.sqlite3")
    for round_ in range(5):
        names = [f"Parisa{round_}", f"P\u0430risa{round_}"]  # Latin a, Cyrillic а
        start, outcomes = threading.Barrier(2), []
        threads = [threading.Thread(target=_create, args=(store, n, start, outcomes)) for n in names]
        for th in threads:
            th.start()
        for th in threads:
            th.join()
        assert sorted(outcomes) == ["created", "refused"]
    store.close_all()


def test_a_database_of_older_players_is_given_their_skeletons(make_client, db):
    """A file written before the skeleton column: reopened, its players get one, so a look-alike
    of an older name is refused too."""
    client = make_client()
    assert post(client, TAKEN).status_code == 201
    client.app.state.service.store.close_all()
    with sqlite3.connect(db) as conn:
        conn.execute("DROP INDEX IF EXISTS players_name_skeleton")
        conn.execute("ALTER TABLE players DROP COLUMN name_skeleton")
    client = make_client()
    r = post(client, "N\u0430srin68574")
    assert r.status_code == 409 and "is taken" in r.json()["error"], r.text


def test_the_ladder_leaves_off_players_who_never_played(make_client):
    client = make_client()
    for name in ("Dara", "Elham", "Farid"):
        assert post(client, name).status_code == 201
    with sqlite3.connect(client.app.state.service.store.path) as conn:
        conn.execute("UPDATE players SET games = 4, rating = 1620 WHERE name = 'Farid'")
        conn.execute("UPDATE players SET games = 2, rating = 1450 WHERE name = 'Dara'")
    ladder = client.get("/api/ladder").json()["players"]
    assert [(p["rank"], p["name"], p["games"]) for p in ladder] == [(1, "Farid", 4), (2, "Dara", 2)]
