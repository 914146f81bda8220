"""The page on a phone (issue 44, item 1): in the real browser (Debian's headless Chromium through
Selenium, as in ``test_web_browser.py``) at 360 x 740 and 390 x 844 emulated as a phone (the
page's ``<meta viewport>`` honoured, a page wider than the screen zoomed out) and at 1280 x 900 on
a desktop, in Persian (right to left) and English: no element runs past the screen's sides, the
hand and *Play* are on screen once a game starts, the buttons are at least 44 px each way on a
phone, and the replay's wide table scrolls inside its own box.

One server and one browser for the module; each size is set through the DevTools protocol
(``Emulation.setDeviceMetricsOverride``). Skipped where the browser is missing, except under CI."""

from __future__ import annotations

import os
from pathlib import Path

import httpx
import pytest
from test_web_browser import _driver, _need_browser, page_wait, select_move, serve_in_thread

from conftest import FAST
from pasur.web.app import create_app

#: (width, height, a phone): the two phone sizes and the desktop of issue 44
SIZES = [(360, 740, True), (390, 844, True), (1280, 900, False)]
LANGS = ["fa", "en"]
CASES = [pytest.param(lang, size, id=f"{lang}-{size[0]}x{size[1]}") for lang in LANGS for size in SIZES]
#: the smallest touch target on a phone, in CSS pixels
TOUCH = 44
SEED = 7

#: what runs past the sides of the screen: every element drawn whose box leaves [0, width], unless a
#: box around it clips it (a scroll box: then that box is what must stay on screen)
OVERFLOW_JS = """
const width = arguments[0];
const clipped = (e) => {
  for (let p = e.parentElement; p && p !== document.body; p = p.parentElement)
    if (getComputedStyle(p).overflowX !== "visible") return true;
  return false;
};
const bad = [];
for (const e of document.body.querySelectorAll("*")) {
  const r = e.getBoundingClientRect();
  if (r.width === 0 && r.height === 0) continue;
  if ((r.left < -0.5 || r.right > width + 0.5) && !clipped(e))
    bad.push(`${e.tagName.toLowerCase()}#${e.id}.${e.className} [${Math.round(r.left)}, ${Math.round(r.right)}]`);
}
return {inner: window.innerWidth, scroll: document.documentElement.scrollWidth,
        client: document.documentElement.clientWidth, bad: bad.slice(0, 12)};
"""

#: every button a person can press now (drawn, enabled): its size
BUTTONS_JS = """
const out = [];
for (const b of document.querySelectorAll("button")) {
  const r = b.getBoundingClientRect();
  if (r.width === 0 && r.height === 0 || b.disabled) continue;
  out.push({what: `#${b.id}.${b.className} ${b.textContent.trim().slice(0, 30)}`, w: r.width, h: r.height});
}
return out;
"""


@pytest.fixture(scope="module")
def server(tmp_path_factory):
    """The app under uvicorn on 127.0.0.1, in a thread of this process, seeded deals allowed."""
    db = tmp_path_factory.mktemp("phone") / "games.sqlite3"
    base, stop = serve_in_thread(create_app(db, levels=FAST, hint_level="heuristic", allow_seeds=True))
    yield base
    stop()


@pytest.fixture(scope="module")
def browser(tmp_path_factory):
    _need_browser()
    os.environ.setdefault("SE_OFFLINE", "true")  # Selenium Manager, if ever asked, downloads nothing
    driver = _driver(tmp_path_factory.mktemp("phone-profile"))
    yield driver
    driver.quit()


def _play_through_api(base: str, until: int) -> dict:
    """A hand against ``random`` on the seeded deal, played through the API (the first legal move
    each time) until ``until`` moves are played or it is over: ``{"id", "token"}``."""
    with httpx.Client(base_url=base, timeout=120) as http:
        body = {"level": "random", "seat": "alex", "seed": SEED}
        data = http.post("/api/games", json=body).raise_for_status().json()
        game = {"id": data["id"], "token": data["token"]}
        headers = {"X-Pasur-Token": game["token"]}
        while data["status"] == "playing" and data["hand"]["moves_played"] < until:
            move = data["hand"]["legal"][0]
            body = {"card": move["card"], "captured": move["captured"], "moves_played": data["hand"]["moves_played"]}
            data = http.post(f"/api/games/{game['id']}/moves", json=body, headers=headers).raise_for_status().json()
    return game


@pytest.fixture(scope="module")
def finished_game(server):
    """A hand played out and its replay solved once, for the page to resume at the score screen."""
    game = _play_through_api(server, 48)
    headers = {"X-Pasur-Token": game["token"]}
    httpx.get(f"{server}/api/games/{game['id']}/replay", headers=headers, timeout=120).raise_for_status()
    return game


