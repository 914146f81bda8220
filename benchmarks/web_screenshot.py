"""The page photographed for ``docs/web.md`` and the README: a real server on 127.0.0.1 (a
temporary database, seeded deals allowed), Debian's headless Chromium through Selenium and
chromedriver, the language chosen with the page's own switch (English or فا), a match against the
``best`` level on a seeded deal, a few moves clicked, then a hint; the screenshot is the browser's
own, of the screen as it is (1280 x 900 by default; a size under 800 px wide is emulated as a
phone, the page's ``<meta viewport>`` honoured, one CSS pixel to one pixel).

    python benchmarks/web_screenshot.py --lang en [--out docs/web-screenshot.png] [--seed 7] [--moves 4]
    python benchmarks/web_screenshot.py --lang fa [--out docs/web-screenshot-fa.png]
    python benchmarks/web_screenshot.py --lang fa --size 390x844 --no-hint --choose --out docs/img/web/fa-390x844.png
"""

from __future__ import annotations

import argparse
import random
import tempfile
import threading
import time
from pathlib import Path

CHROMIUM, CHROMEDRIVER = "/usr/bin/chromium", "/usr/bin/chromedriver"
#: the AI has answered the move (or the hand is over)
MOVED_ON = "return view.hand.moves_played > arguments[0] + 1 || view.status !== 'playing'"
MY_TURN = "return !!view && !busy && view.status === 'playing' && view.hand.to_move === 'you'"
OVER = "return !!view && !busy && view.status !== 'playing'"
#: under this width the browser is a phone (touch, the page's viewport honoured)
PHONE_BELOW = 800


def parse_size(text: str) -> tuple[int, int]:
    """``"390x844"``: (390, 844)."""
    try:
        width, height = (int(x) for x in text.lower().split("x"))
    except ValueError:
        raise argparse.ArgumentTypeError(f"not a size WIDTHxHEIGHT: {text!r}") from None
    if not (200 <= width <= 4000 and 200 <= height <= 4000):
        raise argparse.ArgumentTypeError(f"a size from 200x200 to 4000x4000, not {text!r}")
    return width, height


def parse_args() -> argparse.Namespace:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lang", choices=("en", "fa"), default="fa", help="the page's language")
    ap.add_argument("--out", help="the PNG (default: docs/web-screenshot.png, or -fa.png in Persian)")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--moves", type=int, default=4, help="moves of yours before the hint")
    ap.add_argument("--size", type=parse_size, default=(1280, 900), help="the screen, WIDTHxHEIGHT (default 1280x900)")
    ap.add_argument("--no-hint", dest="hint", action="store_false", help="no hint: the table as it is")
    ap.add_argument("--choose", action="store_true", help="then choose a card of the hand (the one taking the most)")
    ap.add_argument("--finish", action="store_true", help="play the hand out and photograph the score and the replay")
    args = ap.parse_args()
    if args.out is None:
        args.out = "docs/web-screenshot.png" if args.lang == "en" else "docs/web-screenshot-fa.png"
    return args


def start_server(tmp: str):
    """The app (every level) under uvicorn in a thread of this process: (server, thread, port)."""
    import uvicorn

    from pasur.web.app import create_app
    from pasur.web.loadtest import free_port

    app = create_app(Path(tmp) / "games.sqlite3", allow_seeds=True)
    port = free_port()
    server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
    thread = threading.Thread(target=server.run, daemon=True)
    thread.start()
    while not server.started:
        time.sleep(0.05)
    return server, thread, port


def open_browser(tmp: str, size: tuple[int, int]):
    """Headless Chromium showing ``size`` CSS pixels, one pixel each; a phone under 800 px wide."""
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service

    opts = Options()
    opts.binary_location = CHROMIUM
    for a in ("--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
              "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage", "--hide-scrollbars",
              "--window-size=1280,900", f"--user-data-dir={tmp}/profile"):  # fmt: skip
        opts.add_argument(a)
    d = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=opts)
    width, height = size
    phone = width < PHONE_BELOW
    metrics = {"width": width, "height": height, "deviceScaleFactor": 1, "mobile": phone}
    d.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", metrics)  # the page's own size
    d.execute_cdp_cmd("Emulation.setTouchEmulationEnabled", {"enabled": phone, "maxTouchPoints": 5 if phone else 1})
    return d


