"""Batched self-play against the scalar engine: every game replays move by move."""

from __future__ import annotations

import torch

from pasur.agents import GreedyAgent, play_game
from pasur.cards import Deck
from pasur.selfplay import BatchExact, BatchGreedy, BatchRandom, BatchState, play_batch
from pasur.state import GameState


def test_random_games_replay_in_the_scalar_engine():
    deck = Deck.from_seed(11)
    batch = play_batch(deck, BatchRandom(seed=1), BatchRandom(seed=2), n_games=40)
    a, b = batch.points()
    assert len({tuple(batch.actions_of(g)) for g in range(40)}) > 30  # the games differ
    for g in range(40):
        s = GameState.initial(deck)
        for action in batch.actions_of(g):
            s = s.apply(action)  # raises on an illegal action
        assert s.is_terminal and s.points == (int(a[g]), int(b[g]))


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
