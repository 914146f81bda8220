"""The installed page with the network cut (issue 44, item 2), in Debian's headless Chromium: the
page loads, its service worker installs and keeps its files; then the server is stopped (no
network: every request fails), the page is reloaded from the worker, switches to offline play,
and whole games are played by clicking, against ``heuristic`` and against ``network``, computed in
the browser. The AI's every move is the Python agent's at the same information state, the score
shown is the Python referee's, and the games stay on the device (a reload, still offline, shows
the finished game again). Skipped without a browser, except under CI, where it fails."""

from __future__ import annotations

import json
import random

import pytest
from test_web_browser import _driver, _need_browser, _shot, page_wait, serve_in_thread

from conftest import FAST
from pasur.game.cards import Deck
from pasur.game.rules import Action
from pasur.hidden.game import HiddenGame
from pasur.hidden.heuristic import HeuristicAgent
from pasur.hidden.policy import PolicyAgent
from pasur.web.app import create_app


@pytest.fixture
def server(tmp_path):
    """The app under uvicorn on 127.0.0.1, and a function that stops it (the network cut)."""
    app = create_app(tmp_path / "games.sqlite3", levels=FAST, hint_level="heuristic")
    base, stop = serve_in_thread(app)  # stop may be called twice: the test's cut, then here
    yield base, stop
    stop()


@pytest.fixture
def browser(tmp_path, monkeypatch):
    _need_browser()
    monkeypatch.setenv("SE_OFFLINE", "true")
    driver = _driver(tmp_path / "chromium-profile")
    driver.set_script_timeout(60)
    yield driver
    driver.quit()


def _ready(d):
    s = d.execute_script("return view && {status: view.status, to: view.hand.to_move, busy: busy}")
    return s if s and not s["busy"] and (s["status"] != "playing" or s["to"] == "you") else False


