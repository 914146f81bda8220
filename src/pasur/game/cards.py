"""Cards, card sets and decks, as fixed by ``shared/spec/pasur-rules.md``.

A card is an ``int`` in ``0..51``: ``index = 4 * rank + suit`` with ranks
``0 = Ace .. 9 = 10, 10 = Jack, 11 = Queen, 12 = King`` and suits
``0 = clubs, 1 = diamonds, 2 = hearts, 3 = spades``.

A *set* of cards is an ``int`` bit mask (bit ``i`` set when card ``i`` is in the set).
Masks make the rules engine and the reference solver fast and hashable while
staying easy to read through the helpers below (:func:`cards_of`, :func:`mask_of`).

>>> parse_card("TD"), parse_card("10♦"), parse_card("a♣"), parse_card("KS")
(37, 37, 0, 51)
>>> format_card(37), format_card(37, unicode=True)
('TD', '10♦')
>>> format_cards(mask_of([0, 40, 51]))
'AC JC KS'
"""

from __future__ import annotations

import json
import random
import re
from collections.abc import Iterable, Iterator, Sequence
from dataclasses import dataclass, field
from pathlib import Path

from pasur.common.errors import PasurInputError
from pasur.game.variants import STANDARD, Variant, get_variant

N_CARDS = 52
N_RANKS = 13
N_SUITS = 4

ACE, JACK, QUEEN, KING = 0, 10, 11, 12
CLUBS, DIAMONDS, HEARTS, SPADES = 0, 1, 2, 3

RANK_LETTERS = "A23456789TJQK"
SUIT_LETTERS = "CDHS"
SUIT_SYMBOLS = "♣♦♥♠"
_RANK_WORDS = ["A", "2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q", "K"]

TWO_OF_CLUBS = 4  # 2♣
TEN_OF_DIAMONDS = 37  # 10♦
SEVEN_OF_CLUBS = 24  # 7♣, tracked by the paper's inherited-score key


def rank(card: int) -> int:
    """Rank index 0..12 (0 = Ace, 10 = Jack, 11 = Queen, 12 = King)."""
    return card >> 2


def suit(card: int) -> int:
    """Suit index 0..3 (clubs, diamonds, hearts, spades)."""
    return card & 3


def value(card: int) -> int:
    """Capture value of a numeric card (Ace = 1 .. 10 = 10); 0 for court cards."""
    r = card >> 2
    return r + 1 if r < JACK else 0


def is_numeric(card: int) -> bool:
    return card < 40


def card_points(card: int) -> int:
    """Points a single captured card is worth (the clubs bonus is counted apart)."""
    if card == TWO_OF_CLUBS:
        return 2
    if card == TEN_OF_DIAMONDS:
        return 3
    r = card >> 2
    return 1 if r in (ACE, JACK) else 0


def _mask_where(pred) -> int:
    return sum(1 << c for c in range(N_CARDS) if pred(c))


ALL_CARDS = (1 << N_CARDS) - 1
NUMERIC_MASK = (1 << 40) - 1
JACK_MASK = _mask_where(lambda c: rank(c) == JACK)
QUEEN_MASK = _mask_where(lambda c: rank(c) == QUEEN)
KING_MASK = _mask_where(lambda c: rank(c) == KING)
CLUB_MASK = _mask_where(lambda c: suit(c) == CLUBS)
ACE_MASK = _mask_where(lambda c: rank(c) == ACE)
POINT_CARDS_MASK = _mask_where(lambda c: card_points(c) > 0)
N_CLUBS = 13
CLUBS_FOR_BONUS = 7
CLUBS_BONUS = 7
SUR_POINTS = 5


def bit(card: int) -> int:
    return 1 << card


def mask_of(cards: Iterable[int]) -> int:
    m = 0
    for c in cards:
        m |= 1 << c
    return m


def cards_of(mask: int) -> list[int]:
    """Card indices in a mask, ascending."""
    out = []
    while mask:
        low = mask & -mask
        out.append(low.bit_length() - 1)
        mask ^= low
    return out


def iter_cards(mask: int) -> Iterator[int]:
    while mask:
        low = mask & -mask
        yield low.bit_length() - 1
        mask ^= low


def count(mask: int) -> int:
    return mask.bit_count()


def clubs_in(mask: int) -> int:
    return (mask & CLUB_MASK).bit_count()


def points_in(mask: int) -> int:
    """Card points in a set (Aces, Jacks, 2♣, 10♦); no clubs bonus, no Surs."""
    return sum(card_points(c) for c in iter_cards(mask & POINT_CARDS_MASK))


# ---------------------------------------------------------------------------
# Text forms

