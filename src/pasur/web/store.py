"""SQLite storage of games: one row per game (a single hand or a match), its hands as JSON.

Every change is one transaction (``BEGIN IMMEDIATE`` ... ``COMMIT``), the database runs in WAL
mode with ``synchronous=FULL``, so a game survives a crash or a restart exactly as it was after
its last answered request. Writes are optimistic: a row is replaced only if its ``version`` is
the one read, so two servers (or two requests) on one game cannot lose a move.

The token is stored as its SHA-256 only: a copy of the database does not let anyone play.

Tables for two people (:mod:`pasur.web.tables`) live in the same file, one row per table in
``tables`` (schema 2; a schema-1 file is migrated in place by adding that table, its games kept).
Schema 3 adds the rated players (``players``: a name, the SHA-256 of the player's token, the
Glicko-2 rating, RD and volatility, the games counted) and ``rating_events`` (one row per rated
match and player: the rating before and after), and a ``rated`` column to ``tables``; a schema-1
or -2 file is migrated in place (the new tables created, the column added with 0: its tables stay
unrated). Players carry ``name_skeleton``, the key of names that look alike (:mod:`pasur.web.names`),
added and filled when a file without it is opened.
"""

from __future__ import annotations

import json
import sqlite3
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

from pasur.common.errors import PasurInputError
from pasur.web.names import name_skeleton

SCHEMA_VERSION = 3
#: schemas this code reads (older ones are migrated on open)
READABLE_SCHEMAS = (1, 2, 3)
#: the ``meta`` row that marks a database as this app's (written when the app creates it)
APP_KEY, APP_NAME = "app", "pasur-web"
#: connections kept open between requests (more are opened while more requests run at once)
POOL_IDLE = 4

_SCHEMA = """
CREATE TABLE IF NOT EXISTS meta (key TEXT PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE IF NOT EXISTS games (
    id TEXT PRIMARY KEY,
    token_sha256 TEXT NOT NULL,
    level TEXT NOT NULL,
    rules TEXT NOT NULL,
    first_seat INTEGER NOT NULL,
    sample_seed INTEGER NOT NULL,
    seed INTEGER,
    status TEXT NOT NULL,
    totals TEXT NOT NULL,
    hands TEXT NOT NULL,
    version INTEGER NOT NULL,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS tables (
    id TEXT PRIMARY KEY,
    seats TEXT NOT NULL,
    invite_sha256 TEXT,
    rules TEXT NOT NULL,
    clock_s INTEGER,
    deadline REAL,
    sample_seed INTEGER NOT NULL,
    seed INTEGER,
    status TEXT NOT NULL,
    hands TEXT NOT NULL,
    version INTEGER NOT NULL,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL,
    rated INTEGER NOT NULL DEFAULT 0,
    join_code TEXT,
    rematch TEXT
);
CREATE TABLE IF NOT EXISTS players (
    id INTEGER PRIMARY KEY,
    name TEXT NOT NULL,
    name_key TEXT NOT NULL UNIQUE,
    name_skeleton TEXT,
    token_sha256 TEXT NOT NULL UNIQUE,
    rating REAL NOT NULL,
    rd REAL NOT NULL,
    volatility REAL NOT NULL,
    games INTEGER NOT NULL,
    created_at REAL NOT NULL,
    updated_at REAL NOT NULL
);
CREATE TABLE IF NOT EXISTS rating_events (
    id INTEGER PRIMARY KEY,
    player_id INTEGER NOT NULL REFERENCES players (id),
    table_id TEXT NOT NULL,
    opponent TEXT NOT NULL,
    games INTEGER NOT NULL,
    score REAL NOT NULL,
    rating_before REAL NOT NULL,
    rd_before REAL NOT NULL,
    volatility_before REAL NOT NULL,
    rating_after REAL NOT NULL,
    rd_after REAL NOT NULL,
    volatility_after REAL NOT NULL,
    at REAL NOT NULL,
    UNIQUE (table_id, player_id)
);
"""


def _add_name_skeletons(db: sqlite3.Connection) -> None:
    """Give every player the key of names that look alike (issue 44): the column added to a file
    written before it (its schema number unchanged: older code reads and writes it as before), its
    index made, and the key filled for players that have none, in one transaction."""
    db.execute("BEGIN IMMEDIATE")
    try:
        if "name_skeleton" not in {r[1] for r in db.execute("PRAGMA table_info(players)")}:
            db.execute("ALTER TABLE players ADD COLUMN name_skeleton TEXT")
        db.execute("CREATE INDEX IF NOT EXISTS players_name_skeleton ON players (name_skeleton)")
        missing = db.execute("SELECT id, name FROM players WHERE name_skeleton IS NULL").fetchall()
        db.executemany("UPDATE players SET name_skeleton = ? WHERE id = ?", [(name_skeleton(n), i) for i, n in missing])
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


