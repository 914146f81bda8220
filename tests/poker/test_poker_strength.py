"""Strength classes (pasur.poker.embedding.strength): each reading against a brute-force grouping
of every (board, hand) pair by the evaluator directly; the paper's counts on Numeral211; CFR on
the strength classes in class space equals the core's CFR on their keying."""

from __future__ import annotations

import itertools
from collections import Counter

import numpy as np
import pytest
import torch

from pasur.common.errors import PasurInputError
from pasur.poker.abstraction import abstraction
from pasur.poker.embedding import baselines
from pasur.poker.embedding.classes import ClassSpace
from pasur.poker.embedding.phi import Embedding
from pasur.poker.embedding.solver import EmbeddingCFR
from pasur.poker.embedding.strength import READINGS, class_counts, coarse_phi, strength_classes, strength_weights
from pasur.poker.engine import Engine
from pasur.poker.evaluator import strengths
from pasur.poker.solvers import CFRConfig, CFRSolver

torch.set_num_threads(1)


class Brute:
    """(lose, draw, win) counts of a hand by enumeration: every opponent hand, every completion
    of the board in dealing order; no class space, no engine tables."""

    def __init__(self, game) -> None:
        self.g = game
        self.last = sum(game.board_cards)
        self.memo: dict = {}

    def terminal(self, hole, board) -> tuple:
        rest = [c for c in range(self.g.n_cards) if c not in (*hole, *board)]
        opp = np.asarray(list(itertools.combinations(rest, 2)))
        mine = strengths(self.g, np.asarray([[*hole, *board]]))[0]
        theirs = strengths(self.g, np.concatenate([opp, np.tile(board, (len(opp), 1))], 1))
        return (int((mine < theirs).sum()), int((mine == theirs).sum()), int((mine > theirs).sum()))

    def nexts(self, hole, board) -> list[tuple]:
        return [(*board, c) for c in range(self.g.n_cards) if c not in (*hole, *board)]

    def counts(self, hole, board) -> tuple:
        """Rolled out: summed over every completion."""
        key = ("c", hole, board)
        if key not in self.memo:
            if len(board) == self.last:
                self.memo[key] = self.terminal(hole, board)
            else:
                parts = [self.counts(hole, b) for b in self.nexts(hole, board)]
                self.memo[key] = tuple(int(x) for x in np.sum(parts, 0))
        return self.memo[key]

    def label(self, reading: str, hole, board, r: int):
        """A hashable label, equal exactly for hands of one class under ``reading``."""
        if reading == "shares":
            return self.counts(hole, board)
        if reading == "tensor":  # the hand's counts and each predecessor's (the board's prefixes)
            ends = np.cumsum(self.g.board_cards)[: r + 1]
            return tuple(self.counts(hole, board[:k]) for k in ends)
        key = ("p", hole, board)
        if key not in self.memo:  # the multiset of the next round's labels
            if len(board) == self.last:
                self.memo[key] = self.terminal(hole, board)
            else:
                kids = [self.label("paper", hole, b, r + 1) for b in self.nexts(hole, board)]
                self.memo[key] = tuple(sorted(Counter(kids).items()))
        return self.memo[key]


def _same_partition(a, b) -> bool:
    pairs = set(zip(a, b, strict=True))
    return len(pairs) == len(set(a)) == len(set(b))


@pytest.mark.parametrize("reading", READINGS)
def test_strength_keying_is_the_brute_force_grouping_of_every_board_and_hand(reading):
    e = Engine("numeral211-tiny", iso=True)
    bd = e.boards
    key = abstraction(e, "strength" if reading == "paper" else f"strength:{reading}")
    brute = Brute(e.game)
    merged = False
    for r in range(e.R):
        B, H = bd.hand_ids[r].shape
        labels, keys = [], []
        for b in range(B):
            board = tuple(int(c) for c in bd.boards[r][b])
            for p in range(H):
                hole = tuple(sorted(int(c) for c in bd.hands[bd.hand_ids[r][b, p]]))
                labels.append(brute.label(reading, hole, board, r))
                keys.append(int(key.key[r][b, p]))
        assert _same_partition(labels, keys), f"round {r + 1}"
        assert len(set(keys)) == key.n_keys[r]
        merged |= key.n_keys[r] < len(np.unique(abstraction(e, "iso,iso,iso").key[r]))
    assert merged  # the readings do merge isomorphism classes on this game


def test_the_readings_differ_on_the_small_game():
    space = ClassSpace(Engine("numeral211-tiny", iso=True))
    counts = {r: class_counts(space, r) for r in READINGS}
    assert counts == {"paper": [16, 59, 18], "shares": [16, 48, 18], "tensor": [16, 73, 277]}


