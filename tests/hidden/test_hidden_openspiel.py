"""The hidden-hand game registered in OpenSpiel: its rules are ours, its information states hide
what they should, and OpenSpiel's ISMCTS and MCCFR run on it."""

from __future__ import annotations

import random
import sys

import numpy as np
import pytest

from pasur.common.errors import PasurInputError
from pasur.game.cards import Deck
from pasur.hidden.game import HiddenGame


def test_without_openspiel_an_openspiel_agent_is_refused_in_one_line(monkeypatch):
    monkeypatch.setitem(sys.modules, "pyspiel", None)
    from pasur.hidden.registry import make_agent

    with pytest.raises(PasurInputError, match="OpenSpiel is not installed"):
        make_agent("ismcts:10")


pyspiel = pytest.importorskip("pyspiel")
from pasur.hidden import openspiel as ops  # noqa: E402


def test_action_ids_round_trip_every_legal_action():
    rng = random.Random(0)
    for seed in range(5):
        s = HiddenGame(Deck.from_seed(seed)).state
        while not s.is_terminal:
            acts = s.legal_actions()
            for a in acts:
                assert ops.action_of(ops.action_id(a), s.pool) == a
            assert len({ops.action_id(a) for a in acts}) == len(acts)
            s = s.apply(rng.choice(acts))


def test_games_follow_our_rules_and_pay_our_utility():
    game = ops.load_game()
    pyspiel.random_sim_test(game, num_sims=2, serialize=False, verbose=False)
    rng = np.random.default_rng(1)
    for _ in range(3):
        st = game.new_initial_state()
        while not st.is_terminal():
            if st.is_chance_node():
                outcomes, probs = zip(*st.chance_outcomes(), strict=True)
                st.apply_action(int(rng.choice(outcomes, p=probs)))
            else:
                assert sorted(st.legal_actions()) == sorted(ops.action_id(a) for a in st.gs.legal_actions())
                st.apply_action(int(rng.choice(st.legal_actions())))
        deck = Deck(tuple(st.dealt))
        s = HiddenGame(deck).state
        for m in st.moves:
            s = s.apply(m.action)
        assert st.returns() == [s.utility(), -s.utility()]


def test_the_pool_is_dealt_from_non_jacks():
    st = ops.load_game().new_initial_state()
    cards = [c for c, _ in st.chance_outcomes()]
    assert len(cards) == 48 and all(c // 4 != 10 for c in cards)


def test_information_states_hide_the_other_hand():
    """Two worlds the player cannot tell apart have the same information state string; the other
    player's differ."""
    g = HiddenGame(Deck.from_seed(4))
    rng = random.Random(2)
    for _ in range(13):
        g.apply(rng.choice(g.state.legal_actions()))
    info = g.observation(g.mover)
    game = ops.load_game()
    a = ops.state_from_info(game, info, np.random.default_rng(1))
    b = ops.state_from_info(game, info, np.random.default_rng(2))
    assert a.gs.hands[1 - g.mover] != b.gs.hands[1 - g.mover]
    assert a.information_state_string(g.mover) == b.information_state_string(g.mover)
    assert a.information_state_string(1 - g.mover) != b.information_state_string(1 - g.mover)
    assert a.legal_actions() == b.legal_actions()
    c = a.clone()
    c.apply_action(c.legal_actions()[0])
    assert len(a.moves) + 1 == len(c.moves)  # a clone is independent


def test_ismcts_plays_legal_moves_and_mccfr_runs():
    from open_spiel.python.algorithms import outcome_sampling_mccfr

    info = HiddenGame(Deck.from_seed(6)).observation(0)
    agent = ops.ISMCTSAgent(20, seed=3)
    assert agent.choose(info) in info.legal_actions()
    assert agent.choose(info) == agent.choose(info)  # seeded by the information state
    vals = agent.action_values(info)
    assert [a for a, _ in vals] == info.legal_actions()
    solver = outcome_sampling_mccfr.OutcomeSamplingSolver(ops.load_game())
    for _ in range(3):
        solver.iteration()
    st = ops.state_from_info(ops.load_game(), info, np.random.default_rng(0))
    probs = solver.average_policy().action_probabilities(st)
    assert set(probs) == set(st.legal_actions()) and sum(probs.values()) == pytest.approx(1)
