"""Issue 44, item 3: the game taught on the page. The reasons of each legal move (``why``) agree
with the rules as the spec states them on many random positions; the worked examples, found by
the rules engine, show every rule the page teaches; the game views carry the reasons and never a
hidden card; the page's words for the reasons exist in English and Persian (under Node); and in a
real browser the rules panel opens in both languages and the guide shows the reasons of a move."""

from __future__ import annotations

import json
import random
import re
import shutil
import subprocess

import pytest
from test_web_page_script import RUNNER, SCRIPTS, STATIC, catalogs

from pasur.game.rules import Action, captures_for, card_actions, is_sur, legal_actions
from pasur.web.teach import EXAMPLE_RULES, move_why, teach_payload

# the spec's card numbering, written out again here (not imported): index = 4 * rank + suit
JACK, QUEEN, KING, FINAL_ROUND = 10, 11, 12, 5
TWO_OF_CLUBS, TEN_OF_DIAMONDS = 4, 37
RANK_TEXT, SUIT_TEXT = "A23456789TJQK", "CDHS"


def card_from_text(text: str) -> int:
    return 4 * RANK_TEXT.index(text[0]) + SUIT_TEXT.index(text[1])


def spec_points(card: int) -> int:
    """A captured card's points, from the spec's list: each Ace and Jack 1, 2♣ 2, 10♦ 3."""
    if card == TWO_OF_CLUBS:
        return 2
    if card == TEN_OF_DIAMONDS:
        return 3
    return 1 if card // 4 in (0, JACK) else 0


def cards(mask: int) -> list[int]:
    return [c for c in range(52) if mask >> c & 1]


