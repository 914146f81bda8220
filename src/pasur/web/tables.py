"""Tables for two people: open, join by invite, move, next hand, leave to the AI, the move clock,
the replay.

A table has two players, 0 and 1, each in a seat: ``open`` (waiting for the invited person),
``person`` (opened by a secret token, stored as its SHA-256) or ``ai`` (a level of
:mod:`pasur.web.levels` plays its turns). Player 0 is Alex in the first hand, and the players
swap seats every hand of a match. Each player is shown only :func:`pasur.web.views.hand_view` of
their own information state, as in a game against the AI; the referee's state is rebuilt from the
stored deck and moves on every request. Every change is one transaction on the table's row
(:func:`pasur.web.store.update_table`). A change returns a :class:`TableUpdate`: what each player
is to be sent, for :mod:`pasur.web.live` to push over their WebSockets.

The clock (``clock_s`` seconds a move, optional) is enforced here, by the injectable ``clock``: a
person whose deadline has passed when the table is next touched (a request, a message, the hub's
sweep) loses the hand by forfeit: they score nothing for it, the other player their points so
far and at least 1.

A table opened ``rated`` (:mod:`pasur.web.players`) plays a match between rated players (each seat
names its player by the player's token), or a player and an AI level with a fixed rating, always
with a clock (:data:`RATED_CLOCK` unless the opener gives another); a player cannot leave a rated
match to the AI once it has started, and one who loses :data:`ABANDON_HANDS` hands in a row by the
clock has abandoned it: they forfeit the match (rated: its hands as played, the forfeited ones
lost), the other is told and the table closes. The match's last move is saved in the same
transaction as the players' new ratings.

Hints (``GET .../hint``) are given only where no other person plays: at an unrated table whose
other seat is an AI. Each player's view says so (``hints``), the server refuses them elsewhere
(409). A table nobody joined closes after :data:`JOIN_TTL` seconds.

Around play (issue 44, :mod:`pasur.web.table_flows`): a waiting table has a short join code, which
joins as the invite does; a person already seated cannot take the other seat (409); a player may
resign the match (the hand in play, or the next one between hands, is forfeited as on the clock,
the match ends and, rated, is rated with that hand lost); once a match is over either may ask for
a rematch, and when every person at it has asked, a new table with the same two players in swapped
seats is stored with the old table's last change, and both pages are told its id.
"""

from __future__ import annotations

import contextlib
import hmac
import logging
import random
import secrets
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass

from pasur.common.errors import PasurInputError
from pasur.game.cards import Deck, parse_deck, random_deck
from pasur.game.match import Match, MatchRules
from pasur.game.rules import Action
from pasur.hidden.game import HiddenGame
from pasur.web.levels import DEFAULT_LEVEL, make_level
from pasur.web.players import LevelBoard, Player, player_by_token, rate_match
from pasur.web.replay import replay_hand
from pasur.web.service import (
    HINT_PLACES,
    BadInput,
    Conflict,
    GameError,
    GameService,
    NotFound,
    _reading,
    _why_illegal,
    finished_hand,
    hand_game,
    hand_result,
    running_score,
    score_json,
    token_hash,
)
from pasur.web.store import (
    CodeTaken,
    DamagedRow,
    StaleWrite,
    TableRow,
    get_table,
    insert_table,
    insert_table_in,
    mark_damaged,
    table_id_by_code,
    table_ids_with_deadline,
)
from pasur.web.store import update_table as store_update
from pasur.web.table_flows import BAD_CODE, NO_CODE, draw_code, normalize_code, rating_change, rematch_seats
from pasur.web.views import action_json, hand_view, parse_action

log = logging.getLogger("pasur.web")

NOT_FOUND = "no such table"
#: bounds of the move clock, seconds
MIN_CLOCK, MAX_CLOCK = 5, 3600
#: a rated table's clock, seconds a move, when the opener gives none
RATED_CLOCK = 120
#: hands lost in a row by the clock after which a rated match is forfeited (abandoned)
ABANDON_HANDS = 2
#: seconds a table waits for the invited person before it closes
JOIN_TTL = 24 * 3600
#: draws of a join code before giving up (a clash needs a waiting table with the same code)
CODE_TRIES = 8
#: the refusal of the other seat to a person who already sits at the table
OWN_SEAT = "you already sit at this table: the invite is for your friend"


