"""The rest of one round solved over both players' ranges: CFR on the histories of hand pairs.

A public belief state is the public position (round, turn, pool, clubs, last capturer, the moves
of the round) and, for each player, a set of hands it may hold. Every pair of disjoint hands is
one root (a chance outcome with the pair's weight); from each root the round is expanded in
tensors, move by move and never merged, to its end, where a leaf is worth the points banked on
the way plus the value after the round: the exact final sweep and clubs bonus after the game's
last round, else a boundary value (:mod:`pasur.hidden.boundary`: the learned one in the standard
game, :class:`~pasur.hidden.variant_boundary.ExactBoundary` on a small variant). A player's
information set is its own hand at the expansion's root and the public moves since.

:func:`history_tree` turns a part of that expansion (every root, or the histories below one
public node) into a :class:`~pasur.hidden.history_tree.HistoryTree`, so that the exact solver's
vectorized CFR (:class:`~pasur.hidden.exact_cfr.HiddenCFR`, the regret kernel of
:mod:`pasur.common.regret`) and its exact best responses run on it unchanged. With ``gadget``
values it is the re-solving gadget of Burch, Johanson and Bowling (2014): before the subgame,
the opponent may take, for each hand, the value it had against the previous solve (``T``) or
play on (``F``), so the re-solved strategy cannot give any opponent hand more than it had.

Values are Alex's points minus Bob's from the expansion's root, as in the exact solver.
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import torch

from pasur.game.rules import Action
from pasur.game.variants import STANDARD, Variant
from pasur.hidden.history_tree import HistoryTree, Level
from pasur.hidden.roundsolve import _ids, _union, clubs_key, terminal_value
from pasur.solve.actions import unique_row_actions

#: the gadget's two actions at the opponent's root information sets: take the value, play on
TERMINATE, FOLLOW = 0, 1


@dataclass(frozen=True)
class PublicRoot:
    """The public position an expansion starts from: clubs as counted so far (not normalized),
    ``last`` the last capturer (0 nobody, 1 Alex, 2 Bob)."""

    round: int
    turn: int
    pool: int
    clubs: tuple[int, int]
    last: int
    variant: Variant = STANDARD


@dataclass
class Expansion:
    """The round from ``root`` for every pair of ``hands`` (per seat, ``[pairs]`` int64), level
    by level: level ``i`` holds the nodes at turn ``root.turn + i`` (the last level, the round's
    leaves). Per level: ``parent`` (index into the level above), ``edge`` (the action's index in
    the parent's legal order), ``card``/``captured`` (the action into the node), ``pair`` (the
    root's index), ``pub`` (the public moves since the root, numbered per level); ``first_child``
    and ``n_children`` per node of a decision level; ``banked``, the points (Alex minus Bob) won on
    the way from the root; ``value`` at the leaves (banked + after)."""

    root: PublicRoot
    hands: tuple[np.ndarray, np.ndarray]
    hand_id: tuple[np.ndarray, np.ndarray]
    parent: list[np.ndarray] = field(default_factory=list)
    edge: list[np.ndarray] = field(default_factory=list)
    card: list[np.ndarray] = field(default_factory=list)
    captured: list[np.ndarray] = field(default_factory=list)
    pair: list[np.ndarray] = field(default_factory=list)
    pub: list[np.ndarray] = field(default_factory=list)
    first_child: list[np.ndarray] = field(default_factory=list)
    n_children: list[np.ndarray] = field(default_factory=list)
    banked: list[np.ndarray] = field(default_factory=list)
    value: np.ndarray | None = None

    @property
    def depth(self) -> int:
        """Decision levels (the leaves are level ``depth``)."""
        return len(self.pub) - 1

    def mover(self, level: int) -> int:
        return (self.root.turn + level) & 1

    def n_nodes(self) -> int:
        return sum(len(p) for p in self.pub)

    def public_node(self, moves: list[tuple[int, int]]) -> tuple[int, int]:
        """The level and public id reached from the root by ``moves`` ((card, captured) each);
        raises ``KeyError`` when no history of the expansion makes them."""
        pub = 0
        for i, (card, cap) in enumerate(moves, start=1):
            hit = (self.pub[i - 1][self.parent[i]] == pub) & (self.card[i] == card) & (self.captured[i] == cap)
            where = np.flatnonzero(hit)
            if where.size == 0:
                raise KeyError(f"no history plays {card}/{cap} at level {i}")
            pub = int(self.pub[i][where[0]])
        return len(moves), pub


def expand(root: PublicRoot, hands: tuple[np.ndarray, np.ndarray], remaining: np.ndarray, boundary) -> Expansion:
    """Every history of the round from ``root`` for each pair ``(hands[0][k], hands[1][k])``,
    ``remaining[k]`` the cards dealt after this round in that pair's world (the boundary's
    input); ``boundary`` as :data:`pasur.hidden.roundsolve.Boundary` (``None`` in the last round)."""
    v, r = root.variant, root.round
    n = len(hands[0])
    ids = tuple(np.unique(h, return_inverse=True)[1] for h in hands)
    exp = Expansion(root, hands, ids)  # type: ignore[arg-type]
    t = lambda x: torch.as_tensor(np.asarray(x, dtype=np.int64))  # noqa: E731
    ca, cb = clubs_key(t([root.clubs[0]] * n), t([root.clubs[1]] * n), v)
    # node state: hands, pool, clubs (normalized), last capturer, pair, public id, points banked
    front = [t(hands[0]), t(hands[1]), t([root.pool] * n), ca, cb, t([root.last] * n), torch.arange(n)]
    pub, banked = torch.zeros(n, dtype=torch.int64), torch.zeros(n, dtype=torch.float64)
    exp.pair.append(np.arange(n))
    exp.pub.append(np.zeros(n, dtype=np.int64))
    exp.banked.append(np.zeros(n))
    for turn in range(root.turn, v.turns_per_round):
        p = turn & 1
        h0, h1, pool = front[0], front[1], front[2]
        in_play = _union(pool | h0 | h1)
        la, inv = unique_row_actions(front[p], pool, _cards(_union(front[p])), r, in_play, variant=v)
        acts, _ = la.expand(inv)
        parent, card, cap = acts.row, acts.card, acts.captured
        start = torch.cumsum(acts.brf, 0) - acts.brf
        exp.first_child.append(start.numpy())
        exp.n_children.append(acts.brf.numpy())
        child = [x[parent] for x in front]
        bit = torch.ones_like(card) << card
        is_cap = cap != 0
        child[p] = child[p] & ~bit
        child[2] = torch.where(is_cap, child[2] & ~cap, child[2] | bit)
        child[3 + p] = child[3 + p] + acts.clubs
        child[3], child[4] = clubs_key(child[3], child[4], v)
        child[5] = torch.where(is_cap, p + 1, child[5])
        banked = banked[parent] + (1 - 2 * p) * acts.points.to(torch.float64)
        pub = _ids(pub[parent], card, cap)
        front = child
        for name, x in (("parent", parent), ("card", card), ("captured", cap), ("pair", child[6]), ("pub", pub)):
            getattr(exp, name).append(x.numpy())
        exp.edge.append((torch.arange(parent.shape[0]) - start[parent]).numpy())
        exp.banked.append(banked.numpy())
    exp.value = (banked + _after(root, front, t(remaining), boundary)).numpy()
    exp.parent.insert(0, np.zeros(n, dtype=np.int64))
    for name in ("edge", "card", "captured"):
        getattr(exp, name).insert(0, np.zeros(n, dtype=np.int64))
    return exp


def _after(root: PublicRoot, front: list[torch.Tensor], remaining: torch.Tensor, boundary) -> torch.Tensor:
    """The value after the round at each leaf: the final sweep and clubs bonus after the last
    round, else the boundary value before the next deal."""
    _, _, pool, ca, cb, last, pair = front
    if root.round == root.variant.final_round:
        return terminal_value(pool, ca, cb, last, root.variant).to(torch.float64)
    if boundary is None:
        raise ValueError("a round before the last needs a boundary value")
    first, inverse = _distinct_leaves(pool, ca, cb, last, pair, remaining)
    value = boundary(root.round, pool[first], ca[first], cb[first], last[first], remaining[pair[first]])
    return value.to(torch.float64)[inverse]


def _distinct_leaves(pool, ca, cb, last, pair, remaining) -> tuple[torch.Tensor, torch.Tensor]:
    """The leaves that differ in what the boundary reads (pool, clubs, last capturer, cards
    to come): one leaf of each (``first``) and each leaf's index among them (``inverse``). A
    fifth deal's 316,000 leaves hold some 1,300 distinct positions: many orders of play end alike.
    One int64 key per leaf: the pool's 52 bits, then clubs (at most 13 a side) and last (0-2)."""
    state = (pool << 10) | (ca * 16 + cb) * 4 + last
    rem_id = torch.unique(remaining, return_inverse=True)[1][pair]
    state_id = torch.unique(state, return_inverse=True)[1]
    _, inverse = torch.unique(state_id * (int(rem_id.max()) + 1) + rem_id, return_inverse=True)
    order = torch.arange(len(inverse), dtype=torch.int64, device=inverse.device)
    first = torch.full((int(inverse.max()) + 1,), len(inverse), dtype=torch.int64, device=inverse.device)
    return first.scatter_reduce_(0, inverse, order, "amin"), inverse


