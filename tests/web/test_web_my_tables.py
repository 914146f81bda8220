"""*My games* lists the tables for two this browser sat at (issue 44, item 6), in the real browser
(Debian's headless Chromium through Selenium, with the server, browser and helpers of
``test_web_phone.py``): a table opened on the page and played out with a friend (through the API)
is listed with the score and the friend, its link opens the table's replay of the hand, and a table
this browser never sat at is not listed.

Skipped where the browser is missing, except under CI."""

from __future__ import annotations

from urllib.parse import parse_qs, urlsplit

import httpx
import pytest
from test_web_browser import page_wait
from test_web_feel import DESKTOP, FA_DIGITS, PHONE, check_my_games_entry
from test_web_phone import _assert_fits, _open, browser, server  # noqa: F401 (fixtures)

TOKEN = "X-Pasur-Token"


def _play_table(base: str, table_id: str, tokens: list[str]) -> dict:
    """The table's hand played out through the API, each player moving in turn (the first legal
    move each time): the last view of player 0 (the page's)."""
    with httpx.Client(base_url=base, timeout=120) as http:
        view = lambda p: http.get(f"/api/tables/{table_id}", headers={TOKEN: tokens[p]}).raise_for_status().json()  # noqa: E731
        data = view(0)
        while data["status"] == "playing":
            mover = 0 if data["hand"]["to_move"] == "you" else 1
            hand = view(mover)["hand"]
            move = hand["legal"][0]
            body = {"card": move["card"], "captured": move["captured"], "moves_played": hand["moves_played"]}
            http.post(f"/api/tables/{table_id}/moves", json=body, headers={TOKEN: tokens[mover]}).raise_for_status()
            data = view(0)
    return data


@pytest.mark.parametrize(("lang", "size"), [("en", DESKTOP), ("fa", PHONE)], ids=["en-1280x900", "fa-390x844"])
def test_my_games_lists_a_finished_table_and_opens_its_replay(server, browser, lang, size):  # noqa: F811
    from selenium.webdriver.common.by import By

    d = browser
    elsewhere = httpx.post(f"{server}/api/tables", json={}, timeout=60).raise_for_status().json()
    _open(d, server, lang, size)
    d.find_element(By.ID, "open-table").click()
    wait = page_wait(d, 60)
    link = wait.until(lambda d: d.find_element(By.ID, "invite-link").get_attribute("value"))
    hash_part = parse_qs(urlsplit(link).fragment)
    table_id, invite = hash_part["table"][0], hash_part["invite"][0]
    mine = d.execute_script("return JSON.parse(localStorage.getItem('pasur-table'))")
    assert mine["id"] == table_id
    friend = httpx.post(f"{server}/api/tables/{table_id}/join", json={"invite": invite}, timeout=60)
    friend = friend.raise_for_status().json()
    final = _play_table(server, table_id, [mine["token"], friend["token"]])
    assert final["status"] == "over" and final["match"]["target"] is None, final["status"]
    you, them = (str(x) for x in final["result"]["points"])
    if lang == "en":
        want = f": one hand against your friend: you {you}, Friend {them} (at a table) Replay"
    else:
        want = f": یک دست با دوستتان: شما {you.translate(FA_DIGITS)}، دوست {them.translate(FA_DIGITS)} (سر میز) بازبینی"
    check_my_games_entry(d, size, table_id, elsewhere["id"], want)
