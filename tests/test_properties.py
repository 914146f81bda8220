"""Property tests over random decks and random play (hypothesis).

The oracles here are written independently of ``pasur.game.rules``: subset counts by dynamic programming,
the Jack and court-card rules straight from the spec, and a plain (memo-free) minimax for the solver.
"""

from __future__ import annotations

import random

from hypothesis import given, settings
from hypothesis import strategies as st

from helpers import tally_points
from pasur.game.cards import Deck, cards_of, mask_of, value
from pasur.game.rules import Action
from pasur.game.state import ALEX, BOB, GameState
from pasur.solve.reference import ReferenceSolver

SEEDS = st.integers(min_value=0, max_value=2**32 - 1)


# ---------------------------------------------------------------------------
# Independent oracles


def count_subsets(values: list[int], target: int) -> int:
    """Number of subsets (by position, so equal values in different suits count apart) summing to target."""
    ways = [1] + [0] * target
    for v in values:
        for t in range(target, v - 1, -1):
            ways[t] += ways[t - v]
    return ways[target] if target > 0 else 0


def assert_actions_follow_the_rules(hand: int, pool: int, actions: list[Action]) -> None:
    assert actions == sorted(actions, key=lambda a: (a.card, a.captured))
    assert len(set(actions)) == len(actions)
    pool_cards = cards_of(pool)
    for card in cards_of(hand):
        acts = [a for a in actions if a.card == card]
        assert acts, f"card {card} has no action"
        for a in acts:
            assert a.captured & ~pool == 0  # captured cards come from the pool
        r = card // 4
        if r < 10:  # numeric: every subset of numeric pool cards with sum 11 - value
            target = 11 - (r + 1)
            numeric = [c for c in pool_cards if c < 40]
            n = count_subsets([c // 4 + 1 for c in numeric], target)
            if n == 0:
                assert acts == [Action(card, 0)]
            else:
                assert len(acts) == n
                for a in acts:
                    taken = cards_of(a.captured)
                    assert taken and all(c < 40 for c in taken)
                    assert sum(value(c) for c in taken) == target
        elif r == 10:  # Jack: all numeric cards and Jacks, never Q/K; laid when there are none
            take = mask_of(c for c in pool_cards if c // 4 <= 10)
            assert acts == [Action(card, take)]
        else:  # Queen / King: exactly one card of the same rank, one action each
            same = [c for c in pool_cards if c // 4 == r]
            if same:
                assert [a.captured for a in acts] == [1 << c for c in same]
            else:
                assert acts == [Action(card, 0)]
    assert {a.card for a in actions} <= set(cards_of(hand))


def assert_transition(s: GameState, a: Action, t: GameState) -> None:
    """What one action does, checked from the spec rather than from the engine's code."""
    p = s.player
    card_bit = 1 << a.card
    last_of_round = s.turn == 7
    if a.captured:
        assert t.last_capturer == p
        sur = a.captured == s.pool and a.card // 4 != 10 and s.round < 5
        assert t.surs[p] == s.surs[p] + int(sur)
        assert t.piles[p] & (a.captured | card_bit) == a.captured | card_bit
    else:
        assert t.last_capturer == s.last_capturer
        assert t.surs == s.surs
    assert t.surs[1 - p] == s.surs[1 - p]
    if not last_of_round:
        assert (t.round, t.turn) == (s.round, s.turn + 1)
        assert t.pool == ((s.pool & ~a.captured) | card_bit if a.is_lay else s.pool & ~a.captured)
    elif s.round < 5:
        assert (t.round, t.turn) == (s.round + 1, 0)
        assert t.hands == (s.deck.hand_mask(ALEX, t.round), s.deck.hand_mask(BOB, t.round))
    else:
        assert t.is_terminal
        assert t.surs == s.surs  # no Sur in round 5, and the final sweep is not one
        if t.last_capturer is not None:
            assert t.pool == 0
            assert t.piles[t.last_capturer] & s.pool & ~a.captured == s.pool & ~a.captured


def random_line(s: GameState, rng: random.Random, until=lambda s: s.is_terminal) -> GameState:
    while not until(s):
        s = s.apply(rng.choice(s.legal_actions()))
    return s


def minimax(s: GameState) -> int:
    """Plain minimax on final utilities: no memo, no banked points, no key."""
    if s.is_terminal:
        return s.utility()
    vals = [minimax(s.apply(a, check=False)) for a in s.legal_actions()]
    return max(vals) if s.player == ALEX else min(vals)


# ---------------------------------------------------------------------------
# Random play


@settings(max_examples=200, deadline=None)
@given(deck_seed=SEEDS, play_seed=SEEDS)
def test_random_games_keep_every_invariant(deck_seed: int, play_seed: int) -> None:
    deck = Deck.from_seed(deck_seed)
    rng = random.Random(play_seed)
    s = GameState.initial(deck)
    prev_points = (0, 0)
    steps = 0
    moves = []
    while not s.is_terminal:
        s.check()  # all 52 cards accounted for, hand sizes match the turn
        hand = s.hands[s.player]
        assert hand, "mover has no card at a non-terminal state"
        acts = s.legal_actions()
        assert acts
        assert_actions_follow_the_rules(hand, s.pool, acts)
        a = rng.choice(acts)
        moves.append(a)
        t = s.apply(a)
        assert_transition(s, a, t)
        # Points so far never decrease: card points, Surs and a clinched clubs bonus only accumulate.
        assert t.points[0] >= prev_points[0] and t.points[1] >= prev_points[1]
        prev_points = t.points
        s = t
        steps += 1
    s.check()
    assert steps == 48
    assert s.legal_actions() == []
    tally = tally_points(deck, moves)  # an independent scorer, from the moves alone
    assert list(s.points) == tally and s.utility() == tally[0] - tally[1]
    if s.last_capturer is not None:
        assert s.pool == 0
        assert s.piles[0] | s.piles[1] == (1 << 52) - 1
        assert sum(s.points) == 20 + 5 * sum(s.surs)


@settings(max_examples=100, deadline=None)
@given(deck_seed=SEEDS, data=st.data())
def test_random_play_drawn_by_hypothesis(deck_seed: int, data: st.DataObject) -> None:
    s = GameState.initial(Deck.from_seed(deck_seed))
    moves = []
    while not s.is_terminal:
        acts = s.legal_actions()
        assert acts and s.hands[s.player]
        i = data.draw(st.integers(min_value=0, max_value=len(acts) - 1))
        a = acts[i]
        assert a.captured & ~s.pool == 0
        moves.append(a)
        t = s.apply(a)
        t.check()
        assert_transition(s, a, t)
        s = t
    tally = tally_points(Deck.from_seed(deck_seed), moves)
    assert s.utility() == s.score_diff == tally[0] - tally[1]
    if s.last_capturer is not None:
        assert sum(s.points) == 20 + 5 * sum(s.surs)


@settings(max_examples=200, deadline=None)
@given(pool_cards=st.lists(st.integers(0, 51), max_size=14, unique=True), hand_seed=SEEDS)
def test_actions_follow_the_rules_on_arbitrary_pools(pool_cards: list[int], hand_seed: int) -> None:
    from pasur.game.rules import legal_actions

    rest = [c for c in range(52) if c not in pool_cards]
    hand = mask_of(random.Random(hand_seed).sample(rest, 4))
    pool = mask_of(pool_cards)
    assert_actions_follow_the_rules(hand, pool, legal_actions(hand, pool))


# ---------------------------------------------------------------------------
# The reference solver against random lines and against plain minimax


def late_position(deck_seed: int, play_seed: int, round_: int) -> tuple[GameState, random.Random]:
    rng = random.Random(play_seed)
    s = random_line(GameState.initial(Deck.from_seed(deck_seed)), rng, until=lambda s: s.round >= round_)
    return s, rng


def play_out(s: GameState, solver: ReferenceSolver, rng: random.Random, random_player: int) -> int:
    """One player picks uniformly at random, the other plays the solver's best action."""
    while not s.is_terminal:
        a = rng.choice(s.legal_actions()) if s.player == random_player else solver.best_action(s)
        s = s.apply(a)
    return s.utility()


@settings(max_examples=20, deadline=None)
@given(deck_seed=SEEDS, play_seed=SEEDS)
def test_reference_value_bounds_random_lines_from_round_4(deck_seed: int, play_seed: int) -> None:
    s, rng = late_position(deck_seed, play_seed, 4)
    assert (s.round, s.turn, s.player) == (4, 0, ALEX)
    solver = ReferenceSolver(s.deck)
    v = solver.value(s)
    # Optimal play by both reaches the value exactly.
    line_state = s
    for a in solver.optimal_line(s):
        line_state = line_state.apply(a)
    assert line_state.utility() == v
    # Against an optimal Bob, a random Alex gets at most the value; against an optimal Alex,
    # a random Bob concedes at least the value. (A random line for *both* players can land on
    # either side of the value, so that alone would not be a sound property.)
    for _ in range(3):
        assert play_out(s, solver, rng, random_player=ALEX) <= v
        assert play_out(s, solver, rng, random_player=BOB) >= v
    # Where Alex is to move, the value is at least that of any child (he may pick it), and where
    # Bob is to move, at most.
    t = s
    while not t.is_terminal:
        vt = solver.value(t)
        children = [solver.value(t.apply(a)) for a in t.legal_actions()]
        if t.player == ALEX:
            assert vt == max(children) and all(vt >= c for c in children)
        else:
            assert vt == min(children) and all(vt <= c for c in children)
        t = t.apply(rng.choice(t.legal_actions()))
    assert solver.value(t) == t.utility()


@settings(max_examples=25, deadline=None)
@given(deck_seed=SEEDS, play_seed=SEEDS, extra=st.integers(min_value=0, max_value=9))
def test_reference_value_equals_plain_minimax_late_in_the_game(deck_seed: int, play_seed: int, extra: int) -> None:
    # From round 4 turn 6 .. round 5 turn 7: small enough for a minimax with no memo at all.
    s, rng = late_position(deck_seed, play_seed, 4)
    for _ in range(6 + extra):
        s = s.apply(rng.choice(s.legal_actions()))
    solver = ReferenceSolver(s.deck)
    assert solver.value(s) == minimax(s)
    vals = solver.action_values(s)
    assert [a for a, _ in vals] == s.legal_actions()
    assert all(v == minimax(s.apply(a)) for a, v in vals)
    best = solver.best_action(s)
    pick = max if s.player == ALEX else min
    assert dict(vals)[best] == pick(v for _, v in vals)