def _add_table_columns(db: sqlite3.Connection) -> None:
    """Give ``tables`` its join code and rematch columns (issue 44; a file written before them
    gets them here, its schema number unchanged) and the index that keeps the codes of tables
    still waiting unique, in one transaction."""
    db.execute("BEGIN IMMEDIATE")
    try:
        columns = {r[1] for r in db.execute("PRAGMA table_info(tables)")}
        for name in ("join_code", "rematch"):
            if name not in columns:
                db.execute(f"ALTER TABLE tables ADD COLUMN {name} TEXT")
        db.execute(
            "CREATE UNIQUE INDEX IF NOT EXISTS tables_join_code ON tables (join_code) WHERE join_code IS NOT NULL"
        )
    except BaseException:
        db.execute("ROLLBACK")
        raise
    db.execute("COMMIT")


@dataclass
class GameRow:
    """A stored game. ``hands``: one dict per hand dealt (``deck``, ``seat``, ``moves`` as
    ``[card, captured]`` pairs, ``result`` once over, ``replay`` once computed)."""

    id: str
    token_sha256: str
    level: str
    rules: dict
    first_seat: int
    sample_seed: int
    seed: int | None
    status: str
    totals: list[int]
    hands: list[dict] = field(default_factory=list)
    version: int = 0
    created_at: float = 0.0
    updated_at: float = 0.0


class StaleWrite(Exception):
    """The row changed since it was read (another request won)."""


class DamagedRow(Exception):
    """A stored game that cannot be read (its JSON is broken or of the wrong shape); carries the
    game's id and token hash, so that only its owner is told."""

    def __init__(self, game_id: str, token_sha256: str, why: str) -> None:
        super().__init__(f"game {game_id}: {why}")
        self.game_id = game_id
        self.token_sha256 = token_sha256