def _load(d, url: str) -> None:
    from selenium.webdriver.common.by import By

    d.get(url)
    page_wait(d, 60).until(lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-ready") == "1")


def _levels(d) -> list[str]:
    return d.execute_script("return [...document.querySelectorAll('#level option')].map((o) => o.value)")


def _play_by_clicking(d, level: str, rng: random.Random) -> dict:
    """A new one-hand game against ``level`` played to its end by clicking; the stored record."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import Select

    wait = page_wait(d, 120)
    Select(d.find_element(By.ID, "level")).select_by_value(level)
    d.find_element(By.ID, "start").click()
    moves = 0
    while wait.until(_ready)["status"] == "playing":
        legal = d.execute_script("return view.hand.legal")
        action = rng.choice(legal)
        before = d.execute_script("return view.hand.moves_played")
        if moves == 2:  # a hint, computed in the browser: every legal move gets a value
            d.find_element(By.ID, "hint").click()
            box = wait.until(ec.visibility_of_element_located((By.ID, "hint-box")))
            assert len(box.find_elements(By.CSS_SELECTOR, "tr")) == len(legal) + 1
            assert len(box.find_elements(By.CSS_SELECTOR, "tr.best")) >= 1
        d.find_element(By.CSS_SELECTOR, f"#hand [data-card='{action['card']}']").click()
        for c in action["captured"]:
            card = d.find_element(By.CSS_SELECTOR, f"#pool [data-card='{c}']")
            if "chosen" not in card.get_attribute("class"):
                card.click()
        d.find_element(By.ID, "play").click()
        moves += 1
        wait.until(lambda d, n=before: d.execute_script("return view.hand.moves_played") > n)
    assert moves == 24
    assert d.find_element(By.ID, "result").is_displayed()
    # the replay needs the server's solver: said so in the page's words
    wait.until(lambda d: d.find_element(By.ID, "show-replay").text.startswith("Replay unavailable: The replay needs"))
    return d.execute_script("return Offline.games()[game.id]")


def _check_against_python(record: dict, shown: list[int], agent) -> None:
    """Each AI move of the record is ``agent``'s at that information state, and the score shown
    is the Python referee's."""
    (hand,) = record["hands"]
    seat = hand["seat"]
    game = HiddenGame(Deck(tuple(hand["deck"])))
    ai_moves = 0
    for card, captured in hand["moves"]:
        action = Action(card, int(captured))
        if game.mover != seat:
            assert agent.choose(game.observation(game.mover)) == action
            ai_moves += 1
        game.apply(action)
    assert game.is_terminal and ai_moves == 24
    assert shown == [game.state.points[seat], game.state.points[1 - seat]]
    assert hand["result"]["points"] == shown


def test_the_installed_page_plays_whole_games_with_the_network_cut(server, browser, tmp_path):
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    base, stop = server
    d = browser
    wait = page_wait(d, 60)
    _load(d, base + "/?delay=0")
    # the service worker installs and keeps every file of the page
    kept = d.execute_async_script(
        "const done = arguments[0];"
        "navigator.serviceWorker.ready.then(async () => {"
        "  const cache = await caches.open('pasur-page-v1');"
        "  done((await cache.keys()).map((r) => new URL(r.url).pathname));"
        "});"
    )
    assert {"/", "/static/app.js", "/static/offline/agents.js", "/static/offline/policy-weights.json"} <= set(kept)
    assert d.execute_script("return Offline.active()") is False
    # by choice, with the server up: the levels of this device, and back
    d.find_element(By.ID, "offline-mode").click()
    wait.until(lambda d: _levels(d) == ["heuristic", "network"])
    assert d.execute_script("return Offline.active()") is True and d.find_element(By.ID, "offline-note").is_displayed()
    d.find_element(By.ID, "offline-mode").click()
    wait.until(lambda d: _levels(d) == list(FAST))
    assert not d.find_element(By.ID, "offline-note").is_displayed()
    # a game on the server, then the network is gone: no server answers
    Select(d.find_element(By.ID, "level")).select_by_value("heuristic")
    d.find_element(By.ID, "start").click()
    wait.until(_ready)
    server_game = d.execute_script("return localStorage.getItem('pasur-game')")
    assert not json.loads(server_game)["id"].startswith("offline-")
    stop()
    _load(d, base + "/?delay=0")  # the page, from the service worker
    # the server's game cannot be shown, but stays saved for when the server is back
    assert d.find_element(By.ID, "setup").is_displayed()
    assert d.execute_script("return localStorage.getItem('pasur-game')") == server_game
    assert d.execute_script("return Offline.active()") is True
    assert d.find_element(By.ID, "offline-note").is_displayed()
    assert _levels(d) == ["heuristic", "network"]
    assert not d.find_element(By.ID, "friend-setup").is_displayed()  # tables need the server
    _shot(d, tmp_path, "offline-setup.png")
    rng = random.Random(44)
    record = _play_by_clicking(d, "heuristic", rng)
    row = d.find_element(By.ID, "hand-points")
    shown = [int(row.get_attribute("data-you")), int(row.get_attribute("data-ai"))]
    _check_against_python(record, shown, HeuristicAgent())
    _shot(d, tmp_path, "offline-heuristic-end.png")
    # kept on the device: a reload, still offline, shows the finished game
    _load(d, base + "/?delay=0")
    assert d.find_element(By.ID, "result").is_displayed()
    assert d.execute_script("return game.id") == record["id"]
    d.find_element(By.ID, "again").click()
    record = _play_by_clicking(d, "network", rng)
    row = d.find_element(By.ID, "hand-points")
    shown = [int(row.get_attribute("data-you")), int(row.get_attribute("data-ai"))]
    _check_against_python(record, shown, PolicyAgent())
    assert len(d.execute_script("return Object.keys(Offline.games())")) == 2
    # the page's requests to the stopped server fail (logged); nothing else may
    logged = d.get_log("browser")
    severe = [e for e in logged if e["level"] == "SEVERE" and "Failed to load resource" not in e["message"]]
    assert severe == [], severe
