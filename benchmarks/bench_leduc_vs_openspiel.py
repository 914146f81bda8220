"""Leduc CFR+ per iteration: our dense small-game CFR against OpenSpiel's C++ ``CFRPlusSolver``,
alternating in one process, one thread each, round after round; the ratio (OpenSpiel's CPU time per
iteration over ours) and its range over the rounds. With ``--old-src``, a third solver alternates
with them: the same timing of an older checkout's dense CFR in a child process (interleaved, one
thread). With ``--lossless GAME``, the lossless solver's CPU seconds per iteration beside them.
Each part carries its roofline: bytes moved per iteration (from the tensors' dtypes and sizes:
:mod:`roofline`), and the achieved bandwidth as a share of the machine's, measured here.

On a machine shared with other jobs the CPU time of a one-thread job grows with the load too,
but both solvers share the load of each round alike, so the ratio per round is the robust figure.

    python benchmarks/bench_leduc_vs_openspiel.py --out results/poker-speed [--old-src /tmp/old/src]
        [--rounds 10] [--iterations 300] [--lossless numeral211] [--device cpu]
"""

from __future__ import annotations

import argparse
import json
import os
import platform
import subprocess
import sys
import time
from datetime import UTC, datetime
from pathlib import Path

import torch

sys.path.insert(0, str(Path(__file__).resolve().parent))
from roofline import dense_cfr_traffic, lossless_traffic, measured_bandwidth

CHILD = """
import json, sys, time, torch
torch.set_num_threads(1)
from pasur.poker.engine import Engine
from pasur.poker.run import make_solver
from pasur.poker.solvers import CFRConfig
solver = make_solver(Engine("leduc"), CFRConfig(method="cfr+"))
solver.iterate(20)
print("ready", flush=True)
for line in sys.stdin:
    n = int(line)
    w, c = time.perf_counter(), time.process_time()
    solver.iterate(n)
    c, w = time.process_time() - c, time.perf_counter() - w
    print(json.dumps({"cpu_ms": 1e3 * c / n, "wall_ms": 1e3 * w / n}), flush=True)
"""


def fail(message: str) -> None:
    """Bad input: one line on stderr and exit 2, before any work."""
    print(message, file=sys.stderr)
    raise SystemExit(2)


def synchronize(device: str) -> None:
    if device.startswith("cuda"):
        torch.cuda.synchronize()


def timed(run, n: int, device: str) -> dict:
    """CPU and wall milliseconds per call of ``run`` over ``n`` calls."""
    synchronize(device)
    w, c = time.perf_counter(), time.process_time()
    for _ in range(n):
        run()
    synchronize(device)
    return {"cpu_ms": 1e3 * (time.process_time() - c) / n, "wall_ms": 1e3 * (time.perf_counter() - w) / n}


def old_child(src: str) -> subprocess.Popen:
    """A child process running an older checkout's dense CFR (``src`` first on its path)."""
    env = {**os.environ, "PYTHONPATH": src, "OMP_NUM_THREADS": "1", "MKL_NUM_THREADS": "1"}
    child = subprocess.Popen(
        [sys.executable, "-c", CHILD], stdin=subprocess.PIPE, stdout=subprocess.PIPE, text=True, env=env
    )
    if child.stdout.readline().strip() != "ready":
        fail("error: the old checkout's child did not start")
    return child


