"""The tables' flows in a real browser (issue 44, item 4): two headless Chromiums (Debian's, as in
``test_web_browser.py``, skipped where it is missing except under CI) on one server for the module.
An invite opened in a tab that already shows the page joins it (only the ``#`` part changes), and
one's own invite opened there is refused with a message while the seat waits for the friend;
*New game* during a table asks first, and neither a cancel nor a refused leave drops the seat;
a rated match joined by its code and resigned shows both pages the rating change, and the
rematch moves both pages to a new table with the seats swapped."""

from __future__ import annotations

import os

import pytest
from test_web_browser import _driver, _need_browser, _table_state, page_wait, serve_in_thread

from conftest import FAST
from pasur.web.app import create_app
from pasur.web.players import rating_events
from pasur.web.store import get_table


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """One app under uvicorn on 127.0.0.1 for the module."""
    _need_browser()
    app = create_app(tmp_path_factory.mktemp("db") / "games.sqlite3", levels=FAST, hint_level="heuristic")
    base, stop = serve_in_thread(app)
    yield base, app
    stop()


@pytest.fixture(scope="module")
def people(server, tmp_path_factory):
    """Alice and Bahar: two browsers of their own profiles; their prompts stay open for the test."""
    os.environ.setdefault("SE_OFFLINE", "true")  # Selenium Manager, if ever asked, downloads nothing
    root = tmp_path_factory.mktemp("profiles")
    drivers = []
    try:
        for name in ("alice", "bahar"):
            drivers.append(_driver(root / name, prompts=True))
        yield drivers
    finally:
        for d in drivers:
            d.quit()