def test_the_paper_reading_gives_the_papers_counts_on_numeral211():
    """Section 5: "100, 2250, and 3957" structurally equivalent hand strength classes."""
    space = ClassSpace(Engine("numeral211", iso=True))
    assert class_counts(space, "paper") == [100, 2250, 3957]
    assert class_counts(space, "shares") == [100, 2234, 3957]
    classes = strength_classes(space, "paper")
    w = strength_weights(space, classes)
    assert [int(x.sum()) for x in w] == [780, 29_640, 1_096_680]  # every actual (board, hand) pair


def test_cfr_on_strength_classes_in_class_space_is_the_cores_cfr_on_their_keying():
    e = Engine("numeral211-r5", iso=True)
    space = ClassSpace(e)
    classes = strength_classes(space, "paper")
    w = [torch.as_tensor(rc.weight, dtype=e.dtype) for rc in space.rounds]
    emb = EmbeddingCFR(
        e, [Embedding.buckets(torch.as_tensor(c), x) for c, x in zip(classes, w, strict=True)], space=space
    )
    ref = CFRSolver(e, CFRConfig(method="cfr", updates="simultaneous"), keying=abstraction(e, "strength"))
    emb.iterate(2)
    ref.iterate(2)
    for r in range(e.R):
        a = emb.average_policy().probs(r, 0, e.n_rows[r], 0, e.n_boards[r])
        b = ref.average_policy().probs(r, 0, e.n_rows[r], 0, e.n_boards[r])
        assert (a - b).abs().max() < 1e-9


def test_strength_specs_are_checked():
    e = Engine("numeral211-tiny", iso=True)
    assert abstraction(e, "iso,strength,strength").n_keys == [16, 59, 18]
    with pytest.raises(PasurInputError, match="strength:R"):
        abstraction(e, "strength:rounded")
    with pytest.raises(PasurInputError, match="iso=True"):
        abstraction(Engine("numeral211-tiny", iso=False), "strength")


def _cfr_pair(e, space, phis, keying, n=3):
    w = [torch.as_tensor(rc.weight, dtype=e.dtype) for rc in space.rounds]
    emb = EmbeddingCFR(e, [Embedding.dense(p, x) for p, x in zip(phis, w, strict=True)], space=space)
    ref = CFRSolver(e, CFRConfig(method="cfr", updates="simultaneous"), keying=keying)
    emb.iterate(n)
    ref.iterate(n)
    for r in range(e.R):
        a = emb.average_policy().probs(r, 0, e.n_rows[r], 0, e.n_boards[r])
        b = ref.average_policy().probs(r, 0, e.n_rows[r], 0, e.n_boards[r])
        assert (a - b).abs().max() < 1e-9


def _one_hot(key) -> torch.Tensor:
    key = torch.as_tensor(np.asarray(key))
    out = torch.zeros(int(key.max()) + 1, len(key), dtype=torch.float64)
    out[key, torch.arange(len(key))] = 1.0
    return out


def test_one_hot_phis_over_strength_classes_are_cfr_on_the_abstraction():
    """Phi with one column per strength class (coarse_phi), one-hot: the identity over the strength
    classes is CFR on the strength keying; a baseline's strength-class bucketing is CFR on its keying."""
    e = Engine("numeral211-tiny", iso=True)
    space = ClassSpace(e)
    coarse = strength_classes(space, "paper")
    lift = [coarse_phi(_one_hot(c), c, rc.weight) for c, rc in zip(coarse, space.rounds, strict=True)]
    assert all(torch.equal(p, _one_hot(c)) for p, c in zip(lift, coarse, strict=True))
    _cfr_pair(e, space, lift, abstraction(e, "strength"))
    buckets = baselines.paemd(space, [None, 6, 4], seed=0, classes=coarse)
    phis = [coarse_phi(_one_hot(b), c, rc.weight) for b, c, rc in zip(buckets, coarse, space.rounds, strict=True)]
    _cfr_pair(e, space, phis, baselines.keying(space, buckets, "paemd"))


def test_coarse_phi_is_one_column_per_class_keeping_each_class_embedded_mass():
    space = ClassSpace(Engine("numeral211-tiny", iso=True))
    rc = space.rounds[2]
    c = strength_classes(space, "paper")[2]
    phi = torch.softmax(torch.randn(5, rc.n, generator=torch.Generator().manual_seed(0), dtype=torch.float64), 0)
    out = coarse_phi(phi, c, rc.weight)
    assert torch.allclose(out.sum(0), torch.ones(rc.n, dtype=torch.float64))
    first = np.unique(c, return_index=True)[1]
    assert torch.equal(out, out[:, first[c]])  # equal columns within a class
    w = torch.as_tensor(rc.weight, dtype=torch.float64)
    per_class = lambda p: torch.zeros(5, len(first), dtype=p.dtype).index_add_(1, torch.as_tensor(c), p * w)  # noqa: E731
    assert torch.allclose(per_class(out), per_class(phi))  # Phi (w * x) unchanged for x constant on classes
    assert not torch.allclose(out, phi)