class Store:
    """The games table of one SQLite file (created with its folder if missing).

    A file that holds anything but this app's tables is refused (:class:`PasurInputError`): a
    database the app creates is marked by the row ``app = pasur-web`` of its ``meta`` table, and
    only an empty database (a new path, an empty file) is made into one."""

    def __init__(self, path: str | Path) -> None:
        self.path = Path(path)
        self.path.parent.mkdir(parents=True, exist_ok=True)
        self._local = threading.local()  # the connection this thread holds now (nested uses share it)
        self._idle: list[sqlite3.Connection] = []  # connections waiting for the next request
        self._pool_lock = threading.Lock()
        self._open = 0  # connections open now, idle or in use
        with self._connect() as db:
            self._check_ours(db)
            db.execute("PRAGMA journal_mode=WAL")
            db.executescript(_SCHEMA)
            got = db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone()
            if got is None:
                db.execute("INSERT INTO meta VALUES ('schema', ?)", (str(SCHEMA_VERSION),))
            elif not got[0].isdigit() or int(got[0]) not in READABLE_SCHEMAS:
                raise PasurInputError(
                    f"{self.path}: a games database of schema {got[0]}; this pasur reads schemas "
                    f"{', '.join(map(str, READABLE_SCHEMAS))}"
                )
            elif int(got[0]) != SCHEMA_VERSION:  # schema 1 or 2: the new tables were just added
                columns = {r[1] for r in db.execute("PRAGMA table_info(tables)")}
                if "rated" not in columns:  # schema 2's tables table: its tables are unrated
                    db.execute("ALTER TABLE tables ADD COLUMN rated INTEGER NOT NULL DEFAULT 0")
                db.execute("UPDATE meta SET value = ? WHERE key = 'schema'", (str(SCHEMA_VERSION),))
            db.execute("INSERT OR IGNORE INTO meta VALUES (?, ?)", (APP_KEY, APP_NAME))
            _add_name_skeletons(db)
            _add_table_columns(db)

    def _check_ours(self, db: sqlite3.Connection) -> None:
        """Refuse a database with tables that are not this app's, before anything is written."""
        tables = sorted(
            name
            for (name,) in db.execute("SELECT name FROM sqlite_master WHERE type = 'table'")
            if not name.startswith("sqlite_")
        )
        if not tables:
            return  # new or empty: it becomes ours
        mark = None
        if "meta" in tables:
            try:
                got = db.execute("SELECT value FROM meta WHERE key = ?", (APP_KEY,)).fetchone()
                mark = None if got is None else got[0]
                # made before the mark was written: the schema row and the games table say it is ours
                if (
                    mark is None
                    and "games" in tables
                    and db.execute("SELECT value FROM meta WHERE key = 'schema'").fetchone() is not None
                ):
                    mark = APP_NAME
            except sqlite3.Error:  # a 'meta' table of another shape
                mark = None
        if mark != APP_NAME:
            shown = ", ".join(tables[:5]) + (", ..." if len(tables) > 5 else "")
            raise PasurInputError(
                f"{self.path}: not a pasur games database (it holds other tables: {shown}); "
                "give a new file, or one pasur serve created"
            )

    @contextmanager
    def _connect(self) -> Iterator[sqlite3.Connection]:
        """A connection of the pool for the length of the block (a nested block of the same
        thread shares it). At most :data:`POOL_IDLE` wait between requests; more in use at once
        are closed when given back. A connection is not kept per thread: the server's worker
        threads come and go, and a connection per thread that ever lived leaked a file each
        (issue 46). Never closing the last one keeps SQLite from checkpointing at every request."""
        held = getattr(self._local, "db", None)
        if held is not None:
            yield held
            return
        db = self._take()
        self._local.db = db
        try:
            yield db
        finally:
            self._local.db = None
            self._give_back(db)

    def _take(self) -> sqlite3.Connection:
        with self._pool_lock:
            if self._idle:
                return self._idle.pop()
            self._open += 1
        try:
            db = sqlite3.connect(self.path, timeout=30, isolation_level=None, check_same_thread=False)
            db.execute("PRAGMA synchronous=FULL")
            db.execute("PRAGMA busy_timeout=30000")
        except BaseException:
            with self._pool_lock:
                self._open -= 1
            raise
        return db

    def _give_back(self, db: sqlite3.Connection) -> None:
        if db.in_transaction:  # never expected (transaction() commits or rolls back): not reused
            db.rollback()
        with self._pool_lock:
            if len(self._idle) < POOL_IDLE:
                self._idle.append(db)
                return
            self._open -= 1
        db.close()

    def open_connections(self) -> int:
        """Connections open now, idle or in use (bounded by the requests at once)."""
        with self._pool_lock:
            return self._open

    def close(self) -> None:
        """Close the idle connections (one in use is closed or kept when it is given back)."""
        with self._pool_lock:
            idle, self._idle = self._idle, []
            self._open -= len(idle)
        for db in idle:
            db.close()

    def checkpoint(self) -> None:
        """Copy every change from the ``-wal`` file into the database file and empty the WAL, so
        that the database file alone holds every game (a copy of it is a whole backup)."""
        with self._connect() as db:
            db.execute("PRAGMA wal_checkpoint(TRUNCATE)").fetchone()

    def close_all(self) -> None:
        """At shutdown: checkpoint, then close the idle connections (a thread that asks again
        afterwards opens a new one)."""
        self.checkpoint()
        self.close()

    @contextmanager
    def transaction(self) -> Iterator[sqlite3.Connection]:
        """One write transaction: committed whole, or rolled back on any error."""
        with self._connect() as db:
            db.execute("BEGIN IMMEDIATE")
            try:
                yield db
            except BaseException:
                db.execute("ROLLBACK")
                raise
            db.execute("COMMIT")

    # -- rows -------------------------------------------------------------------------------
    @staticmethod
    def _row(r: tuple) -> GameRow:
        """A row as a :class:`GameRow`; :class:`DamagedRow` if its JSON is broken or its fields
        are not of their types (what the hands say is checked by the rules when they are replayed)."""
        try:
            row = GameRow(
                id=r[0],
                token_sha256=r[1],
                level=r[2],
                rules=json.loads(r[3]),
                first_seat=r[4],
                sample_seed=r[5],
                seed=r[6],
                status=r[7],
                totals=json.loads(r[8]),
                hands=json.loads(r[9]),
                version=r[10],
                created_at=r[11],
                updated_at=r[12],
            )
        except (ValueError, TypeError) as e:  # json.JSONDecodeError is a ValueError
            raise DamagedRow(str(r[0]), str(r[1]), f"unreadable JSON ({e})") from None
        shapes = [
            (row.rules, dict, "rules"),
            (row.totals, list, "totals"),
            (row.hands, list, "hands"),
            (row.level, str, "level"),
            (row.status, str, "status"),
        ]
        for value, kind, what in shapes:
            if not isinstance(value, kind):
                raise DamagedRow(row.id, str(row.token_sha256), f"{what} is not a {kind.__name__}")
        if not row.hands or not all(isinstance(h, dict) for h in row.hands):
            raise DamagedRow(row.id, str(row.token_sha256), "hands are not a list of hands")
        return row

    _COLUMNS = (
        "id, token_sha256, level, rules, first_seat, sample_seed, seed, status, totals, hands, version, "
        "created_at, updated_at"
    )

    def get(self, game_id: str) -> GameRow | None:
        with self._connect() as db:
            r = db.execute(f"SELECT {self._COLUMNS} FROM games WHERE id = ?", (game_id,)).fetchone()
        return None if r is None else self._row(r)

    def all(self) -> list[GameRow]:
        with self._connect() as db:
            return [self._row(r) for r in db.execute(f"SELECT {self._COLUMNS} FROM games ORDER BY created_at")]

    def insert(self, row: GameRow) -> None:
        now = time.time()
        row.created_at = row.updated_at = now
        row.version = 1
        with self.transaction() as db:
            db.execute(
                f"INSERT INTO games ({self._COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                (
                    row.id,
                    row.token_sha256,
                    row.level,
                    json.dumps(row.rules),
                    row.first_seat,
                    row.sample_seed,
                    row.seed,
                    row.status,
                    json.dumps(row.totals),
                    json.dumps(row.hands, separators=(",", ":")),
                    row.version,
                    row.created_at,
                    row.updated_at,
                ),
            )

    def update(self, row: GameRow) -> None:
        """Write ``row`` back if nobody changed it since it was read; bumps its version."""
        now = time.time()
        with self.transaction() as db:
            cur = db.execute(
                "UPDATE games SET status = ?, totals = ?, hands = ?, version = ?, updated_at = ? "
                "WHERE id = ? AND version = ?",
                (
                    row.status,
                    json.dumps(row.totals),
                    json.dumps(row.hands, separators=(",", ":")),
                    row.version + 1,
                    now,
                    row.id,
                    row.version,
                ),
            )
            if cur.rowcount != 1:
                raise StaleWrite(row.id)
        row.version += 1
        row.updated_at = now

    def count(self) -> int:
        with self._connect() as db:
            return int(db.execute("SELECT COUNT(*) FROM games").fetchone()[0])


