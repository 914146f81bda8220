"""A bounded load test of the tables for two people on this machine: N tables at once, each of
two simulated players over real WebSockets against a real uvicorn server on 127.0.0.1
(:func:`pasur.web.loadtest.server`), each table playing a whole match; then every move the
database holds is compared with what each player received.

A player is an asyncio task in this process: it plays a random legal move whenever its view says
it is its turn, and player 0 deals the next hand of the match. A move's latency is the time from
the mover's send to the other player's receipt of it (the move, its write, and the push). Lost
moves (in the database, never received by a player), duplicated ones (received twice) and
mismatched ones (another card than the stored one) must all be 0. Everything is bounded: every
wait has a timeout, every match a number of moves, the run a deadline. Used by
``pasur web-load`` and ``tests/web/test_web_load.py``.
"""

from __future__ import annotations

import asyncio
import json
import math
import random
import time
from dataclasses import dataclass, field
from pathlib import Path

#: a match to any target ends within this many hands in practice; the bound that stops a run
MAX_HANDS = 40


@dataclass
class PlayerRun:
    """What one simulated player received: each move as (hand, n, card), and the errors."""

    seen: list[tuple[int, int, str]] = field(default_factory=list)
    latencies: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    over: bool = False


@dataclass
class TableRun:
    id: str | None = None
    players: tuple[PlayerRun, PlayerRun] = field(default_factory=lambda: (PlayerRun(), PlayerRun()))
    errors: list[str] = field(default_factory=list)


async def _player(ws, me: int, run: TableRun, sent: dict, rng: random.Random, timeout: float | None) -> None:
    """Play until the match is over: answer every view where it is this player's turn."""
    mine = run.players[me]
    while True:
        msg = json.loads(await asyncio.wait_for(ws.recv(), timeout))
        if msg.get("type") == "error":
            mine.errors.append(f"player {me}: {msg.get('status')} {msg.get('error')}")
            if len(mine.errors) > 5:
                return
            continue
        now = time.perf_counter()
        for st in msg.get("steps", []):
            key = (st["hand_number"], st["n"])
            mine.seen.append((*key, st["move"]["card"]))
            if st["by"] == "ai" and key in sent:  # the other player's move reaching this one
                mine.latencies.append(now - sent[key])
        view = msg["view"]
        if view["status"] == "over":
            mine.over = True
            return
        if view["hand_number"] > MAX_HANDS:
            mine.errors.append(f"player {me}: the match went past {MAX_HANDS} hands")
            return
        if view["status"] == "hand_over" and me == 0:
            await ws.send(json.dumps({"type": "next"}))
        elif view["status"] == "playing" and view["hand"]["to_move"] == "you":
            move = rng.choice(view["hand"]["legal"])
            n = view["hand"]["moves_played"]
            sent[(view["hand_number"], n + 1)] = time.perf_counter()
            body = {"type": "move", "card": move["card"], "captured": move["captured"], "moves_played": n}
            await ws.send(json.dumps(body))


async def play_table(http, ws_base: str, target: int | None, seed: int, timeout: float | None) -> TableRun:
    """Open a table, join it, connect both players (the joiner first, so that both hear every
    move) and play the match to the end."""
    from websockets.asyncio.client import connect

    run, rng = TableRun(), random.Random(seed)
    r = await http.post("/api/tables", json={"rules": {"target": target}})
    if r.status_code != 201:
        run.errors.append(f"open: {r.status_code} {r.text[:200]}")
        return run
    opened = r.json()
    run.id = opened["id"]
    r = await http.post(f"/api/tables/{run.id}/join", json={"invite": opened["invite"]})
    if r.status_code != 200:
        run.errors.append(f"join: {r.status_code} {r.text[:200]}")
        return run
    tokens = (opened["token"], r.json()["token"])
    sent: dict = {}
    url = f"{ws_base}/api/tables/{run.id}/live"
    async with connect(url, open_timeout=timeout) as ws1:
        await ws1.send(json.dumps({"type": "hello", "token": tokens[1]}))
        first = json.loads(await asyncio.wait_for(ws1.recv(), timeout))
        if first.get("type") != "update":
            run.errors.append(f"hello: {first}")
            return run
        async with connect(url, open_timeout=timeout) as ws0:
            await ws0.send(json.dumps({"type": "hello", "token": tokens[0]}))
            await asyncio.gather(
                _player(ws0, 0, run, sent, rng, timeout), _player_after(ws1, first, 1, run, sent, rng, timeout)
            )
    return run


