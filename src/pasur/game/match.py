"""Match rules as data: several hands played to a target, Sur cancellation, the 50-point rule.

A *hand* is one game of the spec (52 cards, six rounds). People play a *match* of hands until a
player reaches 62 points, usually with two house rules (``docs/rules.md``, "Match rules"). The
rules engine and the solvers know nothing of this: a hand is played and valued as the spec says,
and this module scores the finished hand under a :class:`MatchRules` and adds it to a
:class:`Match`. Everything here is pure and immutable.

>>> classic = PRESETS["classic"]
>>> m = Match(classic)
>>> m = m.add_hand(card_points=(13, 7), surs=(2, 1))   # Bob's Sur cancels one of Alex's
>>> m.hands[-1].surs_scored, m.totals
((1, 0), (18, 7))
>>> m = m.add_hand(card_points=(13, 7), surs=(4, 0))
>>> m.totals, m.is_over
((51, 14), False)
>>> m = m.add_hand(card_points=(13, 7), surs=(3, 0))   # Alex starts it at 51: no Surs for him
>>> m.hands[-1].surs_void, m.totals, m.winner
((3, 0), (64, 21), 0)
"""

from __future__ import annotations

from dataclasses import dataclass, field

from pasur.game.cards import SUR_POINTS
from pasur.game.variants import STANDARD, Variant

#: the usual target of a match
TARGET = 62
#: a player whose match total is at least this at the start of a hand scores no Surs in it
FIFTY = 50
#: the largest target accepted (a match to it is still a few dozen hands)
MAX_TARGET = 1000


@dataclass(frozen=True, slots=True)
class MatchRules:
    """How hands are scored and when a match ends.

    ``target``: the match ends after the first hand that leaves a player at ``target`` or more
    (``None``: a single hand); ``sur_cancellation``: a Sur made while the opponent has uncancelled
    Surs in the hand cancels one of them instead of scoring; ``fifty_point_rule``: a player whose
    match total is 50 or more at the start of a hand scores no Surs in it; ``sur_points``: what a
    scored Sur adds (the variant's, :meth:`for_variant`).
    """

    target: int | None = TARGET
    sur_cancellation: bool = False
    fifty_point_rule: bool = False
    sur_points: int = SUR_POINTS

    @classmethod
    def for_variant(cls, variant: Variant = STANDARD, **house_rules: bool) -> MatchRules:
        """A match of ``variant``'s hands to its own target (its ``match_target``), its Surs worth
        its ``sur_points``. The 50-point rule is the standard game's (50 of 62): refused for
        another variant rather than guessed at its scale.

        >>> from pasur.game.variants import get_variant
        >>> MatchRules.for_variant(get_variant("tiny")).target, MatchRules.for_variant().target
        (42, 62)
        """
        if house_rules.get("fifty_point_rule") and not variant.is_standard:
            raise ValueError(f"the 50-point rule is the standard game's: not for variant {variant.name}")
        return cls(variant.match_target, sur_points=variant.sur_points, **house_rules)

    def __post_init__(self) -> None:
        if self.target is not None and not (isinstance(self.target, int) and 1 <= self.target <= MAX_TARGET):
            raise ValueError(f"a match target is a number of points from 1 to {MAX_TARGET}, got {self.target!r}")
        if self.fifty_point_rule and self.target is None:
            raise ValueError("the 50-point rule needs a match (a target): a single hand starts at 0")

    @property
    def single_hand(self) -> bool:
        return self.target is None

    def to_dict(self) -> dict:
        """As stored and sent; ``sur_points`` only when it is not the standard game's 5."""
        out = {"target": self.target, "sur_cancellation": self.sur_cancellation}
        out["fifty_point_rule"] = self.fifty_point_rule
        return out if self.sur_points == SUR_POINTS else {**out, "sur_points": self.sur_points}

    @classmethod
    def from_dict(cls, d: dict) -> MatchRules:
        sur = int(d.get("sur_points", SUR_POINTS))
        return cls(d.get("target"), bool(d.get("sur_cancellation")), bool(d.get("fifty_point_rule")), sur)


