"""The clustering baselines (EHS, PaEmd, KrwEmd): bucket counts, k-means itself, the EMD features,
and vanilla CFR on each abstraction lowering exploitability in the real game."""

from __future__ import annotations

import numpy as np
import pytest
import torch

from pasur.poker.embedding import baselines
from pasur.poker.embedding.classes import ClassSpace
from pasur.poker.embedding.kmeans import kmeans
from pasur.poker.engine import Engine
from pasur.poker.measures import exploitability
from pasur.poker.solvers import CFRConfig, CFRSolver

torch.set_num_threads(1)

METHODS = {
    "ehs": lambda s, b, seed: baselines.ehs(s, b, seed),
    "paemd": lambda s, b, seed: baselines.paemd(s, b, seed),
    "krwemd-1": lambda s, b, seed: baselines.krwemd(s, b, 1, seed),
    "krwemd-2": lambda s, b, seed: baselines.krwemd(s, b, 2, seed),
    "krwemd-3": lambda s, b, seed: baselines.krwemd(s, b, 3, seed),
}


@pytest.fixture(scope="module")
def r5():
    e = Engine("numeral211-r5", iso=True)
    return ClassSpace(e)


@pytest.mark.parametrize("method", sorted(METHODS))
def test_buckets_hold_exactly_the_count_asked(r5, method):
    b = METHODS[method](r5, [None, 25, 40], 0)
    assert np.array_equal(b[0], np.arange(r5.rounds[0].n))  # round 1 lossless
    for r, k in ((1, 25), (2, 40)):
        assert b[r].shape == (r5.rounds[r].n,)
        assert np.array_equal(np.unique(b[r]), np.arange(k))


def test_ehs_buckets_are_intervals_of_hand_strength(r5):
    eq = baselines.equities(r5)[2]
    b = baselines.ehs(r5, [None, 25, 40], seed=1)[2]
    lo = np.array([eq[b == j].min() for j in range(40)])
    hi = np.array([eq[b == j].max() for j in range(40)])
    order = np.argsort(lo)
    assert (lo[order][1:] > hi[order][:-1]).all()


def test_kmeans_finds_separated_clusters_and_never_leaves_one_empty():
    rng = np.random.default_rng(0)
    centres = np.array([[0.0, 0.0], [10.0, 0.0], [0.0, 10.0]])
    truth = rng.integers(0, 3, 300)
    pts = centres[truth] + rng.normal(0, 0.3, (300, 2))
    for metric in ("l1", "l2"):
        lab = kmeans(pts, np.ones(300), 3, metric=metric, seed=2)
        pairs = {(int(a), int(b)) for a, b in zip(lab, truth, strict=True)}
        assert len(pairs) == 3
    # duplicates: 5 distinct points, 5 clusters asked, heavy weights on two of them
    dup = np.repeat(np.arange(5.0), [50, 50, 1, 1, 1])[:, None]
    lab = kmeans(dup, np.ones(len(dup)), 5, seed=0)
    assert len(np.unique(lab)) == 5


def test_cdf_features_give_the_earth_movers_distance():
    from scipy.stats import wasserstein_distance

    rng = np.random.default_rng(3)
    pos = np.sort(rng.random(7))
    h = rng.random((2, 7))
    h /= h.sum(1, keepdims=True)
    f = baselines._cdf_features(h, np.diff(pos))
    want = wasserstein_distance(pos, pos, h[0], h[1])
    assert np.abs(f[0] - f[1]).sum() == pytest.approx(want, rel=1e-9)


def test_krwemd_weightings_change_the_clustering(r5):
    a = baselines.krwemd(r5, [None, 25, 40], 1, seed=0)[2]
    b = baselines.krwemd(r5, [None, 25, 40], 2, seed=0)[2]
    assert len({(int(x), int(y)) for x, y in zip(a, b, strict=True)}) > 40


@pytest.mark.parametrize("method", ["ehs", "paemd", "krwemd-3"])
def test_vanilla_cfr_on_each_abstraction_lowers_exploitability(method):
    e = Engine("numeral211-tiny", iso=True)
    space = ClassSpace(e)
    k = baselines.keying(space, METHODS[method](space, [None, 10, 20], 0), method)
    assert k.n_keys[1:] == [10, 20]
    s = CFRSolver(e, CFRConfig(method="cfr", updates="simultaneous"), keying=k)
    s.iterate(2)
    early = exploitability(e, s.average_policy())
    s.iterate(40)
    assert exploitability(e, s.average_policy()) < 0.7 * early
