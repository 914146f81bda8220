"""GameState transitions on crafted positions: the spec's *Deal*, *A turn* and *End of the game* sections."""

from __future__ import annotations

import dataclasses
import random

import pytest

from helpers import tally_points
from pasur.game.cards import ALL_CARDS, Deck, cards_of, format_cards, mask_of, parse_card, parse_cards
from pasur.game.rules import Action
from pasur.game.state import ALEX, BOB, GameState, IllegalActionError


def C(text: str) -> int:
    return parse_card(text)


def M(text: str) -> int:
    return mask_of(parse_cards(text))


def deck_with(slots: dict[int, str]) -> Deck:
    """A real deck with the given cards at the given positions (``{start: "cards"}``), the other
    cards in ascending order in the free positions (so the pool defaults to AC AD AH AS)."""
    fixed: dict[int, int] = {}
    for start, text in slots.items():
        for i, c in enumerate(parse_cards(text)):
            fixed[start + i] = c
    rest = iter(c for c in range(52) if c not in fixed.values())
    return Deck(tuple(fixed[i] if i in fixed else next(rest) for i in range(52)))


def dealt_mask(deck: Deck, round_: int) -> int:
    """Cards dealt by the end of the deal of ``round_``: the pool and the hands of rounds 0..round_."""
    return mask_of(deck.cards[: 4 + 8 * (round_ + 1)])


def craft(
    deck: Deck,
    round_: int,
    turn: int,
    alex: str,
    bob: str,
    pool: str,
    alex_pile: str = "",
    surs: tuple[int, int] = (0, 0),
    last: int | None = None,
) -> GameState:
    """A consistent position: the given hands, pool and Alex's pile; every other card dealt so far is in
    Bob's pile. Asserts ``check()`` passes."""
    hands = (M(alex), M(bob))
    named = hands[0] | hands[1] | M(pool) | M(alex_pile)
    dealt = dealt_mask(deck, round_)
    assert named & ~dealt == 0, f"not dealt yet in round {round_}: {format_cards(named & ~dealt)}"
    s = GameState(deck, round_, turn, hands, M(pool), (M(alex_pile), dealt & ~named), surs, last)
    s.check()
    return s


def play_all_lays(s: GameState, n: int) -> GameState:
    """Play ``n`` turns in which every legal action is a lay (asserting so)."""
    for _ in range(n):
        acts = s.legal_actions()
        assert acts and all(a.is_lay for a in acts), [str(a) for a in acts]
        s = s.apply(acts[0])
        s.check()
    return s


# Round 5 (positions 44..51) with no possible capture: numeric values >= 6 only, one King, no Jack.
ROUND5_ALEX = "6C 7D 8C 9S"
ROUND5_BOB = "TC TH 7H KD"
NO_CAPTURE_DECK = deck_with({44: ROUND5_ALEX, 48: ROUND5_BOB})


# ---------------------------------------------------------------------------
# Start, turn order, deal


def test_initial_state_follows_the_deal() -> None:
    d = Deck.from_seed(5)
    s = GameState.initial(d)
    s.check()
    assert (s.round, s.turn, s.player) == (0, 0, ALEX)
    assert s.hands == (mask_of(d.cards[4:8]), mask_of(d.cards[8:12]))
    assert s.pool == mask_of(d.cards[0:4])
    assert s.piles == (0, 0) and s.surs == (0, 0) and s.last_capturer is None
    assert s.undealt() == mask_of(d.cards[12:])
    assert s.stage == "0.0.0"
    assert not s.is_terminal


def test_turn_order_rounds_and_deal_over_a_whole_game() -> None:
    d = Deck.from_seed(12)
    rng = random.Random(12)
    s = GameState.initial(d)
    seen = []
    for rnd in range(6):
        assert s.hands == (d.hand_mask(ALEX, rnd), d.hand_mask(BOB, rnd))  # dealt from the deck layout
        assert s.undealt() == mask_of(d.cards[12 + 8 * rnd :])
        for _ in range(8):
            seen.append((s.round, s.turn, s.player))
            s.check()
            assert s.legal_actions()
            s = s.apply(rng.choice(s.legal_actions()))
    assert seen == [(r, t, t % 2) for r in range(6) for t in range(8)]  # Alex leads every round
    assert s.is_terminal and s.stage == "end"
    assert s.legal_actions() == []
    s.check()


def test_next_round_keeps_the_pool_and_deals_new_hands() -> None:
    d = Deck.from_seed(3)
    s = GameState.initial(d)
    for _ in range(7):
        s = s.apply(s.legal_actions()[-1])
    assert (s.round, s.turn, s.player) == (0, 7, BOB)
    last = s.legal_actions()[0]
    after = s.apply(last)
    expected_pool = (s.pool & ~last.captured) | (0 if last.captured else 1 << last.card)
    assert (after.round, after.turn, after.player) == (1, 0, ALEX)
    assert after.hands == (d.hand_mask(ALEX, 1), d.hand_mask(BOB, 1))
    assert after.pool == expected_pool
    assert after.stage == "1.0.0"
    after.check()


