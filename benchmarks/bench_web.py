"""Load test of the web API against a PIMC opponent: N games at once, each played to the end by
its own client thread against a real uvicorn server on 127.0.0.1 (random legal moves for the
person), then every game checked in the database. Prints the move latency (the person's move
and the AI's reply, as a client sees it) and a Markdown row for docs/web.md.

python benchmarks/bench_web.py [--games 50] [--level pimc]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import tempfile
from datetime import date
from pathlib import Path

from pasur.web.levels import LEVELS
from pasur.web.loadtest import check_database, run_load, server


def main() -> None:
    p = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    p.add_argument("--games", type=int, default=50)
    p.add_argument("--level", default="pimc", choices=list(LEVELS))
    p.add_argument("--timeout", type=float, default=300, help="seconds a request may take")
    a = p.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        db = Path(tmp) / "bench.sqlite3"
        with server(db) as base:
            report = run_load(base, a.games, level=a.level, timeout=a.timeout)
        problems = check_database(db, report.runs)
    s = report.summary()
    s.update(
        level=a.level,
        agent=LEVELS[a.level],
        database_problems=len(problems),
        machine=f"{platform.machine()}, {os.cpu_count()} CPUs, Python {platform.python_version()}",
        date=date.today().isoformat(),
    )
    print(json.dumps(s, indent=1))
    if report.errors or problems:
        print("errors:", report.errors[:5], "database:", problems[:5])
        raise SystemExit(1)
    lat = s["move_latency_s"]
    print(
        f"\n| {a.games} | {a.level} ({LEVELS[a.level]}) | {s['moves']} | {s['errors']} | {lat['p50']:.2f} | "
        f"{lat['p95']:.2f} | {lat['max']:.2f} | {s['wall_s']:.0f} |"
    )


if __name__ == "__main__":
    main()
