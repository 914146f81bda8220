"""The prompt loop of a person at a terminal (``pasur.web.prompt``): answers read, bad ones asked
again, quitting, hints, and the open game's agents by name with ``human`` among them."""

from __future__ import annotations

import io

import pytest

from helpers import position
from pasur.common.errors import PasurInputError
from pasur.game.cards import mask_of, parse_card
from pasur.game.rules import Action
from pasur.play.agents import GreedyAgent
from pasur.web.prompt import GameAborted, HumanAgent, Prompt, make_agent, parse_choice


def C(t: str) -> int:
    return parse_card(t)


ACTIONS = [Action(C("7C"), mask_of([C("AS"), C("3D")])), Action(C("7C"), mask_of([C("4H")])), Action(C("KD"))]


def test_parse_choice_forms():
    assert parse_choice("3", ACTIONS) == ACTIONS[2]
    assert parse_choice("kd", ACTIONS) == ACTIONS[2]
    assert parse_choice("7C 4H", ACTIONS) == ACTIONS[1]
    assert parse_choice("7♣ A♠ 3♦", ACTIONS) == ACTIONS[0]
    for bad, msg in [
        ("9", "no action number 9"),
        ("7C", "several actions"),
        ("2H", "not a card you can play"),
        ("7C 5H", "cannot take exactly"),
        ("ZZ", "unknown card"),
        ("", "empty"),
    ]:
        with pytest.raises(PasurInputError, match=msg):
            parse_choice(bad, ACTIONS)


def test_human_agent_rejects_bad_input_and_asks_again():
    s = position(4, 0)
    actions = s.legal_actions()
    out = io.StringIO()
    agent = HumanAgent(io.StringIO(f"hello\n0\n{len(actions)}\n"), out)
    assert agent.choose(s) == actions[-1]
    text = out.getvalue()
    assert text.count("not understood") == 2 and "1. " in text
    assert text.count("choose (number, card, or card + captured cards; q to quit): ") == 3


def test_human_agent_quits_and_eof():
    s = position(4, 0)
    for answer, why in (("q\n", "player quit"), ("Exit\n", "player quit"), ("", "input ended")):
        with pytest.raises(GameAborted, match=why):
            HumanAgent(io.StringIO(answer), io.StringIO()).choose(s)


def test_a_question_mark_asks_for_the_hint_only_where_there_is_one():
    hints = []
    out = io.StringIO()
    p = Prompt(io.StringIO("?\n?\n2\n"), out)
    assert p.ask(ACTIONS, "> ", hint=lambda: hints.append(1)) == ACTIONS[1]
    assert hints == [1, 1] and out.getvalue().count("> ") == 3 and "not understood" not in out.getvalue()
    out = io.StringIO()
    assert Prompt(io.StringIO("?\n1\n"), out).ask(ACTIONS, "> ") == ACTIONS[0]
    assert "not understood" in out.getvalue()


def test_the_open_games_agents_by_name_include_the_human():
    assert isinstance(make_agent("human"), HumanAgent)
    assert isinstance(make_agent("greedy"), GreedyAgent)
    with pytest.raises(PasurInputError, match=r"unknown agent 'oracle' \(choose from random, greedy, exact, human\)"):
        make_agent("oracle")
