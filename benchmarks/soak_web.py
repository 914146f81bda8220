"""A soak of the web server on 127.0.0.1 (issue 46): bursts of requests, ordinary and hostile, with
pauses longer than the server's worker threads live idle (about 10 s), so every burst runs on new
threads; the server's open files, resident memory and threads are sampled before and after each
burst. Light on the CPU: a fast AI (``greedy``), a few clients, most of the time paused.

What a burst does (each request's answer checked; an unexpected status, a 5xx or a dropped
connection is an error):
- games played a few moves, each move's ``moves_played`` given; the same move sent again (a
  replay: 409) and two copies of one move at once (exactly one 200), then the stored hand checked
  (no lost or duplicated move);
- hostile requests: a body that is not JSON (400 or 422), one over the size limit (413), a wrong token
  and an unknown or absurd id (404), a hint or a next hand out of turn (409), a foreign ``Host`` (400);
- a table against the AI over a WebSocket: a hello with a wrong token (an error, then closed),
  more sockets on one token than a seat keeps (the oldest closed), a move, a ping; one socket that
  never says hello, checked 40 s later to have been closed by the server (it waits 30 s).

Every loop is bounded (``--minutes``, the bursts' count, every request's timeout) and stops by
itself; the server stops by itself too (``PASUR_LOADTEST_MAX_S``). Writes ``samples.csv`` (one row
a sample, written as it is taken, so a run cut short leaves its figures), ``summary.json`` and the
server's log (``soak.server.log``) under ``--out``.

``--warm-cache`` starts the server through ``benchmarks/soak_web_server.py``, which fills the rules
engine's bounded capture cache to its cap before the server answers, so the baseline (the first
sample) is taken with it full: resident memory that grows after it is not that cache.
``--sqlite-every S`` has it log SQLite's own memory (``sqlite-memory.csv``).
``--trace-every S`` has that server report what its Python memory grew by, every S seconds, in
``trace.txt`` (see ``soak_web_server.py``).

    .venv/bin/python benchmarks/soak_web.py --minutes 60 --out results/web-soak
    .venv/bin/python benchmarks/soak_web.py --minutes 60 --warm-cache --out results/web-soak/warm
"""

from __future__ import annotations

import argparse
import contextlib
import csv
import json
import os
import random
import subprocess
import sys
import threading
import time
from concurrent.futures import ThreadPoolExecutor
from dataclasses import dataclass, field
from pathlib import Path

import httpx
from websockets.exceptions import ConnectionClosed
from websockets.sync.client import connect

from pasur.web.loadtest import HOST, free_port

TOKEN = "X-Pasur-Token"
LEVELS = {"greedy": "greedy", "random": "random"}
#: seconds every request and socket wait may take before it counts as an error
REQUEST_TIMEOUT = 60.0
#: seconds after which a socket that never said hello must have been closed (the server waits 30)
SILENT_CHECK_S = 40.0
#: more sockets than the server keeps per seat (4)
SOCKETS_TRIED = 6


@dataclass
class Tally:
    """Requests made and what went wrong, shared by the burst's threads."""

    requests: int = 0
    errors: list[str] = field(default_factory=list)
    lock: threading.Lock = field(default_factory=threading.Lock)

    def expect(self, r: httpx.Response, *statuses: int, what: str) -> httpx.Response:
        with self.lock:
            self.requests += 1
            if r.status_code not in statuses:
                self.errors.append(f"{what}: {r.status_code} (expected {statuses}) {r.text[:200]}")
        return r

    def count(self, n: int) -> None:
        with self.lock:
            self.requests += n

    def error(self, what: str) -> None:
        with self.lock:
            self.errors.append(what)


def server_figures(pid: int) -> dict:
    """The server's open files, resident memory (KiB) and threads, from /proc."""
    status = Path(f"/proc/{pid}/status").read_text()
    fields = dict(line.split(":", 1) for line in status.splitlines() if ":" in line)
    return {
        "fds": len(os.listdir(f"/proc/{pid}/fd")),
        "rss_kib": int(fields["VmRSS"].split()[0]),
        "threads": int(fields["Threads"].strip()),
    }


