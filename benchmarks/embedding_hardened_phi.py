"""Diagnosis of Figure 5 (docs/embedding-cfr.md): Embedding CFR with a figure5 folder's HandEbdNet
Phi **hardened**, each class put whole on its first advisor (a clustering by the network), so that
the gap to the baselines splits into what the soft mixing of advisors costs and what the
network's grouping of hands costs. Not one of the paper's methods.

    python benchmarks/embedding_hardened_phi.py --out runs/f5 --iterations 128

Reads ``OUT/nets``; prints mb/g at powers of two from 32 and the CPU seconds so far.
"""

from __future__ import annotations

import argparse
import time
from pathlib import Path

import torch

from pasur.poker.embedding import handnet
from pasur.poker.embedding.classes import ClassSpace
from pasur.poker.embedding.phi import Embedding
from pasur.poker.embedding.solver import EmbeddingCFR
from pasur.poker.embedding.tensors import class_tensors
from pasur.poker.engine import Engine
from pasur.poker.experiments import figure5
from pasur.poker.games import get_game


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, required=True, help="a figure5 folder with nets/")
    ap.add_argument("--game", default="numeral211")
    ap.add_argument("--iterations", type=int, default=128)
    ap.add_argument("--threads", type=int, default=1)
    a = ap.parse_args()
    torch.set_num_threads(a.threads)
    e = Engine(a.game, iso=True, dtype=figure5.DTYPE)
    space = ClassSpace(e)
    w = [torch.as_tensor(rc.weight, dtype=e.dtype) for rc in space.rounds]
    embs = [Embedding.identity(w[0])]
    for r in range(1, space.R):
        m = figure5.budgets(space)[r]
        net, _ = handnet.load(a.out / figure5.NETS / f"round{r + 1}", game=a.game, round=r, m=m)
        phi = handnet.embedding_matrix(net, class_tensors(space, r))
        embs.append(Embedding.buckets(phi.argmax(0), w[r], m=m))
        print(f"round {r + 1}: {int(phi.argmax(0).unique().numel())} of {m} advisors used", flush=True)
    solver = EmbeddingCFR(e, embs, space=space)
    t0, blind = time.process_time(), figure5.blind(get_game(a.game))
    k = 32
    while solver.iteration < a.iterations:
        k = min(k, a.iterations)
        solver.iterate(k - solver.iteration)
        mbg = 1000 * solver.exploitability() / blind
        print(f"hardened Phi, {solver.iteration} iterations: {mbg:.1f} mb/g, {time.process_time() - t0:.0f} CPU s",
              flush=True)  # fmt: skip
        k *= 2


if __name__ == "__main__":
    main()