# -- tables for two people ------------------------------------------------------------------------


@dataclass
class TableRow:
    """A stored table of two people (:mod:`pasur.web.tables`). ``seats``: two dicts, one per
    player (``kind`` ``open``/``person``/``ai``, ``token_sha256`` of a person, ``level`` of an AI);
    ``hands``: one dict per hand dealt (``deck``, ``alex``: the player who is Alex, ``moves``,
    ``result`` once over, in player order, ``replay`` once computed); ``deadline``: when the player
    to move runs out of time (seconds of the service's clock), or ``None``; ``join_code``: the short
    code a friend may type instead of the invite (stored only while the table waits: unique among
    those); ``rematch``: ``{"asked": [players], "id": the new table's id or None}`` once asked."""

    id: str
    seats: list[dict]
    invite_sha256: str | None
    rules: dict
    clock_s: int | None
    deadline: float | None
    sample_seed: int
    seed: int | None
    status: str
    hands: list[dict] = field(default_factory=list)
    version: int = 0
    created_at: float = 0.0
    updated_at: float = 0.0
    rated: bool = False
    join_code: str | None = None
    rematch: dict | None = None


class CodeTaken(Exception):
    """A new table's join code is already another waiting table's (draw another)."""


_TABLE_COLUMNS = (
    "id, seats, invite_sha256, rules, clock_s, deadline, sample_seed, seed, status, hands, version, created_at, "
    "updated_at, rated, join_code, rematch"
)


