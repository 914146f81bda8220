"""The web soak's server (issue 46): ``pasur.web.loadtest``'s server, with ``--warm-cache`` first
filling the rules engine's capture cache (``pasur.game.rules.numeric_captures``, an LRU cache of at
most 65,536 entries) to its cap, so that the soak's baseline is taken with that bounded cache full
and any growth after it is the server's own. The warm-up plays random games with the rules engine in
this process (no request, no endpoint) until the cache is full, then as many again so that entries
turn over as they do under traffic; it logs one JSON line (games, entries, seconds, resident memory)
to stderr, which the soak keeps in ``soak.server.log``. Started by ``soak_web.py --warm-cache``:

    python benchmarks/soak_web_server.py --warm-cache --db DB --port PORT [loadtest options]

``--trace-every S`` (``soak_web.py --trace-every S``) starts ``tracemalloc`` (one frame) S seconds
after the warm-up and every S seconds more appends to ``trace.txt`` beside the database the resident memory, the
memory Python's allocator traces, and the 15 source lines whose traced memory grew most since the
first snapshot: what grows, if anything does (it slows the server and adds to its memory: a
separate run from the one whose figures are reported).

``--sqlite-every S`` (``soak_web.py --sqlite-every S``) appends to ``sqlite-memory.csv`` beside the
database, every S seconds, the resident memory and what SQLite's own allocator holds
(``sqlite3_memory_used`` of the process's libsqlite3, read through ctypes: the page caches of the
store's pooled connections live there, outside Python's allocator and so outside tracemalloc).
"""

from __future__ import annotations

import json
import random
import sys
import threading
import time
import tracemalloc
from pathlib import Path

from pasur.game.cards import random_deck
from pasur.game.rules import numeric_captures
from pasur.game.state import GameState

#: games at most in a warm-up (about 1,500 fill the cache; a bound, whatever the rules become)
MAX_WARM_GAMES = 20_000


def rss_kib() -> int:
    status = Path("/proc/self/status").read_text()
    return int(status.split("VmRSS:")[1].split()[0])


def play_random_game(rng: random.Random) -> None:
    state = GameState.initial(random_deck(rng))
    while not state.is_terminal:
        state = state.apply(rng.choice(state.legal_actions()))


def warm_capture_cache(seed: int = 0) -> dict:
    """Fill the capture cache to its cap, then play as many games again; what it took."""
    rng, t0, before = random.Random(seed), time.monotonic(), rss_kib()
    cap = numeric_captures.cache_info().maxsize
    games = 0
    while numeric_captures.cache_info().currsize < cap and games < MAX_WARM_GAMES:
        play_random_game(rng)
        games += 1
    to_fill = games
    for _ in range(min(to_fill, MAX_WARM_GAMES - games)):
        play_random_game(rng)
        games += 1
    info = numeric_captures.cache_info()
    return {"warm_games": games, "games_to_fill": to_fill, "entries": info.currsize, "maxsize": cap,
            "misses": info.misses, "seconds": round(time.monotonic() - t0, 1),
            "rss_kib_before": before, "rss_kib_after": rss_kib()}  # fmt: skip


def trace_growth(out: Path, every_s: float) -> None:
    """Every ``every_s`` seconds, what grew since the first snapshot, appended to ``out``; the tracing
    and the first snapshot start after the first ``every_s`` (the server up and serving)."""
    time.sleep(every_s)
    tracemalloc.start(1)
    t0, first = time.monotonic(), tracemalloc.take_snapshot()
    while True:
        time.sleep(every_s)
        snap = tracemalloc.take_snapshot()
        traced, _ = tracemalloc.get_traced_memory()
        lines = [f"t_s {time.monotonic() - t0:.0f} rss_kib {rss_kib()} traced_kib {traced // 1024}"]
        lines += [f"  {d}" for d in snap.compare_to(first, "lineno")[:15]]
        with out.open("a") as f:
            f.write("\n".join(lines) + "\n")


def sqlite_memory_kib() -> int:
    """What SQLite's allocator holds in this process, KiB (the library ``_sqlite3`` loaded)."""
    import ctypes
    import sqlite3  # noqa: F401 (loads libsqlite3 into the process)

    used = ctypes.CDLL("libsqlite3.so.0").sqlite3_memory_used
    used.restype = ctypes.c_int64
    return used() // 1024


def log_sqlite_memory(out: Path, every_s: float) -> None:
    """Every ``every_s`` seconds, one row of ``out``: seconds, resident KiB, SQLite's KiB."""
    t0 = time.monotonic()
    out.write_text("t_s,rss_kib,sqlite_kib\n")
    while True:
        with out.open("a") as f:
            f.write(f"{time.monotonic() - t0:.0f},{rss_kib()},{sqlite_memory_kib()}\n")
        time.sleep(every_s)


def _start_logger(args: list[str], flag: str, filename: str, target) -> None:
    """If ``flag S`` is in ``args``, take it out and run ``target(file beside the database, S)``
    in a daemon thread."""
    if flag not in args:
        return
    i = args.index(flag)
    every_s = float(args[i + 1])
    del args[i : i + 2]
    out = Path(args[args.index("--db") + 1]).with_name(filename)
    threading.Thread(target=target, args=(out, every_s), daemon=True).start()


def main(argv: list[str] | None = None) -> None:
    from pasur.common.malloc import fix_mmap_threshold

    fix_mmap_threshold()  # first, as pasur serve and the load-test server do
    args = list(sys.argv[1:] if argv is None else argv)
    if "--warm-cache" in args:
        args.remove("--warm-cache")
        print(json.dumps({"warm_cache": warm_capture_cache()}), file=sys.stderr, flush=True)
    _start_logger(args, "--trace-every", "trace.txt", trace_growth)
    _start_logger(args, "--sqlite-every", "sqlite-memory.csv", log_sqlite_memory)
    from pasur.web.loadtest import _serve

    _serve(args)


if __name__ == "__main__":
    main()
