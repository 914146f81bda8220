"""What a deck leaves held in a sweep's process after it ran there (the inline engine runs the
decks one after another in one process): the resident set before the deck, after it, after the
cyclic garbage collector, and after glibc's ``malloc_trim``, which ``pasur.common.memory.release_freed``
does between decks. The job is a sweep's own (``sweep.json``) with fewer iterations, rows and
games, so that it runs in a minute.

    python benchmarks/bench_deck_retention.py SWEEP_JSON DECK_FILE DECK_ID
"""

from __future__ import annotations

import argparse
import contextlib
import ctypes
import gc
import json
from pathlib import Path

from bench_strategy_table import rss

from pasur.game.cards import read_deck_file
from pasur.study import sweep


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("sweep_json", type=Path)
    ap.add_argument("deck_file")
    ap.add_argument("deck_id")
    args = ap.parse_args()
    nd = next((d for d in read_deck_file(args.deck_file) if d.id == args.deck_id), None)
    if nd is None:
        ap.error(f"no deck {args.deck_id!r} in {args.deck_file}")
    job = json.loads(args.sweep_json.read_text())["job"]
    job["cfr"]["iterations"] = 20
    if job.get("fit"):
        job["model_params"].update(rounds=5, max_rows=200_000)
    job["games"] = min(job["games"], 200)
    sweep.release_freed = lambda: None  # measure what the deck leaves, then release it here
    rows = [("before the deck", rss())]
    res = sweep.run_one({"id": nd.id, "deck": str(nd.deck)}, job, None)
    if not res["ok"]:
        raise SystemExit(f"error: the deck failed: {res['error']}")
    del res
    rows.append(("after the deck", rss()))
    gc.collect()
    rows.append(("after gc.collect()", rss()))
    with contextlib.suppress(OSError, AttributeError):
        ctypes.CDLL("libc.so.6").malloc_trim(0)
    rows.append(("after malloc_trim(0)", rss()))
    print(f"| {nd.id}: resident set | GiB |\n|---|---|")
    for name, b in rows:
        print(f"| {name} | {b / 2**30:.2f} |")


if __name__ == "__main__":
    main()
