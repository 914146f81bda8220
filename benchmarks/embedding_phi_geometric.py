"""Issue 25 (docs/embedding-cfr.md): Embedding CFR with a Phi built from the baselines' features
instead of HandEbdNet, soft against hard at equal space (the same m advisors per round as the
baselines' buckets; the same Phi^T recovery, regret embedding and reach-weighted average).

A variant is ``FEATURE-ASSIGN``. ``FEATURE`` picks the clustering whose buckets are the advisors:

* ``ehs``: the EHS baseline's buckets (``ehs-1`` of figure5: k-means on EHS, seed 1);
* ``krw``: KrwEmd's (``krwemd-1``: weighting 1, seed 0);
* ``pa``: PaEmd's (``paemd-1``);
* ``wdl``: k-means (L2) on the rolled-out (lose, draw, win) shares, seed 1;
* ``ehsq``: EHS split at weighted quantiles (every advisor the same mass of hands);
* ``strat<T>`` (oracle): k-means (L2) on each class's average strategy after ``T`` iterations of
  vanilla CFR on the full class space (each row's probabilities times the square root of the
  class's average own reach there, so rows the class rarely reaches count little). Needs the full
  game's solution: a bound on what any Phi over m advisors can do, not a method.

``ASSIGN`` turns the buckets into Phi (each advisor's centre: its bucket's weighted mean feature):

* ``hard``: the clustering itself (one-hot Phi: CFR on that abstraction);
* ``near``: each class on its nearest centre (one-hot; the hard counterpart of the soft ones);
* ``lin``: 1-D interpolation along EHS: the advisors ordered by their buckets' mean EHS, each class
  on the two advisors whose mean EHS brackets its own, with linear (barycentric) weights (ends
  clamped): the class's strategy is piecewise linear in EHS instead of piecewise constant;
* ``bary``: 2-D interpolation over the (draw, win) share plane (the simplex): Delaunay triangles
  of the advisors' mean shares, barycentric weights (outside the hull: the nearest centre);
* ``idw<k>``: inverse squared distance weights over the ``k`` nearest centres (feature space);
* ``soft<tau>``: ``softmax(-d / (tau * dbar))`` over all centres, ``d`` the distance in feature
  space (squared L2 or L1, as the clustering), ``dbar`` the mean distance of a class to its nearest
  centre (a soft k-means assignment);
* ``rec<N>``: Phi and advisor points minimizing the weighted squared error of writing each
  class's feature as its column's mix of the advisor points (``N`` alternating rounds from the
  clustering; archetypal analysis; on ``strat`` features: the strategy-reconstruction Phi);
* ``em<tau>``: soft k-means: ``soft<tau>`` with the centres moved to the soft-weighted means, 10
  rounds (``dbar`` kept from the start);
* ``mix<a>``: ``(1 - a)`` on the own bucket, ``a`` spread equally on the buckets whose mean EHS
  is next to it (below and above).

``lossless`` (every class its own advisor: vanilla CFR, more space) and ``lossless2`` /
``lossless3`` (round 2 or 3 lossless, the other on EHS buckets) are references for what the
abstraction costs. ``X/Y``: variant X in round 2, Y in round 3 (either may be ``lossless``).
``krw2``, ``krw3``: KrwEmd's other round weightings (``krwemd-2``, ``krwemd-3``). Round 1 is
lossless everywhere (figure5).

    python benchmarks/embedding_phi_geometric.py --out runs/f5-r5 --game numeral211-r5 \\
        --iterations 128 --variants ehs-hard,ehs-lin,krw-hard,krw-soft0.3

Prints one Markdown row per variant (exact exploitability of the average strategy in the real
game, mb/g, 1 blind = the ante). ``--out`` only holds the oracle's cached strategies
(``OUT/phi-geometric-strat<T>.npz``); the clusterings are recomputed (the same as figure5's).
``--regret advisor`` runs :class:`AdvisorRegretCFR` instead of the paper's regret embedding.
"""

from __future__ import annotations

import argparse
import re
import time
from pathlib import Path

import numpy as np
import torch

from pasur.poker.embedding import baselines
from pasur.poker.embedding.classes import ClassSpace
from pasur.poker.embedding.kmeans import kmeans
from pasur.poker.embedding.phi import Embedding
from pasur.poker.embedding.soft_phi import centres, distances, soft_assignment
from pasur.poker.embedding.solver import EmbeddingCFR
from pasur.poker.embedding.tensors import rollout_shares
from pasur.poker.engine import Engine
from pasur.poker.experiments import figure5
from pasur.poker.games import get_game
from pasur.poker.tree import N_ACTIONS

