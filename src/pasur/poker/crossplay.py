"""Strategies against each other, from the start or on a forced first action (BUFP Tables 1, 2).

``winnings`` is the exact expected payoff of player 0 ("player 1" in the paper) when its rows
come from one strategy and player 1's from another: one traversal of the whole game, no
sampling. ``force`` makes player 0's first decision a given action with every hand (the paper
forces "Call"; with equal antes the first player cannot call, so we read it as the check, which
OpenSpiel names "Call"), so the game continues on a path the strategies give up with some hands,
and the table shows how well each one plays from there (docs/bufp.md: why this, and not the one
dominated first action, folding where checking is free, which would end the hand). ``claim``
recomputes the paper's 48.53 % figure from two tables.
"""

from __future__ import annotations

import torch

from pasur.poker.measures import game_value
from pasur.poker.policy import TabularPolicy
from pasur.poker.tree import CALL

#: one milli-blind per hand, in chips (the blind taken as one chip, the ante of our games)
MB = 1e-3


def combine(engine, p0: TabularPolicy, p1: TabularPolicy) -> TabularPolicy:
    """Player 0's rows from ``p0``, player 1's from ``p1`` (lossless tables)."""
    t = engine.tree
    tables = []
    for r in range(engine.R):
        mine = torch.as_tensor(t.actor[t.round_decisions[r]] == 0, device=engine.device)[:, None, None]
        tables.append(torch.where(mine, p0.tables[r], p1.tables[r]))
    return TabularPolicy(engine, tables=tables)


def force(engine, policy: TabularPolicy, action: int = CALL) -> TabularPolicy:
    """``policy`` with the game's first decision (the root, player 0's) set to ``action``."""
    if not engine.tree.legal[0, action]:
        raise ValueError(f"action {action} is not legal at the root")
    tables = [t.clone() for t in policy.tables]
    tables[0][0] = 0.0
    tables[0][0, action] = 1.0
    return TabularPolicy(engine, tables=tables)


def winnings(engine, p0: TabularPolicy, p1: TabularPolicy, forced: int | None = None) -> float:
    """Player 0's expected payoff (chips per hand) with ``p0`` against ``p1``; ``forced``: the
    action player 0 must take at the root."""
    prof = combine(engine, p0, p1)
    if forced is not None:
        prof = force(engine, prof, forced)
    return game_value(engine, prof)


def best_reply(engine, p1: TabularPolicy, forced: int | None = None) -> float:
    """The most player 0 can win against ``p1`` (chips per hand), taking ``forced`` at the root."""
    if forced is None:
        return float(engine.traverse(p1, players=(0,), modes="max")[0])
    total = torch.zeros((), dtype=engine.dtype, device=engine.device)

    def hook(d) -> None:
        nonlocal total
        if d.round == 0 and d.row_lo == 0:
            total = total + d.q[d.child_slot == forced].sum()

    engine.traverse(p1, players=(0,), modes="max", hook=hook)
    return float(total)


def claim(t1: dict, t2: dict, base: str, other: str) -> dict:
    """The paper's comparison of ``other`` (BUFP(EF)) with ``base`` (CFR) on the forced path,
    from row and column averages of Table 1 (``t1``) and Table 2 (``t2``), each
    ``{"rows": {name: avg}, "cols": {name: avg}}`` in player 0's winnings: how much less
    ``other`` loses as player 0 (recovery, %), how much more it wins as player 1 (%), and their
    mean (the paper's 48.53 %)."""
    drop = {n: t1["rows"][n] - t2["rows"][n] for n in (base, other)}
    gain = {n: t1["cols"][n] - t2["cols"][n] for n in (base, other)}
    recovered = 100 * (drop[base] - drop[other]) / drop[base] if drop[base] else float("nan")
    punished = 100 * (gain[other] - gain[base]) / gain[base] if gain[base] else float("nan")
    return {
        "p1_drop": drop,
        "p2_gain": gain,
        "p1_recovered_percent": recovered,
        "p2_excess_percent": punished,
        "mean_percent": (recovered + punished) / 2,
    }
