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