def move_body(view: dict, rng: random.Random) -> dict:
    a = rng.choice(view["hand"]["legal"])
    return {"card": a["card"], "captured": a["captured"], "moves_played": view["hand"]["moves_played"]}


def play_game(c: httpx.Client, tally: Tally, rng: random.Random, moves: int) -> None:
    """A game against greedy: ``moves`` moves with a replayed copy of each, then a race of two
    copies of one move, then the stored moves counted against the answers."""
    r = tally.expect(
        c.post("/api/games", json={"level": "greedy", "seat": rng.choice(["alex", "bob"])}), 201, what="new game"
    )
    if r.status_code != 201:
        return
    view = r.json()
    gid, h = view["id"], {TOKEN: view["token"]}
    for _ in range(moves):
        if view["status"] != "playing":
            break
        body = move_body(view, rng)
        r = tally.expect(c.post(f"/api/games/{gid}/moves", json=body, headers=h), 200, what="move")
        if r.status_code != 200:
            return
        view = r.json()
        if any(k in r.text for k in ('"deck"', '"sample_seed"', '"token_sha256"')):
            tally.error(f"game {gid}: a secret key in a view")
        tally.expect(c.post(f"/api/games/{gid}/moves", json=body, headers=h), 409, what="replayed move")
    if view["status"] == "playing":
        body = move_body(view, rng)
        with ThreadPoolExecutor(2) as two:
            answers = list(two.map(lambda _: c.post(f"/api/games/{gid}/moves", json=body, headers=h), range(2)))
        codes = sorted(a.status_code for a in answers)
        tally.count(2)
        if codes != [200, 409]:
            tally.error(f"game {gid}: two copies of one move answered {codes}")
        else:
            view = next(a for a in answers if a.status_code == 200).json()
    stored = tally.expect(c.get(f"/api/games/{gid}", headers=h), 200, what="view")
    if stored.status_code == 200 and stored.json()["hand"]["moves_played"] != view["hand"]["moves_played"]:
        tally.error(
            f"game {gid}: stored {stored.json()['hand']['moves_played']} moves, answered {view['hand']['moves_played']}"
        )
    if view["status"] == "playing" and view["hand"]["to_move"] == "you":
        tally.expect(c.post(f"/api/games/{gid}/next", headers=h), 409, what="next out of turn")


def hostile(c: httpx.Client, tally: Tally, rng: random.Random) -> None:
    """Requests a careless or hostile client sends: each answered 4xx."""
    r = tally.expect(c.post("/api/games", json={"level": "greedy"}), 201, what="new game")
    gid = r.json()["id"] if r.status_code == 201 else "x"
    bad = {"content-type": "application/json"}
    tally.expect(c.post("/api/games", content=b'{"level": "greedy"', headers=bad), 400, 422, what="not JSON")
    tally.expect(c.post("/api/games", content=b"[" * 5000, headers=bad), 400, what="deep JSON")
    tally.expect(c.post("/api/games", content=b"x" * 40_000, headers=bad), 413, what="huge body")
    tally.expect(c.get(f"/api/games/{gid}", headers={TOKEN: "wrong"}), 404, what="wrong token")
    tally.expect(c.get(f"/api/games/{gid}"), 404, what="no token")
    tally.expect(c.get("/api/games/" + "z" * rng.randint(65, 3000), headers={TOKEN: "t"}), 404, what="long id")
    tally.expect(c.get("/api/games/..%2F..%2Fetc", headers={TOKEN: "t"}), 404, what="odd id")
    tally.expect(c.get(f"/api/tables/{gid}", headers={TOKEN: "t"}), 404, what="a game's id as a table")
    tally.expect(
        c.post(f"/api/games/{gid}/moves", json={"card": "ZZ", "captured": []}, headers={TOKEN: "t"}),
        404,
        what="move, wrong token",
    )
    tally.expect(c.get("/api/health", headers={"Host": "evil.example"}), 400, what="foreign Host")
    tally.expect(c.get("/api/games/x/replay", params={"hand": "-1"}, headers={TOKEN: "t"}), 422, what="bad hand")


