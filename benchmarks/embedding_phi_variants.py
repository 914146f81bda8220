"""Diagnosis of Figure 5 (docs/embedding-cfr.md, issue 25): Embedding CFR with a figure5 folder's
HandEbdNet Phi changed column by column, inside the paper's framework (the same m advisors per
round, the same Phi^T recovery and regret embedding; only the trust of each class changes):

* ``soft``: Phi as figure5 builds it (the network's softmax);
* ``T<x>``: temperature-sharpened, softmax(logits / x), i.e. Phi ** (1 / x) with columns
  renormalized (``T1`` is ``soft``; ``T0`` would be ``hard``);
* ``top<k>``: each class keeps its k largest advisor weights, renormalized;
* ``hard``: each class whole on its most trusted advisor (``top1``; a clustering by the network);
* ``T<x>+top<k>``: both, sharpening first;
* ``proto``: each class on the advisor whose strength tensor (the network's head: advisor a's
  predicted (lose, draw, win) rows) is nearest to the class's own, by the training loss's KL
  divergence: a clustering with the network's advisors as centres (the k-means assignment step);
  ``proto<tau>`` is the soft version, ``softmax(-KL / tau)`` over the advisors (not the paper's Phi,
  but a Phi over the same advisors, as the docs' hand-made soft EHS Phi).

With ``--classes strength`` the change is applied to each strength class's column (the weighted
mean of its isomorphism classes' columns, ``strength.coarse_phi``), as figure5 builds it; round 1
is CFR on its strength classes (iso: lossless). The networks are read from ``OUT/nets`` (made by
``pasur poker experiment figure5 --game GAME --out OUT``); nothing is written.

    python benchmarks/embedding_phi_variants.py --out runs/f5-r5 --game numeral211-r5 \\
        --iterations 128 --classes iso --variants soft,T0.5,top2,hard,proto

``--regret advisor``: each advisor takes regret against its own strategy (the embedded class regrets
less their mean under sigma(E); ``embedding_phi_geometric.AdvisorRegretCFR``), not against each
class's mix; the same as the paper's for a one-hot Phi.

Prints one Markdown row per variant as it finishes (exact exploitability of the average strategy
in the real game, mb/g, 1 blind = the ante), then the table.
"""

from __future__ import annotations

import argparse
import re
import time
from pathlib import Path

import numpy as np
import torch

from pasur.poker.embedding import handnet
from pasur.poker.embedding.classes import ClassSpace
from pasur.poker.embedding.phi import Embedding
from pasur.poker.embedding.solver import EmbeddingCFR
from pasur.poker.embedding.strength import coarse_phi
from pasur.poker.embedding.tensors import class_tensors, rollout_shares, strength_tensors
from pasur.poker.engine import Engine
from pasur.poker.experiments import figure5
from pasur.poker.games import get_game

VARIANT = re.compile(r"^(?:soft|hard|proto(?P<tau>[0-9.]+)?|T(?P<t>[0-9.]+)(?:\+top(?P<k2>\d+))?|top(?P<k>\d+))$")


def advisor_kl(net, y: np.ndarray) -> torch.Tensor:
    """``[m, n]``: KL(class's strength tensor || advisor a's prediction), summed over the rows."""
    with torch.no_grad():
        m = net.head.in_features
        logp = torch.log_softmax(net.head(torch.eye(m)).view(m, -1, 3).double(), dim=2)  # [m, s, 3]
    y = torch.as_tensor(y, dtype=torch.float64)  # [n, s, 3]
    ent = (y * y.clamp(min=1e-300).log()).sum((1, 2))  # [n]
    return ent[None, :] - torch.einsum("nsc,msc->mn", y, logp)


