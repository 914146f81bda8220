"""The rest of the current round of many worlds, solved in one batched tensor pass.

Each root is one world (both hands known) of one decision (``group``); all roots are at the same
(round, turn). The round is expanded layer by layer, children merged per world on (hands, pool,
clubs as far as the bonus goes, last capturer) as in the compact tree, and valued backwards: an
edge banks its points (Alex minus Bob), the end of round 5 is exact (final sweep and clubs bonus),
and the end of an earlier round takes a *boundary value*, the expected future of the position
before the next deal (:mod:`pasur.hidden.boundary`). Why a separate solver: the open-hand tree
(:mod:`pasur.solve.tree`) always goes to the end of the game, which costs 0.3 s per world from
round 0; stopping at the deal costs milliseconds and does not pretend to know the next deals.

Three ways to value the decisions of the root's mover ``me``:

``minimax``
    every world on its own, both players seeing everything (plain PIMC);
``consistent``
    ``me`` must make the same choice in every world it cannot tell apart: at ``me``'s later
    turns, nodes of one decision that share ``me``'s hand, the pool, clubs, last capturer and the
    cards the opponent has played this round form one information set, and its action is the one
    best on (weighted) average over them. This removes PIMC's strategy fusion within the round;
    the opponent still plays each world knowing it.
``both``
    the same for the opponent too: its information set is its hand, the public position and the
    cards ``me`` has played, so it must choose alike in roots that differ only in ``me``'s hand
    (the caller adds roots where ``me`` holds other hands the opponent cannot rule out). Neither
    player then knows the other's hand, as in the real game.

The rules' numbers are the roots' variant's (:attr:`Roots.variant`, :mod:`pasur.game.variants`):
its point cards, Sur points (no Sur in its last deal), clubs threshold and bonus, last round and
turns per round. The standard game's path is the one it always was (its constants, the tensor
engine's card points and clubs normalization), so its values are unchanged bit for bit.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass, field

import torch

from pasur.game.cards import CLUB_MASK, CLUBS_BONUS, CLUBS_FOR_BONUS, JACK
from pasur.game.variants import STANDARD, Variant
from pasur.solve.actions import card_points_of, unique_row_actions
from pasur.solve.ops import first_occurrence, popcount
from pasur.solve.tree import normalize_clubs

#: ``boundary(round, pool, clubs_a, clubs_b, last, remaining) -> future value`` at the end of
#: ``round`` (0..4), before the next deal; clubs normalized, last capturer 0 nobody, 1 Alex, 2 Bob
Boundary = Callable[..., torch.Tensor]
MODES = ("minimax", "consistent", "both")


@dataclass
class Roots:
    """``N`` roots at one (round, turn), as int64 tensors ``[N]`` (card masks; last capturer 0
    nobody, 1 Alex, 2 Bob). ``remaining``: the cards dealt after this round in each world (for the
    boundary value); ``group``: the decision each root belongs to; ``weight``: its world's weight;
    ``variant``: the rules (the standard game unless given)."""

    round: int
    turn: int
    hands: tuple[torch.Tensor, torch.Tensor]
    pool: torch.Tensor
    clubs: tuple[torch.Tensor, torch.Tensor]
    last: torch.Tensor
    remaining: torch.Tensor
    group: torch.Tensor
    weight: torch.Tensor
    variant: Variant = STANDARD

    @property
    def n(self) -> int:
        return int(self.pool.shape[0])


@dataclass
class _Layer:
    n: int
    parent: torch.Tensor = field(default_factory=lambda: torch.zeros(0))
    child: torch.Tensor = field(default_factory=lambda: torch.zeros(0))
    reward: torch.Tensor = field(default_factory=lambda: torch.zeros(0))
    card: torch.Tensor = field(default_factory=lambda: torch.zeros(0))
    captured: torch.Tensor = field(default_factory=lambda: torch.zeros(0))
    infoset: torch.Tensor | None = None  # consistent modes, at the layers of a player who must be


@dataclass
class RoundSolution:
    """Per root: the future value (Alex minus Bob) after each of its legal actions, in legal order
    (``q`` ``[N, A]``, NaN past a root's ``n_actions``), and the actions themselves."""

    q: torch.Tensor
    n_actions: torch.Tensor
    card: torch.Tensor  # [N, A] int64, -1 padded
    captured: torch.Tensor  # [N, A] int64
    nodes: int = 0


def terminal_value(
    pool: torch.Tensor, ca: torch.Tensor, cb: torch.Tensor, last: torch.Tensor, variant: Variant = STANDARD
) -> torch.Tensor:
    """Future value at the end of the last round: the pool swept to the last capturer, and the clubs bonus."""
    if variant.is_standard:
        club_mask, need, bonus_pts = CLUB_MASK, CLUBS_FOR_BONUS, CLUBS_BONUS
    else:
        club_mask, need, bonus_pts = variant.club_mask, variant.clubs_for_bonus, variant.clubs_bonus
    swept = popcount(pool & club_mask)
    ca = ca + torch.where(last == 1, swept, 0)
    cb = cb + torch.where(last == 2, swept, 0)
    bonus = torch.where(ca >= need, bonus_pts, torch.where(cb >= need, -bonus_pts, 0))
    pts = points_of(pool, variant)
    sweep = torch.where(last == 1, pts, torch.where(last == 2, -pts, 0))
    return (bonus + sweep).to(torch.float32)


def points_of(mask: torch.Tensor, variant: Variant = STANDARD) -> torch.Tensor:
    """Card points of int64 masks under ``variant`` (the tensor engine's lookup for the standard game)."""
    if variant.is_standard:
        return card_points_of(mask)
    out = torch.zeros_like(mask)
    for card, points in variant.point_cards:
        out += ((mask >> card) & 1) * points
    return out


def clubs_key(ca: torch.Tensor, cb: torch.Tensor, variant: Variant = STANDARD) -> tuple[torch.Tensor, torch.Tensor]:
    """Clubs as far as the future is concerned: the threshold and 0 once the bonus is clinched
    (:func:`pasur.solve.tree.normalize_clubs` for the standard game)."""
    if variant.is_standard:
        return normalize_clubs(ca, cb)
    need = variant.clubs_for_bonus
    a_won, b_won = ca >= need, cb >= need
    return torch.where(a_won, need, torch.where(b_won, 0, ca)), torch.where(b_won, need, torch.where(a_won, 0, cb))


def _variant_scores(acts, pool: torch.Tensor, round_: int, variant: Variant) -> tuple[torch.Tensor, torch.Tensor]:
    """Each action's points (card points of what it takes, the card included, and a Sur's) and
    clubs under ``variant``; the tensor engine's own for the standard game."""
    if variant.is_standard:
        return acts.points, acts.clubs
    cap, card = acts.captured, acts.card
    taken = torch.where(cap != 0, cap | (1 << card), torch.zeros_like(cap))
    sur = (cap != 0) & (cap == pool[acts.row]) & (card // 4 != JACK) & (round_ < variant.final_round)
    points = points_of(taken, variant) + variant.sur_points * sur.long()
    return points, popcount(taken & variant.club_mask)


def _union(masks: torch.Tensor) -> int:
    """The OR of int64 masks, as a Python int."""
    out = 0
    for m in torch.unique(masks).tolist():
        out |= m
    return out


def _cards(mask: int) -> list[int]:
    return [c for c in range(52) if (mask >> c) & 1]


def _hand_cards(hands: torch.Tensor) -> torch.Tensor:
    """The cards of each hand (``[N, 4]``, ascending; 63 pads: bit 63 is never set)."""
    bits = torch.arange(52, device=hands.device)
    held = ((hands.unsqueeze(1) >> bits) & 1).bool()
    order = torch.where(held, bits, 63)
    return torch.sort(order, dim=1).values[:, :4]


def _state_key(node: list[torch.Tensor], n_roots: int) -> torch.Tensor:
    """One int64 per node that identifies (root, hands, pool, clubs, last capturer): the hands as
    bits over their root's dealt cards (kept in ``node[7]``), the pool numbered by ``unique``."""
    _, _, pool, ca, cb, last, root, local = node
    _, pool_id = torch.unique(pool, return_inverse=True)
    small = (local << 8) | (ca << 5) | (cb << 2) | last  # 16 bits
    return ((pool_id * n_roots + root) << 16) | small


def solve_round(roots: Roots, boundary: Boundary | None, mode: str = "minimax") -> RoundSolution:
    """Solve the rest of the round from every root (see the module docstring)."""
    if mode not in MODES:
        raise ValueError(f"unknown mode {mode!r} (choose from {', '.join(MODES)})")
    r = roots.round
    if r < roots.variant.final_round and boundary is None:
        raise ValueError("a round before the last needs a boundary value")
    layers, front, nodes = _expand(roots, mode)
    _, _, pool, ca, cb, last, root, _ = front
    if r == roots.variant.final_round:
        v = terminal_value(pool, ca, cb, last, roots.variant)
    else:
        v = boundary(r, pool, ca, cb, last, roots.remaining[root]).to(torch.float32)
    q_root = _back_up(roots, layers, v, mode)
    first = layers[0]
    brf = torch.bincount(first.parent, minlength=roots.n)
    start = torch.cumsum(brf, 0) - brf
    j = torch.arange(first.parent.shape[0], device=q_root.device) - start[first.parent]
    a_max = int(brf.max())
    out = torch.full((roots.n, a_max), float("nan"), dtype=torch.float32, device=q_root.device)
    out[first.parent, j] = q_root
    card = torch.full((roots.n, a_max), -1, dtype=torch.int64, device=q_root.device)
    capt = torch.zeros((roots.n, a_max), dtype=torch.int64, device=q_root.device)
    card[first.parent, j] = first.card
    capt[first.parent, j] = first.captured
    return RoundSolution(out, brf, card, capt, nodes)


def _expand(roots: Roots, mode: str) -> tuple[list[_Layer], list[torch.Tensor], int]:
    """The round's layers from its roots to its end, turn by turn (each node's actions, rewards
    and child, the children merged when their states are the same; in the consistent modes the
    information sets of the player they are for), the states at the round's end and the nodes."""
    r, t0, variant = roots.round, roots.turn, roots.variant
    me = t0 & 1
    ca, cb = clubs_key(roots.clubs[0], roots.clubs[1], variant)
    dev = roots.pool.device
    # node state: hands, pool, clubs, last capturer, root, and the hands as bits over the root's cards
    front = [
        roots.hands[0],
        roots.hands[1],
        roots.pool,
        ca,
        cb,
        roots.last,
        torch.arange(roots.n, device=dev),
        torch.full_like(roots.pool, 255),
    ]
    root_cards = [_hand_cards(roots.hands[p]) for p in (0, 1)]
    layers: list[_Layer] = []
    nodes = roots.n
    for t in range(t0, variant.turns_per_round):
        p = t & 1
        h0, h1, pool, ca, cb, last, root, _ = front
        layer = _Layer(n=int(pool.shape[0]))
        if (mode == "consistent" and p == me) or mode == "both":
            played = roots.hands[1 - p][root] & ~front[1 - p]  # what the other player has played
            layer.infoset = _ids(roots.group[root], front[p], pool, (ca << 5) | (cb << 2) | last, played)
        hand = front[p]
        in_play = _union(pool | h0 | h1)
        la, inv = unique_row_actions(hand, pool, _cards(_union(hand)), r, in_play)
        acts, _ = la.expand(inv)
        parent, card, cap = acts.row, acts.card, acts.captured
        points, clubs = _variant_scores(acts, pool, r, variant)
        sign = 1 - 2 * p
        layer.parent, layer.card, layer.captured = parent, card, cap
        layer.reward = (sign * points).to(torch.float32)
        bit = torch.ones_like(card) << card
        is_cap = cap != 0
        child = [x[parent] for x in front]
        child[p] = child[p] & ~bit
        child[2] = torch.where(is_cap, child[2] & ~cap, child[2] | bit)
        child[3 + p] = child[3 + p] + clubs
        child[3], child[4] = clubs_key(child[3], child[4], variant)
        child[5] = torch.where(is_cap, p + 1, child[5])
        pos = (root_cards[p][child[6]] == card.unsqueeze(1)).long().argmax(1)
        child[7] = child[7] & ~(1 << (4 * p + pos))
        ukey, cid = torch.unique(_state_key(child, roots.n), return_inverse=True)
        first = first_occurrence(cid, ukey.shape[0])
        layer.child = cid
        front = [x[first] for x in child]
        nodes += int(first.shape[0])
        layers.append(layer)
    return layers, front, nodes


def _back_up(roots: Roots, layers: list[_Layer], v: torch.Tensor, mode: str) -> torch.Tensor:
    """The values ``v`` at the round's end backed up through ``layers`` (max for Alex, min for
    Bob; the consistent modes weigh an information set's nodes by their roots' weights): the
    value of each action at the roots."""
    t0 = roots.turn
    weight = roots.weight.to(torch.float64)
    root_of = [None] * len(layers)
    # each layer's node -> its root, for the weights of consistent mode
    if mode != "minimax":
        rt = torch.arange(roots.n, device=roots.pool.device)
        for i, layer in enumerate(layers):
            root_of[i] = rt
            nxt = torch.empty(
                int(layer.child.max()) + 1 if layer.child.numel() else 0, dtype=torch.int64, device=rt.device
            )
            nxt[layer.child] = rt[layer.parent]
            rt = nxt
    q_root = None
    for i in reversed(range(len(layers))):
        layer = layers[i]
        q = layer.reward + v[layer.child]
        n = layer.n
        maximize = ((t0 + i) & 1) == 0
        if layer.infoset is not None:
            v = _consistent(layer, q, weight[root_of[i][layer.parent]], n, maximize)
        else:
            init = float("-inf") if maximize else float("inf")
            v = torch.full((n,), init, dtype=q.dtype, device=q.device)
            v.scatter_reduce_(0, layer.parent, q, "amax" if maximize else "amin")
        if i == 0:
            q_root = q
    return q_root


def _ids(*columns: torch.Tensor) -> torch.Tensor:
    """Ids (0..) of the distinct rows of int64 columns, in the rows' lexicographic order; each
    column is numbered by ``unique`` and folded in one at a time, so no key overflows."""
    out = torch.zeros_like(columns[0])
    for col in columns:
        u, inv = torch.unique(col, return_inverse=True)
        out = torch.unique(out * u.shape[0] + inv, return_inverse=True)[1]
    return out


def _consistent(layer: _Layer, q: torch.Tensor, w: torch.Tensor, n: int, maximize: bool) -> torch.Tensor:
    """One action per information set: the best weighted mean over its nodes (first on ties)."""
    iid = layer.infoset[layer.parent]
    aid = _ids(iid, layer.card, layer.captured)  # ordered by infoset, then legal order
    n_a = int(aid.max()) + 1
    a_iid = torch.zeros(n_a, dtype=torch.int64, device=q.device).scatter_(0, aid, iid)
    score = torch.zeros(n_a, dtype=torch.float64, device=q.device).scatter_add_(0, aid, w * q.to(torch.float64))
    if not maximize:
        score = -score
    n_i = int(a_iid.max()) + 1
    best = torch.full((n_i,), float("-inf"), dtype=torch.float64, device=q.device).scatter_reduce_(
        0, a_iid, score, "amax"
    )
    cand = torch.where(score >= best[a_iid] - 1e-9, torch.arange(n_a, device=q.device), n_a)
    pick = torch.full((n_i,), n_a, dtype=torch.int64, device=q.device).scatter_reduce_(0, a_iid, cand, "amin")
    chosen = aid == pick[iid]
    v = torch.zeros(n, dtype=q.dtype, device=q.device)
    return v.scatter_(0, layer.parent[chosen], q[chosen])