def table_sockets(c: httpx.Client, ws_base: str, tally: Tally, rng: random.Random) -> None:
    """A table against the AI over sockets: a wrong hello, more sockets than a seat keeps, a move."""
    r = tally.expect(c.post("/api/tables", json={"ai_level": "greedy", "seat": "bob"}), 201, what="new table")
    if r.status_code != 201:
        return
    t = r.json()
    url = f"{ws_base}/api/tables/{t['id']}/live"
    with connect(url, open_timeout=REQUEST_TIMEOUT, close_timeout=5) as ws:
        ws.send(json.dumps({"type": "hello", "token": "wrong"}))
        msg = json.loads(ws.recv(timeout=REQUEST_TIMEOUT))
        tally.count(1)
        if msg.get("type") != "error" or msg.get("status") != 404:
            tally.error(f"wrong hello answered {msg}")
    sockets = []
    with contextlib.ExitStack() as opened:
        for _ in range(SOCKETS_TRIED):
            ws = opened.enter_context(connect(url, open_timeout=REQUEST_TIMEOUT, close_timeout=5))
            sockets.append(ws)
            ws.send(json.dumps({"type": "hello", "token": t["token"]}))
            view = json.loads(ws.recv(timeout=REQUEST_TIMEOUT))["view"]
            tally.count(1)
        closed = 0
        for ws in sockets[: SOCKETS_TRIED - 4]:  # the oldest, over the cap: closed by the server
            try:
                ws.recv(timeout=REQUEST_TIMEOUT)
            except ConnectionClosed:
                closed += 1
        if closed != SOCKETS_TRIED - 4:
            tally.error(f"table {t['id']}: {closed} of the oldest {SOCKETS_TRIED - 4} sockets closed")
        last = sockets[-1]
        last.send(json.dumps({"type": "ping"}))
        if json.loads(last.recv(timeout=REQUEST_TIMEOUT)) != {"type": "pong"}:
            tally.error("ping not answered pong")
        if view["hand"]["to_move"] == "you":
            last.send(json.dumps({"type": "move", **move_body(view, rng)}))
            msg = json.loads(last.recv(timeout=REQUEST_TIMEOUT))
            if msg.get("type") != "update":
                tally.error(f"table move answered {str(msg)[:200]}")
        tally.count(2)


def burst(base: str, ws_base: str, tally: Tally, seed: int, clients: int) -> None:
    def one(i: int) -> None:
        rng = random.Random(seed * 1000 + i)
        try:
            with httpx.Client(base_url=base, timeout=REQUEST_TIMEOUT) as c:
                play_game(c, tally, rng, moves=rng.randint(2, 6))
                hostile(c, tally, rng)
                if i % 2 == 0:
                    table_sockets(c, ws_base, tally, rng)
        except Exception as e:  # a dropped connection or a timeout: an error of the run
            tally.error(f"client {i}: {type(e).__name__}: {e}")

    with ThreadPoolExecutor(clients) as pool:
        list(pool.map(one, range(clients)))


def silent_socket(ws_base: str, tally: Tally):
    """A socket that never says hello (the server closes it after its hello timeout)."""
    try:
        return connect(f"{ws_base}/api/tables/none/live", open_timeout=REQUEST_TIMEOUT, close_timeout=5).__enter__()
    except Exception as e:
        tally.error(f"silent socket: {type(e).__name__}: {e}")
        return None


def closed_by_server(ws) -> bool:
    try:
        ws.recv(timeout=1)
    except ConnectionClosed:
        return True
    except TimeoutError:
        return False
    return False


