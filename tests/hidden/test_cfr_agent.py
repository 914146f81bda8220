"""The CFR agent (issue 42, item 2): its public belief state, its range solve against the exact
solver, safe re-solving, and its spec."""

from __future__ import annotations

import itertools
import math
from dataclasses import replace

import numpy as np
import pytest

from pasur.common.errors import PasurInputError
from pasur.game.cards import JACK, Deck, rank
from pasur.game.variants import get_variant
from pasur.hidden.cfr_agent import CFRAgent, belief_state
from pasur.hidden.exact_cfr import HiddenCFR, HiddenCFRConfig
from pasur.hidden.game import HiddenGame
from pasur.hidden.history_tree import build_tree
from pasur.hidden.rangesolve import PublicRoot, RangeSolve, expand, history_tree, splice
from pasur.hidden.registry import make_agent

DUO = get_variant("duo")  # one deal of two cards: the whole game is one round


def _duo_pairs(pool: int) -> tuple[np.ndarray, np.ndarray]:
    """Every (Alex's hand, Bob's hand) of duo with that pool."""
    rest = [c for c in DUO.cards if not pool >> c & 1]
    h0, h1 = [], []
    for a in itertools.combinations(rest, 2):
        for b in itertools.combinations([c for c in rest if c not in a], 2):
            h0.append(sum(1 << c for c in a))
            h1.append(sum(1 << c for c in b))
    return np.array(h0, dtype=np.int64), np.array(h1, dtype=np.int64)


def _duo_solve(pool: int, iterations: int) -> RangeSolve:
    hands = _duo_pairs(pool)
    exp = expand(PublicRoot(0, 0, pool, (0, 0), 0, DUO), hands, np.zeros(len(hands[0]), np.int64), None)
    return RangeSolve(history_tree(exp, 0, np.arange(len(hands[0])), np.ones(len(hands[0]))), iterations)


def _pools() -> list[int]:
    non_jacks = [c for c in DUO.cards if rank(c) != JACK]
    return [sum(1 << c for c in pc) for pc in itertools.combinations(non_jacks, DUO.pool_size)]


def _information_sets(solve: RangeSolve) -> tuple[int, int]:
    """Each player's information sets in a solve's histories: distinct (own hand, public moves)
    at each decision level (the table merges a level's forced moves into one row)."""
    exp, counts = solve.rt.expansion, [0, 0]
    for i in range(exp.depth):
        hand = exp.hand_id[exp.mover(i)][exp.pair[i]]
        counts[exp.mover(i)] += len(set(zip(hand.tolist(), exp.pub[i].tolist(), strict=True)))
    return counts[0], counts[1]


def test_range_solve_of_a_one_round_game_equals_the_exact_solver():
    """duo is one round: the range solve of each pool over every pair of hands has the exact
    tree's information sets of that pool (the same count, summed over the pools), and averaged
    over the pools (each as likely) its value is the game's value that the exact solver finds."""
    tree = build_tree(DUO)
    exact = HiddenCFR(tree, HiddenCFRConfig("dcfr"))
    exact.iterate(1000)
    policy = exact.average_policy()
    assert exact.exploitability(policy) < 1e-7
    solves = [_duo_solve(pool, 1000) for pool in _pools()]
    counts = np.sum([_information_sets(s) for s in solves], axis=0)
    assert tuple(counts.tolist()) == tree.n_infosets
    assert max(s.cfr.exploitability(s.policy) for s in solves) < 1e-7
    mean = float(np.mean([s.cfr.value(s.policy) for s in solves]))
    assert mean == pytest.approx(exact.value(policy), abs=1e-6)


def test_a_re_solve_after_the_opponents_move_is_no_more_exploitable_than_the_blueprint():
    """The blueprint: a short solve of duo's round (exploitable). After Alex's first move, Bob
    re-solves the rest with the gadget; its strategy spliced into the blueprint gives Alex's best
    response no more than the blueprint did, at every public node of that depth, and less at some."""
    checked, better = 0, 0
    for pool in _pools():
        blueprint = _duo_solve(pool, 3)
        exp = blueprint.rt.expansion
        before = blueprint.cfr.best_response(blueprint.policy, 0)[0]  # Alex's margin: Alex maximizes it
        for pub in np.unique(exp.pub[1]).tolist():
            nodes, weight, gadget = blueprint.resolve_inputs(1, pub, epsilon=0.1)
            resolved = RangeSolve(history_tree(exp, 1, nodes, weight, gadget), 200)
            after = blueprint.cfr.best_response(splice(blueprint, resolved, 1), 0)[0]
            assert after <= before + 1e-9
            checked += 1
            better += after < before - 1e-3
    assert checked >= 20 and better >= 1


