"""Functions of the page's script (``static/app.js``) run under Node, without a browser: the
words the page writes (skipped where Node is missing, except under CI)."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
from pathlib import Path

import pytest

import pasur.web

APP_JS = Path(pasur.web.__file__).with_name("static") / "app.js"

#: the script in a bare context (what it reads at load: location, window, localStorage), then
#: the calls asked for, printed as JSON
RUNNER = r"""
const vm = require("vm");
const fs = require("fs");
const ctx = { location: { search: "" }, window: { addEventListener() {} }, localStorage: {}, URLSearchParams, console };
vm.createContext(ctx);
vm.runInContext(fs.readFileSync(process.argv[1], "utf8"), ctx);
const calls = JSON.parse(process.argv[2]);
console.log(JSON.stringify(calls.map(([f, args]) => ctx[f](...args))));
"""


def call_js(*calls: tuple[str, list]) -> list:
    node = shutil.which("node") or shutil.which("nodejs")
    if node is None:
        if os.environ.get("CI"):  # scripts/bootstrap.sh installs it: under CI it must be there
            pytest.fail("Node.js is missing (scripts/bootstrap.sh installs the nodejs package)")
        pytest.skip("Node.js is missing")
    out = subprocess.run(
        [node, "-e", RUNNER, str(APP_JS), json.dumps([list(c) for c in calls])],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return json.loads(out.stdout)


def _hand(you_cards: int, you_clubs: int, ai_cards: int, ai_clubs: int, sweep: int | None) -> dict:
    return {
        "players": {
            "you": {"pile_count": you_cards, "clubs": you_clubs},
            "ai": {"pile_count": ai_cards, "clubs": ai_clubs},
        },
        "sweep": None if sweep is None else {"to": "ai", "cards": ["2C"] * sweep},
    }


def test_the_summary_of_a_hand_uses_singular_forms():
    """Issue 24: the page said "The last 1 cards"."""
    one, many = call_js(
        ("summaryText", [_hand(1, 1, 40, 12, 1), {"target": None}]),
        ("summaryText", [_hand(30, 7, 20, 6, 3), {"target": 62, "totals": {"you": 20, "ai": 9}}]),
    )
    assert "The last card of the pool went to the AI" in one and "1 cards" not in one
    assert one.startswith("Captured: you 1 card (1 club), the AI 40 (12 clubs).")
    assert "The last 3 cards of the pool went to the AI" in many and "Match: you 20, the AI 9 (to 62)." in many
    assert call_js(("plural", [1, "card"]), ("plural", [0, "card"]), ("plural", [2, "chunk"])) == [
        "1 card",
        "0 cards",
        "2 chunks",
    ]


def test_the_panels_show_the_surs_that_score():
    """Issue 24: a panel shows the Surs made and, when the match rules cancel or void some, how
    many score (its points are the server's, counted by the match rules)."""
    assert call_js(
        ("sursText", [{"surs": 2, "surs_scored": 2}]),
        ("sursText", [{"surs": 3, "surs_scored": 1}]),
        ("sursText", [{"surs": 1}]),
    ) == ["2", "3 (1 scored)", "1"]


def test_every_word_of_the_tables_is_in_strings_js():
    """The tables' words go through ``t("key")`` (``static/strings.js``): every key the page uses
    (in ``tables.js`` and as ``data-t`` in ``index.html``) has an English string, and every string
    is used."""
    import re

    static = APP_JS.parent
    strings = (static / "strings.js").read_text(encoding="utf-8")
    defined = set(re.findall(r'^\s*"([a-z_]+(?:\.[a-z_]+)+)":', strings, flags=re.M))
    used = set(re.findall(r'"((?:friend|invite|table|live|clock)\.[a-z_.]+)"', (static / "tables.js").read_text()))
    used |= set(re.findall(r'data-t="([a-z_.]+)"', (static / "index.html").read_text()))
    assert used and defined
    assert used - defined == set(), "keys without a string"
    assert defined - used == set(), "strings no page uses"
