"""Small builders shared by tests: reach a position, naive minimax."""

from __future__ import annotations

import random

from pasur.game.cards import Deck
from pasur.game.state import ALEX, GameState


def advance(state: GameState, rng: random.Random, *, to_round: int, to_turn: int = 0) -> GameState:
    """Play random legal actions until (round, turn) is reached."""
    while (state.round, state.turn) < (to_round, to_turn):
        state = state.apply(rng.choice(state.legal_actions()))
    return state


def position(seed: int, round_: int, turn: int = 0) -> GameState:
    """A reproducible position of deck ``seed`` reached by random play."""
    rng = random.Random(seed * 7919 + round_ * 31 + turn)
    return advance(GameState.initial(Deck.from_seed(seed)), rng, to_round=round_, to_turn=turn)


def naive_value(state: GameState) -> int:
    """Plain minimax over the scalar engine, no memo, no keys: the slowest, most literal oracle."""
    if state.is_terminal:
        return state.utility()
    vals = [naive_value(state.apply(a)) for a in state.legal_actions()]
    return max(vals) if state.player == ALEX else min(vals)


def tally_points(deck: Deck, actions: list[dict]) -> list[int]:
    """Both players' points, tallied from a game's actions (``{"card": "7C", "captured": [...]}``
    as game logs write them) straight from the spec's scoring rules, without the engine: piles,
    Surs (a capture by a non-Jack that empties the pool, rounds 0..4), the final sweep to the
    last capturer, clubs bonus 7, Aces and Jacks 1, 2♣ 2, 10♦ 3. An independent check of
    ``GameState.points`` and ``utility``."""
    from pasur.game.cards import parse_card

    pool = set(deck.pool)
    piles: list[set[int]] = [set(), set()]
    surs = [0, 0]
    last = None
    for i, a in enumerate(actions):
        player, rnd = i % 2, i // 8
        card = parse_card(a["card"])
        taken = {parse_card(c) for c in a["captured"]}
        assert taken <= pool
        if taken:
            pool -= taken
            piles[player] |= taken | {card}
            last = player
            if not pool and card // 4 != 10 and rnd < 5:
                surs[player] += 1
        else:
            pool.add(card)
    if last is not None:
        piles[last] |= pool
    special = {4: 2, 37: 3}  # 2♣, 10♦
    points = []
    for p in (0, 1):
        pts = sum(1 for c in piles[p] if c // 4 in (0, 10)) + sum(v for c, v in special.items() if c in piles[p])
        pts += 7 if sum(1 for c in piles[p] if c % 4 == 0) >= 7 else 0
        points.append(pts + 5 * surs[p])
    return points
