"""Hand strengths: the best three-card poker hand of a player's cards and the board.

Categories, strongest first: straight flush, three of a kind, straight, flush, pair, high card
(a straight is three consecutive ranks in the game's rank order, with no wrap-around). With
fewer than three cards only pair and high card exist (Leduc: a pair with the board beats any
high card; otherwise the higher card wins, as in OpenSpiel). A strength is one integer,
``category * R**3 + tie-breaking ranks`` (``R`` ranks), so comparing hands is comparing integers.

>>> from pasur.poker.games import get_game
>>> g = get_game("numeral211")
>>> card = lambda t: g.ranks.index(t[0]) * 4 + g.suits.index(t[1])
>>> cat = lambda cs: CATEGORIES[strength(g, [card(c) for c in cs]) // 10**3]
>>> cat(["Ts", "9s", "8s", "2h"]), cat(["Ts", "Th", "Tc", "2h"]), cat(["As", "Ah", "9c", "2h"])
('straight flush', 'three of a kind', 'pair')
"""

from __future__ import annotations

import itertools

import numpy as np

from pasur.poker.games import PokerGame

CATEGORIES = ("high card", "pair", "flush", "straight", "three of a kind", "straight flush")


def _score(ranks: np.ndarray, suits: np.ndarray, n_ranks: int) -> np.ndarray:
    """Strength of hands of exactly ``m`` cards (``m <= 3``), rows of ``ranks``/``suits`` ``[n, m]``."""
    n, m = ranks.shape
    r = -np.sort(-ranks, axis=1)  # descending
    R = n_ranks
    cat = np.zeros(n, dtype=np.int64)
    t = np.zeros((n, 3), dtype=np.int64)
    t[:, :m] = r
    if m >= 2:
        pair = r[:, 0] == r[:, 1]
        if m == 3:
            pair |= r[:, 1] == r[:, 2]
            trips = (r[:, 0] == r[:, 1]) & (r[:, 1] == r[:, 2])
            flush = (suits[:, 0] == suits[:, 1]) & (suits[:, 1] == suits[:, 2])
            straight = (r[:, 0] == r[:, 1] + 1) & (r[:, 1] == r[:, 2] + 1)
            # pair: pair rank first, then the kicker
            lo_pair = (r[:, 1] == r[:, 2]) & ~trips
            t[lo_pair] = np.stack([r[lo_pair, 1], r[lo_pair, 2], r[lo_pair, 0]], axis=1)
            cat = np.select(
                [straight & flush, trips, straight, flush, pair],
                [5, 4, 3, 2, 1],
                default=0,
            )
            top_only = straight | trips  # ties broken by the top (or the trips') rank alone
            t[top_only, 1:] = 0
        else:
            cat = np.where(pair, 1, 0)
    return cat * R**3 + t[:, 0] * R**2 + t[:, 1] * R + t[:, 2]


def strengths(game: PokerGame, cards: np.ndarray) -> np.ndarray:
    """Strength of each row of card ids ``[n, m]``: the best min(3, m)-card hand in the row (a
    lookup table of every k-card set, then the best of the row's subsets)."""
    cards = np.sort(np.asarray(cards, dtype=np.int64), axis=1)
    n, m = cards.shape
    k = min(3, m)
    lut = _table(game, k)
    best = np.full(n, -1, dtype=np.int64)
    for idx in itertools.combinations(range(m), k):
        best = np.maximum(best, lut[tuple(cards[:, i] for i in idx)])
    return best


def _table(game: PokerGame, k: int) -> np.ndarray:
    """Strength of every sorted k-card set, as a dense array indexed by the cards."""
    combos = np.asarray(list(itertools.combinations(range(game.n_cards), k)), dtype=np.int64).reshape(-1, k)
    lut = np.full((game.n_cards,) * k, -1, dtype=np.int64)
    lut[tuple(combos.T)] = _score(combos // game.n_suits, combos % game.n_suits, game.n_ranks)
    return lut


def strength(game: PokerGame, cards) -> int:
    return int(strengths(game, np.asarray([list(cards)]))[0])


def category_of(game: PokerGame, strength_values: np.ndarray) -> np.ndarray:
    return np.asarray(strength_values) // game.n_ranks**3


def category_shares(game: PokerGame) -> dict[str, float]:
    """Share of each category over all final (private cards, board) combinations.

    For Numeral211: the 1,096,680 (hand, flop, turn) combinations, the same shares as all
    four-card sets (each set is dealt equally often).
    """
    m = game.hole_cards + sum(game.board_cards)
    combos = np.asarray(list(itertools.combinations(range(game.n_cards), m)), dtype=np.int64)
    cats = category_of(game, strengths(game, combos))
    counts = np.bincount(cats, minlength=len(CATEGORIES))
    return {CATEGORIES[i]: float(counts[i] / len(combos)) for i in range(len(CATEGORIES))}
