"""Sweeps on Ray: decks per hour with 1 and 2 workers, against the same decks run inline (one
by one in this process, no Ray), and Ray's overhead: starting it, a no-op task's round trip,
and the extra seconds per deck of a Ray task over an inline run.

python benchmarks/bench_sweep.py [--decks 12] [--seed 100] [--workers 2]

Ray is started once (with ``--workers`` CPUs) and its workers warmed up (torch and pasur
imported) before timing, so the figures are a long sweep's steady state; the start is
reported on its own.
"""

from __future__ import annotations

import argparse
import os
import platform
import tempfile
import time
from datetime import date
from pathlib import Path

import torch

from pasur.common import raytasks
from pasur.game.cards import seed_decks
from pasur.solve.cfr import CFRParams
from pasur.study import sweep
from pasur.study.pipeline import DeckJob

JOBS = {
    "exact": DeckJob.exact(),
    "dcfr (target 0.025)": DeckJob(cfr=CFRParams(iterations=None, target_exploitability=0.025)),
}


def _noop() -> None:
    return None


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--decks", type=int, default=12)
    ap.add_argument("--seed", type=int, default=100)
    ap.add_argument("--workers", type=int, default=2)
    args = ap.parse_args()
    if args.decks < 1 or args.workers < 1:
        ap.error("--decks and --workers must be at least 1")
    torch.set_num_threads(1)
    import ray

    decks = seed_decks(args.decks, args.seed)
    print(
        f"sweeps on Ray, {date.today()}, {platform.machine()}, {os.cpu_count()} CPUs, torch {torch.__version__}, "
        f"ray {ray.__version__}, {args.decks} decks (seeds {args.seed}..{args.seed + args.decks - 1}), "
        f"load average before: {os.getloadavg()[0]:.2f}\n"
    )
    t0 = time.perf_counter()
    raytasks.start_ray(None, args.workers)
    start = time.perf_counter() - t0
    noop = ray.remote(_noop).options(num_cpus=1, max_retries=0)
    ray.get([noop.remote() for _ in range(args.workers)])
    with tempfile.TemporaryDirectory() as tmp:  # warm the workers: torch, pasur, matplotlib, a deck's first run
        for i, job in enumerate(JOBS.values()):
            warm = seed_decks(args.workers, 10_000)
            sweep.run_sweep(warm, job, Path(tmp) / f"warm{i}", workers=args.workers, progress=False)
    n = 200
    t0 = time.perf_counter()
    for _ in range(n):
        ray.get(noop.remote())
    round_trip = (time.perf_counter() - t0) / n
    t0 = time.perf_counter()
    ray.get([noop.remote() for _ in range(n)])
    pipelined = (time.perf_counter() - t0) / n
    print(f"Ray start (local, {args.workers} CPUs): {start:.2f} s")
    print(f"no-op task: {round_trip * 1e3:.2f} ms per round trip, {pipelined * 1e3:.2f} ms each with {n} in flight\n")
    print("| job | engine | workers | decks | seconds | decks per hour | seconds per deck |")
    print("|---|---|---|---|---|---|---|")
    for name, job in JOBS.items():
        times = {}
        with tempfile.TemporaryDirectory() as tmp:
            runs = [("inline", 1), *(("ray", w) for w in range(1, args.workers + 1))]
            for engine, workers in runs:
                out = Path(tmp) / f"{engine}-{workers}"
                t0 = time.perf_counter()
                sweep.run_sweep(decks, job, out, workers=workers, engine=engine, progress=False)
                sec = time.perf_counter() - t0
                times[engine, workers] = sec
                print(
                    f"| {name} | {engine} | {workers} | {len(decks)} | {sec:.1f} | {len(decks) / sec * 3600:,.0f} "
                    f"| {sec / len(decks):.2f} |",
                    flush=True,
                )
        extra = (times["ray", 1] - times["inline", 1]) / len(decks)
        speedup = times["ray", 1] / times["ray", args.workers]
        print(
            f"\n{name}: Ray overhead {extra:+.3f} s per deck (1 worker vs inline); "
            f"{args.workers} workers {speedup:.2f}x the decks per hour of 1\n"
        )
    print(f"load average after: {os.getloadavg()[0]:.2f}")
    ray.shutdown()


if __name__ == "__main__":
    main()