def _cards(mask: int) -> list[int]:
    return [c for c in range(52) if (mask >> c) & 1]


@dataclass
class RangeTree:
    """A :class:`HistoryTree` made of part of an :class:`Expansion`: ``level`` (the expansion
    level of its first decision level), ``node`` (per tree level from there, the expansion node
    of each real node: the first ones of the level; a gadget's placeholders follow them) and
    ``gadget`` (whether level 1 is the opponent's choice to take its value or play on)."""

    tree: HistoryTree
    expansion: Expansion
    level: int
    node: list[np.ndarray]
    gadget: bool

    @property
    def first(self) -> int:
        """The tree level of the expansion's ``level`` (after the root chance and the gadget)."""
        return 2 if self.gadget else 1

    def tree_level(self, exp_level: int) -> int:
        return exp_level - self.level + self.first


def history_tree(
    exp: Expansion, level: int, nodes: np.ndarray, weight: np.ndarray, gadget: np.ndarray | None = None
) -> RangeTree:
    """The histories below the expansion's ``nodes`` at ``level`` (one public node, or the
    roots), chance picking each with ``weight`` (normalized here); with ``gadget`` (a value per
    node, Alex's points minus Bob's), the re-solving gadget for the player who moved last."""
    weight = np.asarray(weight, dtype=np.float64) / float(np.sum(weight))
    kept = [np.asarray(nodes, dtype=np.int64)]
    for i in range(level + 1, exp.depth + 1):  # the descendants, level by level, in order
        keep = np.isin(exp.parent[i], kept[-1])
        kept.append(np.flatnonzero(keep))
    actions = (InfosetActions(), InfosetActions())
    levels = [Level("chance", np.zeros(1, np.int64), np.zeros(1, np.int64), np.ones(1), _NONE_I, _NONE_F)]
    n0 = len(kept[0])
    if gadget is not None:
        opp = 1 - exp.mover(level)
        opp_hand = exp.hand_id[opp][exp.pair[level][kept[0]]]
        infoset = _number(actions[opp], opp_hand, (("T", "F"),) * n0)
        zeros = np.zeros(n0, np.int64)
        levels.append(Level(("alex", "bob")[opp], zeros, zeros, weight, infoset, _NONE_F))
    for j, idx in enumerate(kept):
        i = level + j
        if j == 0:
            parent = np.arange(n0) if gadget is not None else np.zeros(n0, np.int64)
            edge = np.full(n0, FOLLOW) if gadget is not None else np.zeros(n0, np.int64)
        else:
            parent = np.searchsorted(kept[j - 1], exp.parent[i][idx])
            edge = exp.edge[i][idx]
        prob = weight if (j == 0 and gadget is None) else np.ones(len(idx))
        kind = "terminal" if i == exp.depth else ("alex", "bob")[exp.mover(i)]
        value = exp.value[idx] if kind == "terminal" else _NONE_F
        lv = Level(kind, parent, edge, prob, _NONE_I, value)
        if kind != "terminal":
            lv.infoset = _decision_infosets(exp, i, idx, actions)
        if gadget is not None:  # the terminate branch: one chain of placeholders per root
            ph_parent = np.arange(n0) if j == 0 else len(kept[j - 1]) + np.arange(n0)
            _add_placeholders(lv, ph_parent, TERMINATE if j == 0 else 0, gadget, actions)
        levels.append(lv)
    tree = HistoryTree(exp.root.variant, levels, actions, ([], []), ([], []), [], [])
    return RangeTree(tree, exp, level, kept, gadget is not None)