VARIANT = re.compile(
    r"^(?:lossless[23]?|(?P<f>ehs|ehsq|krw[23]?|pa|wdl|strat(?P<T>\d+))-"
    r"(?P<a>hard|near|lin|bary|idw(?P<k>\d+)|soft(?P<tau>[0-9.]+)|mix(?P<mix>[0-9.]+)|rec(?P<rec>\d+)|em(?P<em>[0-9.]+)))$"
)


# ---------------------------------------------------------------- features and clusterings


def weighted_quantile_buckets(x: np.ndarray, w: np.ndarray, k: int) -> np.ndarray:
    order = np.argsort(x, kind="stable")
    cum = np.cumsum(w[order]) / w.sum()
    lab = np.minimum((cum * k - 1e-12).astype(np.int64), k - 1)
    out = np.empty(len(x), dtype=np.int64)
    out[order] = lab
    # ties in x stay together: a class takes the bucket of the first of its value
    _, first = np.unique(x[order], return_index=True)
    grp = np.searchsorted(x[order][first], x[order], side="right") - 1
    out[order] = lab[first][grp]
    # renumber to 0..k'-1
    _, out = np.unique(out, return_inverse=True)
    return out


def oracle_features(e, space, T: int, cache: Path | None) -> list[np.ndarray]:
    """Per round, ``[n_r, rows * A]``: the average strategy of vanilla CFR after ``T`` iterations,
    each row scaled by sqrt(the class's average own reach there)."""
    if cache is not None and cache.is_file():
        z = np.load(cache)
        return [z[f"round{r + 1}"] for r in range(space.R)]
    w = [torch.as_tensor(rc.weight, dtype=e.dtype) for rc in space.rounds]
    solver = EmbeddingCFR(e, [Embedding.identity(x) for x in w], space=space)
    solver.iterate(T)
    out = []
    for r, tab in enumerate(solver.average_tables()):
        n_rows = solver.n_rows[r]
        reach = solver.strategy_sum[r].view(n_rows, N_ACTIONS, -1).sum(1)  # [rows, n] sum_t reach
        reach = reach / reach.sum(0, keepdim=True).clamp(min=1e-30)
        f = tab.view(n_rows, N_ACTIONS, -1) * reach.sqrt()[:, None, :]
        keep = solver.legal[r].reshape(-1)
        out.append(f.reshape(n_rows * N_ACTIONS, -1)[keep].T.double().numpy())
    if cache is not None:
        np.savez(cache, **{f"round{r + 1}": x for r, x in enumerate(out)})
    return out


