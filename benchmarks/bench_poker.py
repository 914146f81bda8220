"""Benchmark of the poker core (see docs/poker.md, Benchmarks).

1. Leduc: one CFR+ iteration (alternating updates, OpenSpiel's conventions) on our fast path and
   on the level-by-level engine, and OpenSpiel's C++ CFR+ (``pyspiel.CFRPlusSolver``) in the same
   run when OpenSpiel is installed; the time to exploitability 1e-3 (CFR+ and DCFR, checked every
   10 iterations; solver time without the checks, and wall time with them).
2. Numeral211 (suit-isomorphic boards): one full-width CFR+ iteration (both players) with the
   100 / 225 / 396 abstraction (round 1: the 100 lossless suit classes; rounds 2, 3: expected hand
   strength quantiles), and one exact best response of player 0 in the real game; time and peak
   resident memory, each in a fresh process (so the peak is that job's), after building the
   engine and the abstraction (timed separately).

Every figure is given as wall time and as CPU time of this process (``time.process_time``): on a
machine shared with other jobs the wall time grows with the load, the CPU time of a one-thread
run much less, so it is the better estimate of the time on an idle machine.

    python benchmarks/bench_poker.py [--part leduc|numeral|all] [--threads 1] [--dtype float64]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import resource
import subprocess
import sys
import time
from datetime import date

import torch


def leduc(args) -> dict:
    from pasur.poker.engine import Engine
    from pasur.poker.run import make_solver, solve
    from pasur.poker.solvers import CFRConfig, CFRSolver

    e = Engine("leduc")
    out: dict = {}
    fast = make_solver(e, CFRConfig(method="cfr+"))
    fast.iterate(20)
    n = args.iterations
    best, cpu = [], []
    for _ in range(args.repeats):
        t0, c0 = time.perf_counter(), time.process_time()
        fast.iterate(n)
        best.append((time.perf_counter() - t0) / n)
        cpu.append((time.process_time() - c0) / n)
    out["ours_fast_ms"] = 1e3 * min(best)
    out["ours_fast_ms_median"] = 1e3 * sorted(best)[len(best) // 2]
    out["ours_fast_cpu_ms"] = 1e3 * min(cpu)
    eng = CFRSolver(e, CFRConfig(method="cfr+"))
    eng.iterate(5)
    t0, c0 = time.perf_counter(), time.process_time()
    eng.iterate(100)
    out["ours_engine_ms"] = 1e3 * (time.perf_counter() - t0) / 100
    out["ours_engine_cpu_ms"] = 1e3 * (time.process_time() - c0) / 100
    try:
        import pyspiel
    except ImportError:
        out["openspiel_cpp_ms"] = None
    else:
        game = pyspiel.load_game("leduc_poker")
        os_solver = pyspiel.CFRPlusSolver(game)
        os_solver.evaluate_and_update_policy()
        m = max(20, n // 20)
        t0, c0 = time.perf_counter(), time.process_time()
        for _ in range(m):
            os_solver.evaluate_and_update_policy()
        out["openspiel_cpp_ms"] = 1e3 * (time.perf_counter() - t0) / m
        out["openspiel_cpp_cpu_ms"] = 1e3 * (time.process_time() - c0) / m
    for method in ("cfr+", "dcfr"):
        t0, c0 = time.perf_counter(), time.process_time()
        r = solve(e, CFRConfig(method=method), iterations=100_000, target_exploitability=1e-3, check_every=10)
        out[f"to_1e-3_{method}"] = {
            "iterations": r.iterations,
            "solver_seconds": r.seconds,
            "wall_seconds": time.perf_counter() - t0,
            "cpu_seconds": time.process_time() - c0,
            "exploitability": r.exploitability,
        }
    return out


def calibrate() -> float | None:
    """CPU ms of one OpenSpiel C++ CFR+ iteration on Leduc now (9.1 ms on an idle machine of this
    kind, per the issue): how much the machine's load slows a one-thread job at this moment."""
    try:
        import pyspiel
    except ImportError:
        return None
    solver = pyspiel.CFRPlusSolver(pyspiel.load_game("leduc_poker"))
    solver.evaluate_and_update_policy()
    c0 = time.process_time()
    for _ in range(30):
        solver.evaluate_and_update_policy()
    return 1e3 * (time.process_time() - c0) / 30