def test_apply_is_play_then_end_round() -> None:
    d = Deck.from_seed(4)
    rng = random.Random(4)
    s = GameState.initial(d)
    while not s.is_terminal:
        a = rng.choice(s.legal_actions())
        played = s.play(a)
        assert played.turn == s.turn + 1 and played.round == s.round
        if played.turn == 8:
            assert s.apply(a) == played.end_round()
        else:
            assert s.apply(a) == played
            with pytest.raises(ValueError, match="not over"):
                played.end_round()
        s = s.apply(a)


def test_stage_names() -> None:
    s = GameState.initial(Deck.from_seed(0))
    stages = []
    for _ in range(4):
        stages.append(s.stage)
        s = s.apply(s.legal_actions()[0])
    assert stages == ["0.0.0", "0.0.1", "0.1.0", "0.1.1"]


# ---------------------------------------------------------------------------
# A turn in the state


def test_lay_adds_the_card_to_the_pool() -> None:
    d = deck_with({0: "9C 9D QH KH", 4: "8S 2D 3D 4D"})
    s = GameState.initial(d)
    t = s.apply(Action(C("8S")))
    assert t.pool == M("9C 9D QH KH 8S")
    assert t.hands[ALEX] == M("2D 3D 4D")
    assert t.piles == (0, 0) and t.last_capturer is None
    assert t.player == BOB


def test_capture_moves_cards_to_the_pile_and_sets_last_capturer() -> None:
    d = deck_with({0: "9C 9D QH KH", 4: "2S 5D 6D 7D", 8: "KS 3H 4H 8H"})
    s = GameState.initial(d)
    t = s.apply(Action(C("2S"), M("9D")))
    assert t.pool == M("9C QH KH")
    assert t.piles == (M("2S 9D"), 0)
    assert t.last_capturer == ALEX
    assert t.surs == (0, 0)
    u = t.apply(Action(C("KS"), M("KH")))
    assert u.piles == (M("2S 9D"), M("KS KH"))
    assert u.last_capturer == BOB
    u.check()


def test_sur_in_round_0_scores_5() -> None:
    d = deck_with({0: "AC AD AH 2C", 4: "6S 9D 9H 9S"})
    s = GameState.initial(d)
    t = s.apply(Action(C("6S"), M("AC AD AH 2C")))
    assert t.pool == 0
    assert t.surs == (1, 0)
    assert t.points == (1 + 1 + 1 + 2 + 5, 0)
    assert t.last_capturer == ALEX


def test_sur_with_a_queen_on_a_lone_queen_in_round_3() -> None:
    d = deck_with({4: "QC 5D 6D 7D", 8: "QD 8D 9D TD"})
    s = craft(d, 3, 1, "2H 3H 4H", "QD 5H 6H 7H", "QC", "AC AD AS 2C 3C", surs=(0, 2), last=ALEX)
    assert Action(C("QD"), M("QC")) in s.legal_actions()
    t = s.apply(Action(C("QD"), M("QC")))
    assert t.surs == (0, 3)
    assert t.pool == 0 and t.last_capturer == BOB
    assert t.points[BOB] - s.points[BOB] == 5
    t.check()


def test_capture_emptying_the_pool_in_round_5_is_not_a_sur() -> None:
    d = deck_with({44: "6S 8D 8H 9C", 48: "TC TH 7H KD"})
    s = craft(d, 5, 0, "6S 8D 8H 9C", "TC TH 7H KD", "AC AD AH 2C", "2D 3D", surs=(1, 0), last=BOB)
    t = s.apply(Action(C("6S"), M("AC AD AH 2C")))
    assert t.pool == 0
    assert t.surs == (1, 0)
    assert t.last_capturer == ALEX


def test_jack_emptying_the_pool_is_not_a_sur() -> None:
    d = deck_with({0: "3C 8D 9D TS", 4: "JC 2D 4D 5D"})
    s = GameState.initial(d).apply(Action(C("JC"), M("3C 8D 9D TS")))
    assert s.pool == 0 and s.last_capturer == ALEX
    assert s.surs == (0, 0)


def test_capture_leaving_a_king_behind_is_not_a_sur() -> None:
    d = deck_with({0: "3C 8D QH KH", 4: "JC 2D 4D 5D", 8: "QS 3H 4H 8H"})
    s = GameState.initial(d).apply(Action(C("JC"), M("3C 8D")))  # the Jack leaves Q and K
    assert s.pool == M("QH KH")
    s = s.apply(Action(C("QS"), M("QH")))  # the Queen leaves the King
    assert s.pool == M("KH") and s.surs == (0, 0) and s.last_capturer == BOB


