"""The clustering baselines of Figure 5 (appendix E), at the same space as Embedding CFR: round 1
lossless (its suit-isomorphism classes), rounds 2 and 3 clustered into exactly ``k`` buckets each.

All three work on the classes of :mod:`pasur.poker.embedding.classes` weighted by the actual hands
they stand for, and use :func:`pasur.poker.embedding.kmeans.kmeans` (k-means++, several seeds):

* **EHS**: expected hand strength (win + draw / 2 against a random hand, rolled out to the last
  round), k-means on the scalar;
* **PaEmd** (Ganzfried and Sandholm 2014): the last round by EHS as above; an earlier round by
  its histogram over the next round's clusters, under the earth mover's distance whose ground
  distance is the gap between those clusters' mean EHS (a line, so EMD = L1 between CDFs);
* **KrwEmd** (Fu et al. 2025, our reading): for the hand and each predecessor (round ``j <= s``)
  the distribution of its final win rate over the rollouts (a histogram of ``BINS`` bins; in the
  last round the win rate itself), EMD per round, summed with importance weights per round.

A bucketing is a list of ``[n_r]`` bucket ids per round; :func:`keying` turns it into the core's
:class:`pasur.poker.policy.Keying` (solved with vanilla CFR on the abstraction, full width).

``classes``: a coarser class space to cluster instead of the isomorphism classes, such as the
strength classes (:mod:`pasur.poker.embedding.strength`), one ``[n_r]`` class id per isomorphism
class and round. Each coarse class clusters as one point, the weighted mean of its isomorphism
classes' features weighted by the hands they stand for (EHS and PaEmd features are equal within a
strength class of the paper's reading; KrwEmd's predecessor rows differ), so every bucket is a
union of coarse classes; round 1 is then the coarse classes themselves.
"""

from __future__ import annotations

import numpy as np
import torch

from pasur.common.errors import PasurInputError
from pasur.poker.embedding.kmeans import kmeans
from pasur.poker.embedding.tensors import rollout_shares
from pasur.poker.policy import Keying

#: KrwEmd's round weights (appendix E): late rounds first, early rounds first, all equal
KRW_WEIGHTINGS = {1: (1.0, 2.0, 4.0), 2: (4.0, 2.0, 1.0), 3: (1.0, 1.0, 1.0)}
BINS = 32


def equities(space, shares=None) -> list[np.ndarray]:
    """EHS of every class of every round: win + draw / 2, rolled out."""
    shares = shares or rollout_shares(space)
    return [s[:, 2] + 0.5 * s[:, 1] for s in shares]


def _cdf_features(hist: np.ndarray, gaps: np.ndarray) -> np.ndarray:
    """L1 between these is the EMD between the histograms (bins on a line, ``gaps`` apart)."""
    return np.cumsum(hist, axis=1)[:, :-1] * gaps[None, :]


def _check(space, budgets, classes=None) -> None:
    if len(budgets) != space.R or budgets[0] is not None:
        raise PasurInputError(f"one bucket count per round after the first ({space.R - 1}) needed")
    if classes is not None and [len(c) for c in classes] != space.sizes:
        raise PasurInputError(f"a coarse class per isomorphism class needed ({space.sizes})")


def _first(space, classes) -> np.ndarray:
    """Round 1, lossless: its isomorphism classes, or the coarse classes."""
    return np.arange(space.rounds[0].n) if classes is None else np.asarray(classes[0])


def _cluster(space, r: int, feats: np.ndarray, k: int, metric: str, seed: int, classes) -> np.ndarray:
    """k-means of round ``r``'s classes (or of their coarse classes, each the weighted mean of its
    members' features); a bucket per isomorphism class."""
    w = space.rounds[r].weight
    if classes is None:
        return kmeans(feats, w, k, metric=metric, seed=seed)
    c = np.asarray(classes[r])
    n = int(c.max()) + 1
    cw = np.bincount(c, weights=w, minlength=n)
    f = np.zeros((n, feats.shape[1]))
    np.add.at(f, c, feats * w[:, None])
    return kmeans(f / cw[:, None], cw, k, metric=metric, seed=seed)[c]


