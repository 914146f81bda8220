"""Poker games as data: one frozen description per game, and the presets.

A game is fully described by this record (pokerkit style): the deck (ranks and suits), private
cards per player, board cards revealed at the start of each round, the ante, the fixed bet size
and the cap on bets and raises of each round, who acts first in each round, whether a player may
fold when not facing a bet, and the hand evaluator. Every engine in this package reads only this
record, so a new variant is a new record, not new code.

>>> g = get_game("leduc")
>>> g.n_cards, g.n_rounds, g.bet_sizes
(6, 2, (2, 4))
>>> get_game("numeral211").n_cards
40
>>> get_game("leduc", ante=2).ante
2
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass, field

from pasur.common.errors import PasurInputError

#: hand evaluators (see :mod:`pasur.poker.evaluator`)
EVALUATORS = ("best3",)


@dataclass(frozen=True)
class PokerGame:
    """A two-player fixed-limit poker game with antes.

    Cards are numbered ``rank * n_suits + suit`` (ranks weakest first), as in OpenSpiel's Kuhn and
    Leduc poker, so card ids, and with them information-state strings, agree with OpenSpiel's.
    """

    name: str
    #: rank symbols, weakest first (``"JQK"``)
    ranks: str
    #: suit symbols, one character each (``"sh"``)
    suits: str
    #: private cards dealt to each player (1 or 2)
    hole_cards: int
    #: board cards revealed at the start of each round (round 1 usually 0); one entry per round
    board_cards: tuple[int, ...]
    #: chips each player puts in before the deal
    ante: int
    #: the fixed size of a bet or raise in each round
    bet_sizes: tuple[int, ...]
    #: the most bets plus raises in each round
    max_bets: tuple[int, ...]
    #: the player (0 or 1) who acts first in each round
    first_player: tuple[int, ...]
    #: whether a player may fold when not facing a bet (a dominated action, for studies of it)
    fold_without_bet: bool = False
    #: the hand ranking; ``best3``: the best three-card poker hand of private and board cards
    #: (straight flush > three of a kind > straight > flush > pair > high card; fewer than three
    #: cards: pair > high card)
    evaluator: str = "best3"
    #: the OpenSpiel game with exactly these rules, when there is one
    openspiel: str | None = None
    #: one line for ``pasur poker games``
    description: str = field(default="", compare=False)
    #: chips in one big blind, the unit of mb/g (``1000 * chips per game / big blind``,
    #: docs/conventions.md); None: the ante. A unit of reporting, not a rule: it is left out of
    #: the game's identity (equality, the strategy files' game record).
    big_blind: int | None = field(default=None, compare=False)

    def __post_init__(self) -> None:
        validate(self)

    @property
    def blind(self) -> float:
        """One big blind in chips, the unit of mb/g: :attr:`big_blind`, or the ante."""
        return float(self.ante if self.big_blind is None else self.big_blind)

    def mbg(self, chips: float) -> float:
        """``chips`` per game in milli-big-blinds per game (mb/g): ``1000 * chips / blind``."""
        if self.blind <= 0:
            raise PasurInputError(f"game {self.name!r} has no big blind (ante 0): give big_blind to report mb/g")
        return 1000 * chips / self.blind

    @property
    def n_ranks(self) -> int:
        return len(self.ranks)

    @property
    def n_suits(self) -> int:
        return len(self.suits)

    @property
    def n_cards(self) -> int:
        return self.n_ranks * self.n_suits

    @property
    def n_rounds(self) -> int:
        return len(self.board_cards)

    def card_text(self, card: int) -> str:
        """``"Ks"``; a one-suit deck (Kuhn) writes the rank alone."""
        r, s = divmod(card, self.n_suits)
        return self.ranks[r] + (self.suits[s] if self.n_suits > 1 else "")

    def cards_text(self, cards) -> str:
        return "".join(self.card_text(int(c)) for c in cards)


def validate(g: PokerGame) -> None:
    """Refuse a description that no engine can play, naming the field."""

    def bad(msg: str) -> PasurInputError:
        return PasurInputError(f"game {g.name!r}: {msg}")

    if not g.ranks or len(set(g.ranks)) != len(g.ranks):
        raise bad(f"ranks {g.ranks!r} must be distinct symbols")
    if not g.suits or len(set(g.suits)) != len(g.suits):
        raise bad(f"suits {g.suits!r} must be distinct symbols")
    if g.hole_cards not in (1, 2):
        raise bad(f"hole_cards must be 1 or 2 (got {g.hole_cards})")
    n = g.n_rounds
    if n < 1:
        raise bad("needs at least one round")
    for fname in ("bet_sizes", "max_bets", "first_player"):
        if len(getattr(g, fname)) != n:
            raise bad(f"{fname} needs one entry per round ({n})")
    if any(b < 0 for b in g.board_cards):
        raise bad("board_cards must be >= 0")
    if 2 * g.hole_cards + sum(g.board_cards) > g.n_cards:
        raise bad(
            f"a deck of {g.n_cards} cards cannot deal {2 * g.hole_cards} private and {sum(g.board_cards)} board cards"
        )
    if g.ante < 0 or any(b <= 0 for b in g.bet_sizes) or any(m < 0 for m in g.max_bets):
        raise bad("ante must be >= 0, bet sizes > 0, caps >= 0")
    if g.big_blind is not None and g.big_blind <= 0:
        raise bad("big_blind must be > 0")
    if any(p not in (0, 1) for p in g.first_player):
        raise bad("first_player entries must be 0 or 1")
    if g.evaluator not in EVALUATORS:
        raise bad(f"unknown evaluator {g.evaluator!r} (known: {', '.join(EVALUATORS)})")


KUHN = PokerGame(
    name="kuhn",
    ranks="JQK",
    suits="s",
    hole_cards=1,
    board_cards=(0,),
    ante=1,
    bet_sizes=(1,),
    max_bets=(1,),
    first_player=(0,),
    openspiel="kuhn_poker",
    big_blind=1,  # the ante (no blinds): the chip each player puts in
    description="Kuhn poker (OpenSpiel's kuhn_poker): J Q K, one card each, ante 1, one bet of 1",
)

LEDUC = PokerGame(
    name="leduc",
    ranks="JQK",
    suits="sh",
    hole_cards=1,
    board_cards=(0, 1),
    ante=1,
    bet_sizes=(2, 4),
    max_bets=(2, 2),
    first_player=(0, 0),
    openspiel="leduc_poker",
    big_blind=1,  # the ante (no blinds), as the BUFP paper's mb/h
    description="Leduc hold'em (OpenSpiel's leduc_poker): 6 cards, ante 1, raises 2 then 4, two per round",
)

LEDUC5 = dataclasses.replace(
    LEDUC,
    name="leduc5",
    ranks="TJQKA",
    openspiel=None,
    description="5-Leduc (the BUFP paper): Leduc with 5 ranks, 10 cards",
)

NUMERAL211 = PokerGame(
    name="numeral211",
    ranks="23456789TA",
    suits="shdc",
    hole_cards=2,
    board_cards=(0, 1, 1),
    ante=5,
    bet_sizes=(10, 20, 20),
    max_bets=(4, 4, 4),
    first_player=(0, 1, 1),
    # The ante: Numeral211 has antes and no blinds, and the ante is each player's forced bet,
    # the role the big blind has in blinds games; the same rule as Kuhn and Leduc, and the unit
    # of every mb/g we report. (Taking the round-1 bet of 10, as the small bet equals the big
    # blind in limit hold'em, would halve every mb/g: say which when comparing.)
    big_blind=5,
    description="Numeral211 hold'em (Embedding CFR, A.3): 40 cards, two private, flop 1, turn 1, best 3 of 4",
)

NUMERAL211_R5 = dataclasses.replace(
    NUMERAL211,
    name="numeral211-r5",
    ranks="789TA",
    description="Numeral211 with 5 ranks (20 cards), for tests",
)

NUMERAL211_TINY = dataclasses.replace(
    NUMERAL211,
    name="numeral211-tiny",
    ranks="9TJA",
    suits="sh",
    max_bets=(2, 2, 2),
    description="Numeral211 with 4 ranks, 2 suits (8 cards) and two bets per round, for tests",
)

PRESETS: dict[str, PokerGame] = {g.name: g for g in (KUHN, LEDUC, LEDUC5, NUMERAL211, NUMERAL211_R5, NUMERAL211_TINY)}


def get_game(name: str | PokerGame, **overrides) -> PokerGame:
    """A preset by name (or a description as is), with fields replaced by ``overrides``.

    A replaced rule makes a different game: it loses the ``openspiel`` tag unless given again.
    """
    if isinstance(name, PokerGame):
        game = name
    else:
        key = name.strip().lower()
        if key not in PRESETS:
            raise PasurInputError(f"unknown game {name!r} (known: {', '.join(PRESETS)})")
        game = PRESETS[key]
    if not overrides:
        return game
    fields = {f.name for f in dataclasses.fields(PokerGame)}
    unknown = sorted(set(overrides) - fields)
    if unknown:
        raise PasurInputError(f"unknown game field(s) {', '.join(unknown)}")
    rules_changed = set(overrides) - {"name", "description", "openspiel", "big_blind"}
    extra = {} if "openspiel" in overrides or not rules_changed else {"openspiel": None}
    if "ante" in overrides and "big_blind" not in overrides:
        extra["big_blind"] = None  # the preset's big blind is its ante: it follows the ante given
    return dataclasses.replace(game, **overrides, **extra)