class Features:
    """Lazily computed features of every round's classes."""

    def __init__(self, e, space, out: Path, seed: int = 0) -> None:
        self.e, self.space, self.out, self.seed = e, space, out, seed
        self.m = figure5.budgets(space)
        self.shares = rollout_shares(space)
        self.eq = baselines.equities(space, self.shares)
        self._memo: dict = {}

    def get(self, feature: str) -> tuple[list[np.ndarray], list[np.ndarray], str]:
        """(features per round, buckets per round, metric)"""
        if feature in self._memo:
            return self._memo[feature]
        sp, m = self.space, self.m
        if feature == "ehs":
            b = baselines.ehs(sp, m, seed=1 + self.seed, shares=self.shares)
            f = [x[:, None] for x in self.eq]
            res = (f, b, "l2")
        elif feature == "ehsq":
            b = [None] + [weighted_quantile_buckets(self.eq[r], sp.rounds[r].weight, m[r]) for r in range(1, sp.R)]
            res = ([x[:, None] for x in self.eq], b, "l2")
        elif feature == "wdl":
            f = [s.astype(np.float64) for s in self.shares]
            b = [None] + [
                kmeans(f[r], sp.rounds[r].weight, m[r], metric="l2", seed=1 + self.seed + 101 * r)
                for r in range(1, sp.R)
            ]
            res = (f, b, "l2")
        elif feature.startswith("krw"):
            i = int(feature[3:] or 1)
            wts = np.asarray(baselines.KRW_WEIGHTINGS[i][: sp.R])
            f = [None] + [
                baselines.krwemd_features(sp, r, wts / wts[: r + 1].sum(), self.shares) for r in range(1, sp.R)
            ]
            b = baselines.krwemd(sp, m, weighting=i, seed=self.seed, shares=self.shares)
            res = (f, b, "l1")
        elif feature == "pa":
            b = baselines.paemd(sp, m, seed=1 + self.seed, shares=self.shares)
            f = self._paemd_features(b)
            res = (f, b, "l1")
        elif feature.startswith("strat"):
            T = int(feature[5:])
            f = oracle_features(self.e, sp, T, self.out / f"phi-geometric-{feature}.npz")
            b = [None] + [
                kmeans(f[r], sp.rounds[r].weight, m[r], metric="l2", seed=1 + self.seed + 101 * r)
                for r in range(1, sp.R)
            ]
            res = (f, b, "l2")
        else:
            raise SystemExit(f"unknown feature {feature!r}")
        self._memo[feature] = res
        return res

    def _paemd_features(self, b) -> list[np.ndarray]:
        """PaEmd's features given its buckets (as baselines.paemd builds them)."""
        sp, eq = self.space, self.eq
        last = sp.R - 1
        f = [None] * sp.R
        f[last] = eq[last][:, None]
        for r in range(last - 1, 0, -1):
            nxt, k = b[r + 1], self.m[r + 1]
            w = sp.rounds[r + 1].weight
            mean = np.bincount(nxt, weights=w * eq[r + 1], minlength=k) / np.bincount(nxt, weights=w, minlength=k)
            order = np.argsort(mean)
            rank = np.empty(k, dtype=np.int64)
            rank[order] = np.arange(k)
            ch = rank[nxt[sp.rounds[r].children]]
            hist = np.zeros((sp.rounds[r].n, k))
            np.add.at(hist, (np.arange(len(ch))[:, None], ch), 1.0 / ch.shape[1])
            f[r] = np.cumsum(hist, axis=1)[:, :-1] * np.diff(mean[order])[None, :]
        return f


# ---------------------------------------------------------------- Phi constructions


def onehot(b: np.ndarray, k: int) -> np.ndarray:
    p = np.zeros((k, len(b)))
    p[b, np.arange(len(b))] = 1.0
    return p


def interp_1d(x: np.ndarray, nodes: np.ndarray) -> np.ndarray:
    """``[k, n]``: each x on the two nodes bracketing it, linear weights (clamped at the ends).
    ``nodes`` need not be sorted; equal nodes share."""
    k = len(nodes)
    order = np.argsort(nodes, kind="stable")
    s = nodes[order]
    p = np.zeros((k, len(x)))
    j = np.clip(np.searchsorted(s, x, side="right") - 1, 0, k - 2)  # s[j] <= x < s[j+1] (clamped)
    lo, hi = s[j], s[j + 1]
    t = np.where(hi > lo, (x - lo) / np.where(hi > lo, hi - lo, 1.0), 0.0)
    t = np.clip(t, 0.0, 1.0)
    cols = np.arange(len(x))
    np.add.at(p, (order[j], cols), 1.0 - t)
    np.add.at(p, (order[j + 1], cols), t)
    return p


def barycentric_2d(pts: np.ndarray, nodes: np.ndarray) -> np.ndarray:
    """``[k, n]``: barycentric weights in the Delaunay triangle of ``nodes`` ``[k, 2]`` holding each
    point; points outside the hull go whole to their nearest node."""
    from scipy.spatial import Delaunay

    k = len(nodes)
    tri = Delaunay(nodes)
    s = tri.find_simplex(pts)
    p = np.zeros((k, len(pts)))
    inside = s >= 0
    T = tri.transform[s[inside]]  # [N, 3, 2]
    bc = np.einsum("nij,nj->ni", T[:, :2], pts[inside] - T[:, 2])
    bc = np.concatenate([bc, 1 - bc.sum(1, keepdims=True)], 1).clip(min=0)
    bc /= bc.sum(1, keepdims=True)
    verts = tri.simplices[s[inside]]
    cols = np.nonzero(inside)[0]
    for v in range(3):
        np.add.at(p, (verts[:, v], cols), bc[:, v])
    out = np.nonzero(~inside)[0]
    near = ((pts[out, None, :] - nodes[None]) ** 2).sum(2).argmin(1)
    p[near, out] = 1.0
    return p


