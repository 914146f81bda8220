"""Agents: the greedy rule, determinism and exact play (the human prompt: tests/web/test_web_prompt.py)."""

from __future__ import annotations

import pytest

from helpers import naive_value, position
from pasur.common.errors import PasurInputError
from pasur.game.cards import Deck, mask_of, parse_card
from pasur.game.rules import Action, immediate_points
from pasur.play.agents import ExactAgent, GreedyAgent, RandomAgent, make_agent, play_game


def C(t: str) -> int:
    return parse_card(t)


def _alex_to_play(hand: list[str], pool: list[str]):
    """A round-1 position with Alex to move; only hand and pool matter to the greedy agent."""
    return position(2, 1).with_(hands=(mask_of(map(C, hand)), 0), pool=mask_of(map(C, pool)))


def test_greedy_takes_the_most_points():
    # 9D takes 2C (2 points); TH takes AS (1 point).
    s = _alex_to_play(["9D", "TH"], ["AS", "2C", "5D"])
    a = GreedyAgent().choose(s)
    assert a == Action(C("9D"), 1 << C("2C"))
    assert immediate_points(a, s.pool, s.round) == 2


def test_greedy_counts_a_sur():
    # 7H takes the lone 4D: a Sur (5 points) beats laying the Ace.
    s = _alex_to_play(["7H", "AC"], ["4D"])
    a = GreedyAgent().choose(s)
    assert a == Action(C("7H"), 1 << C("4D")) and immediate_points(a, s.pool, s.round) == 5


def test_greedy_breaks_ties_by_clubs_then_legal_order():
    # No points anywhere: 5D takes 6C (a club) or 6H; the club wins. Then 3H vs 3S laid: first in order.
    s = _alex_to_play(["5D"], ["6C", "6H"])
    assert GreedyAgent().choose(s) == Action(C("5D"), 1 << C("6C"))
    s = _alex_to_play(["3H", "3S"], ["KD"])
    assert GreedyAgent().choose(s) == Action(C("3H"))


def test_random_agent_is_reproducible():
    deck = Deck.from_seed(9)
    a = play_game(deck, RandomAgent(1), RandomAgent(2))
    b = play_game(deck, RandomAgent(1), RandomAgent(2))
    c = play_game(deck, RandomAgent(3), RandomAgent(2))
    assert a.actions == b.actions and a.actions != c.actions


@pytest.mark.parametrize("seed", range(4))
def test_exact_agent_plays_the_value_from_late_positions(seed):
    s = position(seed, 4, turn=6)
    agent = ExactAgent()
    log = play_game(s.deck, agent, agent, start=s)
    assert log.final.utility() == naive_value(s)


@pytest.fixture(scope="module")
def exact_agent() -> ExactAgent:
    """One exact agent for the module: its memo of solved positions is shared by the tests."""
    return ExactAgent()


def test_exact_self_play_of_a_full_deck_equals_its_value(reference_decks, exact_agent):
    """The reference deck's value was found by two independent solvers (shared/decks)."""
    nd = reference_decks[2]
    for _ in range(2):  # deterministic: same game, same result every time
        assert play_game(nd.deck, exact_agent, exact_agent).final.utility() == nd.value


def test_exact_agent_beats_or_matches_value_against_greedy(reference_decks, exact_agent):
    nd = reference_decks[2]
    log = play_game(nd.deck, exact_agent, GreedyAgent())
    assert log.final.utility() >= nd.value


def test_make_agent_names():
    assert isinstance(make_agent("random", seed=1), RandomAgent)
    assert isinstance(make_agent("greedy"), GreedyAgent)
    assert isinstance(make_agent("exact"), ExactAgent)
    # a person at the terminal is the front end's (pasur.web.prompt), not an agent of this layer
    for name in ("minimax", "human"):
        with pytest.raises(PasurInputError, match=f"unknown agent '{name}'"):
            make_agent(name)
