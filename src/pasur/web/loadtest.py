"""A bounded load test of the web API on this machine: many games played to the end at once
against a real uvicorn server on 127.0.0.1, then the database checked game by game.

Used by ``tests/web/test_web_load.py`` (fast AI) and ``benchmarks/bench_web.py`` (a PIMC
opponent). Traffic goes only to the loopback address; every loop is bounded (a game is at most
24 moves of the person, every request has a timeout, the run a deadline) and stops by itself.
``python -m pasur.web.loadtest --db PATH --port N`` is the server it starts.
"""

from __future__ import annotations

import argparse
import json
import math
import os
import random
import socket
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from concurrent.futures import ThreadPoolExecutor
from contextlib import contextmanager
from dataclasses import dataclass, field
from pathlib import Path

HOST = "127.0.0.1"


def free_port() -> int:
    with socket.socket() as s:
        s.bind((HOST, 0))
        return int(s.getsockname()[1])


@contextmanager
def server(
    db: Path, levels: dict[str, str] | None = None, hint_level: str | None = None, timeout: float | None = 120
) -> Iterator[str]:
    """A uvicorn server of :func:`pasur.web.app.create_app` in a child process; yields its base
    URL once it answers, and stops it (SIGTERM, then SIGKILL) on exit. Its log goes to
    ``db`` with the suffix ``.server.log``. ``timeout``: seconds to wait for it to answer
    (``None``: until it answers or exits; it exits by itself after ``PASUR_LOADTEST_MAX_S``)."""
    import httpx

    port = free_port()
    cmd = [sys.executable, "-m", "pasur.web.loadtest", "--db", str(db), "--port", str(port)]
    if levels is not None:
        cmd += ["--levels", json.dumps(levels)]
    if hint_level is not None:
        cmd += ["--hint-level", hint_level]
    log = Path(db).with_suffix(".server.log")
    with open(log, "wb") as err:
        proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=err)
    base = f"http://{HOST}:{port}"
    try:
        deadline = None if timeout is None else time.monotonic() + timeout
        while True:
            if proc.poll() is not None:
                raise RuntimeError(f"the server exited: {log.read_text(errors='replace')[-2000:]}")
            try:
                if httpx.get(f"{base}/api/health", timeout=2).status_code == 200:
                    break
            except httpx.HTTPError:
                pass
            if deadline is not None and time.monotonic() > deadline:
                raise TimeoutError("the server did not answer in time")
            time.sleep(0.2)
        yield base
    finally:
        proc.terminate()
        try:
            proc.wait(timeout=15)
        except subprocess.TimeoutExpired:
            proc.kill()
            proc.wait(timeout=15)


@dataclass
class GameRun:
    """One game as the client played it."""

    id: str | None = None
    token: str | None = None
    latencies: list[float] = field(default_factory=list)
    errors: list[str] = field(default_factory=list)
    status: str | None = None
    points: list[int] | None = None


def play_one(base: str, level: str, seed: int, timeout: float | None) -> GameRun:
    """Create a single-hand game and play it to the end with random legal moves."""
    import httpx

    run, rng = GameRun(), random.Random(seed)
    with httpx.Client(base_url=base, timeout=timeout) as c:
        r = c.post("/api/games", json={"level": level, "seat": rng.choice(["alex", "bob"])})
        if r.status_code != 201:
            run.errors.append(f"create: {r.status_code} {r.text[:200]}")
            return run
        view = r.json()
        run.id, run.token = view["id"], view["token"]
        headers = {"X-Pasur-Token": run.token}
        for _ in range(24):  # a person plays 24 cards in a hand
            if view["status"] != "playing":
                break
            move = rng.choice(view["hand"]["legal"])
            body = {"card": move["card"], "captured": move["captured"], "moves_played": view["hand"]["moves_played"]}
            t = time.perf_counter()
            r = c.post(f"/api/games/{run.id}/moves", json=body, headers=headers)
            run.latencies.append(time.perf_counter() - t)
            if r.status_code != 200:
                run.errors.append(f"move: {r.status_code} {r.text[:200]}")
                return run
            view = r.json()
        run.status = view["status"]
        run.points = view["result"]["points"] if view["result"] else None
    return run


