"""Worlds consistent with an information state: the opponent's hand and the undealt cards.

Every card the observer has not seen (:attr:`InfoState.unseen`) may equally be in the opponent's
hand or at any undealt position: nothing seen tells them apart, and the deck's one constraint (no
Jack in the initial pool) is already settled. So a uniformly random permutation of the unseen
cards, cut into the opponent's hand and the later deals in dealing order, is uniform over the
consistent worlds. Sampling is seeded from the agent's seed and the information state itself, so a
decision does not depend on what else was sampled before it (batched or not, resumed or not).

>>> from pasur.game.cards import Deck
>>> from pasur.hidden.game import HiddenGame
>>> info = HiddenGame(Deck.from_seed(3)).observation(1)
>>> w = sample_worlds(info, 5, seed=0)
>>> w.opp_hand.shape, w.undealt.shape
((5,), (5, 40))
>>> all(world_state(info, w, k).hands[1] == info.hand for k in range(5))
True
"""

from __future__ import annotations

import hashlib
import math
from dataclasses import dataclass
from itertools import combinations

import numpy as np

from pasur.game.cards import Deck, cards_of
from pasur.game.state import GameState
from pasur.hidden.infostate import InfoState


@dataclass(frozen=True)
class Worlds:
    """``K`` sampled worlds: the opponent's current hand (masks ``[K]``, Python ints in an object
    array would be slow: int64 is enough for 52 bits) and the undealt cards in dealing order
    (``[K, 2 x hand size x rounds left]``, 8 cards a round in the standard game; round r+1
    Alex, round r+1 Bob, ...)."""

    opp_hand: np.ndarray  # int64 [K]
    undealt: np.ndarray  # int64 [K, U]
    weight: np.ndarray  # float64 [K], 1 unless reweighted

    @property
    def k(self) -> int:
        return int(self.opp_hand.shape[0])


def info_seed(info: InfoState, seed: int) -> np.random.Generator:
    """A generator seeded by ``seed`` and the information state's content."""
    h = hashlib.blake2b(digest_size=16)
    h.update(repr((info.player, info.round, info.turn, info.hand, info.pool, info.initial_pool)).encode())
    h.update(repr([(m.player, m.card, m.captured) for m in info.moves]).encode())
    return np.random.default_rng([seed & 0xFFFFFFFF, *np.frombuffer(h.digest(), dtype=np.uint32).tolist()])


def _masks(cards: np.ndarray) -> np.ndarray:
    """Rows of card ids -> int64 masks."""
    return np.bitwise_or.reduce(np.left_shift(np.int64(1), cards.astype(np.int64)), axis=1)


def sample_worlds(
    info: InfoState,
    k: int,
    seed: int = 0,
    rng: np.random.Generator | None = None,
    *,
    balanced: bool = False,
    exhaustive: int = 0,
) -> Worlds:
    """``k`` worlds drawn uniformly among those consistent with ``info``: independently, or, with
    ``balanced``, in groups that deal the opponent disjoint hands cut from one random permutation of
    the unseen cards (each world is still uniform, but every unseen card is in the opponent's hand
    about equally often: a lower-variance estimate of the risks a hand poses). With ``exhaustive``,
    when the opponent can hold at most that many hands, every one of them instead
    (:func:`every_hand`): ``k`` worlds would leave some out."""
    if k < 1:
        raise ValueError(f"need at least one world, got {k}")
    rng = rng if rng is not None else info_seed(info, seed)
    unseen = np.array(cards_of(info.unseen), dtype=np.int64)
    n_opp = info.opponent_hand_size
    if math.comb(unseen.size, n_opp) <= exhaustive:  # few hands (one when it holds no card): all of them
        return every_hand(info, rng)
    perms = rng.permuted(np.broadcast_to(unseen, (k, unseen.size)), axis=1)
    if balanced and n_opp and unseen.size >= 2 * n_opp:
        per = unseen.size // n_opp  # disjoint hands per permutation
        for lo in range(0, k, per):
            base = rng.permutation(unseen)
            for j in range(min(per, k - lo)):
                hand = base[j * n_opp : (j + 1) * n_opp]
                rest = rng.permutation(np.setdiff1d(unseen, hand, assume_unique=True))
                perms[lo + j] = np.concatenate([hand, rest])
    opp = _masks(perms[:, :n_opp]) if n_opp else np.zeros(k, dtype=np.int64)
    return Worlds(opp, perms[:, n_opp:], np.ones(k))


def every_hand(info: InfoState, rng: np.random.Generator) -> Worlds:
    """One world per hand the opponent can hold, each with a random order of the other unseen
    cards. Every hand is equally likely (each completes to the same number of decks), so the worlds
    weigh alike; with the round horizon only the hand and the set of undealt cards matter, so this
    is the exact belief, not a sample. Late in a round the opponent holds one or two cards: a
    sample of K of its few dozen possible hands would miss the very card that sweeps the pool."""
    unseen = np.array(cards_of(info.unseen), dtype=np.int64)
    hands = np.array(list(combinations(unseen.tolist(), info.opponent_hand_size)), dtype=np.int64)
    rest = np.stack([rng.permutation(np.setdiff1d(unseen, h, assume_unique=True)) for h in hands])
    return Worlds(_masks(hands), rest, np.ones(len(hands)))


def world_deck(info: InfoState, opp_hand: int, undealt: list[int]) -> Deck:
    """The deck of one world: the seen history, the opponent's hand and the undealt cards."""
    me, opp = info.player, 1 - info.player
    cards = cards_of(info.initial_pool)
    for r in range(info.round + 1):
        hands = [0, 0]
        for p in (0, 1):
            known = info.dealt(p, r)
            hands[p] = known if known is not None else info.played_this_round(opp) | opp_hand
        assert hands[me] is not None
        cards += cards_of(hands[0]) + cards_of(hands[1])
    cards += list(undealt)
    if len(cards) != info.variant.n_cards:
        raise ValueError("the world does not complete the deck")
    return Deck(tuple(cards), info.variant)


def world_state(info: InfoState, worlds: Worlds, k: int) -> GameState:
    """World ``k`` as a full :class:`GameState` at the information state's position."""
    opp_hand = int(worlds.opp_hand[k])
    deck = world_deck(info, opp_hand, [int(c) for c in worlds.undealt[k]])
    hands = [0, 0]
    hands[info.player], hands[1 - info.player] = info.hand, opp_hand
    state = GameState(
        deck,
        info.round,
        info.turn,
        (hands[0], hands[1]),
        info.pool,
        info.piles,
        info.surs,
        info.last_capturer,
        info.variant,
    )
    state.check()
    return state