def simplex_project(v: torch.Tensor) -> torch.Tensor:
    """Each row of ``v`` onto the probability simplex (Euclidean projection)."""
    u, _ = torch.sort(v, dim=1, descending=True)
    css = u.cumsum(1) - 1
    ind = torch.arange(1, v.shape[1] + 1, dtype=v.dtype)
    rho = ((u - css / ind) > 0).sum(1, keepdim=True)
    theta = css.gather(1, rho - 1) / rho
    return (v - theta).clamp(min=0)


def reconstruct(f: np.ndarray, w: np.ndarray, b: np.ndarray, k: int, outer: int, inner: int = 20) -> np.ndarray:
    """``[k, n]`` Phi (simplex columns) and advisor points S ``[k, d]`` minimizing
    ``sum_c w_c |f_c - Phi_c^T S|^2`` (archetypal-style), alternating: S by weighted least squares,
    Phi by projected gradient; started from the one-hot Phi of ``b``."""
    X = torch.as_tensor(f, dtype=torch.float64)
    W = torch.as_tensor(w / w.sum(), dtype=torch.float64)[:, None]
    P = torch.as_tensor(onehot(b, k).T)
    for _ in range(outer):
        A = P.T @ (W * P) + 1e-9 * torch.eye(k, dtype=torch.float64)
        S = torch.linalg.solve(A, P.T @ (W * X))
        L = float(torch.linalg.eigvalsh(S @ S.T)[-1]) + 1e-12
        for _ in range(inner):
            P = simplex_project(P - ((P @ S - X) @ S.T) / L)
    return P.T.numpy()


def build_phi(fs: Features, variant: str, r: int) -> np.ndarray:
    mt = VARIANT.match(variant)
    f_all, b_all, metric = fs.get(mt["f"])
    sp = fs.space
    w = sp.rounds[r].weight
    f, b, k = f_all[r], np.asarray(b_all[r]), int(np.max(b_all[r])) + 1
    a = mt["a"]
    if a == "hard":
        return onehot(b, k)
    c = centres(f, b, w, k)
    if a == "near":
        return onehot(distances(f, c, metric).argmin(1), k)
    if a == "lin":
        ceq = np.bincount(b, weights=w * fs.eq[r], minlength=k) / np.bincount(b, weights=w, minlength=k)
        return interp_1d(fs.eq[r], ceq)
    if a == "bary":
        sh = fs.shares[r]
        mass = np.bincount(b, weights=w, minlength=k)
        cs = np.stack([np.bincount(b, weights=w * sh[:, j], minlength=k) / mass for j in (1, 2)], 1)
        return barycentric_2d(sh[:, 1:3].astype(np.float64), cs)
    if a.startswith("rec"):
        return reconstruct(f, w, b, k, int(mt["rec"]))
    if a.startswith("mix"):
        al = float(mt["mix"])
        ceq = np.bincount(b, weights=w * fs.eq[r], minlength=k) / np.bincount(b, weights=w, minlength=k)
        order = np.argsort(ceq, kind="stable")
        rank = np.empty(k, dtype=np.int64)
        rank[order] = np.arange(k)
        p = (1 - al) * onehot(b, k)
        cols = np.arange(len(b))
        nb = [order[np.clip(rank[b] - 1, 0, k - 1)], order[np.clip(rank[b] + 1, 0, k - 1)]]
        for x in nb:
            np.add.at(p, (x, cols), al / 2)
        return p
    d = distances(f, c, metric)
    if a.startswith("idw"):
        kk = min(int(mt["k"]), k)
        idx = np.argsort(d, axis=1)[:, :kk]
        dd = np.take_along_axis(d, idx, 1)
        dd = dd if metric == "l2" else dd**2  # inverse squared distance either way
        exact = dd <= 1e-18
        wt = np.where(exact.any(1, keepdims=True), exact.astype(float), 1.0 / np.maximum(dd, 1e-300))
        wt /= wt.sum(1, keepdims=True)
        p = np.zeros((k, len(b)))
        np.put_along_axis(p.T, idx, wt, 1)
        return p
    tau = float(mt["tau"] or mt["em"])
    if mt["em"] is None:
        return soft_assignment(f, b, w, tau, metric)
    dbar = float((d.min(1) * w).sum() / w.sum())

    def assign(d):
        z = -d / (tau * max(dbar, 1e-12))
        z -= z.max(1, keepdims=True)
        p = np.exp(z)
        return p / p.sum(1, keepdims=True)

    p = assign(d)
    for _ in range(10):  # soft k-means: centres the soft-weighted means, 10 rounds
        pw = p * w[:, None]
        c = (pw.T @ f) / pw.sum(0)[:, None]
        p = assign(distances(f, c, metric))
    return p.T


