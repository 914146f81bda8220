"""One test (at least) per rule of the spec's *A turn* section, on crafted pools."""

from __future__ import annotations

import random
from itertools import combinations

import pytest

from pasur.game.cards import cards_of, format_cards, mask_of, parse_card, value
from pasur.game.rules import Action, captures_for, card_actions, is_sur, legal_actions, numeric_captures


def C(text: str) -> int:
    return parse_card(text)


def M(text: str) -> int:
    """A card set from text, e.g. ``M("2C 2D 4H")``."""
    return mask_of(C(t) for t in text.split())


def captured_sets(card: str, pool: str) -> set[str]:
    """What ``card`` can take from ``pool``, as formatted sets ('' for a lay)."""
    return {format_cards(a.captured) for a in card_actions(C(card), M(pool))}


def brute_numeric(card: int, pool: int) -> set[int]:
    """Independent oracle: every subset of the numeric pool cards summing to 11 - value(card)."""
    numeric = [c for c in cards_of(pool) if c < 40]
    out = set()
    for k in range(1, len(numeric) + 1):
        for combo in combinations(numeric, k):
            if value(card) + sum(value(c) for c in combo) == 11:
                out.add(mask_of(combo))
    return out


# ---------------------------------------------------------------------------
# Numeric cards: every subset summing to 11, suits distinct


def test_numeric_capture_enumerates_all_subsets_with_suits_distinct() -> None:
    # A 5 needs 6 more: {6S}, {2C 4H}, {2D 4H}, {AC 2C 3H}, {AC 2D 3H}; 2C+2D+AC = 5 is one short.
    got = captured_sets("5C", "2C 2D 4H 6S AC 3H")
    assert got == {"6S", "2C 4H", "2D 4H", "AC 2C 3H", "AC 2D 3H"}


def test_numeric_capture_same_value_different_suits_are_separate_actions() -> None:
    # A 9 facing four 2s: each 2 is its own action (four actions, not one).
    acts = card_actions(C("9H"), M("2C 2D 2H 2S"))
    assert [a.captured for a in acts] == [1 << C("2C"), 1 << C("2D"), 1 << C("2H"), 1 << C("2S")]


def test_numeric_capture_can_take_many_cards_at_once() -> None:
    # An Ace needs 10; the numeric pool cards 1+1+1+2+2+3 add up to exactly 10.
    got = captured_sets("AS", "AC AD AH 2C 2D 3C KH")
    # Subsets of {1,1,1,2,2,3} summing to 10: all six cards (sum 10) is the only one.
    assert got == {"AC AD AH 2C 2D 3C"}


def test_numeric_capture_ignores_court_cards_and_jacks() -> None:
    # 10 needs an Ace; Q, K and J in the pool are never part of a numeric capture.
    assert captured_sets("TC", "AD QS KH JD") == {"AD"}
    assert captured_sets("TC", "QS KH JD") == {""}  # nothing to take: laid


def test_numeric_capture_against_brute_force_on_many_pools() -> None:
    rng = random.Random(11)
    for _ in range(300):
        pool = mask_of(rng.sample(range(52), rng.randint(0, 10)))
        for card in range(40):
            if pool >> card & 1:
                continue
            caps = set(captures_for(card, pool))
            assert caps == brute_numeric(card, pool)
            acts = card_actions(card, pool)
            if caps:
                assert {a.captured for a in acts} == caps
                assert len(acts) == len(caps)
            else:
                assert acts == [Action(card, 0)]


def test_numeric_captures_is_sorted_and_needs_positive_target() -> None:
    caps = numeric_captures(M("AC AD 4H 5S 6C"), 6)
    assert list(caps) == sorted(caps)
    assert set(caps) == {M("AC 5S"), M("AD 5S"), M("6C"), M("AC AD 4H")}
    assert numeric_captures(M("AC"), 0) == ()


def test_ten_with_ace_and_ace_with_ten() -> None:
    assert captured_sets("TD", "AS 5H") == {"AS"}
    assert captured_sets("AS", "TD 5H") == {"TD"}


# ---------------------------------------------------------------------------
# Must capture, per card


def test_card_with_a_capture_cannot_be_laid() -> None:
    acts = card_actions(C("5C"), M("6H QS"))
    assert acts == [Action(C("5C"), M("6H"))]
    assert Action(C("5C"), 0) not in legal_actions(M("5C"), M("6H QS"))


def test_player_may_lay_another_card_that_has_no_capture() -> None:
    # 5C must take 6H if played, but KD has no capture and may be laid instead.
    hand, pool = M("5C KD"), M("6H QS")
    assert legal_actions(hand, pool) == [Action(C("5C"), M("6H")), Action(C("KD"), 0)]


def test_a_card_without_capture_is_laid() -> None:
    assert card_actions(C("8C"), M("8D 9H")) == [Action(C("8C"), 0)]
    assert card_actions(C("8C"), 0) == [Action(C("8C"), 0)]


def test_every_card_in_hand_has_at_least_one_action() -> None:
    hand = M("AC 5D JH QS KC")
    pool = M("TD 6S QH")
    acts = legal_actions(hand, pool)
    assert {a.card for a in acts} == set(cards_of(hand))


# ---------------------------------------------------------------------------
# Jack


