"""One encoding of the hidden-hand game for learning: an information state as a fixed-size tensor,
and every (card, captured set) move as one action id. The RL environments (:mod:`pasur.rl`) and
the OpenSpiel game (:mod:`pasur.hidden.openspiel`) both use it, so a network trained on one
reads the other.

**The observation** is built from an :class:`~pasur.hidden.infostate.InfoState` and nothing else
(there is no deck, no opponent hand and no undealt card to read): :data:`N_PLANES` planes of 52
cards (a card's standard index ``4 * rank + suit``; a variant's deck keeps those indices), seen by
the observer, then :data:`N_SCALARS` numbers, all in [0, 1]:

>>> [name for name, _ in PLANES][:4]
['own_hand', 'pool', 'own_captures', 'opponent_captures']
>>> OBS_SIZE, N_PLANES * 52 + N_SCALARS
(540, 540)

**Actions** are OpenSpiel's global ids of ``python_pasur`` (:data:`N_ACTIONS` of them): ``0..51`` lay
a card; then every numeric capture (played card, one of the 2,764 sets of numeric cards summing to
11); a Jack's capture (of everything it can take); a Queen's or King's capture of one card.

>>> from pasur.game.rules import Action
>>> N_ACTIONS, action_of(action_id(Action(5, 0)), pool=0)
(12180, Action(card=5, captured=0))
"""

from __future__ import annotations

from functools import lru_cache

import numpy as np

from pasur.game.cards import JACK, JACK_MASK, NUMERIC_MASK, cards_of, rank
from pasur.game.rules import Action
from pasur.hidden.infostate import InfoState

# ---------------------------------------------------------------- action ids


@lru_cache(maxsize=1)
def _action_table() -> tuple[dict[tuple[int, int], int], list[tuple[int, int]]]:
    """(card, captured or -1 for 'a Jack takes what it can') <-> id."""
    from pasur.solve.actions import numeric_subsets

    keys: list[tuple[int, int]] = [(c, 0) for c in range(52)]
    for s in numeric_subsets():
        for c in cards_of(s):
            keys.append((c, s & ~(1 << c)))
    keys += [(j, -1) for j in range(4 * JACK, 4 * JACK + 4)]
    for r in (11, 12):  # Queen, King: take one card of the same rank
        for c in range(4 * r, 4 * r + 4):
            keys += [(c, 1 << t) for t in range(4 * r, 4 * r + 4) if t != c]
    return {k: i for i, k in enumerate(keys)}, keys


def n_actions() -> int:
    return len(_action_table()[1])


#: the number of action ids (the size of the discrete action space)
N_ACTIONS = 12180


def action_id(action: Action) -> int:
    ids, _ = _action_table()
    key = (action.card, -1 if rank(action.card) == JACK and action.captured else action.captured)
    return ids[key]


def action_of(aid: int, pool: int) -> Action:
    """The action of id ``aid`` played against ``pool`` (a Jack's capture takes what it can there)."""
    card, cap = _action_table()[1][aid]
    return Action(card, pool & (NUMERIC_MASK | JACK_MASK) if cap == -1 else cap)


def legal_ids(info: InfoState) -> list[int]:
    """The ids of the observer's legal actions, in legal-action order (none when not to move)."""
    return [action_id(a) for a in info.legal_actions()] if info.to_move else []


# ---------------------------------------------------------------- the observation

