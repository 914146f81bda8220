"""Issue 44, item 3 in a real browser (Debian's headless Chromium, as ``test_web_browser.py``: one
server, one browser; skipped without the browser except under CI): the rules panel opens in
English and in Persian (right to left) with the engine's examples, and the guide, once ticked,
shows the reasons of each legal move on the player's turn, in both languages."""

from __future__ import annotations

from test_web_browser import _shot, browser, live_server, page_wait  # noqa: F401 (fixtures)
from test_web_phone import _assert_fits, _assert_on_screen, _assert_touchable

from pasur.web.teach import EXAMPLE_RULES, teach_payload


def _ready(d) -> bool:
    return d.find_element("tag name", "body").get_attribute("data-ready") == "1"


def _open_panel(d, wait) -> list:
    """Open the rules panel from the setup and wait for its examples; their elements."""
    d.find_element("id", "open-teach").click()
    wait.until(lambda d: len(d.find_elements("css selector", "#teach .teach-example")) == len(EXAMPLE_RULES))
    return d.find_elements("css selector", "#teach .teach-example")


def _my_turn(d):
    s = d.execute_script("return view && {status: view.status, to: view.hand.to_move, busy: busy}")
    return s if s and not s["busy"] and s["status"] == "playing" and s["to"] == "you" else False


def _guide_lines(d) -> list[tuple[str, str]]:
    return [(li.get_attribute("data-card"), li.text) for li in d.find_elements("css selector", "#guide-box li")]


def test_the_rules_panel_and_the_guide_in_english_and_persian(live_server, browser, tmp_path):  # noqa: F811

    base, _ = live_server
    d = browser
    wait = page_wait(d, 60)
    d.get(base + "/?delay=0&seed=7")
    wait.until(_ready)
    # the panel in English: every section, every example in the order taught, the sums in figures
    examples = _open_panel(d, wait)
    assert d.find_element("css selector", "#teach h2").text == "How to play Pasur"
    assert len(d.find_elements("css selector", "#teach .teach-section")) == 7
    assert [e.get_attribute("data-rule") for e in examples] == list(EXAMPLE_RULES)
    payload = {ex["rule"]: ex for ex in teach_payload()["examples"]}
    values = payload["sum_many"]["actions"][0]["why"]["values"]
    assert " + ".join(map(str, values)) + " = 11" in examples[1].text
    assert "Sur: the table is cleared (+5 points)" in examples[EXAMPLE_RULES.index("sur")].text
    style = "getComputedStyle(document.querySelector('.teach-example'))"
    assert d.execute_script(f"return {style}.borderLeftWidth") == "3px"  # the start side, left to right
    _shot(d, tmp_path, "web-teach-en.png")
    d.find_element("id", "close-teach").click()
    assert not d.find_element("id", "teach").is_displayed()
    # the guide, ticked in the setup and remembered; then a hand: every legal move with its reasons
    d.find_element("id", "guide").click()
    assert d.execute_script("return localStorage.getItem('pasur-guide')") == "1"
    d.find_element("id", "start").click()
    wait.until(_my_turn)
    legal = d.execute_script("return view.hand.legal")
    lines = _guide_lines(d)
    assert d.find_element("id", "guide-box").is_displayed() and len(lines) == len(legal)
    for a, (card, text) in zip(legal, lines, strict=True):
        why = a["why"]
        assert card == a["card"]
        if why["rule"] == "sum":
            assert " + ".join(map(str, why["values"])) + " = 11" in text
        elif why["rule"] == "lay":
            assert "no capture" in text
        else:
            assert f"a {why['rule'].capitalize()} takes" in text
    _shot(d, tmp_path, "web-guide-en.png")
    # a card chosen: only its moves
    card = legal[-1]["card"]
    d.find_element("css selector", f"#hand [data-card='{card}']").click()
    lines = _guide_lines(d)
    assert lines and {c for c, _ in lines} == {card} and len(lines) == sum(a["card"] == card for a in legal)
    # Persian: the game resumes with the guide on, in Persian words and digits
    d.find_element("css selector", "#lang-switch [data-lang='fa']").click()
    wait.until(_ready)
    wait.until(_my_turn)
    assert d.execute_script("return document.documentElement.dir") == "rtl"
    lines = _guide_lines(d)
    assert len(lines) == len(legal)
    for _, text in lines:
        assert "می‌برد" in text or "به زمین" in text
        assert not any(ch.isascii() and ch.isalnum() for ch in text), text
    _shot(d, tmp_path, "web-guide-fa.png")
    # the panel in Persian, from the setup: right to left, the same examples
    d.find_element("id", "new-game").click()
    examples = _open_panel(d, wait)
    assert d.find_element("css selector", "#teach h2").text == "طرز بازی پاسور"
    assert [e.get_attribute("data-rule") for e in examples] == list(EXAMPLE_RULES)
    assert d.execute_script(f"return {style}.direction") == "rtl"
    assert d.execute_script(f"return {style}.borderRightWidth") == "3px"  # the start side, mirrored
    assert "۱۱" in examples[0].text and not any(ch.isascii() and ch.isdigit() for ch in examples[0].text)
    _shot(d, tmp_path, "web-teach-fa.png")
    # on a phone (360 x 740), in Persian: the panel open, then a hand with the guide on, fit the
    # screen's width, every button a finger's size, the hand and Play on screen
    phone = (360, 740, True)
    d.execute_cdp_cmd(
        "Emulation.setDeviceMetricsOverride", {"width": 360, "height": 740, "deviceScaleFactor": 1, "mobile": True}
    )
    d.refresh()
    wait.until(_ready)
    _open_panel(d, wait)
    _assert_fits(d, phone, "the rules panel")
    _assert_touchable(d, phone, "the rules panel")
    d.find_element("id", "close-teach").click()
    d.find_element("id", "start").click()
    wait.until(_my_turn)
    assert d.find_element("id", "guide-box").is_displayed()
    _assert_fits(d, phone, "the guide")
    _assert_on_screen(d, phone, "the guide")
    severe = [e for e in d.get_log("browser") if e["level"] == "SEVERE"]
    assert severe == [], severe
