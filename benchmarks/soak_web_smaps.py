"""Where a soak server's resident memory lies (issue 46): every ``--every`` seconds, the resident
KiB of a process's mappings from ``/proc/PID/smaps``, by kind: the main heap (``[heap]``: glibc's
main arena), glibc's thread arenas (anonymous mappings that start on a 64 MiB boundary), small
anonymous mappings (at most 1 MiB: Python's 256 KiB object arenas and large single blocks), other
anonymous mappings (thread stacks, big buffers) and files (libraries). Read-only; bounded by
``--minutes``; light (one read of smaps a sample). Appends one CSV row a sample to ``--out``.

    .venv/bin/python benchmarks/soak_web_smaps.py PID --minutes 35 --out results/web-soak/warm/smaps.csv
"""

from __future__ import annotations

import argparse
import csv
import sys
import time
from pathlib import Path

ARENA_ALIGN = 64 << 20
KINDS = ("heap", "thread_arenas", "small_anon", "other_anon", "files", "stack")


def mappings(pid: int) -> list[tuple[int, int, str, int]]:
    """(start, size in KiB, name, resident KiB) of each mapping."""
    out, cur = [], None
    for line in Path(f"/proc/{pid}/smaps").read_text().splitlines():
        head = line.split()
        if "-" in head[0] and len(head) >= 5 and not head[0].endswith(":"):
            lo, hi = (int(x, 16) for x in head[0].split("-"))
            cur = [lo, (hi - lo) >> 10, head[5] if len(head) > 5 else "", 0]
            out.append(cur)
        elif head[0] == "Rss:" and cur is not None:
            cur[3] = int(head[1])
    return [tuple(m) for m in out]


def kind(start: int, size_kib: int, name: str) -> str:
    if name == "[heap]":
        return "heap"
    if name.startswith("[stack"):
        return "stack"
    if name:
        return "files"
    if start % ARENA_ALIGN == 0 and size_kib <= ARENA_ALIGN >> 10:
        return "thread_arenas"
    return "small_anon" if size_kib <= 1024 else "other_anon"


def sample(pid: int) -> dict:
    totals = dict.fromkeys(KINDS, 0)
    maps = mappings(pid)
    for start, size, name, rss in maps:
        totals[kind(start, size, name)] += rss
    n_small = sum(1 for s, z, n, r in maps if kind(s, z, n) == "small_anon" and r)
    return {"rss_kib": sum(totals.values()), **totals, "small_anon_mappings": n_small}


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    p.add_argument("pid", type=int)
    p.add_argument("--every", type=float, default=60.0)
    p.add_argument("--minutes", type=float, default=30.0)
    p.add_argument("--out", type=Path, required=True)
    a = p.parse_args(argv)
    if not Path(f"/proc/{a.pid}/smaps").is_file() or not 0 < a.minutes <= 24 * 60 or a.every < 1:
        print("error: no such process, or --minutes not 0 to 1440, or --every under 1 s", file=sys.stderr)
        return 2
    t0 = time.monotonic()
    while time.monotonic() - t0 < a.minutes * 60 and Path(f"/proc/{a.pid}/smaps").is_file():
        row = {"t_s": round(time.monotonic() - t0), "utc": time.strftime("%H:%M:%S", time.gmtime()), **sample(a.pid)}
        first = not a.out.exists()
        with a.out.open("a", newline="") as f:
            w = csv.DictWriter(f, fieldnames=list(row))
            if first:
                w.writeheader()
            w.writerow(row)
        time.sleep(a.every)
    return 0


if __name__ == "__main__":
    sys.exit(main())
