"""Rated players, the ladder, and the rating of a finished rated match (issue 28, part 3).

A **player** is a display name and a Glicko-2 rating kept across rated matches. ``create_player``
returns a secret player token once (stored as its SHA-256 only, as a table's tokens are): whoever
holds it plays as that name, so a name cannot be taken over; a lost token is a lost name. Names
are stored normalized and unique whatever their case (the NFKC case-folded name is the key), and
a name that looks like one taken is refused as taken (:mod:`pasur.web.names`: invisible
characters, another script's look-alike letters). The ladder lists players who played a rated hand.

A **rated match** (:mod:`pasur.web.tables`, ``rated``) is a match, never a single hand, between
two players, or between a player and an AI level that has a fixed rating. When it ends, each of
its hands is one game of the match's rating period (``docs/ratings.md``), scored 1, ½ or 0 by the
sign of the hand's points (a hand lost on the clock is a loss), and :func:`pasur.web.ratings.rate`
moves each player once, against the other's rating and RD as they were before the match; an AI
level does not move. This runs in the transaction that saves the match's last move
(:func:`rate_match`, given to :func:`pasur.web.store.update_table`).

The **AI levels' fixed ratings** (:class:`LevelBoard`) are read from the card shipped with the
package (:mod:`pasur.web.level_card`: :func:`pasur.web.ratings.level_ratings` over the committed
arena results), or fitted from given arena folders; a level's RD in a person's update is its
robust standard error (0 for the anchor). A level the card does not rate (or rates as another
agent) has no rating: a rated table against it is refused.
"""

from __future__ import annotations

import hmac
import logging
import re
import secrets
import sqlite3
import threading
import time
import unicodedata
from collections.abc import Iterable, Mapping, Sequence
from dataclasses import dataclass
from pathlib import Path

from pasur.web.level_card import CARD, MODEL, arena_path, load_card
from pasur.web.names import name_skeleton, normalize_name
from pasur.web.ratings import ANCHOR, ANCHOR_RATING, FittedRating, Rating, level_ratings, rate
from pasur.web.service import BadInput, Conflict, NotFound, token_hash
from pasur.web.store import Store

log = logging.getLogger("pasur.web")

#: a name: 3 to 24 characters, letters (any script, with their combining marks and the
#: zero-width non-joiner Persian writes), digits, spaces, ``_ - .``
MIN_NAME, MAX_NAME = 3, 24
_PUNCT = frozenset(" _.-\u200c")


def _name_char(c: str) -> bool:
    return c.isalnum() or c in _PUNCT or unicodedata.category(c) == "Mn"


#: a word of a name that reads as a card would look like a card in a table's messages
_CARD = re.compile(r"(?<![A-Za-z0-9_\-])(10|[A2-9TJQK])[CDHS](?![A-Za-z0-9_\-])", re.IGNORECASE)
NO_PLAYER = "no such player"


@dataclass(frozen=True, slots=True)
class Player:
    id: int
    name: str
    rating: Rating
    games: int

    def json(self) -> dict:
        return {
            "name": self.name,
            "rating": round(self.rating.rating, 1),
            "rd": round(self.rating.rd, 1),
            "volatility": round(self.rating.volatility, 6),
            "games": self.games,
        }


def clean_name(name: str) -> tuple[str, str]:
    """The name as stored and shown (:func:`pasur.web.names.normalize_name`: NFKC, invisible
    characters removed, spaces collapsed) and its key (case-folded); 422 if bad."""
    shown = normalize_name(name)
    ok = (
        MIN_NAME <= len(shown) <= MAX_NAME
        and all(map(_name_char, shown))
        and any(c.isalpha() for c in shown)
        and not _CARD.search(shown)
    )
    if not ok:
        raise BadInput(
            f"a name is {MIN_NAME} to {MAX_NAME} letters, digits, spaces, '_', '-' or '.', "
            "with a letter and no card's name in it"
        )
    return shown, unicodedata.normalize("NFKC", shown).casefold()


_COLUMNS = "id, name, rating, rd, volatility, games"