def _two_views() -> tuple[HiddenGame, HiddenGame]:
    """Two games that Alex cannot tell apart after two moves each: Bob's unplayed card and an
    undealt card swap places."""
    deck = Deck.from_seed(11)
    games = [HiddenGame(deck)]
    moves = []
    for _ in range(4):
        g = games[0]
        a = g.state.legal_actions()[0]
        moves.append(a)
        g.apply(a)
    bob_left = games[0].state.hands[1]
    cards = list(deck.cards)
    swap_from = next(i for i in range(8, 12) if bob_left >> cards[i] & 1)
    cards[swap_from], cards[20] = cards[20], cards[swap_from]
    other = HiddenGame(replace(deck, cards=tuple(cards)))
    for a in moves:
        other.apply(a)
    assert other.state.hands[1] != games[0].state.hands[1]
    assert other.observation(0) == games[0].observation(0)
    return games[0], other


def test_the_belief_state_is_built_from_the_information_state_alone():
    """The same information state with another opponent hand: the same belief state, strategy and
    move; the opponent's range holds only cards Alex has not seen (or saw Bob play this round),
    its true hand at most one of them, with the same weight as every other."""
    first, second = _two_views()
    info = first.observation(0)
    b1, b2 = belief_state(info, 48, 0, seed=3), belief_state(second.observation(0), 48, 0, seed=3)
    fields = lambda b: (*b.hands, b.pairs, b.weight, b.remaining)  # noqa: E731
    assert all(np.array_equal(x, y) for x, y in zip(fields(b1), fields(b2), strict=True))
    opp_played = info.played_this_round(1)
    assert all((h & ~opp_played) & ~info.unseen == 0 for h in b1.hands[1].tolist())
    assert all(h & opp_played == opp_played for h in b1.hands[1].tolist())
    assert int(b1.hands[0][0]) == info.hand | info.played_this_round(0)
    assert len(set(b1.weight.tolist())) == 1
    agents = [CFRAgent(3, 4, seed=1), CFRAgent(3, 4, seed=1)]
    s1, s2 = agents[0].strategy(info), agents[1].strategy(second.observation(0))
    assert s1[0] == s2[0] and np.allclose(s1[1], s2[1]) and abs(s1[1].sum() - 1) < 1e-9
    assert agents[0].choose(info) == agents[1].choose(second.observation(0))


def test_the_agent_plays_a_small_variant_to_the_end():
    """On tiny (exact boundary between its two deals) the agent plays legal moves, re-solving
    within the round, and its strategy sums to 1."""
    from pasur.hidden.agents import GreedyAgent
    from pasur.hidden.game import play_hidden

    agent = CFRAgent(4, 16, seed=0)
    seen = []
    result = play_hidden(
        Deck.from_seed(2, get_variant("tiny")),
        (agent, GreedyAgent()),
        on_move=lambda info, a: seen.append(info.stage),
    )
    assert result.state.is_terminal
    assert len([s for s in seen if s.endswith(".0")]) == 4


@pytest.mark.parametrize(
    ("spec", "message"),
    [
        ("cfr:0", "opponent hands must be an integer from 1 to 64"),
        ("cfr:65", "opponent hands"),
        ("cfr:4:m0", "own hands (:mM) must be an integer from 1 to 64"),
        ("cfr:4:m2:m3", "unknown or repeated option 'm3'"),
        ("cfr:4:it0", "iterations (:itN) must be an integer from 1 to 10,000"),
        ("cfr:4:bogus", "unknown or repeated option 'bogus'"),
        ("cfr:4:fixed:fixed", "unknown or repeated option 'fixed'"),
        ("cfr:4:it5:it6", "unknown or repeated option 'it6'"),
    ],
)
def test_bad_specs_are_refused_in_one_line(spec, message):
    with pytest.raises(PasurInputError, match=message.replace("(", r"\(").replace(")", r"\)")):
        make_agent(spec)


def test_specs_set_hands_iterations_and_re_solving():
    agent = make_agent("cfr:6:m2:it20:fixed", seed=2)
    assert (agent.name, agent.hands, agent.own, agent.iterations, agent.resolve, agent.seed) == (
        "cfr:6:m2:it20:fixed",
        6,
        2,
        20,
        False,
        2,
    )
    default = make_agent("cfr")
    assert (default.hands, default.own, default.iterations, default.resolve) == (16, 4, 32, True)