def test_jack_captures_all_numeric_and_jacks_never_queens_or_kings() -> None:
    acts = card_actions(C("JD"), M("AS 3D 7H JC QC KH"))
    assert acts == [Action(C("JD"), M("AS 3D 7H JC"))]


def test_jack_is_one_action_even_with_many_cards() -> None:
    acts = card_actions(C("JS"), M("AC AD 2C 5H 9D TD"))
    assert len(acts) == 1
    assert acts[0].captured == M("AC AD 2C 5H 9D TD")


def test_jack_captures_a_lone_jack() -> None:
    assert card_actions(C("JH"), M("JC KS")) == [Action(C("JH"), M("JC"))]


@pytest.mark.parametrize("pool", ["", "QC", "KD", "QC KD QS"])
def test_jack_is_laid_when_no_numeric_and_no_jack(pool: str) -> None:
    assert card_actions(C("JC"), M(pool)) == [Action(C("JC"), 0)]


# ---------------------------------------------------------------------------
# Queen and King


def test_queen_captures_exactly_one_queen_with_a_choice() -> None:
    acts = card_actions(C("QD"), M("QC QS 5H KH"))
    assert acts == [Action(C("QD"), M("QC")), Action(C("QD"), M("QS"))]


def test_king_captures_exactly_one_king_with_a_choice() -> None:
    acts = card_actions(C("KS"), M("KC KH QD 9C"))
    assert acts == [Action(C("KS"), M("KC")), Action(C("KS"), M("KH"))]


def test_queen_does_not_capture_king_nor_king_queen() -> None:
    assert card_actions(C("QH"), M("KC")) == [Action(C("QH"), 0)]
    assert card_actions(C("KH"), M("QC")) == [Action(C("KH"), 0)]


def test_queen_and_king_take_no_numeric_cards() -> None:
    assert card_actions(C("QH"), M("AC TD")) == [Action(C("QH"), 0)]
    assert card_actions(C("KH"), M("5C 6D")) == [Action(C("KH"), 0)]


# ---------------------------------------------------------------------------
# Sur


def test_capture_emptying_the_pool_is_a_sur_in_rounds_0_to_4() -> None:
    pool = M("AC AD AH 2C")  # 1+1+1+2 = 5, and 6 + 5 = 11
    a = Action(C("6S"), pool)
    assert a in card_actions(C("6S"), pool)
    for rnd in range(5):
        assert is_sur(a, pool, rnd)


def test_no_sur_in_the_final_round() -> None:
    pool = M("AC AD AH 2C")
    assert not is_sur(Action(C("6S"), pool), pool, 5)


def test_jack_emptying_the_pool_is_not_a_sur() -> None:
    pool = M("3C 8D")
    a = card_actions(C("JC"), pool)[0]
    assert a.captured == pool
    assert not is_sur(a, pool, 0)


def test_queen_or_king_taking_the_lone_pool_card_is_a_sur() -> None:
    assert is_sur(Action(C("QD"), M("QC")), M("QC"), 2)
    assert is_sur(Action(C("KD"), M("KS")), M("KS"), 0)


def test_capture_leaving_cards_behind_is_not_a_sur() -> None:
    pool = M("4C 7H KS")  # 7 takes 4C, the King stays
    assert not is_sur(Action(C("7D"), M("4C")), pool, 0)
    pool2 = M("4C 4D")  # 7 takes one 4, the other stays
    assert not is_sur(Action(C("7D"), M("4C")), pool2, 0)


def test_laying_a_card_is_never_a_sur() -> None:
    assert not is_sur(Action(C("KD"), 0), 0, 0)


def test_final_round_can_be_moved() -> None:
    pool = M("9C")
    a = Action(C("2S"), pool)
    assert is_sur(a, pool, 5, final_round=6)
    assert not is_sur(a, pool, 3, final_round=3)


# ---------------------------------------------------------------------------
# Order and Action helpers


def test_legal_actions_sorted_by_card_then_captured() -> None:
    hand = M("5C KS JD 9H")
    pool = M("6S 2C 2D 4H KC KH")
    acts = legal_actions(hand, pool)
    assert acts == sorted(acts)
    assert acts == sorted(acts, key=lambda a: (a.card, a.captured))
    expected = [
        Action(C("5C"), M("2C 4H")),
        Action(C("5C"), M("2D 4H")),
        Action(C("5C"), M("6S")),
        Action(C("9H"), M("2C")),
        Action(C("9H"), M("2D")),
        Action(C("JD"), M("6S 2C 2D 4H")),
        Action(C("KS"), M("KC")),
        Action(C("KS"), M("KH")),
    ]
    assert acts == expected


def test_legal_actions_of_empty_hand_is_empty() -> None:
    assert legal_actions(0, M("AC")) == []


def test_action_text() -> None:
    assert str(Action(C("7C"), M("AS 3D"))) == "7C takes AS 3D"
    assert str(Action(C("KD"), 0)) == "KD lays"
    assert Action(C("TD"), M("AC")).describe(unicode=True) == "10♦ takes A♣"
    assert Action(C("KD")).describe() == "lay KD"
    assert Action(C("KD")).is_lay and not Action(C("KD")).is_capture
    assert Action(C("7C"), M("4C")).is_capture
