"""Private hands and suit permutations of a poker deck (numpy; computed once per game).

A hand is a sorted tuple of ``hole_cards`` card ids; hands are numbered in lexicographic order of
their cards (for one-card hands, the hand id is the card id, as in OpenSpiel). A suit permutation
``perm`` maps suit ``s`` to ``perm[s]`` and card ``rank * S + s`` to ``rank * S + perm[s]``.

>>> from pasur.poker.games import get_game
>>> hands(get_game("numeral211")).shape
(780, 2)
>>> hands(get_game("leduc"))[:3].tolist()
[[0], [1], [2]]
"""

from __future__ import annotations

import itertools

import numpy as np

from pasur.poker.games import PokerGame


def hands(game: PokerGame) -> np.ndarray:
    """All private hands, ``[H, hole_cards]`` int64, lexicographic."""
    combos = list(itertools.combinations(range(game.n_cards), game.hole_cards))
    return np.asarray(combos, dtype=np.int64).reshape(len(combos), game.hole_cards)


def card_masks(cards: np.ndarray) -> np.ndarray:
    """Bit masks (int64) of the card sets in the rows of ``cards`` (``-1`` entries ignored)."""
    cards = np.asarray(cards, dtype=np.int64)
    bits = np.where(cards >= 0, np.left_shift(1, np.maximum(cards, 0)), 0)
    return np.bitwise_or.reduce(bits, axis=-1) if cards.shape[-1] else np.zeros(cards.shape[:-1], np.int64)


def hand_lookup(game: PokerGame, hand_cards: np.ndarray) -> np.ndarray:
    """Map each row of sorted card ids to its hand index (``[n, k] -> [n]``)."""
    n = game.n_cards
    if game.hole_cards == 1:
        return hand_cards[:, 0].copy()
    table = np.full((n, n), -1, dtype=np.int64)
    hs = hands(game)
    table[hs[:, 0], hs[:, 1]] = np.arange(len(hs))
    return table[hand_cards[:, 0], hand_cards[:, 1]]


def suit_permutations(n_suits: int) -> list[tuple[int, ...]]:
    """Every permutation of the suits, identity first."""
    return list(itertools.permutations(range(n_suits)))


def permute_cards(cards: np.ndarray, perm: tuple[int, ...], n_suits: int) -> np.ndarray:
    """Apply a suit permutation to card ids (any shape)."""
    cards = np.asarray(cards, dtype=np.int64)
    p = np.asarray(perm, dtype=np.int64)
    return (cards // n_suits) * n_suits + p[cards % n_suits]


def hand_permutation(game: PokerGame, perm: tuple[int, ...]) -> np.ndarray:
    """``g[h]`` = index of the hand ``perm(h)``: the gather that relabels a range by ``perm``."""
    hs = hands(game)
    mapped = np.sort(permute_cards(hs, perm, game.n_suits), axis=1)
    return hand_lookup(game, mapped)