_NONE_I, _NONE_F = np.zeros(0, np.int64), np.zeros(0)


def _add_placeholders(lv: Level, parent: np.ndarray, edge: int, gadget: np.ndarray, actions) -> None:
    """Append the terminate branch's nodes to a level (children of ``parent``): one action each
    (one information set per level), ending at each root's gadget value."""
    n = len(parent)
    lv.parent = np.concatenate([lv.parent, parent])
    lv.edge = np.concatenate([lv.edge, np.full(n, edge, dtype=np.int64)])
    lv.prob = np.concatenate([lv.prob, np.ones(n)])
    if lv.kind == "terminal":
        lv.value = np.concatenate([lv.value, np.asarray(gadget, dtype=np.float64)])
        return
    p = ("alex", "bob").index(lv.kind)
    actions[p].append(("pass",))
    lv.infoset = np.concatenate([lv.infoset, np.full(n, len(actions[p]) - 1, dtype=np.int64)])


def _number(actions: list, key: np.ndarray, acts_of_first) -> np.ndarray:
    """Information sets numbered after the player's earlier ones, one per distinct ``key``."""
    _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    base = len(actions)
    actions.extend(acts_of_first[f] for f in first.tolist())
    return base + inverse


def _decision_infosets(exp: Expansion, i: int, idx: np.ndarray, actions) -> np.ndarray:
    """The mover's information sets of the expansion's nodes ``idx`` at level ``i``: its own
    hand at the root and the public moves; each one's legal actions those of its first node
    (kept as where they lie in the expansion: a solve asks for a handful of the tuples)."""
    p = exp.mover(i)
    forced = exp.n_children[i][idx] == 1
    free = idx[~forced]
    hand = exp.hand_id[p][exp.pair[i][free]]
    key = hand * (int(exp.pub[i][free].max(initial=0)) + 1) + exp.pub[i][free]
    _, first, inverse = np.unique(key, return_index=True, return_inverse=True)
    base = len(actions[p])
    node = free[first]
    actions[p].add_block(exp.card[i + 1], exp.captured[i + 1], exp.first_child[i][node], exp.n_children[i][node])
    infoset = np.full(len(idx), base + len(first), dtype=np.int64)
    infoset[~forced] = base + inverse
    if forced.any():  # one row for every forced move of the level: its strategy is always the move
        actions[p].append(("forced",))
    return infoset


