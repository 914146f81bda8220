"""Exact solving and best responses on the tensor tree: one backward pass over the layers.

Values are *future* point differences (Alex minus Bob): an edge adds the points its action
banks (``reward``); a round's terminal nodes take the value of the next round's roots through
the linkage; after round 5 the terminal value is the final sweep and the clubs bonus. At a
layer, a parent's value is the scatter-max (Alex) or scatter-min (Bob) of its children's
``reward + value``; a best response replaces the opponent's max/min by the expectation under
the given strategy (scatter-add of ``probability x value``).

A strategy is a dict ``{(round, turn): probabilities}`` with one probability per edge of
:meth:`RoundTree.edges` at that layer.
"""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass

import torch

from pasur.game.rules import Action
from pasur.game.state import ALEX
from pasur.solve.gametree import GameTree, RoundTree

Strategy = dict[tuple[int, int], torch.Tensor]


@dataclass
class Solution:
    """Values of every node (``values[(round, turn)]``) and, for exact solutions, the GT edge id
    (the ``gt_edge`` of :meth:`RoundTree.edges`) of an optimal action of every non-terminal node
    (``best_edge``; ties: the first action in ``(card, captured)`` order, as
    :class:`pasur.solve.reference.ReferenceSolver`)."""

    tree: GameTree
    values: dict[tuple[int, int], torch.Tensor]
    best_edge: dict[tuple[int, int], torch.Tensor] | None = None

    @property
    def root_value(self) -> float:
        first = self.tree.rounds[0]
        return float(self.values[(first.round, first.start_turn)][0])

    def game_value(self) -> float:
        """Root value plus the points already banked at the start state (Alex minus Bob)."""
        from pasur.solve.reference import banked_diff

        return banked_diff(self.tree.start) + self.root_value

    def root_values(self) -> torch.Tensor:
        """[K]: the future value of every root of a forest (start ``k`` is root ``k``)."""
        first = self.tree.rounds[0]
        return self.values[(first.round, first.start_turn)][: self.tree.n_roots]

    def root_action_values(self) -> torch.Tensor:
        """[K, A]: for every root, the future value after each legal action (its reward
        included), in the scalar engine's legal order. The starts must share the mover's hand
        and the pool (so the same A actions); others are refused."""
        tree = self.tree
        s0 = tree.starts[0]
        for s in tree.starts:
            if s.hands[s.player] != s0.hands[s0.player] or s.pool != s0.pool:
                raise ValueError("root action values need starts with the same mover's hand and pool")
        rt = tree.rounds[0]
        t = rt.start_turn
        v = self.values.get((rt.round, t + 1))
        if v is None:
            raise ValueError("this solution did not keep the values after the roots")
        parent, child, gt_edge = rt.edges(t)
        q = rt.gt[t].reward[gt_edge].to(v.dtype) + v[child]
        order = torch.argsort(parent * (int(gt_edge.max()) + 1) + gt_edge)  # by root, then action order
        k = tree.n_roots
        return q[order].reshape(k, q.shape[0] // k)


def _terminal(rt: RoundTree, values: dict, tree: GameTree) -> torch.Tensor:
    if rt.terminal_value is not None:
        return rt.terminal_value
    nxt = tree.round(rt.round + 1)
    return values[(nxt.round, nxt.start_turn)][rt.link.long()]


@dataclass
class _Edges:
    """One layer's edges as a backward pass needs them. Compact layers keep int32 indices and
    edges grouped by parent (``deg``: edges per parent), so reductions run per segment."""

    parent: torch.Tensor
    child: torch.Tensor
    gt_edge: torch.Tensor | None  # None: the edge's own index (compact)
    n: int
    deg: torch.Tensor | None = None

    @classmethod
    def of(cls, rt: RoundTree, t: int) -> _Edges:
        n = rt.n_nodes(t)
        if rt.mode == "compact":
            g = rt.gt[t]
            return cls(g.parent, g.child, None, n, torch.bincount(g.parent, minlength=n))
        parent, child, gt_edge = rt.edges(t)
        return cls(parent, child, gt_edge, n)

    def reward(self, rt: RoundTree, t: int) -> torch.Tensor:
        r = rt.gt[t].reward
        return r if self.gt_edge is None else r[self.gt_edge]

    def add_per_parent(self, x: torch.Tensor) -> torch.Tensor:
        return torch.zeros((self.n,), dtype=x.dtype, device=x.device).index_add_(0, self.parent, x)

    def extreme_per_parent(self, q: torch.Tensor, maximize: bool) -> torch.Tensor:
        if self.deg is not None:
            return torch.segment_reduce(q, "max" if maximize else "min", lengths=self.deg)
        init = float("-inf") if maximize else float("inf")
        out = torch.full((self.n,), init, dtype=q.dtype, device=q.device)
        return out.scatter_reduce_(0, self.parent, q, "amax" if maximize else "amin")

    def first_optimal(self, q: torch.Tensor, v: torch.Tensor) -> torch.Tensor:
        """GT edge id of the first edge of every parent with ``q == v[parent]``, as int32."""
        optimal = q == torch.index_select(v, 0, self.parent)
        if self.deg is not None:  # grouped by parent: the first optimal edge of each group
            idx = torch.nonzero(optimal).squeeze(1)
            par = torch.index_select(self.parent, 0, idx)
            keep = torch.ones_like(idx, dtype=torch.bool)
            keep[1:] = par[1:] != par[:-1]
            return idx[keep].to(torch.int32)
        cand = torch.where(optimal, self.gt_edge, torch.iinfo(torch.int64).max)
        b = torch.full((self.n,), torch.iinfo(torch.int64).max, dtype=torch.int64, device=q.device)
        return b.scatter_reduce_(0, self.parent, cand, "amin").to(torch.int32)


def _backward(tree: GameTree, rule: Callable, keep: bool = True, best: bool = False) -> Solution:
    values: dict[tuple[int, int], torch.Tensor] = {}
    best_edges: dict[tuple[int, int], torch.Tensor] = {}
    for rt in reversed(tree.rounds):
        v = _terminal(rt, values, tree)
        values[(rt.round, rt.end_turn)] = v
        for t in reversed(rt.play_turns):
            e = _Edges.of(rt, t)
            q = e.reward(rt, t).to(v.dtype).add_(torch.index_select(v, 0, e.child))
            v = rule(rt, t, e, q)
            if best:
                best_edges[(rt.round, t)] = e.first_optimal(q, v)  # GT edge ids (int32, like the tree's indices)
            values[(rt.round, t)] = v
        if not keep:  # keep only the roots, which the previous round needs (and the first layer's children)
            first = rt is tree.rounds[0]
            for t in rt.turns:
                if t != rt.start_turn and not (first and t == rt.start_turn + 1):
                    values.pop((rt.round, t), None)
    return Solution(tree, values, best_edges if best else None)


def _minimax(rt: RoundTree, t: int, e: _Edges, q) -> torch.Tensor:
    return e.extreme_per_parent(q, (t & 1) == ALEX)


def solve_exact(tree: GameTree, *, keep_values: bool = True) -> Solution:
    """Exact value of every node (minimax) and an optimal edge of every node."""
    return _backward(tree, _minimax, keep=keep_values, best=True)


def best_response(tree: GameTree, strategy: Strategy, player: int) -> Solution:
    """Values when ``player`` best-responds and the other player follows ``strategy``
    (its probabilities on the other player's edges; the rest are ignored)."""

    def rule(rt: RoundTree, t: int, e: _Edges, q):
        if (t & 1) == player:
            return _minimax(rt, t, e, q)
        return e.add_per_parent(strategy[(rt.round, t)].to(device=q.device, dtype=q.dtype) * q)

    return _backward(tree, rule, keep=False)


def strategy_values(tree: GameTree, strategy: Strategy, *, keep_values: bool = True) -> Solution:
    """Values of every node when both players follow ``strategy`` from it."""

    def rule(rt: RoundTree, t: int, e: _Edges, q):
        return e.add_per_parent(strategy[(rt.round, t)].to(device=q.device, dtype=q.dtype) * q)

    return _backward(tree, rule, keep=keep_values)


def strategy_value(tree: GameTree, strategy: Strategy) -> float:
    """Root value when both players follow ``strategy``."""
    return strategy_values(tree, strategy, keep_values=False).root_value


def subgame_gap(tree: GameTree, strategy: Strategy, exact: Solution | None = None) -> float:
    """How far ``strategy`` is from subgame perfect (points): the largest difference, over every
    node of the tree, between the node's value when both players follow ``strategy`` from it and
    its minimax value. Zero for the exact solution; an equilibrium can be far from zero at the
    nodes it never reaches, which is where it plays against players who make mistakes."""
    exact = solve_exact(tree) if exact is None else exact
    mine = strategy_values(tree, strategy)
    return max(float((mine.values[k] - v).abs().max()) for k, v in exact.values.items() if v.numel())


def nash_conv(tree: GameTree, strategy: Strategy) -> float:
    """NashConv (points): Alex's best response against Bob's strategy minus Bob's (minimizing)
    best response against Alex's, i.e. the sum of both players' gains from deviating. Zero
    exactly at an equilibrium (docs/conventions.md)."""
    return best_response(tree, strategy, ALEX).root_value - best_response(tree, strategy, 1 - ALEX).root_value


def exploitability(tree: GameTree, strategy: Strategy) -> float:
    """Exploitability (points): ``nash_conv / 2``, the mean of the two players' gains from
    deviating (OpenSpiel's convention, the poker side's too; docs/conventions.md)."""
    return nash_conv(tree, strategy) / 2


def pure_strategy(solution: Solution) -> Strategy:
    """The optimal pure strategy of an exact solution, as edge probabilities."""
    tree = solution.tree
    out: Strategy = {}
    for rt in tree.rounds:
        for t in rt.play_turns:
            parent, _, gt_edge = rt.edges(t)
            best = solution.best_edge[(rt.round, t)].long()
            out[(rt.round, t)] = (gt_edge == best[parent]).to(torch.float32)
    return out


def uniform_strategy(tree: GameTree) -> Strategy:
    """Every legal action equally likely."""
    out: Strategy = {}
    for rt in tree.rounds:
        for t in rt.play_turns:
            parent, _, _ = rt.edges(t)
            deg = torch.bincount(parent, minlength=rt.n_nodes(t)).to(torch.float32)
            out[(rt.round, t)] = 1.0 / deg[parent]
    return out


def optimal_line(solution: Solution) -> list[Action]:
    """The actions of the optimal game from the start state, following the best edges."""
    tree = solution.tree
    line: list[Action] = []
    node = 0
    for rt in tree.rounds:
        for t in rt.play_turns:
            parent, child, gt_edge = rt.edges(t)
            best = int(solution.best_edge[(rt.round, t)][node])
            layer = rt.gt[t]
            line.append(Action(int(layer.card[best]), int(layer.captured[best])))
            node = int(child[(parent == node) & (gt_edge == best)][0])
        if rt.link is not None:
            node = int(rt.link[node])
    return line
