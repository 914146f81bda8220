"""What the web soak's resident memory grows by (issue 46). In one process, games through the app
(FastAPI's test client, the greedy AI, random moves) in rounds; the resident memory after each
round, with the rules engine's capture cache (``pasur.game.rules.numeric_captures``, at most
65,536 entries) cleared before each round, or left to fill. Flat with the cache cleared: what grows
is that bounded cache, not the server.

    .venv/bin/python benchmarks/soak_web_cache.py > results/web-soak/cache-check.txt
"""

from __future__ import annotations

import random
import tempfile

from fastapi.testclient import TestClient

from pasur.game.rules import numeric_captures
from pasur.web.app import create_app


def rss():
    return int(open("/proc/self/status").read().split("VmRSS:")[1].split()[0])


def rounds(clear: bool, n_rounds: int = 8, games: int = 30):
    db = tempfile.mkdtemp() + "/g.sqlite3"
    c = TestClient(create_app(db, levels={"greedy": "greedy"}, hint_level="greedy", allowed_hosts=["testserver"]))
    rng, out = random.Random(1), []
    for r in range(n_rounds):
        if clear:
            numeric_captures.cache_clear()
        for _ in range(games):
            v = c.post("/api/games", json={"level": "greedy"}).json()
            h = {"X-Pasur-Token": v["token"]}
            while v["status"] == "playing":
                a = rng.choice(v["hand"]["legal"])
                v = c.post(
                    f"/api/games/{v['id']}/moves", json={"card": a["card"], "captured": a["captured"]}, headers=h
                ).json()
        out.append((r, rss(), numeric_captures.cache_info().currsize))
    return out


if __name__ == "__main__":
    for clear in (True, False):
        res = rounds(clear)
        print(
            f"cache {'cleared each round' if clear else 'left to fill'}: "
            + ", ".join(f"round {r}: {k / 1024:.1f} MiB ({n} entries)" for r, k, n in res)
        )
