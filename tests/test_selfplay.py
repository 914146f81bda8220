"""Batched self-play against the scalar engine: every game replays move by move."""

from __future__ import annotations

import functools

import pytest
import torch

from helpers import assert_batch_replays
from pasur.game.cards import Deck
from pasur.game.state import GameState
from pasur.play.agents import GreedyAgent, play_game
from pasur.play.selfplay import BatchExact, BatchGreedy, BatchRandom, BatchState, play_batch


def replay_utility(deck: Deck, batch: BatchState, game: int) -> int:
    """Game ``game`` of a finished batch, replayed through the scalar engine from its history
    (every move checked legal): its utility."""
    from pasur.game.rules import Action

    s = GameState.initial(deck)
    for card, captured in batch.history:
        s = s.apply(Action(int(card[game]), int(captured[game])))
    assert s.is_terminal
    return s.utility()


def test_random_games_replay_in_the_scalar_engine():
    deck = Deck.from_seed(11)
    batch = play_batch(deck, BatchRandom(seed=1), BatchRandom(seed=2), n_games=40)
    assert len({tuple(batch.actions_of(g)) for g in range(40)}) > 30  # the games differ
    assert_batch_replays(GameState.initial(deck), batch)


def test_legal_actions_per_game_are_the_scalar_engines():
    deck = Deck.from_seed(5)
    state = BatchState.initial(deck, 16)
    agent = BatchRandom(seed=0)
    while not state.is_terminal:
        actions = state.legal_actions()
        for g in range(state.n):
            scalar = GameState.initial(deck)
            for x in state.actions_of(g):
                scalar = scalar.apply(x)
            mine = actions.row == g
            got = list(zip(actions.card[mine].tolist(), actions.captured[mine].tolist(), strict=True))
            assert got == [(x.card, x.captured) for x in scalar.legal_actions()]
        state.apply(actions, agent.choose(state, actions))


def test_batch_greedy_is_the_scalar_greedy_agent():
    for seed in range(3):
        deck = Deck.from_seed(seed)
        batch = play_batch(deck, BatchGreedy(), BatchGreedy(), n_games=3)
        scalar = play_game(deck, GreedyAgent(), GreedyAgent())
        for g in range(3):
            assert batch.actions_of(g) == list(scalar.actions)
        assert int(batch.utility()[0]) == scalar.final.utility()


def test_exact_play_reaches_the_exact_value_in_every_game(reference_decks):
    nd = reference_decks[2]
    exact = BatchExact()
    both = play_batch(nd.deck, exact, exact, n_games=5)
    assert both.utility().tolist() == [nd.value] * 5
    # Alex plays exactly against a random Bob: at least the value in every game
    vs_random = play_batch(nd.deck, exact, BatchRandom(seed=3), n_games=20)
    assert bool((vs_random.utility() >= nd.value).all())


def test_random_agent_is_seeded():
    deck = Deck.from_seed(2)
    one = play_batch(deck, BatchRandom(seed=7), BatchRandom(seed=8), n_games=10).utility()
    two = play_batch(deck, BatchRandom(seed=7), BatchRandom(seed=8), n_games=10).utility()
    assert torch.equal(one, two)


def _tree_and_strategy(deck, mode="compact"):
    from pasur.solve.exact import pure_strategy, solve_exact
    from pasur.solve.tree import build_tree

    tree = build_tree(GameState.initial(deck), mode)
    return tree, pure_strategy(solve_exact(tree))


def test_tracked_nodes_offer_each_games_legal_actions():
    from pasur.play.selfplay import TreeTracker

    deck = Deck.from_seed(4)
    tree, _ = _tree_and_strategy(deck)
    state = BatchState.initial(deck, 12)
    state.tracker = TreeTracker(tree, 12)
    agent = BatchRandom(seed=5)
    while not state.is_terminal:
        actions = state.legal_actions()
        for g in range(0, 12, 3):
            mine = actions.row == g
            got = list(zip(actions.card[mine].tolist(), actions.captured[mine].tolist(), strict=True))
            node_actions = tree.out_actions(state.round, state.turn, int(state.tracker.node[g]))
            assert got == [(a.card, a.captured) for a in node_actions]
        state.apply(actions, agent.choose(state, actions))


