"""Games as data: presets, validation, hand counts, the evaluator (known numbers)."""

from __future__ import annotations

import itertools

import numpy as np
import pytest

from pasur.common.errors import PasurInputError
from pasur.poker.boards import RoundBoards
from pasur.poker.evaluator import CATEGORIES, category_shares, strength
from pasur.poker.games import PRESETS, get_game
from pasur.poker.tree import BettingTree


def test_presets_are_valid_and_named():
    assert {"kuhn", "leduc", "leduc5", "numeral211"} <= set(PRESETS)
    for name, g in PRESETS.items():
        assert g.name == name
        assert get_game(name.upper()) is g


def test_bad_games_are_refused_in_one_line():
    with pytest.raises(PasurInputError, match="unknown game"):
        get_game("holdem")
    with pytest.raises(PasurInputError, match="one entry per round"):
        get_game("leduc", bet_sizes=(2,))
    with pytest.raises(PasurInputError, match="hole_cards"):
        get_game("leduc", hole_cards=3)
    with pytest.raises(PasurInputError, match="cannot deal"):
        get_game("kuhn", hole_cards=2)
    with pytest.raises(PasurInputError, match="unknown game field"):
        get_game("kuhn", blinds=1)


def test_each_preset_states_its_big_blind_the_unit_of_mbg():
    """mb/g = 1000 x chips per game / the big blind (docs/conventions.md): the ante in Kuhn,
    Leduc and Numeral211 (5 chips), stated in each preset; a changed ante carries it along."""
    blinds = {"kuhn": 1, "leduc": 1, "leduc5": 1, "numeral211": 5, "numeral211-r5": 5, "numeral211-tiny": 5}
    for name, chips in blinds.items():
        g = get_game(name)
        assert g.big_blind == chips == g.ante and g.blind == chips
    assert get_game("numeral211").mbg(0.0025) == pytest.approx(0.5)  # 0.0025 chips of 5 = 0.5 milli-blinds
    assert get_game("leduc").mbg(0.0025) == pytest.approx(2.5)
    assert get_game("leduc", ante=2).blind == 2 and get_game("leduc", big_blind=4).blind == 4
    assert get_game("leduc", big_blind=4) == get_game("leduc")  # a unit, not a rule
    assert get_game("leduc", big_blind=4).openspiel == "leduc_poker"
    with pytest.raises(PasurInputError, match="big_blind"):
        get_game("leduc", big_blind=0)


def test_changed_rules_lose_the_openspiel_tag():
    assert get_game("leduc").openspiel == "leduc_poker"
    assert get_game("leduc", fold_without_bet=True).openspiel is None
    assert get_game("leduc", description="x").openspiel == "leduc_poker"


def test_numeral211_hands_per_round():
    """The paper's counts: C(40,2), C(40,2)*38, C(40,2)*38*37 (with and without suit isomorphism)."""
    g = get_game("numeral211")
    for iso in (True, False):
        assert RoundBoards(g, iso=iso).pairs_per_round() == [780, 29_640, 1_096_680]


def test_numeral211_three_of_a_kind_share():
    """Table 3 of the Embedding CFR paper: 1.587 % of four-card hands are three of a kind at best.

    Our other shares (no reading reproduces the paper's others) are pinned too: straight flush
    1.265 %, straight 14.982 %, flush 13.573 %, pair 32.656 %, high card 35.938 %."""
    shares = category_shares(get_game("numeral211"))
    assert round(100 * shares["three of a kind"], 3) == 1.587
    # independent count: 10 ranks * (C(4,3) * 36 + C(4,4)) four-card sets hold three of a kind
    assert shares["three of a kind"] == pytest.approx(10 * (4 * 36 + 1) / 91_390, abs=1e-15)
    ours = {k: round(100 * v, 3) for k, v in shares.items()}
    assert ours == {
        "high card": 35.938,
        "pair": 32.656,
        "flush": 13.573,
        "straight": 14.982,
        "three of a kind": 1.587,
        "straight flush": 1.265,
    }


def test_evaluator_orders_categories():
    g = get_game("numeral211")

    def card(t):
        return g.ranks.index(t[0]) * 4 + g.suits.index(t[1])

    def s(*cards):
        return strength(g, [card(c) for c in cards])

    assert s("Ts", "9s", "8s", "2h") > s("As", "Ah", "Ac", "2h")  # straight flush > trips
    assert s("2s", "2h", "2c", "3d") > s("Ts", "9h", "8c", "2d")  # trips > straight
    assert s("4s", "3h", "2c", "9d") > s("As", "Ts", "8s", "2d")  # straight > flush
    assert s("As", "Ts", "8s", "2d") > s("As", "Ah", "Tc", "2d")  # flush > pair
    assert s("2s", "2h", "3c", "4d") > s("As", "Th", "8c", "6d")  # 2-3-4 straight > A-high
    assert s("9s", "Th", "Ac", "2d") > s("8s", "9h", "Tc", "2d")  # 9-T-A is the top straight
    assert s("As", "2h", "3c", "5d") < s("2s", "3h", "4c", "6d")  # no wrap: A-2-3 is not a straight
    assert s("As", "Ah", "Tc", "2d") == s("Ad", "Ac", "Th", "2s")  # suits alone never break ties


def test_leduc_showdown_matches_openspiel_rank():
    """OpenSpiel's Leduc rank: a pair with the public card wins; otherwise (high, low) of the two
    cards, card ids ``rank * 2 + suit``."""
    g = get_game("leduc")

    def os_rank(public, private):
        lo, hi = sorted((public, private))
        if lo // 2 == hi // 2:
            return 36 + lo
        return (hi // 2) * 6 + lo // 2

    for pub, a, b in itertools.permutations(range(6), 3):
        ours = np.sign(strength(g, [a, pub]) - strength(g, [b, pub]))
        theirs = np.sign(os_rank(pub, a) - os_rank(pub, b))
        assert ours == theirs, (pub, a, b)


def test_category_names():
    assert CATEGORIES[0] == "high card" and CATEGORIES[-1] == "straight flush"


def _count_sequences(cap: int, fold_without_bet: bool = False) -> tuple[int, int, int]:
    """Independent count of one round of limit betting: (decision points, folds, round ends)."""

    def walk(bets, acted, facing):
        dec, folds, ends = 1, 0, 0
        if facing or fold_without_bet:
            folds += 1
        # check or call
        if bets > 0 or acted >= 1:
            ends += 1
        else:
            d, f, e = walk(bets, acted + 1, False)
            dec, folds, ends = dec + d, folds + f, ends + e
        if bets < cap:
            d, f, e = walk(bets + 1, acted + 1, True)
            dec, folds, ends = dec + d, folds + f, ends + e
        return dec, folds, ends

    return walk(0, 0, False)


@pytest.mark.parametrize("name", ["kuhn", "leduc", "numeral211", "numeral211-tiny"])
def test_betting_tree_sizes(name):
    g = get_game(name)
    t = BettingTree(g)
    prefixes, dec, folds, shows = 1, 0, 0, 0
    for r in range(g.n_rounds):
        d, f, e = _count_sequences(g.max_bets[r], g.fold_without_bet)
        dec, folds = dec + prefixes * d, folds + prefixes * f
        if r == g.n_rounds - 1:
            shows = prefixes * e
        prefixes *= e
    assert t.n_decision == dec
    assert int((t.kind == 1).sum()) == folds
    assert int((t.kind == 2).sum()) == shows
