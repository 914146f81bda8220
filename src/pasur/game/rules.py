"""What one played card can do against a pool: the spec's *A turn* section.

Pure functions over card masks (see :mod:`pasur.game.cards`); no game state here, so
the tensor engine and the solvers can be checked against these one rule at a time.

>>> from pasur.game.cards import parse_card as C, mask_of, format_cards
>>> pool = mask_of([C("AS"), C("3D"), C("7H"), C("QC")])
>>> [format_cards(a.captured) for a in card_actions(C("7C"), pool)]   # 7 + 3 + A = 11
['AS 3D']
>>> [format_cards(a.captured) for a in card_actions(C("JD"), pool)]   # Jack: all but Q/K
['AS 3D 7H']
>>> [a.is_lay for a in card_actions(C("KD"), pool)]                   # nothing to take: laid
[True]
"""

from __future__ import annotations

from dataclasses import dataclass
from functools import lru_cache

from pasur.game.cards import (
    JACK,
    JACK_MASK,
    KING,
    KING_MASK,
    N_ROUNDS,
    NUMERIC_MASK,
    QUEEN,
    QUEEN_MASK,
    cards_of,
    format_card,
    format_cards,
    rank,
    value,
)
from pasur.game.variants import STANDARD, Variant

CAPTURE_SUM = 11


@dataclass(frozen=True, slots=True, order=True)
class Action:
    """A played card and the exact set (mask) it captures; ``captured == 0`` means laid.

    Ordered by (card, captured), which is the deterministic order of :func:`legal_actions`.
    """

    card: int
    captured: int = 0

    @property
    def is_lay(self) -> bool:
        return self.captured == 0

    @property
    def is_capture(self) -> bool:
        return self.captured != 0

    def __str__(self) -> str:
        if self.is_lay:
            return f"{format_card(self.card)} lays"
        return f"{format_card(self.card)} takes {format_cards(self.captured)}"

    def describe(self, *, unicode: bool = False) -> str:
        c = format_card(self.card, unicode=unicode)
        if self.is_lay:
            return f"lay {c}"
        return f"{c} takes {format_cards(self.captured, unicode=unicode)}"


@lru_cache(maxsize=1 << 16)
def numeric_captures(numeric_pool: int, target: int) -> tuple[int, ...]:
    """All non-empty subsets (masks) of the numeric pool cards whose values sum to ``target``.

    Different suits are different subsets. Ascending by mask.
    """
    cards = cards_of(numeric_pool & NUMERIC_MASK)
    out: list[int] = []

    def extend(i: int, remaining: int, chosen: int) -> None:
        if remaining == 0:
            out.append(chosen)
            return
        for j in range(i, len(cards)):
            v = value(cards[j])
            if v <= remaining:
                extend(j + 1, remaining - v, chosen | (1 << cards[j]))

    if target > 0:
        extend(0, target, 0)
    return tuple(sorted(out))


def captures_for(card: int, pool: int) -> tuple[int, ...]:
    """Every set ``card`` can capture from ``pool``; empty when it has no capture."""
    r = rank(card)
    if r < JACK:
        return numeric_captures(pool & NUMERIC_MASK, CAPTURE_SUM - value(card))
    if r == JACK:
        taken = pool & (NUMERIC_MASK | JACK_MASK)
        return (taken,) if taken else ()
    same = QUEEN_MASK if r == QUEEN else KING_MASK
    assert r in (QUEEN, KING)
    return tuple(1 << c for c in cards_of(pool & same))


def card_actions(card: int, pool: int) -> list[Action]:
    """The actions of one card: its captures if it has any (must capture), else laying it."""
    caps = captures_for(card, pool)
    if caps:
        return [Action(card, s) for s in caps]
    return [Action(card, 0)]


def legal_actions(hand: int, pool: int) -> list[Action]:
    """All actions of a player holding ``hand`` against ``pool``, sorted by (card, captured)."""
    out: list[Action] = []
    for c in cards_of(hand):
        out.extend(card_actions(c, pool))
    return out


def is_sur(action: Action, pool: int, round_: int, *, final_round: int = 5) -> bool:
    """A capture that empties the pool, not made with a Jack, before the final round."""
    return action.captured != 0 and action.captured == pool and rank(action.card) != JACK and round_ < final_round


def immediate_points(
    action: Action, pool: int, round_: int, *, final_round: int = N_ROUNDS - 1, variant: Variant = STANDARD
) -> int:
    """The points ``action`` wins at once for its player, played against ``pool`` in round
    ``round_``: the card points of what it takes, the played card included (Aces, Jacks, 2♣, 10♦),
    and 5 for a Sur. A lay wins nothing; the clubs bonus is not counted (it goes to whoever ends
    with 7 clubs), nor the final sweep. ``variant``: its point cards and Sur points (give its
    ``final_round`` too).

    >>> from pasur.game.cards import parse_card as C, mask_of
    >>> pool = mask_of([C("AC"), C("AD"), C("AH"), C("2C")])
    >>> immediate_points(Action(C("6S"), pool), pool, 0)   # 1 + 1 + 1 + 2, and a Sur
    10
    >>> immediate_points(Action(C("6S"), pool), pool, 5)   # no Sur in the final round
    5
    """
    if not action.captured:
        return 0
    sur = is_sur(action, pool, round_, final_round=final_round)
    return variant.points_in(action.captured | (1 << action.card)) + (variant.sur_points if sur else 0)
