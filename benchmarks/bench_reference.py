"""Benchmark of the exact reference solver: states, time and peak memory per deck.

Each deck is solved in a fresh Python process, so that the peak resident memory
(ru_maxrss) belongs to that deck alone. Prints a Markdown table.

    python benchmarks/bench_reference.py [--deck-file F] [--repeat N]
"""

from __future__ import annotations

import argparse
import json
import platform
import resource
import statistics
import subprocess
import sys
import time
from datetime import date
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
DEFAULT_DECKS = REPO.parent / "shared" / "decks" / "reference-decks.json"
if not DEFAULT_DECKS.exists():
    DEFAULT_DECKS = REPO / "tests" / "data" / "reference-decks.json"


def _one(deck_text: str, repeat: int) -> dict:
    from pasur.game.cards import parse_deck
    from pasur.solve.reference import solve_deck

    deck = parse_deck(deck_text)
    times = []
    for _ in range(repeat):
        t0 = time.perf_counter()
        value, solver = solve_deck(deck)
        times.append(time.perf_counter() - t0)
    peak_mib = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024
    return {
        "value": value,
        "states": solver.n_states,
        "median_s": statistics.median(times),
        "min_s": min(times),
        "peak_mib": peak_mib,
    }


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--deck-file", type=Path, default=DEFAULT_DECKS)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--one", help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        print(json.dumps(_one(args.one, args.repeat)))
        return

    from pasur.game.cards import read_deck_file

    decks = read_deck_file(args.deck_file)
    print(
        f"reference solver, {date.today()}, {platform.processor() or platform.machine()}, "
        f"Python {platform.python_version()}, repeat {args.repeat}\n"
    )
    print("| deck | value | known | states | median s | min s | peak RSS MiB |")
    print("|---|---|---|---|---|---|---|")
    for nd in decks:
        out = subprocess.run(
            [sys.executable, __file__, "--one", str(nd.deck), "--repeat", str(args.repeat)],
            capture_output=True,
            text=True,
            check=True,
        )
        r = json.loads(out.stdout)
        known = "" if nd.value is None else f"{nd.value:+g}"
        print(
            f"| {nd.id} | {r['value']:+d} | {known} | {r['states']:,} | {r['median_s']:.2f} | {r['min_s']:.2f} "
            f"| {r['peak_mib']:.0f} |",
            flush=True,
        )


if __name__ == "__main__":
    main()