@dataclass
class LoadReport:
    games: int
    runs: list[GameRun]
    wall: float

    @property
    def latencies(self) -> list[float]:
        return sorted(x for r in self.runs for x in r.latencies)

    @property
    def errors(self) -> list[str]:
        return [e for r in self.runs for e in r.errors]

    def percentile(self, q: float) -> float:
        xs = self.latencies
        return xs[min(len(xs) - 1, max(0, math.ceil(q / 100 * len(xs)) - 1))] if xs else float("nan")

    def summary(self) -> dict:
        xs = self.latencies
        return {
            "games": self.games,
            "moves": len(xs),
            "errors": len(self.errors),
            "finished": sum(1 for r in self.runs if r.status == "over"),
            "wall_s": round(self.wall, 2),
            "move_latency_s": {
                "mean": round(sum(xs) / len(xs), 4) if xs else None,
                "p50": round(self.percentile(50), 4),
                "p95": round(self.percentile(95), 4),
                "max": round(xs[-1], 4) if xs else None,
            },
        }


def run_load(
    base: str, games: int = 50, level: str = "greedy", timeout: float | None = 120, seed: int = 0
) -> LoadReport:
    """``games`` games at once, each in its own client thread, all played to the end; ``timeout``:
    seconds a request may take (``None``: no limit)."""
    t = time.perf_counter()
    with ThreadPoolExecutor(max_workers=games) as pool:
        runs = list(pool.map(lambda i: play_one(base, level, seed + i, timeout), range(games)))
    return LoadReport(games, runs, time.perf_counter() - t)


def check_database(db: Path, runs: list[GameRun]) -> list[str]:
    """What is wrong in the database after a load run (nothing, if all is well): every game is
    there, over, with 48 legal moves whose replay gives the stored result and what the client saw."""
    from pasur.web.service import hand_game, hand_result, token_hash
    from pasur.web.store import Store

    store = Store(db)
    problems = []
    for run in runs:
        row = store.get(run.id) if run.id else None
        if row is None:
            problems.append(f"game {run.id}: not in the database")
            continue
        if row.token_sha256 != token_hash(run.token or ""):
            problems.append(f"game {run.id}: token does not match")
        if row.status != "over" or len(row.hands) != 1:
            problems.append(f"game {run.id}: status {row.status}, {len(row.hands)} hands")
            continue
        hand = row.hands[0]
        try:
            game = hand_game(hand)
        except Exception as e:  # an illegal stored move
            problems.append(f"game {run.id}: moves do not replay ({e})")
            continue
        cp, surs = hand_result(game, hand["seat"])
        res = hand["result"]
        if not game.is_terminal or len(hand["moves"]) != 48:
            problems.append(f"game {run.id}: {len(hand['moves'])} moves, terminal {game.is_terminal}")
        if res is None or list(cp) != res["card_points"] or list(surs) != res["surs"]:
            problems.append(f"game {run.id}: stored result {res} is not the replay's {cp}, {surs}")
        elif res["points"] != row.totals or (run.points is not None and run.points != res["points"]):
            problems.append(f"game {run.id}: totals {row.totals}, result {res['points']}, client saw {run.points}")
    return problems


def _serve(argv: list[str] | None = None) -> None:
    from pasur.common.malloc import fix_mmap_threshold

    fix_mmap_threshold()  # as pasur serve: before anything large is loaded and freed
    import torch
    import uvicorn

    from pasur.web.app import create_app
    from pasur.web.levels import HINT_LEVEL

    p = argparse.ArgumentParser(description="the web app for a load test (127.0.0.1 only)")
    p.add_argument("--db", required=True)
    p.add_argument("--port", type=int, required=True)
    p.add_argument("--levels", default=None)
    p.add_argument("--hint-level", default=None)
    p.add_argument("--trim-every", type=float, default=None, help="seconds between returns of freed memory (0: never)")
    a = p.parse_args(argv)
    torch.set_num_threads(1)
    levels = json.loads(a.levels) if a.levels else None
    hint = a.hint_level or (HINT_LEVEL if levels is None else next(iter(levels)))
    trim = {} if a.trim_every is None else {"trim_every": a.trim_every}
    app = create_app(a.db, levels=levels, hint_level=hint, **trim)
    # stop by itself, whatever happens to the parent: a load test is bounded
    stop = threading.Timer(float(os.environ.get("PASUR_LOADTEST_MAX_S", "1800")), lambda: os._exit(0))
    stop.daemon = True
    stop.start()
    uvicorn.run(app, host=HOST, port=a.port, log_level="warning", access_log=False)


if __name__ == "__main__":
    _serve()
