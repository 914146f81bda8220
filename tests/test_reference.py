"""The exact reference solver against the reference decks and a literal minimax."""

from __future__ import annotations

import random

import pytest

from helpers import naive_value, position
from pasur.game.cards import Deck
from pasur.game.state import ALEX, GameState
from pasur.solve.reference import ReferenceSolver, banked_diff, future_key, solve_deck


def test_reference_decks_exact_values(reference_decks):
    """The values found by two independent solvers (shared/decks/reference-decks.json)."""
    assert len(reference_decks) >= 3
    for nd in reference_decks:
        value, solver = solve_deck(nd.deck)
        assert value == nd.value, nd.id
        assert solver.n_states > 10_000


@pytest.mark.parametrize("seed", range(12))
def test_last_round_matches_naive_minimax(seed):
    s = position(seed, 5)
    assert ReferenceSolver(s.deck).value(s) == naive_value(s)


@pytest.mark.parametrize("seed", range(6))
def test_mid_round_four_matches_naive_minimax(seed):
    s = position(seed, 4, turn=5)  # 11 plies left, across the deal of round 5
    assert ReferenceSolver(s.deck).value(s) == naive_value(s)


@pytest.mark.parametrize("seed", range(4))
def test_optimal_line_reaches_the_value_and_actions_are_consistent(seed):
    s = position(seed, 3)
    solver = ReferenceSolver(s.deck)
    v = solver.value(s)
    state = s
    for a in solver.optimal_line(s):
        vals = dict(solver.action_values(state))
        pick = max if state.player == ALEX else min
        assert vals[a] == pick(vals.values()) == solver.value(state)
        state = state.apply(a)
    assert state.utility() == v


def test_value_shifts_with_banked_points_only():
    """Points already banked are outside the key: the same future from another score."""
    non_club_points = [1, 2, 3, 37, 41, 42, 43]  # A♦ A♥ A♠ 10♦ J♦ J♥ J♠
    for seed in range(50):
        s = position(seed, 5, turn=2)
        moved = next((c for c in non_club_points if s.piles[0] >> c & 1), None)
        if moved is not None:
            break
    assert moved is not None
    solver = ReferenceSolver(s.deck)
    # Move the card from Alex's pile to Bob's: the banked difference changes, the future does not.
    t = s.with_(piles=(s.piles[0] & ~(1 << moved), s.piles[1] | (1 << moved)))
    assert future_key(t) == future_key(s)
    assert banked_diff(s) - banked_diff(t) >= 2
    assert solver.value(s) - solver.value(t) == banked_diff(s) - banked_diff(t)


def test_solver_refuses_state_of_another_deck():
    solver = ReferenceSolver(Deck.from_seed(1))
    with pytest.raises(ValueError, match="another deck"):
        solver.value(GameState.initial(Deck.from_seed(2)))


def test_value_at_least_any_random_line_from_the_root(reference_decks):
    nd = reference_decks[2]
    value, solver = solve_deck(nd.deck)
    rng = random.Random(0)
    for _ in range(20):
        # Alex plays optimally, Bob randomly: Alex gets at least the value.
        s = GameState.initial(nd.deck)
        while not s.is_terminal:
            s = s.apply(solver.best_action(s) if s.player == ALEX else rng.choice(s.legal_actions()))
        assert s.utility() >= value