def test_when_the_opponent_leaves_the_sampled_hands_the_agent_samples_hands_holding_its_cards():
    """With one sampled hand a side, Bob's reply is almost surely a card of no sampled hand: the
    next decision solves the round again from its start over opponent hands that all hold the card
    Bob played (so the solve's histories weigh Bob's choice), still a distribution over the legal
    actions. (Before: a solve from the current position, Bob's choice forgotten.)"""
    game = HiddenGame(Deck.from_seed(4))
    agent = CFRAgent(1, 2, seed=0)
    game.apply(agent.choose(game.observation(0)))
    game.apply(game.state.legal_actions()[-1])
    info = game.observation(0)
    first = agent._rounds[next(reversed(agent._rounds))]
    assert first.expansion.root.turn == 0
    bob_card = info.moves[-1].card
    assert not np.any((first.expansion.hands[1] >> bob_card) & 1)  # the sample missed Bob's card
    legal, probs = agent.strategy(info)
    assert legal == info.legal_actions() and abs(probs.sum() - 1) < 1e-9
    again = agent._rounds[next(reversed(agent._rounds))]
    assert again.expansion.root.turn == 0 and again is not first
    assert np.all((again.expansion.hands[1] >> bob_card) & 1)
    assert again.solve.rt.level == 2  # re-solved with the gadget at the current public node


def test_own_range_smaller_than_the_opponents_and_enumerated_when_few():
    """``own`` sets the size of the agent's range apart from the opponent's (its true hand first);
    a range of at most ``exact`` hands is enumerated whole (tiny, solved from where it is: every
    hand the agent could hold)."""
    game = HiddenGame(Deck.from_seed(5))
    info = game.observation(0)
    b = belief_state(info, 12, 0, seed=1, own=3)
    assert (len(b.hands[1]), len(b.hands[0])) == (12, 3) and int(b.hands[0][0]) == info.hand
    tiny = HiddenGame(Deck.from_seed(2, get_variant("tiny"))).observation(0)
    whole = belief_state(tiny, 2, 100, seed=1, own=2, here=True)
    n_own = math.comb((tiny.unseen | tiny.hand).bit_count(), tiny.hand.bit_count())
    assert len(set(whole.hands[0].tolist())) == n_own == len(whole.hands[0]) > 2
    assert int(whole.hands[0][0]) == tiny.hand


def test_a_solve_from_the_rounds_start_late_in_a_round_keeps_its_pairs_bounded():
    """Late in a round few hands remain possible (one card left: some 30 a side), but a solve from
    the round's start expands the whole round for every pair: at most MAX_PAIRS pairs, the
    opponent's range still holding every card it played this round."""
    from pasur.hidden.cfr_agent import MAX_PAIRS

    game = HiddenGame(Deck.from_seed(6))
    for _ in range(6):
        game.apply(game.state.legal_actions()[0])
    info = game.observation(0)
    assert info.hand.bit_count() == 1
    b = belief_state(info, 16, 100, seed=0, own=4)
    assert 16 <= len(b.pairs) <= MAX_PAIRS
    opp_played = info.played_this_round(1)
    assert all(h & opp_played == opp_played for h in b.hands[1].tolist())


def test_a_solve_over_the_node_budget_keeps_whole_opponent_hands_within_it(monkeypatch):
    """With a budget below the expansion's nodes, the solve keeps only some opponent hands, every
    pair of each (so each kept hand's range of the agent's hands is whole), its nodes within the
    budget, the agent's true hand among them; the move is still a distribution over the legal
    actions."""
    import pasur.hidden.cfr_agent as cfr_agent

    monkeypatch.setattr(cfr_agent, "NODE_BUDGET", 30_000)
    game = HiddenGame(Deck.from_seed(5))
    info = game.observation(0)
    agent = CFRAgent(8, 2, own=2, seed=0)
    legal, probs = agent.strategy(info)
    assert legal == info.legal_actions() and abs(probs.sum() - 1) < 1e-9
    state = agent._rounds[next(reversed(agent._rounds))]
    exp, roots = state.expansion, state.solve.rt.node[0]
    kept_opp = set(exp.hand_id[1][roots].tolist())
    assert 1 <= len(kept_opp) < len(set(exp.hand_id[1].tolist()))
    for h in kept_opp:  # every pair of a kept hand
        assert set(np.flatnonzero(exp.hand_id[1] == h).tolist()) <= set(roots.tolist())
    assert sum(len(x) for x in state.solve.rt.node) <= 30_000
    assert 0 in set(exp.hand_id[0][roots].tolist())