def start_match(d, url: str, lang: str) -> None:
    """The page in ``lang`` (chosen with its switch), a match against ``best`` started as Alex."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import Select, WebDriverWait

    wait = WebDriverWait(d, 120)
    d.get(url)
    wait.until(lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-ready") == "1")
    d.execute_script("document.body.dataset.ready = ''")  # the switch reloads the page: wait for the new one
    d.find_element(By.CSS_SELECTOR, f"#lang-switch [data-lang='{lang}']").click()
    direction = "rtl" if lang == "fa" else "ltr"
    ready = f"return document.documentElement.dir === '{direction}' && document.body.dataset.ready === '1'"
    wait.until(lambda d: d.execute_script(ready))
    Select(d.find_element(By.ID, "level")).select_by_value("best")
    Select(d.find_element(By.ID, "seat")).select_by_value("alex")
    d.find_element(By.ID, "mode-match").click()
    d.find_element(By.ID, "start").click()


def play_moves(d, moves: int, seed: int) -> None:
    """Up to ``moves`` moves of yours, a capture where there is one, by clicking as a person does."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    wait = WebDriverWait(d, 120)
    rng = random.Random(seed)
    for _ in range(moves):
        wait.until(lambda d: d.execute_script(MY_TURN) or d.execute_script(OVER))
        if d.execute_script(OVER):
            return
        legal = d.execute_script("return view.hand.legal")
        action = rng.choice([a for a in legal if a["captured"]] or legal)
        before = d.execute_script("return view.hand.moves_played")
        d.find_element(By.CSS_SELECTOR, f"#hand [data-card='{action['card']}']").click()
        for c in action["captured"]:
            card = d.find_element(By.CSS_SELECTOR, f"#pool [data-card='{c}']")
            if "chosen" not in card.get_attribute("class"):
                card.click()
        d.find_element(By.ID, "play").click()
        wait.until(lambda d, n=before: d.execute_script(MOVED_ON, n))


def photograph_end(d, out: str) -> None:
    """The score screen, then the replay."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support.ui import WebDriverWait

    WebDriverWait(d, 120).until(lambda d: d.execute_script(OVER))
    WebDriverWait(d, 300).until(lambda d: d.find_element(By.ID, "show-replay").is_enabled())
    d.find_element(By.ID, "show-replay").click()
    d.execute_script("window.scrollTo(0, 0)")
    d.save_screenshot(out)
    d.execute_script("document.getElementById('replay').scrollIntoView()")
    d.save_screenshot(out.replace(".png", "-replay.png"))


def photograph_table(d, out: str, hint: bool, choose: bool) -> None:
    """The table at your turn: with the hint's list, and/or a card of the hand chosen."""
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import WebDriverWait

    wait = WebDriverWait(d, 120)
    wait.until(lambda d: d.execute_script(MY_TURN))
    if hint:
        d.find_element(By.ID, "hint").click()
        wait.until(ec.visibility_of_element_located((By.ID, "hint-box")))
    if choose:
        legal = d.execute_script("return view.hand.legal")
        card = max(legal, key=lambda a: len(a["captured"]))["card"]
        d.find_element(By.CSS_SELECTOR, f"#hand [data-card='{card}']").click()
    wait.until(lambda d: d.execute_script("return document.fonts.status === 'loaded' && !busy"))
    d.execute_script("window.scrollTo(0, 0)")
    d.save_screenshot(out)


def main() -> None:
    args = parse_args()
    Path(args.out).parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory() as tmp:
        server, thread, port = start_server(tmp)
        d = open_browser(tmp, args.size)
        try:
            start_match(d, f"http://127.0.0.1:{port}/?delay=0&seed={args.seed}", args.lang)
            play_moves(d, 24 if args.finish else args.moves, args.seed)
            if args.finish:
                photograph_end(d, args.out)
            else:
                photograph_table(d, args.out, args.hint, args.choose)
            print(f"wrote {args.out}")
        finally:
            d.quit()
            server.should_exit = True
            thread.join(timeout=30)


if __name__ == "__main__":
    main()
