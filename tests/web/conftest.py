"""Fixtures of the web tests: apps on a temporary database with fast AI levels, and a leak watch
that checks every payload the service builds, at the moment it is built.

Seeded deals (whoever knows the seed knows every card) are refused by the apps of these fixtures,
as by a real server, unless the test asks for them: ``@pytest.mark.allow_seeds`` (or
``make_client(allow_seeds=True)``).
"""

from __future__ import annotations

import contextlib
import re
from dataclasses import dataclass, field

import anyio.from_thread
import pytest
from fastapi.testclient import TestClient

from pasur.game.cards import N_ROUNDS, format_cards, parse_card, parse_deck
from pasur.web.app import create_app
from pasur.web.service import GameService, hand_game

#: fast levels for the tests (the real ones search; the API does not care which agent plays)
FAST = {"random": "random", "greedy": "greedy", "heuristic": "heuristic"}

#: a card as the API writes it ("7C", "10D" or "TD"; the page's suit symbols too)
CARD = re.compile(r"(?<![A-Za-z0-9_\-])(10|[A2-9TJQK])([CDHS♣♦♥♠])(?![A-Za-z0-9_\-])")
#: keys that would carry what a player may not see before the replay
SECRET_KEYS = frozenset({"deck", "deal", "seed", "sample_seed", "token_sha256", "hands_open", "undealt"})


def pytest_configure(config):
    config.addinivalue_line("markers", "allow_seeds: the test's apps deal seeded decks (pasur serve --allow-seeds)")


@pytest.fixture
def db(tmp_path):
    return tmp_path / "games.sqlite3"


@pytest.fixture
def make_client(db, request):
    """``make_client()``: a test client of a fresh app on the test's database (call it again to
    get a new app on the same file, as after a restart). Seeds are refused unless the test is
    marked ``allow_seeds`` or passes ``allow_seeds=True``."""
    clients = []

    def make(**kwargs) -> TestClient:
        kwargs.setdefault("levels", FAST)
        kwargs.setdefault("hint_level", "greedy")
        kwargs.setdefault("allow_seeds", request.node.get_closest_marker("allow_seeds") is not None)
        kwargs.setdefault("allowed_hosts", ["testserver"])  # the Host header of FastAPI's TestClient
        c = TestClient(create_app(db, **kwargs), raise_server_exceptions=True)
        clients.append((c, _keep_one_event_loop(c)))
        return c

    yield make
    for c, loop in clients:
        c.close()
        c.portal = None
        loop.close()


def _keep_one_event_loop(client: TestClient) -> contextlib.ExitStack:
    """Every request of ``client`` served on one event loop in one thread (as uvicorn serves a
    server's), not a new loop and thread per request (TestClient outside ``with``: 2 ms of CPU a
    request, about a quarter of an API test's); the app's lifespan is still not run (a test that
    wants it enters the client). Closing the stack stops the loop."""
    loop = contextlib.ExitStack()
    client.portal = loop.enter_context(anyio.from_thread.start_blocking_portal(**client.async_backend))
    return loop


@pytest.fixture
def client(make_client):
    return make_client()


# -- the leak watch -------------------------------------------------------------------------------


def strings_of(x, key=None):
    """Every (key, string) in a JSON value; dict keys count as strings too (with key None)."""
    if isinstance(x, dict):
        for k, v in x.items():
            yield None, str(k)
            yield from strings_of(v, k)
    elif isinstance(x, (list, tuple)):
        for v in x:
            yield from strings_of(v, key)
    elif isinstance(x, str):
        yield key, x


def cards_named(payload) -> int:
    """The cards written anywhere in ``payload`` (the game's id and token are random text, not cards)."""
    shown = 0
    for key, s in strings_of(payload):
        if key in ("id", "token"):
            continue
        for rank_, suit_ in CARD.findall(s):
            shown |= 1 << parse_card(rank_ + suit_)
    return shown


def referee_hidden(hand: dict, game) -> int:
    """The cards the person may not see now, from the referee's side alone (not from the person's
    observation, which the views are built from): the other seat's cards of this round not yet
    played, and every card of the rounds not yet dealt."""
    deck, seat, rnd = parse_deck(hand["deck"]), int(hand["seat"]), game.state.round
    played = 0
    for card, _ in hand["moves"]:
        played |= 1 << card
    hidden = deck.hand_mask(1 - seat, rnd) & ~played
    for r in range(rnd + 1, N_ROUNDS):
        hidden |= deck.hand_mask(0, r) | deck.hand_mask(1, r)
    return hidden


