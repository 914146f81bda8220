"""HandEbdNet (appendix D): the hand tensor's canonical suits, the strength tensor against brute
force, and the network's training, Phi and saved form."""

from __future__ import annotations

import itertools
import json

import numpy as np
import pytest
import torch

from pasur.common.errors import PasurInputError
from pasur.poker.abstraction import isomorphic_classes
from pasur.poker.cards import permute_cards
from pasur.poker.embedding import handnet
from pasur.poker.embedding.classes import ClassSpace
from pasur.poker.embedding.tensors import class_tensors, hand_tensors, strength_tensors
from pasur.poker.engine import Engine
from pasur.poker.evaluator import strength
from pasur.poker.games import get_game

torch.set_num_threads(1)


def _card(game, text):
    return game.ranks.index(text[0]) * game.n_suits + game.suits.index(text[1])


def _hand(game, hole, *board):
    return np.asarray([[_card(game, c) for c in hole]]), np.asarray([[_card(game, c) for c in board]])


def test_paper_figure_6_hands_share_a_tensor_and_a_different_suit_pattern_does_not():
    g = get_game("numeral211")
    a = hand_tensors(g, *_hand(g, ("Ac", "Tc"), "9d", "2c"), 2)
    b = hand_tensors(g, *_hand(g, ("Ah", "Th"), "9s", "2h"), 2)
    c = hand_tensors(g, *_hand(g, ("Ac", "Td"), "9d", "2c"), 2)
    assert a.shape == (1, 4, 10, 3)
    assert np.array_equal(a, b)
    assert not np.array_equal(a, c)
    # the round-2 predecessors agree as well
    assert np.array_equal(
        hand_tensors(g, *_hand(g, ("Ac", "Tc"), "9d"), 1), hand_tensors(g, *_hand(g, ("Ah", "Th"), "9s"), 1)
    )


def test_hand_tensor_is_invariant_under_every_suit_permutation():
    g = get_game("numeral211")
    rng = np.random.default_rng(0)
    cards = np.stack([rng.permutation(g.n_cards)[:4] for _ in range(300)])
    hole, board = np.sort(cards[:, :2], axis=1), cards[:, 2:]
    base = hand_tensors(g, hole, board, 2)
    for perm in itertools.permutations(range(g.n_suits)):
        ph = np.sort(permute_cards(hole, perm, g.n_suits), axis=1)
        assert np.array_equal(hand_tensors(g, ph, permute_cards(board, perm, g.n_suits), 2), base)


@pytest.mark.parametrize("game", ["numeral211-r5", "numeral211-tiny"])
def test_hand_tensors_separate_exactly_the_isomorphism_classes(game):
    """Equal tensors <=> the same class of the core's (independent) isomorphism, over every
    (board, hand) of every round of the full (non-isomorphic) engine."""
    e = Engine(game, iso=False)
    bd = e.boards
    for r in range(e.R):
        core = isomorphic_classes(e, r)  # [B, H]
        B, H = core.shape
        hole = bd.hands[bd.hand_ids[r]].reshape(B * H, -1)
        board = np.repeat(bd.boards[r], H, axis=0)
        x = hand_tensors(e.game, hole, board, r).reshape(B * H, -1)
        _, tid = np.unique(x, axis=0, return_inverse=True)
        pairs = np.unique(np.stack([tid.reshape(-1), core.reshape(-1)]), axis=1)
        assert pairs.shape[1] == len(np.unique(core)) == len(np.unique(tid))


def _brute_force_shares(game, hole, board, last_board_cards):
    """(lose, draw, win) of ``hole`` on ``board`` against every opponent hand and every
    completion of the board, each completion equally likely (the evaluator directly)."""
    used = set(hole) | set(board)
    rest = [c for c in range(game.n_cards) if c not in used]
    out = np.zeros(3)
    comps = list(itertools.permutations(rest, last_board_cards - len(board)))
    for comp in comps:
        full = [*board, *comp]
        mine = strength(game, [*hole, *full])
        left = [c for c in rest if c not in comp]
        opp = list(itertools.combinations(left, 2))
        res = np.zeros(3)
        for o in opp:
            s = strength(game, [*o, *full])
            res[0 if mine < s else 1 if mine == s else 2] += 1
        out += res / len(opp)
    return out / len(comps)


def test_strength_tensor_rows_sum_to_one_and_match_brute_force():
    e = Engine("numeral211-tiny", iso=True)
    space = ClassSpace(e)
    g = e.game
    total = sum(g.board_cards)
    rng = np.random.default_rng(1)
    for r in (1, 2):
        y = strength_tensors(space, r)
        assert y.shape == (space.rounds[r].n, r + 1, 3)
        assert np.abs(y.sum(2) - 1).max() < 1e-6
        index = {t.tobytes(): i for i, t in enumerate(class_tensors(space, r))}
        for _ in range(6):
            cards = rng.permutation(g.n_cards)[: 2 + r]
            hole, board = sorted(cards[:2].tolist()), cards[2:].tolist()
            q = index[hand_tensors(g, np.asarray([hole]), np.asarray([board]), r)[0].tobytes()]
            for j in range(r + 1):
                want = _brute_force_shares(g, hole, board[:j], total)
                np.testing.assert_allclose(y[q, j], want, atol=1e-6)