def _player(r: tuple) -> Player:
    return Player(r[0], r[1], Rating(r[2], r[3], r[4]), r[5])


def create_player(store: Store, name: str) -> tuple[Player, str]:
    """A new player at Glicko-2's defaults; returns it and its secret token (409 if the name, or
    one that looks like it, is taken: checked in the inserting transaction, which holds the write
    lock from its start, so two look-alikes created at once cannot both pass)."""
    shown, key = clean_name(name)
    skeleton = name_skeleton(shown)
    token = secrets.token_urlsafe(32)
    start, now = Rating(), time.time()
    taken = Conflict(f"the name {shown!r} is taken")
    try:
        with store.transaction() as db:
            if db.execute("SELECT 1 FROM players WHERE name_skeleton = ? OR name_key = ?", (skeleton, key)).fetchone():
                raise taken
            cur = db.execute(
                "INSERT INTO players (name, name_key, name_skeleton, token_sha256, rating, rd, volatility, games, "
                "created_at, updated_at) VALUES (?, ?, ?, ?, ?, ?, ?, 0, ?, ?)",
                (shown, key, skeleton, token_hash(token), start.rating, start.rd, start.volatility, now, now),
            )
            pid = int(cur.lastrowid)
    except sqlite3.IntegrityError:
        raise taken from None
    return Player(pid, shown, start, 0), token


def player_by_token(store: Store, token: str | None) -> Player:
    """The player ``token`` names (404 otherwise)."""
    if not token or len(token) > 256:
        raise NotFound(NO_PLAYER)
    digest = token_hash(token)
    with store._connect() as db:
        r = db.execute(f"SELECT {_COLUMNS}, token_sha256 FROM players WHERE token_sha256 = ?", (digest,)).fetchone()
    if r is None or not hmac.compare_digest(r[6], digest):
        raise NotFound(NO_PLAYER)
    return _player(r)


def ladder_players(store: Store, limit: int = 100) -> list[Player]:
    """The players who played a rated hand, by rating, highest first (ties by name): a name
    registered and never played is left off."""
    with store._connect() as db:
        rows = db.execute(
            f"SELECT {_COLUMNS} FROM players WHERE games > 0 ORDER BY rating DESC, name_key LIMIT ?", (limit,)
        )
        return [_player(r) for r in rows]


def rating_events(store: Store, table_id: str) -> list[dict]:
    """The rating changes a table's match made (one per rated player)."""
    cols = (
        "player_id, opponent, games, score, rating_before, rd_before, volatility_before, rating_after, "
        "rd_after, volatility_after"
    )
    with store._connect() as db:
        rows = db.execute(f"SELECT {cols} FROM rating_events WHERE table_id = ? ORDER BY player_id", (table_id,))
        return [dict(zip([c.strip() for c in cols.split(",")], r, strict=True)) for r in rows]


# -- the AI levels' fixed ratings -------------------------------------------------------------------


