"""Agents: the greedy rule, determinism, exact play and the human prompt."""

from __future__ import annotations

import io

import pytest

from helpers import naive_value, position
from pasur.common.errors import PasurInputError
from pasur.game.cards import Deck, mask_of, parse_card
from pasur.game.rules import Action
from pasur.play.agents import (
    ExactAgent,
    GameAborted,
    GreedyAgent,
    HumanAgent,
    RandomAgent,
    immediate_points,
    make_agent,
    parse_choice,
    play_game,
)
from pasur.solve.reference import solve_deck


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
    assert immediate_points(s, a) == 2


def test_greedy_counts_a_sur():
    # 7H takes the lone 4D: a Sur (5 points) beats laying the Ace.
    s = _alex_to_play(["7H", "AC"], ["4D"])
    a = GreedyAgent().choose(s)
    assert a == Action(C("7H"), 1 << C("4D")) and immediate_points(s, a) == 5


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


def test_exact_self_play_of_a_full_deck_equals_its_value(reference_decks):
    nd = reference_decks[2]
    value, _ = solve_deck(nd.deck)
    agent = ExactAgent()
    for _ in range(2):  # deterministic: same game, same result every time
        assert play_game(nd.deck, agent, agent).final.utility() == value == nd.value


def test_exact_agent_beats_or_matches_value_against_greedy(reference_decks):
    nd = reference_decks[2]
    log = play_game(nd.deck, ExactAgent(), GreedyAgent())
    assert log.final.utility() >= nd.value


def test_make_agent_names():
    assert isinstance(make_agent("random", seed=1), RandomAgent)
    assert isinstance(make_agent("greedy"), GreedyAgent)
    with pytest.raises(PasurInputError, match="unknown agent 'minimax'"):
        make_agent("minimax")


def test_parse_choice_forms():
    actions = [Action(C("7C"), mask_of([C("AS"), C("3D")])), Action(C("7C"), mask_of([C("4H")])), Action(C("KD"))]
    assert parse_choice("3", actions) == actions[2]
    assert parse_choice("kd", actions) == actions[2]
    assert parse_choice("7C 4H", actions) == actions[1]
    assert parse_choice("7♣ A♠ 3♦", actions) == actions[0]
    for bad, msg in [
        ("9", "no action number 9"),
        ("7C", "several actions"),
        ("2H", "not a card you can play"),
        ("7C 5H", "cannot take exactly"),
        ("ZZ", "unknown card"),
        ("", "empty"),
    ]:
        with pytest.raises(PasurInputError, match=msg):
            parse_choice(bad, actions)


def test_human_agent_rejects_bad_input_and_asks_again():
    s = position(4, 0)
    actions = s.legal_actions()
    out = io.StringIO()
    agent = HumanAgent(io.StringIO(f"hello\n0\n{len(actions)}\n"), out)
    assert agent.choose(s) == actions[-1]
    text = out.getvalue()
    assert text.count("not understood") == 2 and "1. " in text


def test_human_agent_quits_and_eof():
    s = position(4, 0)
    with pytest.raises(GameAborted):
        HumanAgent(io.StringIO("q\n"), io.StringIO()).choose(s)
    with pytest.raises(GameAborted):
        HumanAgent(io.StringIO(""), io.StringIO()).choose(s)
