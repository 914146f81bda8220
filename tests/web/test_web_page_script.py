"""Functions of the page's script (``static/app.js``) run under Node, without a browser: the
words the page writes, in English and in Persian (skipped where Node is missing, except under CI);
and the translation coverage of the page, read statically: every key the page uses has an English
and a Persian string, every string is used, and no word of ``index.html`` escapes the catalog."""

from __future__ import annotations

import json
import os
import re
import shutil
import subprocess
from html.parser import HTMLParser
from pathlib import Path

import pytest

import pasur.web

STATIC = Path(pasur.web.__file__).with_name("static")
APP_JS = STATIC / "app.js"
#: the page's scripts in the order index.html loads them
SCRIPTS = [STATIC / "strings.js", STATIC / "tables.js", APP_JS]

#: the scripts in a bare context (what they read at load: location, window, localStorage; no
#: navigator, so the language is English until useLang), then the calls asked for, printed as JSON
RUNNER = r"""
const vm = require("vm");
const fs = require("fs");
const ctx = { location: { search: "" }, window: { addEventListener() {} }, localStorage: {}, URLSearchParams, console };
vm.createContext(ctx);
for (const f of JSON.parse(process.argv[1])) vm.runInContext(fs.readFileSync(f, "utf8"), ctx);
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
        [node, "-e", RUNNER, json.dumps([str(p) for p in SCRIPTS]), json.dumps([list(c) for c in calls])],
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
    one, other = "count.card_one", "count.card_other"
    assert call_js(("plural", [1, one, other]), ("plural", [0, one, other]), ("plural", [2, one, other])) == [
        "1 card",
        "0 cards",
        "2 cards",
    ]


def test_the_panels_show_the_surs_that_score():
    """Issue 24: a panel shows the Surs made and, when the match rules cancel or void some, how
    many score (its points are the server's, counted by the match rules)."""
    assert call_js(
        ("sursText", [{"surs": 2, "surs_scored": 2}]),
        ("sursText", [{"surs": 3, "surs_scored": 1}]),
        ("sursText", [{"surs": 1}]),
    ) == ["2", "3 (1 scored)", "1"]


def test_the_words_in_persian():
    """In Persian the same functions write Persian words and Persian digits (no ASCII digit left),
    card names with the Iranian names, and the known server messages translated."""
    out = call_js(
        ("useLang", ["fa"]),
        ("summaryText", [_hand(30, 7, 20, 6, 3), {"target": 62, "totals": {"you": 20, "ai": 9}}]),
        ("sursText", [{"surs": 3, "surs_scored": 1}]),
        ("cardName", ["JC"]),
        ("cardName", ["QH"]),
        ("cardName", ["KS"]),
        ("cardName", ["AD"]),
        ("cardName", ["TD"]),
        ("moveText", [{"card": "5C", "captured": ["6D"]}]),
        ("moveText", [{"card": "7S", "captured": []}]),
        ("num", [2026]),
        ("dec", [-1.25, 2]),
        ("serverText", ["it is not your turn"]),
        ("serverText", ["this hand has 12 moves, not 13: reload the table"]),
        ("serverText", ["something new"]),
        ("useLang", ["en"]),
        ("cardName", ["TD"]),
        ("serverText", ["something new"]),
    )
    fa, summary, surs, jack, queen, king, ace, ten, take, lay = out[:10]
    year, minus, turn, stale, other, en, ten_en, other_en = out[10:]
    assert summary.startswith("برداشته‌ها: شما ۳۰ کارت (۷ خاج)، هوش مصنوعی ۲۰ (۶ خاج).")
    assert "۳ کارت آخر زمین" in summary and "(تا ۶۲)" in summary
    assert not re.search(r"[0-9A-Za-z]", summary + surs)
    assert surs == "۳ (۱ حساب شد)"
    assert [jack, queen, king, ace, ten] == ["سرباز خاج", "بی‌بی دل", "شاه پیک", "آس خشت", "۱۰ خشت"]
    assert take == "۵♣ می‌برد: ۶♦" and lay == "۷♠ به زمین"
    assert year == "۲۰۲۶" and minus == "-۱٫۲۵"
    assert turn == "نوبت شما نیست" and stale.startswith("این دست ۱۲ حرکت دارد، نه ۱۳")
    assert other == "پیام سرور (به انگلیسی): something new"
    assert fa == "fa" and en == "en" and ten_en == "10 of diamonds" and other_en == "something new"


# -- translation coverage, read statically (no Node needed) -------------------------------------

KEY = r"[a-z_]+(?:\.[a-z0-9_]+)+"


def catalogs() -> dict[str, dict[str, str]]:
    """``STRINGS`` of ``strings.js``: each language's keys, with the raw source of each string."""
    src = (STATIC / "strings.js").read_text(encoding="utf-8")
    body = src[src.index("const STRINGS = {") : src.index("\n};\n")]
    out: dict[str, dict[str, str]] = {}
    for m in re.finditer(r"^  (\w+): \{\n(.*?)^  \},", body, flags=re.M | re.S):
        entries = re.split(rf'^\s*"({KEY})":', m.group(2), flags=re.M)
        out[m.group(1)] = dict(zip(entries[1::2], entries[2::2], strict=True))
    return out


def used_keys() -> set[str]:
    """Every key the page uses: ``data-t`` attributes of index.html and every string literal of its
    scripts that has a key's form (``"table.your_turn"``; outside the catalog itself)."""
    used = set(re.findall(r'data-t="([^"]+)"', (STATIC / "index.html").read_text(encoding="utf-8")))
    for f in ("app.js", "tables.js", "teach.js", "strings.js"):
        src = (STATIC / f).read_text(encoding="utf-8")
        if f == "strings.js":
            src = src[src.index("\n};\n") :]
        used |= set(re.findall(rf'"({KEY})"', src))
    return used


def test_every_key_has_an_english_and_a_persian_string():
    """Issue 28: every key the page uses (``index.html``'s ``data-t``, the scripts' ``t("key")``)
    has both an ``en`` and an ``fa`` string, with the same ``{placeholders}``; no string goes
    unused; a Persian string is written in Persian (it has Persian letters)."""
    cat = catalogs()
    assert set(cat) == {"en", "fa"}
    en, fa = cat["en"], cat["fa"]
    assert len(en) > 150
    assert set(en) == set(fa), ("keys in one language only", set(en) ^ set(fa))
    used = used_keys()
    assert used - set(en) == set(), "keys without a string"
    assert set(en) - used == set(), "strings no page uses"
    for key in en:
        assert set(re.findall(r"\{(\w+)\}", en[key])) == set(re.findall(r"\{(\w+)\}", fa[key])), key
        words = re.sub(r"\{\w+\}", "", "".join(re.findall(r'"((?:[^"\\]|\\.)*)"', fa[key])))
        if re.search(r"[^\W\d_]", words):  # words, not only marks and placeholders ("#", "، ")
            assert re.search(r"[\u0600-\u06FF]", words), (key, words)


class _Text(HTMLParser):
    """The text nodes of a page with letters in them, each with whether it lies inside an element
    carrying ``data-t`` (its text comes from the catalog) or ``data-lang`` (the language switch)."""

    VOID = frozenset({"meta", "link", "input", "br", "img", "hr", "source"})

    def __init__(self) -> None:
        super().__init__()
        self.stack: list[tuple[str, bool, str | None]] = []
        self.loose: list[str] = []
        self.fallbacks: list[tuple[str, str]] = []  # (key, text) written inside a data-t element
        self.attrs_with_words: list[str] = []

    def handle_starttag(self, tag, attrs):
        a = dict(attrs)
        for name in ("title", "placeholder", "aria-label", "alt"):
            if a.get(name) and re.search(r"[^\W\d_]", a[name]):
                self.attrs_with_words.append(f"<{tag} {name}={a[name]!r}>")
        if tag not in self.VOID:
            covered = "data-t" in a or "data-lang" in a or bool(self.stack and self.stack[-1][1])
            self.stack.append((tag, covered, a.get("data-t")))

    def handle_endtag(self, tag):
        while self.stack:
            if self.stack.pop()[0] == tag:
                break

    def handle_data(self, data):
        if re.search(r"[^\W\d_]", data) and not (self.stack and self.stack[-1][1]):
            self.loose.append(data.strip())
        if data.strip() and self.stack and self.stack[-1][2]:
            self.fallbacks.append((self.stack[-1][2], data.strip()))


def test_no_word_of_index_html_escapes_the_catalog():
    """Every text node of ``index.html`` with a letter in it lies inside an element that carries
    ``data-t`` (filled from the catalog at load) or, the one exception, inside the language switch
    (``data-lang``: each language's name in its own language, the same on both pages); no
    attribute a person sees (title, placeholder, aria-label, alt) holds words. The few texts kept
    inside data-t elements (the title and the name, for a reader without scripts) are the English
    catalog's, word for word."""
    p = _Text()
    p.feed((STATIC / "index.html").read_text(encoding="utf-8"))
    assert p.loose == [], "words outside data-t"
    assert p.attrs_with_words == []
    en = {k: "".join(re.findall(r'"((?:[^"\\]|\\.)*)"', v)) for k, v in catalogs()["en"].items()}
    assert p.fallbacks and all(en[key] == text for key, text in p.fallbacks), p.fallbacks


def test_the_scripts_write_no_english_literal():
    """A static look at the scripts: no string with letters goes straight to the page (``text:``,
    ``textContent =``, ``say(``, ``alert(``): each comes from ``t(...)`` or a function built on it."""
    bad = []
    for f in ("app.js", "tables.js", "teach.js"):
        for n, line in enumerate((STATIC / f).read_text(encoding="utf-8").splitlines(), 1):
            code = line.split("//")[0]
            if re.search(r"""(text:\s*|textContent\s*=\s*|\bsay\(|\balert\()["'`][^"'`]*[A-Za-z]""", code):
                bad.append(f"{f}:{n}: {line.strip()}")
    assert bad == []


def test_the_servers_fixed_messages_have_a_translation():
    """The page translates the server's error messages by their English text (``SERVER_ERRORS``
    in ``strings.js``; the API keeps its English messages, which tests and the terminal read):
    every fixed message the game and table services and the live socket can send is in it, so a
    new one cannot slip by untranslated. (Messages with numbers in them are matched by patterns,
    and anything else is shown with a Persian note that it is the server's English.)"""
    import pasur.web.players as players
    import pasur.web.service as service
    import pasur.web.tables as tables

    src = (STATIC / "strings.js").read_text(encoding="utf-8")
    table = src[src.index("const SERVER_ERRORS = {") :]
    known = set(re.findall(r'^\s*"([^"]+)": "server\.', table[: table.index("\n};")], flags=re.M))
    sent = {service.NOT_FOUND, service.DAMAGED, tables.NOT_FOUND, players.NO_PLAYER, "internal error"}
    web = Path(pasur.web.__file__).parent
    for f in ("service.py", "tables.py", "live.py", "players.py"):
        text = (web / f).read_text(encoding="utf-8")
        sent |= set(re.findall(r'Conflict\("([^"{]+)"\)', text))
        sent |= set(re.findall(r'"error": "([^"]+)"', text))
    assert len(sent) > 12
    assert sent - known == set(), "server messages the page cannot translate"


def test_the_ratings_words_in_persian():
    """Issue 28, part 3: the player's line and the server's messages about names and rated tables
    in Persian, with Persian digits; a name keeps its own letters."""
    from pasur.web.players import clean_name

    try:
        clean_name("x")
    except Exception as e:  # the name rule, word for word as the server sends it
        rule = str(e)
    out = call_js(
        ("useLang", ["fa"]),
        ("t", ["player.shown", {"name": "Alice", "rating": 1562, "rd": 253, "games": 2}]),
        ("serverText", ["the name 'Alice' is taken"]),
        ("serverText", [rule]),
        ("serverText", ["the level 'random' has no rating from the arena: a rated table needs a rated level"]),
        ("serverText", ["a rated table plays a match: give the rules a target"]),
    )
    _, shown, taken, bad_name, level, target = out
    assert shown == "شما با نام Alice بازی می‌کنید: ریتینگ ۱۵۶۲ (عدم قطعیت ۲۵۳، ۲ دست رتبه‌دار)."
    assert taken == "نام 'Alice' گرفته شده است"
    for text in (bad_name, level, target):
        assert not re.search(r"[A-Za-z0-9]", text.replace("_", "")), text


def test_a_persian_name_is_isolated_in_english_sentences():
    """Issue 44: a rated opponent's name is put into sentences between U+2068 and U+2069 (first
    strong isolate, pop directional isolate), so the numbers after a Persian name stay on their
    side: "Captured: you 26 cards (7 clubs), بهار 26 (6 clubs)" without it read "26 بهار"."""
    view = {"names": {"you": "Alice", "ai": "بهار"}, "opponent": {"kind": "person", "level": None}}
    forms = call_js(*[("tableOpponent", [view, form]) for form in ("short", "subject", "object")])
    assert forms == ["\u2068بهار\u2069"] * 3
    unrated = call_js(("tableOpponent", [{"opponent": {"kind": "person"}}, "object"]))
    assert unrated == ["your friend"]  # no name at an unrated table: the catalog's words
    counts = {"you_cards": "26 cards", "you_clubs": "7 clubs", "opp": forms[2], "ai_cards": 26, "ai_clubs": "6 clubs"}
    captured, line = call_js(
        ("t", ["summary.captured", counts]),
        ("playerLine", [{"name": "بهار", "rating": 1500, "rd": 350, "games": 0}]),
    )
    assert captured == "Captured: you 26 cards (7 clubs), \u2068بهار\u2069 26 (6 clubs)."
    assert line == "You play as \u2068بهار\u2069: rating 1500 (RD 350, 0 hands rated)."
