"""Match rules (``pasur.game.match``, ``docs/rules.md`` "Match rules"): hand-computed cases."""

from __future__ import annotations

import itertools

import pytest

from pasur.game.match import FIFTY, PRESETS, Match, MatchRules, score_hand

PLAIN = MatchRules(62)
CANCEL = MatchRules(62, sur_cancellation=True)
FIFTY_RULE = MatchRules(62, fifty_point_rule=True)
BOTH = PRESETS["classic"]


def test_presets():
    assert PRESETS["hand"] == MatchRules(target=None) and PRESETS["hand"].single_hand
    assert PRESETS["match"] == MatchRules(62, False, False)
    assert MatchRules(62, True, True) == BOTH
    for r in PRESETS.values():
        assert MatchRules.from_dict(r.to_dict()) == r


def test_bad_rules_are_refused():
    for target in (0, -5, 1001, 62.5, "62"):
        with pytest.raises(ValueError, match="target"):
            MatchRules(target)  # type: ignore[arg-type]
    with pytest.raises(ValueError, match="50-point rule needs a match"):
        MatchRules(None, fifty_point_rule=True)


def test_plain_scoring_is_the_spec():
    # 13 + 7 clubs = 20 card points; two Surs for Alex, one for Bob: 10 and 5 more
    h = score_hand(PLAIN, (13, 7), (2, 1))
    assert h.points == h.spec_points == (23, 12)
    assert h.surs_scored == (2, 1) and h.surs_cancelled == (0, 0) and h.surs_void == (0, 0)


@pytest.mark.parametrize(
    ("surs", "scored", "cancelled"),
    [
        ((0, 0), (0, 0), (0, 0)),
        ((1, 0), (1, 0), (0, 0)),
        ((1, 1), (0, 0), (1, 1)),  # Bob's Sur cancels Alex's, neither scores
        ((2, 1), (1, 0), (1, 1)),
        ((1, 3), (0, 2), (1, 1)),
        ((3, 3), (0, 0), (3, 3)),
        ((4, 1), (3, 0), (1, 1)),
    ],
)
def test_sur_cancellation(surs, scored, cancelled):
    h = score_hand(CANCEL, (12, 8), surs)
    assert h.surs_scored == scored and h.surs_cancelled == cancelled
    assert h.points == (12 + 5 * scored[0], 8 + 5 * scored[1])
    # the difference of the hand is the spec's: cancellation takes 5 from both
    assert h.points[0] - h.points[1] == h.spec_points[0] - h.spec_points[1]


def test_cancellation_by_the_counter_matches_every_order():
    """The rule read Sur by Sur (a Sur cancels one of the opponent's uncancelled Surs, else
    scores) gives the counts' rule for every order of the Surs."""
    for a, b in itertools.product(range(4), range(4)):
        for order in set(itertools.permutations([0] * a + [1] * b)):
            held = [0, 0]
            for p in order:
                if held[1 - p]:
                    held[1 - p] -= 1
                else:
                    held[p] += 1
            assert tuple(held) == score_hand(CANCEL, (0, 0), (a, b)).surs_scored


def test_fifty_point_rule():
    # Alex starts the hand at 50: his two Surs count for nothing; Bob at 49 keeps his
    h = score_hand(FIFTY_RULE, (10, 10), (2, 1), totals=(FIFTY, FIFTY - 1))
    assert h.surs_void == (2, 0) and h.surs_scored == (0, 1) and h.points == (10, 15)
    assert h.spec_points == (20, 15)  # the spec's difference is not kept: +5 became -5
    # without the rule, or below 50, every Sur counts
    assert score_hand(PLAIN, (10, 10), (2, 1), totals=(55, 0)).points == (20, 15)
    assert score_hand(FIFTY_RULE, (10, 10), (2, 1), totals=(49, 0)).points == (20, 15)


