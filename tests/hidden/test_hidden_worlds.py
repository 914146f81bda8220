"""Sampled worlds are consistent with everything seen and uniform over the consistent ones."""

from __future__ import annotations

import itertools
import math
import random
from collections import Counter

import pytest

from pasur.game.cards import Deck, cards_of
from pasur.game.state import GameState
from pasur.hidden.game import HiddenGame
from pasur.hidden.worlds import sample_worlds, world_deck, world_state


def _game(seed: int, steps: int) -> HiddenGame:
    rng = random.Random(seed)
    g = HiddenGame(Deck.from_seed(seed))
    for _ in range(steps):
        g.apply(rng.choice(g.state.legal_actions()))
    return g


@pytest.mark.parametrize("balanced", [False, True])
@pytest.mark.parametrize("seed,steps", [(1, 0), (2, 1), (3, 9), (4, 22), (5, 31), (6, 40), (7, 47)])
def test_worlds_replay_everything_seen(seed, steps, balanced):
    """Replaying the real moves on each sampled world's deck gives the same seen position: the same
    pool, piles, Surs, own hand, and every move legal where it was played (both samplers: PIMC
    uses the balanced one)."""
    g = _game(seed, steps)
    for p in (0, 1):
        info = g.observation(p)
        w = sample_worlds(info, 20, seed=seed, balanced=balanced)
        for k in range(w.k):
            ws = world_state(info, w, k)
            s = GameState.initial(ws.deck)
            for m in g.moves:
                s = s.apply(m.action)  # raises on a move illegal in that world
            assert s == ws
            assert (s.hands[p], s.pool, s.piles, s.surs, s.last_capturer) == (
                info.hand,
                info.pool,
                info.piles,
                info.surs,
                info.last_capturer,
            )
            assert s.hands[1 - p].bit_count() == info.opponent_hand_size
            assert (s.hands[1 - p] | s.undealt()) == info.unseen


def _chi2_critical(dof: int, z: float = 3.09) -> float:
    """Upper 0.1 % point of chi-square (Wilson-Hilferty)."""
    return dof * (1 - 2 / (9 * dof) + z * math.sqrt(2 / (9 * dof))) ** 3


