"""The PIMC family on the small variants (issue 41, item 4): the round horizon (``pimc:K``,
``ispimc:K``, ``ispimc:K:infer``) scores by the information state's variant and values the deal
boundary exactly (:mod:`pasur.hidden.variant_boundary`); the game horizon (``pimc:K:game``)
solves its worlds with the tensor engine's forest of the variant. Each is checked against the
scalar engine and the open-hand reference solver, which read the variant independently."""

from __future__ import annotations

from itertools import combinations, permutations

import pytest
import torch

from pasur.game.cards import Deck
from pasur.game.state import GameState
from pasur.game.variants import get_variant
from pasur.hidden.game import HiddenGame
from pasur.hidden.infostate import VariantInfoState
from pasur.hidden.registry import make_agent
from pasur.hidden.roundsolve import clubs_key
from pasur.hidden.variant_boundary import ExactBoundary
from pasur.hidden.worlds import sample_worlds, world_state
from pasur.solve.reference import ReferenceSolver, banked_diff

ROUND_SPECS = ["pimc:4", "ispimc:4", "ispimc:4:infer"]
GAME_SPEC = "pimc:2:game"


def _play(name: str, specs: tuple[str, str], seed: int) -> HiddenGame:
    """One game of the variant ``name`` between two agents, every choice checked legal."""
    v = get_variant(name)
    agents = [make_agent(spec, seed=seed) for spec in specs]
    game = HiddenGame(Deck.from_seed(seed, v))
    while not game.is_terminal:
        info = game.observation(game.mover)
        assert type(info) is VariantInfoState and info.variant == v
        action = agents[game.mover].choose(info)
        assert action in info.legal_actions()
        game.apply(action)  # the referee checks legality too
    assert len(game.moves) == 2 * v.hand_size * v.deals
    return game


@pytest.mark.parametrize("name", ["tiny", "micro"])
@pytest.mark.parametrize("spec", ROUND_SPECS)
def test_the_round_horizon_plays_legal_complete_games_of_a_variant(name, spec):
    for seed in range(2):
        _play(name, (spec, "greedy") if seed else ("greedy", spec), seed)


@pytest.mark.parametrize("name", ["tiny", "micro"])
def test_the_game_horizon_plays_legal_complete_games_of_a_variant(name):
    _play(name, (GAME_SPEC, "greedy"), 0)
    _play(name, ("greedy", GAME_SPEC), 1)


def test_the_game_horizon_values_each_world_by_the_open_hand_game_of_the_variant():
    """``pimc:K:game``'s action values are the mean over its K worlds of the reference solver's
    game values of each world (the tensor engine's forest, built from the variant's states)."""
    v, checked = get_variant("tiny"), 0
    agent = make_agent(GAME_SPEC, seed=1)
    game = HiddenGame(Deck.from_seed(0, v))
    while not game.is_terminal:
        info = game.observation(game.mover)
        got = agent.action_values(info)
        if len(got) > 1:
            worlds = sample_worlds(info, 2, 1, balanced=True)  # the agent's worlds: its seed, its draw
            states = [world_state(info, worlds, k) for k in range(worlds.k)]
            sign = 1 if info.player == 0 else -1
            per_world = [[sign * x for _, x in ReferenceSolver(s.deck).action_values(s)] for s in states]
            expected = [sum(col) / len(col) for col in zip(*per_world, strict=True)]
            assert [x for _, x in got] == pytest.approx(expected, abs=1e-5)
            checked += 1
        game.apply(agent.choose(info))
    assert checked > 1


def test_decisions_that_share_a_hand_and_pool_share_a_forest_and_get_their_own_values():
    """The game horizon solves the worlds of decisions with the same mover's hand and pool in one
    forest (the exact exploitability asks every information set at once): each decision's values
    are those it gets asked alone."""
    v, explore = get_variant("tiny"), make_agent("random", seed=0)
    groups: dict[tuple, set] = {}
    for seed in range(40):
        game = HiddenGame(Deck.from_seed(seed, v))
        while not game.is_terminal:
            info = game.observation(game.mover)
            if len(info.legal_actions()) > 1 and info.round == v.final_round:
                groups.setdefault((info.turn, info.hand, info.pool), set()).add(info)
            game.apply(explore.choose(info))
    shared = [info for same in groups.values() if len(same) > 1 for info in same]
    assert len(shared) >= 4
    agent = make_agent(GAME_SPEC, seed=1)
    alone = [agent.values_batch([info])[0] for info in shared]
    together = agent.values_batch(shared)
    assert [[a for a, _ in vals] for vals in together] == [[a for a, _ in vals] for vals in alone]
    assert [[x for _, x in vals] for vals in together] == [pytest.approx([x for _, x in vals]) for vals in alone]