def test_strategy_agent_plays_the_exact_strategy_to_the_exact_value(reference_decks):
    from pasur.play.selfplay import BatchStrategy

    nd = reference_decks[2]
    for mode in ("compact", "paper"):
        tree, pure = _tree_and_strategy(nd.deck, mode)
        both = play_batch(nd.deck, BatchStrategy(pure, 1), BatchStrategy(pure, 2), n_games=6, tree=tree)
        assert both.utility().tolist() == [nd.value] * 6
        vs_random = play_batch(nd.deck, BatchStrategy(pure, 1), BatchRandom(seed=9), n_games=50, tree=tree)
        assert bool((vs_random.utility() >= nd.value).all())


def test_cfr_strategy_against_random_guarantees_about_the_value(reference_decks, tmp_path):
    """An equilibrium from DCFR, written to Parquet and read back, does at least as well against
    random play as the exact value says it can guarantee (within the 95 % interval)."""
    from pasur.play.measures import matchup_measures
    from pasur.play.selfplay import BatchStrategy
    from pasur.solve.cfr import CFRParams
    from pasur.solve.rounds import solve_cfr
    from pasur.solve.strategy_io import read_strategy_table, write_strategy_table
    from pasur.solve.tree import build_tree

    nd = reference_decks[1]
    tree = build_tree(GameState.initial(nd.deck), "compact")
    res = solve_cfr(tree, CFRParams(method="dcfr", iterations=None, target_exploitability=5e-4))
    write_strategy_table(tmp_path / "s.parquet", tree, res.strategy, nd.id)
    strategy = read_strategy_table(tmp_path / "s.parquet", tree)
    batch = play_batch(nd.deck, BatchStrategy(strategy, 1), BatchRandom(seed=2), n_games=2000, tree=tree)
    m = matchup_measures(batch.utility())
    assert m["ci95"][1] >= nd.value - 0.01 and m["mean"] > nd.value
    # every game, replayed move by move through the scalar engine, ends with the utility the
    # batch reports; the rates are those of the replayed games
    every = [replay_utility(nd.deck, batch, i) for i in range(2000)]
    assert every == batch.utility().tolist()
    assert m["win_rate"] == sum(u > 0 for u in every) / 2000
    assert m["tie_rate"] == sum(u == 0 for u in every) / 2000


def _cache_test_games(deck, tree, strategy):
    """The games of the cache test: a table against random and random against random, each in two
    batches (the second meets the tables the first one kept, or not)."""
    from pasur.play.selfplay import BatchStrategy

    start, out = GameState.initial(deck), []
    for alex, bob in ((BatchStrategy(strategy, 1), BatchRandom(seed=2)), (BatchRandom(seed=3), BatchRandom(4))):
        for _ in range(2):
            b = play_batch(deck, alex, bob, n_games=25, tree=tree, start=start)
            out.append([b.actions_of(g) for g in range(25)])
    return out


@functools.cache
def _games_with_every_table_kept(mode):
    """Deck 36's tree and table in ``mode`` and their games with the default budget (one build per
    mode and process, shared by both budgets: the paper tree of a whole deck is the slow part).
    Deck 36 has the smallest tree of seeds 0 to 39: its paper tree builds in a tenth of deck 4's
    time, and its tables (200 MB kept whole) are still far over the test's budgets."""
    deck = Deck.from_seed(36)
    tree, strategy = _tree_and_strategy(deck, mode)
    return deck, tree, strategy, _cache_test_games(deck, tree, strategy)


@pytest.mark.parametrize("mode", ["compact", "paper"])
@pytest.mark.parametrize("budget", [0, 60_000])
def test_a_bounded_self_play_cache_plays_the_same_games(monkeypatch, mode, budget):
    """A tail deck's per-layer self-play tables would take about 17 GB kept whole; past the budget
    (none at all, or a few layers' worth here) they are made again for each batch, and the games
    must be the same, move for move, as with every table kept, for every agent that uses them."""
    from pasur.play import selfplay

    deck, tree, strategy, kept = _games_with_every_table_kept(mode)
    tree.__dict__.pop("_selfplay_cache", None)  # the same tree, its tables forgotten
    monkeypatch.setattr(selfplay, "SELFPLAY_CACHE_BYTES", budget)
    try:
        assert _cache_test_games(deck, tree, strategy) == kept
        cache = selfplay._TreeCache.of(tree)
    finally:
        tree.__dict__.pop("_selfplay_cache", None)  # the next test meets the default budget afresh
    assert cache.nbytes <= budget and (budget == 0) == (not cache.entries)
