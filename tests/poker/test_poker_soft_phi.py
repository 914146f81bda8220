"""The soft Phi around a clustering (:mod:`pasur.poker.embedding.soft_phi`): its one-hot limit is
CFR on the nearest-centre abstraction, iterate by iterate; temperature spreads it; over coarse
classes every member of a class gets the same column."""

from __future__ import annotations

import itertools

import numpy as np
import pytest
import torch

from pasur.common.errors import PasurInputError
from pasur.poker.embedding import baselines, soft_phi
from pasur.poker.embedding.classes import ClassSpace
from pasur.poker.embedding.phi import Embedding
from pasur.poker.embedding.solver import EmbeddingCFR
from pasur.poker.embedding.strength import strength_classes
from pasur.poker.engine import Engine
from pasur.poker.experiments.figure5 import budgets

torch.set_num_threads(1)


@pytest.fixture(scope="module")
def tiny():
    engine = Engine("numeral211-tiny", iso=True, dtype=torch.float64)
    space = ClassSpace(engine)
    return engine, space, baselines.krwemd(space, budgets(space), weighting=1)


def test_the_one_hot_limit_is_cfr_on_the_nearest_centre_abstraction(tiny):
    engine, space, buckets = tiny
    w = [torch.as_tensor(rc.weight, dtype=torch.float64) for rc in space.rounds]
    soft, hard = [Embedding.identity(w[0])], [Embedding.identity(w[0])]
    for r in range(1, space.R):
        phi = soft_phi.soft_phi(space, r, buckets[r], "krwemd-1", 1e-9)
        assert set(np.unique(phi)) == {0.0, 1.0}  # one-hot at this temperature
        f, metric = soft_phi.features(space, "krwemd-1", r)
        c = soft_phi.centres(f, buckets[r], space.rounds[r].weight, int(buckets[r].max()) + 1)
        near = soft_phi.distances(f, c, metric).argmin(1)
        assert (phi.argmax(0) == near).all()
        soft.append(Embedding.dense(torch.as_tensor(phi), w[r]))
        hard.append(Embedding.buckets(torch.as_tensor(near), w[r], phi.shape[0]))
    a, b = EmbeddingCFR(engine, soft, space=space), EmbeddingCFR(engine, hard, space=space)
    for _ in range(6):
        a.iterate(1)
        b.iterate(1)
        for x, y in zip(a.average_tables(), b.average_tables(), strict=True):
            torch.testing.assert_close(x, y, rtol=0, atol=1e-12)
    assert a.exploitability() == pytest.approx(b.exploitability(), abs=1e-12)


def test_temperature_spreads_every_column(tiny):
    _, space, buckets = tiny
    r = space.R - 1
    ent = []
    for tau in (0.1, 0.3, 1.0, 3.0):
        phi = soft_phi.soft_phi(space, r, buckets[r], "krwemd-1", tau)
        assert phi.shape == (int(buckets[r].max()) + 1, space.rounds[r].n)
        assert (phi > 0).all() and np.allclose(phi.sum(0), 1.0)
        ent.append(-(phi * np.log(phi)).sum(0))
    for lo, hi in itertools.pairwise(ent):
        assert (hi >= lo - 1e-12).all() and (hi > lo).any()


def test_coarse_classes_share_one_column(tiny):
    _, space, _ = tiny
    coarse = strength_classes(space, "paper")
    buckets = baselines.ehs(space, budgets(space), seed=1, classes=coarse)
    r = 2
    phi = soft_phi.soft_phi(space, r, buckets[r], "ehs-1", 0.3, classes=coarse[r])
    first = np.unique(coarse[r], return_index=True)[1]
    assert np.array_equal(phi, phi[:, first][:, coarse[r]])
    assert len(np.unique(coarse[r])) < space.rounds[r].n  # the test merges something
    # a bucketing that puts one member of a coarse class in another bucket than its class-mates
    # splits that class: refused
    sizes = np.bincount(coarse[r])
    member = int(np.flatnonzero(sizes[coarse[r]] > 1)[0])
    split = buckets[r].copy()
    split[member] = (split[member] + 1) % (int(buckets[r].max()) + 1)
    assert len(np.unique(split[coarse[r] == coarse[r][member]])) > 1  # the class is split
    with pytest.raises(PasurInputError, match="splits"):
        soft_phi.soft_phi(space, r, split, "ehs-1", 0.3, classes=coarse[r])


@pytest.mark.parametrize("spec", ["krwemd-1:soft0", "paemd-1:soft0.3", "ehs:soft1", "krwemd-1", "krwemd-1:hard"])
def test_malformed_specs_are_refused(spec):
    with pytest.raises(PasurInputError):
        soft_phi.parse(spec)


def test_a_spec_names_its_baseline_and_temperature():
    assert soft_phi.parse("krwemd-1:soft0.3") == ("krwemd-1", 0.3)
    assert soft_phi.parse("ehs-2:soft.5") == ("ehs-2", 0.5)
