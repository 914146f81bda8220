"""Pasur's rule variants as data: a variant is a row of :data:`VARIANTS`, not a fork of the code.

A :class:`Variant` fixes what the spec leaves as numbers: the deck (the ranks and suits used,
cards keeping their standard indices ``4 * rank + suit``), the cards per hand, the number of
deals, the initial pool's size, the scoring constants (the points of each scoring card, the clubs
threshold and bonus, the points of a Sur) and the match target. The capture rules themselves
(numeric cards sum to 11, a Jack takes every numeric card and Jack, a Queen or King takes one of
its rank, must-capture card by card, Surs before the final deal, the final sweep to the last
capturer) are the same in every variant, so :mod:`pasur.game.rules` serves them all unchanged.

The standard game is the row ``standard``; every engine defaults to it, with the constants of
:mod:`pasur.game.cards`. The small rows keep the game's character (sums to 11, Jacks sweep, Queens
and Kings pair, Surs, the clubs race, two deals so the deal boundary matters) on a deck small
enough that the whole hidden-hand game can be solved exactly (:mod:`pasur.hidden.exact_cfr`,
``docs/variants.md``).

>>> v = get_variant("mini")
>>> v.n_cards, v.pool_size + 2 * v.hand_size * v.deals, v.final_round, v.total_card_points
(10, 10, 1, 9)
>>> get_variant("standard").n_cards, get_variant("standard").clubs_for_bonus
(52, 7)
"""

from __future__ import annotations

from dataclasses import dataclass, field
from math import comb

from pasur.common.errors import PasurInputError

_RANK_LETTERS = "A23456789TJQK"
_SUIT_LETTERS = "CDHS"
_JACK, _CLUBS = 10, 0


def _card(text: str) -> int:
    """``"TD"`` -> 37 (this module stays below :mod:`pasur.game.cards`, which imports it)."""
    return 4 * _RANK_LETTERS.index(text[0]) + _SUIT_LETTERS.index(text[1])


@dataclass(frozen=True)
class Variant:
    """One rule set. Cards keep their standard indices; ``point_cards`` lists ``(card, points)``
    of every card that scores when captured; whoever captures ``clubs_for_bonus`` clubs or more
    gets ``clubs_bonus``; a Sur is worth ``sur_points``. ``match_target``: the points a match is
    played to (:mod:`pasur.game.match`)."""

    name: str
    about: str
    ranks: tuple[int, ...]
    suits: tuple[int, ...]
    hand_size: int
    deals: int
    pool_size: int
    point_cards: tuple[tuple[int, int], ...]
    clubs_for_bonus: int
    clubs_bonus: int
    sur_points: int
    match_target: int = 62
    # derived, for the engines' hot paths (not compared: they follow from the fields above)
    deck_mask: int = field(init=False, compare=False, repr=False)
    club_mask: int = field(init=False, compare=False, repr=False)
    point_mask: int = field(init=False, compare=False, repr=False)
    _points: dict = field(init=False, compare=False, repr=False)

    def __post_init__(self) -> None:
        deck = sum(1 << (4 * r + s) for r in self.ranks for s in self.suits)
        object.__setattr__(self, "deck_mask", deck)
        object.__setattr__(self, "club_mask", sum(1 << (4 * r + _CLUBS) for r in self.ranks if _CLUBS in self.suits))
        object.__setattr__(self, "point_mask", sum(1 << c for c, _ in self.point_cards))
        object.__setattr__(self, "_points", dict(self.point_cards))
        self._check()

    def _check(self) -> None:
        if len(set(self.ranks)) != len(self.ranks) or not all(0 <= r < 13 for r in self.ranks):
            raise PasurInputError(f"variant {self.name}: ranks must be distinct, 0..12")
        if len(set(self.suits)) != len(self.suits) or not all(0 <= s < 4 for s in self.suits):
            raise PasurInputError(f"variant {self.name}: suits must be distinct, 0..3")
        if min(self.hand_size, self.deals) < 1 or self.pool_size < 0:
            raise PasurInputError(f"variant {self.name}: at least one card per hand and one deal")
        need = self.pool_size + 2 * self.hand_size * self.deals
        if need != self.n_cards:
            raise PasurInputError(f"variant {self.name}: {self.n_cards} cards, but the deals use {need}")
        if any(not self.deck_mask >> c & 1 or p <= 0 for c, p in self.point_cards):
            raise PasurInputError(f"variant {self.name}: a point card is not in the deck or scores nothing")
        if self.pool_size > self.n_cards - self.jack_count:
            raise PasurInputError(f"variant {self.name}: the pool holds no Jack, and there are too few other cards")

    # -- the deck ----------------------------------------------------------------------------
    @property
    def n_cards(self) -> int:
        return len(self.ranks) * len(self.suits)

    @property
    def cards(self) -> tuple[int, ...]:
        """The deck's cards, ascending."""
        return tuple(c for c in range(52) if self.deck_mask >> c & 1)

    @property
    def jack_count(self) -> int:
        return len(self.suits) if _JACK in self.ranks else 0

    @property
    def n_clubs(self) -> int:
        return self.club_mask.bit_count()

    @property
    def final_round(self) -> int:
        return self.deals - 1

    @property
    def turns_per_round(self) -> int:
        return 2 * self.hand_size

    @property
    def is_standard(self) -> bool:
        """Whether these are the standard game's rules (whatever the row's name)."""
        return self is STANDARD or self == STANDARD

    # -- scores --------------------------------------------------------------------------------
    def card_points(self, card: int) -> int:
        return self._points.get(card, 0)

    def points_in(self, mask: int) -> int:
        """Card points in a set of captured cards (no clubs bonus, no Surs)."""
        m, total, pts = mask & self.point_mask, 0, self._points
        while m:
            low = m & -m
            total += pts[low.bit_length() - 1]
            m ^= low
        return total

    @property
    def total_card_points(self) -> int:
        return sum(p for _, p in self.point_cards)

    def deals_count(self) -> int:
        """How many deals (pool, then each hand as a set, in dealing order) chance can make."""
        n = self.n_cards - self.pool_size
        count = comb(self.n_cards - self.jack_count, self.pool_size)
        for _ in range(2 * self.deals):
            count *= comb(n, self.hand_size)
            n -= self.hand_size
        return count

    def describe(self) -> dict:
        """The row as plain data (JSON), cards as text."""
        text = lambda c: _RANK_LETTERS[c >> 2] + _SUIT_LETTERS[c & 3]  # noqa: E731
        return {
            "name": self.name,
            "about": self.about,
            "ranks": "".join(_RANK_LETTERS[r] for r in self.ranks),
            "suits": "".join(_SUIT_LETTERS[s] for s in self.suits),
            "cards": self.n_cards,
            "hand_size": self.hand_size,
            "deals": self.deals,
            "pool_size": self.pool_size,
            "point_cards": {text(c): p for c, p in self.point_cards},
            "clubs_for_bonus": self.clubs_for_bonus,
            "clubs_bonus": self.clubs_bonus,
            "sur_points": self.sur_points,
            "match_target": self.match_target,
        }