def transform(phi: torch.Tensor, variant: str, kl: torch.Tensor | None = None) -> torch.Tensor:
    """``phi`` ``[m, n]`` (float64, columns summing to 1) changed by ``variant`` (module doc);
    ``kl`` ``[m, n]`` from :func:`advisor_kl` for ``proto``."""
    mt = VARIANT.match(variant)
    if mt is None:
        raise SystemExit(f"unknown variant {variant!r}: soft, hard, T<x>, top<k>, T<x>+top<k>, proto[<tau>]")
    if variant == "soft":
        return phi
    if variant.startswith("proto"):
        if mt["tau"] is None:
            return torch.zeros_like(phi).scatter_(0, kl.argmin(0, keepdim=True), 1.0)
        return torch.softmax(-kl / float(mt["tau"]), dim=0)
    if variant == "hard":
        return torch.zeros_like(phi).scatter_(0, phi.argmax(0, keepdim=True), 1.0)
    if mt["t"] is not None:
        t = float(mt["t"])
        phi = torch.softmax(phi.clamp(min=1e-300).log() / t, dim=0)  # softmax(logits / T): the same
    k = mt["k"] or mt["k2"]
    if k is not None:
        k = min(int(k), phi.shape[0])
        top = phi.topk(k, dim=0)
        phi = torch.zeros_like(phi).scatter_(0, top.indices, top.values)
        phi = phi / phi.sum(0, keepdim=True)
    return phi


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, required=True, help="a figure5 folder with nets/")
    ap.add_argument("--game", default="numeral211-r5")
    ap.add_argument("--iterations", type=int, default=128)
    ap.add_argument("--classes", choices=figure5.CLASS_SPACES, default="iso")
    ap.add_argument("--variants", default="soft,T0.5,T0.25,T0.1,top3,top2,hard,proto0.03,proto0.01,proto0.003,proto")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument(
        "--regret",
        choices=("class", "advisor"),
        default="class",
        help="advisor: each advisor's regret against its own strategy (embedding_phi_geometric.AdvisorRegretCFR)",
    )
    a = ap.parse_args()
    variants = a.variants.split(",")
    for v in variants:
        if VARIANT.match(v) is None:
            ap.error(f"unknown variant {v!r}")
    torch.set_num_threads(a.threads)
    e = Engine(a.game, iso=True, dtype=figure5.DTYPE)
    space = ClassSpace(e)
    coarse = figure5.coarse_classes(space, a.classes)
    w = [torch.as_tensor(rc.weight, dtype=e.dtype) for rc in space.rounds]
    first = [Embedding.identity(w[0]) if coarse is None else Embedding.buckets(coarse[0], w[0])]
    phis, kls = [], []
    shares = rollout_shares(space) if any(v.startswith("proto") for v in variants) else None
    for r in range(1, space.R):
        m = figure5.budgets(space)[r]
        net, _ = handnet.load(a.out / figure5.NETS / f"round{r + 1}", game=a.game, round=r, m=m)
        phi = handnet.embedding_matrix(net, class_tensors(space, r))
        if coarse is not None:
            phi = coarse_phi(phi, coarse[r], space.rounds[r].weight)
        phis.append(phi)
        if shares is not None:  # on strength classes: each class's weighted mean strength tensor
            y = strength_tensors(space, r, shares)
            if coarse is not None:
                wy = y * space.rounds[r].weight[:, None, None]
                k = coarse[r].max() + 1
                sy = np.zeros((k, *y.shape[1:]))
                np.add.at(sy, coarse[r], wy)
                sw = np.bincount(coarse[r], weights=space.rounds[r].weight, minlength=k)
                y = (sy / sw[:, None, None])[coarse[r]]
            kls.append(advisor_kl(net, y))
    # one column per class of the run (a strength class's columns are equal): its first member
    reps = [torch.arange(p.shape[1]) if coarse is None else torch.as_tensor(np.unique(coarse[r], return_index=True)[1])
            for r, p in enumerate(phis, start=1)]  # fmt: skip
    blind = figure5.blind(get_game(a.game))
    rows = []
    print(f"{a.game}, {a.classes} classes, {a.iterations} iterations, {a.regret} regrets", flush=True)
    head = "| variant | mb/g | stored values | effective advisors per class (rounds 2, 3) | advisors used | CPU s |"
    print(head + "\n|---|---|---|---|---|---|", flush=True)
    for v in variants:
        t0 = time.process_time()
        embs, eff, used = list(first), [], []
        for r, phi in enumerate(phis, start=1):
            p = transform(phi, v, kls[r - 1] if kls else None)
            st = figure5.phi_stats(p[:, reps[r - 1]], r)
            eff.append(st["mean_effective"])
            used.append(st["advisors_used"])
            embs.append(Embedding.dense(p, w[r]))
        if a.regret == "advisor":
            import sys

            sys.path.insert(0, str(Path(__file__).resolve().parent))
            from embedding_phi_geometric import AdvisorRegretCFR

            solver = AdvisorRegretCFR(e, embs, space=space)
        else:
            solver = EmbeddingCFR(e, embs, space=space)
        solver.iterate(a.iterations)
        mbg = 1000 * solver.exploitability() / blind
        row = (f"| {v} | {mbg:.1f} | {solver.stored_values():,} | {', '.join(f'{x:.2f}' for x in eff)} | "
               f"{', '.join(map(str, used))} | {time.process_time() - t0:.0f} |")  # fmt: skip
        rows.append(row)
        print(row, flush=True)
    print(f"\n{a.game}, {a.classes} classes, {a.iterations} iterations\n\n{head}\n|---|---|---|---|---|---|")
    print("\n".join(rows))


if __name__ == "__main__":
    main()