# re.ASCII: case folding stays ASCII (the Kelvin sign "K" must not pass for a K).
_TOKEN = re.compile(r"^(10|[A2-9TJQK])([CDHS♣♦♥♠])$", re.IGNORECASE | re.ASCII)
_SUIT_INDEX = {**{s: i for i, s in enumerate(SUIT_LETTERS)}, **{s: i for i, s in enumerate(SUIT_SYMBOLS)}}
# Variation selectors sometimes follow suit symbols (♣️); they carry no meaning.
_STRIP = str.maketrans({"\ufe0f": None, "\ufe0e": None})


def parse_card(token: str) -> int:
    """Read one card: ``TD``, ``10D``, ``10♦``, ``td``. Raises :class:`PasurInputError`."""
    raw = token
    t = token.strip().translate(_STRIP)
    m = _TOKEN.match(t)
    if not m:
        raise PasurInputError(f"unknown card {raw!r} (expected rank A,2-9,T/10,J,Q,K then suit C,D,H,S or ♣♦♥♠)")
    r_text, s_text = m.group(1).upper(), m.group(2).upper()
    r = 9 if r_text == "10" else RANK_LETTERS.index(r_text)
    return 4 * r + _SUIT_INDEX[s_text]


def format_card(card: int, *, unicode: bool = False) -> str:
    if not 0 <= card < N_CARDS:
        raise ValueError(f"card index out of range: {card}")
    if unicode:
        return _RANK_WORDS[rank(card)] + SUIT_SYMBOLS[suit(card)]
    return RANK_LETTERS[rank(card)] + SUIT_LETTERS[suit(card)]


def format_cards(cards: int | Iterable[int], *, unicode: bool = False, sep: str = " ") -> str:
    """Format a mask (ascending) or a sequence of cards (in its order)."""
    seq = cards_of(cards) if isinstance(cards, int) else list(cards)
    return sep.join(format_card(c, unicode=unicode) for c in seq)


def parse_cards(text: str) -> list[int]:
    """Read whitespace- or comma-separated cards, keeping their order."""
    return [parse_card(t) for t in re.split(r"[\s,]+", text.strip()) if t]


# ---------------------------------------------------------------------------
# Decks

POOL_SIZE = 4
HAND_SIZE = 4
N_ROUNDS = 6


@dataclass(frozen=True, slots=True)
class Deck:
    """A valid deck in dealing order; see the spec's *Deal* section. ``variant`` (default: the
    standard game, 52 cards) fixes which cards it holds and how they are dealt
    (:mod:`pasur.game.variants`).

    >>> d = Deck.from_seed(3)
    >>> Deck.parse(str(d)) == d
    True
    >>> len(d.hand(0, 5)), d.hand_mask(0, 0) & d.hand_mask(1, 0)
    (4, 0)
    """

    cards: tuple[int, ...]
    variant: Variant = field(default=STANDARD, repr=False)

    def __post_init__(self) -> None:
        validate_deck(self.cards, self.variant)

    # -- construction -----------------------------------------------------
    @classmethod
    def parse(cls, text: str, variant: Variant = STANDARD) -> Deck:
        return cls(tuple(parse_cards(text)), variant)

    @classmethod
    def from_seed(cls, seed: int | None, variant: Variant = STANDARD) -> Deck:
        return random_deck(random.Random(seed), variant)

    # -- layout -------------------------------------------------------------
    @property
    def pool(self) -> tuple[int, ...]:
        return self.cards[0 : self.variant.pool_size]

    def hand(self, player: int, round_: int) -> tuple[int, ...]:
        """Cards player (0 = Alex, 1 = Bob) receives in round ``round_`` (0..5 in the standard game)."""
        v = self.variant
        if not 0 <= round_ < v.deals or player not in (0, 1):
            raise ValueError(f"no hand for player {player} in round {round_}")
        start = v.pool_size + 2 * v.hand_size * round_ + v.hand_size * player
        return self.cards[start : start + v.hand_size]

    def hand_mask(self, player: int, round_: int) -> int:
        return mask_of(self.hand(player, round_))

    @property
    def pool_mask(self) -> int:
        return mask_of(self.pool)

    def __str__(self) -> str:
        return format_cards(self.cards)

    def format(self, *, unicode: bool = False) -> str:
        return format_cards(self.cards, unicode=unicode)


def validate_deck(cards: Sequence[int], variant: Variant = STANDARD) -> None:
    """Refuse anything that is not a valid deck (of ``variant``), naming the problem."""
    seen: dict[int, int] = {}
    for pos, c in enumerate(cards):
        if not isinstance(c, int) or not 0 <= c < N_CARDS:
            raise PasurInputError(f"invalid card {c!r} at position {pos}")
        if c in seen:
            raise PasurInputError(f"duplicate card {format_card(c)} at positions {seen[c]} and {pos}")
        if not variant.deck_mask >> c & 1:
            raise PasurInputError(f"card {format_card(c)} at position {pos} is not in the {variant.name} deck")
        seen[c] = pos
    if len(cards) != variant.n_cards:
        raise PasurInputError(f"a deck has {variant.n_cards} cards, got {len(cards)}")
    for pos in range(variant.pool_size):
        if rank(cards[pos]) == JACK:
            raise PasurInputError(
                f"Jack {format_card(cards[pos])} in the initial pool (position {pos}); the pool may hold no Jack"
            )