@dataclass
class TableUpdate:
    """What each player (0, 1) is to be sent after a change: ``{"type": "update", "view", "steps"}``;
    ``persons``: the players who are people (an AI's seat is sent nothing); ``actor``: the player
    whose request it answers (``None`` for the clock's sweep)."""

    table_id: str
    payloads: list[dict]
    persons: tuple[int, ...]
    actor: int | None = None


def seat_of(hand: dict, player: int) -> int:
    """The Pasur seat (0 Alex, 1 Bob) of ``player`` in ``hand``."""
    return 0 if int(hand["alex"]) == player else 1


def player_of(hand: dict, seat: int) -> int:
    return int(hand["alex"]) if seat == 0 else 1 - int(hand["alex"])


def table_match(row: TableRow, hands: list[dict] | None = None) -> Match:
    """The match so far in player order, from the finished hands' stored results."""
    m = Match(MatchRules.from_dict(row.rules))
    for h in row.hands if hands is None else hands:
        if h.get("result") is not None:
            m = m.add_hand(tuple(h["result"]["card_points"]), tuple(h["result"]["surs"]))
    return m


def flip_result(result: dict | None, player: int) -> dict | None:
    """A stored result (player order) as ``player`` reads it: their numbers first."""
    if result is None:
        return None
    out = {}
    for k, v in result.items():
        if k in ("timeout", "abandoned", "resigned"):
            out[k] = None if v is None else ("you" if v == player else "ai")
        elif isinstance(v, list) and len(v) == 2 and player == 1:
            out[k] = [v[1], v[0]]
        else:
            out[k] = v
    return out


def flip_replay(rep: dict) -> dict:
    """A replay told from one seat, told from the other (values are the mover's: unchanged)."""
    swap = {"you": "ai", "ai": "you"}
    moves = [
        {**m, "by": swap[m["by"]], "hands": {"you": m["hands"]["ai"], "ai": m["hands"]["you"]}} for m in rep["moves"]
    ]
    deal = {**rep["deal"], "rounds": [{"you": r["ai"], "ai": r["you"]} for r in rep["deal"]["rounds"]]}
    yours = [m["cost"] for m in moves if m["by"] == "you"]
    return {
        **rep,
        "seat": "Bob" if rep["seat"] == "Alex" else "Alex",
        "deal": deal,
        "open_value": None if rep["open_value"] is None else -rep["open_value"],
        "moves": moves,
        "your_cost": rep["ai_cost"],
        "ai_cost": rep["your_cost"],
        "your_mistakes": sum(1 for c in yours if c > 0),
    }


