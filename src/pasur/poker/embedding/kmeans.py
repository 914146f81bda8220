"""Weighted k-means with k-means++ seeding, under L2 or L1 distance, that always returns exactly k
non-empty clusters (the baselines must hold the bucket count asked for: equal space).

L1 on scaled CDFs is the earth mover's distance between histograms on a line (the ground
distance of PaEmd and KrwEmd), so one routine serves EHS (L2 on a scalar), PaEmd and KrwEmd.
Centres are weighted means (the mean histogram, as Ganzfried and Sandholm 2014 do under EMD).
"""

from __future__ import annotations

import numpy as np
import torch

from pasur.common.errors import PasurInputError


def _dist(x: torch.Tensor, c: torch.Tensor, metric: str, chunk: int = 8192) -> torch.Tensor:
    """``[n, k]`` distances (squared for L2, plain for L1)."""
    out = []
    for i in range(0, len(x), chunk):
        d = torch.cdist(x[i : i + chunk], c, p=1.0 if metric == "l1" else 2.0)
        out.append(d if metric == "l1" else d.square())
    return torch.cat(out)


def _fill_empty(labels: torch.Tensor, d_own: torch.Tensor, k: int) -> torch.Tensor:
    """Give each empty cluster the point farthest from its centre among clusters of two or more."""
    labels = labels.clone()
    d_own = d_own.clone()
    for j in torch.nonzero(torch.bincount(labels, minlength=k) == 0).flatten().tolist():
        sizes = torch.bincount(labels, minlength=k)
        movable = sizes[labels] > 1
        i = int(torch.argmax(torch.where(movable, d_own, torch.full_like(d_own, -1.0))))
        labels[i] = j
        d_own[i] = -1.0
    return labels


def kmeans(points, weights, k: int, *, metric: str = "l2", seed: int = 0, iterations: int = 30) -> np.ndarray:
    """Labels ``0..k-1`` (every one used) of ``points`` ``[n, d]`` weighted by ``weights`` ``[n]``."""
    if metric not in ("l1", "l2"):
        raise PasurInputError(f"metric must be l1 or l2, not {metric!r}")
    x = torch.as_tensor(np.asarray(points, dtype=np.float64).reshape(len(points), -1))
    w = torch.as_tensor(np.asarray(weights, dtype=np.float64))
    n = len(x)
    if n < k:
        raise PasurInputError(f"{n} points cannot fill {k} clusters")
    g = torch.Generator().manual_seed(seed)
    # k-means++: each next centre drawn with probability weight x distance (squared under L2)
    first = int(torch.multinomial(w, 1, generator=g))
    centres = [x[first]]
    best = _dist(x, x[first : first + 1], metric)[:, 0]
    for _ in range(1, k):
        p = w * best
        i = int(torch.multinomial(p, 1, generator=g)) if p.sum() > 0 else int(torch.multinomial(w, 1, generator=g))
        centres.append(x[i])
        best = torch.minimum(best, _dist(x, x[i : i + 1], metric)[:, 0])
    c = torch.stack(centres)
    labels = None
    for _ in range(iterations):
        d = _dist(x, c, metric)
        new = d.argmin(1)
        new = _fill_empty(new, d.gather(1, new[:, None])[:, 0], k)
        if labels is not None and torch.equal(new, labels):
            break
        labels = new
        mass = torch.zeros(k, dtype=x.dtype).index_add_(0, labels, w)
        c = torch.zeros_like(c).index_add_(0, labels, x * w[:, None]) / mass[:, None]
    return labels.numpy()
