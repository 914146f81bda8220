"""The small pieces of the tables' flows around play (issue 44): the short join code a friend can
read aloud, the seats of a rematch, and the rating change a rated match made, as a player reads it.

A join code is :data:`CODE_LENGTH` characters of :data:`CODE_ALPHABET`: digits and capital
letters without the ones read or written alike (``0``/``O``, ``1``/``I``/``L``), so that it can be
read over the phone; typed in any case, with spaces or dashes between its characters. It is a
bearer secret like the invite (whoever types it first takes the seat) with a smaller space
(31^6, about 8.9e8): it lives only while its table waits for the friend (at most ``JOIN_TTL``).
"""

from __future__ import annotations

import secrets

from pasur.web.players import rating_events
from pasur.web.store import Store, TableRow

#: the characters of a join code: no 0, O, 1, I or L
CODE_ALPHABET = "23456789ABCDEFGHJKMNPQRSTUVWXYZ"
CODE_LENGTH = 6
#: the refusal of a code that cannot be one (422)
BAD_CODE = f"a join code is {CODE_LENGTH} letters and digits"
#: the answer to a code no waiting table has (404)
NO_CODE = "no table waits with this code"


def draw_code() -> str:
    """A new join code, drawn by the operating system's generator."""
    return "".join(secrets.choice(CODE_ALPHABET) for _ in range(CODE_LENGTH))


def normalize_code(text: str) -> str | None:
    """``text`` as a join code (capitals, without spaces or dashes), or ``None`` if it is not one."""
    if len(text) > 4 * CODE_LENGTH:
        return None
    code = "".join(c for c in text if c not in " -").upper()
    if len(code) != CODE_LENGTH or any(c not in CODE_ALPHABET for c in code):
        return None
    return code


def rematch_seats(row: TableRow) -> list[dict]:
    """The seats of a rematch: the same two players, each in the other's seat (who was player 1
    leads the first hand), each person opened by the same token as before, so both pages move to
    the new table with what they hold."""
    return [dict(row.seats[1]), dict(row.seats[0])]


def rating_change(store: Store, row: TableRow, player: int) -> dict | None:
    """What a finished rated match did to each rating, as ``player`` reads it: ``{"you": {"before",
    "after"}, "ai": ... or None}`` (``ai``: the other player; ``None`` for an AI level, which never
    moves); ``None`` before the match is rated."""
    if not row.rated or row.status != "over":
        return None
    events = {e["player_id"]: e for e in rating_events(store, row.id)}

    def of(p: int) -> dict | None:
        e = events.get(row.seats[p].get("player_id"))
        if e is None:
            return None
        return {"before": round(e["rating_before"], 1), "after": round(e["rating_after"], 1)}

    mine = of(player)
    return None if mine is None else {"you": mine, "ai": of(1 - player)}
