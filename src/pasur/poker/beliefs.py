"""Beliefs and belief-weighted action values at every information set (BUFP, eq. 8, 10 and 12).

An information set of the acting player is (betting sequence, board, own hand). Its *belief* is
the distribution over the opponent's hands there (paper eq. 12): by Bayes' rule, the opponent's
reach of each hand that misses the board and ours, times chance (every deal equally likely). The
acting player's own reach does not enter (eq. 8: the fictitious strategy plays the player's own
path with probability 1), so beliefs exist where the player's own strategy never goes.

Where the opponent's reach of every compatible hand is 0 (below ``1e-12`` of its total mass at
the node, the engine's rounding snap) Bayes' rule is silent. We extend eq. 8 to the opponent:
the belief is then the chance prior, uniform over the compatible hands, as if the opponent had
played its own path to the node with probability 1 (values below the node still follow its real
strategy). Such entries are flagged ``fallback``.

The engine already computes, per information set, the *counterfactual* value of each action:
the sum over opponent hands of opponent reach times chance times the value below (the actor
best-responding below in ``max`` mode, following the policy in ``sigma`` mode). Eq. 10's
belief-weighted value is that divided by its normalizer, the *belief mass* (chance times the
opponent's compatible reach), so the hot path never forms belief matrices;
:func:`belief_matrix` does, for inspection and tests.

Tables are per round ``[rows, keys]`` (or ``[rows, A, keys]``), rows the round's decision nodes,
keys ``board * H + hand position`` (the lossless keying): each row is read for its actor.
"""

from __future__ import annotations

from dataclasses import dataclass

import torch

from pasur.common.errors import PasurInputError
from pasur.poker.tree import N_ACTIONS


@dataclass
class InfosetValues:
    """Per round: ``q`` ``[rows, A, keys]`` belief-weighted value of each action (``-inf`` where
    illegal); ``value`` ``[rows, keys]`` of the node (under the traversal's mode); ``reach`` the
    actor's own reach; ``opp`` ``[rows, keys]`` the opponent's reach of the hand at that key
    (per board and position, the raw material of beliefs); ``mass`` the belief normalizer (0 where
    Bayes' rule is silent); ``fallback`` where the chance prior was used; ``roots`` the root
    values of the traversal (chips per game, for ``players``)."""

    q: list[torch.Tensor]
    value: list[torch.Tensor]
    reach: list[torch.Tensor]
    opp: list[torch.Tensor]
    mass: list[torch.Tensor]
    fallback: list[torch.Tensor]
    roots: torch.Tensor

    @property
    def n_fallback(self) -> int:
        return int(sum(int(f.sum()) for f in self.fallback))


def check_engine(engine) -> None:
    """The belief machinery reads lossless tables over every listed board."""
    if engine.iso:
        raise PasurInputError("beliefs and fictitious play need every board listed (make the engine with iso=False)")


def infoset_values(engine, policy, mode: str = "max", fallback: bool = True) -> InfosetValues:
    """Belief-weighted values at every information set of both players under ``policy``.

    ``mode``: ``max`` (the actor best-responds below each information set: its counterfactual
    subgame, eq. 9) or ``sigma`` (the actor follows ``policy``). One traversal of the engine,
    plus one per level that holds an information set without a Bayes belief (``fallback``)."""
    check_engine(engine)
    e = engine
    dev, dt = e.device, e.dtype
    keys = [e.n_boards[r] * e.Hr[r] for r in range(e.R)]
    q = [torch.full((e.n_rows[r], N_ACTIONS, keys[r]), float("-inf"), dtype=dt, device=dev) for r in range(e.R)]
    value = [torch.zeros(e.n_rows[r], keys[r], dtype=dt, device=dev) for r in range(e.R)]
    reach = [torch.zeros_like(v) for v in value]
    opp = [torch.zeros_like(v) for v in value]
    mass = [torch.zeros_like(v) for v in value]

    def hook(d) -> None:
        r, lo, hi = d.round, d.row_lo, d.row_hi
        m, H = hi - lo, e.Hr[r]
        cols = slice(d.b0 * H, d.b1 * H)
        dense = torch.full((m * N_ACTIONS, d.b1 - d.b0, H), float("-inf"), dtype=dt, device=dev)
        dense.index_copy_(0, d.child_slot, d.q)
        q[r][lo:hi, :, cols] = dense.view(m, N_ACTIONS, -1)
        value[r][lo:hi, cols] = d.value.reshape(m, -1)
        reach[r][lo:hi, cols] = d.reach.reshape(m, -1)
        opp[r][lo:hi, cols] = d.opp_reach.reshape(m, -1)
        mass[r][lo:hi, cols] = (e.cards[r].compatible(d.opp_reach, d.b0, d.b1) * e.weight[r]).reshape(m, -1)

    roots = e.traverse(policy, players=(0, 1), modes=mode, hook=hook)
    flags = [torch.zeros_like(v, dtype=torch.bool) for v in value]
    for r in range(e.R):
        for depth, lv in enumerate(e.levels[r]):
            if not lv.n_dec:
                continue
            rows = slice(lv.row_lo, lv.row_lo + lv.n_dec)
            empty = mass[r][rows] <= 0
            if not fallback or not bool(empty.any()):
                continue
            qf, vf, mf = _prior_values(e, policy, mode, r, depth, lv)
            flags[r][rows] = empty
            q[r][rows] = torch.where(empty[:, None, :], qf, q[r][rows])
            value[r][rows] = torch.where(empty, vf, value[r][rows])
            mass[r][rows] = torch.where(empty, mf, mass[r][rows])
    for r in range(e.R):
        safe = torch.where(mass[r] > 0, mass[r], torch.ones_like(mass[r]))
        q[r] /= safe[:, None, :]
        value[r] /= safe
    return InfosetValues(q, value, reach, opp, mass, flags, roots)