class TableService:
    """The tables of one database, sharing the games' levels and search slots. ``clock``: the
    time in seconds (injectable: tests move it by hand)."""

    def __init__(
        self, games: GameService, clock: Callable[[], float] = time.time, board: LevelBoard | None = None
    ) -> None:
        self.games = games
        self.store = games.store
        self.clock = clock
        #: the AI levels' fixed ratings (fitted on first use)
        self.board = LevelBoard(games.levels) if board is None else board
        self._locks = [threading.Lock() for _ in range(256)]

    def _lock(self, table_id: str) -> threading.Lock:
        return self._locks[int(token_hash(table_id)[:8], 16) % len(self._locks)]

    # -- loading --------------------------------------------------------------------------------
    def _row(self, table_id: str) -> TableRow:
        try:
            row = get_table(self.store, table_id) if 0 < len(table_id) <= 64 else None
        except DamagedRow as e:
            log.warning("damaged table record: %s", e)
            raise NotFound(NOT_FOUND) from None
        if row is None:
            raise NotFound(NOT_FOUND)
        return row

    def _player(self, row: TableRow, token: str | None) -> int:
        """The player ``token`` opens; a wrong token is the same 404 as an unknown table."""
        if token is not None:
            digest = token_hash(token)
            for p, seat in enumerate(row.seats):
                stored = seat.get("token_sha256")
                if seat.get("kind") == "person" and isinstance(stored, str) and hmac.compare_digest(digest, stored):
                    return p
        raise NotFound(NOT_FOUND)

    def player(self, table_id: str, token: str | None) -> int:
        """The player (0 or 1) ``token`` opens at the table (404 otherwise)."""
        return self._player(self._row(table_id), token)

    def _game(self, row: TableRow) -> HiddenGame:
        with _reading(row):  # type: ignore[arg-type]
            table_match(row)
            if any(int(h["alex"]) not in (0, 1) for h in row.hands):
                raise ValueError("a hand's Alex is not player 0 or 1")
            return hand_game(row.hands[-1])

    # -- changes ----------------------------------------------------------------------------------
    def _change(
        self, table_id: str, token: str | None, act: Callable[[TableRow, int, HiddenGame, list], object] | None
    ) -> tuple[TableUpdate, int, bool]:
        """Open the table as ``token``'s player, apply a due forfeit, then ``act`` (which may raise
        :class:`GameError`, and returns the new hand's referee if it dealt one); saves if anything
        changed. Returns the update, the player and whether anything changed. A forfeit is saved
        even when ``act`` then fails (:class:`ChangedThenRefused` carries the update to publish)."""
        with self._lock(table_id):
            row = self._row(table_id)
            player = self._player(row, token)
            game = self._game(row)
            steps: list = []
            expired = self._expire(row, game, steps)
            try:
                dealt = act(row, player, game, steps) if act is not None else None
            except GameError as e:
                if not expired:
                    raise
                self._save(row)
                raise ChangedThenRefused(e, self._update(row, game, steps)) from None
            if isinstance(dealt, HiddenGame):
                game = dealt
            changed = expired or act is not None
            if changed:
                self._save(row)
            update = self._update(row, game, steps)
            update.actor = player
            return update, player, changed

    def _save(self, row: TableRow) -> None:
        also = None
        if row.rated and row.status == "over":  # the match's last move: the ratings with it
            also = rate_match(row.id, row.seats, row.hands, self.board)
        try:
            store_update(self.store, row, also)
        except StaleWrite:
            raise Conflict("the table changed meanwhile; reload it") from None

    def _update(self, row: TableRow, game: HiddenGame, steps: list) -> TableUpdate:
        with _reading(row):  # type: ignore[arg-type]
            payloads = []
            for p in (0, 1):
                mine = [
                    {
                        "by": "you" if s["player"] == p else "ai",
                        "hand_number": s["hand_number"],
                        "n": s["n"],
                        "move": s["move"],
                        "state": s["states"][p],
                    }
                    for s in steps
                ]
                payloads.append({"type": "update", "view": self._view(row, p, game), "steps": mine})
        persons = tuple(p for p in (0, 1) if row.seats[p].get("kind") == "person")
        return TableUpdate(row.id, payloads, persons)

    # -- the table's life -------------------------------------------------------------------------
    def create(
        self,
        rules: MatchRules,
        seat: int = 0,
        clock_s: int | None = None,
        ai_level: str | None = None,
        seed: int | None = None,
        rated: bool = False,
        player_token: str | None = None,
    ) -> tuple[TableUpdate, str, str | None]:
        """A new table: the opener is player 0 (Alex first) or 1 (``seat``); the other seat waits
        for the invited person, or ``ai_level`` takes it. ``rated``: a rated match, the opener
        the player of ``player_token``. Returns the update, the opener's token and the invite code
        (``None`` when the AI took the seat)."""
        if seat not in (0, 1):
            raise BadInput("seat is 0 (Alex in the first hand) or 1 (Bob)")
        if clock_s is not None and not MIN_CLOCK <= clock_s <= MAX_CLOCK:
            raise BadInput(f"the clock is {MIN_CLOCK} to {MAX_CLOCK} seconds a move")
        if rated and clock_s is None:  # a rated match always has a clock: nobody can stall it
            clock_s = RATED_CLOCK
        self._check_level(ai_level)
        who = self._rated_player(rated, player_token)
        if rated:
            if rules.target is None:
                raise BadInput("a rated table plays a match: give the rules a target")
            if seed is not None:
                raise BadInput("a rated table cannot name its deals' seed")
            if ai_level is not None:
                self._check_rated_level(ai_level)
        token, invite = secrets.token_urlsafe(32), secrets.token_urlsafe(18)
        seats: list[dict] = [{"kind": "open"}, {"kind": "open"}]
        seats[seat] = {"kind": "person", "token_sha256": token_hash(token), **_named(who)}
        if ai_level is not None:
            seats[1 - seat] = {"kind": "ai", "level": ai_level}
        row = TableRow(
            id=secrets.token_urlsafe(18),
            seats=seats,
            invite_sha256=None if ai_level is not None else token_hash(invite),
            rules=rules.to_dict(),
            clock_s=clock_s,
            deadline=None,
            sample_seed=secrets.randbelow(2**31),
            seed=seed,
            status="waiting" if ai_level is None else "playing",
            rated=rated,
        )
        game = self._deal(row)
        steps: list = []
        self._advance(row, game, steps)
        if row.status == "waiting":  # closed if nobody joins in time
            row.deadline = self.clock() + JOIN_TTL
        self._insert_with_code(row)
        return self._update(row, game, steps), token, None if ai_level is not None else invite

    def _insert_with_code(self, row: TableRow) -> None:
        """Store a new table; a waiting one with a join code no other waiting table has."""
        for _ in range(CODE_TRIES):
            row.join_code = draw_code() if row.status == "waiting" else None
            try:
                insert_table(self.store, row)
                return
            except CodeTaken:
                continue
        raise Conflict("no free join code: try again")

    def by_code(self, code: str) -> dict:
        """The waiting table of a join code: its id and the code to join with (422 for text that
        cannot be a code, 404 for a code no waiting table has)."""
        normal = normalize_code(code)
        if normal is None:
            raise BadInput(BAD_CODE)
        table_id = table_id_by_code(self.store, normal)
        if table_id is None:
            raise NotFound(NO_CODE)
        row = self._row(table_id)
        return {"id": table_id, "invite": normal, "rated": row.rated}

    def join(
        self, table_id: str, invite: str, player_token: str | None = None, seat_token: str | None = None
    ) -> tuple[TableUpdate, str, int]:
        """The invited person takes the open seat (at a rated table, as the player of
        ``player_token``), by the invite or the join code: returns the update, their token and
        player. ``seat_token``: a table token the joiner holds; one that opens a seat of this table
        is refused (409): nobody takes both seats."""
        with self._lock(table_id):
            row = self._row(table_id)
            if seat_token is not None and _opens_a_seat(row, seat_token):
                raise Conflict(OWN_SEAT)
            if not _invite_ok(row, invite):
                raise NotFound(NOT_FOUND)
            game = self._game(row)
            who = self._rated_player(row.rated, player_token)
            player = next(p for p in (0, 1) if row.seats[p].get("kind") == "open")
            if who is not None and who.id == row.seats[1 - player].get("player_id"):
                raise Conflict("a player cannot play a rated match against themselves")
            token = secrets.token_urlsafe(32)
            row.seats[player] = {"kind": "person", "token_sha256": token_hash(token), **_named(who)}
            row.invite_sha256 = None
            steps: list = []
            self._start(row, game, steps)
            self._save(row)
            return self._update(row, game, steps), token, player

    def view(self, table_id: str, token: str | None) -> tuple[TableUpdate, int, bool]:
        """The table as ``token``'s player sees it (a due forfeit applied and saved first)."""
        return self._change(table_id, token, None)

    def move(
        self, table_id: str, token: str | None, card: str, captured: list[str], expect: int | None = None
    ) -> TableUpdate:
        def act(row: TableRow, player: int, game: HiddenGame, steps: list) -> None:
            if row.status == "waiting":
                raise Conflict("the other seat is still empty: wait for your friend or give it to the AI")
            if row.status != "playing":
                raise Conflict("the hand is over: deal the next hand or open a new table")
            played = len(row.hands[-1]["moves"])
            if expect is not None and expect != played:
                raise Conflict(f"this hand has {played} moves, not {expect}: reload the table")
            if game.is_terminal or player_of(row.hands[-1], game.mover) != player:
                raise Conflict("it is not your turn")
            try:
                action = parse_action(card, captured)
            except PasurInputError as e:
                raise BadInput(str(e)) from None
            legal = game.state.legal_actions()
            if action not in legal:
                raise Conflict(_why_illegal(action, legal))
            self._play(row, game, action, steps)
            self._advance(row, game, steps)

        return self._change(table_id, token, act)[0]

    def next_hand(self, table_id: str, token: str | None) -> TableUpdate:
        def act(row: TableRow, player: int, game: HiddenGame, steps: list) -> HiddenGame:
            if row.status != "hand_over":
                raise Conflict("the next hand is dealt when a hand of an unfinished match is over")
            new = self._deal(row)
            steps.clear()
            self._start(row, new, steps)
            return new

        return self._change(table_id, token, act)[0]

    def seat_ai(self, table_id: str, token: str | None, level: str) -> TableUpdate:
        """The AI ``level`` takes the seat still open (the invite is spent); at a rated table, only
        a level with a fixed rating."""
        self._check_level(level)

        def act(row: TableRow, player: int, game: HiddenGame, steps: list) -> None:
            if row.status != "waiting":
                raise Conflict("both seats are taken")
            if row.rated:
                self._check_rated_level(level)
            row.seats[1 - player] = {"kind": "ai", "level": level}
            row.invite_sha256 = None
            self._start(row, game, steps)

        return self._change(table_id, token, act)[0]

    def leave(self, table_id: str, token: str | None, level: str | None = None) -> TableUpdate:
        """The player leaves; the AI ``level`` plays their seat from now on (their token stops
        opening the table)."""
        level = level or self._default_level()
        self._check_level(level)

        def act(row: TableRow, player: int, game: HiddenGame, steps: list) -> None:
            if row.rated and row.status in ("playing", "hand_over"):
                raise Conflict("a rated match is played to its end: it cannot be left to the AI")
            row.seats[player] = {"kind": "ai", "level": level}
            if row.status == "waiting":  # nobody joined: the table is closed
                row.invite_sha256 = None
                row.status = "over"
                row.deadline = None
                return
            self._advance(row, game, steps)
            self._set_deadline(row, game)
            if row.status == "hand_over" and all(s.get("kind") == "ai" for s in row.seats):
                row.status = "over"

        return self._change(table_id, token, act)[0]

    def resign(self, table_id: str, token: str | None) -> TableUpdate:
        """The player gives up the match: the hand in play (between hands, the next one, dealt for
        it) is forfeited as on the clock (they score nothing, the other their points so far and at
        least 1), and the match is over, won by the other; a rated match is rated with it, so
        resigning never costs less than losing a hand."""

        def act(row: TableRow, player: int, game: HiddenGame, steps: list) -> HiddenGame:
            if row.status == "waiting":
                raise Conflict("nobody has joined yet: there is no match to resign")
            if row.status == "over":
                raise Conflict("the match is over")
            if row.status == "hand_over":
                game = self._deal(row)
            self._finish(row, game, timeout=player)
            row.hands[-1]["result"].update(timeout=None, resigned=player)
            row.status = "over"
            return game

        return self._change(table_id, token, act)[0]

    def rematch(self, table_id: str, token: str | None) -> TableUpdate:
        """The player asks for a rematch of a finished match; once every person at the table has
        asked (an AI seat always agrees), the new table (the same players in swapped seats, the
        same rules, clock and rating) is stored in the transaction that records the last ask.
        Asking again changes nothing."""
        with self._lock(table_id):
            row = self._row(table_id)
            player = self._player(row, token)
            game = self._game(row)
            if row.status != "over":
                raise Conflict("a rematch is asked for when the match is over")
            if any(s.get("kind") == "open" for s in row.seats):
                raise Conflict("nobody joined this table: open a new one")
            offer = row.rematch or {"asked": [], "id": None}
            if offer.get("id") is None and player not in offer.get("asked", []):
                asked = sorted({*offer.get("asked", []), player})
                persons = [p for p in (0, 1) if row.seats[p].get("kind") == "person"]
                new = self._rematch_row(row) if all(p in asked for p in persons) else None
                row.rematch = {"asked": asked, "id": None if new is None else new.id}
                try:
                    store_update(self.store, row, None if new is None else (lambda db: insert_table_in(db, new)))
                except StaleWrite:
                    raise Conflict("the table changed meanwhile; reload it") from None
            update = self._update(row, game, [])
            update.actor = player
            return update

    def _rematch_row(self, row: TableRow) -> TableRow:
        """The rematch's table, its first hand dealt and played up to a person's turn."""
        new = TableRow(
            id=secrets.token_urlsafe(18),
            seats=rematch_seats(row),
            invite_sha256=None,
            rules=dict(row.rules),
            clock_s=row.clock_s,
            deadline=None,
            sample_seed=secrets.randbelow(2**31),
            seed=None if row.seed is None else row.seed + len(row.hands),
            status="playing",
            rated=row.rated,
        )
        game = self._deal(new)
        self._advance(new, game, [])
        return new

    def hint(self, table_id: str, token: str | None) -> dict:
        """Each legal move's value as the hint level estimates it from the player's information
        state (as a game's hint); refused at a rated table."""
        with self._lock(table_id):
            row = self._row(table_id)
            player = self._player(row, token)
            if row.rated:
                raise Conflict("hints are off at rated tables")
            if not hints_allowed(row):
                raise Conflict(NO_HINTS)
            game = self._game(row)
            if row.status != "playing" or game.is_terminal or player_of(row.hands[-1], game.mover) != player:
                raise Conflict("a hint is given when it is your turn")
            info = game.observation(game.mover)
            level = self.games.hint_level
            agent = make_level(level, seed=row.sample_seed + 2 * len(row.hands) + player, levels=self.games.levels)
            with self.games._thinking:
                values = agent.action_values(info)
        best = max(v for _, v in values)
        moves = [
            {**action_json(a), "value": round(v, HINT_PLACES), "best": v == best}
            for a, v in sorted(values, key=lambda av: -av[1])
        ]
        return {"level": level, "agent": self.games.levels[level], "moves": moves}

    def replay(self, table_id: str, token: str | None, number: int | None = None) -> dict:
        """A finished hand with every card open, told from ``token``'s player's side."""
        with self._lock(table_id):
            row = self._row(table_id)
            player = self._player(row, token)
            self._game(row)
            number, hand = finished_hand(row.hands, number)
            rep = hand.get("replay")
            if rep is None:
                with _reading(row):  # type: ignore[arg-type]
                    deck, moves = parse_deck(hand["deck"]), hand_game(hand).moves
                with self.games._thinking:
                    rep = replay_hand(deck, moves, seat_of(hand, 0))  # told from player 0
                hand["replay"] = rep
                with contextlib.suppress(StaleWrite):  # a move meanwhile: the replay is solved again later
                    store_update(self.store, row)
        told = rep if player == 0 else flip_replay(rep)
        return {"hand_number": number, "result": flip_result(hand["result"], player), **told}

    def expire_due(self) -> list[str]:
        """The tables whose player to move has run out of time by now (the hub then calls
        :meth:`expire` on each)."""
        return table_ids_with_deadline(self.store, self.clock())

    def expire(self, table_id: str) -> TableUpdate | None:
        """Apply a due forfeit or expiry to the table (no token: the clock's own sweep). A table
        whose record cannot be read is marked damaged once (its deadline cleared), so that the
        sweep leaves it alone."""
        with self._lock(table_id):
            try:
                row = self._row(table_id)
                game = self._game(row)
            except GameError:
                log.warning("table %s: damaged record, taken off the clock", table_id)
                mark_damaged(self.store, table_id)
                return None
            steps: list = []
            if not self._expire(row, game, steps):
                return None
            self._save(row)
            return self._update(row, game, steps)

    # -- inside -----------------------------------------------------------------------------------
    def _check_level(self, level: str | None) -> None:
        if level is not None and level not in self.games.levels:
            raise BadInput(f"unknown level {level!r} (choose from {', '.join(self.games.levels)})")

    def _rated_player(self, rated: bool, player_token: str | None) -> Player | None:
        """The player a seat at a rated table is taken by (a token is required there, and refused
        at an unrated table)."""
        if not rated:
            if player_token is not None:
                raise BadInput("a player token is for rated tables")
            return None
        if player_token is None:
            raise BadInput("a rated table needs each seat's player token (POST /api/players)")
        return player_by_token(self.store, player_token)

    def _check_rated_level(self, level: str) -> None:
        if self.board.rating(level) is None:
            raise BadInput(f"the level {level!r} has no rating from the arena: a rated table needs a rated level")

    def _default_level(self) -> str:
        return DEFAULT_LEVEL if DEFAULT_LEVEL in self.games.levels else next(iter(self.games.levels))

    def _deal(self, row: TableRow) -> HiddenGame:
        n = len(row.hands)
        deck = Deck.from_seed(row.seed + n) if row.seed is not None else random_deck(random.SystemRandom())
        row.hands.append({"deck": str(deck), "alex": n % 2, "moves": [], "result": None})
        if row.status in ("hand_over", "playing"):
            row.status = "playing"
        return HiddenGame(deck)

    def _start(self, row: TableRow, game: HiddenGame, steps: list) -> None:
        """Both seats are filled: play starts (the AI moves first where it leads)."""
        row.status = "playing"
        self._advance(row, game, steps)
        self._set_deadline(row, game)

    def _play(self, row: TableRow, game: HiddenGame, action: Action, steps: list) -> None:
        hand = row.hands[-1]
        player = player_of(hand, game.mover)
        game.apply(action)
        hand["moves"].append([action.card, action.captured])
        states = [self._hand_view(row, p, game) for p in (0, 1)]
        steps.append(
            {
                "player": player,
                "hand_number": len(row.hands),
                "n": len(hand["moves"]),
                "move": action_json(action),
                "states": states,
            }
        )

    def _advance(self, row: TableRow, game: HiddenGame, steps: list) -> None:
        """The AI's moves up to a person's turn or the end of the hand; then the clock."""
        if row.status == "waiting":
            return
        hand = row.hands[-1]
        while not game.is_terminal:
            player = player_of(hand, game.mover)
            seat = row.seats[player]
            if seat.get("kind") != "ai":
                break
            agent = make_level(
                seat["level"], seed=row.sample_seed + 2 * len(row.hands) + player, levels=self.games.levels
            )
            with self.games._thinking:
                action = agent.choose(game.observation(game.mover))
            self._play(row, game, action, steps)
        if game.is_terminal and hand.get("result") is None:
            self._finish(row, game)
        self._set_deadline(row, game)

    def _finish(self, row: TableRow, game: HiddenGame, timeout: int | None = None) -> None:
        hand = row.hands[-1]
        m = table_match(row)
        cp, surs = hand_result(game, seat_of(hand, 0))  # player order
        if timeout is not None:  # a forfeit: the player out of time scores nothing
            other = 1 - timeout
            won = [0, 0]
            won[other] = max(
                1, running_score(game, seat_of(hand, other), MatchRules.from_dict(row.rules), (0, 0)).points[0]
            )
            cp, surs = tuple(won), (0, 0)
        m = m.add_hand(tuple(cp), tuple(surs))
        hand["result"] = {**score_json(m.hands[-1]), "totals": list(m.totals), "timeout": timeout}
        row.status = "over" if m.is_over else "hand_over"
        row.deadline = None

    def _set_deadline(self, row: TableRow, game: HiddenGame) -> None:
        row.deadline = None
        if (
            row.clock_s
            and row.status == "playing"
            and not game.is_terminal
            and row.seats[player_of(row.hands[-1], game.mover)].get("kind") == "person"
        ):
            row.deadline = self.clock() + row.clock_s

    def _expire(self, row: TableRow, game: HiddenGame, steps: list) -> bool:
        """A forfeit if the person to move is out of time (the match's, at a rated table, if they
        have abandoned it), or the close of a table nobody joined in time; whether one applied."""
        if row.deadline is None or self.clock() < row.deadline:
            return False
        if row.status == "waiting":
            row.status, row.invite_sha256, row.deadline = "over", None, None
            return True
        if row.status != "playing" or game.is_terminal:
            return False
        loser = player_of(row.hands[-1], game.mover)
        self._finish(row, game, timeout=loser)
        if row.rated and row.status != "over" and abandoned_by(row.hands, loser):
            row.hands[-1]["result"]["abandoned"] = loser
            row.status = "over"
        return True

    def _hand_view(self, row: TableRow, player: int, game: HiddenGame) -> dict:
        hand = row.hands[-1]
        before = table_match(row, row.hands[:-1]).totals
        mine = (before[player], before[1 - player])
        seat = seat_of(hand, player)
        score = running_score(game, seat, MatchRules.from_dict(row.rules), mine)
        return hand_view(game.observation(seat), score)

    def _view(self, row: TableRow, player: int, game: HiddenGame) -> dict:
        m = table_match(row)
        rules = MatchRules.from_dict(row.rules)
        other = row.seats[1 - player]
        kind = other.get("kind", "open")
        a, b = m.totals[player], m.totals[1 - player]
        winner = m.winner
        hand = row.hands[-1]
        to_move = None
        if row.status == "playing" and not game.is_terminal:
            to_move = "you" if player_of(hand, game.mover) == player else "ai"
        left = None if row.deadline is None or to_move is None else max(0.0, round(row.deadline - self.clock(), 1))
        quit_by = (hand.get("result") or {}).get("abandoned")
        resigned = (hand.get("result") or {}).get("resigned")
        if quit_by is not None or resigned is not None:  # a forfeited match: the one who stayed wins it
            winner = 1 - int(quit_by if quit_by is not None else resigned)
        return {
            "id": row.id,
            "kind": "table",
            "level": "friend" if kind != "ai" else other["level"],
            "opponent": {"kind": kind, "level": other.get("level")},
            "rules": rules.to_dict(),
            "status": row.status,
            "rated": row.rated,
            "hints": hints_allowed(row),
            "names": {"you": row.seats[player].get("name"), "ai": other.get("name")} if row.rated else None,
            "hand_number": len(row.hands),
            "clock": {"per_move_s": row.clock_s, "left_s": left, "to_move": to_move},
            "match": {
                "totals": {"you": a, "ai": b},
                "target": rules.target,
                "hands": [flip_result(h["result"], player) for h in row.hands if h.get("result") is not None],
                "over": m.is_over or quit_by is not None or resigned is not None,
                "winner": None if winner is None else ("you" if winner == player else "ai"),
                "abandoned": None if quit_by is None else ("you" if quit_by == player else "ai"),
                "resigned": None if resigned is None else ("you" if resigned == player else "ai"),
            },
            "join_code": row.join_code if row.status == "waiting" else None,
            "rematch": _rematch_view(row, player),
            "rating_change": rating_change(self.store, row, player),
            "result": flip_result(hand.get("result"), player),
            "hand": self._hand_view(row, player, game),
        }


