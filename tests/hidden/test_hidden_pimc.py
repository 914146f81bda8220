"""The round solver against independent oracles, and PIMC where the hidden cards are known."""

from __future__ import annotations

import random

import pytest
import torch

from pasur.game.cards import Deck
from pasur.game.state import ALEX, TURNS_PER_ROUND, GameState
from pasur.hidden.boundary import ClubsBoundary
from pasur.hidden.game import HiddenGame
from pasur.hidden.pimc import PIMCAgent
from pasur.hidden.roundsolve import Roots, solve_round
from pasur.solve.reference import ReferenceSolver, banked_diff, club_key


def _game(seed: int, round_: int, turn: int) -> HiddenGame:
    rng = random.Random(seed * 31 + round_)
    g = HiddenGame(Deck.from_seed(seed))
    while (g.state.round, g.state.turn) < (round_, turn):
        g.apply(rng.choice(g.state.legal_actions()))
    return g


def _roots(states: list[GameState], group=None) -> Roots:
    def t(xs):
        return torch.tensor(xs, dtype=torch.int64)

    return Roots(
        states[0].round,
        states[0].turn,
        (t([s.hands[0] for s in states]), t([s.hands[1] for s in states])),
        t([s.pool for s in states]),
        (t([s.clubs[0] for s in states]), t([s.clubs[1] for s in states])),
        t([0 if s.last_capturer is None else s.last_capturer + 1 for s in states]),
        t([s.undealt() for s in states]),
        t(group if group is not None else list(range(len(states)))),
        torch.ones(len(states), dtype=torch.float64),
    )


@pytest.mark.parametrize("turn", [0, 1, 4, 7])
def test_round_5_values_are_the_reference_solvers(turn):
    states = [_game(seed, 5, turn).state for seed in range(12)]
    sol = solve_round(_roots(states), None)
    for i, s in enumerate(states):
        exact = ReferenceSolver(s.deck).action_values(s)
        assert int(sol.n_actions[i]) == len(exact)
        for j, (a, v) in enumerate(exact):
            assert (int(sol.card[i, j]), int(sol.captured[i, j])) == (a.card, a.captured)
            assert float(sol.q[i, j]) == pytest.approx(v - banked_diff(s))


def _scalar_round(s: GameState, boundary) -> float:
    """Plain minimax to the end of the round, the boundary valued one position at a time."""
    if s.turn == TURNS_PER_ROUND:
        ca, cb = club_key(s.clubs)
        last = 0 if s.last_capturer is None else s.last_capturer + 1

        def one(x):
            return torch.tensor([x], dtype=torch.int64)

        return float(boundary(s.round, one(s.pool), one(ca), one(cb), one(last), one(s.undealt()))[0])
    vals = []
    for a in s.legal_actions():
        c = s.play(a)
        vals.append(banked_diff(c) - banked_diff(s) + _scalar_round(c, boundary))
    return max(vals) if s.player == ALEX else min(vals)


@pytest.mark.parametrize("round_,turn", [(1, 3), (3, 4), (4, 2)])
def test_earlier_rounds_match_a_scalar_minimax_with_the_same_boundary(round_, turn):
    boundary = ClubsBoundary()
    states = [_game(seed, round_, turn).state for seed in range(6)]
    sol = solve_round(_roots(states), boundary)
    for i, s in enumerate(states):
        for j, a in enumerate(s.legal_actions()):
            c = s.play(a)
            expect = banked_diff(c) - banked_diff(s) + _scalar_round(c, boundary)
            assert float(sol.q[i, j]) == pytest.approx(expect, abs=1e-4)


def test_consistent_play_is_never_worth_more_than_seeing_every_world():
    """Choosing one action per information set cannot beat choosing per world: elementwise q_consistent
    <= q_minimax for the maximizing root player, with equality when a decision has one world."""
    g = _game(3, 2, 0)
    info = g.observation(0)
    from pasur.hidden.worlds import sample_worlds, world_state

    w = sample_worlds(info, 12, seed=1)
    states = [world_state(info, w, k) for k in range(w.k)]
    boundary = ClubsBoundary()
    together = _roots(states, [0] * len(states))
    q_min = solve_round(together, boundary, "minimax").q
    q_con = solve_round(together, boundary, "consistent").q
    ok = ~torch.isnan(q_min)
    assert (q_con[ok] <= q_min[ok] + 1e-5).all()
    assert (q_con[ok] < q_min[ok] - 1e-5).any()  # strategy fusion is real here
    alone = _roots(states)  # one world per decision: nothing to be consistent with
    assert torch.allclose(solve_round(alone, boundary, "consistent").q[ok], q_min[ok])


