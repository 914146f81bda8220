"""Benchmark of the tensor tree: nodes per round for both modes, build and solve time, peak memory.

Each (deck, mode) runs in a fresh Python process on one thread, so that the peak resident
memory (ru_maxrss) belongs to it alone; times are medians over ``--repeat`` runs in that
process (the first run pays for allocating memory from the system: it is counted), with the
minimum of build + solve beside them, and the machine's load average (``/proc/loadavg``) when
each (deck, mode) starts. ``--infosets off`` builds without ``t_cmp``, as an exact solve does.

    python benchmarks/bench_tree.py [--deck-file F] [--repeat N] [--device cpu|cuda] [--threads 1]
        [--modes compact,paper] [--infosets on|off]
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


def _one(deck_text: str, mode: str, repeat: int, device: str, threads: int, infosets: bool = True) -> dict:
    import torch

    from pasur.game.cards import parse_deck
    from pasur.game.state import GameState
    from pasur.solve.exact import solve_exact
    from pasur.solve.tree import build_tree

    torch.set_num_threads(threads)
    deck = parse_deck(deck_text)
    sync = torch.cuda.synchronize if device.startswith("cuda") else (lambda: None)
    builds, solves = [], []
    for _ in range(repeat):
        t0 = time.perf_counter()
        tree = build_tree(GameState.initial(deck), mode, device, infosets=infosets)
        sync()
        t1 = time.perf_counter()
        value = solve_exact(tree, keep_values=False).game_value()
        sync()
        builds.append(t1 - t0)
        solves.append(time.perf_counter() - t1)
        per_round = [sum(rt.n_nodes(t) for t in rt.turns) for rt in tree.rounds]
        nodes, nbytes = tree.n_nodes, tree.nbytes()
        del tree
    out = {
        "value": value,
        "nodes": nodes,
        "per_round": per_round,
        "tree_mib": nbytes / 2**20,
        "first_build_s": builds[0],
        "build_s": statistics.median(builds),
        "solve_s": statistics.median(solves),
        "total_s": statistics.median(b + s for b, s in zip(builds, solves, strict=True)),
        "min_total_s": min(b + s for b, s in zip(builds, solves, strict=True)),
        "peak_mib": resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024,
    }
    if device.startswith("cuda"):
        out["peak_gpu_mib"] = torch.cuda.max_memory_allocated() / 2**20
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--deck-file", type=Path, default=DEFAULT_DECKS)
    ap.add_argument("--repeat", type=int, default=3)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--modes", default="compact,paper")
    ap.add_argument("--infosets", choices=("on", "off"), default="on")
    ap.add_argument("--one", nargs=2, help=argparse.SUPPRESS)
    args = ap.parse_args()
    if args.one:
        r = _one(args.one[0], args.one[1], args.repeat, args.device, args.threads, args.infosets == "on")
        print(json.dumps(r))
        return

    from pasur.game.cards import read_deck_file

    decks = read_deck_file(args.deck_file)
    print(
        f"tensor tree, {date.today()}, {platform.machine()}, Python {platform.python_version()}, "
        f"device {args.device}, {args.threads} thread(s), median of {args.repeat}, infosets {args.infosets}\n"
    )
    print(
        "| deck | mode | value | nodes | nodes per round 0..5 | tree MiB | first build s | build s | solve s "
        "| total s | min total s | peak RSS MiB | load |"
    )
    print("|---|---|---|---|---|---|---|---|---|---|---|---|---|")
    for nd in decks:
        for mode in args.modes.split(","):
            cmd = [
                sys.executable,
                __file__,
                "--one",
                str(nd.deck),
                mode,
                "--repeat",
                str(args.repeat),
                "--device",
                args.device,
                "--threads",
                str(args.threads),
                "--infosets",
                args.infosets,
            ]
            load = Path("/proc/loadavg").read_text().split()[0]
            r = json.loads(subprocess.run(cmd, capture_output=True, text=True, check=True).stdout)
            rounds = " / ".join(f"{n:,}" for n in r["per_round"])
            gpu = f" (GPU {r['peak_gpu_mib']:.0f})" if "peak_gpu_mib" in r else ""
            times = f"{r['first_build_s']:.2f} | {r['build_s']:.2f} | {r['solve_s']:.3f} | {r['total_s']:.2f}"
            times += f" | {r['min_total_s']:.2f}"
            sizes = f"{r['nodes']:,} | {rounds} | {r['tree_mib']:.0f}"
            print(
                f"| {nd.id} | {mode} | {r['value']:+g} | {sizes} | {times} | {r['peak_mib']:.0f}{gpu} | {load} |",
                flush=True,
            )


if __name__ == "__main__":
    main()