class InfosetActions:
    """A player's information sets' legal actions as a list of tuples, built on demand: given
    one by one (``append``) or as blocks of an expansion's children (``add_block``: each set's
    first child and count). A solve of a round has hundreds of thousands of information sets and
    needs only their counts (:meth:`lengths`) and the tuples of the few it is asked about."""

    def __init__(self) -> None:
        self._starts: list[int] = []
        self._chunks: list = []  # a list of tuples, or (cards, captured, first, count)
        self._counts: list = []  # per chunk: a list of counts, or an array
        self._n = 0

    def __len__(self) -> int:
        return self._n

    def append(self, acts: tuple) -> None:
        if not self._chunks or not isinstance(self._chunks[-1], list):
            self._starts.append(self._n)
            self._chunks.append([])
            self._counts.append([])
        self._chunks[-1].append(tuple(acts))
        self._counts[-1].append(len(acts))
        self._n += 1

    def extend(self, many) -> None:
        for acts in many:
            self.append(acts)

    def add_block(self, cards: np.ndarray, captured: np.ndarray, first: np.ndarray, count: np.ndarray) -> None:
        self._starts.append(self._n)
        self._chunks.append((cards, captured, np.asarray(first, np.int64), np.asarray(count, np.int64)))
        self._counts.append(np.asarray(count, np.int64))
        self._n += len(count)

    def __getitem__(self, i: int) -> tuple:
        i = int(i) + (self._n if i < 0 else 0)
        if not 0 <= i < self._n:
            raise IndexError(i)
        c = int(np.searchsorted(self._starts, i, side="right")) - 1
        chunk, j = self._chunks[c], i - self._starts[c]
        if isinstance(chunk, list):
            return chunk[j]
        cards, caps, first, count = chunk
        lo, k = int(first[j]), int(count[j])
        return tuple(Action(a, m) for a, m in zip(cards[lo : lo + k].tolist(), caps[lo : lo + k].tolist(), strict=True))

    def __iter__(self):
        return (self[i] for i in range(self._n))

    def lengths(self) -> np.ndarray:
        """Each information set's number of legal actions."""
        return np.concatenate([np.asarray(c, np.int64) for c in self._counts] or [np.zeros(0, np.int64)])


