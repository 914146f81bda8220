"""The page's feel (issue 44, item 6) in the real browser (Debian's headless Chromium through
Selenium, as in ``test_web_phone.py``, whose server, browser and helpers it uses): the match score
in view on a phone wherever the page is scrolled, in both languages; a capture's cards flying to
the capturer's pile, and nothing flying when the system asks for reduced motion (emulated through
the DevTools protocol, ``Emulation.setEmulatedMedia``); sound off by default and the switch kept
across a reload; this browser's games listed with a link that opens each finished hand's replay.

Skipped where the browser is missing, except under CI."""

from __future__ import annotations

import httpx
import pytest
from test_web_browser import page_wait, select_move
from test_web_phone import SEED, _assert_fits, _open, browser, server  # noqa: F401 (fixtures)

PHONE = (390, 844, True)
DESKTOP = (1280, 900, False)
FA_DIGITS = str.maketrans("0123456789", "۰۱۲۳۴۵۶۷۸۹")
MY_TURN = "return !!view && !busy && view.status === 'playing' && view.hand.to_move === 'you'"
#: every element added to the page, by its classes (set before the page's own scripts run)
RECORDER = """
window.__added = [];
new MutationObserver((records) => {
  for (const r of records)
    for (const n of r.addedNodes) if (n.nodeType === 1 && n.className) window.__added.push(String(n.className));
}).observe(document, { childList: true, subtree: true });
"""


def _play_api(base: str, game: dict, until: int, data: dict | None = None) -> dict:
    """The game's hand played through the API (the first legal move each time) until ``until``
    moves are played or the hand is over; the last answer."""
    headers = {"X-Pasur-Token": game["token"]}
    with httpx.Client(base_url=base, timeout=120, headers=headers) as http:
        if data is None:
            data = http.get(f"/api/games/{game['id']}").raise_for_status().json()
        while data["status"] == "playing" and data["hand"]["moves_played"] < until:
            move = data["hand"]["legal"][0]
            body = {"card": move["card"], "captured": move["captured"], "moves_played": data["hand"]["moves_played"]}
            data = http.post(f"/api/games/{game['id']}/moves", json=body).raise_for_status().json()
    return data


def _second_hand_of_a_match(base: str) -> tuple[dict, dict]:
    """A match to 62 against ``random`` whose first hand is played out and the second played to
    its 30th move: the game (``id``, ``token``) and the match's totals."""
    body = {"level": "random", "seat": "alex", "seed": SEED, "rules": {"target": 62}}
    data = httpx.post(f"{base}/api/games", json=body, timeout=120).raise_for_status().json()
    game = {"id": data["id"], "token": data["token"]}
    data = _play_api(base, game, 48, data)
    assert data["status"] == "hand_over", data["status"]
    headers = {"X-Pasur-Token": game["token"]}
    data = httpx.post(f"{base}/api/games/{game['id']}/next", headers=headers, timeout=120).raise_for_status().json()
    data = _play_api(base, game, 30, data)  # a long list of the moves so far: a page taller than the screen
    return game, data["match"]["totals"]