@pytest.fixture(scope="module")
def small_data():
    e = Engine("numeral211-r5", iso=True)
    space = ClassSpace(e)
    r = 1
    return class_tensors(space, r), strength_tensors(space, r), space.rounds[r].weight


def test_network_learns_and_its_phi_columns_are_distributions(small_data, tmp_path):
    x, y, w = small_data
    net, card = handnet.train(x, y, w, 12, game="numeral211-r5", round=1, epochs=20, features=40, seed=3, batch=32)
    wn = w / w.sum()
    mean = (y * wn[:, None, None]).sum(0)  # the best constant prediction
    constant = (wn * (y * np.log(np.clip(y, 1e-12, None) / mean)).sum((1, 2))).sum()
    assert card.loss[-1] < 0.6 * constant, (card.loss[-1], constant)
    phi = handnet.embedding_matrix(net, x)
    assert phi.shape == (12, len(x))
    assert (phi >= 0).all() and torch.allclose(phi.sum(0), torch.ones(len(x), dtype=phi.dtype))
    # seeded: the same seed gives the same network
    _, card2 = handnet.train(x, y, w, 12, game="numeral211-r5", round=1, epochs=20, features=40, seed=3, batch=32)
    assert card2.loss == card.loss


def test_saved_network_loads_with_checks(small_data, tmp_path):
    x, y, w = small_data
    net, card = handnet.train(x, y, w, 6, game="numeral211-r5", round=1, epochs=1, features=20, seed=0)
    stem = tmp_path / "round2"
    handnet.save(net, card, stem)
    meta = json.loads((tmp_path / "round2.json").read_text())
    assert meta["round"] == 2 and meta["m"] == 6 and meta["loss"] == card.loss
    back, _ = handnet.load(stem, game="numeral211-r5", round=1, m=6)
    assert torch.equal(handnet.embedding_matrix(back, x), handnet.embedding_matrix(net, x))
    with pytest.raises(PasurInputError, match="card says"):
        handnet.load(stem, game="numeral211-r5", round=2, m=6)
    with pytest.raises(PasurInputError, match="card says"):
        handnet.load(stem, game="numeral211", round=1, m=6)
    (tmp_path / "round2.pt").write_bytes((tmp_path / "round2.pt").read_bytes() + b"x")
    with pytest.raises(PasurInputError, match="sha256"):
        handnet.load(stem, game="numeral211-r5", round=1, m=6)


def test_advisors_start_from_distinct_hands_picked_by_kmeans_plus_plus():
    """k-means++ seeding never picks a row equal to one already picked while another is left (its
    distance is 0): with as many advisors as distinct strength tensors, each is picked once, and
    rows of weight 0 never."""
    rows = torch.tensor([[0.25, 0.25, 0.5], [0.25, 0.25, 0.5], [1.0, 0.0, 0.0], [0.0, 0.0, 1.0], [0.5, 0.5, 0.0]])
    y = rows[:, None, :]  # [n, s = 1, 3]
    weight = torch.tensor([1.0, 3.0, 2.0, 1.0, 0.0])
    for seed in range(20):
        picked = handnet.seed_advisors(y, weight, 3, torch.Generator().manual_seed(seed)).tolist()
        assert 4 not in picked
        assert sorted({tuple(rows[i].tolist()) for i in picked}) == sorted(
            {(0.25, 0.25, 0.5), (1.0, 0.0, 0.0), (0.0, 0.0, 1.0)}
        )


def test_head_starts_as_the_picked_hands_strength(small_data):
    """Before any step (0 epochs) advisor a predicts the strength tensor of the hand it was seeded
    from (up to the 1e-4 floor on log shares); with PyTorch's start it predicts something else."""
    x, y, w = small_data
    net, card = handnet.train(x, y, w, 8, game="numeral211-r5", round=1, epochs=0, features=20, seed=4)
    assert card.head_init == "data" and card.loss == []
    s = y.shape[1]
    advisors = torch.softmax((net.head.weight.T + net.head.bias).view(8, s, 3), dim=2).detach()
    rows = torch.as_tensor(y, dtype=torch.float32)
    # each advisor is some hand's strength tensor (up to the floor), and no two are the same hand
    gap = (advisors[:, None] - rows[None]).abs().amax((2, 3))  # [advisor, hand]
    assert (gap.min(1).values < 1e-3).all()
    nearest = [tuple(rows[i].flatten().tolist()) for i in gap.argmin(1).tolist()]
    assert len(set(nearest)) == 8
    plain, _ = handnet.train(
        x, y, w, 8, game="numeral211-r5", round=1, epochs=0, features=20, seed=4, head_init="torch"
    )
    other = torch.softmax((plain.head.weight.T + plain.head.bias).view(8, s, 3), dim=2).detach()
    assert not torch.allclose(other, advisors, atol=1e-2)
    with pytest.raises(PasurInputError, match="head start"):
        handnet.train(x, y, w, 8, game="numeral211-r5", round=1, epochs=0, head_init="zeros")