def _boundary_of(state: GameState, variant) -> float:
    """The exact boundary value as the agents ask for it, at ``state`` (the start of a deal)."""
    ca, cb = clubs_key(torch.tensor([state.clubs[0]]), torch.tensor([state.clubs[1]]), variant)
    last = 0 if state.last_capturer is None else state.last_capturer + 1
    t = lambda x: torch.tensor([x], dtype=torch.int64)  # noqa: E731
    remaining = state.hands[0] | state.hands[1] | state.undealt()
    return float(ExactBoundary(variant)(state.round - 1, t(state.pool), ca, cb, t(last), t(remaining))[0])


def _brute_force_boundary(state: GameState) -> float:
    """The mean over every order of the cards still to deal of the open-hand future value
    (reference solver, scalar engine) from ``state``, the start of a deal."""
    v, deck = state.variant, state.deck
    dealt = v.pool_size + 2 * v.hand_size * state.round
    values = []
    for order in permutations(deck.cards[dealt:]):
        other = Deck(deck.cards[:dealt] + order, v)
        hands = (other.hand_mask(0, state.round), other.hand_mask(1, state.round))
        s = state.with_(deck=other, hands=hands)
        values.append(ReferenceSolver(other).value(s) - banked_diff(s))
    return sum(values) / len(values)


@pytest.mark.parametrize("name", ["tiny", "micro"])
def test_the_exact_boundary_value_is_the_expected_open_hand_value_over_every_next_deal(name):
    v, seen = get_variant(name), set()
    for seed in range(6):
        game = HiddenGame(Deck.from_seed(seed, v))
        greedy = make_agent("greedy")
        while game.state.round == 0:
            game.apply(greedy.choose(game.observation(game.mover)))
        state = game.state
        expected = _brute_force_boundary(state)
        assert _boundary_of(state, v) == pytest.approx(expected, abs=1e-5)
        seen.add(round(expected, 6))
    assert len(seen) > 1  # the positions differ in value: not a constant that happens to match


def _round_minimax(state: GameState, boundary: dict) -> float:
    """Open-hand minimax of the rest of ``state``'s deal (scalar engine), valued at the next deal
    by the brute-force boundary value: Alex minus Bob, banked points included."""
    if state.round > 0:
        key = (state.pool, state.piles, state.last_capturer)
        if key not in boundary:
            boundary[key] = _brute_force_boundary(state)
        return banked_diff(state) + boundary[key]
    values = [_round_minimax(state.apply(a), boundary) for a in state.legal_actions()]
    return max(values) if state.player == 0 else min(values)


def test_the_round_horizon_values_an_action_by_the_exact_boundary_behind_the_replies():
    """``pimc:K:exact`` at Alex's first card of the first deal: each action's value is the mean,
    over every hand Bob can hold, of the deal's open-hand minimax up to the boundary value after
    it, found here by brute force (every order of the cards still to deal, reference solver)."""
    v, agent = get_variant("tiny"), make_agent("pimc:50:exact")
    for seed in range(2):
        deck = Deck.from_seed(seed, v)
        info = HiddenGame(deck).observation(0)
        dealt = v.pool_size + v.hand_size  # the pool and Alex's hand stay; Bob's hand varies
        unseen = [c for c in deck.cards if (info.unseen >> c) & 1]
        per_world, boundary = [], {}
        for bob in combinations(unseen, v.hand_size):
            world_deck = Deck(deck.cards[:dealt] + bob + tuple(c for c in unseen if c not in bob), v)
            world = GameState.initial(world_deck)
            per_world.append([_round_minimax(world.apply(a), boundary) for a in world.legal_actions()])
        expected = [sum(col) / len(col) for col in zip(*per_world, strict=True)]
        got = [val for _, val in agent.action_values(info)]
        assert len(got) > 1 and got == pytest.approx(expected, abs=1e-5)


@pytest.mark.parametrize("name", ["tiny", "mini"])  # micro's one card has a choice too rarely
def test_the_last_deal_is_valued_exactly_by_the_variants_scores(name):
    """In the last deal the only unseen cards are the opponent's hand: PIMC's one world is the
    real state, and its action values are the reference solver's game values (points, Surs,
    final sweep, clubs bonus all the variant's)."""
    v, checked = get_variant(name), 0
    for seed in range(4):
        game = HiddenGame(Deck.from_seed(seed, v))
        agent = make_agent("pimc:1", seed=seed)
        while not game.is_terminal:
            info = game.observation(game.mover)
            if info.round == v.final_round and len(info.legal_actions()) > 1:
                solver = ReferenceSolver(game.state.deck)
                sign = 1 if info.player == 0 else -1
                exact = [(a, sign * val) for a, val in solver.action_values(game.state)]
                got = agent.action_values(info)
                assert [a for a, _ in got] == [a for a, _ in exact]
                assert [val for _, val in got] == pytest.approx([val for _, val in exact], abs=1e-5)
                checked += 1
            game.apply(agent.choose(info))
    assert checked > 0


def test_the_learned_belief_of_the_standard_game_refuses_a_variant():
    info = HiddenGame(Deck.from_seed(0, get_variant("tiny"))).observation(0)
    agent = make_agent("pimc:4")
    agent.belief = object()  # any learned belief: it is refused before it is asked
    with pytest.raises(ValueError, match="standard game"):
        agent.choose(info)