def _table_row(r: tuple) -> TableRow:
    """A ``tables`` row; :class:`DamagedRow` (with no token: no owner is told more) if unreadable."""
    try:
        row = TableRow(
            id=r[0],
            seats=json.loads(r[1]),
            invite_sha256=r[2],
            rules=json.loads(r[3]),
            clock_s=r[4],
            deadline=r[5],
            sample_seed=r[6],
            seed=r[7],
            status=r[8],
            hands=json.loads(r[9]),
            version=r[10],
            created_at=r[11],
            updated_at=r[12],
            rated=bool(r[13]),
            join_code=r[14],
            rematch=None if r[15] is None else json.loads(r[15]),
        )
    except (ValueError, TypeError) as e:
        raise DamagedRow(str(r[0]), "", f"unreadable JSON ({e})") from None
    ok = (
        isinstance(row.seats, list)
        and len(row.seats) == 2
        and all(isinstance(s, dict) for s in row.seats)
        and isinstance(row.rules, dict)
        and isinstance(row.hands, list)
        and row.hands
        and all(isinstance(h, dict) for h in row.hands)
        and (row.rematch is None or isinstance(row.rematch, dict))
    )
    if not ok:
        raise DamagedRow(row.id, "", "seats, rules or hands of the wrong shape")
    return row


def _table_values(row: TableRow) -> tuple:
    return (
        json.dumps(row.seats),
        row.invite_sha256,
        json.dumps(row.rules),
        row.clock_s,
        row.deadline,
        row.sample_seed,
        row.seed,
        row.status,
        json.dumps(row.hands, separators=(",", ":")),
        row.join_code if row.status == "waiting" else None,  # a code is spent with the wait
        None if row.rematch is None else json.dumps(row.rematch),
    )


def get_table(store: Store, table_id: str) -> TableRow | None:
    with store._connect() as db:
        r = db.execute(f"SELECT {_TABLE_COLUMNS} FROM tables WHERE id = ?", (table_id,)).fetchone()
    return None if r is None else _table_row(r)


def table_ids_with_deadline(store: Store, before: float) -> list[str]:
    """Tables whose player to move ran out of time by ``before`` (the clock's sweep)."""
    with store._connect() as db:
        return [
            i for (i,) in db.execute("SELECT id FROM tables WHERE deadline IS NOT NULL AND deadline <= ?", (before,))
        ]


def mark_damaged(store: Store, table_id: str) -> None:
    """Take a table whose record cannot be read off the clock, once: its deadline cleared and its
    status ``damaged`` (the columns outside its JSON), so the sweep does not try it again."""
    with store.transaction() as db:
        db.execute("UPDATE tables SET deadline = NULL, status = 'damaged' WHERE id = ?", (table_id,))


def insert_table(store: Store, row: TableRow) -> None:
    """Store a new table (:class:`CodeTaken` if its join code is a waiting table's already)."""
    with store.transaction() as db:
        insert_table_in(db, row)


def insert_table_in(db: sqlite3.Connection, row: TableRow) -> None:
    """Insert a new table inside the transaction of ``db`` (a rematch: with the old table's row)."""
    row.created_at = row.updated_at = time.time()
    row.version = 1
    values = _table_values(row)
    try:
        db.execute(
            f"INSERT INTO tables ({_TABLE_COLUMNS}) VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
            (row.id, *values[:9], row.version, row.created_at, row.updated_at, int(row.rated), *values[9:]),
        )
    except sqlite3.IntegrityError as e:
        if "join_code" in str(e):
            raise CodeTaken(row.join_code) from None
        raise


def table_id_by_code(store: Store, code: str) -> str | None:
    """The waiting table whose join code is ``code`` (normalized), if any."""
    with store._connect() as db:
        got = db.execute("SELECT id FROM tables WHERE join_code = ? AND status = 'waiting'", (code,)).fetchone()
    return None if got is None else got[0]


def update_table(store: Store, row: TableRow, also: Callable[[sqlite3.Connection], None] | None = None) -> None:
    """Write ``row`` back in one transaction if nobody changed it since it was read (else
    :class:`StaleWrite`); bumps its version. ``also(db)`` runs in the same transaction after the
    row is written (a rated match's rating updates: committed with its last move, or not at all)."""
    now = time.time()
    with store.transaction() as db:
        cur = db.execute(
            "UPDATE tables SET seats = ?, invite_sha256 = ?, rules = ?, clock_s = ?, deadline = ?, sample_seed = ?, "
            "seed = ?, status = ?, hands = ?, join_code = ?, rematch = ?, version = ?, updated_at = ? "
            "WHERE id = ? AND version = ?",
            (*_table_values(row), row.version + 1, now, row.id, row.version),
        )
        if cur.rowcount != 1:
            raise StaleWrite(row.id)
        if also is not None:
            also(db)
    row.version += 1
    row.updated_at = now
