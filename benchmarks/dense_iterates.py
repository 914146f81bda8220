"""The dense small-game CFR's iterates (regrets, average sums, current strategy after 1, 4 and n
iterations) on Kuhn, Leduc and 5-card Leduc, every method, both update orders, float64 and float32:
saved on one checkout and compared bit for bit on another, to show that a speed-up of
``pasur.poker.dense_cfr`` or of the regret kernel moved no iterate.

    PYTHONPATH=/tmp/before/src python benchmarks/dense_iterates.py save before.pt
    python benchmarks/dense_iterates.py compare before.pt
"""

from __future__ import annotations

import sys

import torch

from pasur.poker.engine import Engine
from pasur.poker.run import make_solver
from pasur.poker.solvers import CFRConfig

METHODS = ("cfr", "cfr+", "lcfr", "dcfr", "pcfr+", "pdcfr+", "sapcfr+", "hs-dcfr", "hs-pcfr+")
GAMES = (("kuhn", 60), ("leduc", 40), ("leduc5", 8))


def iterates() -> dict:
    out = {}
    for game, n in GAMES:
        for dtype in (torch.float64, torch.float32):
            engine = Engine(game, dtype=dtype, iso=False)
            for method in METHODS:
                for updates in ("alternating", "simultaneous"):
                    config = CFRConfig(method=method, updates=updates, horizon=n if method.startswith("hs") else None)
                    solver = make_solver(engine, config, backend="fast")
                    snaps = []
                    for k in (1, 3, n - 4):
                        solver.iterate(k)
                        snaps.append([solver.regret.clone(), solver.strategy_sum.clone(), solver.sigma.clone()])
                    out[(game, str(dtype), method, updates)] = snaps
    return out


def main() -> None:
    if len(sys.argv) != 3 or sys.argv[1] not in ("save", "compare"):
        print("error: usage: dense_iterates.py save|compare FILE", file=sys.stderr)
        raise SystemExit(2)
    torch.set_num_threads(1)
    now = iterates()
    if sys.argv[1] == "save":
        torch.save(now, sys.argv[2])
        print(f"saved {len(now)} configurations")
        return
    before = torch.load(sys.argv[2])
    differing = 0
    for key, snaps in now.items():
        same = all(
            x.dtype == y.dtype and torch.equal(x, y)
            for a, b in zip(snaps, before[key], strict=True)
            for x, y in zip(a, b, strict=True)
        )
        if not same:
            differing += 1
            print("differs:", key)
    print(f"compared {len(now)} configurations; differing: {differing}")
    raise SystemExit(1 if differing else 0)


if __name__ == "__main__":
    main()