# ---------------------------------------------------------------------------
# End of the game: final sweep


def test_final_sweep_goes_to_last_capturer_of_an_earlier_round() -> None:
    d = NO_CAPTURE_DECK
    # Round 4, Bob's last card: his 5C takes 6D. Nobody can capture anything in round 5.
    s = craft(d, 4, 7, "", "5C", "6D 8H 9D QS", "AC 2C 3C JC", last=ALEX)
    s = s.apply(Action(C("5C"), M("6D")))
    assert (s.round, s.turn) == (5, 0)
    assert s.last_capturer == BOB
    assert s.hands == (M(ROUND5_ALEX), M(ROUND5_BOB))
    bob_pile_before = s.piles[BOB]
    s = play_all_lays(s, 7)
    assert s.pool == M("8H 9D QS") | M(ROUND5_ALEX) | M(ROUND5_BOB) & ~M("KD")
    s = play_all_lays(s, 1)
    assert s.is_terminal
    assert s.pool == 0
    assert s.piles[BOB] == bob_pile_before | M("8H 9D QS") | M(ROUND5_ALEX) | M(ROUND5_BOB)
    assert s.piles[ALEX] == M("AC 2C 3C JC")
    assert s.surs == (0, 0)  # the sweep empties the pool but is not a Sur
    assert s.piles[0] | s.piles[1] == ALL_CARDS
    assert sum(s.points) == 20


def test_final_sweep_goes_to_the_last_capturer_of_round_5_when_there_is_one() -> None:
    d = NO_CAPTURE_DECK
    s = craft(d, 5, 0, ROUND5_ALEX, ROUND5_BOB, "4C 8H QS", "AC 2C 3C JC", last=BOB)
    s = s.apply(Action(C("7D"), M("4C")))  # Alex captures in round 5
    assert s.last_capturer == ALEX
    s = play_all_lays(s, 7)
    assert s.is_terminal and s.pool == 0
    assert s.piles[ALEX] == M("AC 2C 3C JC 7D 4C 8H QS") | (M(ROUND5_ALEX) & ~M("7D")) | M(ROUND5_BOB)
    assert s.surs == (0, 0)


def test_no_sweep_when_nobody_ever_captured() -> None:
    d = NO_CAPTURE_DECK
    s = craft(d, 5, 0, ROUND5_ALEX, ROUND5_BOB, "8H 9D QS", "AC 2C 3C JC", last=None)
    piles = s.piles
    s = play_all_lays(s, 8)
    assert s.is_terminal
    assert s.pool == M("8H 9D QS") | M(ROUND5_ALEX) | M(ROUND5_BOB)  # the leftover cards go to nobody
    assert s.piles == piles
    s.check()  # all 52 cards still accounted for
    assert s.piles[0] | s.piles[1] | s.pool == ALL_CARDS


def test_last_card_of_the_game_taking_the_whole_pool_is_not_a_sur() -> None:
    d = deck_with({44: "6C 7D 8C 9S", 48: "5S TH 7H KD"})
    s = craft(d, 5, 7, "", "5S", "6D", "AC", last=ALEX)
    t = s.apply(Action(C("5S"), M("6D")))
    assert t.is_terminal and t.pool == 0
    assert t.surs == (0, 0) and t.last_capturer == BOB


# ---------------------------------------------------------------------------
# Scores and utility


def terminal(alex_pile: str, pool: str = "", surs: tuple[int, int] = (0, 0), last: int | None = ALEX) -> GameState:
    """A finished game: Alex holds ``alex_pile``, the pool ``pool``, Bob everything else."""
    return craft(Deck.from_seed(0), 5, 8, "", "", pool, alex_pile, surs=surs, last=last)


def test_clubs_bonus_to_alex_with_exactly_7() -> None:
    s = terminal("AC 2C 3C 4C 5C 6C 7C")
    assert s.is_terminal and s.clubs == (7, 6) and s.clubs_winner == ALEX
    assert s.points == (1 + 2 + 7, 20 - 10)
    assert s.utility() == 0


def test_clubs_bonus_to_bob_with_7_and_none_for_6() -> None:
    s = terminal("8C 9C TC JC QC KC AD")
    assert s.clubs == (6, 7) and s.clubs_winner == BOB
    assert s.points == (1 + 1, 18)
    assert s.utility() == -16


def test_more_than_7_clubs_is_still_7_points() -> None:
    s = terminal("AC 2C 3C 4C 5C 6C 7C 8C 9C TC JC QC KC")
    assert s.clubs == (13, 0)
    assert s.points == (1 + 2 + 1 + 7, 20 - 11)


