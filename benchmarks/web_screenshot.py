"""The page photographed for ``docs/web.md`` and the README: a real server on 127.0.0.1 (a
temporary database, seeded deals allowed), Debian's headless Chromium through Selenium and
chromedriver, the language chosen with the page's own switch (English or فا), a match against the
``best`` level on a seeded deal, a few moves clicked, then a hint; the screenshot is the browser's
own (1280 x 900).

    python benchmarks/web_screenshot.py --lang en [--out docs/web-screenshot.png] [--seed 7] [--moves 4]
    python benchmarks/web_screenshot.py --lang fa [--out docs/web-screenshot-fa.png]
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


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--lang", choices=("en", "fa"), default="fa", help="the page's language")
    ap.add_argument("--out", help="the PNG (default: docs/web-screenshot.png, or -fa.png in Persian)")
    ap.add_argument("--seed", type=int, default=7)
    ap.add_argument("--moves", type=int, default=4, help="moves of yours before the hint")
    ap.add_argument("--finish", action="store_true", help="play the hand out and photograph the score and the replay")
    args = ap.parse_args()
    if args.out is None:
        args.out = "docs/web-screenshot.png" if args.lang == "en" else "docs/web-screenshot-fa.png"

    import uvicorn
    from selenium import webdriver
    from selenium.webdriver.chrome.options import Options
    from selenium.webdriver.chrome.service import Service
    from selenium.webdriver.common.by import By
    from selenium.webdriver.support import expected_conditions as ec
    from selenium.webdriver.support.ui import Select, WebDriverWait

    from pasur.web.app import create_app
    from pasur.web.loadtest import free_port

    with tempfile.TemporaryDirectory() as tmp:
        app = create_app(Path(tmp) / "games.sqlite3", allow_seeds=True)
        port = free_port()
        server = uvicorn.Server(uvicorn.Config(app, host="127.0.0.1", port=port, log_level="warning"))
        thread = threading.Thread(target=server.run, daemon=True)
        thread.start()
        while not server.started:
            time.sleep(0.05)
        opts = Options()
        opts.binary_location = CHROMIUM
        for a in ("--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-background-networking",
                  "--disable-component-update", "--disable-sync", "--disable-dev-shm-usage", "--hide-scrollbars",
                  "--window-size=1280,900", f"--user-data-dir={tmp}/profile"):  # fmt: skip
            opts.add_argument(a)
        d = webdriver.Chrome(service=Service(executable_path=CHROMEDRIVER), options=opts)
        metrics = {"width": 1280, "height": 900, "deviceScaleFactor": 1, "mobile": False}
        d.execute_cdp_cmd("Emulation.setDeviceMetricsOverride", metrics)  # the page's own 1280 x 900
        try:
            wait = WebDriverWait(d, 120)
            d.get(f"http://127.0.0.1:{port}/?delay=0&seed={args.seed}")
            wait.until(lambda d: d.find_element(By.TAG_NAME, "body").get_attribute("data-ready") == "1")
            d.execute_script("document.body.dataset.ready = ''")  # the switch reloads the page: wait for the new one
            d.find_element(By.CSS_SELECTOR, f"#lang-switch [data-lang='{args.lang}']").click()
            direction = "rtl" if args.lang == "fa" else "ltr"
            ready = f"return document.documentElement.dir === '{direction}' && document.body.dataset.ready === '1'"
            wait.until(lambda d: d.execute_script(ready))
            Select(d.find_element(By.ID, "level")).select_by_value("best")
            Select(d.find_element(By.ID, "seat")).select_by_value("alex")
            d.find_element(By.ID, "mode-match").click()
            d.find_element(By.ID, "start").click()

            def my_turn(d):
                return d.execute_script(
                    "return !!view && !busy && view.status === 'playing' && view.hand.to_move === 'you'"
                )

            def over(d):
                return d.execute_script("return !!view && !busy && view.status !== 'playing'")

            rng = random.Random(args.seed)
            for _ in range(24 if args.finish else args.moves):
                wait.until(lambda d: my_turn(d) or over(d))
                if over(d):
                    break
                legal = d.execute_script("return view.hand.legal")
                captures = [a for a in legal if a["captured"]]
                action = rng.choice(captures or legal)
                before = d.execute_script("return view.hand.moves_played")
                d.find_element(By.CSS_SELECTOR, f"#hand [data-card='{action['card']}']").click()
                for c in action["captured"]:
                    card = d.find_element(By.CSS_SELECTOR, f"#pool [data-card='{c}']")
                    if "chosen" not in card.get_attribute("class"):
                        card.click()
                d.find_element(By.ID, "play").click()
                wait.until(lambda d, n=before: d.execute_script(MOVED_ON, n))
            if args.finish:
                wait.until(over)
                WebDriverWait(d, 300).until(lambda d: d.find_element(By.ID, "show-replay").is_enabled())
                d.find_element(By.ID, "show-replay").click()
                d.execute_script("window.scrollTo(0, 0)")
                d.save_screenshot(args.out)
                d.execute_script("document.getElementById('replay').scrollIntoView()")
                d.save_screenshot(args.out.replace(".png", "-replay.png"))
                print(f"wrote {args.out}")
                return
            wait.until(my_turn)
            d.find_element(By.ID, "hint").click()
            wait.until(ec.visibility_of_element_located((By.ID, "hint-box")))
            wait.until(lambda d: d.execute_script("return document.fonts.status === 'loaded' && !busy"))
            d.execute_script("window.scrollTo(0, 0)")
            Path(args.out).parent.mkdir(parents=True, exist_ok=True)
            d.save_screenshot(args.out)
            print(f"wrote {args.out}")
        finally:
            d.quit()
            server.should_exit = True
            thread.join(timeout=30)


if __name__ == "__main__":
    main()