def _fresh(d, base: str) -> None:
    """The page loaded with an empty localStorage (no table, no name kept)."""
    from selenium.webdriver.common.by import By

    d.get(base + "/?delay=0")
    d.execute_script("localStorage.clear()")
    d.get(base + "/?delay=0")
    page_wait(d, 60).until(lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-ready") == "1")


def _wait(d, what, timeout: float = 60):
    return page_wait(d, timeout).until(what)


def _kept(d) -> dict | None:
    return d.execute_script("return JSON.parse(localStorage.getItem('pasur-table'))")


def _message(d) -> str:
    return d.execute_script("return document.getElementById('message').textContent")


def _severe(d, allowed: tuple[str, ...] = ()) -> list[dict]:
    """Console errors, less the refusals the test asked for (a 4xx answer is logged by Chromium)."""
    return [e for e in d.get_log("browser") if e["level"] == "SEVERE" and not any(a in e["message"] for a in allowed)]


def _open_table(d, rated: bool = False) -> dict:
    from selenium.webdriver.common.by import By

    if rated:
        d.find_element(By.ID, "table-rated").click()
    else:
        d.find_element(By.ID, "mode-match").click()
    target = d.find_element(By.ID, "target")
    target.clear()
    target.send_keys("25")
    d.find_element(By.ID, "open-table").click()
    _wait(d, lambda d: d.find_element(By.ID, "invite-link").get_attribute("value"))
    code = _wait(d, lambda d: d.find_element(By.ID, "join-code").get_attribute("data-code"))
    return {"link": d.find_element(By.ID, "invite-link").get_attribute("value"), "code": code, **_kept(d)}


def test_an_invite_in_an_open_tab_joins_and_ones_own_is_refused(server, people):
    from selenium.webdriver.common.by import By

    base, app = server
    alice, bahar = people
    for d in people:
        _fresh(d, base)
    mine = _open_table(alice)
    line = alice.find_element(By.ID, "join-code").text
    assert line == f'Or read your friend this code, to type under "Have a code?": {mine["code"]}', line
    # Alice opens her own invite in her tab: the page says so, her seat and the friend's stay
    alice.execute_script("location.hash = arguments[0]", mine["link"].split("#", 1)[1])
    _wait(alice, lambda d: "your own table" in _message(d))
    assert _message(alice).startswith("This is the invite to your own table")
    assert _kept(alice)["token"] == mine["token"] and alice.execute_script("return location.hash") == ""
    row = get_table(app.state.service.store, mine["id"])
    assert row.status == "waiting" and row.seats[1]["kind"] == "open"
    # Bahar's tab already shows the page (the setup): the invite arrives as a change of the # part
    bahar.execute_script("location.hash = arguments[0]", mine["link"].split("#", 1)[1])
    for d in people:
        _wait(d, lambda d: (_table_state(d) or {}).get("status") == "playing")
    assert _kept(bahar)["id"] == mine["id"] and _kept(bahar)["token"] != mine["token"]
    assert get_table(app.state.service.store, mine["id"]).seats[1]["kind"] == "person"
    assert not alice.find_element(By.ID, "invite-panel").is_displayed()
    assert alice.find_element(By.ID, "resign").is_displayed()
    # Bahar's tab in the background: when Alice has moved, the title says it is Bahar's turn,
    # until the tab is seen again
    title = bahar.title
    bahar.execute_script("Object.defineProperty(document, 'hidden', {configurable: true, get: () => true})")
    alice.execute_script("Tables.move(view.hand.legal[0])")
    _wait(bahar, lambda d: d.title == "\u25cf Your turn \u00b7 Pasur")
    bahar.execute_script(
        "Object.defineProperty(document, 'hidden', {configurable: true, get: () => false});"
        "document.dispatchEvent(new Event('visibilitychange'))"
    )
    assert bahar.title == title
    # the browser goes offline: the banner says so in the page's words, and Retry now connects again
    bahar.execute_script("window.dispatchEvent(new Event('offline'))")
    banner = bahar.find_element(By.ID, "live-banner")
    assert banner.is_displayed() and banner.text.startswith("You are offline: the table waits")
    bahar.find_element(By.ID, "live-retry").click()
    _wait(bahar, lambda d: not d.find_element(By.ID, "live-banner").is_displayed())
    assert _message(bahar) == "Your turn."  # the whole view again, from the new socket
    assert _table_state(bahar)["to"] == "you"
    for d in people:
        assert _severe(d, ("/join",)) == []


def test_new_game_during_a_table_asks_and_keeps_the_seat(server, people):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec

    base, app = server
    alice, bahar = people
    for d in people:
        _fresh(d, base)
    mine = _open_table(alice)
    bahar.execute_script("location.hash = arguments[0]", mine["link"].split("#", 1)[1])
    for d in people:
        _wait(d, lambda d: (_table_state(d) or {}).get("status") == "playing")
    # New game asks; cancelled, nothing changes
    alice.find_element(By.ID, "new-game").click()
    ask = _wait(alice, ec.alert_is_present())
    assert ask.text == "Leave this table for a new game? The AI will play your seat from now on."
    ask.dismiss()
    assert _kept(alice) == {"id": mine["id"], "token": mine["token"], "link": mine["link"]}
    assert alice.find_element(By.ID, "table").is_displayed() and not alice.find_element(By.ID, "setup").is_displayed()
    assert get_table(app.state.service.store, mine["id"]).seats[0]["kind"] == "person"
    # at a rated match the server refuses the leave: the page says so and keeps the seat
    for d, name in ((alice, "Azar"), (bahar, "Behrouz")):
        _fresh(d, base)
        d.find_element(By.ID, "player-name").send_keys(name)
        d.find_element(By.ID, "register").click()
        _wait(d, ec.visibility_of_element_located((By.ID, "player-shown")))
    rated = _open_table(alice, rated=True)
    bahar.execute_script("location.hash = arguments[0]", rated["link"].split("#", 1)[1])
    for d in people:
        _wait(d, lambda d: (_table_state(d) or {}).get("status") == "playing")
    alice.find_element(By.ID, "new-game").click()
    _wait(alice, ec.alert_is_present()).accept()
    _wait(alice, lambda d: "you keep your seat" in _message(d))
    assert _message(alice) == "a rated match is played to its end: it cannot be left to the AI (you keep your seat)"
    assert _kept(alice)["token"] == rated["token"] and alice.find_element(By.ID, "table").is_displayed()
    assert get_table(app.state.service.store, rated["id"]).seats[0]["kind"] == "person"
    assert _severe(alice, ("/leave",)) == [] and _severe(bahar) == []


def test_resign_shows_the_rating_change_and_the_rematch_swaps_seats(server, people):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec

    base, app = server
    alice, bahar = people
    for d, name in ((alice, "Afsaneh"), (bahar, "Bijan")):
        _fresh(d, base)
        d.find_element(By.ID, "player-name").send_keys(name)
        d.find_element(By.ID, "register").click()
        _wait(d, ec.visibility_of_element_located((By.ID, "player-shown")))
    mine = _open_table(alice, rated=True)
    # Bahar types the code, in small letters, into the box under the friend's setup
    bahar.find_element(By.ID, "join-code-input").send_keys(mine["code"].lower())
    bahar.find_element(By.ID, "join-code-go").click()
    for d in people:
        _wait(d, lambda d: (_table_state(d) or {}).get("status") == "playing")
    bahar.find_element(By.ID, "resign").click()
    ask = _wait(bahar, ec.alert_is_present())
    assert ask.text == "Resign the match? It counts as lost."
    ask.accept()
    for d in people:
        _wait(d, ec.visibility_of_element_located((By.ID, "rating-change")))
    store = app.state.service.store
    events = {e["player_id"]: e for e in rating_events(store, mine["id"])}
    row = get_table(store, mine["id"])
    after = {p: round(events[row.seats[p]["player_id"]]["rating_after"]) for p in (0, 1)}
    assert after[0] > 1500 > after[1]  # one hand lost by Bijan: he goes down, she goes up
    up, down = after[0] - 1500, 1500 - after[1]
    shown = {d: d.find_element(By.ID, "rating-change").get_attribute("textContent") for d in people}
    assert shown[alice] == f"Your rating: 1500 → {after[0]} (+{up}). \u2068Bijan\u2069: 1500 → {after[1]} (−{down})."
    assert shown[bahar] == f"Your rating: 1500 → {after[1]} (−{down}). \u2068Afsaneh\u2069: 1500 → {after[0]} (+{up})."
    assert bahar.find_element(By.ID, "result-title").text == "Your friend wins the match"
    assert _message(alice) == "\u2068Bijan\u2069 resigned: the match is yours."
    # the rematch: Alice asks, Bahar is offered it and accepts; both move to the new table
    alice.find_element(By.ID, "rematch").click()
    _wait(bahar, lambda d: d.find_element(By.ID, "rematch").text == "Accept the rematch")
    assert "offers a rematch" in _message(bahar)
    bahar.find_element(By.ID, "rematch").click()
    new_id = _wait(bahar, lambda d: (get_table(store, mine["id"]).rematch or {}).get("id"))
    for d in people:
        _wait(d, lambda d: (_kept(d) or {}).get("id") == new_id)
        _wait(
            d,
            lambda d: (
                (_table_state(d) or {}).get("status") == "playing" and d.execute_script("return view.id") == new_id
            ),
        )
    assert (
        alice.execute_script("return view.hand.seat") == "Bob"
        and bahar.execute_script("return view.hand.seat") == "Alex"
    )
    for d in people:
        assert _severe(d) == []
