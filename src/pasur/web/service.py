"""Games against the AI, behind the web API: create, show, move, hint, next hand, replay.

A game is one hand or a match of hands (:mod:`pasur.game.match`); the person plays one seat, the
AI the other, and in a match the seats alternate from hand to hand. The referee's full state is
rebuilt from the stored deck and moves on every request and never leaves this module except as
what :func:`pasur.web.views.hand_view` makes of the person's information state, or in the replay
of a finished hand. Errors are :class:`GameError` subclasses that carry their HTTP status.
"""

from __future__ import annotations

import contextlib
import hashlib
import hmac
import logging
import os
import random
import secrets
import threading
from collections import OrderedDict
from collections.abc import Iterator
from dataclasses import dataclass

from pasur.common.errors import PasurInputError
from pasur.game.cards import CLUBS_BONUS, Deck, parse_deck, random_deck
from pasur.game.match import HandScore, Match, MatchRules, score_hand
from pasur.game.rules import Action
from pasur.hidden.game import HiddenGame
from pasur.web.levels import HINT_LEVEL, LEVELS, make_level
from pasur.web.replay import replay_hand
from pasur.web.store import DamagedRow, GameRow, StaleWrite, Store
from pasur.web.views import action_json, hand_view, parse_action

log = logging.getLogger("pasur.web")


class GameError(Exception):
    status = 400


class NotFound(GameError):
    status = 404


class Conflict(GameError):
    status = 409


class BadInput(GameError):
    status = 422


class Damaged(Conflict):
    """A stored game that cannot be read or replayed by the rules: its owner gets 409, the
    server goes on serving the other games."""


#: one message for an unknown game and a foreign one, so neither can be told from the other
NOT_FOUND = "no such game"
#: the answer about a game whose stored record cannot be read or replayed (nothing more is said)
DAMAGED = "this game's record is damaged"
#: hint values are estimates: rounded for the page
HINT_PLACES = 2
#: hints kept (by game, hand and move), oldest dropped first
HINT_CACHE = 4096


def token_hash(token: str) -> str:
    return hashlib.sha256(token.encode("utf-8", "surrogatepass")).hexdigest()


@dataclass
class Turn:
    """A loaded game: its row and the current hand's referee."""

    row: GameRow
    hand: dict
    game: HiddenGame

    @property
    def seat(self) -> int:
        return int(self.hand["seat"])

    @property
    def number(self) -> int:
        return len(self.row.hands)


def hand_game(hand: dict) -> HiddenGame:
    """The referee of a stored hand: its deck with its moves applied (each checked)."""
    game = HiddenGame(parse_deck(hand["deck"]))
    for card, captured in hand["moves"]:
        game.apply(Action(card, captured))
    return game


def hand_result(game: HiddenGame, seat: int) -> tuple[tuple[int, int], tuple[int, int]]:
    """(card points with the clubs bonus once clinched, Surs) of the hand so far, as (you, ai)."""
    s = game.state
    w = s.clubs_winner
    cp = tuple(s.card_points[p] + (CLUBS_BONUS if w == p else 0) for p in (seat, 1 - seat))
    return cp, (s.surs[seat], s.surs[1 - seat])  # type: ignore[return-value]


def match_of(row: GameRow, hands: list[dict] | None = None) -> Match:
    """The match so far, from the finished hands' stored results (players: 0 you, 1 the AI);
    ``hands``: these hands of the row instead of all."""
    m = Match(MatchRules.from_dict(row.rules))
    for h in row.hands if hands is None else hands:
        if h.get("result") is not None:
            m = m.add_hand(tuple(h["result"]["card_points"]), tuple(h["result"]["surs"]))
    return m


def running_score(game: HiddenGame, seat: int, rules: MatchRules, totals: tuple[int, int]) -> HandScore:
    """The hand so far as the match scores it (players: 0 you, 1 the AI): :func:`hand_result`
    (card points, the clubs bonus once clinched, Surs) through :func:`pasur.game.match.score_hand`,
    with the match totals at the start of the hand. Once the hand is over it is the hand's result,
    so the players' panels and the result box count alike."""
    card_points, surs = hand_result(game, seat)
    return score_hand(rules, card_points, surs, totals)