class RangeSolve:
    """CFR (:class:`~pasur.hidden.exact_cfr.HiddenCFR`, ``method`` of the regret kernel) run
    ``iterations`` times on a :class:`RangeTree`; its average strategy is the solve's answer."""

    def __init__(self, rt: RangeTree, iterations: int, method: str = "dcfr", device: str = "cpu") -> None:
        from pasur.hidden.exact_cfr import HiddenCFR, HiddenCFRConfig

        self.rt = rt
        self.cfr = HiddenCFR(rt.tree, HiddenCFRConfig(method), device)
        self.cfr.iterate(iterations)
        self.policy = self.cfr.average_policy()

    def _real(self, exp_level: int, pub: int) -> tuple[int, np.ndarray, np.ndarray]:
        """The tree level of ``exp_level``, and the positions (in that level) and expansion
        indices of its real nodes at the public node ``pub``."""
        j = exp_level - self.rt.level
        nodes = self.rt.node[j]
        at = np.flatnonzero(self.rt.expansion.pub[exp_level][nodes] == pub)
        return self.rt.tree_level(exp_level), at, nodes[at]

    def _mine(self, exp_level: int, pub: int, hand_id: int) -> tuple[int, np.ndarray, np.ndarray]:
        """The tree level, and the positions and expansion nodes of the mover's information set
        with its root hand ``hand_id`` at the public node (empty when the solve has none)."""
        exp = self.rt.expansion
        tl, at, nodes = self._real(exp_level, pub)
        mine = exp.hand_id[exp.mover(exp_level)][exp.pair[exp_level][nodes]] == hand_id
        return tl, at[mine], nodes[mine]

    def row(self, exp_level: int, pub: int, hand_id: int) -> int | None:
        """The table row of the mover's information set with its root hand ``hand_id`` at the
        public node (a forced move's: the level's row of forced moves), or ``None`` when the
        solve has no such history."""
        tl, at, _ = self._mine(exp_level, pub, hand_id)
        if at.size == 0:
            return None
        p = self.rt.expansion.mover(exp_level)
        return self.cfr.row_offset[p] + int(self.rt.tree.levels[tl].infoset[at[0]])

    def strategy(self, exp_level: int, pub: int, hand_id: int) -> tuple[tuple[Action, ...], np.ndarray] | None:
        """The mover's legal actions there (the expansion's, in the rules' order) and the
        solve's probability of each."""
        row = self.row(exp_level, pub, hand_id)
        if row is None:
            return None
        exp, node = self.rt.expansion, int(self._mine(exp_level, pub, hand_id)[2][0])
        lo, k = int(exp.first_child[exp_level][node]), int(exp.n_children[exp_level][node])
        cards, caps = exp.card[exp_level + 1][lo : lo + k].tolist(), exp.captured[exp_level + 1][lo : lo + k].tolist()
        acts = tuple(Action(c, m) for c, m in zip(cards, caps, strict=True))
        return acts, self.policy[row, : len(acts)].cpu().numpy().astype(np.float64)

    def _tensor(self, x: np.ndarray) -> torch.Tensor:
        return torch.as_tensor(x, device=self.cfr.device)

    def action_values(self, exp_level: int, pub: int, hand_id: int) -> np.ndarray:
        """Each action's expected value (Alex's points minus Bob's from the expansion's root) at
        the mover's information set, the other player's and chance's reach weighing its histories."""
        p = self.rt.expansion.mover(exp_level)
        tl, at, nodes = self._mine(exp_level, pub, hand_id)
        lv, below = self.rt.tree.levels[tl], self.rt.tree.levels[tl + 1]
        reach, values = self.cfr.reach(self.policy), self.cfr.values(self.policy)
        inside = torch.zeros(len(lv.parent), dtype=reach[tl].dtype, device=reach[tl].device)
        inside[self._tensor(at)] = 1.0
        w = (reach[tl][1 - p] * reach[tl][2]) * inside
        child_w = w[self._tensor(below.parent)]
        n_act = int(self.rt.expansion.n_children[exp_level][int(nodes[0])])
        edge = self._tensor(below.edge)
        width = int(below.edge.max(initial=0)) + 1  # every edge of the level, this set's first n_act
        num = torch.zeros(width, dtype=torch.float64, device=w.device).index_add_(0, edge, child_w * values[tl + 1])
        den = torch.zeros(width, dtype=torch.float64, device=w.device).index_add_(0, edge, child_w)
        return (num / den.clamp_min(1e-300))[:n_act].cpu().numpy()

    def resolve_inputs(self, exp_level: int, pub: int, epsilon: float) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
        """What a safe re-solve at the public node needs: its histories (expansion nodes), their
        chance weights (chance times the mover's reach, times the opponent's reach mixed with
        ``epsilon`` of uniform, so no opponent hand the node allows is ruled out) and the gadget
        value of each (the opponent's best-response value of its hand against this solve)."""
        exp = self.rt.expansion
        me = exp.mover(exp_level)
        tl, at, nodes = self._real(exp_level, pub)
        _, br = self.cfr.best_response(self.policy, 1 - me)
        at_t = self._tensor(at)
        reach = self.cfr.reach(self.policy)[tl][:, at_t].cpu().numpy()
        values = self.cfr.values(br)[tl][at_t].cpu().numpy()
        base = reach[me] * reach[2]
        keep = base > 0
        base, opp_reach, values, nodes = base[keep], reach[1 - me][keep], values[keep], nodes[keep]
        opp_hand = exp.hand_id[1 - me][exp.pair[exp_level][nodes]]
        uniq, inverse = np.unique(opp_hand, return_inverse=True)
        num = np.bincount(inverse, weights=base * values, minlength=len(uniq))
        den = np.bincount(inverse, weights=base, minlength=len(uniq))
        gadget = (num / den)[inverse]
        informed = base * opp_reach
        weight = epsilon * base / base.sum()
        if informed.sum() > 0:
            weight += (1 - epsilon) * informed / informed.sum()
        else:
            weight = base / base.sum()
        return nodes, weight, gadget


def splice(base: RangeSolve, sub: RangeSolve, player: int) -> torch.Tensor:
    """``base``'s average strategy with ``player``'s information sets inside ``sub``'s tree
    (a re-solve of part of ``base``'s histories, the same expansion) taken from ``sub``: the
    strategy the agent plays when it re-solves there."""
    out = base.policy.clone()
    b, s = base.rt, sub.rt
    for j in range(len(s.node) - 1):
        i = s.level + j
        if s.expansion.mover(i) != player:
            continue
        at_base = np.searchsorted(b.node[i - b.level], s.node[j])
        rows_b = b.tree.levels[b.tree_level(i)].infoset[at_base] + base.cfr.row_offset[player]
        rows_s = s.tree.levels[s.tree_level(i)].infoset[: len(s.node[j])] + sub.cfr.row_offset[player]
        rows_b = torch.as_tensor(rows_b, device=out.device)
        out[rows_b] = 0.0  # the legal actions are the same; sub's table may be narrower
        out[rows_b, : sub.cfr.A] = sub.policy[torch.as_tensor(rows_s, device=out.device)].to(out.device)
    return out
