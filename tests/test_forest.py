"""Forests: one tree over several starts (the worlds of PIMC), checked against solving each start
alone and against the reference solver."""

from __future__ import annotations

import random

import pytest
import torch

from helpers import position
from pasur.game.cards import Deck
from pasur.game.state import GameState
from pasur.solve.exact import solve_exact
from pasur.solve.reference import ReferenceSolver, banked_diff
from pasur.solve.tree import build_forest, build_tree

MODES = ("compact", "paper")


def world(state: GameState, rng: random.Random) -> GameState:
    """The same position as the mover sees it, with the cards hidden from the mover (the
    opponent's hand and the undealt cards) dealt again at random: a PIMC world."""
    cards = list(state.deck.cards)
    opp, r = 1 - state.player, state.round
    base = 4 + 8 * r + 4 * opp
    opp_slots = [i for i in range(base, base + 4) if state.hands[opp] >> cards[i] & 1]
    slots = opp_slots + list(range(4 + 8 * (r + 1), 52))
    hidden = [cards[i] for i in slots]
    rng.shuffle(hidden)
    for i, c in zip(slots, hidden, strict=True):
        cards[i] = c
    hands = list(state.hands)
    hands[opp] = sum(1 << cards[i] for i in opp_slots)
    out = state.with_(deck=Deck(tuple(cards)), hands=tuple(hands))
    out.check()
    return out


def worlds(state: GameState, k: int, seed: int) -> list[GameState]:
    rng = random.Random(seed)
    return [state] + [world(state, rng) for _ in range(k - 1)]


def alone(start: GameState, mode: str) -> float:
    return solve_exact(build_tree(start, mode, infosets=False)).root_value


@pytest.mark.parametrize("mode", MODES)
@pytest.mark.parametrize(("seed", "rnd", "turn"), [(0, 5, 0), (4, 4, 4), (7, 5, 3), (8, 4, 1), (16, 4, 4)])
def test_forest_of_worlds_equals_each_world_alone_and_the_reference(mode, seed, rnd, turn):
    starts = worlds(position(seed, rnd, turn), 4, seed)
    starts.append(starts[1])  # a repeated world is still its own root
    forest = build_forest(starts, mode)
    sol = solve_exact(forest)
    values = sol.root_values()
    assert values.shape == (len(starts),)
    assert values.tolist() == [alone(s, mode) for s in starts]
    q = sol.root_action_values()
    for k, s in enumerate(starts):
        ref = ReferenceSolver(s.deck)
        expected = [v - banked_diff(s) for _, v in ref.action_values(s)]
        assert q[k].tolist() == expected
        assert float(values[k]) == (max if s.player == 0 else min)(expected)


@pytest.mark.parametrize("mode", MODES)
def test_forest_of_different_positions(mode):
    """Starts from different decks and histories: own hands, pool, piles, clubs, last capturer."""
    starts = [position(s, 5, 2) for s in range(6)]
    assert len({(s.hands, s.pool, s.piles, s.last_capturer) for s in starts}) == 6
    forest = build_forest(starts, mode)
    assert forest.n_roots == 6 and forest.round(5).n_nodes(2) == 6
    sol = solve_exact(forest)
    assert sol.root_values().tolist() == [alone(s, mode) for s in starts]
    with pytest.raises(ValueError, match="same mover's hand and pool"):
        sol.root_action_values()


def test_worlds_that_differ_only_later_are_not_merged():
    """Two starts equal in everything but the order of the deals to come: nothing merges before
    the deals differ, and each keeps its own value (which differ here)."""
    s = position(8, 4, 0)
    cards = list(s.deck.cards)
    cards[44:48], cards[48:52] = cards[48:52], cards[44:48]  # the round-5 hands swapped
    t = s.with_(deck=Deck(tuple(cards)))
    a, b = alone(s, "compact"), alone(t, "compact")
    assert a != b
    forest = build_forest([s, t])
    assert solve_exact(forest).root_values().tolist() == [a, b]
    single = [build_tree(x, infosets=False) for x in (s, t)]
    for r in (4, 5):
        for turn in range(8 if r == 5 else 9):  # (terminal nodes of round 5 may merge: no deal follows)
            n = [x.round(r).n_nodes(turn) for x in single]
            assert forest.round(r).n_nodes(turn) == sum(n), (r, turn)


def test_worlds_with_the_same_future_merge_after_the_round():
    """Two starts whose round-4 hands differ but whose round-5 deal is the same: their end-of-round
    nodes merge where pool, clubs and last capturer coincide (fewer nodes than apart), values exact."""
    s = position(5, 4, 0)
    a0, b0 = s.hands
    ca = min(c for c in range(52) if a0 >> c & 1)
    cb = min(c for c in range(52) if b0 >> c & 1)
    swap = (1 << ca) | (1 << cb)
    cards = [cb if c == ca else ca if c == cb else c for c in s.deck.cards]
    t = s.with_(deck=Deck(tuple(cards)), hands=(a0 ^ swap, b0 ^ swap))
    t.check()
    forest = build_forest([s, t])
    single = [build_tree(x, infosets=False) for x in (s, t)]
    assert forest.round(5).n_nodes(0) < sum(x.round(5).n_nodes(0) for x in single)
    assert solve_exact(forest).root_values().tolist() == [alone(s, "compact"), alone(t, "compact")]


def test_one_start_forest_is_build_tree():
    s = position(3, 4, 0)
    for mode in MODES:
        a, b = build_forest([s], mode), build_tree(s, mode, infosets=False)
        assert a.edge_checksum() == b.edge_checksum() and a.n_nodes == b.n_nodes


def test_forest_refuses_mixed_stages():
    with pytest.raises(ValueError, match="same round and turn"):
        build_forest([position(0, 5, 0), position(1, 5, 1)])
    with pytest.raises(ValueError, match="at least one"):
        build_forest([])


def test_forest_on_full_decks(reference_decks):
    """Alex's first decision of a reference deck in three worlds (Bob's hand and the undealt cards
    dealt again): each world alone is the check, and the true deck's best action has its known value."""
    nd = reference_decks[2]
    s = GameState.initial(nd.deck)
    starts = worlds(s, 3, 0)
    sol = solve_exact(build_forest(starts), keep_values=False)
    assert sol.root_values().tolist() == [alone(x, "compact") for x in starts]
    q = sol.root_action_values()
    assert q.shape == (3, len(s.legal_actions()))
    assert torch.equal(q.max(1).values, sol.root_values())  # Alex maximizes
    assert float(q[0].max()) == nd.value