#: named rule sets: one hand of the spec, a plain match to 62, and a match with both house rules
PRESETS: dict[str, MatchRules] = {
    "hand": MatchRules(target=None),
    "match": MatchRules(TARGET),
    "classic": MatchRules(TARGET, sur_cancellation=True, fifty_point_rule=True),
}


def _pair(f) -> tuple[int, int]:
    return f(0), f(1)


@dataclass(frozen=True, slots=True)
class HandScore:
    """A finished hand under match rules. ``card_points`` include the clubs bonus; of each
    player's ``surs_made``, ``surs_void`` were barred by the 50-point rule (they neither score
    nor cancel), ``surs_cancelled`` were cancelled by the opponent's, ``surs_scored`` count."""

    card_points: tuple[int, int]
    surs_made: tuple[int, int]
    surs_void: tuple[int, int]
    surs_cancelled: tuple[int, int]
    surs_scored: tuple[int, int]
    sur_points: int = SUR_POINTS

    @property
    def points(self) -> tuple[int, int]:
        """What each player adds to their match total."""
        return _pair(lambda p: self.card_points[p] + self.sur_points * self.surs_scored[p])

    @property
    def spec_points(self) -> tuple[int, int]:
        """The hand's points as the rules of the hand count them (every Sur scores): what the
        agents play for."""
        return _pair(lambda p: self.card_points[p] + self.sur_points * self.surs_made[p])


def score_hand(
    rules: MatchRules,
    card_points: tuple[int, int],
    surs: tuple[int, int],
    totals: tuple[int, int] = (0, 0),
) -> HandScore:
    """Score one hand: ``card_points`` (cards and clubs bonus) and ``surs`` made by each player,
    ``totals`` the match totals at the start of the hand.

    Cancellation depends only on the counts, not on the order of the Surs: after each Sur at most
    one player holds uncancelled Surs, and their number is the running difference of the counts.

    >>> score_hand(MatchRules(sur_cancellation=True), (10, 10), (1, 3)).surs_scored
    (0, 2)
    >>> score_hand(MatchRules(fifty_point_rule=True), (10, 10), (1, 1), totals=(50, 49)).points
    (10, 15)
    """
    for p in (0, 1):
        if card_points[p] < 0 or surs[p] < 0 or totals[p] < 0:
            raise ValueError(f"points, Surs and totals are never negative: {card_points}, {surs}, {totals}")
    barred = _pair(lambda p: rules.fifty_point_rule and totals[p] >= FIFTY)
    void = _pair(lambda p: surs[p] if barred[p] else 0)
    live = _pair(lambda p: surs[p] - void[p])
    cancelled = (min(live), min(live)) if rules.sur_cancellation else (0, 0)
    scored = _pair(lambda p: live[p] - cancelled[p])
    return HandScore(tuple(card_points), tuple(surs), void, cancelled, scored, rules.sur_points)  # type: ignore[arg-type]


@dataclass(frozen=True, slots=True)
class Match:
    """The hands scored so far under ``rules``; players are the hands' seats 0 and 1 as the caller
    numbers them (a caller that swaps seats between hands keeps its own numbering here)."""

    rules: MatchRules
    hands: tuple[HandScore, ...] = field(default=())

    @property
    def totals(self) -> tuple[int, int]:
        return _pair(lambda p: sum(h.points[p] for h in self.hands))

    @property
    def is_over(self) -> bool:
        """A single hand ends the match; otherwise a hand that leaves someone at the target or more
        does, unless the totals are equal (then another hand is played)."""
        if not self.hands:
            return False
        if self.rules.single_hand:
            return True
        a, b = self.totals
        return max(a, b) >= self.rules.target and a != b  # type: ignore[operator]

    @property
    def winner(self) -> int | None:
        """The player with the higher total once the match is over; ``None`` before, or for a tied
        single hand."""
        if not self.is_over:
            return None
        a, b = self.totals
        return None if a == b else (0 if a > b else 1)

    def add_hand(self, card_points: tuple[int, int], surs: tuple[int, int]) -> Match:
        """The match after one more hand, scored with the totals at its start."""
        if self.is_over:
            raise ValueError("the match is over")
        hand = score_hand(self.rules, card_points, surs, self.totals)
        return Match(self.rules, (*self.hands, hand))