def numeral_job(job: str, dtype: str) -> dict:
    """One Numeral211 job in this process: ``iteration`` (CFR+, alternating updates),
    ``iteration_simultaneous`` (vanilla CFR as Zinkevich et al. define it: both players at once)
    or ``best_response`` (player 0, in the real game)."""
    from pasur.poker.abstraction import abstraction
    from pasur.poker.engine import Engine
    from pasur.poker.solvers import CFRConfig, CFRSolver

    t0 = time.perf_counter()
    e = Engine("numeral211", dtype=getattr(torch, dtype))
    build = time.perf_counter() - t0
    t0 = time.perf_counter()
    keying = abstraction(e, "iso,ehs:225,ehs:396")
    abstract = time.perf_counter() - t0
    updates = "simultaneous" if job == "iteration_simultaneous" else "alternating"
    solver = CFRSolver(e, CFRConfig(method="cfr+" if updates == "alternating" else "cfr", updates=updates), keying)
    base = _rss()
    before = calibrate()
    t0, c0 = time.perf_counter(), time.process_time()
    if job.startswith("iteration"):
        solver.iterate(1)
        value = None
    else:
        value = float(e.traverse(solver.current, players=(0,), modes="max")[0])
    seconds = time.perf_counter() - t0
    cpu = time.process_time() - c0
    after = calibrate()
    return {
        "job": job,
        "dtype": dtype,
        "seconds": seconds,
        "cpu_seconds": cpu,
        "engine_build_seconds": build,
        "abstraction_seconds": abstract,
        "keys_per_round": keying.n_keys,
        "chunk_boards": e.chunk,
        "peak_rss_mib": _peak() / 2**20,
        "rss_before_mib": base / 2**20,
        "best_response_value": value,
        "openspiel_leduc_cpu_ms_before_after": [before, after],
    }


def _rss() -> int:
    with open("/proc/self/statm") as f:
        return int(f.read().split()[1]) * os.sysconf("SC_PAGE_SIZE")


def _peak() -> int:
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss * 1024


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--part", choices=("leduc", "numeral", "all"), default="all")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--dtype", choices=("float64", "float32"), default="float64")
    ap.add_argument("--iterations", type=int, default=1000, help="Leduc iterations timed per repeat")
    ap.add_argument("--repeats", type=int, default=5)
    ap.add_argument("--job", help=argparse.SUPPRESS)
    args = ap.parse_args()
    torch.set_num_threads(args.threads)
    if args.job:
        print(json.dumps(numeral_job(args.job, args.dtype)))
        return
    load = os.getloadavg()
    report = {
        "date": date.today().isoformat(),
        "machine": f"{platform.processor() or platform.machine()}, {os.cpu_count()} CPUs, torch {torch.__version__}",
        "python": platform.python_version(),
        "threads": args.threads,
        "repeats": args.repeats,
        "load_average_at_start": [round(x, 2) for x in load],
    }
    if args.part in ("leduc", "all"):
        report["leduc"] = leduc(args)
    if args.part in ("numeral", "all"):
        report["numeral211"] = []
        for job in ("iteration", "iteration_simultaneous", "best_response"):
            cmd = [sys.executable, __file__, "--job", job, "--dtype", args.dtype, "--threads", str(args.threads)]
            res = subprocess.run(cmd, capture_output=True, text=True, check=True)
            report["numeral211"].append(json.loads(res.stdout.strip().splitlines()[-1]))
    report["load_average_at_end"] = [round(x, 2) for x in os.getloadavg()]
    print(json.dumps(report, indent=1))
    _markdown(report)


def _markdown(rep: dict) -> None:
    print(f"\nDate {rep['date']}; {rep['machine']}; {rep['threads']} thread(s); load {rep['load_average_at_start']}")
    if "leduc" in rep:
        d = rep["leduc"]
        print("\n| Leduc, CFR+ | ms per iteration (wall) | ms per iteration (CPU) |\n|---|---|---|")
        best, median = d["ours_fast_ms"], d["ours_fast_ms_median"]
        cpu = d["ours_fast_cpu_ms"]
        print(f"| ours, fast path (best of {rep['repeats']}) | {best:.3f} (median {median:.3f}) | {cpu:.3f} |")
        print(f"| ours, level-by-level engine | {d['ours_engine_ms']:.2f} | {d['ours_engine_cpu_ms']:.2f} |")
        if d["openspiel_cpp_ms"] is not None:
            print(f"| OpenSpiel C++ CFRPlusSolver | {d['openspiel_cpp_ms']:.2f} | {d['openspiel_cpp_cpu_ms']:.2f} |")
        print(
            "\n| to exploitability 1e-3 | iterations | solver s | wall s (with checks) | CPU s |\n|---|---|---|---|---|"
        )
        for m in ("cfr+", "dcfr"):
            x = d[f"to_1e-3_{m}"]
            secs = f"{x['solver_seconds']:.2f} | {x['wall_seconds']:.2f} | {x['cpu_seconds']:.2f}"
            print(f"| {m} | {x['iterations']} | {secs} |")
    if "numeral211" in rep:
        print(
            "\n| Numeral211 | dtype | wall s | CPU s | peak RSS MiB | engine build s | abstraction s | OpenSpiel ms |"
        )
        print("|---|---|---|---|---|---|---|---|")
        for x in rep["numeral211"]:
            times = f"{x['seconds']:.2f} | {x['cpu_seconds']:.2f} | {x['peak_rss_mib']:.0f}"
            setup = f"{x['engine_build_seconds']:.2f} | {x['abstraction_seconds']:.2f}"
            cal = "/".join("-" if c is None else f"{c:.1f}" for c in x["openspiel_leduc_cpu_ms_before_after"])
            print(f"| {x['job']} | {x['dtype']} | {times} | {setup} | {cal} |")


if __name__ == "__main__":
    main()