#: the 52-card planes, in order: (name, what it holds)
PLANES: tuple[tuple[str, str], ...] = (
    ("own_hand", "the observer's hand"),
    ("pool", "the cards on the table"),
    ("own_captures", "the observer's captured cards"),
    ("opponent_captures", "the opponent's captured cards"),
    ("own_played", "cards the observer has played (whole game)"),
    ("opponent_played", "cards the opponent has played (whole game)"),
    ("opponent_played_round", "cards the opponent has played this deal"),
    ("unseen", "the opponent's hand and the undealt cards together (not told apart)"),
    ("initial_pool", "the cards dealt face up at the start"),
    ("deck", "the cards of the variant's deck"),
)
N_PLANES = len(PLANES)
#: the most deals of any variant (the standard game's 6): the round is one-hot over these
MAX_DEALS = 6
#: the numbers after the planes, in order (each in [0, 1])
SCALARS: tuple[str, ...] = (
    "seat_alex",
    "seat_bob",
    "to_move",
    *(f"round_{r}" for r in range(MAX_DEALS)),
    "turn / turns per deal",
    "opponent hand size / hand size",
    "own points / most points",
    "opponent points / most points",
    "own Surs / most Surs",
    "opponent Surs / most Surs",
    "own clubs / clubs in the deck",
    "opponent clubs / clubs in the deck",
    "last capturer: observer",
    "last capturer: opponent",
    "last capturer: nobody yet",
)
N_SCALARS = len(SCALARS)
OBS_SIZE = N_PLANES * 52 + N_SCALARS


def plane_masks(info: InfoState) -> tuple[int, ...]:
    """The card set of each plane of :data:`PLANES`, as masks, from ``info`` alone."""
    me, opp = info.player, 1 - info.player
    played = [0, 0]
    opp_round = 0
    for mv in info.moves:
        played[mv.player] |= 1 << mv.card
        if mv.player == opp and mv.round == info.round:
            opp_round |= 1 << mv.card
    return (
        info.hand,
        info.pool,
        info.piles[me],
        info.piles[opp],
        played[me],
        played[opp],
        opp_round,
        info.unseen,
        info.initial_pool,
        info.variant.deck_mask,
    )


def scalars(info: InfoState) -> list[float]:
    """The numbers of :data:`SCALARS`: seat, whose turn, where the game is, the public scores."""
    v, me = info.variant, info.player
    opp = 1 - me
    most_surs = max(1, v.hand_size * v.final_round)  # no Sur in the last deal
    most_points = v.total_card_points + v.clubs_bonus + v.sur_points * most_surs
    points, clubs = info.points, info.clubs
    rounds = [0.0] * MAX_DEALS
    rounds[info.round] = 1.0
    last = info.last_capturer
    return [
        float(me == 0),
        float(me == 1),
        float(info.to_move),
        *rounds,
        info.turn / v.turns_per_round,
        info.opponent_hand_size / v.hand_size,
        points[me] / most_points,
        points[opp] / most_points,
        info.surs[me] / most_surs,
        info.surs[opp] / most_surs,
        clubs[me] / max(1, v.n_clubs),
        clubs[opp] / max(1, v.n_clubs),
        float(last == me),
        float(last == opp),
        float(last is None),
    ]


def unpack_masks(masks: tuple[int, ...] | list[int]) -> np.ndarray:
    """52 bits of each mask, as float32 ``[len(masks), 52]``."""
    raw = np.frombuffer(b"".join(m.to_bytes(8, "little") for m in masks), dtype=np.uint8)
    return np.unpackbits(raw.reshape(len(masks), 8), axis=1, bitorder="little")[:, :52].astype(np.float32)


def encode(info: InfoState, out: np.ndarray | None = None) -> np.ndarray:
    """The observation of ``info``: float32 ``[OBS_SIZE]`` (into ``out`` when given)."""
    if info.variant.deals > MAX_DEALS:
        raise ValueError(f"variant {info.variant.name}: more than {MAX_DEALS} deals")
    if out is None:
        out = np.empty(OBS_SIZE, np.float32)
    out[: N_PLANES * 52] = unpack_masks(plane_masks(info)).reshape(-1)
    out[N_PLANES * 52 :] = scalars(info)
    return out


def legal_mask(info: InfoState) -> np.ndarray:
    """int8 ``[N_ACTIONS]``: 1 at the ids of the observer's legal actions (all 0 when not to move)."""
    mask = np.zeros(N_ACTIONS, np.int8)
    mask[legal_ids(info)] = 1
    return mask