def test_void_surs_do_not_cancel():
    # Alex (at 52) makes a Sur, Bob one: Alex's is void, so Bob's scores
    h = score_hand(BOTH, (10, 10), (1, 1), totals=(52, 30))
    assert h.surs_void == (1, 0) and h.surs_cancelled == (0, 0) and h.surs_scored == (0, 1)
    assert h.points == (10, 15)
    # both at 50 or more: no Sur counts at all
    assert score_hand(BOTH, (10, 10), (3, 2), totals=(50, 60)).points == (10, 10)


def test_negative_inputs_are_refused():
    with pytest.raises(ValueError):
        score_hand(PLAIN, (-1, 21), (0, 0))


def test_match_to_62():
    m = Match(PLAIN)
    assert not m.is_over and m.winner is None and m.totals == (0, 0)
    m = m.add_hand((13, 7), (1, 0))  # 18 - 7
    m = m.add_hand((7, 13), (0, 2))  # 25 - 30
    m = m.add_hand((20, 0), (2, 0))  # 55 - 30
    assert m.totals == (55, 30) and not m.is_over
    m = m.add_hand((7, 13), (0, 0))  # 62 - 43: over
    assert m.totals == (62, 43) and m.is_over and m.winner == 0
    with pytest.raises(ValueError, match="over"):
        m.add_hand((10, 10), (0, 0))


def test_both_past_the_target_the_higher_wins_and_a_tie_plays_on():
    m = Match(MatchRules(30)).add_hand((10, 10), (2, 2))  # 20 - 20
    m2 = m.add_hand((7, 13), (0, 0))  # 27 - 33
    assert m2.is_over and m2.winner == 1
    tied = m.add_hand((10, 10), (0, 0))  # 30 - 30: nobody wins yet
    assert tied.totals == (30, 30) and not tied.is_over and tied.winner is None
    assert tied.add_hand((13, 7), (0, 0)).winner == 0


def test_classic_match_hand_by_hand():
    m = Match(BOTH)
    m = m.add_hand((13, 7), (2, 1))  # cancel: (1, 0) -> 18 - 7
    m = m.add_hand((13, 7), (4, 0))  # 33 - 7 -> 51 - 14
    assert m.totals == (51, 14)
    m = m.add_hand((6, 14), (1, 2))  # Alex at 51: his Sur void; Bob's two score -> 57 - 38
    assert m.hands[-1].surs_void == (1, 0) and m.hands[-1].surs_scored == (0, 2)
    assert m.totals == (57, 38) and not m.is_over
    m = m.add_hand((13, 7), (0, 0))
    assert m.totals == (70, 45) and m.winner == 0


def test_single_hand():
    m = Match(PRESETS["hand"]).add_hand((10, 10), (0, 0))
    assert m.is_over and m.winner is None  # a tied hand
    assert Match(PRESETS["hand"]).add_hand((13, 7), (0, 0)).winner == 0


def test_a_variants_match_is_played_to_its_target_with_its_sur_points():
    """Issue 41: the match target and a Sur's worth are fields of the variant's row; a match of
    ``tiny`` hands ends at its 42 points and its Surs score 3, not 5."""
    from pasur.game.variants import get_variant

    tiny = get_variant("tiny")
    rules = MatchRules.for_variant(tiny, sur_cancellation=True)
    assert (rules.target, rules.sur_points, rules.sur_cancellation) == (42, 3, True)
    m = Match(rules).add_hand(card_points=(20, 5), surs=(3, 1))  # Bob's Sur cancels one of Alex's
    assert m.totals == (20 + 2 * 3, 5) and not m.is_over
    m = m.add_hand(card_points=(16, 0), surs=(0, 0))
    assert m.totals == (42, 5) and m.is_over and m.winner == 0
    assert MatchRules.for_variant() == PRESETS["match"]  # the standard game: 62, Surs 5
    assert MatchRules.from_dict(rules.to_dict()) == rules
    assert "sur_points" not in PRESETS["classic"].to_dict()  # stored rules of the standard game unchanged
    with pytest.raises(ValueError, match="50-point rule"):
        MatchRules.for_variant(tiny, fifty_point_rule=True)