def _prior_values(e, policy, mode: str, r: int, depth: int, lv):
    """Counterfactual values (and their mass) at one level as if the opponent had played its
    path to the level with probability 1: its edges above the level become 1."""
    actor = lv.actor
    open_path = _OpenPath(e, policy, r, depth, 1 - actor)
    m, keys = lv.n_dec, e.n_boards[r] * e.Hr[r]
    qf = torch.full((m, N_ACTIONS, keys), float("-inf"), dtype=e.dtype, device=e.device)
    vf = torch.zeros(m, keys, dtype=e.dtype, device=e.device)
    mf = torch.zeros(m, keys, dtype=e.dtype, device=e.device)

    def hook(d) -> None:
        if d.round != r or d.row_lo != lv.row_lo:
            return
        H = e.Hr[r]
        cols = slice(d.b0 * H, d.b1 * H)
        dense = torch.full((m * N_ACTIONS, d.b1 - d.b0, H), float("-inf"), dtype=e.dtype, device=e.device)
        dense.index_copy_(0, d.child_slot, d.q)
        qf[:, :, cols] = dense.view(m, N_ACTIONS, -1)
        vf[:, cols] = d.value.reshape(m, -1)
        mf[:, cols] = (e.cards[r].compatible(d.opp_reach, d.b0, d.b1) * e.weight[r]).reshape(m, -1)

    e.traverse(open_path, players=(actor,), modes=mode, hook=hook, reach_players=(0, 1))
    return qf, vf, mf


class _OpenPath:
    """``policy``, except that ``player``'s edges above level ``depth`` of round ``r`` have
    probability 1 (not a strategy: a device to set that player's reach at the level to 1)."""

    def __init__(self, engine, policy, r: int, depth: int, player: int) -> None:
        self.policy = policy
        self.open = set()
        for rr in range(r + 1):
            for d, lv in enumerate(engine.levels[rr]):
                if lv.n_dec and lv.actor == player and (rr < r or d < depth):
                    self.open.add((rr, lv.row_lo))

    def edge_probs(self, r, lo, child_slot, b0, b1):
        p = self.policy.edge_probs(r, lo, child_slot, b0, b1)
        return torch.ones_like(p) if (r, lo) in self.open else p

    def probs(self, r, lo, hi, b0, b1):
        return self.policy.probs(r, lo, hi, b0, b1)


def belief_matrix(engine, values: InfosetValues, r: int) -> torch.Tensor:
    """Beliefs of every information set of round ``r``: ``[rows, boards, H, H]``, entry
    ``[row, b, i, j]`` the probability that the opponent holds the hand at position ``j`` when the
    actor holds position ``i`` on board ``b`` (0 for hands sharing a card). Each ``[row, b, i]``
    sums to 1: Bayes' rule where the opponent's compatible reach is positive, the chance prior
    (uniform over compatible hands) where it is not."""
    e = engine
    B, H = e.n_boards[r], e.Hr[r]
    masks = torch.as_tensor(e.boards.hand_masks, device=e.device)[e.hand_ids[r]]  # [B, H]
    compat = ((masks[:, :, None] & masks[:, None, :]) == 0).to(e.dtype)  # [B, H, H]
    opp = values.opp[r].view(-1, B, 1, H)
    w = opp * compat[None]
    tot = w.sum(-1, keepdim=True)
    prior = compat / compat.sum(-1, keepdim=True)
    use_prior = (values.mass[r] <= 0).view(-1, B, H, 1) | values.fallback[r].view(-1, B, H, 1) | (tot <= 0)
    return torch.where(use_prior, prior[None].expand_as(w), w / torch.where(tot > 0, tot, torch.ones_like(tot)))