@pytest.mark.parametrize("lang", ["en", "fa"])
def test_the_match_score_stays_in_view_on_a_phone(server, browser, lang):  # noqa: F811
    """At 390 x 844, in the second hand of a match, its moves so far open: the match's score (the
    server's totals, in the page's digits) is on screen at the top, the middle and the end of the
    page, and nothing runs past the screen's sides."""
    from selenium.webdriver.common.by import By

    d = browser
    game, totals = _second_hand_of_a_match(server)
    assert totals["you"] + totals["ai"] > 0
    _open(d, server, lang, PHONE, game)
    page_wait(d, 60).until(lambda d: d.execute_script(MY_TURN))
    d.find_element(By.CSS_SELECTOR, "#history-box summary").click()  # the moves so far: a page taller than the screen
    you, ai = str(totals["you"]), str(totals["ai"])
    if lang == "en":
        want = f"Match you {you} – AI {ai} (to 62)"
    else:
        want = f"مسابقه شما {you.translate(FA_DIGITS)} – هوش مصنوعی {ai.translate(FA_DIGITS)} (تا ۶۲)"
    tall = d.execute_script("return document.documentElement.scrollHeight")
    assert tall > PHONE[1] + 300, tall  # the score's place at the top of the table would leave the screen
    for y in (0, tall // 2, tall):
        d.execute_script("window.scrollTo(0, arguments[0])", y)
        chip = d.find_element(By.ID, "score-chip")
        assert chip.is_displayed() and chip.text == want, (y, chip.text)
        r = d.execute_script("return document.getElementById('score-chip').getBoundingClientRect().toJSON()")
        inside = r["top"] >= -0.5 and r["bottom"] <= PHONE[1] + 0.5
        assert inside and r["left"] >= -0.5 and r["right"] <= PHONE[0] + 0.5, (y, r)
        _assert_fits(d, PHONE, f"scrolled to {y}")


def _play_until_a_capture(d) -> None:
    """A hand against ``greedy`` (no seed of its own: the same hand every run on the seeded deal)
    started on the page and played by clicking (a capture whenever there is one) until a card has
    been captured and it is the person's turn again."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    Select(d.find_element(By.ID, "level")).select_by_value("greedy")
    d.find_element(By.ID, "start").click()
    wait = page_wait(d, 60)
    for _ in range(24):
        wait.until(lambda d: d.execute_script(MY_TURN))
        if d.execute_script("return view.hand.history.some((m) => m.captured.length > 0)"):
            return
        legal = d.execute_script("return view.hand.legal")
        action = max(legal, key=lambda a: len(a["captured"]))
        before = d.execute_script("return view.hand.moves_played")
        select_move(d, action)
        d.find_element(By.ID, "play").click()
        wait.until(lambda d, n=before: d.execute_script("return view.hand.moves_played") > n)
    raise AssertionError("no capture in a whole hand")


@pytest.mark.parametrize("reduce", [False, True], ids=["motion", "reduced-motion"])
def test_a_capture_flies_unless_reduced_motion_is_asked(server, browser, reduce):  # noqa: F811
    """After a capture, copies of the cards with the animation's class are added (and gone again
    within a second); under ``prefers-reduced-motion: reduce`` none is added."""
    import time

    d = browser
    value = "reduce" if reduce else "no-preference"
    d.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": [{"name": "prefers-reduced-motion", "value": value}]})
    script = d.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": RECORDER})
    try:
        _open(d, server, "en", DESKTOP)
        assert d.execute_script("return matchMedia('(prefers-reduced-motion: reduce)').matches") is reduce
        _play_until_a_capture(d)
        flown = [c for c in d.execute_script("return window.__added") if "anim-capture" in c.split()]
        if reduce:
            assert flown == []
        else:
            assert flown and all("ghost" in c.split() for c in flown), flown
        time.sleep(1.0)  # the flights' own time (0.38 s) and more: the copies are removed
        assert d.execute_script("return document.querySelectorAll('.ghost').length") == 0
    finally:
        d.execute_cdp_cmd("Page.removeScriptToEvaluateOnNewDocument", script)
        d.execute_cdp_cmd("Emulation.setEmulatedMedia", {"features": []})


def test_sound_is_off_by_default_and_the_switch_is_kept(server, browser):  # noqa: F811
    """A new browser: sound off (no tone at a capture); the switch turns it on, the page keeps it
    across a reload (``localStorage``), the tables' turn tone follows it, and a capture sounds."""
    from selenium.webdriver.common.by import By

    d = browser
    _open(d, server, "en", DESKTOP)
    toggle = d.find_element(By.ID, "sound-toggle")
    assert toggle.get_attribute("aria-pressed") == "false" and toggle.text == "Sound: off"
    assert d.execute_script("return localStorage.getItem('pasur-turn-sound')") is None
    _play_until_a_capture(d)
    assert d.execute_script("return tonesPlayed") == 0
    d.find_element(By.ID, "new-game").click()
    d.find_element(By.ID, "sound-toggle").click()
    assert d.execute_script("return localStorage.getItem('pasur-turn-sound')") == "1"
    d.refresh()
    page_wait(d, 60).until(lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-ready") == "1")
    toggle = d.find_element(By.ID, "sound-toggle")
    assert toggle.get_attribute("aria-pressed") == "true" and toggle.text == "Sound: on"
    assert d.execute_script("return document.getElementById('turn-sound').checked") is True
    _play_until_a_capture(d)
    assert d.execute_script("return tonesPlayed") > 0


@pytest.mark.parametrize(("lang", "size"), [("en", DESKTOP), ("fa", PHONE)], ids=["en-1280x900", "fa-390x844"])
def test_my_games_lists_a_finished_game_and_opens_its_replay(server, browser, lang, size):  # noqa: F811
    """A hand started on the page and played out: *My games* lists it (a game this browser did
    not start is not listed), and its link opens the replay of its 48 moves."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select

    d = browser
    other = httpx.post(f"{server}/api/games", json={"level": "random", "seed": SEED}, timeout=60).json()
    _open(d, server, lang, size)
    Select(d.find_element(By.ID, "level")).select_by_value("random")
    d.find_element(By.ID, "start").click()
    page_wait(d, 60).until(lambda d: d.execute_script(MY_TURN))
    game = d.execute_script("return game")
    final = _play_api(server, game, 48)
    assert final["status"] == "over"
    you, ai = (str(x) for x in final["result"]["points"])
    if lang == "en":
        want = f": one hand against random: you {you}, AI {ai} Replay"
    else:
        want = f": یک دست با تصادفی: شما {you.translate(FA_DIGITS)}، هوش مصنوعی {ai.translate(FA_DIGITS)} بازبینی"
    check_my_games_entry(d, size, game["id"], other["id"], want)


def check_my_games_entry(d, size, listed_id: str, absent_id: str, want: str) -> None:
    """My games lists ``listed_id`` with text ending in ``want`` and not ``absent_id``; the list fits
    the screen, and the entry's link opens its hand's replay (49 rows)."""
    from selenium.webdriver.common.by import By

    d.find_element(By.ID, "show-games").click()
    wait = page_wait(d, 60)
    entry = wait.until(lambda d: d.find_elements(By.CSS_SELECTOR, f"#games-list li[data-game='{listed_id}']"))[0]
    assert d.find_elements(By.CSS_SELECTOR, f"#games-list li[data-game='{absent_id}']") == []
    assert entry.text.endswith(want), (entry.text, want)
    _assert_fits(d, size, "my games")
    entry.find_element(By.CSS_SELECTOR, "a.replay-link").click()
    wait.until(lambda d: len(d.find_elements(By.CSS_SELECTOR, "#replay-table tr")) == 49)
    assert d.find_element(By.ID, "replay").is_displayed()
    assert d.find_element(By.ID, "games-error").is_displayed() is False


def test_the_last_capturer_sweeps_the_pool(server, browser):  # noqa: F811
    """The last card of a hand against ``greedy`` played on the page (the seeded deal, 46 moves
    played through the API; a card laid where one may be): the server's view names a final sweep, and one flying copy
    of class ``anim-sweep`` is added for each card of it."""
    from selenium.webdriver.common.by import By

    d = browser
    # greedy takes no seed: on the seeded deal the whole hand is the same every run
    data = httpx.post(f"{server}/api/games", json={"level": "greedy", "seat": "alex", "seed": SEED}, timeout=60).json()
    game = {"id": data["id"], "token": data["token"]}
    _play_api(server, game, 46, data)  # Alex leads: his last card is move 47, the AI's move 48
    script = d.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": RECORDER})
    try:
        _open(d, server, "en", DESKTOP, game)
        page_wait(d, 60).until(lambda d: d.execute_script(MY_TURN))
        legal = d.execute_script("return view.hand.legal")
        move = min(legal, key=lambda a: len(a["captured"]))  # a card laid if one may be: the pool stays
        select_move(d, move)
        d.find_element(By.ID, "play").click()
        page_wait(d, 60).until(lambda d: d.find_element(By.ID, "result").is_displayed())
        sweep = d.execute_script("return view.hand.sweep")
        assert sweep and sweep["cards"], sweep  # the seeded deal ends with cards left in the pool
        swept = [c for c in d.execute_script("return window.__added") if "anim-sweep" in c.split()]
        assert len(swept) == len(sweep["cards"]), (swept, sweep)
    finally:
        d.execute_cdp_cmd("Page.removeScriptToEvaluateOnNewDocument", script)