def random_deck(rng: random.Random, variant: Variant = STANDARD) -> Deck:
    """Uniform among valid decks: shuffle, and shuffle again while a Jack is in the pool."""
    cards = list(variant.cards)
    while True:
        rng.shuffle(cards)
        if not any(rank(c) == JACK for c in cards[: variant.pool_size]):
            return Deck(tuple(cards), variant)


def parse_deck(text: str, variant: Variant = STANDARD) -> Deck:
    """Read a deck string (of ``variant``, by default the standard game's 52 cards), naming the
    first bad token and any missing cards."""
    tokens = [t for t in re.split(r"[\s,]+", text.strip()) if t]
    cards = []
    for pos, tok in enumerate(tokens):
        try:
            cards.append(parse_card(tok))
        except PasurInputError as e:
            raise PasurInputError(f"position {pos}: {e}") from None
    n = variant.n_cards
    what = "a deck" if variant == STANDARD else f"a {variant.name} deck"
    if len(cards) > n and variant != STANDARD:  # (a standard deck of 53 repeats a card: said as such)
        raise PasurInputError(f"{what} has {n} cards ({format_cards(variant.cards)}), got {len(cards)}")
    if len(cards) < n and len(set(cards)) == len(cards):
        missing = sorted(set(variant.cards) - set(cards))
        shown = format_cards(missing[:8]) + (f" and {len(missing) - 8} more" if len(missing) > 8 else "")
        raise PasurInputError(f"{what} has {n} cards, got {len(cards)}; missing {shown}")
    return Deck(tuple(cards), variant)


@dataclass(frozen=True, slots=True)
class NamedDeck:
    """A deck with an id (and an optional known exact value, as in the reference file)."""

    id: str
    deck: Deck
    value: float | None = None


def read_paper_decks(path: Path) -> list[NamedDeck]:
    """The paper's deck file (sinabaghal/Pasur's ``decks_10000.pt``): a PyTorch tensor of shape
    ``[N, 52]``, one deck per row in dealing order, card ids ``4 * rank + suit`` with ranks
    A 2 .. 10 J Q K and suits C D H S, which are this project's ids. Deck ``i`` is named
    ``{stem}-{i}`` (``decks_10000-2`` is the paper's deck 2). Read with ``weights_only``: a file
    that holds anything but tensors is refused, never run."""
    import pickle

    import torch

    try:
        data = torch.load(path, map_location="cpu", weights_only=True)
    except (OSError, RuntimeError, EOFError, pickle.UnpicklingError) as e:
        first = (str(e).strip().splitlines() or [type(e).__name__])[0]
        raise PasurInputError(f"{path}: not a readable deck tensor ({first})") from None
    if not isinstance(data, torch.Tensor) or data.dim() != 2 or data.shape[1] != N_CARDS or data.is_floating_point():
        shape = tuple(data.shape) if isinstance(data, torch.Tensor) else type(data).__name__
        raise PasurInputError(f"{path}: a deck tensor has shape [decks, 52] of integer card ids, got {shape}")
    decks = []
    for i, row in enumerate(data.tolist()):
        try:
            decks.append(NamedDeck(f"{path.stem}-{i}", Deck(tuple(int(c) for c in row))))
        except (PasurInputError, ValueError) as e:
            raise PasurInputError(f"{path}: deck {i}: {e}") from None
    if not decks:
        raise PasurInputError(f"{path}: no decks in file")
    return decks


