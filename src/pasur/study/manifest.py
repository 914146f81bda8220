"""A sweep's manifest: one Parquet row per deck with its status, attempts, timings, headline
numbers and error. The driver rewrites it whole (temp file, then rename) after every change,
so a reader, or a driver killed at any moment, sees either the old manifest or the new one.

>>> import tempfile
>>> m = Manifest(Path(tempfile.mkdtemp()) / "manifest.parquet")
>>> m.add("seed-1", "TD 5S ...")
>>> m.finish("seed-1", "done", {"value": 2.0, "exact_value": 2, "nodes": 10}, started=1.0, finished=3.5)
>>> m.save(); again = Manifest.load(m.path)
>>> again.rows["seed-1"]["status"], again.rows["seed-1"]["attempts"], again.rows["seed-1"]["seconds"]
('done', 1, 2.5)
"""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import pyarrow as pa
import pyarrow.parquet as pq

from pasur.common.conventions import relabel_columns
from pasur.common.errors import PasurInputError
from pasur.common.outputs import atomic_path

STATUSES = ("pending", "running", "done", "failed")

#: a deck the driver's process died in this many times in a row is recorded failed: with the
#: inline engine a deck runs inside the driver, and one the kernel's OOM killer stops would
#: otherwise be started again, and kill the sweep again, at every resume
MAX_INTERRUPTED = 2

#: the manifest's columns; the headline numbers are copied from the deck's record when present
SCHEMA = pa.schema(
    [
        ("deck_id", pa.string()),
        ("deck", pa.string()),
        ("status", pa.string()),
        ("attempts", pa.int64()),
        ("started", pa.timestamp("ms", tz="UTC")),
        ("finished", pa.timestamp("ms", tz="UTC")),
        ("seconds", pa.float64()),
        ("value", pa.float64()),
        ("exact_value", pa.float64()),
        ("nash_conv", pa.float64()),
        ("exploitability", pa.float64()),
        ("nodes", pa.int64()),
        ("fair_value", pa.float64()),
        ("error", pa.string()),
        ("host", pa.string()),
        ("worker", pa.string()),
        ("interrupted", pa.int64()),
    ]
)
RECORD_FIELDS = ("value", "exact_value", "nash_conv", "exploitability", "nodes", "fair_value")


def _empty_row(deck_id: str, deck: str) -> dict:
    row: dict = dict.fromkeys(SCHEMA.names)
    row.update(deck_id=deck_id, deck=deck, status="pending", attempts=0, interrupted=0)
    return row


def _time(t: float | None) -> datetime | None:
    return None if t is None else datetime.fromtimestamp(t, UTC)


def _relabelled(rows: list[dict], names: list[str]) -> list[dict]:
    """Rows of a manifest written before docs/conventions.md (``exploitability`` held NashConv)
    relabelled: ``nash_conv`` and ``exploitability = nash_conv / 2``; newer rows as they are."""
    if "exploitability" not in names or "nash_conv" in names:
        return rows
    cols = relabel_columns({"exploitability": [r["exploitability"] for r in rows]})
    return [{**r, **{k: v[i] for k, v in cols.items()}} for i, r in enumerate(rows)]


class Manifest:
    """The rows of a manifest, in deck order, keyed by deck id."""

    def __init__(self, path: Path, rows: dict[str, dict] | None = None) -> None:
        self.path = Path(path)
        self.rows: dict[str, dict] = rows if rows is not None else {}

    @classmethod
    def load(cls, path: Path) -> Manifest:
        """Read ``path``; a missing file is an empty manifest, an unreadable one a user error."""
        path = Path(path)
        if not path.exists():
            return cls(path)
        try:
            table = pq.read_table(path)
        except (OSError, pa.ArrowException) as e:
            raise PasurInputError(f"cannot read the manifest {path}: {e}") from None
        missing = [n for n in ("deck_id", "deck", "status") if n not in table.column_names]
        if missing:
            raise PasurInputError(f"{path} is not a sweep manifest (no column {', '.join(missing)})")
        rows = {}
        # a manifest of an older version: no nash_conv, its exploitability was NashConv
        for r in _relabelled(table.to_pylist(), table.column_names):
            row = _empty_row(r["deck_id"], r["deck"])
            row.update({k: v for k, v in r.items() if k in SCHEMA.names})
            rows[row["deck_id"]] = row
        return cls(path, rows)

    def add(self, deck_id: str, deck: str) -> None:
        """A new deck, pending; a deck already listed keeps its row."""
        self.rows.setdefault(deck_id, _empty_row(deck_id, deck))

    def start(self, deck_id: str, started: float, host: str | None = None, worker: str | None = None) -> None:
        """Mark a deck running in the driver's own process (saved before it starts), so that a
        resume can tell a deck that killed the process from one that never ran."""
        row = self.rows[deck_id]
        row.update(status="running", started=_time(started), finished=None, seconds=None, host=host, worker=worker)

    def release_running(self) -> None:
        """Ctrl-C, a SIGTERM or an error of the driver: the decks that were running go back to
        pending; they did not fail."""
        for row in self.rows.values():
            if row["status"] == "running":
                row.update(status="pending", started=None, host=None, worker=None)

    def recover_running(self) -> None:
        """Rows still ``running`` when a sweep starts belong to a driver that died while it ran
        them (the folder lock rules out a live one). Each goes back to pending, with a note,
        until it has ended the process ``MAX_INTERRUPTED`` times in a row; then it is failed and
        a resume skips it until ``--retry-failed``."""
        for row in self.rows.values():
            if row["status"] != "running":
                continue
            n = int(row["interrupted"] or 0) + 1
            since = "" if row["started"] is None else f" (started {row['started']:%Y-%m-%d %H:%M:%S} UTC)"
            what = f"the sweep's process ended while this deck ran{since}, {n} time(s) in a row"
            row.update(interrupted=n, attempts=int(row["attempts"] or 0) + 1)
            if n >= MAX_INTERRUPTED:
                why = "killed, most likely for memory; --retry-failed runs it again"
                row.update(status="failed", error=f"{what}: {why}")
            else:
                row.update(status="pending", error=f"{what}; run again", started=None, host=None, worker=None)

    def status(self, deck_id: str) -> str:
        return self.rows[deck_id]["status"]

    def count(self, status: str) -> int:
        return sum(1 for r in self.rows.values() if r["status"] == status)

    def finish(
        self,
        deck_id: str,
        status: str,
        record: dict | None = None,
        *,
        error: str | None = None,
        started: float | None = None,
        finished: float | None = None,
        host: str | None = None,
        worker: str | None = None,
    ) -> None:
        """Record one attempt's outcome (``done`` or ``failed``); timestamps are Unix seconds."""
        if status not in ("done", "failed"):
            raise ValueError(f"an attempt ends done or failed, not {status!r}")
        row = self.rows[deck_id]
        row["status"] = status
        row["attempts"] = int(row["attempts"] or 0) + 1
        row["started"], row["finished"] = _time(started), _time(finished)
        row["seconds"] = None if started is None or finished is None else finished - started
        row["error"] = error
        row["host"], row["worker"] = host, worker
        row["interrupted"] = 0  # an attempt that ended by itself ends a run of interruptions
        for k in RECORD_FIELDS:
            v = (record or {}).get(k)
            row[k] = None if v is None else (int(v) if k == "nodes" else float(v))

    def save(self) -> None:
        """Write the manifest atomically: a temporary sibling, then a rename."""
        table = pa.Table.from_pylist(list(self.rows.values()), schema=SCHEMA)
        with atomic_path(self.path) as tmp:
            pq.write_table(table, tmp)
