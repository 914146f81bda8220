"""Game value, best response, NashConv and exploitability (OpenSpiel's conventions).

For a profile ``sigma = (sigma_0, sigma_1)`` of a two-player zero-sum game, with ``u_p`` player
``p``'s expected payoff (chips per game) and ``BR_p = max over sigma_p' of u_p(sigma_p', sigma_-p)``:

* ``NashConv(sigma) = sum_p (BR_p - u_p(sigma)) = BR_0 + BR_1`` (as ``u_0 + u_1 = 0``);
* ``exploitability(sigma) = NashConv(sigma) / 2``, OpenSpiel's ``exploitability``: the mean gain
  of a best-responding opponent. 0 exactly at a Nash equilibrium.

Both best responses are exact: one traversal of the whole game where each player in turn takes
the best action of every information set (a betting sequence, the board, the private hand)
against the other's fixed strategy. Any strategy the engine can read (a policy) is measured the
same way, whatever solver made it.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from pasur.poker.policy import TabularPolicy
from pasur.poker.tree import N_ACTIONS


@dataclass(frozen=True)
class Evaluation:
    value: float  # player 0's expected payoff under the profile
    br_values: tuple[float, float]  # each player's best-response value against the other
    nash_conv: float
    exploitability: float

    def as_dict(self) -> dict:
        return {
            "value": self.value,
            "best_response_values": list(self.br_values),
            "nash_conv": self.nash_conv,
            "exploitability": self.exploitability,
        }


def game_value(engine, policy) -> float:
    """Player 0's expected payoff (chips per game)."""
    return float(engine.traverse(policy, players=(0,), modes="sigma")[0])


def best_response_values(engine, policy, players=(0, 1)) -> tuple[float, ...]:
    """Each listed player's best-response value against the other's strategy in ``policy``."""
    v = engine.traverse(policy, players=tuple(players), modes="max")
    return tuple(float(x) for x in v)


def evaluate(engine, policy) -> Evaluation:
    value = game_value(engine, policy)
    br0, br1 = best_response_values(engine, policy)
    nc = br0 + br1
    return Evaluation(value, (br0, br1), nc, nc / 2)


def nash_conv(engine, policy) -> float:
    return sum(best_response_values(engine, policy))


def exploitability(engine, policy) -> float:
    return nash_conv(engine, policy) / 2


def best_response_policy(engine, policy, player: int) -> TabularPolicy:
    """A pure best response of ``player`` (lossless, first best action on ties); the other
    player's rows are copied from ``policy`` when it is lossless, uniform otherwise."""
    out = TabularPolicy(engine)
    if isinstance(policy, TabularPolicy) and policy.keying.lossless:
        out.tables = [t.clone() for t in policy.tables]

    def hook(d) -> None:
        m = d.row_hi - d.row_lo
        bc, H = d.b1 - d.b0, engine.Hr[d.round]
        dense = torch.full((m * N_ACTIONS, bc, H), float("-inf"), dtype=engine.dtype, device=engine.device)
        dense.index_copy_(0, d.child_slot, d.q)
        best = dense.view(m, N_ACTIONS, bc, H).argmax(1)  # first maximum
        onehot = torch.nn.functional.one_hot(best, N_ACTIONS).permute(0, 3, 1, 2).to(engine.dtype)
        out.tables[d.round][d.row_lo : d.row_hi, :, d.b0 * H : d.b1 * H] = onehot.reshape(m, N_ACTIONS, bc * H)

    engine.traverse(policy, players=(player,), modes="max", hook=hook)
    return out