_ALL_RANKS = tuple(range(13))
_ALL_SUITS = (0, 1, 2, 3)

#: the standard game (``shared/spec/pasur-rules.md``): the constants of :mod:`pasur.game.cards`
STANDARD = Variant(
    name="standard",
    about="the standard game: 52 cards, 4 in the pool, 6 deals of 4 cards each",
    ranks=_ALL_RANKS,
    suits=_ALL_SUITS,
    hand_size=4,
    deals=6,
    pool_size=4,
    point_cards=tuple(sorted([(c, 1) for c in (0, 1, 2, 3, 40, 41, 42, 43)] + [(_card("2C"), 2), (_card("TD"), 3)])),
    clubs_for_bonus=7,
    clubs_bonus=7,
    sur_points=5,
)

#: scoring of the small variants, scaled from the standard game's: Aces and Jacks 1 each; as 2♣,
#: the lowest numeric club above the Ace 2; as 10♦, the highest numeric diamond 3 (9 card points
#: in all, against 13); the clubs bonus, 7 for 7 of the 13 clubs, becomes 5 for a majority of the
#: deck's clubs (about 7/13 of the card points); a Sur, a quarter of a hand's 20 points, becomes 3;
#: a match, about three hands' points (62), 42.
_SMALL_SCORING = {"clubs_bonus": 5, "sur_points": 3, "match_target": 42}

#: the small variants: two suits (clubs, diamonds), a Jack, a King to pair, two deals
SMALL = (
    Variant(
        name="mini",
        about="10 cards (A 5 6 J K of clubs and diamonds), 2 in the pool, 2 deals of 2 cards",
        ranks=(0, 4, 5, 10, 12),
        suits=(0, 1),
        hand_size=2,
        deals=2,
        pool_size=2,
        point_cards=((0, 1), (1, 1), (_card("5C"), 2), (_card("6D"), 3), (40, 1), (41, 1)),
        clubs_for_bonus=3,
        **_SMALL_SCORING,
    ),
    Variant(
        name="tiny",
        about="8 cards (A T J K of clubs and diamonds), no pool, 2 deals of 2 cards",
        ranks=(0, 9, 10, 12),
        suits=(0, 1),
        hand_size=2,
        deals=2,
        pool_size=0,
        point_cards=((0, 1), (1, 1), (_card("TC"), 2), (_card("TD"), 3), (40, 1), (41, 1)),
        clubs_for_bonus=3,
        **_SMALL_SCORING,
    ),
)

#: the smallest rows, for checks against OpenSpiel (whose game deals card by card), not small
#: variants that keep the game's character: ``micro`` has two deals of one card (a player chooses
#: only among the captures of its card), ``duo`` one deal of two
MICRO = Variant(
    name="micro",
    about="6 cards (A T J of clubs and diamonds), 2 in the pool, 2 deals of 1 card: for checks",
    ranks=(0, 9, 10),
    suits=(0, 1),
    hand_size=1,
    deals=2,
    pool_size=2,
    point_cards=((0, 1), (1, 1), (_card("TC"), 2), (_card("TD"), 3), (40, 1), (41, 1)),
    clubs_for_bonus=2,
    **_SMALL_SCORING,
)

#: the other check row: one deal of two cards, so each player chooses which card to play
DUO = Variant(
    name="duo",
    about="6 cards (A T J of clubs and diamonds), 2 in the pool, 1 deal of 2 cards: for checks",
    ranks=(0, 9, 10),
    suits=(0, 1),
    hand_size=2,
    deals=1,
    pool_size=2,
    point_cards=MICRO.point_cards,
    clubs_for_bonus=2,
    **_SMALL_SCORING,
)

#: every named variant, by name; ``standard`` first
VARIANTS: dict[str, Variant] = {v.name: v for v in (STANDARD, *SMALL, MICRO, DUO)}


def get_variant(name: str | Variant) -> Variant:
    """The variant of that name (a :class:`Variant` is returned as is); an unknown name is one
    :class:`PasurInputError` naming the known ones."""
    if isinstance(name, Variant):
        return name
    try:
        return VARIANTS[name]
    except (KeyError, TypeError):
        raise PasurInputError(f"unknown variant {name!r} (known: {', '.join(VARIANTS)})") from None
