"""Seconds per iteration of each Figure 5 method, and of one exact exploitability measurement.

The three kinds of solver that ``pasur poker experiment figure5`` runs, on its class space
(``--classes strength`` by default: the paper's 100 / 2,250 / 3,957 strength classes):

* ``embedding``: Embedding CFR with a dense Phi over the strength classes (225 / 396 advisors on
  Numeral211; a seeded random softmax, columns equal within a strength class, about 2.4 effective
  advisors per class like ``--phi krwemd-1:soft0.3``: the cost does not depend on the values);
* ``baseline``: a one-hot Phi, every bucket a union of strength classes (a seeded random
  bucketing with the same budgets: the cost of every EHS / PaEmd / KrwEmd configuration);
* ``reference``: CFR on the class space itself (one advisor per strength class).

Every method is timed over ``--iterations`` iterations after one warm-up iteration (the minimum
and the mean, wall and this process's CPU time) and over one ``exploitability()`` of its average
strategy. Every line ends with the load average. ``--save FILE`` keeps each method's tables and
exploitability after the timed iterations, ``--compare FILE`` checks them against an earlier
``--save`` (before/after an optimisation: the same iterates). ``--profile FILE`` writes a cProfile
of the timed iterations and the measurement of each method to ``FILE.METHOD``.

    OMP_NUM_THREADS=1 python benchmarks/bench_figure5_iteration.py --game numeral211 --iterations 2
"""

from __future__ import annotations

import argparse
import cProfile
import os
import time

import numpy as np
import torch

from pasur.poker.embedding import phi
from pasur.poker.embedding.classes import ClassSpace
from pasur.poker.embedding.phi import Embedding
from pasur.poker.embedding.solver import EmbeddingCFR
from pasur.poker.embedding.strength import coarse_phi, strength_classes
from pasur.poker.engine import Engine
from pasur.poker.experiments import figure5

METHODS = ("embedding", "baseline", "reference")


def load() -> str:
    return f"load {os.getloadavg()[0]:.2f}"


def random_buckets(coarse: np.ndarray, m: int, rng) -> np.ndarray:
    """Every strength class into one of ``m`` buckets, each bucket non-empty."""
    k = int(coarse.max()) + 1
    of = np.concatenate([np.arange(m), rng.integers(0, m, k - m)]) if k > m else np.arange(k) % m
    return rng.permutation(of)[coarse]


def random_phi(coarse: np.ndarray, weight, m: int, rng, dtype) -> torch.Tensor:
    k = int(coarse.max()) + 1
    logits = torch.as_tensor(rng.normal(size=(m, k)) * 4.0)
    phi = torch.softmax(logits, 0).to(dtype)
    return coarse_phi(phi.index_select(1, torch.as_tensor(coarse)), coarse, weight)


def embeddings(space, method: str, classes: str, dtype, seed: int) -> list[Embedding]:
    rng = np.random.default_rng(seed)
    w = [torch.as_tensor(rc.weight, dtype=dtype) for rc in space.rounds]
    coarse = strength_classes(space, "paper") if classes == "strength" else [np.arange(rc.n) for rc in space.rounds]
    b = figure5.budgets(space)
    out = [Embedding.buckets(coarse[0], w[0])]
    for r in range(1, space.R):
        if method == "reference":
            out.append(Embedding.buckets(coarse[r], w[r]))
        elif method == "baseline":
            out.append(Embedding.buckets(random_buckets(coarse[r], b[r], rng), w[r]))
        else:
            out.append(Embedding.dense(random_phi(coarse[r], space.rounds[r].weight, b[r], rng, dtype), w[r]))
    return out


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--game", default="numeral211")
    ap.add_argument("--classes", default="strength", choices=("strength", "iso"))
    ap.add_argument("--methods", default=",".join(METHODS))
    ap.add_argument("--iterations", type=int, default=2)
    ap.add_argument("--dtype", default="float32", choices=("float32", "float64"))
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--chunk", type=int, default=4096, help="EmbeddingCFR's chunk (last-round classes at once)")
    ap.add_argument(
        "--plain-dense",
        action="store_true",
        help="keep a dense Phi's repeated columns (phi.REPEATED = 0: the products per chunk of classes)",
    )
    ap.add_argument("--no-measure", action="store_true", help="skip the exploitability measurement")
    ap.add_argument("--save")
    ap.add_argument("--compare")
    ap.add_argument("--profile")
    a = ap.parse_args()
    if a.plain_dense:
        phi.REPEATED = 0.0
    torch.set_num_threads(a.threads)
    dtype = getattr(torch, a.dtype)
    t0 = time.perf_counter()
    engine = Engine(a.game, iso=True, dtype=dtype)
    space = ClassSpace(engine)
    setup = time.perf_counter() - t0
    print(f"{a.game}, {a.classes} classes, {a.dtype}, {a.threads} thread(s): setup {setup:.1f} s; {load()}")
    saved = {}
    ref = torch.load(a.compare, weights_only=True) if a.compare else None
    for method in a.methods.split(","):
        t0 = time.perf_counter()
        solver = EmbeddingCFR(engine, embeddings(space, method, a.classes, dtype, a.seed), space=space, chunk=a.chunk)
        print(f"{method}: solver built in {time.perf_counter() - t0:.1f} s, {solver.stored_values():,} stored values")
        solver.iterate()  # warm-up
        prof = cProfile.Profile() if a.profile else None
        walls, cpus = [], []
        for _ in range(a.iterations):
            w0, c0 = time.perf_counter(), time.process_time()
            if prof:
                prof.enable()
            solver.iterate()
            if prof:
                prof.disable()
            walls.append(time.perf_counter() - w0)
            cpus.append(time.process_time() - c0)
        print(f"  iteration: wall min {min(walls):.2f} mean {np.mean(walls):.2f} s, "
              f"CPU min {min(cpus):.2f} mean {np.mean(cpus):.2f} s ({a.iterations} timed); {load()}")  # fmt: skip
        x = None
        if not a.no_measure:
            w0, c0 = time.perf_counter(), time.process_time()
            if prof:
                prof.enable()
            x = solver.exploitability()
            if prof:
                prof.disable()
            print(f"  exploitability {x:.9f} chips: wall {time.perf_counter() - w0:.2f} s, "
                  f"CPU {time.process_time() - c0:.2f} s; {load()}")  # fmt: skip
        if prof:
            prof.dump_stats(f"{a.profile}.{method}")
        state = solver.state_dict() | {"exploitability": x}
        saved[method] = state
        if ref is not None and method in ref:
            old = ref[method]
            for name in ("regret", "strategy_sum", "current"):
                for r, (p, q) in enumerate(zip(old[name], state[name], strict=True)):
                    d = float((p.double() - q.double()).abs().max())
                    scale = float(p.double().abs().max()) or 1.0
                    print(f"  {name}[{r}]: max |diff| {d:.3g} (relative {d / scale:.3g})")
            if x is not None and old["exploitability"] is not None:
                print(f"  exploitability: before {old['exploitability']:.12g}, after {x:.12g}, "
                      f"relative diff {abs(x - old['exploitability']) / abs(old['exploitability']):.3g}")  # fmt: skip
        del solver
    if a.save:
        torch.save(saved, a.save)


if __name__ == "__main__":
    main()
