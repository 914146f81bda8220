"""Seconds per iteration of the lossless solver (``pasur poker experiment lossless``), and of one
exact exploitability measurement.

The solver is Embedding CFR with an identity Phi on every suit-isomorphism class, alternating
updates, as the experiment builds it (:func:`pasur.poker.experiments.lossless._solver`). Each
method is timed over ``--iterations`` iterations after one warm-up iteration (minimum and mean,
wall and this process's CPU time; the CPU time is the figure to compare when other jobs share
the machine) and over one ``exploitability()``. ``--save FILE`` keeps the tables after the timed
iterations and ``--compare FILE`` checks them against an earlier ``--save``: run it once on the
code before an optimisation (``PYTHONPATH=OLD/src``) and once after, in one command, for the
speed ratio and the proof that the iterates did not move.

    python benchmarks/bench_lossless.py --game numeral211-r5 --methods dcfr,pdcfr+ --iterations 3
"""

from __future__ import annotations

import argparse
import os
import resource
import time

import torch

from pasur.poker.embedding.classes import ClassSpace
from pasur.poker.engine import Engine
from pasur.poker.experiments.lossless import _solver, table_values


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--game", default="numeral211-r5")
    ap.add_argument("--methods", default="dcfr")
    ap.add_argument("--iterations", type=int, default=3)
    ap.add_argument("--dtype", default="float32", choices=("float32", "float64"))
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--no-measure", action="store_true", help="skip the exploitability measurement")
    ap.add_argument("--save")
    ap.add_argument("--compare")
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    engine = Engine(a.game, iso=True, dtype=getattr(torch, a.dtype))
    space = ClassSpace(engine)
    print(f"{a.game}: {table_values(space, engine):,} strategy values, {a.dtype}, {a.threads} thread(s)")
    saved = {}
    for method in a.methods.split(","):
        solver = _solver(engine, space, method)
        solver.iterate(1)
        walls, cpus = [], []
        for _ in range(a.iterations):
            w, c = time.perf_counter(), time.process_time()
            solver.iterate(1)
            walls.append(time.perf_counter() - w)
            cpus.append(time.process_time() - c)
        line = (f"{method}: iteration wall min {min(walls):.3f} mean {sum(walls) / len(walls):.3f} s, "
                f"CPU min {min(cpus):.3f} mean {sum(cpus) / len(cpus):.3f} s")  # fmt: skip
        if not a.no_measure:
            w, c = time.perf_counter(), time.process_time()
            x = solver.exploitability()
            w, c = time.perf_counter() - w, time.process_time() - c
            line += f"; exploitability {x:.10g} chips: wall {w:.3f} s, CPU {c:.3f} s"
        peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 2**20
        print(f"{line}; peak resident so far {peak:.2f} GiB; load {os.getloadavg()[0]:.2f}", flush=True)
        saved[method] = [x.clone() for x in (*solver.regret, *solver.strategy_sum, *solver.current)]
        del solver
    if a.save:
        torch.save(saved, a.save)
    if a.compare:
        before = torch.load(a.compare)
        for method, tables in saved.items():
            diff = max(float((x - y).abs().max()) for x, y in zip(tables, before[method], strict=True))
            print(f"{method}: max |diff| against {a.compare}: {diff:g}")


if __name__ == "__main__":
    main()