def start_server(
    db: Path,
    max_s: float,
    warm_cache: bool = False,
    trace_s: float = 0,
    trim_s: float | None = None,
    sqlite_s: float = 0,
) -> tuple[subprocess.Popen, str]:
    port = free_port()
    env = {**os.environ, "PASUR_LOADTEST_MAX_S": str(int(max_s))}
    server = [str(Path(__file__).with_name("soak_web_server.py"))] if warm_cache or trace_s or sqlite_s else None
    server = server and server + ["--warm-cache"] * warm_cache + ["--trace-every", str(trace_s)] * (trace_s > 0)
    server = server and server + ["--sqlite-every", str(sqlite_s)] * (sqlite_s > 0)
    cmd = [sys.executable, *(server or ["-m", "pasur.web.loadtest"]), "--db", str(db), "--port", str(port)]
    cmd += ["--levels", json.dumps(LEVELS), "--hint-level", "greedy"]
    cmd += [] if trim_s is None else ["--trim-every", str(trim_s)]
    log = open(db.with_suffix(".server.log"), "wb")  # noqa: SIM115 (open while the server lives)
    proc = subprocess.Popen(cmd, stdout=subprocess.DEVNULL, stderr=log, env=env)
    base = f"http://{HOST}:{port}"
    for _ in range(600):  # at most 120 s
        if proc.poll() is not None:
            raise RuntimeError("the server exited at start")
        try:
            if httpx.get(f"{base}/api/health", timeout=2).status_code == 200:
                return proc, base
        except httpx.HTTPError:
            pass
        time.sleep(0.2)
    proc.kill()
    raise TimeoutError("the server did not answer in 120 s")


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("--minutes", type=float, default=60.0)
    p.add_argument("--out", type=Path, default=Path("results/web-soak"))
    p.add_argument("--clients", type=int, default=6, help="clients at once in a burst")
    p.add_argument("--pauses", default="12,15,5", help="seconds between bursts, in turn (over 10: new threads)")
    p.add_argument("--warm-cache", action="store_true", help="fill the server's capture cache before the baseline")
    p.add_argument("--trace-every", type=float, default=0, help="tracemalloc in the server, what grew every S s")
    p.add_argument("--trim-every", type=float, default=None, help="the server's --trim-every (default: its own)")
    p.add_argument("--sqlite-every", type=float, default=0, help="log SQLite's own memory every S s")
    p.add_argument("--figures-only", action="store_true", help="only rewrite --out's figures.md from its summary.json")
    a = p.parse_args(argv)
    if a.figures_only:
        write_figures(a.out, json.loads((a.out / "summary.json").read_text()))
        return 0
    if not 0 < a.minutes <= 24 * 60 or not 1 <= a.clients <= 32:
        print("error: --minutes is 0 to 1440 and --clients 1 to 32", file=sys.stderr)
        return 2
    pauses = [float(x) for x in a.pauses.split(",")]
    a.out.mkdir(parents=True, exist_ok=True)
    db = a.out / "soak.sqlite3"
    for stale in (db, db.with_name(db.name + "-wal"), db.with_name(db.name + "-shm")):
        stale.unlink(missing_ok=True)
    duration = a.minutes * 60
    proc, base = start_server(db, duration + 300, a.warm_cache, a.trace_every, a.trim_every, a.sqlite_every)
    ws_base = base.replace("http://", "ws://")
    tally, rows, silent = Tally(), [], []
    t0 = time.monotonic()
    start_wall = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime())

    def sample(n: int, when: str) -> None:
        rows.append({"t_s": round(time.monotonic() - t0, 1), "burst": n, "when": when, **server_figures(proc.pid),
                     "requests": tally.requests, "errors": len(tally.errors)})  # fmt: skip
        append_sample(a.out / "samples.csv", rows[-1], first=len(rows) == 1)

    try:
        sample(0, "start")
        max_bursts = int(duration / min(pauses)) + 1
        for n in range(1, max_bursts + 1):
            if time.monotonic() - t0 >= duration or proc.poll() is not None:
                break
            silent.append((time.monotonic(), silent_socket(ws_base, tally)))
            burst(base, ws_base, tally, n, a.clients)
            while silent and time.monotonic() - silent[0][0] > SILENT_CHECK_S:
                old = silent.pop(0)[1]
                if old is not None and not closed_by_server(old):
                    tally.error(f"burst {n}: a socket that never said hello is still open")
                if old is not None:
                    old.close()
            sample(n, "after")
            time.sleep(pauses[n % len(pauses)])
            sample(n, "paused")
            if n % 20 == 0:
                print(f"{rows[-1]}", flush=True)
    finally:
        for _, ws in silent:
            if ws is not None:
                ws.close()
        alive = proc.poll() is None
        proc.terminate()
        proc.wait(timeout=30)
    write(a.out, rows, tally, start_wall, alive, a)
    for scratch in (db, db.with_name(db.name + "-wal"), db.with_name(db.name + "-shm")):
        scratch.unlink(missing_ok=True)  # the games played are not a result; the server's log is kept
    return 0 if not tally.errors and alive else 1