#: the refusal of a hint where another person plays
NO_HINTS = "hints are off at a table of two people"


def hints_allowed(row: TableRow) -> bool:
    """Whether a player may ask for hints: only where no other person plays (an unrated table
    whose other seat is an AI), so that nobody uses the AI against a friend in secret."""
    return not row.rated and any(seat.get("kind") == "ai" for seat in row.seats)


def abandoned_by(hands: list[dict], player: int) -> bool:
    """Whether ``player`` lost the last :data:`ABANDON_HANDS` hands by the clock (absent)."""
    last = hands[-ABANDON_HANDS:]
    return len(last) == ABANDON_HANDS and all((h.get("result") or {}).get("timeout") == player for h in last)


def _opens_a_seat(row: TableRow, token: str) -> bool:
    """Whether ``token`` opens a person's seat at the table."""
    digest = token_hash(token)
    return any(
        s.get("kind") == "person"
        and isinstance(s.get("token_sha256"), str)
        and hmac.compare_digest(digest, s["token_sha256"])
        for s in row.seats
    )


def _invite_ok(row: TableRow, invite: str) -> bool:
    """Whether ``invite`` (the link's invite, or the join code in any case) opens the free seat."""
    if row.invite_sha256 is None:
        return False
    if hmac.compare_digest(token_hash(invite), row.invite_sha256):
        return True
    code = normalize_code(invite)
    return code is not None and row.join_code is not None and hmac.compare_digest(code, row.join_code)


def _rematch_view(row: TableRow, player: int) -> dict | None:
    """The rematch as ``player`` reads it: who asked (``you``, ``ai``: the other) and the new
    table's id once it exists."""
    if row.rematch is None:
        return None
    asked = row.rematch.get("asked") or []
    return {"you": player in asked, "ai": (1 - player) in asked, "id": row.rematch.get("id")}


def _named(player: Player | None) -> dict:
    """What a seat keeps of its rated player: the id, and the name shown to the other."""
    return {} if player is None else {"player_id": player.id, "name": player.name}


class ChangedThenRefused(GameError):
    """A request refused after a forfeit was applied and saved: the refusal's status and
    message, and the update the others must still be sent."""

    def __init__(self, error: GameError, update: TableUpdate) -> None:
        super().__init__(str(error))
        self.status = error.status
        self.update = update