def spread(values: list[float]) -> dict:
    s = sorted(values)
    return {"min": s[0], "median": s[len(s) // 2], "max": s[-1]}


def one_round(args, solver, os_solver, child) -> dict:
    """One round: ``args.slices`` slices, each running ours, OpenSpiel's and the old code's (when
    given) in turn on their share of the round's iterations, so that all see the same load."""
    n, m = args.iterations // args.slices, args.os_iterations // args.slices
    totals: dict = {}

    def add(name: str, t: dict, count: int) -> None:
        acc = totals.setdefault(name, {"cpu_ms": 0.0, "wall_ms": 0.0, "iterations": 0})
        acc["cpu_ms"] += t["cpu_ms"] * count
        acc["wall_ms"] += t["wall_ms"] * count
        acc["iterations"] += count

    for _ in range(args.slices):
        add("ours", timed(lambda: solver.iterate(1), n, args.device), n)
        if os_solver is not None:
            add("openspiel", timed(os_solver.evaluate_and_update_policy, m, "cpu"), m)
        if child is not None:
            child.stdin.write(f"{n}\n")
            child.stdin.flush()
            add("old", json.loads(child.stdout.readline()), n)
    row = {}
    for name, acc in totals.items():
        k = acc.pop("iterations")
        row[name] = {"cpu_ms": acc["cpu_ms"] / k, "wall_ms": acc["wall_ms"] / k, "iterations": k}
    return row


def alternate(args, solver, os_solver, child) -> list[dict]:
    """``args.rounds`` rounds (:func:`one_round`), after ``args.warmup`` rounds not kept."""
    rounds = []
    for i in range(args.warmup + args.rounds):
        row = one_round(args, solver, os_solver, child)
        if os_solver is not None:
            row["ratio_cpu"] = row["openspiel"]["cpu_ms"] / row["ours"]["cpu_ms"]
            row["ratio_wall"] = row["openspiel"]["wall_ms"] / row["ours"]["wall_ms"]
        if child is not None:
            row["ours_speedup_over_old_cpu"] = row["old"]["cpu_ms"] / row["ours"]["cpu_ms"]
        row["load"] = os.getloadavg()[0]
        if i >= args.warmup:
            rounds.append(row)
            print(json.dumps(row), flush=True)
    return rounds


def openspiel_solver():
    """OpenSpiel's C++ CFR+ on its ``leduc_poker``, one iteration done; None without OpenSpiel."""
    try:
        import pyspiel
    except ImportError:
        print("OpenSpiel is not installed: ours alone", file=sys.stderr)
        return None
    solver = pyspiel.CFRPlusSolver(pyspiel.load_game("leduc_poker"))
    solver.evaluate_and_update_policy()
    return solver


def leduc(args, bandwidth: dict) -> dict:
    from pasur.poker.engine import Engine
    from pasur.poker.run import make_solver
    from pasur.poker.solvers import CFRConfig

    solver = make_solver(Engine("leduc", device=args.device), CFRConfig(method="cfr+"))
    solver.iterate(20)
    os_solver = None if args.no_openspiel else openspiel_solver()
    child = old_child(args.old_src) if args.old_src else None
    try:
        rounds = alternate(args, solver, os_solver, child)
    finally:
        if child is not None:
            child.stdin.close()
            child.wait(timeout=30)
    out = {"rounds": rounds, "ours_cpu_ms": spread([r["ours"]["cpu_ms"] for r in rounds])}
    out["ours_wall_ms"] = spread([r["ours"]["wall_ms"] for r in rounds])
    for key in ("ratio_cpu", "ratio_wall", "ours_speedup_over_old_cpu"):
        if key in rounds[0]:
            out[key] = spread([r[key] for r in rounds])
    if os_solver is not None:
        out["openspiel_cpu_ms"] = spread([r["openspiel"]["cpu_ms"] for r in rounds])
    if child is not None:
        out["old_cpu_ms"] = spread([r["old"]["cpu_ms"] for r in rounds])
    traffic = dense_cfr_traffic(solver)
    best_s = 1e-3 * (out["ours_wall_ms"]["min"] if args.device != "cpu" else out["ours_cpu_ms"]["min"])
    out["roofline"] = roofline_row(traffic, best_s, bandwidth)
    return out


def roofline_row(traffic: dict, seconds: float, bandwidth: dict) -> dict:
    """Bytes per iteration and per unit, the time the bandwidth allows, the share achieved."""
    row = dict(traffic)
    row["seconds_per_iteration"] = seconds
    for kind in ("executed", "compulsory"):
        if traffic[f"{kind}_bytes"] is None:
            continue
        gbs = traffic[f"{kind}_bytes"] / seconds / 1e9
        row[f"{kind}_GBps"] = gbs
        for roof, value in bandwidth.items():
            if roof.endswith("_GBps"):
                row[f"{kind}_share_of_{roof[:-5]}"] = gbs / value
    return row


def lossless(args, bandwidth: dict) -> dict:
    """CPU seconds per iteration of the lossless solver on ``args.lossless`` (alternating DCFR,
    float32, every suit-isomorphism class, as ``pasur poker experiment lossless`` runs it)."""
    from pasur.poker.embedding.classes import ClassSpace
    from pasur.poker.engine import Engine
    from pasur.poker.experiments.lossless import _solver

    engine = Engine(args.lossless, iso=True, device=args.device, dtype=torch.float32)
    solver = _solver(engine, ClassSpace(engine), "dcfr")
    solver.iterate(1)
    times = [timed(lambda: solver.iterate(1), 1, args.device) for _ in range(args.lossless_iterations)]
    cpu = [1e-3 * t["cpu_ms"] for t in times]
    wall = [1e-3 * t["wall_ms"] for t in times]
    out = {"game": args.lossless, "method": "dcfr", "dtype": "float32", "cpu_s": spread(cpu), "wall_s": spread(wall)}
    out["roofline"] = roofline_row(lossless_traffic(solver), min(cpu if args.device == "cpu" else wall), bandwidth)
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", required=True, help="folder for leduc-vs-openspiel.json")
    ap.add_argument("--rounds", type=int, default=10)
    ap.add_argument("--warmup", type=int, default=1, help="rounds run first and not kept")
    ap.add_argument("--slices", type=int, default=10, help="turns per round (each solver's share in each)")
    ap.add_argument("--iterations", type=int, default=300, help="our iterations per round")
    ap.add_argument("--os-iterations", type=int, default=20, help="OpenSpiel's iterations per round")
    ap.add_argument("--old-src", help="an older checkout's src folder, timed in a child process")
    ap.add_argument("--lossless", help="also time the lossless solver on this game (numeral211, numeral211-r5)")
    ap.add_argument("--lossless-iterations", type=int, default=3)
    ap.add_argument("--device", default="cpu")
    ap.add_argument("--no-openspiel", action="store_true")
    a = ap.parse_args()
    if a.warmup < 0 or min(a.rounds, a.slices, a.lossless_iterations) < 1:
        fail("error: --rounds, --slices and --lossless-iterations must be at least 1, --warmup at least 0")
    if a.iterations < a.slices or a.os_iterations < a.slices:
        fail("error: --iterations and --os-iterations must be at least --slices (each slice runs some)")
    if a.old_src and not (Path(a.old_src) / "pasur").is_dir():
        fail(f"error: --old-src {a.old_src} holds no pasur package")
    if a.device.startswith("cuda") and not torch.cuda.is_available():
        fail("error: --device cuda but no GPU is visible")
    torch.set_num_threads(1)
    out_dir = Path(a.out)
    out_dir.mkdir(parents=True, exist_ok=True)
    bandwidth = measured_bandwidth(a.device)
    result = {
        "command": " ".join([Path(sys.executable).name, *sys.argv]),
        "date": datetime.now(UTC).isoformat(timespec="seconds"),
        "machine": {"processor": platform.processor() or platform.machine(), "cpus": os.cpu_count()},
        "device": torch.cuda.get_device_name() if a.device.startswith("cuda") else "cpu",
        "torch": torch.__version__,
        "threads": torch.get_num_threads(),
        "bandwidth": bandwidth,
        "leduc_cfr+": leduc(a, bandwidth),
    }
    if a.lossless:
        result["lossless"] = lossless(a, bandwidth)
    (out_dir / "leduc-vs-openspiel.json").write_text(json.dumps(result, indent=1) + "\n")
    summary = {k: result["leduc_cfr+"].get(k) for k in ("ours_cpu_ms", "openspiel_cpu_ms", "ratio_cpu", "old_cpu_ms")}
    print(json.dumps(summary, indent=1))


if __name__ == "__main__":
    main()