def ehs(space, budgets, seed: int = 0, shares=None, classes=None) -> list[np.ndarray]:
    _check(space, budgets, classes)
    eq = equities(space, shares)
    out = [_first(space, classes)]
    for r in range(1, space.R):
        out.append(_cluster(space, r, eq[r][:, None], budgets[r], "l2", seed + 101 * r, classes))
    return out


def paemd(space, budgets, seed: int = 0, shares=None, classes=None) -> list[np.ndarray]:
    _check(space, budgets, classes)
    eq = equities(space, shares)
    last = space.R - 1
    out = [None] * space.R
    out[0] = _first(space, classes)
    out[last] = _cluster(space, last, eq[last][:, None], budgets[last], "l2", seed + 101 * last, classes)
    for r in range(last - 1, 0, -1):
        nxt, k = out[r + 1], budgets[r + 1]
        w = space.rounds[r + 1].weight
        mean = np.bincount(nxt, weights=w * eq[r + 1], minlength=k) / np.bincount(nxt, weights=w, minlength=k)
        order = np.argsort(mean)
        rank = np.empty(k, dtype=np.int64)
        rank[order] = np.arange(k)
        ch = rank[nxt[space.rounds[r].children]]  # [n_r, deals]
        hist = np.zeros((space.rounds[r].n, k))
        np.add.at(hist, (np.arange(len(ch))[:, None], ch), 1.0 / ch.shape[1])
        feats = _cdf_features(hist, np.diff(mean[order]))
        out[r] = _cluster(space, r, feats, budgets[r], "l1", seed + 101 * r, classes)
    return out


def winrate_histograms(space, shares=None, bins: int = BINS) -> list[np.ndarray]:
    """Per round, ``[n_r, bins]``: the distribution of the final win rate over the rollouts."""
    eq = equities(space, shares)[-1]
    hist = [None] * space.R
    last = np.zeros((len(eq), bins))
    last[np.arange(len(eq)), np.minimum((eq * bins).astype(np.int64), bins - 1)] = 1.0
    hist[-1] = last
    for r in range(space.R - 2, -1, -1):
        hist[r] = hist[r + 1][space.rounds[r].children].mean(1)
    return hist


def krwemd_features(space, r: int, weights, shares=None, bins: int = BINS) -> np.ndarray:
    """The k-recall win-rate features of round ``r``'s classes, scaled so that L1 is the weighted
    sum over rounds ``j <= r`` of the EMD between win-rate distributions."""
    hist = winrate_histograms(space, shares, bins)
    eq = equities(space, shares)[-1]
    cls = np.arange(space.rounds[r].n)
    parts = []
    for j in range(r, -1, -1):
        if j == space.R - 1:
            parts.append(weights[j] * eq[cls][:, None])  # a point mass: EMD is the gap itself
        else:
            parts.append(weights[j] * _cdf_features(hist[j][cls], np.full(bins - 1, 1.0 / bins)))
        if j:
            cls = space.rounds[j].parent[cls]
    return np.concatenate(parts, axis=1)


def krwemd(space, budgets, weighting: int = 3, seed: int = 0, shares=None, classes=None) -> list[np.ndarray]:
    _check(space, budgets, classes)
    wts = np.asarray(KRW_WEIGHTINGS[weighting][: space.R] if space.R <= 3 else np.ones(space.R))
    out = [_first(space, classes)]
    for r in range(1, space.R):
        f = krwemd_features(space, r, wts / wts[: r + 1].sum(), shares)
        out.append(_cluster(space, r, f, budgets[r], "l1", seed + 101 * r, classes))
    return out


def keying(space, buckets, name: str) -> Keying:
    """The core's keying of a bucketing: every (listed board, position) gets its class's bucket."""
    e = space.engine
    keys = [
        torch.as_tensor(np.asarray(b)[rc.of_position], dtype=torch.int64, device=e.device)
        for b, rc in zip(buckets, space.rounds, strict=True)
    ]
    return Keying(keys, [int(np.max(b)) + 1 for b in buckets], lossless=False, name=name)