def check_why(a: Action, why: dict, pool: int, round_: int, ways: int) -> None:
    """``why`` against the spec's words, computed here from the cards alone."""
    taken, r = cards(a.captured), a.card // 4
    assert why["options"] == ways and why["taken"] == len(taken)
    if not taken:
        assert why["rule"] == "lay" and why["points"] == why["clubs"] == 0 and not why["sur"]
        return
    if r < JACK:
        assert why["rule"] == "sum" and why["values"] == [r + 1] + [c // 4 + 1 for c in taken]
        assert sum(why["values"]) == 11 and all(c < 40 for c in taken)
    elif r == JACK:  # every numeric card and every Jack of the pool, nothing else
        assert why["rule"] == "jack" and taken == [c for c in cards(pool) if c // 4 <= JACK]
    else:
        assert why["rule"] == ("queen" if r == QUEEN else "king") and len(taken) == 1 and taken[0] // 4 == r
    cleared = a.captured == pool
    sur = cleared and r != JACK and round_ < FINAL_ROUND
    assert why["cleared"] == cleared and why["sur"] == sur and why["sur_points"] == (5 if sur else 0)
    assert why["no_sur"] == (None if sur or not cleared else "jack" if r == JACK else "last_round")
    assert why["points"] == sum(spec_points(c) for c in [a.card, *taken])
    assert why["clubs"] == sum(c % 4 == 0 for c in [a.card, *taken])


def test_the_reasons_agree_with_the_rules_on_random_positions():
    """Every legal action of 3000 random positions (a hand of 1 to 4 cards, a pool of 0 to 8, any
    round): its reasons are the spec's (a sum's values add up to 11 and are the cards' values, a
    Jack's capture is every numeric card and Jack of the pool, the Sur flag is "cleared, not with a
    Jack, not in the last round", the points and clubs are those of the cards taken and played),
    and the Sur flag is also the engine's own. Every kind of reason comes up."""
    rng = random.Random(2026)
    seen: set[str] = set()
    for _ in range(3000):
        drawn = rng.sample(range(52), rng.randint(1, 12))
        n_hand = rng.randint(1, min(4, len(drawn)))
        hand, pool = sum(1 << c for c in drawn[:n_hand]), sum(1 << c for c in drawn[n_hand:][:8])
        round_ = rng.randrange(6)
        legal = legal_actions(hand, pool)
        for a in legal:
            why = move_why(a, pool, round_)
            check_why(a, why, pool, round_, sum(b.card == a.card for b in legal))
            assert why["sur"] == is_sur(a, pool, round_)
            assert (why["rule"] == "lay") == (captures_for(a.card, pool) == ())
            seen |= {why["rule"], f"sur={why['sur']}", f"no_sur={why['no_sur']}", f"choice={why['options'] > 1}"}
    kinds = {"sum", "jack", "queen", "king", "lay", "sur=True", "no_sur=jack", "no_sur=last_round", "choice=True"}
    assert kinds <= seen


#: what each example must show, checked on its cards alone: (card, taken, pool, round) -> bool
SHOWS = {
    "sum_one": lambda c, t, p, r: c < 40 and len(t) == 1 and t != p,
    "sum_many": lambda c, t, p, r: c < 40 and len(t) > 1 and t != p,
    "sum_choice": lambda c, t, p, r: c < 40 and len(t) > 0,  # and more than one action (below)
    "lay": lambda c, t, p, r: not t,
    "jack": lambda c, t, p, r: c // 4 == JACK and t and t != p,
    "jack_no_sur": lambda c, t, p, r: c // 4 == JACK and t == p,
    "queen": lambda c, t, p, r: c // 4 == QUEEN and len(t) == 1 and t[0] // 4 == QUEEN,
    "king": lambda c, t, p, r: c // 4 == KING and len(t) == 1 and t[0] // 4 == KING,
    "sur": lambda c, t, p, r: c // 4 != JACK and t == p and r < FINAL_ROUND,
    "last_round": lambda c, t, p, r: t == p and r == FINAL_ROUND,
    "points": lambda c, t, p, r: sum(spec_points(x) for x in [c, *t]) >= 2 and t,
    "clubs": lambda c, t, p, r: sum(x % 4 == 0 for x in [c, *t]) >= 3 and t,
}


def test_the_examples_show_every_rule_with_the_engines_captures():
    """One example per rule the panel teaches (sums, a choice, a lay, Jacks, Queens, Kings, a
    Sur, no Sur with a Jack or in the last round, point cards, clubs); each one's moves are all the
    moves the engine allows its card against its pool, with their reasons; and its position shows
    its rule (checked here on the cards)."""
    payload = teach_payload()
    examples = payload["examples"]
    assert [e["rule"] for e in examples] == list(EXAMPLE_RULES) and set(EXAMPLE_RULES) == set(SHOWS)
    assert payload["numbers"]["sum"] == 11 and payload["numbers"]["sur_points"] == 5
    for ex in examples:
        card, pool = card_from_text(ex["card"]), [card_from_text(c) for c in ex["pool"]]
        pool_mask = sum(1 << c for c in pool)
        assert card not in pool and 1 <= len(pool) <= 5 and ex["last_round"] == (ex["round"] == FINAL_ROUND)
        engine = [(a.card, a.captured) for a in card_actions(card, pool_mask)]
        moves = [(card_from_text(m["card"]), sum(1 << card_from_text(c) for c in m["captured"])) for m in ex["actions"]]
        assert moves == engine, ex["rule"]
        for m, (c, taken) in zip(ex["actions"], moves, strict=True):
            check_why(Action(c, taken), m["why"], pool_mask, ex["round"], len(moves))
        shows = [SHOWS[ex["rule"]](c, cards(t), pool, ex["round"]) for c, t in moves]
        assert any(shows), ex
        if ex["rule"] == "sum_choice":
            assert len(moves) > 1


def test_the_api_serves_the_examples(client):
    r = client.get("/api/teach/examples")
    assert r.status_code == 200 and r.json() == json.loads(json.dumps(teach_payload()))


def test_every_legal_move_of_a_game_says_why_and_no_hidden_card(client, leak_watch):
    """Three hands against the AI with random moves: at each of the person's turns every legal
    move carries its reasons, right for the pool and round the view shows; every payload built
    meanwhile is checked for hidden cards (the leak watch)."""
    rng = random.Random(44)
    turns = 0
    for _ in range(3):
        r = client.post("/api/games", json={"level": "random", "seat": rng.choice(["alex", "bob"])})
        view = r.json()
        headers = {"X-Pasur-Token": view["token"]}
        while view["status"] == "playing":
            hand = view["hand"]
            pool = sum(1 << card_from_text(c) for c in hand["pool"])
            for m in hand["legal"]:
                c = card_from_text(m["card"])
                taken = sum(1 << card_from_text(x) for x in m["captured"])
                ways = sum(x["card"] == m["card"] for x in hand["legal"])
                check_why(Action(c, taken), m["why"], pool, hand["round"], ways)
            turns += 1
            m = rng.choice(hand["legal"])
            r = client.post(
                f"/api/games/{view['id']}/moves", json={"card": m["card"], "captured": m["captured"]}, headers=headers
            )
            assert r.status_code == 200, r.text
            view = r.json()
    assert turns == 72 and leak_watch.checked > 72


# -- the page's words, under Node --------------------------------------------------------------

TEACH_JS = STATIC / "teach.js"


def call_teach(*calls: tuple[str, list]) -> list:
    """The page's scripts and teach.js under Node (as test_web_page_script), then the calls."""
    node = shutil.which("node") or shutil.which("nodejs")
    if node is None:
        import os

        if os.environ.get("CI"):
            pytest.fail("Node.js is missing (scripts/bootstrap.sh installs the nodejs package)")
        pytest.skip("Node.js is missing")
    scripts = json.dumps([str(p) for p in [*SCRIPTS, TEACH_JS]])
    out = subprocess.run(
        [node, "-e", RUNNER, scripts, json.dumps([list(c) for c in calls])],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return json.loads(out.stdout)


def test_teach_js_keys_have_both_languages():
    """Every key teach.js uses (written as a literal) has an English and a Persian string."""
    used = set(re.findall(r'"(teach\.[a-z0-9_.]+)"', TEACH_JS.read_text(encoding="utf-8")))
    cat = catalogs()
    assert len(used) > 40
    assert used - set(cat["en"]) == set() and used - set(cat["fa"]) == set()


def test_the_reasons_in_words_in_english_and_persian():
    """The reasons of a few moves in words, in English and in Persian (Persian digits, the sum kept
    left to right inside an isolate); and every move of every example, in both languages, has
    words for each of its reasons (no key shown, no "undefined"; no Latin letter in Persian)."""
    seven = {"card": "7C", "captured": ["3D", "AH"]}
    seven_why = move_why(Action(card_from_text("7C"), (1 << 9) | (1 << 2)), (1 << 9) | (1 << 2), 1)
    jack = {"card": "JD", "captured": ["5H", "JS"]}
    jack_why = move_why(Action(41, (1 << 18) | (1 << 43)), (1 << 18) | (1 << 43), 2)
    lay = {"card": "KS", "captured": []}
    lay_why = move_why(Action(51, 0), 1 << 18, 0)
    en = call_teach(("whyText", [seven, seven_why]), ("whyText", [jack, jack_why]), ("whyText", [lay, lay_why]))
    assert en == [
        "7♣ takes 3♦ A♥: 7 + 1 + 3 = 11; Sur: the table is cleared (+5 points); +1 point; +1 club",
        "J♦ takes 5♥ J♠: a Jack takes every number card and every Jack, never Queens or Kings; "
        "the table is cleared, but a Jack never makes a Sur; +2 points",
        "lay K♠: no capture: K♠ is laid on the table",
    ]
    fa = call_teach(("useLang", ["fa"]), ("whyText", [seven, seven_why]), ("whyText", [lay, lay_why]))[1:]
    assert fa[0].startswith("۷♣ می‌برد: ۳♦، آ♥: \u2066۷ + ۱ + ۳ = ۱۱\u2069؛ سور: زمین پاک شد (۵ امتیاز)")
    assert fa[1] == "ش♠ به زمین: برداشتی نیست: ش♠ به زمین گذاشته می‌شود"
    moves = [(m, m["why"]) for ex in teach_payload()["examples"] for m in ex["actions"]]
    for lang in ("en", "fa"):
        out = call_teach(("useLang", [lang]), *[("whyParts", [m, w]) for m, w in moves])[1:]
        for parts in out:
            text = " ".join(parts)
            assert parts and "teach." not in text and "undefined" not in text, text
            if lang == "fa":
                assert not re.search(r"[A-Za-z0-9]", text), text


def test_a_move_without_reasons_is_written_alone():
    """The offline game (static/offline/) builds its legal moves without ``why``: the guide then
    writes the move alone rather than failing (which would stop the page's render)."""
    assert call_teach(("whyText", [{"card": "5C", "captured": ["6D"]}, None])) == ["5♣ takes 6♦"]
