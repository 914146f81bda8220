"""A Phi made from a clustering: each class trusts the clustering's advisors by how near it lies
to their centres (a soft k-means assignment), so hands of like potential share advisors and a
hand between two buckets mixes them (issue 25: "Phi started from a potential-aware soft
clustering"; docs/embedding-cfr.md).

For round ``r`` with features ``f`` (KrwEmd's k-recall win-rate CDFs under L1, or EHS under
squared L2: the baselines' own feature spaces and metrics), a hard bucketing ``b`` into ``m``
buckets and class weights ``w``:

* each advisor's centre is its bucket's ``w``-weighted mean feature;
* ``d[i, a]`` is class ``i``'s distance to centre ``a``, ``dbar`` the ``w``-weighted mean of each
  class's distance to its nearest centre (the clustering's own scale);
* ``Phi[a, i] = softmax_a(-d[i, a] / (tau * dbar))``.

``tau`` -> 0 gives the one-hot Phi of each class's nearest centre (CFR on that abstraction,
tested); larger ``tau`` spreads a class over more advisors. With ``classes`` (one coarse class per
isomorphism class, such as the strength classes), the points are the coarse classes (each the
weighted mean of its members' features), and every isomorphism class takes its coarse class's
column: hands of equal strength trust the same advisors.
"""

from __future__ import annotations

import re

import numpy as np
import torch

from pasur.common.errors import PasurInputError
from pasur.poker.embedding import baselines

#: the clusterings a soft Phi can start from (their features and metric are defined per class)
FAMILIES = ("ehs", "krwemd")
SPEC = re.compile(r"^(?P<method>(?P<family>ehs|krwemd)-(?P<config>[1-9]))(?::soft(?P<tau>[0-9]*\.?[0-9]+))$")


def parse(spec: str) -> tuple[str, float]:
    """``"krwemd-1:soft0.3"`` -> (``"krwemd-1"``, 0.3): the baseline configuration whose buckets
    are the advisors, and the temperature."""
    m = SPEC.match(spec)
    if m is None or float(m["tau"]) <= 0:
        raise PasurInputError(
            f"a soft Phi is BASELINE:softTAU with BASELINE one of {', '.join(f + '-N' for f in FAMILIES)} and "
            f"TAU > 0 (e.g. krwemd-1:soft0.3), not {spec!r}"
        )
    return m["method"], float(m["tau"])


def features(space, method: str, r: int, shares=None) -> tuple[np.ndarray, str]:
    """Round ``r``'s features of every isomorphism class in the feature space of the baseline
    ``method`` (``ehs-N`` or ``krwemd-N``), and the metric its k-means used."""
    fam, cfg = method.split("-")
    if fam == "ehs":
        return baselines.equities(space, shares)[r][:, None], "l2"
    if fam == "krwemd":
        wts = np.asarray(baselines.KRW_WEIGHTINGS[int(cfg)][: space.R] if space.R <= 3 else np.ones(space.R))
        return baselines.krwemd_features(space, r, wts / wts[: r + 1].sum(), shares), "l1"
    raise PasurInputError(f"no soft Phi from {method!r}: one of {', '.join(FAMILIES)}")


def centres(f: np.ndarray, b: np.ndarray, w: np.ndarray, m: int) -> np.ndarray:
    """``[m, d]``: each bucket's ``w``-weighted mean feature."""
    mass = np.bincount(b, weights=w, minlength=m)
    if (mass <= 0).any():
        raise PasurInputError("a bucket holds no weight: the clustering must use every bucket")
    c = np.zeros((m, f.shape[1]))
    np.add.at(c, b, f * w[:, None])
    return c / mass[:, None]


def distances(f: np.ndarray, c: np.ndarray, metric: str) -> np.ndarray:
    """``[n, m]``: L1, or squared L2 (k-means' own objective for each metric)."""
    x, y = torch.as_tensor(f, dtype=torch.float64), torch.as_tensor(c, dtype=torch.float64)
    d = torch.cdist(x, y, p=1.0 if metric == "l1" else 2.0)
    return (d if metric == "l1" else d.square()).numpy()


def soft_assignment(f: np.ndarray, b: np.ndarray, w: np.ndarray, tau: float, metric: str) -> np.ndarray:
    """``[m, n]`` Phi of points ``f`` ``[n, d]`` (weights ``w``) around the buckets ``b``'s centres."""
    b = np.asarray(b, dtype=np.int64)
    m = int(b.max()) + 1
    d = distances(f, centres(f, b, w, m), metric)
    dbar = float((d.min(1) * w).sum() / w.sum())
    z = -d / (tau * max(dbar, 1e-12))
    z -= z.max(1, keepdims=True)
    p = np.exp(z)
    return (p / p.sum(1, keepdims=True)).T


def soft_phi(space, r: int, buckets: np.ndarray, method: str, tau: float, classes=None, shares=None) -> np.ndarray:
    """Round ``r``'s ``[m, n_r]`` Phi, soft around ``buckets`` (``[n_r]``, a bucket per isomorphism
    class, as :mod:`pasur.poker.embedding.baselines` makes them) in ``method``'s feature space;
    ``classes`` (``[n_r]`` coarse class ids) gives one column per coarse class."""
    f, metric = features(space, method, r, shares)
    w = np.asarray(space.rounds[r].weight, dtype=np.float64)
    b = np.asarray(buckets, dtype=np.int64)
    if classes is None:
        return soft_assignment(f, b, w, tau, metric)
    c = np.asarray(classes, dtype=np.int64)
    n = int(c.max()) + 1
    cw = np.bincount(c, weights=w, minlength=n)
    cf = np.zeros((n, f.shape[1]))
    np.add.at(cf, c, f * w[:, None])
    first = np.unique(c, return_index=True)[1]
    cb = b[first]
    if not np.array_equal(cb[c], b):
        raise PasurInputError("the bucketing splits a coarse class: cluster the coarse classes (classes=)")
    return soft_assignment(cf / cw[:, None], cb, cw, tau, metric)[:, c]