@pytest.mark.parametrize("seed", range(8))
def test_pimc_plays_the_exact_move_when_the_hidden_cards_are_known(seed):
    """In round 5 nothing is left to deal: the unseen cards are the opponent's hand, every sampled
    world is the real one, and PIMC(K) must play the exact solver's move with its values."""
    g = _game(40 + seed, 5, 1 + seed % 6)
    info = g.observation(g.mover)
    assert info.unseen == g.state.hands[1 - g.mover]
    exact = ReferenceSolver(g.state.deck)
    sign = 1 if g.mover == ALEX else -1
    for agent in (PIMCAgent(6), PIMCAgent(6, mode="consistent")):
        assert agent.choose(info) == exact.best_action(g.state)
        got = agent.action_values(info)
        want = exact.action_values(g.state)
        assert [a for a, _ in got] == [a for a, _ in want]
        assert [v for _, v in got] == pytest.approx([sign * v for _, v in want])


def test_textbook_pimc_to_the_end_of_the_game_plays_the_exact_move():
    g = _game(60, 5, 2)
    info = g.observation(g.mover)
    assert PIMCAgent(3, horizon="game").choose(info) == ReferenceSolver(g.state.deck).best_action(g.state)


def test_batched_and_single_decisions_agree():
    games = [_game(70 + s, 3, 2) for s in range(4)]
    infos = [g.observation(g.mover) for g in games]
    agent = PIMCAgent(8, boundary=ClubsBoundary())
    assert agent.choose_batch(infos) == [agent.choose(i) for i in infos]


def test_two_sided_consistency_with_one_hand_per_world_is_the_one_sided_kind():
    g = _game(80, 2, 1)
    info = g.observation(g.mover)
    one = PIMCAgent(6, mode="consistent", boundary=ClubsBoundary()).action_values(info)
    two = PIMCAgent(6, mode="both", others=1, boundary=ClubsBoundary()).action_values(info)
    assert one == two
    more = PIMCAgent(6, mode="both", others=3, boundary=ClubsBoundary()).action_values(info)
    assert [a for a, _ in more] == [a for a, _ in one]


@pytest.mark.parametrize("seed,round_,turn", [(106, 1, 5), (92, 2, 5), (93, 3, 4)])
def test_exact_worlds_average_every_hand_the_opponent_can_hold(seed, round_, turn):
    """The opponent holds one or two cards: with ``exhaustive``, PIMC's value of each action is the
    mean, over every hand it can hold, of a scalar minimax in the world where it holds that hand
    (worlds built here one hand at a time), whatever the seed: the belief is exact, not sampled."""
    import itertools

    import numpy as np

    from pasur.game.cards import cards_of
    from pasur.hidden.worlds import Worlds, world_state

    g = _game(seed, round_, turn)
    info = g.observation(g.mover)
    unseen, n = cards_of(info.unseen), info.opponent_hand_size
    hands = list(itertools.combinations(unseen, n))
    assert n in (1, 2) and len(info.legal_actions()) >= 2
    sign = 1 if g.mover == ALEX else -1
    boundary = ClubsBoundary()
    totals = [0.0] * len(info.legal_actions())
    for hand in hands:
        rest = np.array([[x for x in unseen if x not in hand]], dtype=np.int64)
        s = world_state(info, Worlds(np.array([sum(1 << c for c in hand)], dtype=np.int64), rest, np.ones(1)), 0)
        for j, a in enumerate(s.legal_actions()):
            totals[j] += banked_diff(s.play(a)) + _scalar_round(s.play(a), boundary)
    want = [sign * t / len(hands) for t in totals]
    for seed_ in (0, 7):
        got = PIMCAgent(5, boundary=boundary, seed=seed_, exhaustive=len(hands)).action_values(info)
        assert [a for a, _ in got] == info.legal_actions()
        assert [v for _, v in got] == pytest.approx(want, abs=1e-4)


def test_calls_split_by_roots_give_the_values_of_one_decision_at_a_time(monkeypatch):
    """Decisions with exhaustive worlds (the opponent's last card: dozens of worlds) and sampled ones
    (K each) in one batch, cut into calls of at most a few roots: the same values as one at a time."""
    import pasur.hidden.pimc as pimc

    games = [_game(110 + s, 2, t) for s in range(3) for t in (1, 5)]
    infos = [g.observation(g.mover) for g in games]
    agent = PIMCAgent(4, boundary=ClubsBoundary(), exhaustive=60, mode="consistent", infer=True)
    alone = [agent.action_values(i) for i in infos]
    monkeypatch.setattr(pimc, "MAX_ROOTS", 30)
    assert agent.values_batch(infos) == alone


def test_exact_flag_needs_the_round_horizon():
    from pasur.common.errors import PasurInputError
    from pasur.hidden.registry import EXACT_WORLDS, make_agent

    agent = make_agent("ispimc:20:infer:exact")
    assert (agent.exhaustive, agent.infer, agent.mode) == (EXACT_WORLDS, True, "consistent")
    with pytest.raises(PasurInputError, match="round horizon"):
        make_agent("pimc:10:game:exact")
    with pytest.raises(ValueError, match="horizon"):
        PIMCAgent(5, horizon="game", exhaustive=10)
