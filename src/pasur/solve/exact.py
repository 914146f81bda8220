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
from pasur.game.state import ALEX, TURNS_PER_ROUND
from pasur.solve.tree import GameTree, RoundTree

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


def _terminal(rt: RoundTree, values: dict, tree: GameTree) -> torch.Tensor:
    if rt.terminal_value is not None:
        return rt.terminal_value
    nxt = tree.round(rt.round + 1)
    return values[(nxt.round, nxt.start_turn)][rt.link.long()]


def _backward(tree: GameTree, rule: Callable, keep: bool = True, best: bool = False) -> Solution:
    values: dict[tuple[int, int], torch.Tensor] = {}
    best_edges: dict[tuple[int, int], torch.Tensor] = {}
    for rt in reversed(tree.rounds):
        v = _terminal(rt, values, tree)
        values[(rt.round, TURNS_PER_ROUND)] = v
        for t in reversed(range(rt.start_turn, TURNS_PER_ROUND)):
            parent, child, gt_edge = rt.edges(t)
            q = rt.gt[t].reward[gt_edge].to(v.dtype) + v[child]
            n = rt.n_nodes(t)
            v = rule(rt, t, parent, q, n)
            if best:
                optimal = q == v[parent]
                cand = torch.where(optimal, gt_edge, torch.iinfo(torch.int64).max)
                b = torch.full((n,), torch.iinfo(torch.int64).max, dtype=torch.int64, device=q.device)
                b.scatter_reduce_(0, parent, cand, "amin")
                best_edges[(rt.round, t)] = b.to(torch.int32)  # GT edge ids (int32, like the tree's indices)
            values[(rt.round, t)] = v
        if not keep:  # keep only the roots, which the previous round needs
            for t in rt.turns:
                if t != rt.start_turn:
                    values.pop((rt.round, t), None)
    return Solution(tree, values, best_edges if best else None)


def _minimax(rt: RoundTree, t: int, parent, q, n) -> torch.Tensor:
    maximize = (t & 1) == ALEX
    init = float("-inf") if maximize else float("inf")
    out = torch.full((n,), init, dtype=q.dtype, device=q.device)
    return out.scatter_reduce_(0, parent, q, "amax" if maximize else "amin")


def solve_exact(tree: GameTree, *, keep_values: bool = True) -> Solution:
    """Exact value of every node (minimax) and an optimal edge of every node."""
    return _backward(tree, _minimax, keep=keep_values, best=True)


def best_response(tree: GameTree, strategy: Strategy, player: int) -> Solution:
    """Values when ``player`` best-responds and the other player follows ``strategy``
    (its probabilities on the other player's edges; the rest are ignored)."""

    def rule(rt: RoundTree, t: int, parent, q, n):
        if (t & 1) == player:
            return _minimax(rt, t, parent, q, n)
        p = strategy[(rt.round, t)].to(q.dtype)
        out = torch.zeros((n,), dtype=q.dtype, device=q.device)
        return out.scatter_add_(0, parent, p * q)

    return _backward(tree, rule, keep=False)


def strategy_value(tree: GameTree, strategy: Strategy) -> float:
    """Root value when both players follow ``strategy``."""

    def rule(rt: RoundTree, t: int, parent, q, n):
        p = strategy[(rt.round, t)].to(q.dtype)
        return torch.zeros((n,), dtype=q.dtype, device=q.device).scatter_add_(0, parent, p * q)

    return _backward(tree, rule, keep=False).root_value


def exploitability(tree: GameTree, strategy: Strategy) -> float:
    """Points: Alex's best response against Bob's strategy minus Bob's (minimizing) best
    response against Alex's. Zero exactly at an equilibrium."""
    return best_response(tree, strategy, ALEX).root_value - best_response(tree, strategy, 1 - ALEX).root_value


def pure_strategy(solution: Solution) -> Strategy:
    """The optimal pure strategy of an exact solution, as edge probabilities."""
    tree = solution.tree
    out: Strategy = {}
    for rt in tree.rounds:
        for t in range(rt.start_turn, TURNS_PER_ROUND):
            parent, _, gt_edge = rt.edges(t)
            best = solution.best_edge[(rt.round, t)].long()
            out[(rt.round, t)] = (gt_edge == best[parent]).to(torch.float32)
    return out


def uniform_strategy(tree: GameTree) -> Strategy:
    """Every legal action equally likely."""
    out: Strategy = {}
    for rt in tree.rounds:
        for t in range(rt.start_turn, TURNS_PER_ROUND):
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
        for t in range(rt.start_turn, TURNS_PER_ROUND):
            parent, child, gt_edge = rt.edges(t)
            best = int(solution.best_edge[(rt.round, t)][node])
            layer = rt.gt[t]
            line.append(Action(int(layer.card[best]), int(layer.captured[best])))
            node = int(child[(parent == node) & (gt_edge == best)][0])
        if rt.link is not None:
            node = int(rt.link[node])
    return line