async def _player_after(ws, first: dict, me: int, run: TableRun, sent: dict, rng, timeout: float | None) -> None:
    """Player 1, whose hello answer was read already (Bob does not lead the first hand)."""
    if first["view"]["hand"]["to_move"] == "you":
        run.errors.append("player 1 was to move before player 0 connected")
        return
    await _player(ws, me, run, sent, rng, timeout)


@dataclass
class TableLoadReport:
    tables: int
    target: int | None
    runs: list[TableRun]
    wall: float
    problems: list[str] = field(default_factory=list)
    lost: int = 0
    duplicated: int = 0
    mismatched: int = 0
    moves: int = 0

    @property
    def latencies(self) -> list[float]:
        return sorted(x for r in self.runs for p in r.players for x in p.latencies)

    @property
    def errors(self) -> list[str]:
        return [e for r in self.runs for e in (*r.errors, *r.players[0].errors, *r.players[1].errors)]

    def percentile(self, q: float) -> float | None:
        xs = self.latencies
        return xs[min(len(xs) - 1, max(0, math.ceil(q / 100 * len(xs)) - 1))] if xs else None

    def summary(self) -> dict:
        xs = self.latencies
        r4 = lambda x: None if x is None else round(x, 4)  # noqa: E731
        return {
            "tables": self.tables,
            "target": self.target,
            "finished": sum(1 for r in self.runs if r.players[0].over and r.players[1].over),
            "moves": self.moves,
            "errors": len(self.errors) + len(self.problems),
            "lost_moves": self.lost,
            "duplicated_moves": self.duplicated,
            "mismatched_moves": self.mismatched,
            "wall_s": round(self.wall, 2),
            "move_latency_s": {
                "p50": r4(self.percentile(50)),
                "p95": r4(self.percentile(95)),
                "max": r4(xs[-1] if xs else None),
            },
        }


def check_tables(db: Path, report: TableLoadReport) -> None:
    """Compare every stored move with what each player received: fills ``lost``, ``duplicated``,
    ``mismatched``, ``moves`` and ``problems`` (a table missing, not over, moves that do not
    replay)."""
    from pasur.game.cards import format_card
    from pasur.web.service import hand_game
    from pasur.web.store import Store, get_table

    store = Store(db)
    for run in report.runs:
        row = get_table(store, run.id) if run.id else None
        if row is None:
            report.problems.append(f"table {run.id}: not in the database")
            continue
        if row.status != "over":
            report.problems.append(f"table {run.id}: status {row.status}")
        stored = {}
        for h, hand in enumerate(row.hands, start=1):
            try:
                hand_game(hand)
            except Exception as e:  # an illegal stored move
                report.problems.append(f"table {run.id}: hand {h} does not replay ({e})")
            for n, (card, _) in enumerate(hand["moves"], start=1):
                stored[(h, n)] = format_card(card)
        report.moves += len(stored)
        for p in run.players:
            keys = [(h, n) for h, n, _ in p.seen]
            report.duplicated += len(keys) - len(set(keys))
            report.lost += len(set(stored) - set(keys))
            report.mismatched += sum(1 for h, n, c in p.seen if stored.get((h, n)) != c)


async def _run_all(base: str, tables: int, target: int | None, timeout: float | None, seed: int) -> list[TableRun]:
    import httpx

    ws_base = "ws" + base.removeprefix("http")
    limits = httpx.Limits(max_connections=64)
    async with httpx.AsyncClient(base_url=base, timeout=timeout, limits=limits) as http:

        async def one(i: int) -> TableRun:
            try:
                return await play_table(http, ws_base, target, seed + i, timeout)
            except Exception as e:  # a timeout or a dropped socket: counted, the others go on
                run = TableRun()
                run.errors.append(f"table {i}: {type(e).__name__}: {e}")
                return run

        return list(await asyncio.gather(*(one(i) for i in range(tables))))


def run_table_load(
    base: str, db: Path, tables: int = 100, target: int | None = 62, timeout: float | None = 120, seed: int = 0
) -> TableLoadReport:
    """``tables`` matches at once against the server at ``base`` (its database file ``db``),
    then the database check."""
    t = time.perf_counter()
    runs = asyncio.run(_run_all(base, tables, target, timeout, seed))
    report = TableLoadReport(tables, target, runs, time.perf_counter() - t)
    check_tables(db, report)
    return report