class AdvisorRegretCFR(EmbeddingCFR):
    """Embedding CFR whose advisors take regret against their *own* strategy: the embedded
    counterfactual values ``Q(E, a) = Phi (w q)`` less ``sum_b sigma(E, b) Q(E, b)``, instead of
    the embedded regrets of the classes (which are taken against each class's mix
    ``Phi^T sigma(E)``). The two differ by a constant per (row, advisor), zero for a one-hot Phi;
    it is ``Phi (w r)`` less its mean under ``sigma(E)``, so every advisor's cumulative regret
    satisfies Blackwell's condition for its own regret matching."""

    def _advisor_regret(self, r: int, q: torch.Tensor, lo: int, m: int) -> torch.Tensor:
        q3 = q.view(m, N_ACTIONS, -1)
        current = self.current[r][lo * N_ACTIONS : (lo + m) * N_ACTIONS].view(m, N_ACTIONS, -1)
        mean = (current * q3).sum(1, keepdim=True)
        q3.sub_(mean * self.legal[r][lo : lo + m, :, None].to(q.dtype))
        return q


def main() -> None:
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument("--out", type=Path, required=True, help="a folder for the oracle's cache (a figure5 folder)")
    ap.add_argument("--game", default="numeral211-r5")
    ap.add_argument("--iterations", type=int, default=128)
    ap.add_argument("--variants", default="ehs-hard,ehs-lin,krw-hard,krw-soft0.3")
    ap.add_argument("--threads", type=int, default=1)
    ap.add_argument("--seed", type=int, default=0, help="added to every k-means seed (0: figure5's)")
    ap.add_argument(
        "--regret",
        choices=("class", "advisor"),
        default="class",
        help="class: the paper's embedded class regrets; advisor: AdvisorRegretCFR",
    )
    a = ap.parse_args()
    variants = a.variants.split(",")
    for v in variants:
        if not all(x == "lossless" or VARIANT.match(x) for x in v.split("/")) or v.count("/") > 1:
            ap.error(f"unknown variant {v!r}")
    torch.set_num_threads(a.threads)
    a.out.mkdir(parents=True, exist_ok=True)
    e = Engine(a.game, iso=True, dtype=figure5.DTYPE)
    space = ClassSpace(e)
    fs = Features(e, space, a.out, a.seed)
    w = [torch.as_tensor(rc.weight, dtype=e.dtype) for rc in space.rounds]
    blind = figure5.blind(get_game(a.game))
    head = (
        "| variant | mb/g | stored values | effective advisors per class (rounds 2, 3) | advisors used "
        "| CPU s | wall s |"
        "\n|---|---|---|---|---|---|---|"
    )
    print(f"{a.game}, iso classes, {a.iterations} iterations, {a.regret} regrets, seed {a.seed}\n\n{head}", flush=True)
    rows = []
    for v in variants:
        t0, w0 = time.process_time(), time.perf_counter()
        embs, eff, used = [Embedding.identity(w[0])], [], []
        for r in range(1, space.R):
            vr = v.split("/")[r - 1] if "/" in v else v
            if vr == "lossless" or vr == f"lossless{r + 1}":
                embs.append(Embedding.identity(w[r]))
                eff.append(1.0)
                used.append(space.rounds[r].n)
                continue
            p = torch.as_tensor(build_phi(fs, "ehs-hard" if vr.startswith("lossless") else vr, r))
            st = figure5.phi_stats(p, r)
            eff.append(st["mean_effective"])
            used.append(st["advisors_used"])
            embs.append(Embedding.dense(p, w[r]))
        solver = (EmbeddingCFR if a.regret == "class" else AdvisorRegretCFR)(e, embs, space=space)
        solver.iterate(a.iterations)
        mbg = 1000 * solver.exploitability() / blind
        cpu, wall = time.process_time() - t0, time.perf_counter() - w0
        row = (f"| {v} | {mbg:.1f} | {solver.stored_values():,} | {', '.join(f'{x:.2f}' for x in eff)} | "
               f"{', '.join(map(str, used))} | {cpu:.0f} | {wall:.0f} |")  # fmt: skip
        rows.append(row)
        print(row, flush=True)
    print(f"\n{head}\n" + "\n".join(rows))


if __name__ == "__main__":
    main()