def score_json(h: HandScore) -> dict:
    return {
        "card_points": list(h.card_points),
        "surs": list(h.surs_made),
        "surs_void": list(h.surs_void),
        "surs_cancelled": list(h.surs_cancelled),
        "surs_scored": list(h.surs_scored),
        "points": list(h.points),
        "spec_points": list(h.spec_points),
    }


class GameService:
    """The games of one database. ``levels``: level name -> agent spec (tests use fast ones);
    ``hint_level``: the level whose estimates hints show."""

    def __init__(self, store: Store, levels: dict[str, str] | None = None, hint_level: str = HINT_LEVEL) -> None:
        self.store = store
        self.levels = dict(LEVELS if levels is None else levels)
        if hint_level not in self.levels:
            raise ValueError(f"the hint level {hint_level!r} is not one of the levels")
        self.hint_level = hint_level
        self._locks = [threading.Lock() for _ in range(256)]
        # searches at once: one per CPU (more only thrash; the others wait their turn)
        cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else os.cpu_count()
        self._thinking = threading.BoundedSemaphore(max(1, cpus or 1))
        # hints already computed, by (game, hand, moves played): asking again costs no search
        self._hints: OrderedDict[tuple[str, int, int], dict] = OrderedDict()
        self._hints_lock = threading.Lock()

    def _lock(self, game_id: str) -> threading.Lock:
        return self._locks[int(token_hash(game_id)[:8], 16) % len(self._locks)]

    # -- loading ----------------------------------------------------------------------------
    def _get(self, game_id: str, token: str | None) -> GameRow | None:
        """The row if ``token`` opens it; a damaged row is :class:`Damaged` to its owner only."""
        try:
            return self.store.get(game_id)
        except DamagedRow as e:
            if token is not None and hmac.compare_digest(token_hash(token), e.token_sha256):
                log.warning("damaged game record: %s", e)
                raise Damaged(DAMAGED) from None
            raise NotFound(NOT_FOUND) from None

    def _load(self, game_id: str, token: str | None) -> GameRow:
        row = self._get(game_id, token) if 0 < len(game_id) <= 64 else None
        if row is None or token is None or not hmac.compare_digest(token_hash(token), row.token_sha256):
            raise NotFound(NOT_FOUND)
        with _reading(row):  # what every request reads of it: the rules, the match, the seats
            match_of(row)
            if row.first_seat not in (0, 1) or any(h["seat"] not in (0, 1) for h in row.hands):
                raise ValueError("a seat is not 0 or 1")
        return row

    def _open(self, game_id: str, token: str | None) -> Turn:
        """The game ``token`` opens, its current hand replayed by the rules (every request reads
        the whole record this way first, so a damaged one is always :class:`Damaged`)."""
        return self._turn(self._load(game_id, token))

    def _turn(self, row: GameRow) -> Turn:
        with _reading(row):
            hand = row.hands[-1]
            return Turn(row, hand, hand_game(hand))

    def _agent(self, row: GameRow, level: str | None = None):
        return make_level(level or row.level, seed=row.sample_seed + len(row.hands), levels=self.levels)

    # -- the game's life ------------------------------------------------------------------------
    def create(self, level: str, rules: MatchRules, seat: int = 0, seed: int | None = None) -> tuple[dict, str]:
        """A new game; returns its view (with the AI's first move when it leads) and the token."""
        if level not in self.levels:
            raise BadInput(f"unknown level {level!r} (choose from {', '.join(self.levels)})")
        if seat not in (0, 1):
            raise BadInput("seat is 0 (Alex, who leads every round) or 1 (Bob)")
        token = secrets.token_urlsafe(32)
        row = GameRow(
            id=secrets.token_urlsafe(18),
            token_sha256=token_hash(token),
            level=level,
            rules=rules.to_dict(),
            first_seat=seat,
            sample_seed=secrets.randbelow(2**31),
            seed=seed,
            status="playing",
            totals=[0, 0],
        )
        turn = self._deal(row)
        steps = self._advance(turn)
        self.store.insert(row)
        return {**self._view(turn), "steps": steps}, token

    def _deal(self, row: GameRow) -> Turn:
        n = len(row.hands)
        deck = Deck.from_seed(row.seed + n) if row.seed is not None else random_deck(random.SystemRandom())
        seat = row.first_seat if n % 2 == 0 else 1 - row.first_seat
        row.hands.append({"deck": str(deck), "seat": seat, "moves": [], "result": None})
        row.status = "playing"
        return self._turn(row)

    def _advance(self, turn: Turn) -> list[dict]:
        """The AI's moves up to the person's turn or the end of the hand, one step each."""
        steps = []
        agent = None
        g = turn.game
        while not g.is_terminal and g.mover != turn.seat:
            agent = agent or self._agent(turn.row)
            with self._thinking:
                action = agent.choose(g.observation(g.mover))
            steps.append(self._play(turn, action, "ai"))
        if g.is_terminal:
            self._finish(turn)
        return steps

    def _play(self, turn: Turn, action: Action, by: str) -> dict:
        turn.game.apply(action)
        turn.hand["moves"].append([action.card, action.captured])
        return {"by": by, "move": action_json(action), "state": self._hand_view(turn)}

    def _hand_view(self, turn: Turn) -> dict:
        """What the person sees of the hand, the players' points counted as the match rules
        score them (:func:`running_score`), as the result box counts them at the end."""
        row = turn.row
        rules = MatchRules.from_dict(row.rules)
        before = match_of(row, row.hands[:-1]).totals  # the match at the start of this hand
        score = running_score(turn.game, turn.seat, rules, before)
        return hand_view(turn.game.observation(turn.seat), score)

    def _finish(self, turn: Turn) -> None:
        row = turn.row
        m = match_of(row)
        cp, surs = hand_result(turn.game, turn.seat)
        m = m.add_hand(cp, surs)  # scored by score_hand, as running_score scores the hand so far
        turn.hand["result"] = {**score_json(m.hands[-1]), "totals": list(m.totals)}
        row.totals = list(m.totals)
        row.status = "over" if m.is_over else "hand_over"

    def _save(self, row: GameRow) -> None:
        try:
            self.store.update(row)
        except StaleWrite:
            raise Conflict("the game changed meanwhile (another tab?); reload it") from None

    # -- requests -------------------------------------------------------------------------------
    def view(self, game_id: str, token: str | None) -> dict:
        return self._view(self._open(game_id, token))

    def move(self, game_id: str, token: str | None, card: str, captured: list[str], expect: int | None = None) -> dict:
        """The person's move, then the AI's replies; the view after each is a step."""
        with self._lock(game_id):
            turn = self._open(game_id, token)
            if turn.row.status != "playing":
                raise Conflict("the hand is over: start the next hand or a new game")
            played = len(turn.hand["moves"])
            if expect is not None and expect != played:
                raise Conflict(f"this hand has {played} moves, not {expect}: reload the game")
            if turn.game.mover != turn.seat:  # the AI always moves before answering; kept for safety
                raise Conflict("it is not your turn")
            try:
                action = parse_action(card, captured)
            except PasurInputError as e:
                raise BadInput(str(e)) from None
            legal = turn.game.state.legal_actions()
            if action not in legal:
                raise Conflict(_why_illegal(action, legal))
            steps = [self._play(turn, action, "you")]
            steps += self._advance(turn)
            self._save(turn.row)
            return {**self._view(turn), "steps": steps}

    def hint(self, game_id: str, token: str | None) -> dict:
        """Each legal move's value as the hint level estimates it from the person's information
        state: the final margin (your points minus the AI's) it expects."""
        turn = self._open(game_id, token)
        info = turn.game.observation(turn.seat)
        if turn.row.status != "playing" or not info.to_move:
            raise Conflict("a hint is given when it is your turn")
        key = (game_id, turn.number, len(turn.hand["moves"]))
        with self._lock(game_id):  # one search per game at a time; a repeated ask is answered from the cache
            with self._hints_lock:
                cached = self._hints.get(key)
            if cached is not None:
                return cached
            with self._thinking:
                values = self._agent(turn.row, self.hint_level).action_values(info)
            best = max(v for _, v in values)
            moves = [
                {**action_json(a), "value": round(v, HINT_PLACES), "best": v == best}
                for a, v in sorted(values, key=lambda av: -av[1])
            ]
            answer = {"level": self.hint_level, "agent": self.levels[self.hint_level], "moves": moves}
            with self._hints_lock:
                self._hints[key] = answer
                while len(self._hints) > HINT_CACHE:
                    self._hints.popitem(last=False)
            return answer

    def next_hand(self, game_id: str, token: str | None) -> dict:
        with self._lock(game_id):
            row = self._open(game_id, token).row
            if row.status != "hand_over":
                raise Conflict("the next hand is dealt when a hand of an unfinished match is over")
            turn = self._deal(row)
            steps = self._advance(turn)
            self._save(row)
            return {**self._view(turn), "steps": steps}

    def replay(self, game_id: str, token: str | None, number: int | None = None) -> dict:
        """A finished hand (default: the last one finished) with every card open."""
        row = self._open(game_id, token).row
        number, hand = finished_hand(row.hands, number)
        if hand.get("replay") is None:
            # a solve of the whole deal: once per hand (under the game's lock, checked again there),
            # as one of the searches at once, and kept
            with self._lock(game_id):
                fresh = self._get(game_id, token)
                rep = None if fresh is None else fresh.hands[number - 1].get("replay")
                if rep is None:
                    with _reading(row):
                        deck, moves = parse_deck(hand["deck"]), hand_game(hand).moves
                    with self._thinking:
                        rep = replay_hand(deck, moves, hand["seat"])
                    if fresh is not None:
                        fresh.hands[number - 1]["replay"] = rep
                        with contextlib.suppress(StaleWrite):
                            self.store.update(fresh)
            hand = {**hand, "replay": rep}
        return {"hand_number": number, "result": hand["result"], **hand["replay"]}

    # -- the view ---------------------------------------------------------------------------------
    def _view(self, turn: Turn) -> dict:
        with _reading(turn.row):
            return self._view_of(turn)

    def _view_of(self, turn: Turn) -> dict:
        row = turn.row
        m = match_of(row)
        rules = MatchRules.from_dict(row.rules)
        winner = m.winner
        return {
            "id": row.id,
            "level": row.level,
            "rules": rules.to_dict(),
            "status": row.status,
            "hand_number": turn.number,
            "match": {
                "totals": {"you": m.totals[0], "ai": m.totals[1]},
                "target": rules.target,
                "hands": [h["result"] for h in row.hands if h.get("result") is not None],
                "over": m.is_over,
                "winner": None if winner is None else ("you" if winner == 0 else "ai"),
            },
            "result": turn.hand.get("result"),
            "hand": self._hand_view(turn),
        }