def read_deck_file(path: str | Path, variant: Variant = STANDARD) -> list[NamedDeck]:
    """Decks from a file: one deck string per line (``#`` comments, blank lines skipped),
    JSON (a list of deck strings or of objects ``{"id", "deck", "value"?}``), or the paper's
    PyTorch deck tensor (a ``.pt`` file, :func:`read_paper_decks`: standard decks only). The decks
    are ``variant``'s (by default the standard game's)."""
    p = Path(path)
    if p.suffix == ".pt":
        if variant != STANDARD:
            raise PasurInputError(f"{p}: the paper's deck tensor holds standard decks, not {variant.name} decks")
        if not p.is_file():
            raise PasurInputError(f"deck file not found: {p}")
        return read_paper_decks(p)
    try:
        text = p.read_text(encoding="utf-8")
    except FileNotFoundError:
        raise PasurInputError(f"deck file not found: {p}") from None
    except (OSError, UnicodeDecodeError) as e:
        raise PasurInputError(f"cannot read deck file {p}: {e}") from None
    stripped = text.lstrip()
    decks: list[NamedDeck] = []
    if stripped.startswith(("[", "{")):
        try:
            data = json.loads(text)
        except json.JSONDecodeError as e:
            raise PasurInputError(f"{p}: invalid JSON ({e.msg} at line {e.lineno})") from None
        if isinstance(data, dict):
            data = data.get("decks", [data])
        if not isinstance(data, list):
            raise PasurInputError(f"{p}: JSON must be a list of decks")
        for i, item in enumerate(data):
            if isinstance(item, str):
                deck_text, deck_id, val = item, f"{p.stem}-{i}", None
            elif isinstance(item, dict) and isinstance(item.get("deck"), str):
                deck_text = item["deck"]
                deck_id = str(item.get("id", f"{p.stem}-{i}"))
                val = item.get("value")
            else:
                raise PasurInputError(f"{p}: entry {i} is neither a deck string nor an object with a 'deck' string")
            try:
                decks.append(NamedDeck(deck_id, parse_deck(deck_text, variant), val))
            except PasurInputError as e:
                raise PasurInputError(f"{p}: deck {deck_id}: {e}") from None
    else:
        for lineno, line in enumerate(text.splitlines(), start=1):
            line = line.split("#", 1)[0].strip()
            if not line:
                continue
            try:
                decks.append(NamedDeck(f"{p.stem}-{len(decks)}", parse_deck(line, variant)))
            except PasurInputError as e:
                raise PasurInputError(f"{p}:{lineno}: {e}") from None
    if not decks:
        raise PasurInputError(f"{p}: no decks in file")
    return decks


#: more decks than anyone sweeps: a larger count is a typo, refused before any work
MAX_DECKS = 10_000_000


def seed_decks(n: int, seed: int = 0, variant: Variant = STANDARD) -> list[NamedDeck]:
    """``n`` random decks (of ``variant``, :meth:`Deck.from_seed`) from seeds ``seed .. seed+n-1``,
    named ``seed-{k}`` as ``--seed`` names them.

    >>> [nd.id for nd in seed_decks(2, 5)], seed_decks(1, 5)[0].deck == Deck.from_seed(5)
    (['seed-5', 'seed-6'], True)
    """
    if not 1 <= n <= MAX_DECKS:
        raise PasurInputError(f"--decks must be between 1 and {MAX_DECKS:,}, got {n}")
    if seed < 0:
        raise PasurInputError(f"--seed must be zero or positive, got {seed}")
    return [NamedDeck(f"seed-{k}", random_deck(random.Random(k), variant)) for k in range(seed, seed + n)]


def select_decks(
    deck: str | None = None,
    deck_file: str | Path | None = None,
    deck_id: str | None = None,
    seed: int | None = None,
    count: int | None = None,
    *,
    variant: Variant | str = STANDARD,
) -> list[NamedDeck]:
    """The decks a user named, the one way every command reads them: one deck (``deck``), a deck
    file (``deck_file``, optionally only ``deck_id``, or its first ``count`` decks), or seeded decks
    (``seed`` alone: that one; ``count``: seeds ``seed`` (default 0) onwards). Exactly one source;
    none is refused. The decks are ``variant``'s (a row of :data:`pasur.game.variants.VARIANTS` or
    its name; by default the standard game's).

    >>> [nd.id for nd in select_decks(seed=3, count=2)]
    ['seed-3', 'seed-4']
    """
    given = [n for n, v in (("--deck", deck), ("--deck-file", deck_file), ("--seed", seed)) if v is not None]
    if len(given) > 1:
        raise PasurInputError(f"give only one of {', '.join(given)}")
    if deck_id is not None and deck_file is None:
        raise PasurInputError("--deck-id goes with --deck-file")
    if count is not None and deck is not None:
        raise PasurInputError("--decks N counts seeded decks or a file's first decks: not with --deck")
    if count is not None and deck_id is not None:
        raise PasurInputError("give --decks N (the file's first N decks) or --deck-id, not both")
    variant = get_variant(variant)
    if deck is not None:
        return [NamedDeck("deck", parse_deck(deck, variant))]
    if deck_file is not None:
        decks = read_deck_file(deck_file, variant)
        if deck_id is not None:
            decks = [d for d in decks if d.id == deck_id]
            if not decks:
                raise PasurInputError(f"no deck with id {deck_id!r} in {deck_file}")
        if count is not None:
            if not 1 <= count <= len(decks):
                raise PasurInputError(f"--decks {count}: the file holds {len(decks):,} decks")
            decks = decks[:count]
        return decks
    if count is not None:
        return seed_decks(count, 0 if seed is None else seed, variant)
    if seed is not None:
        return seed_decks(1, seed, variant)
    raise PasurInputError("give the decks: --deck, --deck-file F [--deck-id ID], --seed S or --decks N [--seed S]")