def test_the_boundary_is_asked_once_per_distinct_leaf_and_every_leaf_gets_its_value():
    """Many orders of play end a round alike: the boundary is asked about each distinct leaf
    (pool, clubs, last capturer, cards to come) once, and every leaf's value is what the boundary
    gives for that leaf alone; in a first deal's expansion the distinct leaves are a few of all."""
    import torch

    from pasur.hidden.boundary import ClubsBoundary
    from pasur.hidden.rangesolve import _after

    clubs, asked = ClubsBoundary(), []

    def boundary(round_, pool, ca, cb, last, remaining):
        asked.append(len(pool))
        return clubs(round_, pool, ca, cb, last, remaining)

    rng = np.random.default_rng(0)
    n = 500
    t = lambda x: torch.as_tensor(np.asarray(x, dtype=np.int64))  # noqa: E731
    pool = t(rng.choice([0b1011, 1 << 40 | 1 << 51, 1 << 13 | 1 << 26], n))
    ca, cb, last, pair = (
        t(rng.integers(0, 8, n)),
        t(rng.integers(0, 2, n)),
        t(rng.integers(0, 3, n)),
        t(rng.integers(0, 3, n)),
    )
    remaining = t([0b1100 << 20, 0b1100 << 20, 1 << 39 | 1 << 14])  # pairs 0 and 1: the same cards to come
    front = [pool, pool, pool, ca, cb, last, pair]
    value = _after(PublicRoot(0, 0, 0, (0, 0), 0), front, remaining, boundary)
    rows = torch.stack([pool, ca, cb, last, remaining[pair]], 1)
    assert asked == [len(torch.unique(rows, dim=0))] and asked[0] < n
    assert torch.equal(value, clubs(0, pool, ca, cb, last, remaining[pair]).to(torch.float64))
    info = HiddenGame(Deck.from_seed(7)).observation(0)
    b = belief_state(info, 4, 0, seed=0, own=2)
    exp = expand(b.root, (b.hands[0][b.pairs[:, 0]], b.hands[1][b.pairs[:, 1]]), b.remaining, boundary)
    assert asked[1] < len(exp.pub[exp.depth]) / 4


@pytest.mark.parametrize("work_nodes", [10_000, 20_000, 10**9])  # 30,338 nodes: half, 21, all
def test_a_solve_over_the_work_budget_runs_fewer_iterations_at_least_half(monkeypatch, work_nodes):
    """A solve of the standard game over WORK_NODES nodes runs its iterations scaled by
    WORK_NODES / nodes, never under half of them; a smaller one runs them all."""
    import pasur.hidden.cfr_agent as cfr_agent

    monkeypatch.setattr(cfr_agent, "WORK_NODES", work_nodes)
    info = HiddenGame(Deck.from_seed(5)).observation(0)
    agent = CFRAgent(4, 32, own=2, seed=0)
    legal, probs = agent.strategy(info)
    assert legal == info.legal_actions() and abs(probs.sum() - 1) < 1e-9
    base = agent._rounds[next(reversed(agent._rounds))].base
    nodes = base.rt.tree.n_histories
    expected = 32 if nodes <= work_nodes else max(16, 32 * work_nodes // nodes)
    assert base.cfr.iteration == expected
    assert (expected < 32) == (work_nodes < nodes) and expected >= 16


def test_a_forced_move_is_played_without_a_solve():
    """A hand's last card with one legal action: the agent plays it with probability 1 and
    neither solves nor re-solves (no later decision of the round needs it)."""
    game = HiddenGame(Deck.from_seed(3))
    agent = CFRAgent(2, 4, own=2, seed=0)
    while game.observation(0).hand.bit_count() > 1 or game.mover != 0:
        info = game.observation(game.mover)
        game.apply(agent.choose(info) if game.mover == 0 else info.legal_actions()[0])
    info = game.observation(0)
    assert len(info.legal_actions()) == 1
    kept = {k: (id(v), id(v.solve)) for k, v in agent._rounds.items()}
    legal, probs = agent.strategy(info)
    assert legal == info.legal_actions() and probs.tolist() == [1.0]
    assert {k: (id(v), id(v.solve)) for k, v in agent._rounds.items()} == kept