def append_sample(path: Path, row: dict, first: bool) -> None:
    """One row of ``samples.csv``, on disk at once (a run cut short keeps what it measured)."""
    with open(path, "w" if first else "a", newline="") as f:
        w = csv.DictWriter(f, fieldnames=list(row))
        if first:
            w.writeheader()
        w.writerow(row)


def quarter_hours(rows: list[dict], settled: list[dict]) -> list[dict]:
    """The start sample, then the paused sample nearest each quarter hour reached."""
    marks = range(15 * 60, int(settled[-1]["t_s"]) + 60, 15 * 60)
    picked = [rows[0]] + [min(settled, key=lambda r, m=m: abs(r["t_s"] - m)) for m in marks]
    return [{k: r[k] for k in ("t_s", "fds", "rss_kib", "threads", "requests", "errors")} for r in picked]


def write(out: Path, rows: list[dict], tally: Tally, start_wall: str, alive: bool, a) -> None:
    settled = [r for r in rows if r["when"] == "paused"] or rows
    summary = {
        "started_utc": start_wall,
        "ended_utc": time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime()),
        "minutes": round(rows[-1]["t_s"] / 60, 1),
        "bursts": rows[-1]["burst"],
        "clients_per_burst": a.clients,
        "pauses_s": a.pauses,
        "warm_cache": a.warm_cache,
        "trim_every": a.trim_every,
        "requests": tally.requests,
        "errors": len(tally.errors),
        "first_errors": tally.errors[:20],
        "server_alive_at_end": alive,
        **{f"{k}_{w}": v for k in ("fds", "rss_kib", "threads") for w, v in figures(rows, settled, k).items()},
        "quarter_hours": quarter_hours(rows, settled),
    }
    (out / "summary.json").write_text(json.dumps(summary, indent=1) + "\n")
    write_figures(out, summary)
    print(json.dumps(summary, indent=1))


def write_figures(out: Path, s: dict) -> None:
    """``figures.md``: the tables the docs cite, from the summary (memory in MiB)."""
    mib = lambda kib: f"{kib / 1024:.1f}"  # noqa: E731
    cols = ("start", "end", "max", "first_tenth_mean", "last_tenth_mean")
    lines = ["| run | minutes | bursts | requests | errors |", "|---|---|---|---|---|",
             f"| soak | {s['minutes']} | {s['bursts']} | {s['requests']:,} | {s['errors']} |", "",
             "| measure | start | end | max | first tenth (mean) | last tenth (mean) |", "|---|---|---|---|---|---|",
             "| open descriptors | " + " | ".join(f"{s[f'fds_{c}']:g}" for c in cols) + " |",
             "| resident memory (MiB) | " + " | ".join(mib(s[f"rss_kib_{c}"]) for c in cols) + " |",
             "| threads | " + " | ".join(f"{s[f'threads_{c}']:g}" for c in cols) + " |"]  # fmt: skip
    if s.get("quarter_hours"):
        lines += ["", "| minute | requests | errors | open descriptors | resident memory (MiB) | threads |",
                  "|---|---|---|---|---|---|"]  # fmt: skip
        lines += [f"| {q['t_s'] / 60:.1f} | {q['requests']:,} | {q['errors']} | {q['fds']} | {mib(q['rss_kib'])} | "
                  f"{q['threads']} |" for q in s["quarter_hours"]]  # fmt: skip
    (out / "figures.md").write_text("\n".join(lines) + "\n")


def figures(rows: list[dict], settled: list[dict], key: str) -> dict:
    """At start, at the end (the last paused sample), the largest, and the first and last tenth's
    means of the paused samples (flat if they agree)."""
    tenth = max(1, len(settled) // 10)
    mean = lambda xs: round(sum(r[key] for r in xs) / len(xs), 1)  # noqa: E731
    return {
        "start": rows[0][key],
        "end": settled[-1][key],
        "max": max(r[key] for r in rows),
        "first_tenth_mean": mean(settled[:tenth]),
        "last_tenth_mean": mean(settled[-tenth:]),
    }


if __name__ == "__main__":
    sys.exit(main())