class LevelBoard:
    """The AI levels' fixed ratings: from the shipped card (``card``), or, with ``folders`` (arena
    output folders, relative to the repository), fitted from them once, on first use; ``levels``
    (name -> agent spec) names the agents, and a card's row counts only for a level of the same
    name and agent. A card or a fit that fails leaves every level unrated, and is logged."""

    def __init__(
        self, levels: Mapping[str, str], folders: Sequence[str | Path] | None = None, card: Path = CARD
    ) -> None:
        self.levels = dict(levels)
        self.folders = None if folders is None else [arena_path(f) for f in folders]
        self.card = card
        self._lock = threading.Lock()
        self._fitted: dict[str, FittedRating] | None = None
        self._sources: list[str] = []
        self.error: str | None = None

    def _from_card(self) -> dict[str, FittedRating]:
        card = load_card(self.card)
        self._sources = [s["folder"] for s in card["sources"]]
        rows = {r["level"]: r for r in card["levels"] if self.levels.get(r["level"]) == r["agent"]}
        return {
            name: FittedRating(name, rows[name]["rating"], rows[name]["se"], rows[name]["rd"], rows[name]["hands"])
            for name in self.levels
            if name in rows
        }

    def fitted(self) -> dict[str, FittedRating]:
        with self._lock:
            if self._fitted is None:
                try:
                    if self.folders is None:
                        self._fitted = self._from_card()
                    else:
                        present = [f for f in self.folders if (f / "results.json").is_file()]
                        self._sources = [str(f) for f in present]
                        self._fitted = level_ratings(present, levels=self.levels) if present else {}
                        if not present:
                            self.error = "no arena results found"
                except (ValueError, OSError, KeyError, TypeError) as e:
                    log.warning("the AI levels have no ratings: %s", e)
                    self._fitted, self.error = {}, str(e)
            return self._fitted

    def rating(self, level: str) -> FittedRating | None:
        return self.fitted().get(level)

    def json(self) -> dict:
        fitted = self.fitted()
        return {
            "levels": [
                {
                    "level": name,
                    "agent": self.levels[name],
                    "rating": round(f.rating, 1),
                    "rd": round(f.se_robust, 1),
                    "se": round(f.se, 1),
                    "hands": f.games,
                }
                for name, f in fitted.items()
            ],
            "unrated": [name for name in self.levels if name not in fitted],
            "source": {
                "folders": list(self._sources),
                "anchor": ANCHOR,
                "anchor_rating": ANCHOR_RATING,
                "model": MODEL,
                "error": self.error,
            },
        }


# -- a finished rated match -------------------------------------------------------------------------


def hand_scores(hands: Iterable[dict], player: int) -> list[float]:
    """Each finished hand's score for ``player`` (stored results are in player order): 1, ½, 0
    by the sign of their points minus the other's."""
    out = []
    for h in hands:
        result = h.get("result")
        if result is not None:
            d = result["points"][player] - result["points"][1 - player]
            out.append(1.0 if d > 0 else 0.5 if d == 0 else 0.0)
    return out


def rate_match(table_id: str, seats: Sequence[dict], hands: Sequence[dict], board: LevelBoard):
    """The rating update of a finished rated match, as a function of a database connection that
    runs inside the transaction saving the match's last move: reads the players as they are then,
    rates each once against the other's rating before the match, writes players and events. Does
    nothing if the table was rated already."""

    def apply(db: sqlite3.Connection) -> None:
        if db.execute("SELECT 1 FROM rating_events WHERE table_id = ?", (table_id,)).fetchone():
            return
        before: list[Player | None] = []
        opponents: list[tuple[str, float, float] | None] = []  # (shown, rating, RD) per seat
        for seat in seats:
            pid = seat.get("player_id")
            if pid is not None:
                r = db.execute(f"SELECT {_COLUMNS} FROM players WHERE id = ?", (pid,)).fetchone()
                if r is None:
                    raise ValueError(f"table {table_id}: player {pid} is gone")
                p = _player(r)
                before.append(p)
                opponents.append((p.name, p.rating.rating, p.rating.rd))
            else:
                before.append(None)
                f = board.rating(str(seat.get("level")))
                opponents.append(None if f is None else (f"ai:{f.name}", f.rating, f.se_robust))
        now = time.time()
        for me in (0, 1):
            p, opp = before[me], opponents[1 - me]
            if p is None or opp is None:
                continue
            scores = hand_scores(hands, me)
            if not scores:
                continue
            new = rate(p.rating, [(opp[1], opp[2], s) for s in scores])
            db.execute(
                "UPDATE players SET rating = ?, rd = ?, volatility = ?, games = games + ?, updated_at = ? WHERE id = ?",
                (new.rating, new.rd, new.volatility, len(scores), now, p.id),
            )
            db.execute(
                "INSERT INTO rating_events (player_id, table_id, opponent, games, score, rating_before, rd_before, "
                "volatility_before, rating_after, rd_after, volatility_after, at) "
                "VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    p.id,
                    table_id,
                    opp[0],
                    len(scores),
                    sum(scores),
                    p.rating.rating,
                    p.rating.rd,
                    p.rating.volatility,
                    new.rating,
                    new.rd,
                    new.volatility,
                    now,
                ),
            )

    return apply