def finished_hand(hands: list[dict], number: int | None) -> tuple[int, dict]:
    """Hand ``number`` (from 1; default: the last finished) of a game or table, refused with 409
    unless it is over: a replay shows every card, so it opens only then."""
    done = [i for i, h in enumerate(hands, start=1) if h.get("result") is not None]
    if not done:
        raise Conflict("the replay opens when the hand is over")
    number = done[-1] if number is None else number
    if number not in done:
        raise Conflict(f"hand {number} is not over" if 1 <= number <= len(hands) else f"no hand {number}")
    return number, hands[number - 1]


#: what decoding and checking a stored record raises when the record is damaged: its JSON
#: (``json.JSONDecodeError``), a deck or a move the rules refuse (``PasurInputError``,
#: ``IllegalActionError``), a rule out of range (all ``ValueError``), a missing key or index, a
#: value of the wrong type. Anything else is a bug of the code, not of the record.
RECORD_ERRORS = (ValueError, KeyError, IndexError, TypeError)


@contextlib.contextmanager
def _reading(row: GameRow) -> Iterator[None]:
    """Reading a stored game: an error of decoding or checking its record (:data:`RECORD_ERRORS`:
    a move the rules refuse, a deck or a result of the wrong shape) is :class:`Damaged`, logged,
    never a 500. Any other exception is a bug: it goes on to the app's handler, which logs it with
    its traceback and answers 500 (issue 46: a bug was reported as a damaged record)."""
    try:
        yield
    except GameError:
        raise
    except RECORD_ERRORS as e:
        log.warning("damaged game record: game %s: %s: %s", row.id, type(e).__name__, e)
        raise Damaged(DAMAGED) from None


def _why_illegal(action: Action, legal: list[Action]) -> str:
    from pasur.game.cards import format_card

    mine = [a for a in legal if a.card == action.card]
    c = format_card(action.card, unicode=True)
    if not any(a.card == action.card for a in legal):
        return f"illegal move: {c} is not in your hand"
    if action.is_lay:
        return f"illegal move: {c} can capture, so it cannot be laid ({mine[0].describe(unicode=True)})"
    options = "; ".join(a.describe(unicode=True) for a in mine)
    return f"illegal move: {action.describe(unicode=True)} is not a capture of the rules (legal: {options})"