def test_no_clubs_bonus_when_nobody_has_7() -> None:
    s = terminal("AC 2C 3C 4C 5C 6C", pool="7C", last=None)
    assert s.clubs == (6, 6) and s.clubs_winner is None
    assert s.points == (3, 13 - 3)


def test_card_points_and_surs_in_points() -> None:
    s = terminal("TD 2C AS JH 3H", surs=(2, 1))
    assert s.card_points == (3 + 2 + 1 + 1, 13 - 7)
    assert s.points == (7 + 10, 6 + 5 + 7)  # Bob holds 12 clubs
    assert sum(s.points) == 20 + 5 * 3
    assert s.utility() == s.score_diff == (7 + 10) - (6 + 5 + 7)


def test_clubs_bonus_counts_as_soon_as_clinched() -> None:
    d = deck_with({0: "KH 9H 9S TH", 4: "AC 2C 3C 4C 5C 6C 7C", 11: "TS 8D 8H 8S 9D"})
    s = craft(d, 2, 0, "9H 9S TH TS", "8D 8H 8S 9D", "KH", "AC 2C 3C 4C 5C 6C 7C")
    assert not s.is_terminal
    assert s.clubs == (7, 0) and s.clubs_winner == ALEX
    assert s.points[ALEX] == 1 + 2 + 7


def test_points_sum_to_20_plus_5_per_sur_after_random_games() -> None:
    for seed in range(30):
        d = Deck.from_seed(seed)
        rng = random.Random(seed)
        s = GameState.initial(d)
        moves = []
        while not s.is_terminal:
            moves.append(rng.choice(s.legal_actions()))
            s = s.apply(moves[-1])
        assert s.last_capturer is not None
        assert s.pool == 0
        assert sum(s.points) == 20 + 5 * sum(s.surs)
        tally = tally_points(d, moves)  # an independent scorer, from the moves alone
        assert list(s.points) == tally and s.utility() == tally[0] - tally[1]


@pytest.mark.parametrize("moves", [0, 1, 8, 47])
def test_utility_raises_before_the_end(moves: int) -> None:
    s = GameState.initial(Deck.from_seed(2))
    for _ in range(moves):
        s = s.apply(s.legal_actions()[0])
    with pytest.raises(ValueError, match="non-terminal"):
        s.utility()


# ---------------------------------------------------------------------------
# Illegal actions and consistency checks


def test_apply_refuses_illegal_actions() -> None:
    d = deck_with({0: "6H QS 9C 9D", 4: "5C KD 2S 3S", 8: "KH 4H 4S 8C"})
    s = GameState.initial(d)
    assert s.legal_actions() == [
        Action(C("2S"), M("9C")),
        Action(C("2S"), M("9D")),
        Action(C("3S")),
        Action(C("5C"), M("6H")),
        Action(C("KD")),
    ]
    bad = [
        Action(C("5C")),  # must capture: 5C cannot be laid
        Action(C("KH")),  # Bob's card
        Action(C("AC")),  # not in any hand
        Action(C("5C"), M("9C")),  # wrong sum
        Action(C("2S"), M("9C 9D")),  # too much
        Action(C("KD"), M("QS")),  # a King does not take a Queen
        Action(C("3S"), M("8C")),  # 8C is not in the pool
    ]
    for a in bad:
        with pytest.raises(IllegalActionError):
            s.apply(a)
        assert not s.is_legal(a)
    assert issubclass(IllegalActionError, ValueError)
    assert s == GameState.initial(d)  # the state is unchanged


def test_apply_at_the_end_raises() -> None:
    s = terminal("AC")
    with pytest.raises(IllegalActionError):
        s.apply(Action(C("KD")))


def test_state_is_immutable() -> None:
    s = GameState.initial(Deck.from_seed(0))
    with pytest.raises(dataclasses.FrozenInstanceError):
        s.turn = 3  # type: ignore[misc]


def test_check_catches_inconsistent_states() -> None:
    s = GameState.initial(Deck.from_seed(0))
    a_card = cards_of(s.hands[ALEX])[0]
    with pytest.raises(ValueError, match="two places"):
        s.with_(pool=s.pool | (1 << a_card)).check()
    with pytest.raises(ValueError, match="missing"):
        s.with_(pool=0).check()
    with pytest.raises(ValueError, match="hand sizes"):
        s.with_(turn=1).check()
    with pytest.raises(ValueError, match="out of range"):
        s.with_(round=6).check()
    with pytest.raises(ValueError, match="out of range"):
        s.with_(turn=9).check()
    with pytest.raises(ValueError, match="two places"):
        # a round-1 card already in a pile
        s.with_(piles=(1 << s.deck.cards[12], 0)).check()