@dataclass
class LeakWatch:
    """What the hooks saw: ``checked`` payloads, and each leak found (where, what)."""

    checked: int = 0
    leaks: list[str] = field(default_factory=list)
    where: list[str] = field(default_factory=list)
    #: raise at a leak (False: record it only, to see what the request would have sent)
    strict: bool = True

    def check(self, payload, hand: dict, game, where: str) -> None:
        self.checked += 1
        self.where.append(where)
        problems = []
        hidden = cards_named(payload) & referee_hidden(hand, game)
        if hidden:
            problems.append(f"hidden cards {format_cards(hidden)}")
        keys = {s for k, s in strings_of(payload) if k is None} & SECRET_KEYS
        if keys:
            problems.append(f"secret keys {sorted(keys)}")
        if str(hand["deck"]) in str(payload):
            problems.append("the deck")
        if problems:
            self.leaks.append(f"{where} (after {len(hand['moves'])} moves): " + "; ".join(problems))
            if self.strict:
                raise AssertionError(self.leaks[-1])


@pytest.fixture
def leak_watch(monkeypatch):
    """Checks every payload the service builds at the moment it builds it, against the cards
    hidden at that moment: each step's state (after each move, the person's and each of the AI's,
    inside one request), each step, each game view and each hint. A leak is recorded and raised
    (the service may turn an exception into a 409, so the record is what the test reads, and the
    fixture fails the test at its end if any leak was recorded that the test did not take)."""
    watch = LeakWatch()

    def hooked_hand_view(orig):
        def _hand_view(self, turn):
            out = orig(self, turn)
            watch.check(out, turn.hand, turn.game, f"hand view, move {len(turn.hand['moves'])}")
            return out

        return _hand_view

    def hooked_play(orig):
        def _play(self, turn, action, by):
            out = orig(self, turn, action, by)
            watch.check(out, turn.hand, turn.game, f"step by {by}")
            return out

        return _play

    def hooked_view(orig):
        def _view_of(self, turn):
            out = orig(self, turn)
            watch.check(out, turn.hand, turn.game, "game view")
            return out

        return _view_of

    def hooked_hint(orig):
        def hint(self, game_id, token):
            out = orig(self, game_id, token)
            hand = self.store.get(game_id).hands[-1]  # a hint changes nothing: the state it was given in
            watch.check(out, hand, hand_game(hand), "hint")
            return out

        return hint

    for name, hook in (("_hand_view", hooked_hand_view), ("_play", hooked_play), ("_view_of", hooked_view),
                       ("hint", hooked_hint)):  # fmt: skip
        monkeypatch.setattr(GameService, name, hook(getattr(GameService, name)))
    yield watch
    assert not watch.leaks, watch.leaks


# -- tables for two people: what a player may see at each message ---------------------------------


def table_hidden(hand: dict, moves_played: int, player: int) -> int:
    """The cards ``player`` of a table may not see after ``moves_played`` moves of ``hand`` (a
    stored table hand), from the referee's side: the other seat's unplayed cards of the round and
    every card of the rounds not yet dealt."""
    from pasur.web.tables import seat_of

    so_far = {"deck": hand["deck"], "seat": seat_of(hand, player), "moves": hand["moves"][:moves_played]}
    return referee_hidden(so_far, hand_game(so_far))


def table_leaks(message, hands: list[dict], player: int) -> list[str]:
    """What is wrong with one message sent to ``player`` of a table whose hands (as stored now)
    are ``hands``: the view and each step are checked against the cards hidden at the state they
    show (their hand number and moves played), and no key may carry the deck."""
    problems = []
    pieces = []
    if isinstance(message, dict) and "view" in message:
        pieces.append(({k: v for k, v in message["view"].items()}, message["view"]))
        pieces += [(s, s) for s in message.get("steps", [])]
    elif isinstance(message, dict) and "hand" in message and "hand_number" in message:
        pieces.append(({k: v for k, v in message.items() if k != "steps"}, message))
        pieces += [(s, s) for s in message.get("steps", [])]
    for piece, where in pieces:
        state = where.get("hand") or where.get("state")
        if state is None:
            continue
        hand = hands[where["hand_number"] - 1]
        hidden = cards_named(piece) & table_hidden(hand, state["moves_played"], player)
        if hidden:
            at = f"hand {where['hand_number']}, move {state['moves_played']}"
            problems.append(f"hidden cards {format_cards(hidden)} at {at}")
    keys = {s for k, s in strings_of(message) if k is None} & SECRET_KEYS
    if keys:
        problems.append(f"secret keys {sorted(keys)}")
    if any(h["deck"] in str(message) for h in hands):
        problems.append("a deck")
    return problems