def _open(d, base: str, lang: str, size: tuple[int, int, bool], game: dict | None = None) -> None:
    """The page at ``size`` in ``lang``, with ``game`` to resume (None: the setup screen)."""
    import json

    from selenium.webdriver.common.by import By

    width, height, phone = size
    metrics = {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": phone}
    d.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", metrics)
    d.execute_cdp_cmd("Emulation.setTouchEmulationEnabled", {"enabled": phone, "maxTouchPoints": 5 if phone else 1})
    d.get(base + "/?delay=0")  # the origin, to set its storage before the page is loaded again
    d.execute_script("localStorage.clear(); localStorage.setItem('pasur-lang', arguments[0])", lang)
    if game is not None:
        d.execute_script("localStorage.setItem('pasur-game', arguments[0])", json.dumps(game))
    d.get(base + f"/?delay=0&seed={SEED}")
    page_wait(d, 60).until(lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-ready") == "1")
    assert d.execute_script("return document.documentElement.lang") == lang


def _shot(d, name: str) -> None:
    """``PASUR_SCREENSHOTS=DIR``: the screen as it is now, kept there as ``name``."""
    keep = os.environ.get("PASUR_SCREENSHOTS")
    if keep:
        Path(keep).mkdir(parents=True, exist_ok=True)
        d.save_screenshot(str(Path(keep) / name))


def _assert_fits(d, size: tuple[int, int, bool], where: str) -> None:
    """Nothing runs past the screen's sides, and the page is not zoomed out to fit."""
    width = size[0]
    got = d.execute_script(OVERFLOW_JS, width)
    assert got["bad"] == [], (where, got)
    assert got["scroll"] <= got["client"] <= width and got["inner"] == width, (where, got)


def _assert_touchable(d, size: tuple[int, int, bool], where: str) -> None:
    """On a phone, every button a person can press is at least 44 x 44 px."""
    if not size[2]:
        return
    small = [b for b in d.execute_script(BUTTONS_JS) if b["w"] < TOUCH - 0.5 or b["h"] < TOUCH - 0.5]
    assert small == [], (where, small)


def _assert_on_screen(d, size: tuple[int, int, bool], where: str) -> None:
    """The hand and *Play* lie wholly inside the screen as it is now (no scrolling, no zoom)."""
    width, height, _ = size
    for element_id in ("hand", "play"):
        r = d.execute_script(f"return document.getElementById('{element_id}').getBoundingClientRect().toJSON()")
        inside = r["left"] >= -0.5 and r["right"] <= width + 0.5 and r["top"] >= -0.5 and r["bottom"] <= height + 0.5
        assert r["width"] > 0 and inside, (where, element_id, r)


@pytest.mark.parametrize(("lang", "size"), CASES)
def test_a_game_fits_the_screen(server, browser, lang, size):
    """The setup screen, then a game just started and a card of the hand chosen."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    d = browser
    _open(d, server, lang, size)
    _assert_fits(d, size, "setup")
    _assert_touchable(d, size, "setup")
    Select(d.find_element(By.ID, "level")).select_by_value("random")
    Select(d.find_element(By.ID, "seat")).select_by_value("alex")
    d.find_element(By.ID, "start").click()
    my_turn = "return !!view && !busy && view.status === 'playing' && view.hand.to_move === 'you'"
    page_wait(d, 60).until(lambda d: d.execute_script(my_turn))
    _assert_fits(d, size, "game started")
    _assert_touchable(d, size, "game started")
    _assert_on_screen(d, size, "game started")
    # a card chosen: the longest Play label there is now, and the buttons of each capture
    legal = d.execute_script("return view.hand.legal")
    card = max(legal, key=lambda a: len(a["captured"]))["card"]
    d.find_element(By.CSS_SELECTOR, f"#hand [data-card='{card}']").click()
    _assert_fits(d, size, "card chosen")
    _assert_touchable(d, size, "card chosen")
    _assert_on_screen(d, size, "card chosen")
    _shot(d, f"phone-game-{lang}-{size[0]}x{size[1]}.png")
    # the hint's list, below the hand: brought on screen, its move buttons big enough
    d.find_element(By.ID, "hint").click()
    page_wait(d, 60).until(lambda d: d.find_element(By.ID, "hint-box").is_displayed())
    _assert_fits(d, size, "hint")
    _assert_touchable(d, size, "hint")
    top = d.execute_script("return document.getElementById('hint-box').getBoundingClientRect().top")
    assert -1 <= top < size[1] - 100, top
    severe = [e for e in d.get_log("browser") if e["level"] == "SEVERE"]
    assert severe == [], severe


@pytest.mark.parametrize(("lang", "size"), CASES)
def test_the_replay_fits_the_screen(server, browser, finished_game, lang, size):
    """The score screen and the replay of a finished hand: the replay's table scrolls in its box."""
    from selenium.webdriver.common.by import By

    d = browser
    _open(d, server, lang, size, finished_game)
    page_wait(d, 60).until(lambda d: d.find_element(By.ID, "show-replay").is_enabled())
    _assert_fits(d, size, "score")
    _assert_touchable(d, size, "score")
    _shot(d, f"phone-score-{lang}-{size[0]}x{size[1]}.png")
    d.find_element(By.ID, "show-replay").click()
    page_wait(d, 10).until(lambda d: d.find_element(By.ID, "replay-table").is_displayed())
    assert len(d.find_elements(By.CSS_SELECTOR, "#replay-table tr")) == 49
    _assert_fits(d, size, "replay")
    _shot(d, f"phone-replay-{lang}-{size[0]}x{size[1]}.png")
    # the move, best move and cost columns: inside the screen, or reached by scrolling the table's own box
    box = d.execute_script(
        "const s = document.querySelector('#replay .scroll'); const r = s.getBoundingClientRect();"
        "return {left: r.left, right: r.right, scroll: s.scrollWidth, client: s.clientWidth,"
        " overflow: getComputedStyle(s).overflowX}"
    )
    assert box["left"] >= -0.5 and box["right"] <= size[0] + 0.5, box
    assert box["scroll"] <= box["client"] or box["overflow"] in ("auto", "scroll"), box
    if size[2]:  # on a phone each move's row is a grid that fits: the move, best move and cost in view
        assert box["scroll"] <= box["client"], box
        sides = d.execute_script(
            "return [...document.querySelectorAll('#replay-table tr > :nth-child(n+7)')]"
            ".map((c) => [c.getBoundingClientRect().left, c.getBoundingClientRect().right])"
        )
        assert len(sides) == 49 * 3 and all(a >= -0.5 and b <= size[0] + 0.5 for a, b in sides), sides


@pytest.mark.parametrize("size", [(360, 460, True), (740, 360, True)], ids=["360x460", "740x360"])
def test_the_hand_stays_on_a_short_screen(server, browser, size):
    """A phone whose screen is shorter than the table (360 x 460: a small phone, or its keyboard
    open; 740 x 360: a phone held sideways): the hand and *Play* stay at the bottom of the screen
    wherever the page is scrolled, until the page's end brings them to their own place."""
    from selenium.webdriver.common.by import By

    d = browser
    _open(d, server, "fa", size)
    d.find_element(By.ID, "start").click()
    my_turn = "return !!view && !busy && view.status === 'playing' && view.hand.to_move === 'you'"
    page_wait(d, 60).until(lambda d: d.execute_script(my_turn))
    tall = d.execute_script("return document.documentElement.scrollHeight")
    assert tall > size[1] + 150, tall  # the table is taller than the screen: the case this test is for
    for y in (0, 150, tall):
        d.execute_script("window.scrollTo(0, arguments[0])", y)
        _assert_on_screen(d, size, f"scrolled to {y}")
        _assert_fits(d, size, f"scrolled to {y}")


@pytest.mark.parametrize(("lang", "size"), [c for c in CASES if c.values[1][2]])
def test_an_invite_fits_the_screen(server, browser, lang, size):
    """A table for a friend opened on a phone: the invite (its link, its buttons) fits the screen."""
    from selenium.webdriver.common.by import By

    d = browser
    _open(d, server, lang, size)
    d.find_element(By.ID, "open-table").click()
    page_wait(d, 60).until(lambda d: d.find_element(By.ID, "invite-link").get_attribute("value"))
    assert d.find_element(By.ID, "invite-panel").is_displayed()
    _assert_fits(d, size, "invite")
    _assert_touchable(d, size, "invite")
    _shot(d, f"phone-invite-{lang}-{size[0]}x{size[1]}.png")


@pytest.mark.parametrize(("lang", "size"), [c for c in CASES if c.values[1][0] == 360])
def test_the_score_comes_on_screen_at_the_end(server, browser, lang, size):
    """The last card played on a phone from the page scrolled down (the moves so far open): the
    score, which opens above the table, is brought on screen."""
    from selenium.webdriver.common.by import By

    d = browser
    _open(d, server, lang, size, _play_through_api(server, 46))  # Alex leads: his last card is move 47
    my_turn = "return !!view && !busy && view.status === 'playing' && view.hand.to_move === 'you'"
    page_wait(d, 60).until(lambda d: d.execute_script(my_turn))
    assert d.execute_script("return view.hand.moves_played") == 46
    d.find_element(By.CSS_SELECTOR, "#history-box summary").click()  # the 46 moves so far: a long page
    d.execute_script("window.scrollTo(0, document.documentElement.scrollHeight)")
    assert d.execute_script("return window.scrollY") > 300, "the page is not much longer than the screen"
    move = d.execute_script("return view.hand.legal[0]")
    select_move(d, move)
    d.find_element(By.ID, "play").click()
    page_wait(d, 60).until(lambda d: d.find_element(By.ID, "result").is_displayed())
    top = d.execute_script("return document.getElementById('result').getBoundingClientRect().top")
    assert -1 <= top < size[1] / 2, top
    _assert_fits(d, size, "the end")
