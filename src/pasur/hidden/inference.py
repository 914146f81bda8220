"""Beliefs beyond uniform: weigh each sampled world by how likely the opponent's moves of this
round were, had it held that world's hand.

Uniform worlds (:mod:`pasur.hidden.worlds`) ignore what the opponent's choices say: a player that
lays a card while it holds one that takes the 10♦ is rare. The model here is a soft greedy player:
it picks an action with probability proportional to exp(beta x points it banks now). Only the
current round's moves count: earlier hands were played out whole, and the undealt cards are
independent of them. The weights multiply the worlds' values in PIMC's average.
"""

from __future__ import annotations

import math

import numpy as np

from pasur.game.rules import immediate_points, legal_actions
from pasur.hidden.infostate import InfoState
from pasur.hidden.worlds import Worlds


def opponent_weights(info: InfoState, worlds: Worlds, beta: float = 0.7) -> Worlds:
    """``worlds`` with weights: the soft-greedy likelihood of the opponent's moves this round."""
    opp = 1 - info.player
    # replay the round's public history: the pool before each move, and the opponent's moves
    mine = [m for m in info.moves if m.round == info.round]
    pool = info.pool
    pools = []
    for m in reversed(mine):  # undo the round's moves to recover the pool before each
        pool = pool | m.captured if m.captured else pool & ~(1 << m.card)
        pools.append(pool)
    pools.reverse()
    steps = [(m, pools[j]) for j, m in enumerate(mine) if m.player == opp]
    if not steps:
        return worlds
    v = info.variant

    def points(action, before: int) -> int:  # the variant's point cards and Surs (none in its last deal)
        return immediate_points(action, before, info.round, final_round=v.final_round, variant=v)

    logw = np.zeros(worlds.k)
    for k in range(worlds.k):
        held = int(worlds.opp_hand[k])
        for m, _ in steps:
            held |= 1 << m.card  # every card the opponent played this round was in its hand
        total = 0.0
        for m, before in steps:
            acts = legal_actions(held, before)
            scores = [beta * points(a, before) for a in acts]
            top = max(scores)
            z = sum(math.exp(x - top) for x in scores)
            total += beta * points(m.action, before) - top - math.log(z)
            held &= ~(1 << m.card)
        logw[k] = total
    w = np.exp(logw - logw.max())
    return Worlds(worlds.opp_hand, worlds.undealt, worlds.weight * w)