@pytest.mark.parametrize("balanced", [False, True])
def test_worlds_are_uniform_over_the_consistent_ones(balanced):
    """Round 4, Alex to play his last card: he cannot see Bob's last card nor round 5's eight cards:
    9 x C(8, 4) = 630 worlds (Bob's card, Alex's round-5 hand), each equally likely. Balanced
    sampling keeps each world uniform and gives Bob each unseen card exactly as often."""
    g = _game(21, 8 * 4 + 6)
    info = g.observation(0)
    unseen = cards_of(info.unseen)
    assert len(unseen) == 9 and info.opponent_hand_size == 1
    # every consistent world, enumerated independently of the sampler
    support = set()
    for bob in unseen:
        rest = [c for c in unseen if c != bob]
        for alex5 in itertools.combinations(rest, 4):
            support.add((1 << bob, sum(1 << c for c in alex5)))
    assert len(support) == 630
    n = 630 * 40
    w = sample_worlds(info, n, seed=5, balanced=balanced)
    for k in range(50):  # the undealt cards come in dealing order: Alex's round-5 hand first
        deck = world_deck(info, int(w.opp_hand[k]), [int(c) for c in w.undealt[k]])
        assert deck.hand_mask(0, 5) == sum(1 << int(c) for c in w.undealt[k, :4])
    alex5 = (1 << w.undealt[:, :4]).sum(1)
    counts = Counter(zip(w.opp_hand.tolist(), alex5.tolist(), strict=True))
    assert set(counts) == support  # only consistent worlds, and all of them
    expected = n / len(support)
    chi2 = sum((c - expected) ** 2 / expected for c in counts.values())
    assert chi2 < _chi2_critical(len(support) - 1)
    if balanced:  # groups of 9 disjoint one-card hands: every unseen card 2,800 times
        assert set(Counter(w.opp_hand.tolist()).values()) == {n // 9}


def test_sampling_is_seeded_by_the_information_state():
    info = _game(8, 13).observation(1)
    a, b = sample_worlds(info, 10, seed=3), sample_worlds(info, 10, seed=3)
    assert (a.opp_hand == b.opp_hand).all() and (a.undealt == b.undealt).all()
    assert not (sample_worlds(info, 10, seed=4).opp_hand == a.opp_hand).all()


def _bob_laid_when_he_could_take(seed: int):
    """A position of Alex (to move) after Bob laid a card this round, from a random game."""
    rng = random.Random(seed)
    g = HiddenGame(Deck.from_seed(seed))
    while not g.is_terminal:
        info = g.observation(0)
        if info.to_move and info.turn > 0:
            last = info.moves[-1]
            if last.player == 1 and last.captured == 0 and last.round == info.round:
                return info
        g.apply(rng.choice(g.state.legal_actions()))
    return None


def test_inference_weighs_down_worlds_where_the_opponent_passed_up_points():
    """Bob laid a card. In a world where his hand (with that card) could have banked points, a
    soft-greedy Bob laying is less likely than in one where it could bank nothing: such worlds get
    lower weights on average. Checked with the scalar rules, independently of the weighting."""
    from pasur.game.cards import points_in
    from pasur.game.rules import legal_actions
    from pasur.hidden.inference import opponent_weights

    compared = 0
    for seed in range(40):
        info = _bob_laid_when_he_could_take(seed)
        if info is None or sum(1 for m in info.moves if m.round == info.round and m.player == 1) != 1:
            continue
        lay = info.moves[-1]
        pool_before = info.pool & ~(1 << lay.card)
        w = opponent_weights(info, sample_worlds(info, 300, seed=seed))
        passed_up, clean = [], []
        for k in range(w.k):
            held = int(w.opp_hand[k]) | 1 << lay.card
            best = max(
                points_in(a.captured | 1 << a.card) if a.captured else 0 for a in legal_actions(held, pool_before)
            )
            (passed_up if best > 0 else clean).append(float(w.weight[k]))
        if passed_up and clean:
            assert sum(passed_up) / len(passed_up) < sum(clean) / len(clean)
            compared += 1
    assert compared >= 3


def test_inference_leaves_worlds_alone_before_the_opponent_moves():
    from pasur.hidden.inference import opponent_weights

    info = _game(3, 8).observation(0)  # round 1, turn 0: Bob has not moved this round
    w = sample_worlds(info, 50, seed=1)
    assert (opponent_weights(info, w).weight == w.weight).all()


@pytest.mark.parametrize("seed,steps,p", [(21, 38, 0), (9, 13, 1), (12, 29, 1), (4, 19, 1), (5, 40, 0), (4, 2, 0)])
def test_exhaustive_worlds_are_every_hand_the_opponent_can_hold(seed, steps, p):
    """``exhaustive``: when the opponent can hold at most that many hands, the worlds are exactly
    those hands, once each (listed here independently with itertools), each completing a deck that
    replays every move seen; above the cap the K sampled worlds come back as before."""
    g = _game(seed, steps)
    info = g.observation(p)
    unseen, n = cards_of(info.unseen), info.opponent_hand_size
    hands = {sum(1 << c for c in h) for h in itertools.combinations(unseen, n)}
    w = sample_worlds(info, 20, seed=1, balanced=True, exhaustive=len(hands))
    assert sorted(w.opp_hand.tolist()) == sorted(hands) and (w.weight == 1).all()
    for k in range(0, w.k, max(1, w.k // 25)):
        ws = world_state(info, w, k)
        s = GameState.initial(ws.deck)
        for m in g.moves:
            s = s.apply(m.action)
        assert s == ws
    assert sample_worlds(info, 20, seed=1, balanced=True, exhaustive=len(hands) - 1).k == 20
